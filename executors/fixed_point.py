"""Decimal expressions of +, - and * evaluated as a whole in 64-bit fixed point, each subexpression once.

`sum(l_extendedprice * (1 - l_discount) * (1 + l_tax))` evaluated node by node builds a decimal128
array per operator, and Arrow multiplies decimal128 (or decimal256, past 38 digits) far slower than
integers. Here the tree runs on int64 unscaled values with a bound on their magnitude carried along:
each node is rounded to its Spark result scale exactly as the node-by-node path rounds it, and only
the root becomes a decimal128 array. Where a bound may leave int64, or a value exceeds its type's
precision (Spark makes that null), this returns None and the caller takes the exact path.
A `memo` shared by the expressions of one batch computes a common subexpression once (TPC-H Q1's
discounted price appears in two aggregates).
"""
from __future__ import annotations

import decimal
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from quiver.engine import types as T
from quiver.engine.expressions import Alias, AttributeRef, BinaryArithmetic, Cast, Expr, Literal
from quiver.executors.decimal_kernels import (
    _INT64_LIMIT,
    _as_decimal128,
    _largest_magnitude,
    _round_down_scale,
    _unscaled,
)


@dataclass(frozen=True)
class FixedPoint:
    """Unscaled integers (an array, or one int for a constant) at `scale`, |each| <= `bound`;
    `valid` is None when every slot is valid."""

    values: np.ndarray | int
    scale: int
    bound: int
    valid: np.ndarray | None


def fixed_point_decimal(expr: Expr, batch: pa.RecordBatch, memo: dict | None = None) -> pa.Array | None:
    """`expr` (a decimal +, -, * tree over columns and constants) as a decimal128 array, or None.

    A single operator whose exact result fits 38 digits is left to Arrow (as fast, one kernel); a
    tree of them, or one that would need decimal256, is what this saves time on.
    """
    if not (isinstance(expr, BinaryArithmetic) and isinstance(expr.dtype, T.DecimalType)):
        return None
    if _arithmetic_nodes(expr) < 2 and not _needs_more_than_38_digits(expr):
        return None
    memo = {} if memo is None else memo
    value = _evaluate(expr, batch, memo)
    if value is None or not isinstance(value.values, np.ndarray):
        return None
    out = expr.dtype.to_arrow()
    values = np.ascontiguousarray(np.broadcast_to(value.values, (batch.num_rows,)), dtype=np.int64)
    if value.valid is None:
        return _as_decimal128(values, None, 0, out)
    bitmap = pa.array(value.valid).buffers()[1]
    return _as_decimal128(values, bitmap, int(len(value.valid) - value.valid.sum()), out)


def _arithmetic_nodes(expr: Expr) -> int:
    if isinstance(expr, BinaryArithmetic):
        return 1 + _arithmetic_nodes(expr.left) + _arithmetic_nodes(expr.right)
    if isinstance(expr, (Alias, Cast)):
        return _arithmetic_nodes(expr.child)
    return 0


def _needs_more_than_38_digits(expr: BinaryArithmetic) -> bool:
    left, right = expr.left.dtype, expr.right.dtype
    if not (isinstance(left, T.DecimalType) and isinstance(right, T.DecimalType)):
        return False
    if expr.op == "*":
        return left.precision + right.precision + 1 > 38
    scale = max(left.scale, right.scale)
    return max(left.precision - left.scale, right.precision - right.scale) + scale + 1 > 38


def _evaluate(expr: Expr, batch: pa.RecordBatch, memo: dict) -> FixedPoint | None:
    if expr in memo:
        return memo[expr]
    value = _compute(expr, batch, memo)
    memo[expr] = value
    return value


def _compute(expr: Expr, batch: pa.RecordBatch, memo: dict) -> FixedPoint | None:
    if isinstance(expr, Alias):
        return _evaluate(expr.child, batch, memo)
    if isinstance(expr, AttributeRef):
        return _column(expr, batch)
    if isinstance(expr, Literal):
        return _constant(expr)
    if isinstance(expr, Cast) and isinstance(expr.to, T.DecimalType):
        child = _evaluate(expr.child, batch, memo)
        return None if child is None else _conform(child, expr.to)
    if isinstance(expr, BinaryArithmetic) and expr.op in ("+", "-", "*") and isinstance(expr.dtype, T.DecimalType):
        left, right = _evaluate(expr.left, batch, memo), _evaluate(expr.right, batch, memo)
        if left is None or right is None:
            return None
        exact = _multiply(left, right) if expr.op == "*" else _add(left, right, expr.op)
        return None if exact is None else _conform(exact, expr.dtype)
    return None


def _column(expr: AttributeRef, batch: pa.RecordBatch) -> FixedPoint | None:
    index = batch.schema.get_field_index(expr.internal_name)
    if index < 0:
        return None
    column = batch.column(index)
    if not pa.types.is_decimal128(column.type):
        return None
    unscaled = _unscaled(column)
    if unscaled is None:
        return None
    values, largest = unscaled
    valid = np.asarray(column.is_valid()) if column.null_count else None
    return FixedPoint(values, column.type.scale, largest, valid)


def _constant(expr: Literal) -> FixedPoint | None:
    if expr.value is None:
        return None
    if isinstance(expr.data_type, T.DecimalType):
        unscaled = int(decimal.Decimal(expr.value).scaleb(expr.data_type.scale))
        scale = expr.data_type.scale
    elif isinstance(expr.data_type, T.IntegralType) and isinstance(expr.value, int):
        unscaled, scale = expr.value, 0
    else:
        return None
    return FixedPoint(unscaled, scale, abs(unscaled), None) if abs(unscaled) <= _INT64_LIMIT else None


def _rescaled(value: FixedPoint, scale: int) -> FixedPoint | None:
    """`value` at a scale at least its own: multiplied by a power of ten when that fits."""
    factor = 10 ** (scale - value.scale)
    if value.bound * factor > _INT64_LIMIT:
        return None
    return FixedPoint(value.values * factor, scale, value.bound * factor, value.valid)


def _add(left: FixedPoint, right: FixedPoint, op: str) -> FixedPoint | None:
    scale = max(left.scale, right.scale)
    a, b = _rescaled(left, scale), _rescaled(right, scale)
    if a is None or b is None or a.bound + b.bound > _INT64_LIMIT:
        return None
    values = np.add(a.values, b.values) if op == "+" else np.subtract(a.values, b.values)
    return FixedPoint(values, scale, a.bound + b.bound, _both_valid(left.valid, right.valid))


def _multiply(left: FixedPoint, right: FixedPoint) -> FixedPoint | None:
    if left.bound * right.bound > _INT64_LIMIT:
        return None
    values = np.multiply(left.values, right.values)
    return FixedPoint(values, left.scale + right.scale, left.bound * right.bound, _both_valid(left.valid, right.valid))


def _conform(value: FixedPoint, to: T.DecimalType) -> FixedPoint | None:
    """`value` at `to`'s scale (rounding half away from zero, as Spark's HALF_UP), or None when some
    value has more digits than `to.precision` allows (Spark's null, left to the exact path)."""
    if value.scale > to.scale:
        digits = value.scale - to.scale
        values = value.values
        if isinstance(values, np.ndarray):
            rounded = _round_down_scale(values, digits)
        else:
            half = 10**digits // 2
            rounded = (abs(values) + half) // 10**digits * (1 if values >= 0 else -1)
        value = FixedPoint(rounded, to.scale, value.bound // 10**digits + 1, value.valid)
    elif value.scale < to.scale:
        value = _rescaled(value, to.scale)
        if value is None:
            return None
    limit = 10**to.precision
    if value.bound >= limit:
        largest = _largest_magnitude(value.values) if isinstance(value.values, np.ndarray) else abs(value.values)
        if largest >= limit:
            return None
        value = FixedPoint(value.values, value.scale, largest, value.valid)
    return value


def _both_valid(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
    if a is None:
        return b
    if b is None:
        return a
    return a & b
