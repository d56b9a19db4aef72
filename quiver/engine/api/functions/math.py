"""Math functions of `quiver.functions` (F): elementary functions, logarithms and powers, rounding, greatest
and least, pmod, and numbers in other bases (bin, hex, unhex, conv), as in PySpark."""
from __future__ import annotations

from typing import Any

from quiver.engine.api.column import Column, literal_expr, to_expr
from quiver.engine.api.functions.calls import ColumnOrName, call, column_args, unary
from quiver.engine.core.expressions import BinaryArithmetic


def abs(col: ColumnOrName) -> Column:  # noqa: A001
    """The absolute value, of the argument's type; null stays null, and under ANSI mode (the default) the
    smallest int or bigint, which has no positive counterpart, raises an overflow error, as in Spark.

    >>> spark.createDataFrame([(-1,), (2,)], ["v"]).select(F.abs("v")).collect()
    [Row(abs(v)=1), Row(abs(v)=2)]
    """
    return call("abs", to_expr(col))


def round(col: ColumnOrName, scale: Column | int | None = None) -> Column:  # noqa: A001
    """HALF_UP rounding to `scale` decimal places (default 0)."""
    return call("round", to_expr(col)) if scale is None else call("round", to_expr(col), literal_expr(scale))


def bround(col: ColumnOrName, scale: Column | int | None = None) -> Column:
    """HALF_EVEN rounding to `scale` decimal places (default 0)."""
    return call("bround", to_expr(col)) if scale is None else call("bround", to_expr(col), literal_expr(scale))


sqrt = unary("sqrt", "Square root.")
cbrt = unary("cbrt", "Cube root.")
exp = unary("exp", "e to the power of the value.")
expm1 = unary("expm1", "exp(x) - 1, precise near 0.")
ln = unary("ln", "Natural logarithm (null for x <= 0).")
log10 = unary("log10", "Base-10 logarithm (null for x <= 0).")
log2 = unary("log2", "Base-2 logarithm (null for x <= 0).")
log1p = unary("log1p", "ln(1 + x), precise near 0.")
sin = unary("sin", "Sine.")
cos = unary("cos", "Cosine.")
tan = unary("tan", "Tangent.")
asin = unary("asin", "Arc sine.")
acos = unary("acos", "Arc cosine.")
atan = unary("atan", "Arc tangent.")
sinh = unary("sinh", "Hyperbolic sine.")
cosh = unary("cosh", "Hyperbolic cosine.")
tanh = unary("tanh", "Hyperbolic tangent.")
degrees = unary("degrees", "Radians to degrees.")
radians = unary("radians", "Degrees to radians.")
signum = unary("signum", "-1.0, 0.0 or 1.0.")
sign = unary("sign", "-1.0, 0.0 or 1.0.")


def log(arg1: ColumnOrName | float, arg2: ColumnOrName | None = None) -> Column:
    """log(col) is the natural logarithm; log(base, col) the logarithm in `base`."""
    if arg2 is None:
        return call("ln", to_expr(arg1))
    base = float(arg1) if isinstance(arg1, (int, float)) and not isinstance(arg1, bool) else arg1
    return call("log", literal_expr(base), to_expr(arg2))


def _binary_math(value: Any) -> Any:
    """PySpark's binary math functions read a str as a column name and a number as a literal."""
    return to_expr(value)


def pow(col1: ColumnOrName | float, col2: ColumnOrName | float) -> Column:  # noqa: A001
    """col1 raised to col2."""
    return call("power", _binary_math(col1), _binary_math(col2))


def power(col1: ColumnOrName | float, col2: ColumnOrName | float) -> Column:
    """col1 raised to col2, as a double: `pow` under Spark SQL's other name. A str is a column name, a number a
    literal.

    >>> df.select(F.power("age", 2).alias("p")).collect()
    [Row(p=4.0), Row(p=25.0)]
    """
    return call("power", _binary_math(col1), _binary_math(col2))


def atan2(col1: ColumnOrName | float, col2: ColumnOrName | float) -> Column:
    """The angle in radians between the positive x axis and the point (x = col2, y = col1), in (-pi, pi]: the arc
    tangent of col1 / col2 that keeps the quadrant. A str is a column name, a number a literal.

    >>> spark.range(1).select(F.atan2(1.0, 1.0).alias("a")).collect()
    [Row(a=0.7853981633974483)]
    """
    return call("atan2", _binary_math(col1), _binary_math(col2))


def hypot(col1: ColumnOrName | float, col2: ColumnOrName | float) -> Column:
    """sqrt(col1 * col1 + col2 * col2), as a double, without overflow or underflow in the intermediate squares.
    A str is a column name, a number a literal.

    >>> spark.range(1).select(F.hypot(3, 4).alias("h")).collect()
    [Row(h=5.0)]
    """
    return call("hypot", _binary_math(col1), _binary_math(col2))


def _rounding(name: str, col: ColumnOrName, scale: Column | int | None) -> Column:
    return call(name, to_expr(col)) if scale is None else call(name, to_expr(col), literal_expr(scale))


def floor(col: ColumnOrName, scale: Column | int | None = None) -> Column:
    """Largest integer <= x (bigint), or with `scale` a decimal rounded down."""
    return _rounding("floor", col, scale)


def ceil(col: ColumnOrName, scale: Column | int | None = None) -> Column:
    """Smallest integer >= x (bigint), or with `scale` a decimal rounded up."""
    return _rounding("ceil", col, scale)


def ceiling(col: ColumnOrName, scale: Column | int | None = None) -> Column:
    """Smallest integer >= x (bigint), or with `scale` a decimal rounded up: `ceil` under Spark SQL's other name.

    >>> spark.createDataFrame([(1.5,), (-1.5,)], ["v"]).select(F.ceiling("v")).collect()
    [Row(ceiling(v)=2), Row(ceiling(v)=-1)]
    >>> spark.createDataFrame([(1.234,)], ["v"]).select(F.ceiling("v", 2).alias("c")).collect()
    [Row(c=Decimal('1.24'))]
    """
    return _rounding("ceiling", col, scale)


def greatest(*cols: ColumnOrName) -> Column:
    """The largest non-null argument."""
    return call("greatest", *column_args("greatest", cols, least=2))


def least(*cols: ColumnOrName) -> Column:
    """The smallest non-null argument."""
    return call("least", *column_args("least", cols, least=2))


def _try_operator(op: str, left: ColumnOrName, right: ColumnOrName) -> Column:
    return Column(BinaryArithmetic(op, to_expr(left), to_expr(right), is_try=True))


def try_add(left: ColumnOrName, right: ColumnOrName) -> Column:
    """left + right, NULL where it overflows (in either ANSI mode), where `+` raises an error under ANSI mode.

    >>> df.select(F.try_add("age", F.lit(1)).alias("s")).collect()
    [Row(s=3), Row(s=6)]
    >>> spark.createDataFrame([(9223372036854775807,)], ["v"]).select(F.try_add("v", F.lit(1)).alias("s")).collect()
    [Row(s=None)]
    """
    return _try_operator("+", left, right)


def try_subtract(left: ColumnOrName, right: ColumnOrName) -> Column:
    """left - right, NULL where it overflows."""
    return _try_operator("-", left, right)


def try_multiply(left: ColumnOrName, right: ColumnOrName) -> Column:
    """left * right, NULL where it overflows."""
    return _try_operator("*", left, right)


def try_divide(left: ColumnOrName, right: ColumnOrName) -> Column:
    """left / right, NULL for a zero divisor (in either ANSI mode)."""
    return _try_operator("/", left, right)


def try_mod(left: ColumnOrName, right: ColumnOrName) -> Column:
    """left % right, NULL for a zero divisor."""
    return _try_operator("%", left, right)


def pmod(dividend: ColumnOrName | float, divisor: ColumnOrName | float) -> Column:
    """The positive remainder of dividend / divisor (null for a zero divisor)."""
    return call("pmod", to_expr(dividend), to_expr(divisor))


def conv(col: ColumnOrName, fromBase: int, toBase: int) -> Column:  # noqa: N803
    """A number written in base `fromBase` rewritten in base `toBase` (a negative toBase is signed)."""
    return call("conv", to_expr(col), literal_expr(fromBase), literal_expr(toBase))


def bin(col: ColumnOrName) -> Column:  # noqa: A001
    """The binary digits of a bigint (two's complement for negatives)."""
    return call("bin", to_expr(col))


def hex(col: ColumnOrName) -> Column:  # noqa: A001
    """Hex digits of a bigint, or of a string's or binary's bytes."""
    return call("hex", to_expr(col))


def unhex(col: ColumnOrName) -> Column:
    """The bytes that hex digits spell (null for a non-hex character)."""
    return call("unhex", to_expr(col))


__all__ = [
    "abs", "round", "bround", "sqrt", "cbrt", "exp", "expm1", "ln", "log10", "log2", "log1p", "sin", "cos", "tan",
    "asin", "acos", "atan", "sinh", "cosh", "tanh", "degrees", "radians", "signum", "sign", "log", "pow", "power",
    "atan2", "hypot", "floor", "ceil", "ceiling", "greatest", "least", "pmod", "try_add", "try_subtract",
    "try_multiply", "try_divide", "try_mod", "conv", "bin", "hex", "unhex",
]
