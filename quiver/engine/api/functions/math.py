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
    """HALF_UP rounding to `scale` decimal places (default 0).

    >>> spark.createDataFrame([(2.5,), (-2.5,)], ["v"]).select(F.round("v")).collect()
    [Row(round(v, 0)=3.0), Row(round(v, 0)=-3.0)]
    """
    return call("round", to_expr(col)) if scale is None else call("round", to_expr(col), literal_expr(scale))


def bround(col: ColumnOrName, scale: Column | int | None = None) -> Column:
    """HALF_EVEN rounding to `scale` decimal places (default 0).

    >>> spark.createDataFrame([(2.5,), (3.5,)], ["v"]).select(F.bround("v")).collect()
    [Row(bround(v, 0)=2.0), Row(bround(v, 0)=4.0)]
    """
    return call("bround", to_expr(col)) if scale is None else call("bround", to_expr(col), literal_expr(scale))


sqrt = unary("sqrt", """Square root.

    >>> df.select(F.sqrt("age")).collect()
    [Row(SQRT(age)=1.4142135623730951), Row(SQRT(age)=2.23606797749979)]
    """)
cbrt = unary("cbrt", """Cube root.

    >>> spark.createDataFrame([(27.0,)], ["v"]).select(F.cbrt("v")).collect()
    [Row(CBRT(v)=3.0)]
    """)
exp = unary("exp", """e to the power of the value.

    >>> spark.range(1).select(F.exp(F.lit(0))).collect()
    [Row(EXP(0)=1.0)]
    """)
expm1 = unary("expm1", """exp(x) - 1, precise near 0.

    >>> spark.range(1).select(F.expm1(F.lit(0))).collect()
    [Row(EXPM1(0)=0.0)]
    """)
ln = unary("ln", """Natural logarithm (null for x <= 0).

    >>> spark.range(1).select(F.ln(F.lit(1))).collect()
    [Row(ln(1)=0.0)]
    """)
log10 = unary("log10", """Base-10 logarithm (null for x <= 0).

    >>> spark.createDataFrame([(100.0,), (0.0,)], ["v"]).select(F.log10("v")).collect()
    [Row(LOG10(v)=2.0), Row(LOG10(v)=None)]
    """)
log2 = unary("log2", """Base-2 logarithm (null for x <= 0).

    >>> spark.createDataFrame([(8.0,)], ["v"]).select(F.log2("v")).collect()
    [Row(LOG2(v)=3.0)]
    """)
log1p = unary("log1p", """ln(1 + x), precise near 0.

    >>> spark.range(1).select(F.log1p(F.lit(0))).collect()
    [Row(LOG1P(0)=0.0)]
    """)
sin = unary("sin", """Sine.

    >>> spark.range(1).select(F.sin(F.lit(0))).collect()
    [Row(SIN(0)=0.0)]
    """)
cos = unary("cos", """Cosine.

    >>> spark.range(1).select(F.cos(F.lit(0))).collect()
    [Row(COS(0)=1.0)]
    """)
tan = unary("tan", """Tangent.

    >>> spark.range(1).select(F.tan(F.lit(0))).collect()
    [Row(TAN(0)=0.0)]
    """)
asin = unary("asin", """Arc sine.

    >>> spark.range(1).select(F.asin(F.lit(1))).collect()
    [Row(ASIN(1)=1.5707963267948966)]
    """)
acos = unary("acos", """Arc cosine.

    >>> spark.range(1).select(F.acos(F.lit(1))).collect()
    [Row(ACOS(1)=0.0)]
    """)
atan = unary("atan", """Arc tangent.

    >>> spark.range(1).select(F.atan(F.lit(1))).collect()
    [Row(ATAN(1)=0.7853981633974483)]
    """)
sinh = unary("sinh", """Hyperbolic sine.

    >>> spark.range(1).select(F.sinh(F.lit(0))).collect()
    [Row(SINH(0)=0.0)]
    """)
cosh = unary("cosh", """Hyperbolic cosine.

    >>> spark.range(1).select(F.cosh(F.lit(0))).collect()
    [Row(COSH(0)=1.0)]
    """)
tanh = unary("tanh", """Hyperbolic tangent.

    >>> spark.range(1).select(F.tanh(F.lit(0))).collect()
    [Row(TANH(0)=0.0)]
    """)
degrees = unary("degrees", """Radians to degrees.

    >>> spark.range(1).select(F.degrees(F.lit(3.141592653589793))).collect()
    [Row(DEGREES(3.141592653589793)=180.0)]
    """)
radians = unary("radians", """Degrees to radians.

    >>> spark.range(1).select(F.radians(F.lit(180))).collect()
    [Row(RADIANS(180)=3.141592653589793)]
    """)
signum = unary("signum", """-1.0, 0.0 or 1.0.

    >>> spark.createDataFrame([(-3,), (0,), (7,)], ["v"]).select(F.signum("v")).collect()
    [Row(SIGNUM(v)=-1.0), Row(SIGNUM(v)=0.0), Row(SIGNUM(v)=1.0)]
    """)
sign = unary("sign", """-1.0, 0.0 or 1.0.

    >>> spark.createDataFrame([(-3,), (0,), (7,)], ["v"]).select(F.sign("v")).collect()
    [Row(sign(v)=-1.0), Row(sign(v)=0.0), Row(sign(v)=1.0)]
    """)


def log(arg1: ColumnOrName | float, arg2: ColumnOrName | None = None) -> Column:
    """log(col) is the natural logarithm; log(base, col) the logarithm in `base`.

    >>> spark.range(1).select(F.log(2.0, F.lit(8)).alias("l")).collect()
    [Row(l=3.0)]
    """
    if arg2 is None:
        return call("ln", to_expr(arg1))
    base = float(arg1) if isinstance(arg1, (int, float)) and not isinstance(arg1, bool) else arg1
    return call("log", literal_expr(base), to_expr(arg2))


def _binary_math(value: Any) -> Any:
    """PySpark's binary math functions read a str as a column name and a number as a literal."""
    return to_expr(value)


def pow(col1: ColumnOrName | float, col2: ColumnOrName | float) -> Column:  # noqa: A001
    """col1 raised to col2.

    >>> df.select(F.pow("age", 2).alias("p")).collect()
    [Row(p=4.0), Row(p=25.0)]
    """
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
    """Largest integer <= x (bigint), or with `scale` a decimal rounded down.

    >>> spark.createDataFrame([(1.5,), (-1.5,)], ["v"]).select(F.floor("v")).collect()
    [Row(FLOOR(v)=1), Row(FLOOR(v)=-2)]
    """
    return _rounding("floor", col, scale)


def ceil(col: ColumnOrName, scale: Column | int | None = None) -> Column:
    """Smallest integer >= x (bigint), or with `scale` a decimal rounded up.

    >>> spark.createDataFrame([(1.5,), (-1.5,)], ["v"]).select(F.ceil("v")).collect()
    [Row(CEIL(v)=2), Row(CEIL(v)=-1)]
    """
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
    """The largest non-null argument.

    >>> frame = spark.createDataFrame([(1, 4, None)], "a int, b int, c int")
    >>> frame.select(F.greatest("a", "b", "c").alias("g")).collect()
    [Row(g=4)]
    """
    return call("greatest", *column_args("greatest", cols, least=2))


def least(*cols: ColumnOrName) -> Column:
    """The smallest non-null argument.

    >>> spark.createDataFrame([(1, 4, None)], "a int, b int, c int").select(F.least("a", "b", "c").alias("l")).collect()
    [Row(l=1)]
    """
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
    """left - right, NULL where it overflows.

    >>> df.select(F.try_subtract("age", F.lit(1)).alias("d")).collect()
    [Row(d=1), Row(d=4)]
    """
    return _try_operator("-", left, right)


def try_multiply(left: ColumnOrName, right: ColumnOrName) -> Column:
    """left * right, NULL where it overflows.

    >>> spark.createDataFrame([(2**62,)], "v bigint").select(F.try_multiply("v", F.lit(4)).alias("m")).collect()
    [Row(m=None)]
    """
    return _try_operator("*", left, right)


def try_divide(left: ColumnOrName, right: ColumnOrName) -> Column:
    """left / right, NULL for a zero divisor (in either ANSI mode).

    >>> df.select(F.try_divide("age", F.lit(0)).alias("q")).collect()
    [Row(q=None), Row(q=None)]
    """
    return _try_operator("/", left, right)


def try_mod(left: ColumnOrName, right: ColumnOrName) -> Column:
    """left % right, NULL for a zero divisor.

    >>> df.select(F.try_mod("age", F.lit(3)).alias("m"), F.try_mod("age", F.lit(0)).alias("z")).collect()
    [Row(m=2, z=None), Row(m=2, z=None)]
    """
    return _try_operator("%", left, right)


def pmod(dividend: ColumnOrName | float, divisor: ColumnOrName | float) -> Column:
    """The positive remainder of dividend / divisor (null for a zero divisor).

    >>> spark.createDataFrame([(-7, 3)], ["a", "b"]).select(F.pmod("a", "b").alias("m")).collect()
    [Row(m=2)]
    """
    return call("pmod", to_expr(dividend), to_expr(divisor))


def conv(col: ColumnOrName, fromBase: int, toBase: int) -> Column:  # noqa: N803
    """A number written in base `fromBase` rewritten in base `toBase` (a negative toBase is signed).

    >>> spark.createDataFrame([("100",)], ["s"]).select(F.conv("s", 2, 10).alias("c")).collect()
    [Row(c='4')]
    """
    return call("conv", to_expr(col), literal_expr(fromBase), literal_expr(toBase))


def bin(col: ColumnOrName) -> Column:  # noqa: A001
    """The binary digits of a bigint (two's complement for negatives).

    >>> df.select(F.bin("age").alias("b")).collect()
    [Row(b='10'), Row(b='101')]
    """
    return call("bin", to_expr(col))


def hex(col: ColumnOrName) -> Column:  # noqa: A001
    """Hex digits of a bigint, or of a string's or binary's bytes.

    >>> spark.createDataFrame([(255, "AB")], ["n", "s"]).select(F.hex("n").alias("h"), F.hex("s").alias("s")).collect()
    [Row(h='FF', s='4142')]
    """
    return call("hex", to_expr(col))


def unhex(col: ColumnOrName) -> Column:
    """The bytes that hex digits spell (null for a non-hex character).

    >>> spark.createDataFrame([("4142",)], ["s"]).select(F.unhex("s").alias("b")).collect()
    [Row(b=b'AB')]
    """
    return call("unhex", to_expr(col))


__all__ = [
    "abs", "round", "bround", "sqrt", "cbrt", "exp", "expm1", "ln", "log10", "log2", "log1p", "sin", "cos", "tan",
    "asin", "acos", "atan", "sinh", "cosh", "tanh", "degrees", "radians", "signum", "sign", "log", "pow", "power",
    "atan2", "hypot", "floor", "ceil", "ceiling", "greatest", "least", "pmod", "try_add", "try_subtract",
    "try_multiply", "try_divide", "try_mod", "conv", "bin", "hex", "unhex",
]
