"""CPU kernels for Spark's math functions: elementary functions, rounding, greatest and least, pmod,
and numbers in other bases (bin, hex, unhex, conv)."""
from __future__ import annotations

import decimal
import re
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from quiver.engine.core import types as T
from quiver.engine.core.ansi import ansi_enabled
from quiver.engine.core.errors import arithmetic_overflow, divide_by_zero
from quiver.executors.cpu.cast import cast_array, round_decimal
from quiver.executors.cpu.kernels.registry import (
    Value,
    all_null,
    as_array,
    constant,
    kernel,
    length_of,
    mask_null,
    per_row,
    to_result_type,
)

# ---------------------------------------------------------------- math

@kernel("abs")
def abs_(args: list[Value], rt: T.DataType) -> Value:
    """Absolute value; an integer minimum wraps as in Java, or overflows under ANSI mode."""
    if ansi_enabled() and pa.types.is_integer(args[0].type):
        try:
            return pc.abs_checked(args[0])
        except pa.ArrowInvalid:
            raise arithmetic_overflow() from None
    return pc.abs(args[0])


@kernel("div", data="all")
def div(args: list[Value], rt: T.DataType) -> Value:
    """`a div b`: a / b truncated toward zero, as a bigint; a zero divisor gives NULL, or DIVIDE_BY_ZERO
    under ANSI mode, and bigint minimum div -1 wraps (or overflows under ANSI), as in Spark."""
    length = length_of(args)
    a, b = (as_array(x, length) for x in args)
    if pa.types.is_decimal(a.type) or pa.types.is_decimal(b.type):
        def truncated(x: decimal.Decimal, y: decimal.Decimal) -> int | None:
            if y == 0:
                if ansi_enabled():
                    raise divide_by_zero()
                return None
            return int((x / y).to_integral_value(rounding=decimal.ROUND_DOWN))
        with decimal.localcontext() as context:
            context.prec = 80
            return per_row([a, b], truncated, pa.int64())
    a, b = a.cast(pa.int64()), b.cast(pa.int64())
    zero = pc.fill_null(pc.equal(b, 0), False)
    if ansi_enabled() and pc.any(pc.and_(zero, pc.is_valid(a))).as_py():
        raise divide_by_zero()
    wraps = pc.fill_null(pc.and_(pc.equal(a, np.iinfo(np.int64).min), pc.equal(b, -1)), False)
    if ansi_enabled() and pc.any(wraps).as_py():
        raise arithmetic_overflow()
    quotient = pc.divide(a, pc.if_else(pc.or_(zero, wraps), pa.scalar(1, pa.int64()), b))
    quotient = pc.if_else(wraps, pa.scalar(np.iinfo(np.int64).min, pa.int64()), quotient)
    return pc.if_else(zero, pa.scalar(None, pa.int64()), quotient)


def _double(value: Value) -> Value:
    return value.cast(pa.float64())


def _unary_math(fn: Callable[[Value], Value], name: str, domain: Callable[[Value], Value] | None = None) -> Callable:
    def run(args: list[Value], rt: T.DataType) -> Value:
        x = _double(args[0])
        out = fn(x)
        if domain is not None:
            out = mask_null(out, domain(x))
        return out
    run.__doc__ = f"{name}, on doubles" + (" (null where Spark's domain check fails)" if domain else "")
    return run


def _numpy_math(fn: Callable[[np.ndarray], np.ndarray]) -> Callable[[pa.Array], pa.Array]:
    def run(x: pa.Array) -> pa.Array:
        values = x.fill_null(0.0).to_numpy(zero_copy_only=False)
        with np.errstate(all="ignore"):
            return pa.array(fn(values), pa.float64(), mask=x.is_null().to_numpy(zero_copy_only=False))
    return run


def _not_positive(x: Value) -> Value:
    return pc.less_equal(x, 0.0)


kernel("sqrt")(_unary_math(pc.sqrt, "sqrt"))
kernel("cbrt")(_unary_math(_numpy_math(np.cbrt), "cbrt"))
kernel("exp")(_unary_math(pc.exp, "exp"))
kernel("expm1")(_unary_math(_numpy_math(np.expm1), "expm1"))
kernel("ln")(_unary_math(pc.ln, "ln", _not_positive))
kernel("log10")(_unary_math(pc.log10, "log10", _not_positive))
kernel("log2")(_unary_math(pc.log2, "log2", _not_positive))
kernel("log1p")(_unary_math(pc.log1p, "log1p", lambda x: pc.less_equal(x, -1.0)))
kernel("sin")(_unary_math(pc.sin, "sin"))
kernel("cos")(_unary_math(pc.cos, "cos"))
kernel("tan")(_unary_math(pc.tan, "tan"))
kernel("asin")(_unary_math(pc.asin, "asin"))
kernel("acos")(_unary_math(pc.acos, "acos"))
kernel("atan")(_unary_math(pc.atan, "atan"))
kernel("sinh")(_unary_math(_numpy_math(np.sinh), "sinh"))
kernel("cosh")(_unary_math(_numpy_math(np.cosh), "cosh"))
kernel("tanh")(_unary_math(_numpy_math(np.tanh), "tanh"))
kernel("degrees")(_unary_math(_numpy_math(np.degrees), "degrees"))
kernel("radians")(_unary_math(_numpy_math(np.radians), "radians"))


@kernel("log", data="all")
def log(args: list[Value], rt: T.DataType) -> Value:
    """log(x) is ln(x); log(base, x) = ln(x) / ln(base); null when base or x <= 0."""
    if len(args) == 1:
        x = _double(args[0])
        return mask_null(pc.ln(x), _not_positive(x))
    base, x = _double(args[0]), _double(args[1])
    out = pc.divide(pc.ln(x), pc.ln(base))
    return mask_null(out, pc.or_(_not_positive(x), _not_positive(base)))


@kernel("pow", "power", data="all")
def power(args: list[Value], rt: T.DataType) -> Value:
    """Java's Math.pow: unlike C, 1^NaN and (+-1)^(+-inf) are NaN."""
    base, exponent = _double(args[0]), _double(args[1])
    out = pc.power(base, exponent)
    nan_cases = pc.or_(pc.is_nan(exponent),
                       pc.and_(pc.equal(pc.abs(base), 1.0), pc.is_inf(exponent)))
    return pc.if_else(pc.fill_null(nan_cases, False), float("nan"), out)


@kernel("atan2", data="all")
def atan2(args: list[Value], rt: T.DataType) -> Value:
    """atan2(y, x); like Spark, -0.0 arguments count as 0.0."""
    return pc.atan2(pc.add(_double(args[0]), 0.0), pc.add(_double(args[1]), 0.0))


@kernel("hypot", data="all")
def hypot(args: list[Value], rt: T.DataType) -> Value:
    """sqrt(a^2 + b^2) without intermediate overflow, as Java's Math.hypot."""
    length = length_of(args)
    a, b = (_double(as_array(x, length)) for x in args)
    values = np.hypot(a.fill_null(0.0).to_numpy(zero_copy_only=False), b.fill_null(0.0).to_numpy(zero_copy_only=False))
    mask = a.is_null().to_numpy(zero_copy_only=False) | b.is_null().to_numpy(zero_copy_only=False)
    return pa.array(values, pa.float64(), mask=mask)


@kernel("signum", "sign")
def signum(args: list[Value], rt: T.DataType) -> Value:
    """-1.0, 0.0 or 1.0 as a double (NaN stays NaN, -0.0 stays -0.0)."""
    x = args[0]
    if pa.types.is_floating(x.type):
        x = x.cast(pa.float64())
        return pc.if_else(pc.equal(x, 0.0), x, pc.sign(x).cast(pa.float64()))
    return pc.sign(x).cast(pa.float64())


def round_half(values: np.ndarray, scale: int, half_even: bool) -> np.ndarray:
    """Round doubles the way Spark does: on their shortest decimal text, HALF_UP (or HALF_EVEN).

    Scaling by 10^scale is exact enough except within a hair of a tie (2.675 is
    2.67499999... in binary yet rounds to 2.68 in Spark); those rows, and extreme scales,
    are redone with Python's decimal on the repr.
    """
    from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal

    with np.errstate(all="ignore"):
        factor = 10.0 ** scale
        scaled = values * factor if scale >= 0 else values / 10.0 ** (-scale)
        magnitude = np.abs(scaled)
        floor = np.floor(magnitude)
        fraction = magnitude - floor
        up = fraction > 0.5
        if half_even:
            up |= (fraction == 0.5) & (np.fmod(floor, 2) == 1)
        else:
            up |= fraction == 0.5
        rounded = np.copysign(floor + up, scaled)
        result = rounded / factor if scale >= 0 else rounded * 10.0 ** (-scale)
        result = result + 0.0  # -0.0 -> 0.0: BigDecimal has no negative zero
    finite = np.isfinite(values)
    near_tie = np.abs(fraction - 0.5) <= 1e-9 * np.maximum(magnitude, 1.0)
    exact_already = magnitude >= 2.0 ** 52
    redo = finite & ~exact_already & (near_tie | (abs(scale) > 22))
    result = np.where(finite & exact_already & (scale >= 0), values, result)
    result = np.where(finite, result, values)
    if redo.any():
        mode = ROUND_HALF_EVEN if half_even else ROUND_HALF_UP
        quantum = Decimal(1).scaleb(-scale)
        for i in np.flatnonzero(redo):
            result[i] = float(Decimal(repr(float(values[i]))).quantize(quantum, rounding=mode)) + 0.0
    return result


def _round(args: list[Value], rt: T.DataType, half_even: bool, function: str) -> Value:
    x = args[0]
    scale = 0 if len(args) < 2 else constant(args[1], function, "scale")
    if scale is None:
        return all_null(len(x), rt)
    if isinstance(rt, T.DecimalType):
        src = T.from_arrow(x.type)
        decimal = x if isinstance(src, T.DecimalType) else cast_array(x, T.DecimalType(38, 18))
        wide = decimal.cast(pa.decimal256(min(76, decimal.type.precision + 1), decimal.type.scale))
        mode = "half_to_even" if half_even else "half_towards_infinity"
        if scale < decimal.type.scale:
            wide = pc.round(wide, ndigits=scale, round_mode=mode)
        return round_decimal(wide, rt, mode)
    if isinstance(rt, T.IntegralType):
        return _round_integral(x, rt, scale, half_even)
    values = x.cast(pa.float64()).fill_null(0.0).to_numpy(zero_copy_only=False)
    out = round_half(values, scale, half_even)
    return pa.array(out, pa.float64(), mask=x.is_null().to_numpy(zero_copy_only=False)).cast(rt.to_arrow())


def _round_integral(x: pa.Array, rt: T.DataType, scale: int, half_even: bool) -> pa.Array:
    """Integers rounded to 10^-scale; like Spark's BigDecimal path, results wrap to the type."""
    if scale >= 0:
        return x
    values = x.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    if -scale > 19:
        out = np.zeros_like(values)
    else:
        step = np.uint64(10 ** (-scale))
        negative = values < 0
        magnitude = np.where(negative, (~values.view(np.uint64)) + np.uint64(1), values.view(np.uint64))
        quotient, remainder = magnitude // step, magnitude % step
        twice = remainder * np.uint64(2)
        up = (twice > step) | ((twice == step) & ((quotient % np.uint64(2) == 1) if half_even else True))
        rounded = (quotient + up.astype(np.uint64)) * step
        out = np.where(negative, (~rounded) + np.uint64(1), rounded).view(np.int64)
    width = {T.ByteType: np.int8, T.ShortType: np.int16, T.IntegerType: np.int32, T.LongType: np.int64}[type(rt)]
    return pa.array(out.astype(width), rt.to_arrow(), mask=x.is_null().to_numpy(zero_copy_only=False))


@kernel("round")
def round_(args: list[Value], rt: T.DataType) -> Value:
    """HALF_UP rounding to `scale` places (negative scales round left of the point)."""
    return _round(args, rt, False, "round")


@kernel("bround")
def bround(args: list[Value], rt: T.DataType) -> Value:
    """HALF_EVEN (banker's) rounding to `scale` places."""
    return _round(args, rt, True, "bround")


def _floor_ceil(args: list[Value], rt: T.DataType, up: bool, function: str) -> Value:
    x = args[0]
    if len(args) > 1:
        scale = constant(args[1], function, "scale")
        src = T.from_arrow(x.type)
        if isinstance(src, T.IntegralType):
            decimal = cast_array(x, T.decimal_for_integral(src))
        elif isinstance(src, T.DecimalType):
            decimal = x
        else:
            decimal = cast_array(x, T.DecimalType(30, 15))
        wide = decimal.cast(pa.decimal256(min(76, decimal.type.precision + 1), decimal.type.scale))
        if scale < decimal.type.scale:
            wide = pc.round(wide, ndigits=scale, round_mode="up" if up else "down")
        return round_decimal(wide, rt, "up" if up else "down")
    if isinstance(rt, T.DecimalType):
        wide = x.cast(pa.decimal256(x.type.precision + 1, x.type.scale))
        return round_decimal(pc.ceil(wide) if up else pc.floor(wide), rt, "up" if up else "down")
    if pa.types.is_integer(x.type):
        return x.cast(pa.int64())
    return cast_array(pc.ceil(x) if up else pc.floor(x), T.LongType())


@kernel("floor")
def floor(args: list[Value], rt: T.DataType) -> Value:
    """Largest integer <= x, as bigint (NaN -> 0, saturating), or a decimal."""
    return _floor_ceil(args, rt, False, "floor")


@kernel("ceil", "ceiling")
def ceil(args: list[Value], rt: T.DataType) -> Value:
    """Smallest integer >= x, as bigint (NaN -> 0, saturating), or a decimal."""
    return _floor_ceil(args, rt, True, "ceil")


def _extreme(args: list[Value], rt: T.DataType, greatest: bool) -> Value:
    values = [to_result_type(a, rt) for a in args]
    floating = pa.types.is_floating(rt.to_arrow())
    result = values[0]
    for value in values[1:]:
        better = pc.greater(value, result) if greatest else pc.less(value, result)
        if floating:
            # Spark orders NaN above every number
            nan_v, nan_r = pc.is_nan(value), pc.is_nan(result)
            if greatest:
                better = pc.or_(better, pc.and_(nan_v, pc.invert(nan_r)))
            else:
                better = pc.or_(better, pc.and_(nan_r, pc.invert(nan_v)))
        take_new = pc.or_kleene(pc.is_null(result), pc.fill_null(better, False))
        take_new = pc.and_(take_new, pc.is_valid(value))
        result = pc.if_else(take_new, value, result)
    return result


@kernel("greatest", data="all")
def greatest(args: list[Value], rt: T.DataType) -> Value:
    """Largest non-null argument (NaN counts as largest)."""
    return _extreme(args, rt, True)


@kernel("least", data="all")
def least(args: list[Value], rt: T.DataType) -> Value:
    """Smallest non-null argument."""
    return _extreme(args, rt, False)


# ---------------------------------------------------------------- hex, bin, conv

_MASK64 = (1 << 64) - 1


@kernel("bin")
def bin_(args: list[Value], rt: T.DataType) -> Value:
    """Long.toBinaryString: two's complement bits for a negative number."""
    return per_row([args[0]], lambda v: format(v & _MASK64, "b"), pa.string())


@kernel("hex")
def hex_(args: list[Value], rt: T.DataType) -> Value:
    """Upper-case hex of a bigint (two's complement), or of a string's or binary's bytes."""
    value = args[0]
    if pa.types.is_integer(value.type):
        return per_row([value], lambda v: format(v & _MASK64, "X"), pa.string())
    return per_row([value.cast(pa.binary())], lambda b: b.hex().upper(), pa.string())


def _unhex(text: str) -> bytes | None:
    if len(text) % 2:
        text = "0" + text
    try:
        return bytes.fromhex(text) if re.fullmatch(r"[0-9a-fA-F]*", text) else None
    except ValueError:
        return None


@kernel("unhex")
def unhex(args: list[Value], rt: T.DataType) -> Value:
    return per_row([args[0]], _unhex, pa.binary())


_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def spark_conv(text: str, from_base: int, to_base: int) -> str | None:
    """Spark's NumberConverter: unsigned 64-bit arithmetic, parsing up to the first invalid digit."""
    if not (2 <= abs(from_base) <= 36 and 2 <= abs(to_base) <= 36):
        return None
    negative = text.startswith("-")
    value = 0
    for ch in text[1:] if negative else text:
        digit = _DIGITS.find(ch.upper())
        if digit < 0 or digit >= abs(from_base):
            break
        value = value * abs(from_base) + digit
        if value > _MASK64:
            value = _MASK64
            break
    if negative and to_base > 0:
        value = _MASK64 if value == _MASK64 else (-value) & _MASK64
    signed_negative = to_base < 0 and (value >= 1 << 63 or negative)
    if to_base < 0 and negative:
        magnitude = value
    elif signed_negative:
        magnitude = (1 << 64) - value
    else:
        magnitude = value
    base, digits = abs(to_base), []
    while True:
        magnitude, r = divmod(magnitude, base)
        digits.append(_DIGITS[r])
        if magnitude == 0:
            break
    return ("-" if signed_negative else "") + "".join(reversed(digits))


@kernel("conv", data="all")
def conv(args: list[Value], rt: T.DataType) -> Value:
    return per_row(args, spark_conv, pa.string())


# ---------------------------------------------------------------- pmod

@kernel("pmod", data="all")
def pmod(args: list[Value], rt: T.DataType) -> Value:
    """a mod n, made positive: r = a % n; (r + n) % n where r < 0; null for n = 0."""
    length = length_of(args)
    out_type = rt.to_arrow()
    a, n = (as_array(x, length).cast(out_type) for x in args)
    if ansi_enabled() and pc.any(pc.and_(pc.is_valid(a), pc.fill_null(
            pc.equal(n, pa.scalar(decimal.Decimal(0) if pa.types.is_decimal(out_type) else 0, out_type)),
            False))).as_py():
        raise divide_by_zero(remainder=True)
    if pa.types.is_decimal(out_type):
        def java_mod(x: decimal.Decimal, y: decimal.Decimal) -> decimal.Decimal | None:
            if y == 0:
                return None
            r = x % y  # Decimal's % keeps the dividend's sign, as Java's
            return (r + y) % y if r < 0 else r
        return per_row([a, n], java_mod, out_type)
    nulls = pc.or_(pc.is_null(a), pc.is_null(n))
    zero = pc.fill_null(pc.equal(n, pa.scalar(0, out_type)), False)
    av = a.fill_null(0).to_numpy(zero_copy_only=False)
    nv = n.fill_null(1).to_numpy(zero_copy_only=False)
    nv = np.where(zero.to_numpy(zero_copy_only=False), np.ones(1, nv.dtype), nv)
    with np.errstate(invalid="ignore"):
        if pa.types.is_floating(out_type):
            r = np.fmod(av, nv)
            r = np.where(r < 0, np.fmod(r + nv, nv), r)
        else:
            r = np.fmod(av, nv)
            r = np.where(r < 0, np.fmod(r + nv, nv), r).astype(av.dtype)
    mask = pc.or_(nulls, zero).to_numpy(zero_copy_only=False)
    return pa.array(r, out_type, mask=mask)
