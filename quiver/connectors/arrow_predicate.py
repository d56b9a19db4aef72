"""Translate pushed-down filters into a pyarrow.dataset expression, so scans skip row groups.

Only what Arrow can check against Parquet statistics is translated (comparisons of a
column with a literal, IN lists, null tests, AND/OR/NOT of those); anything else is
dropped from the pushed predicate and still filtered by the engine above the scan.
"""
from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from quiver.engine.core.expressions import (
    And,
    AttributeRef,
    Cast,
    Comparison,
    Expr,
    In,
    IsNotNull,
    IsNull,
    Literal,
    Not,
    Or,
)

_OPS = {"=": "__eq__", "<": "__lt__", "<=": "__le__", ">": "__gt__", ">=": "__ge__"}
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "="}


def to_arrow_predicate(filters: tuple[Expr, ...]) -> pc.Expression | None:
    """The conjunction of every translatable filter, or None when none translates."""
    out = None
    for f in filters:
        e = _translate(f)
        if e is not None:
            out = e if out is None else (out & e)
    return out


def _column(e: Expr) -> pc.Expression | None:
    if isinstance(e, AttributeRef):
        return pc.field(e.name)
    return None


def literal_scalar(e: Expr) -> pa.Scalar | None:
    """A non-null literal (or a cast of one) as an Arrow scalar of its type; None for anything else."""
    if isinstance(e, Literal) and e.value is not None:
        return pa.scalar(e.value, type=e.data_type.to_arrow())
    if isinstance(e, Cast) and isinstance(e.child, Literal) and e.child.value is not None:
        try:
            return pa.scalar(e.child.value, type=e.child.data_type.to_arrow()).cast(e.to.to_arrow())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None
    return None


def _translate(e: Expr) -> pc.Expression | None:
    if isinstance(e, And):
        a, b = _translate(e.left), _translate(e.right)
        if a is None:
            return b
        if b is None:
            return a
        return a & b
    if isinstance(e, Or):
        a, b = _translate(e.left), _translate(e.right)
        return None if a is None or b is None else (a | b)
    if isinstance(e, Not):
        inner = _translate(e.child)
        return None if inner is None or not _exact(e.child) else ~inner
    if isinstance(e, Comparison) and e.op in _OPS:
        col, lit, op = _column(e.left), literal_scalar(e.right), e.op
        if col is None:
            col, lit, op = _column(e.right), literal_scalar(e.left), _FLIP[e.op]
        if col is None or lit is None:
            return None
        return getattr(col, _OPS[op])(lit)
    if isinstance(e, In):
        col = _column(e.child)
        values = [literal_scalar(v) for v in e.values]
        if col is None or any(v is None for v in values):
            return None
        return col.isin(pa.array([v.as_py() for v in values], type=e.child.dtype.to_arrow()))
    if isinstance(e, IsNull):
        col = _column(e.child)
        return None if col is None else col.is_null()
    if isinstance(e, IsNotNull):
        col = _column(e.child)
        return None if col is None else col.is_valid()
    return None


def _exact(e: Expr) -> bool:
    """NOT may only wrap a predicate translated completely (a partial one would over-filter)."""
    if isinstance(e, (And, Or)):
        return _exact(e.left) and _exact(e.right) and _translate(e.left) is not None and _translate(e.right) is not None
    return _translate(e) is not None


_EXACT_OPS = {"=": "equal", "<": "less", "<=": "less_equal", ">": "greater", ">=": "greater_equal"}


def exact_arrow_expression(e: Expr) -> pc.Expression | None:
    """`e` as an Arrow expression over internal column names that gives Spark's answer on every row,
    or None when any part might not (floats, whose NaN compares equal in Spark; mixed types; IN,
    whose null handling under NOT differs; functions). Used for residual join conditions that
    Acero's hash join evaluates itself."""
    if isinstance(e, (And, Or)):
        a, b = exact_arrow_expression(e.left), exact_arrow_expression(e.right)
        if a is None or b is None:
            return None
        return pc.and_kleene(a, b) if isinstance(e, And) else pc.or_kleene(a, b)
    if isinstance(e, Not):
        inner = exact_arrow_expression(e.child)
        return None if inner is None else pc.invert(inner)
    if isinstance(e, (IsNull, IsNotNull)):
        operand = _exact_operand(e.child)
        if operand is None:
            return None
        return pc.is_null(operand) if isinstance(e, IsNull) else pc.is_valid(operand)
    if isinstance(e, Comparison) and e.op in _EXACT_OPS:
        left, right = _exact_operand(e.left), _exact_operand(e.right)
        if left is None or right is None or e.left.dtype.to_arrow() != e.right.dtype.to_arrow():
            return None
        return getattr(pc, _EXACT_OPS[e.op])(left, right)
    return None


def _exact_operand(e: Expr) -> pc.Expression | None:
    """A column or a non-null literal whose type compares the same in Arrow as in Spark."""
    arrow_type = e.dtype.to_arrow()
    if pa.types.is_floating(arrow_type) or pa.types.is_nested(arrow_type) or pa.types.is_null(arrow_type):
        return None
    if isinstance(e, AttributeRef):
        return pc.field(e.internal_name)
    if isinstance(e, Literal) and e.value is not None:
        return pc.scalar(pa.scalar(e.value, type=arrow_type))
    return None
