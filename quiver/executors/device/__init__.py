"""The device executors (GPU, NPU): physical operators over array-API kernels, data moved on and off the
device at the edge."""
