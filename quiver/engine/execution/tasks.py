"""Tasks as values: what one task reads, runs and writes, so any runtime can run it.

The scheduler turns each stage into `TaskSpec`s. A spec names the blocks its task reads
(`inputs`) and writes (`outputs`), what it asks of a worker (`resources`), and a `body`
that maps the input blocks to output blocks and a small value. Bodies hold the stage's
operator tree and its placement by position in the tree, not by object identity, so a
spec survives pickling into another process: the local runtime calls it in a thread over
the shared block store, the Ray runtime in a worker over the blocks Ray hands it.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import pyarrow as pa

from quiver.engine.core.ansi import running_ansi
from quiver.engine.core.errors import QuiverError
from quiver.executors.base import TaskContext
from quiver.executors.blocks import BlockId, BlockReader
from quiver.executors.cancellation import check_cancelled
from quiver.executors.cpu.shuffle import block_sizes, cut_by_range, output_partitions, partition_blocks
from quiver.executors.memory import MemorySettings
from quiver.planners.physical.nodes import (
    CachedExec,
    CoalesceExec,
    KeyFilterExec,
    PhysicalPlan,
    RangePartitioning,
    ShuffleReadExec,
    UnionExec,
)

Blocks = list[list[pa.RecordBatch]]


class BlocksLost(QuiverError):
    """Blocks a task needed are gone (their worker or node died); the scheduler recomputes them from lineage.

    Spark calls this a fetch failure: the producing stage's missing partitions are run again, then
    the task that could not read them.
    """

    def __init__(self, blocks: tuple[BlockId, ...], detail: str = ""):
        self.blocks = tuple(blocks)
        super().__init__(f"{len(self.blocks)} block(s) lost, e.g. {self.blocks[0] if self.blocks else None}"
                         + (f": {detail}" if detail else ""))


@dataclass(frozen=True)
class TaskResources:
    """What a task asks of a worker: CPUs, and a GPU or NPU when an operator of it is placed there."""

    cpus: float = 1.0
    gpus: float = 0.0
    npus: float = 0.0
    # The device is emulated: a cluster without that resource runs the task on a CPU worker.
    emulated: bool = False


class TaskBody(Protocol):
    """Runs one task: the output blocks (aligned with the spec's `outputs`) and a small value."""

    def __call__(self, ctx: TaskContext) -> tuple[Blocks, Any]:
        ...


@dataclass
class TaskRun:
    """What one attempt of a task did: its blocks and value, the rows and bytes its operators produced,
    and when it ran (wall-clock seconds since the epoch, so attempts on different workers line up)."""

    blocks: Blocks
    value: Any
    rows: int
    bytes: int
    started: float
    finished: float
    # Per operator that spilled: (spills, bytes written).
    spills: dict[str, tuple[int, int]] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class TaskSpec:
    """One task of a stage: its body, the blocks it reads and writes, its attempt and resources."""

    stage_id: int
    partition: int
    job_id: int
    body: TaskBody
    inputs: tuple[BlockId, ...] = ()
    outputs: tuple[BlockId, ...] = ()
    resources: TaskResources = field(default_factory=TaskResources)
    attempt: int = 0
    # The query's ANSI mode (`spark.sql.ansi.enabled`), which its kernels read wherever the task runs.
    ansi: bool = False
    # The session's memory budget and spill folder, which the task's operators reserve from and spill to.
    memory: MemorySettings = field(default_factory=MemorySettings)

    def run(self, blocks: BlockReader) -> TaskRun:
        """Run the body with `blocks` as the task's block reader, in the query's ANSI mode; the attempt's
        spill files are removed when it ends, whether it succeeded or not."""
        started = time.time()
        ctx = TaskContext(self.stage_id, self.partition, self.attempt, blocks, self.job_id,
                          memory_settings=self.memory)
        try:
            with running_ansi(self.ansi):
                out, value = self.body(ctx)
        finally:
            ctx.release()
        if len(out) != len(self.outputs):
            raise QuiverError(f"task {self.partition} of stage {self.stage_id} wrote {len(out)} blocks, "
                              f"expected {len(self.outputs)}")
        if "rows" in ctx.metrics:
            rows, nbytes = ctx.metrics["rows"], ctx.metrics["bytes"]
        else:
            rows = sum(b.num_rows for block in out for b in block)
            nbytes = sum(b.nbytes for block in out for b in block)
        return TaskRun(out, value, rows, nbytes, started, time.time(), ctx.metrics.get("spills", {}))


def preorder(root: PhysicalPlan) -> list[PhysicalPlan]:
    """Every operator of a stage's tree, parents before children (a shared child counted once)."""
    seen: set[int] = set()
    out: list[PhysicalPlan] = []

    def walk(node: PhysicalPlan) -> None:
        if id(node) in seen:
            return
        seen.add(id(node))
        out.append(node)
        for c in node.children():
            walk(c)

    walk(root)
    return out


@dataclass(frozen=True, eq=False)
class StageTask:
    """Runs a stage's operator tree for the task's partition, then hands its batches to `finish`.

    `placement` maps an operator's position in `preorder(root)` to the executor it was placed on
    (operators not named run on `executor`, the CPU).
    """

    root: PhysicalPlan
    executor: Any
    finish: Callable[[int, Iterator[pa.RecordBatch]], tuple[Blocks, Any]]
    placement: tuple[tuple[int, Any], ...] = ()

    def __call__(self, ctx: TaskContext) -> tuple[Blocks, Any]:
        if self.placement:
            nodes = preorder(self.root)
            ctx.placement = {id(nodes[i]): executor for i, executor in self.placement}
        ctx.default_executor = self.executor
        ctx.metrics.update(rows=0, bytes=0)
        return self.finish(ctx.partition, _counted(self.executor.execute(self.root, ctx.partition, ctx), ctx.metrics))

    def without_placement(self) -> StageTask:
        """The same task with every operator on the CPU (after a `DeviceFallback`)."""
        return StageTask(self.root, self.executor, self.finish)


def _counted(batches: Iterator[pa.RecordBatch], metrics: dict) -> Iterator[pa.RecordBatch]:
    """The batches unchanged, adding their rows and bytes to `metrics` as they pass; a task whose job
    was cancelled stops at the next batch."""
    for batch in batches:
        check_cancelled()
        metrics["rows"] += batch.num_rows
        metrics["bytes"] += batch.nbytes
        yield batch


@dataclass(frozen=True)
class WriteShuffle:
    """`finish` of a map stage: cut the batches into blocks by the stage's output partitioning
    (`separate`: each block in buffers of its own, for a runtime whose blocks leave the process)."""

    partitioning: Any
    separate: bool = False

    def __call__(self, partition: int, batches: Iterator[pa.RecordBatch]) -> tuple[Blocks, Any]:
        return partition_blocks(self.partitioning, partition, batches, self.separate)


@dataclass(frozen=True)
class ReturnResult:
    """`finish` of the result stage: the action's function of the partition's batches, no blocks."""

    result: Callable[[int, Iterator[pa.RecordBatch]], Any]

    def __call__(self, partition: int, batches: Iterator[pa.RecordBatch]) -> tuple[Blocks, Any]:
        return [], self.result(partition, batches)


@dataclass(frozen=True)
class CutByRange:
    """Cuts one range-exchange map task's whole block by bounds chosen from every task's sample."""

    block: BlockId
    partitioning: RangePartitioning
    bounds: list
    separate: bool = False

    def __call__(self, ctx: TaskContext) -> tuple[Blocks, Any]:
        blocks = cut_by_range(ctx.blocks.get(self.block), self.partitioning, self.bounds, self.separate)
        return blocks, block_sizes(blocks)


def stage_inputs(root: PhysicalPlan, partition: int, namespace: str) -> tuple[BlockId, ...]:
    """The blocks task `partition` of the stage rooted at `root` reads: shuffle and cache blocks.

    Partitions route as the executors route them: a coalesce reads a run of its child's partitions,
    a union one input's, a key filter every partition of its source, a broadcast read block 0.
    """
    ids: list[BlockId] = []

    def walk(node: PhysicalPlan, p: int) -> None:
        if isinstance(node, ShuffleReadExec):
            ids.extend(BlockId(namespace, node.stage_id, m, r) for m, r in node.blocks_for(p))
        elif isinstance(node, CachedExec):
            ids.append(BlockId("cache", node.cache_key, p, 0))
        elif isinstance(node, CoalesceExec):
            for q in node.input_partitions(p):
                walk(node.child, q)
        elif isinstance(node, UnionExec):
            located = node.input_for(p)
            if located is not None:
                walk(*located)
        elif isinstance(node, KeyFilterExec):
            for q in range(node.source.num_partitions):
                walk(node.source, q)
            walk(node.child, p)
        else:
            for child in node.children():
                walk(child, p)

    walk(root, partition)
    return tuple(dict.fromkeys(ids))


def stage_outputs(stage_id: int, partition: int, partitioning: Any, namespace: str) -> tuple[BlockId, ...]:
    """The blocks map task `partition` writes (none for the result stage)."""
    if partitioning is None:
        return ()
    return tuple(BlockId(namespace, stage_id, partition, r) for r in output_partitions(partitioning))


class InputBlocks:
    """A task's input blocks by id, as a runtime handed them over; reading any other block is an error."""

    def __init__(self, blocks: dict[BlockId, list[pa.RecordBatch]]):
        self._blocks = blocks

    def get(self, block: BlockId) -> list[pa.RecordBatch]:
        try:
            return self._blocks[block]
        except KeyError:
            raise QuiverError(f"task read block {block}, which is not among its inputs "
                              f"({len(self._blocks)} blocks)") from None


__all__ = ["BlocksLost", "CutByRange", "InputBlocks", "ReturnResult", "StageTask", "TaskResources", "TaskRun",
           "TaskSpec",
           "WriteShuffle", "preorder", "stage_inputs", "stage_outputs"]
