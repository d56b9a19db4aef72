"""The GPU executor: the device-generic kernels on CuPy, or on numpy for an emulated GPU.

A real GPU needs CuPy and a CUDA device (`cupy.cuda.is_available()`); without them
`quiver.devices = "cpu,gpu:emulated"` runs the same kernels with numpy while placement charges
the GPU profile, and the device says `(emulated)` wherever it is shown.
"""
from __future__ import annotations

from quiver.engine.core.errors import ConfigurationError
from quiver.executors.base import Device
from quiver.executors.device.array_executor import ArrayExecutor, numpy_namespace


class GpuExecutor(ArrayExecutor):
    """Runs operators on one CUDA GPU through CuPy (or emulated with numpy)."""

    @classmethod
    def open(cls, index: int = 0, emulated: bool = False, memory_bytes: int | None = None) -> GpuExecutor:
        if emulated:
            return cls(Device("gpu", index, memory_bytes, emulated=True), numpy_namespace())
        try:
            import array_api_compat.cupy as cupy_namespace
            import cupy
        except ImportError as exc:
            raise ConfigurationError(
                f"quiver.devices names gpu:{index} but CuPy is not installed (pip install 'quiver[gpu]'); "
                "use gpu:emulated to run the GPU kernels with numpy") from exc
        if not cupy.cuda.is_available() or index >= cupy.cuda.runtime.getDeviceCount():
            raise ConfigurationError(
                f"quiver.devices names gpu:{index} but CuPy finds no such CUDA device; "
                "use gpu:emulated to run the GPU kernels with numpy")
        cupy.cuda.Device(index).use()
        total = cupy.cuda.Device(index).mem_info[1]
        executor = cls(Device("gpu", index, total), cupy_namespace)
        executor.out_of_memory_errors = (MemoryError, cupy.cuda.memory.OutOfMemoryError)
        return executor

    def free_bytes(self) -> int | None:
        """The GPU's free memory now, with the blocks CuPy's pool holds free for reuse."""
        if self.device.emulated:
            return super().free_bytes()
        import cupy

        free, _ = cupy.cuda.Device(self.device.index).mem_info
        return int(free + cupy.get_default_memory_pool().free_bytes())


__all__ = ["GpuExecutor"]

