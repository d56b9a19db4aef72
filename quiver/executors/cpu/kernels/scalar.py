"""CPU kernels for Spark's scalar functions, vectorised on pyarrow.compute and numpy.

Calling convention: `KERNELS[name](args, result_type)`, where each argument is a
`pa.Array` (a column) or a `pa.Scalar` (a literal), already cast to the types the
catalog asked for. A kernel returns an array, or a scalar when every argument is a
scalar (constant folding). Arguments Spark requires to be constant (a regex, a format,
a scale) are read with `.as_py()`; given as a column they are evaluated once per
distinct value. Nulls propagate unless Spark says otherwise (coalesce, concat_ws, nvl2).

The kernels live by family in `string_kernels`, `math_kernels` and `datetime_kernels`,
which register into the shared `KERNELS` of `kernel_registry`; importing this module
loads them all. The null-handling, conditional and collection kernels are defined here.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from quiver.engine.core import types as T
from quiver.executors.cpu.kernels import datetime as datetime_kernels  # noqa: F401  (they register their kernels)
from quiver.executors.cpu.kernels import math as math_kernels  # noqa: F401  (registers its kernels)
from quiver.executors.cpu.kernels import string as string_kernels  # noqa: F401  (registers its kernels)
from quiver.executors.cpu.kernels import collection as collection_kernels  # noqa: F401,E402  (array, map and struct kernels)
from quiver.executors.cpu.kernels import misc as misc_kernels  # noqa: F401,E402  (they register their kernels)
from quiver.executors.cpu import row_position  # noqa: F401  (registers its kernels)
from quiver.executors.cpu.kernels import hash as spark_hash  # noqa: F401  (registers its kernels)
from quiver.executors.cpu.cast import cast_array
from quiver.executors.cpu.kernels.registry import (
    KERNELS, Value, _all_null, _as_array, _constant, _length_of, _mask_null, _null, _offsets, _typed,
    _values, kernel,
)
from quiver.engine.analysis.functions.catalog import common_type


# ---------------------------------------------------------------- nulls and conditionals

@kernel("coalesce", "ifnull", "nvl", data="all")
def coalesce(args: list[Value], rt: T.DataType) -> Value:
    """The first non-null argument."""
    if len(args) == 1:
        return args[0]
    return pc.coalesce(*[_typed(a, rt) for a in args])


@kernel("nvl2", data="all")
def nvl2(args: list[Value], rt: T.DataType) -> Value:
    """`b` where `a` is not null, else `c`."""
    return pc.if_else(pc.is_valid(args[0]), _typed(args[1], rt), _typed(args[2], rt))


@kernel("if", data="all")
def if_(args: list[Value], rt: T.DataType) -> Value:
    """`b` where the condition is true; `c` where it is false or null."""
    condition = pc.fill_null(args[0], False) if not pa.types.is_null(args[0].type) else pa.scalar(False)
    return pc.if_else(condition, _typed(args[1], rt), _typed(args[2], rt))


@kernel("nullif", data="all")
def nullif(args: list[Value], rt: T.DataType) -> Value:
    """Null where a = b (compared in their common type), else a."""
    a, b = args
    wider = common_type("nullif", [T.from_arrow(a.type), T.from_arrow(b.type)], True)
    if isinstance(wider, T.NullType):
        return _typed(a, rt)
    equal = pc.fill_null(pc.equal(cast_array(a, wider), cast_array(b, wider)), False)
    return pc.if_else(equal, _null(rt.to_arrow()), _typed(a, rt))


@kernel("isnull")
def isnull(args: list[Value], rt: T.DataType) -> Value:
    return pc.is_null(args[0])


@kernel("isnotnull")
def isnotnull(args: list[Value], rt: T.DataType) -> Value:
    return pc.is_valid(args[0])


@kernel("isnan")
def isnan(args: list[Value], rt: T.DataType) -> Value:
    """True for NaN; false for null, as in Spark."""
    value = args[0]
    if pa.types.is_null(value.type):
        return pc.fill_null(pc.is_valid(value), False)
    return pc.fill_null(pc.is_nan(value), False)


@kernel("nanvl", data="all")
def nanvl(args: list[Value], rt: T.DataType) -> Value:
    """`b` where `a` is NaN, else `a`."""
    a, b = (_typed(x, rt) for x in args)
    return pc.if_else(pc.fill_null(pc.is_nan(a), False), b, a)


# ---------------------------------------------------------------- collections and nested values

@kernel("size", "cardinality")
def size(args: list[Value], rt: T.DataType) -> Value:
    """Number of elements; -1 for a null collection (Spark's non-ANSI legacy)."""
    value = args[0]
    if pa.types.is_null(value.type):
        return pa.array(np.full(len(value), -1, np.int32))
    if pa.types.is_map(value.type):  # list_value_length has no map kernel
        lengths = np.diff(value.offsets.to_numpy()).astype(np.int32)
        return pa.array(np.where(value.is_null().to_numpy(zero_copy_only=False), -1, lengths), pa.int32())
    return pc.fill_null(pc.list_value_length(value).cast(pa.int32()), -1)


@kernel("array_contains", data="all")
def array_contains(args: list[Value], rt: T.DataType) -> Value:
    """True if found; null if not found but the array holds a null; null for a null array or value."""
    length = _length_of(args)
    lists, needle = _as_array(args[0], length), args[1]
    element_type = lists.type.value_type
    values = pc.list_flatten(lists)
    parents = pc.list_parent_indices(lists).to_numpy(zero_copy_only=False)
    if isinstance(needle, pa.Scalar):
        target = needle.cast(element_type) if needle.is_valid else _null(element_type)
    else:
        target = pc.take(needle.cast(element_type), pa.array(parents, pa.int64()))
    hits = pc.fill_null(pc.equal(values, target), False).to_numpy(zero_copy_only=False)
    found = np.bincount(parents[hits], minlength=length) > 0
    has_null = np.bincount(parents[values.is_null().to_numpy(zero_copy_only=False)], minlength=length) > 0
    mask = lists.is_null().to_numpy(zero_copy_only=False) | (~found & has_null)
    mask |= _as_array(needle, length).is_null().to_numpy(zero_copy_only=False)
    return pa.array(found, pa.bool_(), mask=mask)


@kernel("sort_array")
def sort_array(args: list[Value], rt: T.DataType) -> Value:
    """Each array sorted: ascending with nulls first and NaN last, or the exact reverse of that."""
    lists = args[0]
    ascending = True if len(args) < 2 else _constant(args[1], "sort_array", "ascending flag")
    if ascending is None:
        return _all_null(len(lists), rt)
    offsets = _offsets(lists).to_numpy()
    values = _values(lists)
    parents = np.repeat(np.arange(len(lists)), np.diff(offsets))
    keys = {"parent": pa.array(parents)}
    if pa.types.is_floating(values.type):
        # Arrow sorts NaN next to nulls; Spark counts it above every number
        keys["nan"] = pc.is_nan(values)
    keys["value"] = values
    order = pc.sort_indices(pa.table(keys), sort_keys=[(k, "ascending", "at_start") for k in keys])
    ordered = pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), pc.take(values, order),
                                       type=lists.type, mask=lists.is_null())
    return ordered if ascending else KERNELS["reverse"]([ordered], rt)


@kernel("get_field")
def get_field(args: list[Value], rt: T.DataType) -> Value:
    """A struct's field by name (exact, then case-insensitive), or a map's value by key."""
    value = args[0]
    key = _constant(args[1], "get_field", "field name or key")
    if pa.types.is_map(value.type):
        return pc.map_lookup(value, pa.scalar(key, value.type.key_type), "first")
    names = [value.type.field(i).name for i in range(value.type.num_fields)]
    index = names.index(key) if key in names else [n.lower() for n in names].index(str(key).lower())
    field = pc.struct_field(value, [index])
    return _mask_null(field, value.is_null()) if value.null_count else field


@kernel("element_at_index")
def element_at_index(args: list[Value], rt: T.DataType) -> Value:
    """arr[i] (0-based, null when out of range) or map[key]."""
    value = args[0]
    key = _constant(args[1], "element_at_index", "index or key")
    if key is None:
        return _all_null(len(value), rt)
    if pa.types.is_map(value.type):
        return pc.map_lookup(value, pa.scalar(key, value.type.key_type), "first")
    offsets = _offsets(value).to_numpy()
    inside = (key >= 0) & (key < np.diff(offsets)) & value.is_valid().to_numpy(zero_copy_only=False)
    values = _values(value)
    if len(values) == 0:
        return _all_null(len(value), rt)
    positions = np.where(inside, offsets[:-1] + key, 0)
    return _mask_null(pc.take(values, pa.array(positions.astype(np.int64))), ~inside)
