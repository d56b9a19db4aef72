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
    # numpy's stable sort is a radix sort for integers of 16 bits or less: ten times faster than on int64.
    narrow = np.uint8 if num_partitions <= 1 << 8 else np.uint16 if num_partitions <= 1 << 16 else np.int64
    order = np.argsort(ids.astype(narrow, copy=False), kind="stable")
    reordered = batch.take(pa.array(order))
    out: list[pa.RecordBatch | None] = []
    start = 0
    for c in counts:
        out.append(reordered.slice(start, int(c)) if c else None)
        start += int(c)
    return out
