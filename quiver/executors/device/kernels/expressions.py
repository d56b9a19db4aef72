"""Analyzed expressions evaluated on a device, giving the CPU executor's (Spark's non-ANSI) results.

`unsupported_reason` says, before any data moves, whether a whole expression tree has device
kernels, so the planner can keep the operator on the CPU and print why; `evaluate` runs a supported
tree over a `DeviceBatch` with array-API calls only. Results carry the expression's Arrow type
(`expr.dtype.to_arrow()`), and a literal is broadcast to the batch's length.

Decimals compute on int64 unscaled values. Where the types cannot prove an exact result fits 64
bits (a result wider than 18 digits), the operands' largest values must, or evaluation raises
`DeviceFallback` and the task reruns on the CPU: a device answer is Spark's answer or none.
"""
from __future__ import annotations

import decimal
import math
from dataclasses import dataclass
from typing import Any

import array_api_compat
import pyarrow as pa
import pyarrow.compute as pc

from quiver.engine.core import types as T
from quiver.engine.core.ansi import ansi_enabled
from quiver.engine.core.errors import QuiverError
from quiver.engine.core.expressions import (
    AggregateFunction,
    Alias,
    And,
    AttributeRef,
    BinaryArithmetic,
    CaseWhen,
    Cast,
    Comparison,
    Expr,
    In,
    IsNotNull,
    IsNull,
    Literal,
    Negate,
    Not,
    Or,
    PythonUDF,
    ScalarFunction,
)
from quiver.executors.base import DeviceFallback
from quiver.executors.device.kernels.columns import (
    DECIMAL_INT64_PRECISION,
    INT64_MAX,
    DeviceBatch,
    DeviceColumn,
    device_type_supported,
    gather_from_host,
    largest_magnitude,
    storage_dtype,
    storage_scalar,
    unify_dictionaries,
)
from quiver.executors.device.kernels.udf import evaluate_udf, udf_reason

_MICROS_PER_DAY = 86_400_000_000
# float64 magnitudes from which a cast to float32 rounds to infinity (float32's max plus half an ulp)
_FLOAT32_OVERFLOW = 3.4028235677973366e38
_TEMPORAL = (T.DateType, T.TimestampType, T.TimestampNTZType)


# ---------------------------------------------------------------- what the device can evaluate


def unsupported_reason(expr: Expr) -> str | None:
    """None when every node of `expr` has a device kernel, else a short reason naming the first that has not."""
    reason = _node_reason(expr)
    if reason is not None:
        return reason
    for child in expr.children():
        reason = unsupported_reason(child)
        if reason is not None:
            return reason
    return None


def _node_reason(expr: Expr) -> str | None:
    if isinstance(expr, ScalarFunction):
        return f"function {expr.name} has no device kernel"
    if isinstance(expr, AggregateFunction):
        return f"aggregate {expr.name} is computed by the aggregation, not per row"
    check = _CHECKS.get(type(expr))
    if check is None:
        return f"{type(expr).__name__} has no device kernel"
    try:
        dtype = expr.dtype
    except QuiverError as e:
        return f"{expr.sql()} has no type: {e}"
    return check(expr) or _type_reason(dtype, expr)


def _type_reason(dtype: T.DataType, expr: Expr) -> str | None:
    try:
        arrow = dtype.to_arrow()
    except NotImplementedError:
        arrow = None
    if arrow is not None and device_type_supported(arrow):
        return None
    return f"{expr.sql()} is {dtype.simpleString()}, which has no device representation"


def _no_check(expr: Expr) -> str | None:
    return None


def _literal_reason(expr: Literal) -> str | None:
    t = expr.data_type
    if not isinstance(t, T.DecimalType) or expr.value is None:
        return None
    with decimal.localcontext() as context:
        context.prec = 80
        unscaled = int(decimal.Decimal(expr.value).scaleb(t.scale))
    if abs(unscaled) > INT64_MAX:
        return f"decimal literal {expr.sql()} needs more than the 64 bits a device holds a decimal in"
    return None


def _arithmetic_reason(expr: BinaryArithmetic) -> str | None:
    if expr.is_try:
        return f"{expr.sql().split('(')[0]} runs on the CPU"
    lt, rt = expr.left.dtype, expr.right.dtype
    for t in (lt, rt):
        if not isinstance(t, T.NumericType):
            return f"arithmetic on {t.simpleString()} has no device kernel"
    if isinstance(lt, T.DecimalType) or isinstance(rt, T.DecimalType):
        if expr.op == "/":
            return "decimal division has no device kernel"
        if expr.op == "%":
            return "decimal remainder has no device kernel"
        if not (isinstance(lt, T.DecimalType) and isinstance(rt, T.DecimalType)):
            return f"arithmetic mixing {lt.simpleString()} and {rt.simpleString()} needs the analyzer's casts"
    return None


def _negate_reason(expr: Negate) -> str | None:
    t = expr.child.dtype
    return None if isinstance(t, T.NumericType) else f"negation of {t.simpleString()} has no device kernel"


def _comparison_types_reason(op: str, lt: T.DataType, rt: T.DataType) -> str | None:
    if isinstance(lt, T.StringType) or isinstance(rt, T.StringType):
        if not (isinstance(lt, T.StringType) and isinstance(rt, T.StringType)):
            return f"comparison of {lt.simpleString()} with {rt.simpleString()} needs the analyzer's casts"
        if op not in ("=", "<=>"):
            return f"string comparison {op} has no device kernel (only = and <=>)"
        return None
    if lt == rt:
        return None
    numeric = (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType, T.DoubleType)
    if isinstance(lt, numeric) and isinstance(rt, numeric):
        return None
    return f"comparison of {lt.simpleString()} with {rt.simpleString()} needs the analyzer's casts"


def _comparison_reason(expr: Comparison) -> str | None:
    return _comparison_types_reason(expr.op, expr.left.dtype, expr.right.dtype)


def _boolean_operands_reason(expr: Expr) -> str | None:
    for child in expr.children():
        if not isinstance(child.dtype, T.BooleanType):
            return f"{type(expr).__name__.upper()} needs boolean operands, got {child.dtype.simpleString()}"
    return None


def _in_reason(expr: In) -> str | None:
    if all(isinstance(v, Literal) for v in expr.values):
        return None
    for v in expr.values:
        reason = _comparison_types_reason("=", expr.child.dtype, v.dtype)
        if reason is not None:
            return reason
    return None


def _cast_reason(expr: Cast) -> str | None:
    if expr.is_try:
        return "TRY_CAST runs on the CPU"
    if expr.time_zone is not None and expr.time_zone != "UTC":
        return f"a cast through the wall-clock time of session time zone {expr.time_zone} runs on the CPU"
    src, dst = expr.child.dtype, expr.to
    if src == dst:
        return None
    if isinstance(dst, T.StringType):
        return "cast to string formats text, which has no device kernel"
    if isinstance(src, T.StringType):
        return "cast from string parses text, which has no device kernel"
    scalar = (T.NumericType, T.BooleanType)
    if isinstance(src, scalar) and isinstance(dst, scalar):
        if isinstance(dst, T.DecimalType) and isinstance(src, (T.FloatType, T.DoubleType)):
            return ("cast from floating point to decimal goes through the value's decimal text, "
                    "which has no device kernel")
        if isinstance(src, T.DecimalType) and isinstance(dst, (T.FloatType, T.DoubleType)) and src.precision > 15:
            return (f"cast from {src.simpleString()} to {dst.simpleString()} "
                    "is exact on a device only up to precision 15")
        return None
    if isinstance(src, _TEMPORAL) and isinstance(dst, _TEMPORAL):
        return None
    return f"cast from {src.simpleString()} to {dst.simpleString()} has no device kernel"


def _case_when_reason(expr: CaseWhen) -> str | None:
    for c in expr.conditions:
        if not isinstance(c.dtype, T.BooleanType):
            return f"CASE WHEN condition {c.sql()} is {c.dtype.simpleString()}, not boolean"
    branches = list(expr.values) + ([expr.else_value] if expr.else_value is not None else [])
    for v in branches:
        if v.dtype != expr.dtype:
            return (f"CASE WHEN branch {v.sql()} of type {v.dtype.simpleString()} needs the analyzer's cast "
                    f"to {expr.dtype.simpleString()}")
    return None


_CHECKS = {
    AttributeRef: _no_check, Literal: _literal_reason, Alias: _no_check, IsNull: _no_check, IsNotNull: _no_check,
    BinaryArithmetic: _arithmetic_reason, Negate: _negate_reason, Comparison: _comparison_reason,
    And: _boolean_operands_reason, Or: _boolean_operands_reason, Not: _boolean_operands_reason,
    In: _in_reason, Cast: _cast_reason, CaseWhen: _case_when_reason, PythonUDF: udf_reason,
}


# ---------------------------------------------------------------- evaluation


@dataclass(frozen=True)
class _Context:
    batch: DeviceBatch
    xp: Any
    device: Any

    @property
    def n(self) -> int:
        return self.batch.num_rows


def evaluate(expr: Expr, batch: DeviceBatch, xp: Any) -> DeviceColumn:
    """`expr` over `batch`, columns found by attribute internal name; QuiverError with the reason when unsupported."""
    reason = unsupported_reason(expr)
    if reason is not None:
        raise QuiverError(f"cannot evaluate {expr.sql()} on a device: {reason}")
    device = array_api_compat.device(batch.columns[0].values) if batch.columns else None
    return _eval(expr, _Context(batch, xp, device))


def _eval(expr: Expr, ctx: _Context) -> DeviceColumn:
    if isinstance(expr, AttributeRef):
        return _as_type(ctx.batch.column(expr.internal_name), expr.dtype.to_arrow(), ctx.xp)
    if isinstance(expr, Literal):
        return _literal(expr, ctx)
    if isinstance(expr, Alias):
        return _eval(expr.child, ctx)
    if isinstance(expr, BinaryArithmetic):
        return _arithmetic(expr, ctx)
    if isinstance(expr, Negate):
        return _negate(expr, ctx)
    if isinstance(expr, Comparison):
        return _compare(expr.op, _eval(expr.left, ctx), _eval(expr.right, ctx), ctx.xp)
    if isinstance(expr, PythonUDF):
        return evaluate_udf(expr, [_eval(a, ctx) for a in expr.args], ctx.xp)
    if isinstance(expr, And):
        return _kleene_and(_eval(expr.left, ctx), _eval(expr.right, ctx), ctx.xp)
    if isinstance(expr, Or):
        return _kleene_or(_eval(expr.left, ctx), _eval(expr.right, ctx), ctx.xp)
    if isinstance(expr, Not):
        child = _eval(expr.child, ctx)
        return DeviceColumn(~child.values, child.valid, pa.bool_())
    if isinstance(expr, (IsNull, IsNotNull)):
        child = _eval(expr.child, ctx)
        valid = _valid_array(child, ctx.xp)
        return DeviceColumn(~valid if isinstance(expr, IsNull) else valid, None, pa.bool_())
    if isinstance(expr, In):
        return _in(expr, ctx)
    if isinstance(expr, Cast):
        return _cast(expr, ctx)
    if isinstance(expr, CaseWhen):
        return _case_when(expr, ctx)
    raise QuiverError(f"cannot evaluate {type(expr).__name__} ({expr.sql()}) on a device")


def _as_type(col: DeviceColumn, t: pa.DataType, xp: Any) -> DeviceColumn:
    """The same values labelled with Arrow type `t` (a dictionary<string> as string, uint32 as int64)."""
    if col.arrow_type == t:
        return col
    dtype = storage_dtype(t, xp)
    values = col.values if col.values.dtype == dtype else xp.astype(col.values, dtype)
    return DeviceColumn(values, col.valid, t, col.dictionary)


def _valid_array(col: DeviceColumn, xp: Any) -> Any:
    if col.valid is not None:
        return col.valid
    return xp.ones((col.length,), dtype=xp.bool, device=array_api_compat.device(col.values))


def _both_valid(a: Any | None, b: Any | None) -> Any | None:
    if a is None:
        return b
    if b is None:
        return a
    return a & b


def _literal(lit: Literal, ctx: _Context) -> DeviceColumn:
    xp, n = ctx.xp, ctx.n
    t = lit.data_type.to_arrow()
    dtype = storage_dtype(t, xp)
    is_string = isinstance(lit.data_type, T.StringType)
    if lit.value is None:
        dictionary = pa.array([], pa.string()) if is_string else None
        return DeviceColumn(xp.zeros((n,), dtype=dtype, device=ctx.device),
                            xp.zeros((n,), dtype=xp.bool, device=ctx.device), t, dictionary)
    if is_string:
        return DeviceColumn(xp.zeros((n,), dtype=dtype, device=ctx.device), None, t, pa.array([lit.value], pa.string()))
    return DeviceColumn(xp.full((n,), storage_scalar(lit.value, t), dtype=dtype, device=ctx.device), None, t)


# ---------------------------------------------------------------- arithmetic


def _arithmetic(expr: BinaryArithmetic, ctx: _Context) -> DeviceColumn:
    xp = ctx.xp
    left, right = _eval(expr.left, ctx), _eval(expr.right, ctx)
    out = expr.dtype
    t = out.to_arrow()
    ok = None
    if isinstance(out, T.DecimalType):
        values, ok = _decimal_arithmetic(expr, left, right, xp)
    else:
        dtype = storage_dtype(t, xp)
        a, b = xp.astype(left.values, dtype, copy=False), xp.astype(right.values, dtype, copy=False)
        if expr.op == "+":
            values = a + b
        elif expr.op == "-":
            values = a - b
        elif expr.op == "*":
            values = a * b
        elif expr.op == "/":
            zero = b == 0  # Spark (non-ANSI): x / 0 is null, not infinity
            values = a / xp.where(zero, xp.ones_like(b), b)
            values, ok = xp.where(zero, xp.zeros_like(values), values), ~zero
        else:
            values, ok = _remainder(a, b, xp)
        if ansi_enabled() and expr.op in ("+", "-", "*") and xp.isdtype(values.dtype, "integral"):
            _fall_back_on_overflow(expr, a, b, values, _both_valid(left.valid, right.valid), xp)
    valid = _both_valid(left.valid, right.valid)
    if ansi_enabled() and ok is not None:
        _fall_back_where_lost(expr, valid, ok, xp)
    return DeviceColumn(values, _both_valid(valid, ok), t)


def _fall_back_where_lost(expr: Expr, valid: Any | None, ok: Any, xp: Any) -> None:
    """Under ANSI mode, a value the kernel turned into null (a zero divisor, a decimal out of range) is an
    error: the CPU, which raises Spark's, runs the task instead."""
    lost = ~ok if valid is None else (valid & ~ok)
    if bool(xp.any(lost)):
        raise DeviceFallback(f"{expr.sql()} meets a value ANSI mode refuses; the CPU raises its error")


def _fall_back_on_overflow(expr: BinaryArithmetic, a: Any, b: Any, r: Any, valid: Any | None, xp: Any) -> None:
    """Under ANSI mode, integer +, -, * that wrapped go to the CPU, which raises ARITHMETIC_OVERFLOW: a sum
    wrapped where its sign differs from both operands' (a difference, from a's and not b's), and a product
    may have where its float64 magnitude comes near the type's bound (checked exactly on the CPU)."""
    if expr.op == "+":
        wrapped = ((a ^ r) & (b ^ r)) < 0
    elif expr.op == "-":
        wrapped = ((a ^ b) & (a ^ r)) < 0
    else:
        bound = float(xp.iinfo(r.dtype).max) * (1 - 2.0**-40)
        wrapped = xp.abs(xp.astype(a, xp.float64) * xp.astype(b, xp.float64)) >= bound
    if valid is not None:
        wrapped = wrapped & valid
    if bool(xp.any(wrapped)):
        raise DeviceFallback(f"{expr.sql()} overflows; under ANSI mode the CPU raises ARITHMETIC_OVERFLOW")


def _negate(expr: Negate, ctx: _Context) -> DeviceColumn:
    """-x; a decimal wider than 18 digits holding -2**63 unscaled has no int64 negation (a long wraps, as in Java)."""
    child = _eval(expr.child, ctx)
    t = expr.dtype
    if isinstance(t, T.DecimalType) and t.precision > DECIMAL_INT64_PRECISION \
            and largest_magnitude(child.values, child.valid, ctx.xp) > INT64_MAX:
        raise DeviceFallback(f"{expr.sql()} negates -2**63 unscaled, whose negation leaves the 64 bits of a device "
                             "decimal")
    if ansi_enabled() and isinstance(t, T.IntegralType):
        smallest = child.values == ctx.xp.iinfo(child.values.dtype).min
        if bool(ctx.xp.any(smallest if child.valid is None else smallest & child.valid)):
            raise DeviceFallback(f"{expr.sql()} overflows; under ANSI mode the CPU raises ARITHMETIC_OVERFLOW")
    return DeviceColumn(-child.values, child.valid, t.to_arrow())


def _remainder(a: Any, b: Any, xp: Any) -> tuple[Any, Any]:
    """Java's `%` (the sign of the dividend), and the mask of slots whose divisor is not zero."""
    zero = b == 0
    safe_b = xp.where(zero, xp.ones_like(b), b)
    if xp.isdtype(a.dtype, "real floating"):
        # fmod(a, b) is remainder(|a|, |b|) with a's sign: exact, where the array API has no fmod
        bad = xp.isnan(a) | xp.isinf(a) | xp.isnan(b)
        safe_a = xp.where(bad, xp.zeros_like(a), a)
        safe_b = xp.where(bad, xp.ones_like(b), safe_b)
        r = xp.copysign(xp.remainder(xp.abs(safe_a), xp.abs(safe_b)), safe_a)
        r = xp.where(bad, xp.full_like(r, math.nan), r)
    else:
        # remainder() takes the divisor's sign; moving a nonzero result by one divisor gives the dividend's
        r = xp.remainder(a, safe_b)
        r = xp.where((r != 0) & ((r < 0) != (a < 0)), r - safe_b, r)
    return xp.where(zero, xp.zeros_like(r), r), ~zero


def _decimal_bound(t: T.DecimalType) -> int:
    """The largest |unscaled value| a device column of decimal type `t` can hold."""
    return 10**t.precision - 1 if t.precision <= DECIMAL_INT64_PRECISION else INT64_MAX + 1


def _decimal_arithmetic(expr: BinaryArithmetic, left: DeviceColumn, right: DeviceColumn, xp: Any) -> tuple[Any, Any]:
    """Decimal +, -, * on unscaled int64 values, exact, then rounded HALF_UP to the result's scale.

    The exact result is bounded by the operands' types when that bound fits int64 (always for a
    result of precision <= 18), else by their largest valid values, from two reductions each; when
    even those may leave int64, DeviceFallback.
    """
    lt, rt, out = expr.left.dtype, expr.right.dtype, expr.dtype
    a, b = left.values, right.values
    valid = _both_valid(left.valid, right.valid)
    if expr.op == "*":
        bound_a, bound_b = _decimal_bound(lt), _decimal_bound(rt)
        if bound_a * bound_b > INT64_MAX:
            bound_a, bound_b = largest_magnitude(a, valid, xp), largest_magnitude(b, valid, xp)
            if bound_a * bound_b > INT64_MAX:
                raise DeviceFallback(f"{expr.sql()} may leave the 64 bits of a device decimal: its operands reach "
                                     f"{bound_a} and {bound_b} unscaled")
        return rescale_decimal(a * b, lt.scale + rt.scale, out, xp, valid)
    scale = max(lt.scale, rt.scale)
    ka, kb = scale - lt.scale, scale - rt.scale
    bound_a, bound_b = _decimal_bound(lt) * 10**ka, _decimal_bound(rt) * 10**kb
    if bound_a + bound_b > INT64_MAX:
        bound_a = largest_magnitude(a, valid, xp) * 10**ka
        bound_b = largest_magnitude(b, valid, xp) * 10**kb
        if bound_a + bound_b > INT64_MAX:
            raise DeviceFallback(f"{expr.sql()} may leave the 64 bits of a device decimal: its operands reach "
                                 f"{bound_a} and {bound_b} unscaled at scale {scale}")
    a, b = _times_power_of_ten(a, ka, xp), _times_power_of_ten(b, kb, xp)
    return rescale_decimal(a + b if expr.op == "+" else a - b, scale, out, xp, valid)


def _times_power_of_ten(values: Any, k: int, xp: Any) -> Any:
    """`values * 10**k` for values known to stay in int64 (so a factor beyond int64 means each is 0)."""
    if k <= 0:
        return values
    factor = 10**k
    return values * factor if factor <= INT64_MAX else xp.zeros_like(values)


def _round_half_up(values: Any, k: int, xp: Any) -> Any:
    """`values / 10**k` rounded half away from zero (Spark's HALF_UP), never leaving int64."""
    factor = 10**k
    half = factor // 2
    if factor > INT64_MAX:
        # |v| <= 2**63 < factor, so the quotient is 0 unless v reaches half the factor
        if half > INT64_MAX:
            return xp.zeros_like(values)
        return xp.astype(values >= half, values.dtype) - xp.astype(values <= -half, values.dtype)
    # floor division and its non-negative remainder are exact where abs(-2**63) would wrap; the tie
    # goes up for a positive value and stays at the floor (away from zero) for a negative one
    quotient = xp.floor_divide(values, factor)
    rest = xp.remainder(values, factor)
    up = (rest > half) | ((rest == half) & (values >= 0))
    return quotient + xp.astype(up, values.dtype)


def rescale_decimal(values: Any, scale: int, to: T.DecimalType, xp: Any, valid: Any | None = None) -> tuple[Any, Any]:
    """Unscaled int64 `values` at `scale` moved to `to`'s scale (HALF_UP when digits are dropped), and
    the mask of values that fit `to`'s precision (Spark makes the others null; None: all fit).

    Every int64 fits a precision of 19 or more. Scaling up checks the largest valid value (`valid`
    None: every slot) times the factor first, and raises DeviceFallback when it could leave int64.
    """
    if scale > to.scale:
        values = _round_half_up(values, scale - to.scale, xp)
    elif scale < to.scale:
        k = to.scale - scale
        # check before multiplying, so a value that cannot fit never wraps around int64
        room = 10 ** max(to.precision - k, 0)
        fits = None if room > INT64_MAX else (values < room) & (values > -room)
        if min(room - 1, INT64_MAX + 1) * 10**k > INT64_MAX:
            largest = largest_magnitude(values, _both_valid(valid, fits), xp)
            if largest * 10**k > INT64_MAX:
                raise DeviceFallback(f"a decimal of {largest} unscaled at scale {scale} cast to {to.simpleString()} "
                                     "leaves the 64 bits of a device decimal")
        if fits is not None:
            values = xp.where(fits, values, xp.zeros_like(values))
        return _times_power_of_ten(values, k, xp), fits
    if to.precision > DECIMAL_INT64_PRECISION:
        return values, None
    limit = 10**to.precision
    fits = (values < limit) & (values > -limit)
    return xp.where(fits, values, xp.zeros_like(values)), fits


# ---------------------------------------------------------------- comparison and logic


def _comparable(left: DeviceColumn, right: DeviceColumn, xp: Any) -> tuple[Any, Any]:
    """Both sides' values in one dtype: a string pair in one dictionary, mixed numbers widened."""
    if left.dictionary is not None:
        left, right = unify_dictionaries([left, right], xp)
        return left.values, right.values
    a, b = left.values, right.values
    if a.dtype != b.dtype:
        wide = xp.float64 if (xp.isdtype(a.dtype, "real floating")
                              or xp.isdtype(b.dtype, "real floating")) else xp.int64
        a, b = xp.astype(a, wide), xp.astype(b, wide)
    if a.dtype == xp.bool:
        a, b = xp.astype(a, xp.int8), xp.astype(b, xp.int8)
    return a, b


def _ordered(op: str, a: Any, b: Any, xp: Any) -> Any:
    """`a op b` elementwise in Spark's order: NaN equals NaN and is greater than every other value."""
    plain = {"=": a == b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
    if not xp.isdtype(a.dtype, "real floating"):
        return plain
    a_nan, b_nan = xp.isnan(a), xp.isnan(b)
    with_nan = {"=": a_nan & b_nan, "<": ~a_nan & b_nan, "<=": b_nan, ">": a_nan & ~b_nan, ">=": a_nan}[op]
    return xp.where(a_nan | b_nan, with_nan, plain)


def _compare(op: str, left: DeviceColumn, right: DeviceColumn, xp: Any) -> DeviceColumn:
    a, b = _comparable(left, right, xp)
    result = _ordered("=" if op == "<=>" else op, a, b, xp)
    if op != "<=>":
        return DeviceColumn(result, _both_valid(left.valid, right.valid), pa.bool_())
    if left.valid is None and right.valid is None:
        return DeviceColumn(result, None, pa.bool_())
    lv, rv = _valid_array(left, xp), _valid_array(right, xp)
    return DeviceColumn((~lv & ~rv) | (lv & rv & result), None, pa.bool_())


def _kleene_and(left: DeviceColumn, right: DeviceColumn, xp: Any) -> DeviceColumn:
    """SQL AND: false wins over null, null over true."""
    if left.valid is None and right.valid is None:
        return DeviceColumn(left.values & right.values, None, pa.bool_())
    lv, rv = _valid_array(left, xp), _valid_array(right, xp)
    known = lv & rv
    valid = known | (lv & ~left.values) | (rv & ~right.values)
    return DeviceColumn(known & left.values & right.values, valid, pa.bool_())


def _kleene_or(left: DeviceColumn, right: DeviceColumn, xp: Any) -> DeviceColumn:
    """SQL OR: true wins over null, null over false."""
    if left.valid is None and right.valid is None:
        return DeviceColumn(left.values | right.values, None, pa.bool_())
    lv, rv = _valid_array(left, xp), _valid_array(right, xp)
    either = (lv & left.values) | (rv & right.values)
    return DeviceColumn(either, (lv & rv) | either, pa.bool_())


def _in(expr: In, ctx: _Context) -> DeviceColumn:
    """`x IN (...)` as the CPU evaluates it: a literal list is a set lookup (NaN finds NaN, -0.0 only
    -0.0, a null in the list makes a miss null); other lists are ORed equalities."""
    xp = ctx.xp
    if not expr.values:
        return DeviceColumn(xp.zeros((ctx.n,), dtype=xp.bool, device=ctx.device), None, pa.bool_())
    child = _eval(expr.child, ctx)
    if not all(isinstance(v, Literal) for v in expr.values):
        result = None
        for v in expr.values:
            eq = _compare("=", child, _eval(v, ctx), xp)
            result = eq if result is None else _kleene_or(result, eq, xp)
        return result
    literals = [v.value for v in expr.values]
    present = [v for v in literals if v is not None]
    if child.dictionary is not None:
        table = pc.is_in(child.dictionary, value_set=pa.array(present, child.dictionary.type))
        found = gather_from_host(table, child.values, xp)
    else:
        found = xp.zeros((ctx.n,), dtype=xp.bool, device=ctx.device)
        for v in present:
            found = found | _same_value(child.values, storage_scalar(v, child.arrow_type), xp)
    valid = child.valid
    if len(present) != len(literals):
        valid = _both_valid(valid, found)
    return DeviceColumn(found, valid, pa.bool_())


def _same_value(x: Any, value: Any, xp: Any) -> Any:
    """Set membership as Arrow's is_in decides it: floats by bit pattern up to NaN payload."""
    if not xp.isdtype(x.dtype, "real floating"):
        return x == value
    if math.isnan(value):
        return xp.isnan(x)
    return (x == value) & (xp.signbit(x) == (math.copysign(1.0, value) < 0))


# ---------------------------------------------------------------- cast and case


def _cast(expr: Cast, ctx: _Context) -> DeviceColumn:
    xp = ctx.xp
    child = _eval(expr.child, ctx)
    src, dst = expr.child.dtype, expr.to
    t = dst.to_arrow()
    if src == dst:
        return _as_type(child, t, xp)
    values, fits = cast_values(child.values, src, dst, xp, child.valid)
    if ansi_enabled():
        if fits is not None:
            _fall_back_where_lost(expr, child.valid, fits, xp)
        if isinstance(dst, T.IntegralType) and not isinstance(src, (T.BooleanType, *_TEMPORAL)):
            _fall_back_outside(expr, child, src, dst, xp)
    return DeviceColumn(values, _both_valid(child.valid, fits), t)


def _fall_back_outside(expr: Cast, child: DeviceColumn, src: T.DataType, dst: T.DataType, xp: Any) -> None:
    """Under ANSI mode a number outside the integral target (or NaN) is CAST_OVERFLOW: the CPU raises it."""
    bits = {T.ByteType: 7, T.ShortType: 15, T.IntegerType: 31, T.LongType: 63}[type(dst)]
    v = child.values
    if isinstance(src, T.DecimalType):
        v = _truncate(v, src.scale, xp)
    if xp.isdtype(v.dtype, "real floating"):
        outside = xp.isnan(v) | (v <= -(2.0**bits) - 1) | (v >= 2.0**bits)
    else:
        outside = (v < -(2**bits)) | (v > 2**bits - 1) if bits < 63 else xp.zeros(v.shape, dtype=xp.bool)
    if child.valid is not None:
        outside = outside & child.valid
    if bool(xp.any(outside)):
        raise DeviceFallback(f"{expr.sql()} overflows; under ANSI mode the CPU raises CAST_OVERFLOW")


def cast_values(v: Any, src: T.DataType, dst: T.DataType, xp: Any, valid: Any | None = None) -> tuple[Any, Any | None]:
    """CAST between numeric, boolean and temporal storage values as Spark (non-ANSI) does it; the mask
    says which results exist (None: all), since out-of-range decimals become null. `valid` marks the
    slots that matter to a decimal's 64-bit check (None: all)."""
    if isinstance(src, _TEMPORAL):
        if isinstance(src, T.DateType) and not isinstance(dst, T.DateType):
            return xp.astype(v, xp.int64) * _MICROS_PER_DAY, None
        if isinstance(dst, T.DateType) and not isinstance(src, T.DateType):
            return xp.astype(xp.floor_divide(v, _MICROS_PER_DAY), xp.int32), None
        return v, None
    if isinstance(src, T.BooleanType):
        v, src = xp.astype(v, xp.int8), T.ByteType()
    if isinstance(dst, T.BooleanType):
        return v != 0, None
    if isinstance(dst, T.DecimalType):
        scale = src.scale if isinstance(src, T.DecimalType) else 0
        return rescale_decimal(xp.astype(v, xp.int64, copy=False), scale, dst, xp, valid)
    dtype = storage_dtype(dst.to_arrow(), xp)
    if isinstance(dst, T.IntegralType):
        if isinstance(src, T.DecimalType):
            # truncation toward zero, then Java's narrowing
            return xp.astype(_truncate(v, src.scale, xp), dtype), None
        if isinstance(src, T.IntegralType):
            return xp.astype(v, dtype), None
        return _float_to_integral(v, dst, xp), None
    if isinstance(src, T.DecimalType):
        # below 2**53 (precision <= 15) both operands are exact doubles and the division rounds correctly
        return xp.astype(xp.astype(v, xp.float64) / 10.0 ** src.scale, dtype), None
    if dtype == xp.float32 and v.dtype == xp.float64:
        v = xp.where(xp.abs(v) >= _FLOAT32_OVERFLOW, xp.copysign(xp.full_like(v, math.inf), v), v)
    return xp.astype(v, dtype), None


def _truncate(values: Any, k: int, xp: Any) -> Any:
    """`values / 10**k` truncated toward zero, never leaving int64 (abs(-2**63) would wrap)."""
    if k <= 0:
        return values
    factor = 10**k
    if factor > INT64_MAX:
        return xp.zeros_like(values)
    inexact = (values < 0) & (xp.remainder(values, factor) != 0)
    return xp.floor_divide(values, factor) + xp.astype(inexact, values.dtype)


def _float_to_integral(v: Any, dst: T.DataType, xp: Any) -> Any:
    """Truncate, NaN to 0, saturate at long (bigint) or int (narrower types), then wrap as Java narrows."""
    x = xp.astype(v, xp.float64)
    x = xp.where(xp.isnan(x), xp.zeros_like(x), xp.trunc(x))
    bits = 63 if isinstance(dst, T.LongType) else 31
    bound = float(2**bits)
    inside = (x < bound) & (x > -bound)
    as_int = xp.astype(xp.where(inside, x, xp.zeros_like(x)), xp.int64)
    as_int = xp.where(x >= bound, 2**bits - 1, xp.where(x <= -bound, -(2**bits), as_int))
    return xp.astype(as_int, storage_dtype(dst.to_arrow(), xp))


def _case_when(expr: CaseWhen, ctx: _Context) -> DeviceColumn:
    """First branch whose condition is true (null counts as false), else the ELSE value or null."""
    xp = ctx.xp
    t = expr.dtype.to_arrow()
    branches = [_eval(v, ctx) for v in expr.values]
    other = _eval(expr.else_value, ctx) if expr.else_value is not None else _literal(Literal(None, expr.dtype), ctx)
    dictionary = None
    if other.dictionary is not None:
        *branches, other = unify_dictionaries(branches + [other], xp)
        dictionary = other.dictionary
    values = other.values
    nullable = other.valid is not None or any(b.valid is not None for b in branches)
    valid = _valid_array(other, xp) if nullable else None
    for condition, branch in zip(reversed(expr.conditions), reversed(branches)):
        cond = _eval(condition, ctx)
        taken = cond.values if cond.valid is None else cond.values & cond.valid
        values = xp.where(taken, branch.values, values)
        if nullable:
            valid = xp.where(taken, _valid_array(branch, xp), valid)
    return DeviceColumn(values, valid, t, dictionary)
