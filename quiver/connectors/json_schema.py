"""Spark's JSON schema inference as Arrow types: the type of one value, the merge of two
(`compatibleType`), the canonical form Spark reports, and pyarrow's reader used where its
inferred types translate exactly."""
from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from quiver.connectors.object_store import open_input_stream

_LONG = (-(2**63), 2**63 - 1)


def infer_value_type(value: Any) -> pa.DataType:
    """Spark's inferred type of one JSON value (pa.null() for null)."""
    if value is None:
        return pa.null()
    if isinstance(value, bool):
        return pa.bool_()
    if isinstance(value, int):
        if _LONG[0] <= value <= _LONG[1]:
            return pa.int64()
        digits = len(str(abs(value)))
        return pa.decimal128(digits, 0) if digits <= 38 else pa.float64()
    if isinstance(value, float):
        return pa.float64()
    if isinstance(value, str):
        return pa.string()
    if isinstance(value, list):
        element = pa.null()
        for item in value:
            element = merge_types(element, infer_value_type(item))
        return pa.list_(element)
    if isinstance(value, dict):
        return pa.struct(sorted((pa.field(k, infer_value_type(v)) for k, v in value.items()), key=lambda f: f.name))
    return pa.string()


def merge_types(a: pa.DataType, b: pa.DataType) -> pa.DataType:
    """Spark's JSON `compatibleType`: the narrowest type holding values of both."""
    if a.equals(b):
        return a
    if pa.types.is_null(a):
        return b
    if pa.types.is_null(b):
        return a
    numeric = (pa.types.is_int64, pa.types.is_float64, pa.types.is_decimal)
    if any(f(a) for f in numeric) and any(f(b) for f in numeric):
        if pa.types.is_float64(a) or pa.types.is_float64(b):
            return pa.float64()
        da, db = (_as_decimal(t) for t in (a, b))
        scale = max(da.scale, db.scale)
        digits = max(da.precision - da.scale, db.precision - db.scale) + scale
        return pa.decimal128(digits, scale) if digits <= 38 else pa.float64()
    if pa.types.is_struct(a) and pa.types.is_struct(b):
        fields = {f.name: f.type for f in a}
        for f in b:
            fields[f.name] = merge_types(fields[f.name], f.type) if f.name in fields else f.type
        return pa.struct([pa.field(n, t) for n, t in sorted(fields.items())])
    if pa.types.is_list(a) and pa.types.is_list(b):
        return pa.list_(merge_types(a.value_type, b.value_type))
    return pa.string()


def _as_decimal(t: pa.DataType) -> pa.DataType:
    return pa.decimal128(20, 0) if pa.types.is_int64(t) else t


def canonical_type(t: pa.DataType) -> pa.DataType | None:
    """Null becomes string and empty structs disappear, as in Spark's inferred schemas."""
    if pa.types.is_null(t):
        return pa.string()
    if pa.types.is_list(t):
        return pa.list_(canonical_type(t.value_type) or pa.string())
    if pa.types.is_struct(t):
        fields = [pa.field(f.name, c) for f in t if (c := canonical_type(f.type)) is not None]
        return pa.struct(fields) if fields else None
    return t


def infer_with_pyarrow(path: str) -> pa.DataType | None:
    """Row type of one file from pyarrow's JSON reader, in Spark's terms; None when Python must decide.

    pyarrow refuses what Spark widens to string (a number, then a string), corrupt lines and
    top-level arrays, and reads integers past 64 bits as double where Spark infers decimal.
    """
    if path.endswith(".gz"):
        return None
    row_type: pa.DataType = pa.struct([])
    try:
        for batch in pj.open_json(open_input_stream(path), read_options=pj.ReadOptions(use_threads=False)):
            if any(_has_huge_integers(column) for column in batch.columns):
                return None
            row_type = merge_types(row_type, _spark_inferred(pa.struct(list(batch.schema))))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    return row_type


def _has_huge_integers(values: pa.Array) -> bool:
    if pa.types.is_struct(values.type):
        return any(_has_huge_integers(values.field(i)) for i in range(values.type.num_fields))
    if pa.types.is_list(values.type):
        return _has_huge_integers(values.flatten())
    if pa.types.is_float64(values.type) and values.null_count < len(values):
        finite = pc.filter(values, pc.is_finite(values))
        return bool(pc.any(pc.greater_equal(pc.abs(finite), 2.0**63)).as_py())
    return False


def _spark_inferred(t: pa.DataType) -> pa.DataType:
    """pyarrow's inferred JSON type as Spark's: timestamps stay strings, struct fields sorted."""
    if pa.types.is_timestamp(t) or pa.types.is_date(t):
        return pa.string()
    if pa.types.is_struct(t):
        return pa.struct(sorted((pa.field(f.name, _spark_inferred(f.type)) for f in t), key=lambda f: f.name))
    if pa.types.is_list(t):
        return pa.list_(_spark_inferred(t.value_type))
    return t
