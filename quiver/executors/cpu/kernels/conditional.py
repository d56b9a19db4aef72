"""CPU kernels for Spark's conditional and null-handling functions: coalesce, nvl, nvl2, if, nullif,
isnull, isnotnull, isnan, nanvl."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from quiver.engine.analysis.functions.catalog import common_type
from quiver.engine.core import types as T
from quiver.executors.cpu.cast import cast_array
from quiver.executors.cpu.kernels.registry import Value, kernel, null_scalar, to_result_type


@kernel("coalesce", "ifnull", "nvl", data="all")
def coalesce(args: list[Value], rt: T.DataType) -> Value:
    """The first non-null argument."""
    if len(args) == 1:
        return args[0]
    return pc.coalesce(*[to_result_type(a, rt) for a in args])


@kernel("nvl2", data="all")
def nvl2(args: list[Value], rt: T.DataType) -> Value:
    """`b` where `a` is not null, else `c`."""
    return pc.if_else(pc.is_valid(args[0]), to_result_type(args[1], rt), to_result_type(args[2], rt))


@kernel("if", data="all")
def if_(args: list[Value], rt: T.DataType) -> Value:
    """`b` where the condition is true; `c` where it is false or null."""
    condition = pc.fill_null(args[0], False) if not pa.types.is_null(args[0].type) else pa.scalar(False)
    return pc.if_else(condition, to_result_type(args[1], rt), to_result_type(args[2], rt))


@kernel("nullif", data="all")
def nullif(args: list[Value], rt: T.DataType) -> Value:
    """Null where a = b (compared in their common type), else a."""
    a, b = args
    wider = common_type("nullif", [T.from_arrow(a.type), T.from_arrow(b.type)], True)
    if isinstance(wider, T.NullType):
        return to_result_type(a, rt)
    equal = pc.fill_null(pc.equal(cast_array(a, wider), cast_array(b, wider)), False)
    return pc.if_else(equal, null_scalar(rt.to_arrow()), to_result_type(a, rt))


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
    a, b = (to_result_type(x, rt) for x in args)
    return pc.if_else(pc.fill_null(pc.is_nan(a), False), b, a)
