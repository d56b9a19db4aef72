"""Math functions of `quiver.functions` (F): elementary functions, logarithms and powers, rounding, greatest
and least, pmod, and numbers in other bases (bin, hex, unhex, conv), as in PySpark."""
from __future__ import annotations

from typing import Any

from quiver.engine.api.column import Column, literal_expr, to_expr
from quiver.engine.api.functions.calls import ColumnOrName, call, column_args, unary
from quiver.engine.core.expressions import BinaryArithmetic


def abs(col: ColumnOrName) -> Column:  # noqa: A001
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
    return call("power", _binary_math(col1), _binary_math(col2))


def atan2(col1: ColumnOrName | float, col2: ColumnOrName | float) -> Column:
    return call("atan2", _binary_math(col1), _binary_math(col2))


def hypot(col1: ColumnOrName | float, col2: ColumnOrName | float) -> Column:
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
    """left + right, NULL where it overflows (in either ANSI mode).

    >>> df.select(F.try_add("a", "b"))
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
