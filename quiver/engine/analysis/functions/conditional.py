"""Catalog entries for Spark's conditional and null-handling functions: coalesce, ifnull, nvl, nvl2, if,
nullif, isnull, isnotnull, isnan, nanvl.

Their branches meet at Spark's common type with string promotion (`coalesce(int, string)` is a string).
"""
from __future__ import annotations

from quiver.engine.analysis.functions.catalog import (
    BOOLEAN,
    FRACTIONAL,
    DataType,
    check_arguments,
    common_result_type,
    common_type,
    register,
    returns,
    same_as_first,
    takes,
    to_common_type,
    unary,
)
from quiver.engine.core import types as T


def _nanvl_type(types: list[DataType]) -> DataType:
    return T.FloatType() if all(isinstance(t, T.FloatType) for t in types) else T.DoubleType()


def _nullif_inputs(types: list[DataType]) -> list[DataType | None]:
    """nullif compares in the common type but returns its first argument's type, so nothing is cast here."""
    common_type("nullif", types, True)
    return [None, None]


register("coalesce", 1, None, common_result_type("coalesce", True), to_common_type("coalesce", True))
for _name in ("ifnull", "nvl"):
    register(_name, 2, 2, common_result_type(_name, True), to_common_type(_name, True))
register("nvl2", 3, 3, common_result_type("nvl2", True, skip=1), to_common_type("nvl2", True, skip=1))
register("if", 3, 3, common_result_type("if", True, skip=1),
         lambda types: check_arguments("if", [BOOLEAN], types[:1]) + to_common_type("if", True, skip=1)(types)[1:],
         lambda args: f"(IF({', '.join(args)}))")
register("nullif", 2, 2, same_as_first, _nullif_inputs)
register("isnull", 1, 1, returns(T.BooleanType()), None, lambda args: f"({args[0]} IS NULL)")
register("isnotnull", 1, 1, returns(T.BooleanType()), None, lambda args: f"({args[0]} IS NOT NULL)")
unary(["isnan"], FRACTIONAL, T.BooleanType())
register("nanvl", 2, 2, _nanvl_type, takes("nanvl", FRACTIONAL, FRACTIONAL))

del _name
