"""Vectorised evaluation of analyzed expressions over Arrow record batches (CPU executor).

Each expression maps to pyarrow.compute kernels over whole columns; a result may be a
`pa.Scalar` when it does not depend on the batch (literals), and is broadcast only where a
column is needed.
"""
from __future__ import annotations

import decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from quiver.engine.core import types as T
from quiver.engine.core.ansi import ansi_enabled, running_try
from quiver.engine.core.errors import (
    QuiverError,
    arithmetic_overflow,
    divide_by_zero,
    numeric_value_out_of_range,
)
from quiver.engine.core.expressions import (
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
from quiver.executors.cpu.cast import cast_array
from quiver.executors.cpu.conjuncts import filter_by_conjuncts
from quiver.executors.cpu.decimal import int64_decimal_arithmetic
from quiver.executors.cpu.fixed_point import fixed_point_comparison, fixed_point_decimal
from quiver.executors.cpu.kernels import KERNELS
from quiver.executors.cpu.python_udf import evaluate_python_udf

Value = pa.Array | pa.ChunkedArray | pa.Scalar

_COMPARE = {"=": pc.equal, "<": pc.less, "<=": pc.less_equal, ">": pc.greater, ">=": pc.greater_equal}


def evaluate(expr: Expr, batch: pa.RecordBatch, memo: dict | None = None) -> Value:
    """Evaluate `expr` over `batch`; columns are found by their attribute's internal name.

    `memo`, shared by several expressions over one batch, computes their common decimal
    subexpressions once.
    """
    if isinstance(expr, AttributeRef):
        idx = batch.schema.get_field_index(expr.internal_name)
        if idx < 0:
            raise QuiverError(
                f"internal: column {expr.internal_name} is not in the batch ({', '.join(batch.schema.names)})"
            )
        return batch.column(idx)
    if isinstance(expr, Literal):
        return literal_scalar(expr)
    if isinstance(expr, Alias):
        return evaluate(expr.child, batch, memo)
    if isinstance(expr, BinaryArithmetic):
        if expr.is_try:
            return _try_arithmetic(expr, evaluate(expr.left, batch), evaluate(expr.right, batch))
        if expr.op in ("+", "-", "*") and isinstance(expr.dtype, T.DecimalType):
            fast = fixed_point_decimal(expr, batch, memo)
            if fast is not None:
                return fast
        return _arithmetic(expr, evaluate(expr.left, batch), evaluate(expr.right, batch))
    if isinstance(expr, Negate):
        value = evaluate(expr.child, batch)
        if ansi_enabled() and pa.types.is_integer(value.type):
            return checked_integer(pc.negate_checked, None, value)
        return pc.negate(value)
    if isinstance(expr, Comparison):
        if isinstance(expr.left.dtype, T.DecimalType) and isinstance(expr.right.dtype, T.DecimalType):
            fast = fixed_point_comparison(expr, batch, memo)
            if fast is not None:
                return fast
        return _compare(expr.op, evaluate(expr.left, batch, memo), evaluate(expr.right, batch, memo))
    if isinstance(expr, And):
        return pc.and_kleene(evaluate(expr.left, batch, memo), evaluate(expr.right, batch, memo))
    if isinstance(expr, Or):
        return pc.or_kleene(evaluate(expr.left, batch, memo), evaluate(expr.right, batch, memo))
    if isinstance(expr, Not):
        return pc.invert(evaluate(expr.child, batch, memo))
    if isinstance(expr, IsNull):
        return pc.is_null(evaluate(expr.child, batch))
    if isinstance(expr, IsNotNull):
        return pc.is_valid(evaluate(expr.child, batch))
    if isinstance(expr, In):
        return _in(expr, batch)
    if isinstance(expr, Cast):
        value = evaluate(expr.child, batch)
        if expr.is_try:
            with running_try():
                return cast_array(value, expr.to, expr.time_zone, expr.child.dtype)
        return cast_array(value, expr.to, expr.time_zone, expr.child.dtype)
    if isinstance(expr, CaseWhen):
        return _case_when(expr, batch)
    if isinstance(expr, ScalarFunction):
        kernel = KERNELS.get(expr.name)
        if kernel is None:
            raise QuiverError(f"function {expr.name} has no CPU kernel")
        return kernel([evaluate(a, batch) for a in expr.args], expr.dtype)
    if isinstance(expr, PythonUDF):
        return evaluate_python_udf(expr, [evaluate_array(a, batch, memo) for a in expr.args], batch.num_rows)
    raise QuiverError(f"cannot evaluate {type(expr).__name__} ({expr.sql()}) on the CPU executor")


def evaluate_array(expr: Expr, batch: pa.RecordBatch, memo: dict | None = None) -> pa.Array:
    """Evaluate and broadcast to a column of the batch's length and the expression's type."""
    value = evaluate(expr, batch, memo)
    return as_array(value, batch.num_rows, expr.dtype.to_arrow())


def as_array(value: Value, length: int, arrow_type: pa.DataType | None = None) -> pa.Array:
    if isinstance(value, pa.Scalar):
        if arrow_type is not None and value.type != arrow_type:
            value = value.cast(arrow_type) if value.is_valid else pa.scalar(None, arrow_type)
        if not value.is_valid:
            return pa.nulls(length, value.type)
        return pa.repeat(value, length)
    if isinstance(value, pa.ChunkedArray):
        value = value.combine_chunks()
    if arrow_type is not None and value.type != arrow_type:
        value = value.cast(arrow_type)
    return value


def literal_scalar(lit: Literal) -> pa.Scalar:
    return pa.scalar(lit.value, type=lit.data_type.to_arrow())


def filter_batch(batch: pa.RecordBatch, condition: Expr) -> pa.RecordBatch:
    """Rows where `condition` is true (null counts as false, as in SQL), conjunct by conjunct."""
    return filter_by_conjuncts(batch, condition, evaluate)


def _compare(op: str, left: Value, right: Value) -> Value:
    if op == "<=>":
        both_null = pc.and_(pc.is_null(left), pc.is_null(right))
        eq = pc.fill_null(_compare("=", left, right), False)
        return pc.or_(both_null, eq)
    if pa.types.is_floating(left.type) or pa.types.is_floating(right.type):
        return _compare_floats(op, left, right)
    return _COMPARE[op](left, right)


def _compare_floats(op: str, left: Value, right: Value) -> Value:
    """Spark's order of doubles: NaN equals NaN and is greater than every other value, +Infinity included."""
    left_nan, right_nan = pc.is_nan(left), pc.is_nan(right)
    if op == "=":
        with_nan = pc.and_(left_nan, right_nan)
    elif op == "<":
        with_nan = pc.and_(pc.invert(left_nan), right_nan)
    elif op == "<=":
        with_nan = right_nan
    elif op == ">":
        with_nan = pc.and_(left_nan, pc.invert(right_nan))
    else:
        with_nan = left_nan
    return pc.if_else(pc.or_(left_nan, right_nan), with_nan, _COMPARE[op](left, right))


def _arithmetic(expr: BinaryArithmetic, left: Value, right: Value) -> Value:
    op = expr.op
    out_type = expr.dtype
    if op != "/" and pa.types.is_decimal(left.type) != pa.types.is_decimal(right.type):
        # an integer beside a decimal counts with its own digits, so the exact result's precision is known
        left, right = (_integer_as_decimal(v) for v in (left, right))
    if op != "/" and pa.types.is_decimal(left.type) and pa.types.is_decimal(right.type) \
            and _exact_decimal_precision(op, left.type, right.type) > 38:
        # The exact result may need more than 38 digits: in int64 when the values allow (they nearly
        # always do), else in 256 bits; then rounded to Spark's type.
        if isinstance(out_type, T.DecimalType) and not (isinstance(left, pa.Scalar) and isinstance(right, pa.Scalar)):
            fast = int64_decimal_arithmetic(op, left, right, out_type.to_arrow())
            if fast is not None:
                return fast
        left, right = (_as_decimal256(v) for v in (left, right))
        if _exact_decimal_precision(op, left.type, right.type) > 76 and isinstance(out_type, T.DecimalType):
            # beyond even decimal256 (two 38-digit operands multiplied): exact in Python decimals
            return _python_decimal_arithmetic(op, left, right, out_type.to_arrow())
    if op in _CHECKED and ansi_enabled() and pa.types.is_integer(left.type) and pa.types.is_integer(right.type):
        checked, try_function = _CHECKED[op]
        result = checked_integer(checked, try_function, left, right)
    elif op == "+":
        result = pc.add(left, right)
    elif op == "-":
        result = pc.subtract(left, right)
    elif op == "*":
        result = pc.multiply(left, right)
    elif op == "/":
        divide = _decimal_divide if pa.types.is_decimal(left.type) else pc.divide
        result = _null_if_zero_divisor(divide, left, right)
    else:
        result = _remainder(left, right)
    arrow_type = out_type.to_arrow()
    if result.type != arrow_type:
        if pa.types.is_decimal(arrow_type) and (pa.types.is_floating(result.type) or (
                pa.types.is_decimal(result.type) and result.type.scale > arrow_type.scale)):
            result = pc.round(result, arrow_type.scale, round_mode="half_towards_infinity")
        if pa.types.is_decimal(arrow_type) and pa.types.is_decimal(result.type):
            result = _null_if_beyond_precision(result, arrow_type)
        result = result.cast(arrow_type, safe=False)
    return result


# Integer +, -, * under ANSI mode: Arrow's checked kernel, and the try_* function that gives NULL instead.
_CHECKED = {"+": (pc.add_checked, "try_add"), "-": (pc.subtract_checked, "try_subtract"),
            "*": (pc.multiply_checked, "try_multiply")}


def checked_integer(kernel, try_function: str | None, *args: Value) -> Value:
    """`kernel(*args)` (one of Arrow's *_checked kernels) raising Spark's ARITHMETIC_OVERFLOW where it overflows."""
    try:
        return kernel(*args)
    except pa.ArrowInvalid as exc:
        if "overflow" in str(exc).lower():
            raise arithmetic_overflow(try_function) from None
        raise


def _integer_as_decimal(value: Value) -> Value:
    """An integer operand as a decimal of scale 0 (a literal with just its digits); anything else as it is."""
    if not pa.types.is_integer(value.type):
        return value
    if isinstance(value, pa.Scalar):
        if not value.is_valid:
            return pa.scalar(None, pa.decimal128(1, 0))
        number = value.as_py()
        return pa.scalar(decimal.Decimal(number), pa.decimal128(len(str(abs(number))), 0))
    return value.cast(pa.decimal128(len(str(np.iinfo(value.type.to_pandas_dtype()).max)), 0))


def _try_arithmetic(expr: BinaryArithmetic, left: Value, right: Value) -> Value:
    """try_add, try_subtract, try_multiply, try_divide, try_mod: NULL for a zero divisor or a result beyond its
    type, in either mode. Integers are computed exactly (in decimal256) and kept where they fit."""
    out = expr.dtype.to_arrow()
    if expr.op in _CHECKED and pa.types.is_integer(left.type) and pa.types.is_integer(right.type):
        wide = [v.cast(pa.decimal256(20, 0)) for v in (left, right)]
        exact = {"+": pc.add, "-": pc.subtract, "*": pc.multiply}[expr.op](*wide)
        info = np.iinfo(out.to_pandas_dtype())
        inside = pc.and_(pc.greater_equal(exact, pa.scalar(decimal.Decimal(int(info.min)), exact.type)),
                         pc.less_equal(exact, pa.scalar(decimal.Decimal(int(info.max)), exact.type)))
        return pc.if_else(inside, exact, pa.scalar(None, exact.type)).cast(out)
    with running_try():
        return _arithmetic(expr, left, right)


def _as_decimal256(value: Value) -> Value:
    """A decimal as decimal256 with only the digits its values use (at least its scale + 1), so an
    exact product of wide types whose values are small stays within decimal256's 76 digits."""
    t = value.type
    if isinstance(value, pa.Scalar):
        largest = abs(value.as_py()) if value.is_valid else None
    else:
        largest = pc.max(pc.abs(value)).as_py()
    digits = len(str(int(largest.scaleb(t.scale)))) if largest is not None else 1
    return value.cast(pa.decimal256(min(max(digits, t.scale + 1, 1), 76), t.scale))


def _python_decimal_arithmetic(op: str, left: Value, right: Value, out: pa.Decimal128Type) -> pa.Array:
    """`left op right` per row in Python decimals (op one of +, -, *), rounded HALF_UP to `out`'s scale;
    null where an operand is null or the result needs more digits than `out` has (Spark's non-ANSI null)."""
    n = len(left) if not isinstance(left, pa.Scalar) else len(right)
    lv = [left.as_py()] * n if isinstance(left, pa.Scalar) else left.to_pylist()
    rv = [right.as_py()] * n if isinstance(right, pa.Scalar) else right.to_pylist()
    quantum = decimal.Decimal(1).scaleb(-out.scale)
    limit = decimal.Decimal(10) ** (out.precision - out.scale)
    results = []
    with decimal.localcontext() as context:
        context.prec = 160
        for a, b in zip(lv, rv):
            if a is None or b is None:
                results.append(None)
                continue
            exact = a * b if op == "*" else a + b if op == "+" else a - b
            value = exact.quantize(quantum, rounding=decimal.ROUND_HALF_UP)
            if abs(value) >= limit and ansi_enabled():
                raise numeric_value_out_of_range(value, out.precision, out.scale)
            results.append(value if abs(value) < limit else None)
    return pa.array(results, type=out)


def _null_if_beyond_precision(result: Value, target: pa.Decimal128Type) -> Value:
    """Spark (non-ANSI) turns a decimal result too large for its type into null rather than wrapping."""
    wide = pa.decimal256(76, result.type.scale)
    bound = pa.scalar(decimal.Decimal(10) ** (target.precision - target.scale), wide)
    too_large = pc.greater_equal(pc.abs(result).cast(wide), bound)
    if isinstance(too_large, pa.Scalar):
        if too_large.as_py():
            if ansi_enabled():
                raise numeric_value_out_of_range(result.as_py(), target.precision, target.scale)
            return pa.scalar(None, result.type)
        return result
    if not pc.any(too_large).as_py():
        return result
    if ansi_enabled():
        first = result.filter(too_large)[0].as_py()
        raise numeric_value_out_of_range(first, target.precision, target.scale)
    return pc.if_else(too_large, pa.scalar(None, result.type), result)


def _exact_decimal_precision(op: str, a: pa.Decimal128Type, b: pa.Decimal128Type) -> int:
    """The digits Arrow's exact decimal +, -, * or % result takes (before Spark bounds it to 38)."""
    if op == "*":
        return a.precision + b.precision + 1
    scale = max(a.scale, b.scale)
    return max(a.precision - a.scale, b.precision - b.scale) + scale + 1


def _null_if_zero_divisor(fn, left: Value, right: Value, remainder: bool = False) -> Value:
    """Spark (non-ANSI) returns null for x / 0 and x % 0 instead of raising or infinity; under ANSI, a zero
    divisor of a non-null dividend raises DIVIDE_BY_ZERO (or REMAINDER_BY_ZERO)."""
    zero = pc.equal(right, _typed_number(0, right.type))
    if ansi_enabled() and pc.any(pc.and_kleene(zero, pc.is_valid(left))).as_py():
        raise divide_by_zero(remainder)
    if isinstance(zero, pa.Scalar):
        if zero.as_py():
            length = len(left) if not isinstance(left, pa.Scalar) else None
            out_type = fn(pa.array([1], left.type), pa.array([1], right.type)).type
            return pa.nulls(length, out_type) if length is not None else pa.scalar(None, out_type)
        return fn(left, right)
    safe_right = pc.if_else(zero, _typed_number(1, right.type), right)
    result = fn(left, safe_right)
    return pc.if_else(zero, pa.scalar(None, result.type), result)


def _typed_number(value: int, t: pa.DataType) -> pa.Scalar:
    """`value` as a scalar of type `t`; for a decimal, the nearest non-zero value it can hold when 1 does not fit."""
    if pa.types.is_decimal(t):
        unit = decimal.Decimal(value).scaleb(-t.scale) if value else decimal.Decimal(0)
        return pa.scalar(unit, type=t)
    return pa.scalar(value, type=t)


def _decimal_divide(left: Value, right: Value) -> Value:
    """Decimal division through float64, rounded to the result scale by the caller's cast.

    Exact to about 15 significant digits, which Spark's decimal(38, s) results rarely exceed in practice.
    """
    return pc.divide(pc.cast(left, pa.float64()), pc.cast(right, pa.float64()))


def _remainder(left: Value, right: Value) -> Value:
    """Remainder with the sign of the dividend (Java's %), null for a zero divisor."""
    t = left.type
    if pa.types.is_floating(t):
        def fmod(a: Value, b: Value) -> Value:
            n = len(a) if not isinstance(a, pa.Scalar) else len(b)
            an, bn = as_array(a, n), as_array(b, n)
            with np.errstate(invalid="ignore"):  # fmod(inf, y) is NaN, as Java's %: not worth a warning
                res = np.fmod(an.to_numpy(zero_copy_only=False), bn.to_numpy(zero_copy_only=False))
            return _mask_like(pa.array(res, type=t), an, bn)

        if isinstance(left, pa.Scalar) and isinstance(right, pa.Scalar):
            if ansi_enabled() and left.is_valid and right.is_valid and right.as_py() == 0:
                raise divide_by_zero(remainder=True)
            return pa.scalar(None if not (left.is_valid and right.is_valid) or right.as_py() == 0
                             else float(np.fmod(left.as_py(), right.as_py())), t)
        return _null_if_zero_divisor(fmod, left, right, remainder=True)

    def int_mod(a: Value, b: Value) -> Value:
        return pc.subtract(a, pc.multiply(pc.divide(a, b), b))

    return _null_if_zero_divisor(int_mod, left, right, remainder=True)


def _mask_like(values: pa.Array, *inputs: pa.Array) -> pa.Array:
    valid = None
    for arr in inputs:
        v = pc.is_valid(arr)
        valid = v if valid is None else pc.and_(valid, v)
    return pc.if_else(valid, values, pa.scalar(None, values.type))


def _in(expr: In, batch: pa.RecordBatch) -> Value:
    if not expr.values:
        return pa.scalar(False)  # Spark: `x IN ()` is false, even where x is null
    child = evaluate(expr.child, batch)
    if not expr.values:
        return pa.scalar(False)  # `x IN ()` is false, even for a null x
    if all(isinstance(v, Literal) for v in expr.values):
        values = [v.value for v in expr.values]
        non_null = [v for v in values if v is not None]
        has_null = len(non_null) != len(values)
        value_set = pa.array(non_null, type=expr.child.dtype.to_arrow())
        found = pc.is_in(child, value_set=value_set, skip_nulls=True)
        found = pc.if_else(pc.is_null(child), pa.scalar(None, pa.bool_()), found)
        if has_null:
            found = pc.if_else(found, True, pa.scalar(None, pa.bool_()))
        return found
    result: Value | None = None
    for v in expr.values:
        eq = _compare("=", child, evaluate(v, batch))
        result = eq if result is None else pc.or_kleene(result, eq)
    return result


def _case_when(expr: CaseWhen, batch: pa.RecordBatch) -> Value:
    n = batch.num_rows
    out_type = expr.dtype.to_arrow()
    conds = [as_array(evaluate(c, batch), n, pa.bool_()) for c in expr.conditions]
    values = [as_array(evaluate(v, batch), n, out_type) for v in expr.values]
    other = (as_array(evaluate(expr.else_value, batch), n, out_type) if expr.else_value is not None
             else pa.nulls(n, out_type))
    if n == 0:
        return pa.array([], out_type)
    names = [f"c{i}" for i in range(len(conds))]
    return pc.case_when(pa.StructArray.from_arrays(conds, names=names), *values, other)

