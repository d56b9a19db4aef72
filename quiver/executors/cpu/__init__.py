"""The CPU executor: physical operators on Arrow with pyarrow.compute, Acero, numpy and numba."""
