"""Record batches gathered into tables for Acero, so its plans run on the task's own thread.

Acero reads a `RecordBatchReader` source on Arrow's I/O thread pool: every batch of a Python
generator is then produced on another thread, which must take the GIL back from whatever
else runs Python (the other tasks of `local[N]`, their own Acero sources). Each such hand-off
waits up to the interpreter's switch interval, per batch and per nested operator. A plan over
`table_source` inputs runs where it is called, so operators whose output per input row does
not depend on the rest of the input (partial aggregates, joins that keep only probe rows)
feed Acero one table of many batches at a time instead.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator

import pyarrow as pa

# A chunk's rows: enough that a plan's start-up is noise, few enough that a chunk of narrow
# columns stays a few tens of MiB.
CHUNK_ROWS = 1 << 20
# A chunk's bytes, whatever its rows: each running task holds one chunk of its input at a time.
CHUNK_BYTES = 16 << 20


def table_chunks(batches: Iterable[pa.RecordBatch], schema: pa.Schema, min_rows: int = CHUNK_ROWS,
                 max_bytes: int | None = None) -> Iterator[pa.Table]:
    """The batches in order as tables of at least `min_rows` rows, or of `max_bytes` where that comes
    first (the last one may hold fewer); nothing for an input without rows. The batches are referenced,
    not copied."""
    pending: list[pa.RecordBatch] = []
    rows = nbytes = 0
    for batch in batches:
        if not batch.num_rows:
            continue
        pending.append(batch)
        rows += batch.num_rows
        if max_bytes is not None:
            nbytes += batch.nbytes
        if rows >= min_rows or (max_bytes is not None and nbytes >= max_bytes):
            yield pa.Table.from_batches(pending, schema=schema)
            pending, rows, nbytes = [], 0, 0
    if pending:
        yield pa.Table.from_batches(pending, schema=schema)
