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

import numpy as np
import pyarrow as pa

from quiver.engine.core import types as T
from quiver.engine.core.expressions import (
    Alias,
    AttributeRef,
    BinaryArithmetic,
    Cast,
    Comparison,
    Expr,
    Literal,
)
from quiver.executors.cpu.decimal import (
    INT64_LIMIT,
    FixedPoint,
    add,
    both_valid,
    conform,
    decimal_array,
    fixed_point_of,
    multiply,
    rescaled,
)


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
    return decimal_array(value, batch.num_rows, expr.dtype.to_arrow())


def fixed_point_value(expr: Expr, batch: pa.RecordBatch, memo: dict) -> FixedPoint | None:
    """A decimal expression (a column, a cast, or a +, -, * tree) as unscaled integers at its
    type's scale, or None where it cannot be computed in int64; shares `memo` with `fixed_point_decimal`."""
    if not isinstance(expr.dtype, T.DecimalType):
        return None
    value = _evaluate(expr, batch, memo)
    return None if value is None else conform(value, expr.dtype)


_NUMPY_COMPARE = {"=": np.equal, "<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal}


def fixed_point_comparison(expr: Comparison, batch: pa.RecordBatch, memo: dict | None = None) -> pa.Array | None:
    """A comparison of two decimal expressions as a boolean array, compared as int64 unscaled values at a
    common scale; None where a side cannot be taken to int64 (the caller compares decimal128s).

    Arrow compares decimal128 arrays an order of magnitude slower than integers, and a filter such as
    TPC-H Q6's `l_discount between 0.05 and 0.07 and l_quantity < 24` is made of such comparisons."""
    if expr.op not in _NUMPY_COMPARE:
        return None
    memo = {} if memo is None else memo
    left, right = _evaluate(expr.left, batch, memo), _evaluate(expr.right, batch, memo)
    if left is None or right is None or not (isinstance(left.values, np.ndarray)
                                             or isinstance(right.values, np.ndarray)):
        return None
    scale = max(left.scale, right.scale)
    left, right = rescaled(left, scale), rescaled(right, scale)
    if left is None or right is None:
        return None
    result = _NUMPY_COMPARE[expr.op](left.values, right.values)
    valid = both_valid(left.valid, right.valid)
    return pa.array(result, mask=None if valid is None else ~valid)


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
        return None if child is None else conform(child, expr.to)
    if isinstance(expr, BinaryArithmetic) and expr.op in ("+", "-", "*") and isinstance(expr.dtype, T.DecimalType):
        left, right = _evaluate(expr.left, batch, memo), _evaluate(expr.right, batch, memo)
        if left is None or right is None:
            return None
        exact = multiply(left, right) if expr.op == "*" else add(left, right, expr.op)
        return None if exact is None else conform(exact, expr.dtype)
    return None


def _column(expr: AttributeRef, batch: pa.RecordBatch) -> FixedPoint | None:
    index = batch.schema.get_field_index(expr.internal_name)
    if index < 0:
        return None
    column = batch.column(index)
    return fixed_point_of(column) if pa.types.is_decimal128(column.type) else None


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
    return FixedPoint(unscaled, scale, abs(unscaled), None) if abs(unscaled) <= INT64_LIMIT else None


