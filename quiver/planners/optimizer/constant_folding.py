"""Evaluate expressions whose inputs are all literals once, at planning time.

`lit(1) + lit(2)` -> `3`; `CAST('5' AS INT)` -> `5`; `true AND x` -> `x`; `false AND x` -> `false`.
"""
from __future__ import annotations

import pyarrow as pa

from quiver.engine.core.expressions import (
    AggregateFunction,
    Alias,
    And,
    AttributeRef,
    Expr,
    Literal,
    Or,
    PythonUDF,
    SortOrder,
    transform_expr,
)
from quiver.engine.core.plan import LogicalPlan, transform_up
from quiver.executors.cpu.evaluate import evaluate

_EMPTY = pa.RecordBatch.from_arrays([pa.nulls(1)], names=["_"])


def fold_constants(plan: LogicalPlan) -> LogicalPlan:
    """Replace constant sub-expressions of every node by their value."""
    return transform_up(plan, lambda node: node.map_expressions(fold_expression))


def fold_expression(e: Expr) -> Expr:
    """`e` with its constant sub-expressions folded; a folded result folds to itself, so it is marked
    (`Expr.folded`) and the optimizer's later passes over the same tree skip it."""
    if e.folded:
        return e
    folded = transform_expr(e, _fold)
    folded.memoize("folded", True)
    return folded


def _fold(e: Expr) -> Expr:
    if isinstance(e, And):
        for a, b in ((e.left, e.right), (e.right, e.left)):
            if isinstance(a, Literal) and a.value is True:
                return b
            if isinstance(a, Literal) and a.value is False:
                return Literal(False, a.data_type)
        return e
    if isinstance(e, Or):
        for a, b in ((e.left, e.right), (e.right, e.left)):
            if isinstance(a, Literal) and a.value is False:
                return b
            if isinstance(a, Literal) and a.value is True:
                return Literal(True, a.data_type)
        return e
    if isinstance(e, (Literal, AttributeRef, Alias, SortOrder)) or not e.children():
        return e
    if isinstance(e, PythonUDF):
        return e  # user code runs in tasks only, never at planning time
    if not e.deterministic or not all(isinstance(c, Literal) for c in e.children()):
        return e
    if isinstance(e, AggregateFunction):
        return e
    try:
        value = evaluate(e, _EMPTY)
    except Exception:  # noqa: BLE001 — a constant that fails to evaluate is left for run time, where the error is reported
        return e
    if not isinstance(value, pa.Scalar):
        value = value[0]
    return Literal(value.as_py(), e.dtype)
