"""Shuffle: map tasks cut their output into one block per reduce partition; reducers read them by reference.

Hash and round-robin exchanges partition as they write. A range exchange cannot know its
bounds until every map task has run, so its map tasks write one whole block each with a sample of its
sort keys; `range_bounds` picks bounds from the pooled samples, and `cut_by_range` cuts
each whole block once. These are pure functions over
batches, so the same steps run in a thread or in a Ray worker.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import pyarrow as pa

from quiver.executors.blocks import BlockId
from quiver.executors.cpu.evaluate import evaluate_array
from quiver.executors.cpu.partitioning import hash_partition_ids, split_by_ids
from quiver.executors.cpu.sort import choose_range_bounds, range_partition_ids
from quiver.planners.physical.nodes import (
    BroadcastPartitioning,
    HashPartitioning,
    RangePartitioning,
    RoundRobinPartitioning,
    SinglePartition,
)

WRITE_CHUNK_ROWS = 1 << 16
RANGE_SAMPLE_PER_PARTITION = 200
# The reduce partition of the one whole block a range exchange's map task writes before bounds are known.
UNCUT = -1


def output_partitions(partitioning) -> tuple[int, ...]:
    """The reduce partitions a map task writes one block for, in the order `partition_blocks` returns them."""
    if isinstance(partitioning, (HashPartitioning, RoundRobinPartitioning)):
        return tuple(range(partitioning.num_partitions))
    if isinstance(partitioning, RangePartitioning):
        return (UNCUT,)
    if isinstance(partitioning, (SinglePartition, BroadcastPartitioning)):
        return (0,)
    raise TypeError(f"unknown partitioning {partitioning!r}")


def partition_blocks(partitioning, map_partition: int, batches: Iterable[pa.RecordBatch],
                     separate: bool = False) -> tuple[list[list[pa.RecordBatch]], dict]:
    """One map task's output cut into blocks (aligned with `output_partitions`), and the rows and bytes written.

    A range exchange's map task also returns a sample of its sort keys, which `range_bounds` pools.
    """
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
            for r, piece in enumerate(split_by_ids(batch, ids, n, separate)):
                if piece is not None:
                    pieces[r].append(piece)
            rows += batch.num_rows
            nbytes += batch.nbytes
        return pieces, {"rows": rows, "bytes": nbytes, **block_sizes(pieces)}
    output_partitions(partitioning)
    out = [b for b in batches if b.num_rows]
    written = {"rows": sum(b.num_rows for b in out), "bytes": sum(b.nbytes for b in out), **block_sizes([out])}
    if isinstance(partitioning, RangePartitioning):
        step = max(1, written["rows"] // (RANGE_SAMPLE_PER_PARTITION * partitioning.num_partitions))
        written["sample"] = sample_range_keys(out, partitioning, step)
    return [out], written


def block_sizes(blocks: list[list[pa.RecordBatch]]) -> dict[str, list[int]]:
    """The Arrow bytes and rows of each block, in order: what adaptive execution plans the next stage by."""
    return {"block_bytes": [sum(b.nbytes for b in block) for block in blocks],
            "block_rows": [sum(b.num_rows for b in block) for block in blocks]}


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


def sample_range_keys(batches: list[pa.RecordBatch], partitioning: RangePartitioning, step: int) -> list[pa.Array]:
    """The sort keys of every step-th row of one map task's whole block, one array per sort key."""
    keys: list[list[pa.Array]] = [[] for _ in partitioning.orders]
    for b in batches:
        sampled = b.take(pa.array(range(0, b.num_rows, step))) if step > 1 else b
        for i, o in enumerate(partitioning.orders):
            keys[i].append(evaluate_array(o.child, sampled))
    return [pa.concat_arrays(k) if k else pa.array([], pa.null()) for k in keys]


def range_bounds(samples: list[tuple[int, list[pa.Array]]], partitioning: RangePartitioning) -> list[pa.Array]:
    """Bounds from every map task's (rows, key sample): each sample thinned so a task weighs as much as its
    share of the rows, pooled, then `num_partitions - 1` evenly spaced rows picked."""
    total = sum(rows for rows, _ in samples)
    if total == 0:
        return []
    target = RANGE_SAMPLE_PER_PARTITION * partitioning.num_partitions
    pooled: list[list[pa.Array]] = [[] for _ in partitioning.orders]
    for rows, keys in samples:
        if rows == 0:
            continue
        size = len(keys[0])
        keep = max(1, round(target * rows / total))
        stride = max(1, size // keep)
        for i, k in enumerate(keys):
            pooled[i].append(k.take(pa.array(range(0, size, stride))) if stride > 1 else k)
    return choose_range_bounds([pa.concat_arrays(k) for k in pooled], partitioning.orders,
                               partitioning.num_partitions)


def cut_by_range(batches: list[pa.RecordBatch], partitioning: RangePartitioning,
                 bounds: list[pa.Array], separate: bool = False) -> list[list[pa.RecordBatch]]:
    """One map task's whole block cut into one block per reduce partition by the chosen bounds."""
    n = partitioning.num_partitions
    pieces: list[list[pa.RecordBatch]] = [[] for _ in range(n)]
    for b in batches:
        keys = [evaluate_array(o.child, b) for o in partitioning.orders]
        ids = range_partition_ids(keys, bounds, partitioning.orders)
        for r, piece in enumerate(split_by_ids(b, ids, n, separate)):
            if piece is not None:
                pieces[r].append(piece)
    return pieces


def read_shuffle(blocks, namespace: str, stage_id: int,
                 block_keys: Iterable[tuple[int, int]]) -> Iterator[pa.RecordBatch]:
    """The blocks named by (map partition, reduce partition), in that order, by reference."""
    for m, r in block_keys:
        yield from blocks.get(BlockId(namespace, stage_id, m, r))
