"""Evaluation of `PythonUDF` calls over whole Arrow batches (CPU executor).

A row UDF is called once per row with Python values (None for null, Row for a struct, dict for a
map), and its results are converted to the declared type as PySpark converts a pickled result: a
value the type cannot hold becomes null (a str for an int UDF, an int for a double UDF), an int too
wide for a narrower integer type wraps, and a string UDF takes any value's text. A pandas UDF is
called once per batch on Series; a numba UDF is compiled per argument signature (numba_udf.py).
Whatever the user's code raises fails the task with a `PythonException` naming the UDF. Row and
pandas UDFs run in a Python worker process when the session says so (worker_pool.py), with this same
evaluation inside the worker; numba UDFs always run on the task's thread.
"""
from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from quiver.engine.core import types as T
from quiver.engine.core.errors import PythonException
from quiver.engine.core.expressions import PythonUDF, format_double
from quiver.engine.core.imports import optional_module
from quiver.engine.core.row import Row
from quiver.executors.cpu.numba_udf import evaluate_numba
from quiver.executors.cpu.worker_pool import WORKERS


@dataclass(frozen=True)
class UdfCall:
    """What calling a row or pandas UDF needs, without the plan around it: picklable into a worker."""

    name: str
    kind: str
    func: Callable
    return_type: T.DataType
    arg_types: tuple[T.DataType, ...]


def evaluate_python_udf(expr: PythonUDF, args: list[pa.Array], num_rows: int) -> pa.Array:
    """The UDF's result column over one batch whose argument columns are `args`: in a Python worker
    process (worker_pool.py) when the session runs UDFs there, else on this thread."""
    if expr.kind == "numba":
        return evaluate_numba(expr.name, expr.function._numba(), args, expr.return_type.to_arrow())
    if expr.kind not in ("row", "pandas", "pandas_iter"):
        raise PythonException(f"UDF {expr.name} has unknown kind {expr.kind!r}")
    if not WORKERS.enabled:
        return evaluate_in_process(_udf_call(expr), args, num_rows)
    what = f"Python UDF {expr.name}" if expr.kind == "row" else f"pandas_udf {expr.name}"
    batch = (pa.RecordBatch.from_arrays(args, names=[str(i) for i in range(len(args))]),) if args else ()
    _, out = WORKERS.call("udf", expr, lambda: _udf_call(expr), what, (num_rows,), batch)
    return out[0].column(0)


def _udf_call(expr: PythonUDF) -> UdfCall:
    return UdfCall(expr.name, expr.kind, expr.function.func, expr.return_type, tuple(a.dtype for a in expr.args))


def evaluate_in_process(call: UdfCall, args: list[pa.Array], num_rows: int) -> pa.Array:
    """A row or pandas UDF's result column over one batch, computed on this thread."""
    out_type = call.return_type.to_arrow()
    if call.kind == "row":
        return _row_udf(call, args, num_rows, out_type)
    return _pandas_udf(call, args, num_rows, out_type)


# ---------------------------------------------------------------- row at a time


def _row_udf(call: UdfCall, args: list[pa.Array], num_rows: int, out_type: pa.DataType) -> pa.Array:
    fn = call.func
    convert = python_converter(call.return_type)
    columns = [python_values(a, t) for a, t in zip(args, call.arg_types)]
    rows = zip(*columns) if columns else (() for _ in range(num_rows))
    out = []
    for row in rows:
        try:
            value = fn(*row)
        except Exception as exc:  # noqa: BLE001 — the user's error fails the task, named and chained
            raise PythonException(
                f"Python UDF {call.name} raised {type(exc).__name__}: {exc} (called on {_shown(row)})") from exc
        out.append(convert(value))
    return to_arrow(out, out_type)


def _shown(row: tuple) -> str:
    text = repr(row[0]) if len(row) == 1 else repr(row)
    return text if len(text) <= 200 else text[:197] + "..."


def python_values(arr: pa.Array, dtype: T.DataType) -> list:
    """The values of `arr` as a UDF receives them in PySpark: structs as Rows, maps as dicts."""
    if not _has_struct_or_map(arr.type):
        return arr.to_pylist()
    return [_to_python(v, dtype) for v in arr.to_pylist()]


def _has_struct_or_map(t: pa.DataType) -> bool:
    if pa.types.is_struct(t) or pa.types.is_map(t):
        return True
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _has_struct_or_map(t.value_type)
    return False


def _to_python(v: Any, dtype: T.DataType) -> Any:
    if v is None:
        return None
    if isinstance(dtype, T.StructType):
        return Row._make([f.name for f in dtype.fields], [_to_python(v.get(f.name), f.dataType) for f in dtype.fields])
    if isinstance(dtype, T.MapType):
        return {_to_python(k, dtype.keyType): _to_python(x, dtype.valueType) for k, x in v}
    if isinstance(dtype, T.ArrayType):
        return [_to_python(x, dtype.elementType) for x in v]
    return v


def to_arrow(values: list, out_type: pa.DataType) -> pa.Array:
    """`values` (already converted to the declared type, or None) as one Arrow array."""
    try:
        return pa.array(values, type=out_type)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        # One value Arrow still refuses (a nested value's inner overflow): null for that value only.
        return pa.array([_or_null(v, out_type) for v in values], type=out_type)


def _or_null(v: Any, out_type: pa.DataType) -> Any:
    try:
        pa.array([v], type=out_type)
        return v
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return None


_INT_BITS = {T.ByteType: 8, T.ShortType: 16, T.IntegerType: 32, T.LongType: 64}


def python_converter(dtype: T.DataType) -> Callable[[Any], Any]:
    """A function turning a UDF's result into a value of `dtype` for Arrow, or None where PySpark
    gives null (a value of the wrong kind)."""
    if isinstance(dtype, T.BooleanType):
        return lambda v: v if isinstance(v, bool) else _numpy_value(v, bool)
    if type(dtype) in _INT_BITS:
        bits = _INT_BITS[type(dtype)]
        return lambda v: _integer(v, bits)
    if isinstance(dtype, (T.FloatType, T.DoubleType)):
        return _floating
    if isinstance(dtype, T.DecimalType):
        return lambda v: _decimal(v, dtype)
    if isinstance(dtype, T.StringType):
        return _java_string
    if isinstance(dtype, T.BinaryType):
        return _binary
    if isinstance(dtype, T.DateType):
        return lambda v: v.date() if isinstance(v, dt.datetime) else (v if isinstance(v, dt.date) else None)
    if isinstance(dtype, (T.TimestampType, T.TimestampNTZType)):
        return _timestamp
    if isinstance(dtype, T.ArrayType):
        element = python_converter(dtype.elementType)
        return lambda v: [element(x) for x in v] if isinstance(v, (list, tuple)) else None
    if isinstance(dtype, T.MapType):
        key, value = python_converter(dtype.keyType), python_converter(dtype.valueType)
        return lambda v: [(key(k), value(x)) for k, x in v.items()] if isinstance(v, dict) else None
    if isinstance(dtype, T.StructType):
        return _struct_converter(dtype)
    if isinstance(dtype, T.NullType):
        return lambda v: None
    return lambda v: v


def _numpy_value(v: Any, kind: type) -> Any:
    """A numpy scalar of the right kind as its Python value (PySpark fails on these; Quiver takes them)."""
    import numpy as np

    if kind is bool and isinstance(v, np.bool_):
        return bool(v)
    if kind is int and isinstance(v, np.integer):
        return int(v)
    if kind is float and isinstance(v, np.floating):
        return float(v)
    return None


def _integer(v: Any, bits: int) -> int | None:
    if isinstance(v, bool) or not isinstance(v, int):
        v = _numpy_value(v, int)
        if v is None:
            return None
    if not -(1 << 63) <= v < (1 << 63):
        return None  # pickled as a BigInteger, which no integral type takes
    if bits < 64:
        v &= (1 << bits) - 1  # Java's narrowing: the low bits, as a signed number
        if v >= 1 << (bits - 1):
            v -= 1 << bits
    return v


def _floating(v: Any) -> float | None:
    if isinstance(v, float):
        return v
    return _numpy_value(v, float)


def _decimal(v: Any, dtype: T.DecimalType) -> decimal.Decimal | None:
    if not isinstance(v, decimal.Decimal) or not v.is_finite():
        return None
    scaled = v.quantize(decimal.Decimal(1).scaleb(-dtype.scale), rounding=decimal.ROUND_HALF_UP)
    if len(scaled.as_tuple().digits) > dtype.precision and scaled != 0:
        return None
    return scaled


def _binary(v: Any) -> bytes | None:
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    if isinstance(v, str):
        return v.encode("utf-8")
    return None


def _timestamp(v: Any) -> dt.datetime | None:
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            return v.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return v
    return None


def _java_string(v: Any) -> str | None:
    """The text Spark stores for a string UDF's result: Java's toString of the unpickled value."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return format_double(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join("null" if x is None else _java_string(x) for x in v) + "]"
    if isinstance(v, dict):
        entries = (f"{_java_string(k)}={'null' if x is None else _java_string(x)}" for k, x in v.items())
        return "{" + ", ".join(entries) + "}"
    return str(v)


def _struct_converter(dtype: T.StructType) -> Callable[[Any], Any]:
    names = [f.name for f in dtype.fields]
    converters = [python_converter(f.dataType) for f in dtype.fields]

    def convert(v: Any) -> dict | None:
        if isinstance(v, Row) and v.__fields__:
            v = v.asDict()
        if isinstance(v, dict):
            return {n: c(v.get(n)) for n, c in zip(names, converters)}
        if isinstance(v, (tuple, list)) and len(v) == len(names):
            return {n: c(x) for n, c, x in zip(names, converters, v)}
        return None

    return convert


# ---------------------------------------------------------------- pandas, once per batch


def _pandas_udf(expr: UdfCall, args: list[pa.Array], num_rows: int, out_type: pa.DataType) -> pa.Array:
    pd = optional_module("pandas", "pandas", "a pandas UDF")

    fn = expr.func
    series = [a.to_pandas() for a in args]
    try:
        if expr.kind == "pandas":
            result = fn(*series)
        else:
            batches = iter([series[0] if len(series) == 1 else tuple(series)])
            parts = list(fn(batches))
            result = pd.concat(parts, ignore_index=True) if parts else pd.Series([], dtype=object)
    except Exception as exc:  # noqa: BLE001
        raise PythonException(f"pandas_udf {expr.name} raised {type(exc).__name__}: {exc}") from exc
    struct = isinstance(expr.return_type, T.StructType)
    wanted = "pandas.DataFrame" if struct else "pandas.Series"
    if not isinstance(result, pd.DataFrame if struct else pd.Series):
        raise PythonException(f"pandas_udf {expr.name} must return a {wanted} (declared "
                              f"{expr.return_type.simpleString()}), but returned {type(result).__name__}")
    if len(result) != num_rows:
        raise PythonException(f"pandas_udf {expr.name} returned {len(result)} values for a batch of {num_rows} "
                              f"rows; a scalar pandas UDF returns one value per input row")
    try:
        if struct:
            arrays = [pa.Array.from_pandas(result[f.name], type=f.dataType.to_arrow(), safe=True)
                      for f in expr.return_type.fields]
            return pa.StructArray.from_arrays(arrays, names=[f.name for f in expr.return_type.fields])
        return pa.Array.from_pandas(result, type=out_type, safe=True)
    except (pa.ArrowException, TypeError, ValueError, KeyError) as exc:
        raise PythonException(f"pandas_udf {expr.name} returned values that do not fit its declared type "
                              f"{expr.return_type.simpleString()} (dtype {getattr(result, 'dtype', '?')}): "
                              f"{exc}") from exc
