"""A filter's conjuncts evaluated one after another, the batch cut down once few of its rows are left.

`a AND b AND c` keeps a row only where every conjunct is true, so a row one conjunct rejects
needs no other evaluated. Evaluating the whole condition over the whole batch costs the same
per row however few rows the first conjuncts keep (TPC-H Q6: its date range keeps a seventh of
lineitem, then four decimal comparisons ran over all of it). Here the conjuncts' masks are
combined while they keep many rows; once they keep few, and a conjunct left costs more per row
than cutting the batch does (it reads decimals or strings, or calls a function: comparing dates
or integers costs less than the cut), the batch is cut to those rows and the conjuncts left see
only them. Spark's generated code evaluates AND the same way (the right
side only where the left is true). Only a deterministic condition is split: a nondeterministic
function's values depend on the rows it is evaluated over.
"""
from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc

from quiver.engine.core import types as T
from quiver.engine.core.expressions import (
    AttributeRef,
    Expr,
    ScalarFunction,
    split_conjuncts,
)

Value = pa.Array | pa.ChunkedArray | pa.Scalar
# Cutting copies the surviving rows of every column once more, which pays when few survive.
NARROW_FRACTION = 0.25


def filter_by_conjuncts(batch: pa.RecordBatch, condition: Expr,
                        evaluate: Callable[[Expr, pa.RecordBatch, dict], Value]) -> pa.RecordBatch:
    """Rows of `batch` where `condition` is true (null counts as false); `evaluate(conjunct, batch, memo)`
    gives a conjunct's boolean values, `memo` shared by the conjuncts evaluated over one batch."""
    parts = split_conjuncts(condition) if condition.deterministic else [condition]
    costly = [_costly(p) for p in parts]
    if not any(costly[1:]):
        # No cut could pay: the condition is evaluated whole, in one pass.
        parts, costly = [condition], [False]
    mask: pa.Array | None = None
    memo: dict = {}
    for i, part in enumerate(parts):
        value = evaluate(part, batch, memo)
        if isinstance(value, pa.Scalar):
            if value.as_py():
                continue
            return batch.slice(0, 0)
        if isinstance(value, pa.ChunkedArray):
            value = value.combine_chunks()
        # Null and false both drop a row, so plain AND (null where either is null) is enough.
        mask = value if mask is None else pc.and_(mask, value)
        if any(costly[i + 1:]) and mask.true_count <= batch.num_rows * NARROW_FRACTION:
            batch = batch.filter(mask, null_selection_behavior="drop")
            mask, memo = None, {}
            if batch.num_rows == 0:
                return batch
    return batch if mask is None else batch.filter(mask, null_selection_behavior="drop")


def _costly(expr: Expr) -> bool:
    """Whether evaluating `expr` costs more per row than cutting a batch: it reads a decimal or
    string column, or calls a function."""
    for node in expr.walk():
        if isinstance(node, ScalarFunction):
            return True
        if isinstance(node, AttributeRef) and isinstance(node.dtype, (T.DecimalType, T.StringType, T.BinaryType)):
            return True
    return False
