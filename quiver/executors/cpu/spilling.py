"""Blocking operators that stay inside the memory budget: what each does when its state does not fit.

Each gathers its input under a `Reservation` of the process's budget (quiver/executors/memory.py). While
the reservation grows, nothing changes: the operator runs in memory as it always did. When it cannot grow,
the operator spills (quiver/executors/spill.py) and finishes in pieces that each fit, with the same answer:

- **Hash aggregation** (final and complete modes, with grouping keys): the input is hash-partitioned by its
  keys into `SPILL_FANOUT` files and each file is aggregated alone (its groups are in no other file), again
  partitioned, with a fresh hash seed, when one is still too big. A partial aggregate needs none of this:
  it already emits states chunk by chunk.
- **Hash join** (grace hash join): both sides are hash-partitioned by their keys with the same seed, and
  each pair of files is joined alone. Every join type is right per pair, since rows whose keys are equal
  (and so could match) land in the same pair and a row with a null key matches in none; a residual
  condition is checked on a pair's matches as before.
- **Sort** (external distribution sort): the input goes to disk with a sample of its sort keys; bounds from
  the sample cut it into ranges, each range file is sorted alone (split again if still too big) and the
  ranges come out in order. A range whose rows all have equal keys is already sorted, so sorting never
  runs out of room.
- **Window**: the input is hash-partitioned by the window's PARTITION BY keys, and each file computed alone.

When one key's rows do not fit (a join's build side, a window partition), or `MAX_SPILL_DEPTH` rounds of
partitioning leave a piece that does not, the operator raises `MemoryBudgetExceeded` naming itself, the
key and the budget. An aggregate never needs to: a piece that will not split has few groups, and streams.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from quiver.engine.core.errors import MemoryBudgetExceeded
from quiver.engine.core.expressions import Expr, SortOrder
from quiver.executors.base import TaskContext
from quiver.executors.cpu.evaluate import evaluate_array
from quiver.executors.cpu.partitioning import hash_partition_ids, split_by_ids
from quiver.executors.cpu.sort import choose_range_bounds, range_partition_ids
from quiver.executors.memory import Reservation
from quiver.executors.spill import SpillFile

# Files one round of partitioning writes, and the rounds allowed before a piece that still does not fit is
# an error: 16 ** 4 pieces.
SPILL_FANOUT = 16
MAX_SPILL_DEPTH = 4
# Sort keys sampled per input batch of an external sort, for choosing its range bounds.
SORT_SAMPLE_PER_BATCH = 256

KeysOf = Callable[[pa.RecordBatch], list[pa.Array]]


# What an operator working in memory allocates per byte of the input it holds, the input included (estimates
# from pyarrow.total_allocated_bytes() while TPC-H SF10 ran): Acero's group-by keeps a hash table and the
# groups' keys and states beside its input; a hash join its build table, the hash table over it and the
# probe's matched indices and gathered output; a sort its input, the permutation and the taken output.
WORKING_SET = {"HashAggregate": 2.0, "HashJoin": 3.0, "Sort": 2.0, "Window": 2.5}


def gather(batches: Iterable[pa.RecordBatch], reservation: Reservation
           ) -> tuple[list[pa.RecordBatch], Iterator[pa.RecordBatch] | None]:
    """The input's batches, reserved as they come with the working memory the operator will need for them
    (`WORKING_SET`); None as the rest when all fit, else the rest of the stream, unread, after the batch the
    reservation could not grow for (which is in the list)."""
    factor = WORKING_SET.get(reservation.name, 1.0)
    held: list[pa.RecordBatch] = []
    stream = iter(batches)
    for batch in stream:
        if batch.num_rows == 0:
            continue
        held.append(batch)
        if not reservation.try_grow(int(batch.nbytes * factor)):
            return held, stream
    return held, None


def partition_to_files(batches: Iterable[pa.RecordBatch], keys_of: KeysOf, seed: int, schema: pa.Schema,
                       ctx: TaskContext, label: str) -> list[SpillFile]:
    """`batches` hash-partitioned by `keys_of` into `SPILL_FANOUT` spill files (`seed` picks the hash)."""
    writers = [ctx.spill.writer(schema, f"{label}-{seed}-{i}") for i in range(SPILL_FANOUT)]
    try:
        for batch in batches:
            if batch.num_rows == 0:
                continue
            batch = conformed(batch, schema)
            ids = hash_partition_ids(keys_of(batch), SPILL_FANOUT, seed)
            for i, piece in enumerate(split_by_ids(batch, ids, SPILL_FANOUT)):
                if piece is not None:
                    writers[i].write(piece)
    finally:
        files = [w.close() for w in writers]
    ctx.record_spill(label, sum(f.nbytes for f in files))
    return files


def conformed(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """`batch` in exactly `schema` (a spill file holds one schema; inputs may differ in nullability)."""
    if batch.schema.equals(schema):
        return batch
    return pa.RecordBatch.from_arrays([c.cast(f.type) if c.type != f.type else c
                                       for c, f in zip(batch.columns, schema)], schema=schema)


def _too_big(operator: str, what: str, keys: list[pa.Array], ctx: TaskContext) -> MemoryBudgetExceeded:
    sample = ", ".join(repr(k[0].as_py()) for k in keys) if keys and len(keys[0]) else "?"
    budget = ctx.memory.budget
    return MemoryBudgetExceeded(
        f"{operator} cannot fit the rows of one {what} ({sample}) into the memory budget of {budget:,} bytes, "
        f"even after splitting its input {MAX_SPILL_DEPTH} times into {SPILL_FANOUT} spill files; raise "
        f"quiver.memory.limit (now {budget:,} bytes) or spread that {what}'s rows over more keys")


# ---------------------------------------------------------------- hash aggregation


def aggregate_within_budget(batches: Iterable[pa.RecordBatch], keys_of: KeysOf,
                            aggregate: Callable[[Iterable[pa.RecordBatch]], Iterator[pa.RecordBatch]],
                            ctx: TaskContext, depth: int = 0) -> Iterator[pa.RecordBatch]:
    """`aggregate(batches)`, in memory while the input fits the budget, else per hash partition of its keys.

    A piece that partitioning cannot make smaller (all its rows in one file: few keys) or that is
    `MAX_SPILL_DEPTH` rounds deep has few groups, so it streams through the aggregate, which holds a
    state per group rather than the rows."""
    with ctx.memory.reservation("HashAggregate") as reservation:
        held, rest = gather(batches, reservation)
        if rest is None:
            yield from aggregate(held)
            return
        if depth >= MAX_SPILL_DEPTH:
            yield from aggregate(itertools.chain(held, rest))
            return
        rows = sum(b.num_rows for b in held)
        files = partition_to_files(itertools.chain(held, rest), keys_of, depth + 1, held[0].schema, ctx,
                                   "HashAggregate")
        del held
    total = sum(f.rows for f in files)
    for f in files:
        if f.rows == total and total >= rows:
            yield from aggregate(f.read())
        elif f.rows:
            yield from aggregate_within_budget(f.read(), keys_of, aggregate, ctx, depth + 1)
        f.delete()


# ---------------------------------------------------------------- hash join


def join_within_budget(build: Iterable[pa.RecordBatch], build_schema: pa.Schema, build_keys_of: KeysOf,
                       probe: Iterable[pa.RecordBatch], probe_schema: pa.Schema, probe_keys_of: KeysOf,
                       join: Callable[[pa.Table, Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]],
                       ctx: TaskContext, depth: int = 0) -> Iterator[pa.RecordBatch]:
    """`join(build table, probe batches)`, in memory while the build side fits the budget, else a grace hash
    join: both sides partitioned by their keys alike, each pair of partitions joined alone."""
    with ctx.memory.reservation("HashJoin") as reservation:
        held, rest = gather(build, reservation)
        if rest is None:
            table = pa.Table.from_batches(held) if held else build_schema.empty_table()
            yield from join(table, iter(probe))
            return
        if depth >= MAX_SPILL_DEPTH:
            raise _too_big("HashJoin", "join key", build_keys_of(held[0]), ctx)
        build_files = partition_to_files(itertools.chain(held, rest), build_keys_of, depth + 1, build_schema, ctx,
                                         "HashJoin-build")
        del held
    _refuse_one_key(build_files, build_keys_of, "HashJoin", "join key", ctx)
    probe_files = partition_to_files(probe, probe_keys_of, depth + 1, probe_schema, ctx, "HashJoin-probe")
    for b, p in zip(build_files, probe_files):
        yield from join_within_budget(b.read(), build_schema, build_keys_of, p.read(), probe_schema, probe_keys_of,
                                      join, ctx, depth + 1)
        b.delete()
        p.delete()


def _refuse_one_key(files: list[SpillFile], keys_of: KeysOf, operator: str, what: str, ctx: TaskContext) -> None:
    """Raise when partitioning put every row into one file and they all have the same keys: no partitioning
    can split one key's rows, which did not fit."""
    total = sum(f.rows for f in files)
    whole = next((f for f in files if f.rows == total and total), None)
    if whole is None:
        return
    first: list[pa.Array] | None = None
    for batch in whole.read():
        keys = keys_of(batch)
        if first is None:
            first = [k.slice(0, 1) for k in keys]
        if not all(_all_equal(k, f) for k, f in zip(keys, first)):
            return
    raise _too_big(operator, what, first or [], ctx)


def keys_as(keys: tuple[Expr, ...], types: list[pa.DataType] | None = None) -> KeysOf:
    """The join or grouping keys of a batch, cast to `types` where given (the other side's key types, so
    equal keys of two sides hash alike)."""
    def keys_of(batch: pa.RecordBatch) -> list[pa.Array]:
        arrays = [evaluate_array(k, batch) for k in keys]
        if types is not None:
            arrays = [a.cast(t) if a.type != t else a for a, t in zip(arrays, types)]
        return arrays
    return keys_of


# ---------------------------------------------------------------- sort


def sort_within_budget(batches: Iterable[pa.RecordBatch], schema: pa.Schema, orders: tuple[SortOrder, ...],
                       sort: Callable[[list[pa.RecordBatch]], Iterator[pa.RecordBatch]], ctx: TaskContext,
                       depth: int = 0) -> Iterator[pa.RecordBatch]:
    """`sort(batches)` in memory while the input fits the budget, else an external distribution sort."""
    with ctx.memory.reservation("Sort") as reservation:
        held, rest = gather(batches, reservation)
        if rest is None:
            yield from sort(held)
            return
        # Everything to one file, with a sample of its sort keys.
        samples: list[list[pa.Array]] = []
        with ctx.spill.writer(schema, f"Sort-input-{depth}") as writer:
            for batch in itertools.chain(held, rest):
                batch = conformed(batch, schema)
                writer.write(batch)
                step = max(1, batch.num_rows // SORT_SAMPLE_PER_BATCH)
                picked = batch.take(pa.array(np.arange(0, batch.num_rows, step))) if step > 1 else batch
                samples.append([evaluate_array(o.child, picked) for o in orders])
        unsorted = writer.file()
        del held
    ctx.record_spill("Sort", unsorted.nbytes)
    pooled = [pa.concat_arrays([s[i] for s in samples]) for i in range(len(orders))]
    ranges = max(2, min(SPILL_FANOUT, -(-unsorted.nbytes // max(1, ctx.memory.budget // 4))))
    bounds = choose_range_bounds(pooled, orders, ranges)
    writers = [ctx.spill.writer(schema, f"Sort-range-{depth}-{i}") for i in range(ranges)]
    try:
        for batch in unsorted.read():
            ids = range_partition_ids([evaluate_array(o.child, batch) for o in orders], bounds, orders)
            for i, piece in enumerate(split_by_ids(batch, ids, ranges)):
                if piece is not None:
                    writers[i].write(piece)
    finally:
        files = [w.close() for w in writers]
    unsorted.delete()
    ctx.record_spill("Sort", sum(f.nbytes for f in files))
    for f in files:
        if not f.rows:
            f.delete()
            continue
        if f.rows == unsorted.rows or depth >= MAX_SPILL_DEPTH:
            # The bounds could not split this range: its keys may all be equal, and then it is sorted as it is.
            yield from _sorted_or_equal(f, orders, sort, ctx)
        else:
            yield from sort_within_budget(f.read(), schema, orders, sort, ctx, depth + 1)
        f.delete()


def _sorted_or_equal(f: SpillFile, orders: tuple[SortOrder, ...],
                     sort: Callable[[list[pa.RecordBatch]], Iterator[pa.RecordBatch]],
                     ctx: TaskContext) -> Iterator[pa.RecordBatch]:
    """A range the bounds could not split: streamed as it is when every row has the same sort keys, else
    sorted in memory if the budget allows, else an error naming the keys."""
    first: list[pa.Array] | None = None
    for batch in f.read():
        keys = [evaluate_array(o.child, batch) for o in orders]
        if first is None:
            first = [k.slice(0, 1) for k in keys]
        if not all(_all_equal(k, f0) for k, f0 in zip(keys, first)):
            break
    else:
        yield from f.read()
        return
    with ctx.memory.reservation("Sort") as reservation:
        held, rest = gather(f.read(), reservation)
        if rest is not None:
            raise _too_big("Sort", "range of sort keys", first or [], ctx)
        yield from sort(held)


def _all_equal(values: pa.Array, first: pa.Array) -> bool:
    """Whether every value equals `first[0]` (nulls equal nulls, NaNs equal NaNs, as sorting sees them)."""
    if first.null_count:
        return values.null_count == len(values)
    if values.null_count:
        return False
    if pa.types.is_floating(values.type) and np.isnan(first[0].as_py()):
        return bool(pc.all(pc.is_nan(values)).as_py())
    return values.equals(pa.repeat(first[0], len(values)))


# ---------------------------------------------------------------- window


def window_within_budget(batches: Iterable[pa.RecordBatch], schema: pa.Schema, partition_by: tuple[Expr, ...],
                         compute: Callable[[list[pa.RecordBatch]], Iterator[pa.RecordBatch]], ctx: TaskContext,
                         depth: int = 0) -> Iterator[pa.RecordBatch]:
    """`compute(batches)` in memory while the input fits the budget, else per hash partition of the window's
    PARTITION BY keys (without any, a window is one partition and runs in memory)."""
    if not partition_by:
        yield from compute(list(batches))
        return
    keys_of = keys_as(partition_by)
    with ctx.memory.reservation("Window") as reservation:
        held, rest = gather(batches, reservation)
        if rest is None:
            yield from compute(held)
            return
        if depth >= MAX_SPILL_DEPTH:
            raise _too_big("Window", "window partition", keys_of(held[0]), ctx)
        files = partition_to_files(itertools.chain(held, rest), keys_of, depth + 1, schema, ctx, "Window")
        del held
    _refuse_one_key(files, keys_of, "Window", "window partition", ctx)
    for f in files:
        if f.rows:
            yield from window_within_budget(f.read(), schema, partition_by, compute, ctx, depth + 1)
        f.delete()


__all__ = ["MAX_SPILL_DEPTH", "SPILL_FANOUT", "aggregate_within_budget", "gather", "join_within_budget", "keys_as",
           "partition_to_files", "sort_within_budget", "window_within_budget"]
