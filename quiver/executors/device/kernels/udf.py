"""numba UDFs on a device: the function compiled once per argument signature, run over whole columns.

On CuPy arrays it runs as the UDF's elementwise `numba.cuda` kernel, with no copy to the host; on
numpy (an emulated device, or the CPU) as its numba ufunc. Other namespaces (torch) run the ufunc
on host copies. Nulls never reach the compiled code: arguments are filled with 0 and the result is
null wherever any argument was, as on the CPU (quiver/executors/cpu/numba_udf.py).
"""
from __future__ import annotations

from typing import Any

import array_api_compat
import numpy as np

from quiver.engine.core.expressions import PythonUDF
from quiver.engine.core.types import numpy_dtype
from quiver.executors.device.kernels.columns import DeviceColumn, to_host


def udf_reason(expr: PythonUDF) -> str | None:
    """None when `expr` can run on a device (a numba UDF over numbers), else why not."""
    if expr.kind != "numba":
        return f"the {expr.kind} Python UDF {expr.name} runs Python code on the CPU"
    for i, a in enumerate(expr.args, start=1):
        if numpy_dtype(a.dtype) is None:
            return f"argument {i} of the numba UDF {expr.name} is {a.dtype.simpleString()}"
    return None


def evaluate_udf(expr: PythonUDF, args: list[DeviceColumn], xp: Any) -> DeviceColumn:
    """`expr` over device columns `args` (all of one length)."""
    valid = None
    values = []
    for a in args:
        if a.valid is not None:
            valid = a.valid if valid is None else valid & a.valid
            values.append(xp.where(a.valid, a.values, xp.zeros_like(a.values)))
        else:
            values.append(a.values)
    dtypes = tuple(np.dtype(str(v.dtype).removeprefix("torch.")) for v in values)
    out_type = expr.return_type.to_arrow()
    if values and array_api_compat.is_cupy_array(values[0]):
        import cupy

        result = cupy.asarray(expr.function.cuda_kernel(*dtypes)(*values))
    else:
        host = [to_host(v) for v in values]
        result = np.asarray(expr.function.compiled(*dtypes)(*host), dtype=numpy_dtype(expr.return_type))
        if not isinstance(values[0] if values else result, np.ndarray):
            result = xp.asarray(result, device=array_api_compat.device(values[0]))
    return DeviceColumn(result, valid, out_type)


__all__ = ["evaluate_udf", "udf_reason"]
