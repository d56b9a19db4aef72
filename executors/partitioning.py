"""Cutting a batch into per-partition pieces for an exchange: ids computed once, one take, slices."""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from quiver.executors.hashing import hash_columns


def hash_partition_ids(keys: list[pa.Array], num_partitions: int) -> np.ndarray:
    """Partition id per row from the hash of its key columns."""
    return (hash_columns(keys) % np.uint64(num_partitions)).astype(np.int64)


def split_by_ids(batch: pa.RecordBatch, ids: np.ndarray, num_partitions: int) -> list[pa.RecordBatch | None]:
    """One batch per partition (None where empty): a single stable reorder, then zero-copy slices."""
    if num_partitions == 1:
        return [batch]
    counts = np.bincount(ids, minlength=num_partitions)
    order = np.argsort(ids, kind="stable")
    reordered = batch.take(pa.array(order))
    out: list[pa.RecordBatch | None] = []
    start = 0
    for c in counts:
        out.append(reordered.slice(start, int(c)) if c else None)
        start += int(c)
    return out
