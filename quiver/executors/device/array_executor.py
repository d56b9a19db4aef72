"""An executor over the device-generic kernels: the GPU and NPU executors are this with their array namespace.

Operators placed on the device pass `DeviceBatch`es to each other; data crosses to the device
where a child runs elsewhere (`to_device`) and back where the parent does (`to_arrow`), so a
pipeline of device operators never round-trips through the host in the middle. Aggregates
and joins produce exactly the columns the CPU executor's do, so their partners across an
exchange may run on either device. With numpy as the namespace the device is *emulated*.
"""
from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from quiver.engine.core import types as T
from quiver.engine.core.errors import QuiverError
from quiver.engine.core.expressions import AttributeRef, Expr
from quiver.executors.base import Device, DeviceFallback, TaskContext
from quiver.executors.cpu.aggregate import finish_states, summed_type, tracks_nan
from quiver.executors.cpu.map_batches import map_partition
from quiver.executors.device.kernels import (
    DeviceBatch,
    DeviceColumn,
    device_nbytes,
    device_type_supported,
    evaluate,
    filter_batch,
    group_by,
    join_indices,
    segment_reduce,
    sort_indices,
    take_batch,
    to_arrow,
    to_device,
    top_k_indices,
    unsupported_reason,
)
from quiver.executors.device.kernels.concat import concat_batches
from quiver.planners.physical import nodes as P

# The share of the device's free memory one operator's working set may take: the rest is for the other tasks
# sharing the device and the kernels' temporaries.
DEVICE_HEADROOM = 0.5
# Device bytes an operator works in per byte of input it holds, its input included: a group-by's key codes,
# group ids and states; a join's coded keys, match indices and gathered output; a sort's permutation and
# its taken output.
DEVICE_WORKING_SET = {"HashAggregate": 3.0, "HashJoin": 3.0, "Sort": 3.0, "TopK": 2.0}

ARRAY_OPERATORS = frozenset({"FilterExec", "ProjectExec", "HashAggregateExec", "HashJoinExec", "SortExec", "TopKExec",
                             "CachedExec"})
DEVICE_AGGREGATES = frozenset({"count", "sum", "avg", "min", "max"})
# Join types the device runs with the streamed side as the left input of `join_indices`.
_PROBE_LEFT = {"inner": "inner", "left": "left", "left_semi": "left_semi", "left_anti": "left_anti"}
_PROBE_RIGHT = {"inner": "inner", "right": "left"}


def numpy_namespace() -> Any:
    """numpy as the array API namespace an emulated GPU or NPU computes with, imported when one opens (it
    pulls in numpy's f2py and masked arrays, which `import quiver` need not pay for)."""
    import array_api_compat.numpy

    return array_api_compat.numpy


class ArrayExecutor:
    """Runs filter, project, aggregate, join, sort and top-k with array-API kernels on one device."""

    capabilities = ARRAY_OPERATORS

    def __init__(self, device: Device, xp: Any):
        self.device = device
        self.xp = xp
        # Partitions of cached relations kept on this device (`quiver.cache.device`), by (cache key, partition).
        self._cached: dict[tuple[int, int], list[DeviceBatch]] = {}
        self._cache_lock = threading.Lock()

    # What the device's runtime raises when an allocation fails (the GPU and NPU executors add theirs).
    out_of_memory_errors: tuple[type[BaseException], ...] = (MemoryError,)

    def free_bytes(self) -> int | None:
        """Device memory free now, for an operator's working set: an emulated device's profile memory less
        what its cache holds (a real device's executor asks its runtime); None for no bound."""
        if self.device.memory_bytes is None:
            return None
        with self._cache_lock:
            cached = sum(device_nbytes(b) for batches in self._cached.values() for b in batches)
        return max(0, self.device.memory_bytes - cached)

    def operator_budget(self) -> int | None:
        """Device bytes one operator may work in now (DEVICE_HEADROOM of the free memory)."""
        free = self.free_bytes()
        return None if free is None else int(free * DEVICE_HEADROOM)

    def __reduce__(self):
        """Pickled into a worker process (Ray), the executor opens the same device anew there; the device
        cache stays behind, so reads there come from the blocks."""
        return reopen_executor, (type(self), self.device.index, self.device.emulated, self.device.memory_bytes)

    # -- the device cache

    def cache_put(self, cache_key: int, partition: int, batches: list[pa.RecordBatch]) -> None:
        """Keep a copy of one cached partition on this device; reads of it then need no transfer."""
        moved = [to_device(b, self.xp) for b in batches if b.num_rows]
        with self._cache_lock:
            self._cached[(cache_key, partition)] = moved

    def cache_drop(self, cache_key: int) -> None:
        with self._cache_lock:
            for k in [k for k in self._cached if k[0] == cache_key]:
                del self._cached[k]

    def holds(self, plan: P.CachedExec) -> bool:
        """Whether every partition of the cached relation `plan` reads is on this device."""
        with self._cache_lock:
            return all((plan.cache_key, p) in self._cached for p in range(plan.partitions))

    # -- what the device can run

    def unsupported(self, plan: P.PhysicalPlan) -> str | None:
        """None when this executor can run `plan`'s operator, else why not (shown by explain)."""
        name = type(plan).__name__
        if isinstance(plan, P.CachedExec):
            return None if self.holds(plan) else f"cache {plan.cache_key} is not kept on {self.device}"
        if isinstance(plan, P.MapInBatchesExec):
            # user code costs what it costs: it goes where its resource profile asks, never by estimate
            pin = plan.device_pin
            api = "Arrow" if plan.kind == "arrow" else "Pandas"
            if pin == self.device.kind:
                return None
            return f"the function given to mapIn{api} asks for no {self.device.kind}"
        if name not in self.capabilities:
            return f"{name.removesuffix('Exec')} has no device kernel"
        for attr in plan.output:
            if not device_type_supported(attr.dtype.to_arrow()):
                return f"column {attr.name} of type {attr.dtype.simpleString()} has no device layout"
        for child in plan.children():
            for attr in child.output:
                if not device_type_supported(attr.dtype.to_arrow()):
                    return f"input column {attr.name} of type {attr.dtype.simpleString()} has no device layout"
        return _expressions_unsupported(plan)

    # -- the executor protocol

    def execute(self, plan: P.PhysicalPlan, partition: int, ctx: TaskContext) -> Iterator[pa.RecordBatch]:
        """Arrow batches of `plan`, computed on the device and brought back to the host."""
        if isinstance(plan, P.MapInBatchesExec):
            # The user's function takes and gives Arrow (or pandas) and drives the device itself
            # (CuPy, torch); its task holds this executor's device.
            yield from map_partition(plan, self._host_batches(plan.child, partition, ctx))
            return
        for batch in self.device_batches(plan, partition, ctx):
            if batch.num_rows:
                yield to_arrow(batch)

    def _host_batches(self, plan: P.PhysicalPlan, partition: int, ctx: TaskContext) -> Iterator[pa.RecordBatch]:
        executor = ctx.executor_for(plan)
        return executor.execute(plan, partition, ctx) if executor is not self else self.execute(plan, partition, ctx)

    def device_batches(self, plan: P.PhysicalPlan, partition: int, ctx: TaskContext) -> Iterator[DeviceBatch]:
        """`plan`'s output on this device: computed here when placed here, else moved here from the host."""
        if ctx.executor_for(plan) is not self:
            names = {a.internal_name: a.name for a in plan.output}
            for batch in ctx.executor_for(plan).execute(plan, partition, ctx):
                yield to_device(batch, self.xp, labels=[names.get(n, n) for n in batch.schema.names])
            return
        if isinstance(plan, P.MapInBatchesExec):
            names = {a.internal_name: a.name for a in plan.output}
            for batch in self.execute(plan, partition, ctx):
                yield to_device(batch, self.xp, labels=[names.get(n, n) for n in batch.schema.names])
            return
        handler = getattr(self, f"_{type(plan).__name__}", None)
        if handler is None:
            raise QuiverError(f"{self.device} cannot run {type(plan).__name__}")
        try:
            yield from handler(plan, partition, ctx)
        except self.out_of_memory_errors as exc:
            # The data outgrew what the budget foresaw (another process took the memory): the task reruns on
            # the CPU rather than failing.
            raise DeviceFallback(f"{self.device} ran out of memory in {type(plan).__name__}: {exc}") from exc

    # -- the memory budget: gather what fits, else hand the operator to the CPU

    def _gathered(self, plan: P.PhysicalPlan, partition: int, ctx: TaskContext, operator: str,
                  reserved: int = 0) -> tuple[list[DeviceBatch], Iterator[pa.RecordBatch] | None]:
        """`plan`'s batches on the device while they, with the working memory `operator` needs for them and
        `reserved` bytes already held, fit its budget: (batches, None). Past it, ([], every batch on the
        host, those gathered so far first), for the operator to run on the CPU instead."""
        budget = self.operator_budget()
        factor = DEVICE_WORKING_SET[operator]
        held: list[DeviceBatch] = []
        used = reserved
        stream = self.device_batches(plan, partition, ctx)
        for batch in stream:
            if not batch.num_rows:
                continue
            held.append(batch)
            used += int(device_nbytes(batch) * factor)
            if budget is not None and used > budget:
                return [], _to_host(held, stream)
        return held, None

    def _chunks(self, batches: Iterator[DeviceBatch], operator: str, reserved: int = 0) -> Iterator[DeviceBatch]:
        """`batches` concatenated into chunks that, with `operator`'s working memory and `reserved` bytes,
        fit its budget (a batch alone over it is a chunk of its own)."""
        budget = self.operator_budget()
        factor = DEVICE_WORKING_SET[operator]
        held: list[DeviceBatch] = []
        used = reserved
        for batch in batches:
            if not batch.num_rows:
                continue
            size = int(device_nbytes(batch) * factor)
            if held and budget is not None and used + size > budget:
                yield concat_batches(held, self.xp)
                held, used = [], reserved
            held.append(batch)
            used += size
        if held:
            yield concat_batches(held, self.xp)

    def _on_host(self, plan: P.PhysicalPlan, partition: int, ctx: TaskContext,
                 pulled: dict[int, Iterator[pa.RecordBatch]]) -> Iterator[DeviceBatch]:
        """Operator `plan` run by the CPU executor, which spills under the host's budget, over the rows its
        children already gave (`pulled`, by child identity; any other child is run where it is placed);
        its output moves back here. Only this operator leaves the device, not the task."""
        cpu = ctx.default_executor
        if cpu is None or cpu is self:
            raise DeviceFallback(f"{type(plan).__name__} does not fit {self.device}'s memory")
        counts = ctx.metrics.setdefault("device_fallbacks", {})
        counts[type(plan).__name__] = counts.get(type(plan).__name__, 0) + 1
        ctx.spill  # noqa: B018 - the copy below shares this attempt's spill space, removed with it
        replays = {key: _Replay(self.device, stream) for key, stream in pulled.items()}
        host = dataclasses.replace(ctx, placement={**ctx.placement, **replays, id(plan): cpu})
        names = {a.internal_name: a.name for a in plan.output}
        for batch in cpu.execute(plan, partition, host):
            if batch.num_rows:
                yield to_device(batch, self.xp, labels=[names.get(n, n) for n in batch.schema.names])

    # -- operators

    def _CachedExec(self, plan: P.CachedExec, partition: int, ctx: TaskContext) -> Iterator[DeviceBatch]:
        with self._cache_lock:
            batches = self._cached.get((plan.cache_key, partition))
        if batches is None:
            raise DeviceFallback(f"partition {partition} of cache {plan.cache_key} is no longer on {self.device}")
        names = tuple(a.internal_name for a in plan.attributes)
        for b in batches:
            yield DeviceBatch(names, b.columns, b.num_rows)

    def _FilterExec(self, plan: P.FilterExec, partition: int, ctx: TaskContext) -> Iterator[DeviceBatch]:
        for batch in self.device_batches(plan.child, partition, ctx):
            out = filter_batch(batch, evaluate(plan.condition, batch, self.xp), self.xp)
            if out.num_rows:
                yield out

    def _ProjectExec(self, plan: P.ProjectExec, partition: int, ctx: TaskContext) -> Iterator[DeviceBatch]:
        names = tuple(a.internal_name for a in plan.output)
        for batch in self.device_batches(plan.child, partition, ctx):
            yield DeviceBatch(names, tuple(evaluate(p, batch, self.xp) for p in plan.projections), batch.num_rows)

    def _HashAggregateExec(self, plan: P.HashAggregateExec, partition: int, ctx: TaskContext) -> Iterator[DeviceBatch]:
        if plan.mode == "partial":
            # States per chunk that fits: a group may get a state row in several, which the final merges.
            for chunk in self._chunks(self.device_batches(plan.child, partition, ctx), "HashAggregate"):
                yield self._partial(plan, chunk)
            return
        batches, on_host = self._gathered(plan.child, partition, ctx, "HashAggregate")
        if on_host is not None:
            yield from self._on_host(plan, partition, ctx, {id(plan.child): on_host})
            return
        if plan.mode == "final":
            merged = self._merge(plan, batches)
            if merged is not None:
                yield self._finished(plan, merged)
            elif not plan.keys:
                yield self._finished(plan, None)
            return
        if not batches:
            if plan.mode == "complete" and not plan.keys:
                yield self._finished(plan, None)
            return
        states = self._partial(plan, concat_batches(batches, self.xp))
        merged = self._merge(plan, [states])
        yield self._finished(plan, merged)

    def _HashJoinExec(self, plan: P.HashJoinExec, partition: int, ctx: TaskContext) -> Iterator[DeviceBatch]:
        build_left = plan.strategy == "broadcast-left" or plan.build_left
        build_plan, probe_plan = (plan.left, plan.right) if build_left else (plan.right, plan.left)
        build_keys, probe_keys = (plan.left_keys, plan.right_keys) if build_left else (plan.right_keys, plan.left_keys)
        how = (_PROBE_RIGHT if build_left else _PROBE_LEFT)[plan.how]
        held, on_host = self._gathered(build_plan, partition, ctx, "HashJoin")
        if on_host is not None:
            # The build side does not fit: the CPU joins, as a grace hash join where its budget needs one.
            yield from self._on_host(plan, partition, ctx, {id(build_plan): on_host})
            return
        build = concat_batches(held, self.xp) if held else _empty(build_plan.output, self.xp)
        build_key_columns = [evaluate(k, build, self.xp) for k in build_keys]
        names = tuple(a.internal_name for a in plan.output)
        # The probe side in chunks that fit beside the build side: the kernel codes both sides' keys jointly,
        # so each chunk costs a pass over the build side; every device join type is probe-local.
        built = int(device_nbytes(build) * DEVICE_WORKING_SET["HashJoin"])
        for probe in self._chunks(self.device_batches(probe_plan, partition, ctx), "HashJoin", reserved=built):
            probe_idx, build_idx = join_indices([evaluate(k, probe, self.xp) for k in probe_keys],
                                                build_key_columns, how, self.xp)
            if how in ("left_semi", "left_anti"):
                out = take_batch(probe, probe_idx, self.xp)
            else:
                out = self._joined(probe, probe_idx, build, build_idx, how)
                if plan.residual is not None:
                    out = filter_batch(out, evaluate(plan.residual, out, self.xp), self.xp)
            out = _select(out, names)
            if out.num_rows:
                yield out

    def _SortExec(self, plan: P.SortExec, partition: int, ctx: TaskContext) -> Iterator[DeviceBatch]:
        batches, on_host = self._gathered(plan.child, partition, ctx, "Sort")
        if on_host is not None:
            # Too big to sort here: the CPU sorts it, externally where its budget needs.
            yield from self._on_host(plan, partition, ctx, {id(plan.child): on_host})
            return
        if batches:
            table = concat_batches(batches, self.xp)
            yield take_batch(table, sort_indices(*self._sort_keys(plan.orders, table), self.xp), self.xp)

    def _TopKExec(self, plan: P.TopKExec, partition: int, ctx: TaskContext) -> Iterator[DeviceBatch]:
        # The top rows of each chunk that fits, then the top rows of those: they hold the top rows of all.
        kept: DeviceBatch | None = None
        for chunk in self._chunks(self.device_batches(plan.child, partition, ctx), "TopK"):
            if kept is not None:
                chunk = concat_batches([kept, chunk], self.xp)
            kept = take_batch(chunk, top_k_indices(*self._sort_keys(plan.orders, chunk), plan.n, self.xp), self.xp)
        if kept is not None:
            yield kept

    # -- helpers

    def _sort_keys(self, orders, table: DeviceBatch):
        keys = [evaluate(o.child, table, self.xp) for o in orders]
        return keys, [o.ascending for o in orders], [o.effective_nulls_first for o in orders]

    def _joined(self, probe: DeviceBatch, probe_idx, build: DeviceBatch, build_idx, how: str) -> DeviceBatch:
        left = take_batch(probe, probe_idx, self.xp)
        missing = build_idx < 0 if how == "left" else None
        safe = self.xp.where(build_idx < 0, 0, build_idx) if how == "left" else build_idx
        right = take_batch(build, safe, self.xp, null_where=missing) if build.num_rows else \
            _all_null(build, left.num_rows, self.xp)
        return DeviceBatch(left.names + right.names, left.columns + right.columns, left.num_rows)

    def _partial(self, plan: P.HashAggregateExec, batch: DeviceBatch) -> DeviceBatch:
        """Rows -> one state row per group, named and typed as the CPU executor's partial states."""
        xp = self.xp
        key_columns = [evaluate(e, batch, xp) for e, _ in plan.keys]
        groups, ids, n = group_by(key_columns, xp, num_rows=batch.num_rows)
        names = [a.internal_name for _, a in plan.keys]
        columns = list(groups)
        for i, call in enumerate(plan.calls):
            f = call.function
            arg = evaluate(f.args[0], batch, xp) if f.args else None
            if f.name == "count":
                columns.append(segment_reduce(arg, ids, n, "count", xp) if arg is not None
                               else segment_reduce(_ones(batch.num_rows, xp), ids, n, "count_all", xp))
                names.append(f"s{i}")
            elif f.name in ("sum", "avg"):
                suffix = "_sum" if f.name == "avg" else ""
                summed = summed_type(call)
                if summed is not None and pa.types.is_floating(summed):  # an average of integers adds doubles
                    arg = DeviceColumn(xp.astype(arg.values, xp.float64), arg.valid, pa.float64())
                elif summed is not None and pa.types.is_decimal128(summed):
                    # A bigint sum under ANSI mode: its state is decimal(38, 0) as on the CPU, so the final
                    # check sees an overflow; the decimal sum's bound sends a sum that may wrap to the CPU.
                    arg = DeviceColumn(arg.values, arg.valid, summed)
                columns.append(_typed_sum(arg, ids, n, xp))
                names.append(f"s{i}{suffix}")
                if f.name == "avg":
                    columns.append(segment_reduce(arg, ids, n, "count", xp))
                    names.append(f"s{i}_count")
            else:
                columns.append(segment_reduce(arg, ids, n, f.name, xp))
                names.append(f"s{i}")
                if tracks_nan(call):
                    columns.append(segment_reduce(_is_nan(arg, xp), ids, n, "any", xp))
                    names.append(f"s{i}_nan")
        return DeviceBatch(tuple(names), tuple(columns), n)

    def _merge(self, plan: P.HashAggregateExec, batches: list[DeviceBatch]) -> DeviceBatch | None:
        """State rows of the same group (from every map task) merged into one, keys named k0, k1, ..."""
        batches = [b for b in batches if b.num_rows]
        if not batches:
            return None
        xp = self.xp
        states = concat_batches(batches, xp)
        key_names = [a.internal_name for _, a in plan.keys]
        groups, ids, n = group_by([states.column(k) for k in key_names], xp, num_rows=states.num_rows)
        names = [f"k{i}" for i in range(len(key_names))]
        columns = list(groups)
        for name, column in zip(states.names, states.columns):
            if name in key_names:
                continue
            call = plan.calls[int(name[1:].split("_")[0])]
            fn = "any" if name.endswith("_nan") else call.function.name if call.function.name in ("min", "max") \
                else "sum"
            columns.append(_typed_sum(column, ids, n, xp) if fn == "sum" else segment_reduce(column, ids, n, fn, xp))
            names.append(name)
        return DeviceBatch(tuple(names), tuple(columns), n)

    def _finished(self, plan: P.HashAggregateExec, merged: DeviceBatch | None) -> DeviceBatch:
        """Merged states -> final values, finished on the host exactly as the CPU executor finishes them."""
        states = pa.Table.from_batches([to_arrow(merged)]) if merged is not None else None
        table = finish_states(states, plan.keys, plan.calls)
        return to_device(table.combine_chunks().to_batches()[0] if table.num_rows else
                         pa.RecordBatch.from_pylist([], schema=table.schema), self.xp)


def _to_host(held: list[DeviceBatch], rest: Iterator[DeviceBatch]) -> Iterator[pa.RecordBatch]:
    """`held`, then `rest`, as host batches, each leaving the device as it goes."""
    while held:
        yield to_arrow(held.pop(0))
    for batch in rest:
        if batch.num_rows:
            yield to_arrow(batch)


class _Replay:
    """Stands in for a child whose rows a device operator already pulled, when the CPU runs that operator."""

    capabilities = frozenset()

    def __init__(self, device: Device, batches: Iterator[pa.RecordBatch]):
        self.device = device
        self._batches = batches

    def unsupported(self, plan: P.PhysicalPlan) -> str | None:
        return None

    def execute(self, plan: P.PhysicalPlan, partition: int, ctx: TaskContext) -> Iterator[pa.RecordBatch]:
        return self._batches


def _expressions_unsupported(plan: P.PhysicalPlan) -> str | None:
    exprs: list[Expr] = []
    if isinstance(plan, P.FilterExec):
        exprs = [plan.condition]
    elif isinstance(plan, P.ProjectExec):
        exprs = list(plan.projections)
    elif isinstance(plan, P.HashAggregateExec):
        for call in plan.calls:
            f = call.function
            if f.name not in DEVICE_AGGREGATES or f.distinct or len(f.args) > 1:
                return f"aggregate {f.sql()} has no device kernel"
            if f.is_try:
                return f"{f.sql()} runs on the CPU"
            if f.name in ("min", "max") and f.args and isinstance(f.args[0].dtype, T.StringType):
                return f"{f.sql()} orders strings, which the device keeps as codes"
            exprs.extend(f.args)
        exprs.extend(e for e, _ in plan.keys)
    elif isinstance(plan, P.HashJoinExec):
        build_left = plan.strategy == "broadcast-left" or plan.build_left
        if plan.how not in (_PROBE_RIGHT if build_left else _PROBE_LEFT):
            return f"a {plan.how} join building on its {'left' if build_left else 'right'} side"
        if plan.residual is not None and plan.how != "inner":
            return f"a {plan.how} join with a residual condition"
        exprs = list(plan.left_keys) + list(plan.right_keys) + ([plan.residual] if plan.residual is not None else [])
    elif isinstance(plan, (P.SortExec, P.TopKExec)):
        exprs = [o.child for o in plan.orders]
    for e in exprs:
        reason = unsupported_reason(e)
        if reason:
            return reason
    return None


def _typed_sum(column: DeviceColumn, ids, n: int, xp: Any) -> DeviceColumn:
    """A segment sum typed as the CPU's state: int64, float64, or decimal128(38, s) (int64 unscaled on the device).

    A decimal sum that may leave int64 raises DeviceFallback from the kernel, and the task reruns on the CPU.
    Decimals are summed as the state type, so that no partial sum is nulled for leaving a narrower sum's
    precision (the CPU checks that once, finishing the aggregate).
    """
    t = column.arrow_type
    if pa.types.is_decimal(t):
        state = pa.decimal128(38, t.scale)
        total = segment_reduce(DeviceColumn(column.values, column.valid, state), ids, n, "sum", xp)
        return DeviceColumn(total.values, total.valid, state)
    total = segment_reduce(column, ids, n, "sum", xp)
    if pa.types.is_floating(t):
        return DeviceColumn(xp.astype(total.values, xp.float64), total.valid, pa.float64())
    return DeviceColumn(xp.astype(total.values, xp.int64), total.valid, pa.int64())


def _is_nan(column: DeviceColumn, xp: Any) -> DeviceColumn:
    return DeviceColumn(xp.isnan(column.values), column.valid, pa.bool_())


def _ones(n: int, xp: Any) -> DeviceColumn:
    return DeviceColumn(xp.ones(n, dtype=xp.int64), None, pa.int64())


def _select(batch: DeviceBatch, names: tuple[str, ...]) -> DeviceBatch:
    index = {n: i for i, n in enumerate(batch.names)}
    return DeviceBatch(names, tuple(batch.columns[index[n]] for n in names), batch.num_rows)


def _empty(attrs: tuple[AttributeRef, ...], xp: Any) -> DeviceBatch:
    schema = pa.schema([pa.field(a.internal_name, a.dtype.to_arrow()) for a in attrs])
    return to_device(pa.RecordBatch.from_pylist([], schema=schema), xp)


def _all_null(build: DeviceBatch, rows: int, xp: Any) -> DeviceBatch:
    columns = tuple(DeviceColumn(xp.zeros(rows, dtype=c.values.dtype), xp.zeros(rows, dtype=xp.bool),
                                 c.arrow_type, c.dictionary) for c in build.columns)
    return DeviceBatch(build.names, columns, rows)


__all__ = ["ARRAY_OPERATORS", "ArrayExecutor"]


_reopened: dict[tuple, ArrayExecutor] = {}
_reopened_lock = threading.Lock()


def reopen_executor(cls: type, index: int, emulated: bool, memory_bytes: int | None) -> ArrayExecutor:
    """The executor of `cls` for one device, opened once per process and shared by the tasks that run there."""
    key = (cls, index, emulated, memory_bytes)
    with _reopened_lock:
        if key not in _reopened:
            _reopened[key] = cls.open(index, emulated, memory_bytes)
        return _reopened[key]
