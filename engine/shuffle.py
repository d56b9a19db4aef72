"""Shuffle: map tasks cut their output into blocks per reduce partition; reducers read them by reference.

Hash exchanges partition as they write. A range exchange cannot know its bounds until
every map task has run, so map tasks write whole blocks and `finish_range_exchange`
samples them, picks bounds, and cuts each block once.
"""
from __future__ import annotations

from typing import Iterable, Iterator

import numpy as np
import pyarrow as pa

from quiver.engine.store import BlockId, BlockStore
from quiver.executors.evaluate import evaluate_array
from quiver.executors.partitioning import hash_partition_ids, split_by_ids
from quiver.executors.sort import choose_range_bounds, range_partition_ids
from quiver.planners.physical import (
    BroadcastPartitioning, HashPartitioning, RangePartitioning, RoundRobinPartitioning, SinglePartition,
)

WRITE_CHUNK_ROWS = 1 << 16
RANGE_SAMPLE_PER_PARTITION = 200


def write_shuffle(
    store: BlockStore, namespace: str, stage_id: int, map_partition: int,
    partitioning, batches: Iterable[pa.RecordBatch],
) -> dict:
    """Partition one map task's output into blocks; returns rows and bytes written."""
    if isinstance(partitioning, (HashPartitioning, RoundRobinPartitioning)):
        n = partitioning.num_partitions
        pieces: list[list[pa.RecordBatch]] = [[] for _ in range(n)]
        rows = nbytes = 0
        for batch in _coalesce(batches):
            if isinstance(partitioning, HashPartitioning):
                ids = hash_partition_ids([evaluate_array(k, batch) for k in partitioning.keys], n)
            else:
                # Round robin continues where the previous batch stopped, starting at the map index.
                ids = (np.arange(rows, rows + batch.num_rows) + map_partition) % n
            for r, piece in enumerate(split_by_ids(batch, ids, n)):
                if piece is not None:
                    pieces[r].append(piece)
            rows += batch.num_rows
            nbytes += batch.nbytes
        for r in range(n):
            store.put(BlockId(namespace, stage_id, map_partition, r), pieces[r])
        return {"rows": rows, "bytes": nbytes}
    if isinstance(partitioning, (SinglePartition, BroadcastPartitioning, RangePartitioning)):
        out = [b for b in batches if b.num_rows]
        store.put(BlockId(namespace, stage_id, map_partition, -1 if isinstance(partitioning, RangePartitioning) else 0), out)
        return {"rows": sum(b.num_rows for b in out), "bytes": sum(b.nbytes for b in out)}
    raise TypeError(f"unknown partitioning {partitioning!r}")


def _coalesce(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Group small batches so partition ids are computed over reasonably large chunks."""
    pending: list[pa.RecordBatch] = []
    rows = 0
    for b in batches:
        if b.num_rows == 0:
            continue
        pending.append(b)
        rows += b.num_rows
        if rows >= WRITE_CHUNK_ROWS:
            yield _concat(pending)
            pending, rows = [], 0
    if pending:
        yield _concat(pending)


def _concat(batches: list[pa.RecordBatch]) -> pa.RecordBatch:
    if len(batches) == 1:
        return batches[0]
    return pa.Table.from_batches(batches).combine_chunks().to_batches()[0]


def finish_range_exchange(
    store: BlockStore, namespace: str, stage_id: int, map_partitions: int, partitioning: RangePartitioning,
) -> None:
    """Pick range bounds from a sample of every map output, then cut each map output by them."""
    orders = partitioning.orders
    n = partitioning.num_partitions
    raw = [store.get(BlockId(namespace, stage_id, m, -1)) for m in range(map_partitions)]
    sample_cols: list[list[pa.Array]] = [[] for _ in orders]
    total = sum(b.num_rows for blocks in raw for b in blocks)
    step = max(1, total // (RANGE_SAMPLE_PER_PARTITION * n))
    for blocks in raw:
        for b in blocks:
            sampled = b.take(pa.array(range(0, b.num_rows, step))) if step > 1 else b
            for i, o in enumerate(orders):
                sample_cols[i].append(evaluate_array(o.child, sampled))
    if total == 0:
        for m in range(map_partitions):
            for r in range(n):
                store.put(BlockId(namespace, stage_id, m, r), [])
        return
    sample = [pa.concat_arrays(cols) for cols in sample_cols]
    bounds = choose_range_bounds(sample, orders, n)
    for m, blocks in enumerate(raw):
        pieces: list[list[pa.RecordBatch]] = [[] for _ in range(n)]
        for b in blocks:
            keys = [evaluate_array(o.child, b) for o in orders]
            ids = range_partition_ids(keys, bounds, orders)
            for r, piece in enumerate(split_by_ids(b, ids, n)):
                if piece is not None:
                    pieces[r].append(piece)
        for r in range(n):
            store.put(BlockId(namespace, stage_id, m, r), pieces[r])
        store.drop([BlockId(namespace, stage_id, m, -1)])


def read_shuffle(store: BlockStore, namespace: str, stage_id: int, map_partitions: int,
                 reduce_partition: int) -> Iterator[pa.RecordBatch]:
    """Every map task's block for `reduce_partition`, in map order, by reference."""
    for m in range(map_partitions):
        yield from store.get(BlockId(namespace, stage_id, m, reduce_partition))
