"""The CPU kernels of Spark's scalar functions, by domain, registered in one table by name."""
