"""Predicates over dictionary-encoded string columns, evaluated once per distinct value.

Parquet stores low-cardinality strings (TPC-H's l_shipmode: 7 values over 6M rows) with a
dictionary, and the scan can hand them on still encoded. A subexpression that reads one such
column only, `l_shipmode IN ('AIR', 'AIR REG')` or `p_type LIKE '%BRASS'`, is then evaluated over
the dictionary's few values and its answers gathered by the rows' indices; everything else in the
condition sees decoded columns. The filter keeps the encoding, so only surviving rows are decoded.
"""
from __future__ import annotations

import pyarrow as pa

from quiver.engine.core.expressions import AttributeRef, Expr, new_expr_id, transform_expr_down
from quiver.executors.cpu.conjuncts import filter_by_conjuncts
from quiver.executors.cpu.evaluate import evaluate, evaluate_array


def is_dictionary_encoded(batch: pa.RecordBatch) -> bool:
    return any(pa.types.is_dictionary(t) for t in batch.schema.types)


def decode_dictionaries(batch: pa.RecordBatch) -> pa.RecordBatch:
    """`batch` with every dictionary-encoded column decoded to its value type."""
    if not is_dictionary_encoded(batch):
        return batch
    arrays = [c.dictionary_decode() if pa.types.is_dictionary(c.type) else c for c in batch.columns]
    return pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)


def filter_encoded_batch(batch: pa.RecordBatch, condition: Expr) -> pa.RecordBatch:
    """Rows of `batch` where `condition` is true (null counts as false), encoded columns kept encoded."""
    return filter_by_conjuncts(batch, condition, lambda part, rows, memo: _evaluate_per_value(part, rows))


def _evaluate_per_value(expr: Expr, batch: pa.RecordBatch):
    # Null slots would need the expression's answer for null, which gathering cannot give.
    encoded = {name: column for name, column in zip(batch.schema.names, batch.columns)
               if pa.types.is_dictionary(column.type) and column.null_count == 0}
    names, arrays = list(batch.schema.names), list(batch.columns)

    def per_value(node: Expr) -> Expr:
        # A subquery is not deterministic, so it is never evaluated per value.
        if isinstance(node, AttributeRef) or not node.deterministic:
            return node
        read = {a.internal_name for a in node.walk() if isinstance(a, AttributeRef)}
        if len(read) != 1 or not read <= encoded.keys():
            return node
        column = encoded[next(iter(read))]
        values = pa.RecordBatch.from_arrays([column.dictionary], names=list(read))
        answers = evaluate_array(node, values)
        gathered = AttributeRef(f"per_value_{len(names)}", node.dtype, True, new_expr_id())
        names.append(gathered.internal_name)
        arrays.append(answers.take(column.indices))
        return gathered

    rewritten = transform_expr_down(expr, per_value)
    still_read = {a.internal_name for a in rewritten.walk() if isinstance(a, AttributeRef)}
    arrays = [a.dictionary_decode() if pa.types.is_dictionary(a.type) and n in still_read else a
              for n, a in zip(names, arrays)]
    return evaluate(rewritten, pa.RecordBatch.from_arrays(arrays, names=names))
