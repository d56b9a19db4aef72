"""Catalog entries for Spark's math functions: elementary functions, logarithms and powers, rounding
(round, bround, floor, ceil, with a decimal's scale), greatest and least, pmod, and numbers in other bases
(bin, hex, unhex, conv)."""
from __future__ import annotations

from typing import Any

from quiver.engine.analysis.functions.catalog import (
    BIGINT,
    DOUBLE,
    INT,
    NOT_LITERAL,
    NUMERIC,
    STRING,
    DataType,
    check_arguments,
    common_result_type,
    common_type,
    register,
    returns,
    shown_as,
    shown_with_defaults,
    takes,
    to_common_type,
    unary,
)
from quiver.engine.core import types as T
from quiver.engine.core.errors import AnalysisException


def _numeric_first(types: list[DataType]) -> DataType:
    t = types[0]
    return t if isinstance(t, T.NumericType) else T.DoubleType()


def _round_type(types: list[DataType], literals: list[Any]) -> DataType:
    """round/bround: same type, except a decimal keeps or lowers its scale (Spark's RoundBase)."""
    t = _numeric_first(types)
    if isinstance(t, T.DecimalType):
        scale = literals[1] if len(literals) > 1 else 0
        if not isinstance(scale, int):
            # a computed scale: a type wide enough for any rounding of this decimal
            return T.DecimalType(min(t.precision + 1, 38), t.scale)
        return _rounded_decimal(t, scale)
    return t


def _rounded_decimal(t: T.DecimalType, scale: int) -> T.DecimalType:
    integral = t.precision - t.scale + 1
    if scale < 0:
        return T.DecimalType(min(max(integral, -scale + 1), 38), 0)
    new_scale = min(t.scale, scale)
    return T.DecimalType(min(integral + new_scale, 38), new_scale)


def _floor_ceil_type(types: list[DataType], literals: list[Any]) -> DataType:
    """floor/ceil: bigint, a decimal's integral part, or with a scale a decimal (Spark's RoundCeil)."""
    t = _numeric_first(types)
    if len(types) > 1:
        if isinstance(t, T.IntegralType):
            t = T.decimal_for_integral(t)
        elif not isinstance(t, T.DecimalType):
            t = T.DecimalType(30, 15)
        scale = literals[1] if len(literals) > 1 else 0
        return (_rounded_decimal(t, scale) if isinstance(scale, int)
                else T.DecimalType(min(t.precision + 1, 38), t.scale))
    if isinstance(t, T.DecimalType):
        return T.DecimalType(min(t.precision - t.scale + 1, 38), 0)
    return T.LongType()


def _log(args: list[str]) -> str:
    return f"LOG({', '.join(['E()'] + args if len(args) == 1 else args)})"


def _hex_inputs(types: list[DataType]) -> list[DataType | None]:
    """hex takes bigint, string or binary; other numbers become bigint, as Spark's implicit cast."""
    t = types[0]
    if isinstance(t, (T.StringType, T.BinaryType, T.LongType)):
        return [None]
    if isinstance(t, (T.IntegralType, T.NullType)):
        return [T.LongType()]
    if isinstance(t, (T.FractionalType,)):
        return [T.LongType()]
    return check_arguments("hex", [STRING], types)


def _pmod_inputs(types: list[DataType]) -> list[DataType | None]:
    for t in types:
        if not isinstance(t, (T.NumericType, T.NullType, T.StringType)):
            check_arguments("pmod", [NUMERIC, NUMERIC], types)
    wanted = [T.DoubleType() if isinstance(t, T.StringType) else t for t in types]
    target = common_type("pmod", wanted, False)
    if isinstance(target, T.NullType):
        target = T.IntegerType()
    return [None if t == target else target for t in types]


def _pmod_result(types: list[DataType]) -> DataType:
    wanted = [T.DoubleType() if isinstance(t, T.StringType) else t for t in types]
    target = common_type("pmod", wanted, False)
    return T.IntegerType() if isinstance(target, T.NullType) else target


unary(["abs"], NUMERIC, _numeric_first)
unary(["sqrt", "cbrt", "exp", "expm1", "ln", "log10", "log2", "log1p", "sin", "cos", "tan", "asin", "acos",
       "atan", "sinh", "cosh", "tanh", "degrees", "radians"], DOUBLE, T.DoubleType(),
      {n: n.upper() for n in ("sqrt", "cbrt", "exp", "expm1", "log10", "log2", "log1p", "sin", "cos", "tan",
                              "asin", "acos", "atan", "sinh", "cosh", "tanh", "degrees", "radians")})
unary(["signum", "sign"], NUMERIC, T.DoubleType(), {"signum": "SIGNUM"})
register("log", 1, 2, returns(T.DoubleType()), takes("log", DOUBLE, DOUBLE), _log)
register("pow", 2, 2, returns(T.DoubleType()), takes("pow", DOUBLE, DOUBLE))
register("power", 2, 2, returns(T.DoubleType()), takes("power", DOUBLE, DOUBLE), shown_as("POWER"))
register("atan2", 2, 2, returns(T.DoubleType()), takes("atan2", DOUBLE, DOUBLE), shown_as("ATAN2"))
register("hypot", 2, 2, returns(T.DoubleType()), takes("hypot", DOUBLE, DOUBLE), shown_as("HYPOT"))
for _name in ("round", "bround"):
    register(_name, 1, 2, lambda types: _round_type(types, [NOT_LITERAL] * len(types)), takes(_name, NUMERIC, INT),
             shown_with_defaults(_name, 2, ("0",)), _round_type)
for _name, _shown in (("floor", "FLOOR"), ("ceil", "CEIL"), ("ceiling", "ceiling")):
    register(_name, 1, 2, lambda types: _floor_ceil_type(types, [NOT_LITERAL] * len(types)), takes(_name, NUMERIC, INT),
             (lambda shown, lower: lambda args: f"{shown if len(args) == 1 else lower}({', '.join(args)})")(
                 _shown, _name),
             _floor_ceil_type)
for _name in ("greatest", "least"):
    register(_name, 2, None, common_result_type(_name, False), to_common_type(_name, False))
register("pmod", 2, 2, _pmod_result, _pmod_inputs)


def _div_inputs(types: list[DataType]) -> list[DataType | None]:
    """`a div b` takes bigints (other integers widen to it) and decimals, as Spark's IntegralDivide."""
    out: list[DataType | None] = []
    for t in types:
        if isinstance(t, (T.DecimalType, T.LongType)):
            out.append(None)
        elif isinstance(t, (T.IntegralType, T.NullType)):
            out.append(T.LongType())
        else:
            raise AnalysisException(f"div takes bigint or decimal operands, got {t.simpleString()}; cast it first, "
                                    "e.g. CAST(x AS BIGINT) div 2")
    return out


register("div", 2, 2, returns(T.LongType()), _div_inputs)
register("conv", 3, 3, returns(T.StringType()), takes("conv", STRING, INT, INT))
register("bin", 1, 1, returns(T.StringType()), takes("bin", BIGINT))
register("hex", 1, 1, returns(T.StringType()), _hex_inputs)
register("unhex", 1, 1, returns(T.BinaryType()), takes("unhex", STRING))

del _name
