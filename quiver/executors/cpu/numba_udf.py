"""numba UDFs: a scalar Python function over numbers, compiled once per argument signature and run
over whole columns, as a numba ufunc on the CPU or as an elementwise numba.cuda kernel on a GPU.

Nulls never reach the compiled code: it runs on the columns with nulls filled (0, False), and the
result is null wherever any argument was (the combined validity is put back on afterwards).
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from quiver.engine.core import types as T
from quiver.engine.core.errors import AnalysisException, PythonException, QuiverError
from quiver.engine.core.types import numpy_dtype

_SUPPORTED = frozenset(T.NUMPY_DTYPES.values())

CUDA_THREADS_PER_BLOCK = 256


def as_numpy_dtype(value: Any) -> np.dtype:
    """A numpy dtype from a numpy dtype or scalar type, its name ('float64'), an Arrow type or a Spark type."""
    if isinstance(value, T.DataType):
        dtype = numpy_dtype(value)
        if dtype is None:
            raise AnalysisException(f"engine='numba' cannot compute on {value.simpleString()}")
        return dtype
    if isinstance(value, pa.DataType):
        return np.dtype(value.to_pandas_dtype())
    return np.dtype(value)


def _describe(dtypes: tuple[np.dtype, ...]) -> str:
    return ", ".join(str(d) for d in dtypes)


class NumbaKernels:
    """The compiled forms of one numba UDF, one per argument signature, each compiled once."""

    def __init__(self, func: Callable, return_type: T.DataType, name: str):
        out = numpy_dtype(return_type)
        if out is None:
            raise AnalysisException(
                f"the numba UDF {name} is declared to return {return_type.simpleString()}; engine='numba' returns "
                "numbers or booleans (tinyint, smallint, int, bigint, float, double, boolean). "
                "Use the default engine for other types")
        self.func = func
        self.name = name
        self.out_dtype = out
        self._lock = threading.Lock()
        self._cpu: dict[tuple[np.dtype, ...], Any] = {}
        self._cuda: dict[tuple[np.dtype, ...], CudaKernel] = {}
        self.compilations = 0
        self.cuda_compilations = 0

    def _key(self, arg_types: tuple[Any, ...]) -> tuple[np.dtype, ...]:
        if len(arg_types) == 1 and isinstance(arg_types[0], (tuple, list)):
            arg_types = tuple(arg_types[0])
        key = tuple(as_numpy_dtype(t) for t in arg_types)
        if not key:
            raise AnalysisException(f"the numba UDF {self.name} needs at least one column argument")
        for i, d in enumerate(key, start=1):
            if d not in _SUPPORTED:
                raise AnalysisException(f"argument {i} of the numba UDF {self.name} is {d}; engine='numba' takes "
                                        "int8/16/32/64, float32/64 and bool columns")
        return key

    def _signature(self, key: tuple[np.dtype, ...]) -> Any:
        import numba

        return numba.from_dtype(self.out_dtype)(*(numba.from_dtype(d) for d in key))

    def vectorized(self, arg_types: tuple[Any, ...]) -> Any:
        """The numba ufunc for `arg_types`, compiled on first use."""
        import numba

        return self._compiled(self._cpu, "numba", self._key(arg_types),
                              lambda key: numba.vectorize([self._signature(key)], nopython=True)(self.func))

    def cuda(self, arg_types: tuple[Any, ...]) -> CudaKernel:
        """The elementwise CUDA kernel for `arg_types`, compiled on first use."""
        from numba import cuda

        key = self._key(arg_types)
        if key not in self._cuda and not cuda.is_available():
            raise QuiverError(f"numba.cuda finds no GPU to compile the UDF {self.name} for; set "
                              "NUMBA_ENABLE_CUDASIM=1 to run CUDA kernels on the simulator instead")
        return self._compiled(self._cuda, "numba.cuda", key, lambda key: CudaKernel(
            _elementwise_cuda_kernel(cuda, self.func, key, self.out_dtype), key, self.out_dtype))

    def _compiled(self, cache: dict, compiler: str, key: tuple[np.dtype, ...], compile_: Callable) -> Any:
        """`cache[key]`, compiled by `compile_(key)` the first time (once, whichever thread asks first)."""
        compiled = cache.get(key)
        if compiled is not None:
            return compiled
        with self._lock:
            compiled = cache.get(key)
            if compiled is None:
                try:
                    compiled = compile_(key)
                except Exception as exc:  # noqa: BLE001 — numba's typing errors are many; all mean "cannot compile"
                    raise AnalysisException(
                        f"{compiler} could not compile the UDF {self.name} for ({_describe(key)}) -> "
                        f"{self.out_dtype}: {_first_line(exc)}") from exc
                cache[key] = compiled
                if cache is self._cpu:
                    self.compilations += 1
                else:
                    self.cuda_compilations += 1
        return compiled


def _elementwise_cuda_kernel(cuda: Any, func: Callable, key: tuple[np.dtype, ...], out_dtype: np.dtype) -> Any:
    """`out[i] = func(a0[i], a1[i], ...)` for every i, one thread per element (device=False kernel)."""
    import numba

    device_fn = cuda.jit(device=True)(func)
    params = [f"a{i}" for i in range(len(key))]
    source = (f"def udf_kernel(out, {', '.join(params)}):\n"
              "    i = cuda.grid(1)\n"
              "    if i < out.shape[0]:\n"
              f"        out[i] = device_fn({', '.join(p + '[i]' for p in params)})\n")
    namespace: dict[str, Any] = {"cuda": cuda, "device_fn": device_fn}
    exec(compile(source, f"<numba cuda kernel of {getattr(func, '__name__', 'udf')}>", "exec"), namespace)
    signature = numba.void(numba.from_dtype(out_dtype)[:], *(numba.from_dtype(d)[:] for d in key))
    return cuda.jit(signature)(namespace["udf_kernel"])


@dataclass(frozen=True)
class CudaKernel:
    """A compiled elementwise kernel; calling it on equal-length arrays (host numpy or device arrays)
    launches one thread per element and returns the output array."""

    kernel: Any
    arg_dtypes: tuple[np.dtype, ...]
    out_dtype: np.dtype

    def __call__(self, *arrays: Any, out: Any = None) -> Any:
        if len(arrays) != len(self.arg_dtypes):
            raise TypeError(f"the kernel takes {len(self.arg_dtypes)} arrays ({_describe(self.arg_dtypes)}), "
                            f"got {len(arrays)}")
        n = len(arrays[0])
        if out is None:
            on_host = all(isinstance(a, np.ndarray) for a in arrays)
            if on_host:
                out = np.empty(n, self.out_dtype)
            else:
                from numba import cuda

                out = cuda.device_array(n, self.out_dtype)
        if n:
            blocks = (n + CUDA_THREADS_PER_BLOCK - 1) // CUDA_THREADS_PER_BLOCK
            self.kernel[blocks, CUDA_THREADS_PER_BLOCK](out, *arrays)
        return out


def evaluate_numba(name: str, kernels: NumbaKernels, args: list[pa.Array], out_type: pa.DataType) -> pa.Array:
    """Run a numba UDF over whole columns; null wherever any argument is null."""
    key = tuple(np.dtype(a.type.to_pandas_dtype()) for a in args)
    ufunc = kernels.vectorized(key)
    values, valid = [], None
    for a in args:
        if a.null_count:
            v = pc.is_valid(a)
            valid = v if valid is None else pc.and_(valid, v)
            a = pc.fill_null(a, False if pa.types.is_boolean(a.type) else 0)
        values.append(a.to_numpy(zero_copy_only=False))
    try:
        result = np.asarray(ufunc(*values), dtype=kernels.out_dtype)
    except Exception as exc:  # noqa: BLE001 — whatever the user's code raises fails the task, named
        raise PythonException(f"numba UDF {name} raised {type(exc).__name__}: {exc}") from exc
    mask = None if valid is None else pc.invert(valid).to_numpy(zero_copy_only=False)
    return pa.array(result, type=out_type, mask=mask)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith(("\x1b", "During:"))]
    return " ".join(lines[:3])[:500] if lines else type(exc).__name__
