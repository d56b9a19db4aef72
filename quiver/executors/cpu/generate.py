"""The Generate operator on a batch: explode, posexplode and inline, vectorised.

Each input row is repeated once per element of its list (`np.repeat` of row numbers by
the list lengths, then one `take` per column) and the elements are the list's flattened
values, so no Python runs per row. With `outer`, a null or empty list keeps its row once,
with nulls in the generated columns.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from quiver.engine.core.expressions import AttributeRef, Expr
from quiver.executors.cpu.evaluate import evaluate_array


def generate_batch(batch: pa.RecordBatch, generator: Expr, outer: bool,
                   attributes: tuple[AttributeRef, ...]) -> pa.RecordBatch:
    """`batch`'s rows repeated per element of `generator`'s input, with the generated columns appended."""
    lists = evaluate_array(generator.args[0], batch)
    n = batch.num_rows
    if pa.types.is_null(lists.type):
        lengths = np.zeros(n, np.int64)
        starts = lengths
        values = None
    else:
        offsets = lists.offsets.to_numpy()
        lengths = np.where(lists.is_null().to_numpy(zero_copy_only=False), 0, np.diff(offsets)).astype(np.int64)
        starts = (offsets[:-1] - offsets[0]).astype(np.int64)
        values = _values(lists)
    counts = np.maximum(lengths, 1) if outer else lengths
    parents = np.repeat(np.arange(n, dtype=np.int64), counts)
    within = np.arange(len(parents), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    present = within < lengths[parents]
    positions = pa.array(starts[parents] + within, pa.int64(), mask=None if present.all() else ~present)
    repeated = batch.take(pa.array(parents))
    columns = list(repeated.columns) + _generated(generator.name, values, positions, within, present, attributes)
    names = repeated.schema.names + [a.internal_name for a in attributes]
    return pa.RecordBatch.from_arrays(columns, names=names)


def _values(lists: pa.Array) -> pa.Array:
    """The elements a (possibly sliced) list or map array spans, aligned with its rebased offsets."""
    start = lists.offsets[0].as_py()
    count = lists.offsets[-1].as_py() - start
    if pa.types.is_map(lists.type):
        return pa.StructArray.from_arrays([lists.keys.slice(start, count), lists.items.slice(start, count)],
                                          ["key", "value"])
    return lists.values.slice(start, count)


def _generated(function: str, values: pa.Array | None, positions: pa.Array, within: np.ndarray,
               present: np.ndarray, attributes: tuple[AttributeRef, ...]) -> list[pa.Array]:
    types = [a.dtype.to_arrow() for a in attributes]
    if values is None:
        return [pa.nulls(len(positions), t) for t in types]
    taken = pc.take(values, positions)
    out: list[pa.Array] = []
    if function == "posexplode":
        out.append(pa.array(within.astype(np.int32), pa.int32(), mask=None if present.all() else ~present))
    if function == "inline" or pa.types.is_struct(taken.type) and len(types) - len(out) > 1:
        # struct fields (inline, or a map's key and value): a null struct nulls every field
        fields = [taken.field(i) for i in range(taken.type.num_fields)]
        if taken.null_count:
            fields = [pc.if_else(taken.is_null(), pa.scalar(None, f.type), f) for f in fields]
        out.extend(fields)
    else:
        out.append(taken)
    return [c if c.type == t else c.cast(t) for c, t in zip(out, types)]
