"""Cutting a batch into per-partition pieces for an exchange: ids computed once, one take, slices."""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from quiver.executors.cpu.hashing import hash_columns, reseeded


def hash_partition_ids(keys: list[pa.Array], num_partitions: int, seed: int = 0) -> np.ndarray:
    """Partition id per row from the hash of its key columns; a nonzero `seed` gives ids independent of the
    unseeded ones (a spill partitioning inside a partition that an exchange made with the same keys)."""
    hashes = hash_columns(keys)
    if seed:
        hashes = reseeded(hashes, seed)
    return (hashes % np.uint64(num_partitions)).astype(np.int64)


def split_by_ids(batch: pa.RecordBatch, ids: np.ndarray, num_partitions: int,
                 separate: bool = False) -> list[pa.RecordBatch | None]:
    """One batch per partition (None where empty): a single stable reorder, then zero-copy slices.

    `separate` gives each piece buffers of its own (one take per partition, the same bytes copied):
    for blocks that leave the process, since a serialized slice carries its whole parent buffer.
    """
    if num_partitions == 1:
        return [batch]
    counts = np.bincount(ids, minlength=num_partitions)
    # numpy's stable sort is a radix sort for integers of 16 bits or less: ten times faster than on int64.
    narrow = np.uint8 if num_partitions <= 1 << 8 else np.uint16 if num_partitions <= 1 << 16 else np.int64
    order = np.argsort(ids.astype(narrow, copy=False), kind="stable")
    reordered = None if separate else batch.take(pa.array(order))
    out: list[pa.RecordBatch | None] = []
    start = 0
    for c in counts:
        c = int(c)
        if not c:
            out.append(None)
        elif separate:
            out.append(batch.take(pa.array(order[start:start + c])))
        else:
            out.append(reordered.slice(start, c))
        start += c
    return out
