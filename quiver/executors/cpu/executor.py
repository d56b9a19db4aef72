"""The CPU executor: runs a stage's physical operators for one partition with pyarrow.compute and Acero.

Operators are pulled as generators, so scan -> filter -> project -> partial aggregate
streams batch by batch; only blocking operators (aggregate, join, sort) hold a partition.
"""
from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from quiver.connectors.arrow_predicate import exact_arrow_expression, to_arrow_predicate
from quiver.executors.base import Device, TaskContext
from quiver.executors.blocks import BlockId
from quiver.executors.cpu.aggregate import aggregate_partition
from quiver.executors.cpu.dictionary_eval import decode_dictionaries, filter_encoded_batch, is_dictionary_encoded
from quiver.executors.cpu.evaluate import evaluate_array, filter_batch
from quiver.executors.cpu.generate import generate_batch
from quiver.executors.cpu.join import join_tables, stream_hash_join
from quiver.executors.cpu.kernels.row_position import bind_row_position, uses_row_position
from quiver.executors.cpu.map_batches import map_partition
from quiver.executors.cpu.shuffle import read_shuffle
from quiver.executors.cpu.sort import sort_indices, top_k_indices
from quiver.executors.cpu.spilling import (
    aggregate_within_budget,
    join_within_budget,
    keys_as,
    sort_within_budget,
    window_within_budget,
)
from quiver.executors.cpu.window import compute_windows
from quiver.planners.physical import nodes as P

RANGE_BATCH_ROWS = 1 << 16

# Acero pulls each streaming input (a Python generator behind a RecordBatchReader) on Arrow's
# IO thread pool, and a pipeline of nested joins and aggregates holds one of those threads per
# level while it waits for the level below. With the default 8 threads, two tasks of a deep
# TPC-H pipeline use them all and wait on each other forever; waiting threads cost nothing.
ACERO_SOURCE_THREADS = 256
if pa.io_thread_count() < ACERO_SOURCE_THREADS:
    pa.set_io_thread_count(ACERO_SOURCE_THREADS)
TOPK_CHUNK_ROWS = 1 << 20

CPU_OPERATORS = frozenset({
    "ScanExec", "LocalTableExec", "CachedExec", "RangeExec", "FilterExec", "ProjectExec",
    "HashAggregateExec", "HashJoinExec", "NestedLoopJoinExec", "SortExec", "TopKExec", "LimitExec", "OffsetExec",
    "UnionExec", "ShuffleReadExec", "WindowExec", "CoalesceExec", "MapInBatchesExec", "GenerateExec",
})


class CpuExecutor:
    """Runs every operator; the reference every other device must agree with."""

    device = Device("cpu", 0)
    capabilities = CPU_OPERATORS

    def unsupported(self, plan: P.PhysicalPlan) -> str | None:
        name = type(plan).__name__
        return None if name in self.capabilities or name == "KeyFilterExec" else f"the CPU executor has no {name}"

    def execute(self, plan: P.PhysicalPlan, partition: int, ctx: TaskContext) -> Iterator[pa.RecordBatch]:
        placed = ctx.placement.get(id(plan)) if ctx.placement else None
        if placed is not None and placed is not self:
            return placed.execute(plan, partition, ctx)
        handler = getattr(self, f"_{type(plan).__name__}", None)
        if handler is None:
            raise NotImplementedError(f"the CPU executor cannot run {type(plan).__name__}")
        return handler(plan, partition, ctx)

    # ---------------------------------------------------------- leaves

    def _ScanExec(self, plan: P.ScanExec, partition: int, ctx: TaskContext) -> Iterator[pa.RecordBatch]:
        return self._scan(plan, partition, keep_dictionaries=False)

    def _scan(self, plan: P.ScanExec, partition: int, keep_dictionaries: bool) -> Iterator[pa.RecordBatch]:
        split = plan.splits[partition]
        columns = [a.name for a in plan.attributes]
        expressions = getattr(plan.source, "filters_as", "arrow") == "expressions"
        predicate = plan.filters if expressions else to_arrow_predicate(plan.filters)
        names = [a.internal_name for a in plan.attributes]
        types = [a.dtype.to_arrow() for a in plan.attributes]
        for batch in plan.source.read(split, columns, predicate):
            yield _conform(batch, columns, names, types, keep_dictionaries)

    def _LocalTableExec(self, plan: P.LocalTableExec, partition: int, ctx: TaskContext) -> Iterator[pa.RecordBatch]:
        n = plan.table.num_rows
        start = n * partition // plan.partitions
        end = n * (partition + 1) // plan.partitions
        piece = plan.table.slice(start, end - start)
        piece = piece.rename_columns([a.internal_name for a in plan.attributes])
        yield from piece.to_batches()

    def _CachedExec(self, plan: P.CachedExec, partition: int, ctx: TaskContext) -> Iterator[pa.RecordBatch]:
        yield from ctx.blocks.get(BlockId("cache", plan.cache_key, partition, 0))

    def _RangeExec(self, plan: P.RangeExec, partition: int, ctx: TaskContext) -> Iterator[pa.RecordBatch]:
        total = max(0, -(-(plan.end - plan.start) // plan.step))
        lo = total * partition // plan.partitions
        hi = total * (partition + 1) // plan.partitions
        name = plan.attribute.internal_name
        for s in range(lo, hi, RANGE_BATCH_ROWS):
            e = min(hi, s + RANGE_BATCH_ROWS)
            values = plan.start + np.arange(s, e, dtype=np.int64) * plan.step
            yield pa.RecordBatch.from_arrays([pa.array(values)], names=[name])

    def _ShuffleReadExec(self, plan: P.ShuffleReadExec, partition: int, ctx: TaskContext) -> Iterator[pa.RecordBatch]:
        yield from read_shuffle(ctx.blocks, f"job{ctx.job_id}", plan.stage_id, plan.blocks_for(partition))

    # ---------------------------------------------------------- pipelined

    def _FilterExec(self, plan: P.FilterExec, partition: int, ctx: TaskContext) -> Iterator[pa.RecordBatch]:
        if isinstance(plan.child, P.ScanExec) and plan.condition.deterministic:
            for batch in self._filtered_scan(plan, partition):
                yield decode_dictionaries(batch)
            return
        positional = uses_row_position((plan.condition,))
        offset = 0
        for batch in self.execute(plan.child, partition, ctx):
            condition = plan.condition
            if positional:
                (condition,) = bind_row_position((condition,), partition, offset, batch.num_rows)
                offset += batch.num_rows
            out = filter_batch(batch, condition)
            if out.num_rows:
                yield out

    def _filtered_scan(self, plan: P.FilterExec, partition: int) -> Iterator[pa.RecordBatch]:
        """A filter straight over a scan: encoded strings are filtered per distinct value and stay encoded."""
        for batch in self._scan(plan.child, partition, keep_dictionaries=True):
            out = filter_encoded_batch(batch, plan.condition) if is_dictionary_encoded(batch) \
                else filter_batch(batch, plan.condition)
            if out.num_rows:
                yield out

    def _encoded(self, plan: P.PhysicalPlan, partition: int, ctx: TaskContext) -> Iterator[pa.RecordBatch]:
        """`plan`'s batches, string columns still dictionary-encoded where it is a scan or a filter over
        one; for a consumer that decodes what it reads."""
        if ctx.placement.get(id(plan)) is not None:
            return self.execute(plan, partition, ctx)
        if isinstance(plan, P.ScanExec):
            return self._scan(plan, partition, keep_dictionaries=True)
        if isinstance(plan, P.FilterExec) and isinstance(plan.child, P.ScanExec) and plan.condition.deterministic:
            return self._filtered_scan(plan, partition)
        return self.execute(plan, partition, ctx)

    def _ProjectExec(self, plan: P.ProjectExec, partition: int, ctx: TaskContext) -> Iterator[pa.RecordBatch]:
        names = [a.internal_name for a in plan.output]
        positional = uses_row_position(plan.projections)
        offset = 0
        for batch in self.execute(plan.child, partition, ctx):
            projections = plan.projections
            if positional:
                projections = bind_row_position(projections, partition, offset, batch.num_rows)
                offset += batch.num_rows
            arrays = [evaluate_array(p, batch) for p in projections]
            yield pa.RecordBatch.from_arrays(arrays, names=names)

    def _LimitExec(self, plan: P.LimitExec, partition: int, ctx: TaskContext) -> Iterator[pa.RecordBatch]:
        remaining = plan.n
        if remaining <= 0:
            return
        for batch in self.execute(plan.child, partition, ctx):
            if batch.num_rows >= remaining:
                yield batch.slice(0, remaining)
                return
            remaining -= batch.num_rows
            yield batch

    def _GenerateExec(self, plan: P.GenerateExec, partition: int, ctx: TaskContext) -> Iterator[pa.RecordBatch]:
        for batch in self.execute(plan.child, partition, ctx):
            out = generate_batch(batch, plan.generator, plan.outer, plan.attributes)
            if out.num_rows:
                yield out

    def _OffsetExec(self, plan: P.OffsetExec, partition: int, ctx: TaskContext) -> Iterator[pa.RecordBatch]:
        skip = plan.n
        for batch in self.execute(plan.child, partition, ctx):
            if skip >= batch.num_rows:
                skip -= batch.num_rows
                continue
            yield batch.slice(skip)
            skip = 0

    def _CoalesceExec(self, plan: P.CoalesceExec, partition: int, ctx: TaskContext) -> Iterator[pa.RecordBatch]:
        for p in plan.input_partitions(partition):
            yield from self.execute(plan.child, p, ctx)

    def _UnionExec(self, plan: P.UnionExec, partition: int, ctx: TaskContext) -> Iterator[pa.RecordBatch]:
        names = [a.internal_name for a in plan.output]
        located = plan.input_for(partition)
        if located is not None:
            for batch in self.execute(*located, ctx):
                yield pa.RecordBatch.from_arrays(batch.columns, names=names)

    def _MapInBatchesExec(self, plan: P.MapInBatchesExec, partition: int, ctx: TaskContext) -> Iterator[pa.RecordBatch]:
        return map_partition(plan, self.execute(plan.child, partition, ctx))

    # ---------------------------------------------------------- blocking

    def _HashAggregateExec(self, plan: P.HashAggregateExec, partition: int,
                           ctx: TaskContext) -> Iterator[pa.RecordBatch]:
        # A partial aggregate groups string keys by their dictionary codes (quiver/executors/cpu/aggregate_inputs.py).
        child = self._encoded(plan.child, partition, ctx) if plan.mode == "partial" else self.execute(plan.child,
                                                                                                      partition, ctx)
        if plan.mode == "partial" or not plan.keys:
            # A partial aggregate emits states chunk by chunk; a global one holds one state row.
            yield from aggregate_partition(child, plan.keys, plan.calls, plan.mode)
            return
        # A final aggregate's input holds each key under its attribute's name; a complete one computes them.
        keys_of = keys_as(tuple(a for _, a in plan.keys)) if plan.mode == "final" \
            else keys_as(tuple(e for e, _ in plan.keys))
        yield from aggregate_within_budget(
            child, keys_of, lambda batches: aggregate_partition(batches, plan.keys, plan.calls, plan.mode), ctx)

    def _KeyFilterExec(self, plan: P.KeyFilterExec, partition: int, ctx: TaskContext) -> Iterator[pa.RecordBatch]:
        """The other side's whole output (every partition of its finished stage) becomes the build
        side of a semi join that the child's rows stream through, when its real size says it pays."""
        source = [b for p in range(plan.source.num_partitions) for b in self.execute(plan.source, p, ctx)]
        rows = self.execute(plan.child, partition, ctx)
        if not plan.applies_to(sum(b.num_rows for b in source)):
            yield from rows
            return
        schema = pa.schema([pa.field(a.internal_name, a.dtype.to_arrow()) for a in plan.source.output])
        build = pa.Table.from_batches(source, schema=schema)
        yield from stream_hash_join(rows, plan.child.output, plan.keys, build, plan.source_keys,
                                    "left_semi", plan.child.output, probe_is_left=True)

    def _HashJoinExec(self, plan: P.HashJoinExec, partition: int, ctx: TaskContext) -> Iterator[pa.RecordBatch]:
        residual = exact_arrow_expression(plan.residual) if plan.residual is not None else None
        if plan.residual is None or residual is not None:
            # Build a hash table on one side and stream the other through it: the broadcast side
            # is the build side; a shuffled join builds on the right, as Spark does. A residual
            # condition Arrow evaluates exactly is checked inside the join, on matching pairs.
            on_left = plan.strategy == "broadcast-left" or plan.build_left
            build, probe = (plan.left, plan.right) if on_left else (plan.right, plan.left)
            build_keys, probe_keys = (plan.left_keys, plan.right_keys) if on_left else (plan.right_keys, plan.left_keys)

            def join(table: pa.Table, rows: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
                return stream_hash_join(rows, probe.output, probe_keys, table, build_keys, plan.how, plan.output,
                                        probe_is_left=not on_left, residual=residual)
        else:
            # A residual Arrow cannot evaluate exactly is checked on the joined tables.
            build, probe = plan.right, plan.left
            build_keys, probe_keys = plan.right_keys, plan.left_keys

            def join(table: pa.Table, rows: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
                batches = list(rows)
                left = pa.Table.from_batches(batches) if batches else _schema(plan.left).empty_table()
                return iter(join_tables(left, table, plan.how, plan.left_keys, plan.right_keys, plan.residual,
                                        plan.output).to_batches())
        # While the build side fits the memory budget this is one join; past it, a grace hash join.
        types = [k.dtype.to_arrow() for k in probe_keys]
        yield from join_within_budget(self.execute(build, partition, ctx), _schema(build), keys_as(build_keys, types),
                                      self.execute(probe, partition, ctx), _schema(probe), keys_as(probe_keys, types),
                                      join, ctx)

    def _NestedLoopJoinExec(self, plan: P.NestedLoopJoinExec, partition: int,
                            ctx: TaskContext) -> Iterator[pa.RecordBatch]:
        left = self._table(plan.left, partition, ctx)
        right = self._table(plan.right, partition, ctx)
        out = join_tables(left, right, plan.how, (), (), plan.condition, plan.output)
        yield from out.to_batches()

    def _WindowExec(self, plan: P.WindowExec, partition: int, ctx: TaskContext) -> Iterator[pa.RecordBatch]:
        schema = _schema(plan.child)

        def compute(batches: list[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            if not batches:
                return iter(())
            table = pa.Table.from_batches(batches)
            return iter(compute_windows(table, plan.window_exprs, plan.partition_by, plan.order_by).to_batches())

        yield from window_within_budget(self.execute(plan.child, partition, ctx), schema, plan.partition_by, compute,
                                        ctx)

    def _SortExec(self, plan: P.SortExec, partition: int, ctx: TaskContext) -> Iterator[pa.RecordBatch]:
        schema = _schema(plan.child)

        def sort(batches: list[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            if not batches:
                return iter(())
            table = pa.Table.from_batches(batches)
            batch = _single_batch(table)
            keys = [evaluate_array(o.child, batch) for o in plan.orders]
            return iter(table.take(sort_indices(keys, plan.orders)).to_batches())

        # In memory while the input fits the budget; past it, an external sort.
        yield from sort_within_budget(self.execute(plan.child, partition, ctx), schema, plan.orders, sort, ctx)

    def _TopKExec(self, plan: P.TopKExec, partition: int, ctx: TaskContext) -> Iterator[pa.RecordBatch]:
        kept: list[pa.RecordBatch] = []
        pending = 0
        for batch in self.execute(plan.child, partition, ctx):
            if batch.num_rows == 0:
                continue
            kept.append(batch)
            pending += batch.num_rows
            if pending >= TOPK_CHUNK_ROWS:
                kept = self._top(pa.Table.from_batches(kept), plan).to_batches()
                pending = sum(b.num_rows for b in kept)
        if kept:
            yield from self._top(pa.Table.from_batches(kept), plan).to_batches()

    def _top(self, table: pa.Table, plan: P.TopKExec) -> pa.Table:
        batch = _single_batch(table)
        keys = [evaluate_array(o.child, batch) for o in plan.orders]
        return table.take(top_k_indices(keys, plan.orders, plan.n))

    def _table(self, plan: P.PhysicalPlan, partition: int, ctx: TaskContext) -> pa.Table:
        batches = list(self.execute(plan, partition, ctx))
        if not batches:
            return _schema(plan).empty_table()
        return pa.Table.from_batches(batches)


def _schema(plan: P.PhysicalPlan) -> pa.Schema:
    """The Arrow schema of an operator's batches: its output's internal names and canonical types."""
    return pa.schema([pa.field(a.internal_name, a.dtype.to_arrow()) for a in plan.output])


def _single_batch(table: pa.Table) -> pa.RecordBatch:
    table = table.combine_chunks()
    batches = table.to_batches()
    if len(batches) == 1:
        return batches[0]
    return pa.RecordBatch.from_arrays([c.combine_chunks() for c in table.columns], schema=table.schema)


def _conform(batch: pa.RecordBatch, columns: list[str], names: list[str], types: list[pa.DataType],
             keep_dictionaries: bool = False) -> pa.RecordBatch:
    """Select, rename to internal names and cast to each column's canonical Arrow type; with
    `keep_dictionaries`, a column encoded over exactly that type is left encoded."""
    arrays = []
    for col, t in zip(columns, types):
        arr = batch.column(col)
        if arr.type != t:
            if keep_dictionaries and pa.types.is_dictionary(arr.type) and arr.type.value_type == t:
                arrays.append(arr)
                continue
            if pa.types.is_dictionary(arr.type):
                arr = arr.dictionary_decode()
            arr = arr.cast(t)
        arrays.append(arr)
    return pa.RecordBatch.from_arrays(arrays, names=names)


__all__ = ["CpuExecutor"]
