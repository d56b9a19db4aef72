"""The DAG scheduler: runs a job's stages in dependency order, one task per partition, on any runtime.

Map stages write shuffle blocks; the result stage hands each partition's batches to the
action. Each stage becomes `TaskSpec`s that a runtime runs (threads, or Ray workers), so
this file is the same for every runtime. Failures are handled here, as Spark does:

- A failing task is retried up to `maxFailures` times; an error that persists is raised
  naming the stage, task and partition, with the original exception chained.
- A task whose device operators meet data the device cannot hold (`DeviceFallback`) reruns
  at once with every operator on the CPU, without counting as a failure.
- A task that cannot read its input blocks because the worker or node holding them died
  (`BlocksLost`, a fetch failure) has the producing tasks of the missing blocks run again
  from lineage (recursively, where their own inputs are gone too), then runs again.
- A cancelled job (its job group, a tag, all jobs: jobs.py) stops its tasks, is not retried, and
  raises `JobCancelledError` in the thread that ran the action; Ctrl-C during an action cancels
  the job the same way, then the `KeyboardInterrupt` goes on.

Shuffle blocks are freed as soon as every stage that reads them has finished. A rerun
cannot duplicate output: a map task's blocks replace any earlier attempt's under the same
ids, a result task's value is only what its last attempt returns, and a file sink keeps
only the files of the attempt that reported them.
"""
from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypeVar

import pyarrow as pa

from quiver.engine.core.errors import (
    AnalysisException,
    MemoryBudgetExceeded,
    QuiverNotSupported,
    ResultTooLargeError,
    SparkRuntimeException,
    StorageFullError,
    TaskFailedError,
)
from quiver.engine.execution.jobs import JobCancelledError, JobGroups, current_action
from quiver.engine.execution.runtime.base import Runtime
from quiver.engine.execution.tasks import (
    BlocksLost,
    CutByRange,
    ReturnResult,
    StageTask,
    TaskResources,
    TaskSpec,
    WriteShuffle,
    preorder,
    stage_inputs,
    stage_outputs,
)
from quiver.executors.base import DeviceFallback, Executor
from quiver.executors.blocks import BlockId, BlockStore
from quiver.executors.cancellation import Cancellation, TaskCancelled
from quiver.executors.cpu.shuffle import UNCUT, range_bounds
from quiver.executors.memory import MemorySettings
from quiver.planners.adaptive import (
    HOLDS_INPUT,
    AdaptiveDecision,
    AdaptiveSettings,
    ShuffleStatistics,
    TaskRoom,
    adapt_reads,
    device_room,
    oversized_tasks,
    place_skewed_tasks,
    skewed_tasks,
    switch_join,
    task_input_bytes,
    with_map_outputs,
)
from quiver.planners.physical.nodes import RangePartitioning, ShuffleReadExec
from quiver.planners.stages import Stage, StageGraph

log = logging.getLogger("quiver.scheduler")

R = TypeVar("R")
_job_ids = itertools.count(1)
# The kinds a skewed task may be placed on when its stage's device has no room for it.
_TASK_DEVICE_KINDS = ("cpu", "gpu", "npu")


class StagePlacer(Protocol):
    """Where a stage's operators run: given the stage and the rows and bytes its finished parents wrote, the
    executor of each operator (by node identity) placed off the default executor. `mode` asks for the stage
    as it would be placed on one kind of device (`cpu`, `gpu`, `npu`), where the session's
    `quiver.placement` allows it; None places it as that setting says."""

    def __call__(self, stage: Stage, actual: dict[int, tuple[int, int]],
                 mode: str | None = None) -> dict[int, Any]: ...


@dataclass
class TaskMetrics:
    """One attempt of one task, as a job report draws it: where and when it ran, and what it produced."""

    stage_id: int
    partition: int
    attempt: int
    # The worker that ran it (a job report lane): a thread of this process, or a Ray worker's node and pid.
    worker: str
    node: str
    devices: tuple[str, ...]
    started: float
    finished: float
    rows: int = 0
    bytes: int = 0
    # The failure of an attempt that did not succeed, in one line.
    error: str | None = None
    # Per operator that spilled: (spills, bytes written to spill files).
    spills: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        return max(0.0, self.finished - self.started)

    @property
    def spilled_bytes(self) -> int:
        return sum(b for _, b in self.spills.values())


@dataclass
class StageMetrics:
    stage_id: int
    tasks: int
    seconds: float = 0.0
    rows_written: int = 0
    bytes_written: int = 0
    attempts: int = 0
    # Each device the stage's operators ran on ("cpu:0", "gpu:0 (emulated)").
    devices: tuple[str, ...] = ("cpu:0",)
    # Tasks that met data their device could not hold and reran on the CPU.
    fallbacks: int = 0
    # Tasks of this stage run again because blocks they had written were lost with a worker or node.
    recomputed: int = 0
    # Where the tasks ran ("local", or Ray node ids), and what each asked of a worker.
    nodes: tuple[str, ...] = ()
    resources: TaskResources = field(default_factory=TaskResources)
    # Tasks finished so far, those running now, and the rows and bytes the finished ones' operators produced
    # (live, for progress).
    tasks_done: int = 0
    tasks_running: int = 0
    rows: int = 0
    bytes: int = 0
    # "map" (writes shuffle blocks for later stages) or "result" (hands batches to the action).
    kind: str = "map"
    # The stage's root operator, in one line, and how its output is partitioned.
    description: str = ""
    started: float = 0.0
    # Per operator of the stage that spilled, over its succeeded tasks: (spills, bytes written).
    spills: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def spilled_bytes(self) -> int:
        return sum(b for _, b in self.spills.values())


@dataclass
class JobMetrics:
    job_id: int
    stages: list[StageMetrics] = field(default_factory=list)
    seconds: float = 0.0
    # The runtime's block store as the job ended (bytes held, spilled), read when first asked for.
    store_stats: Callable[[], dict] | None = field(default=None, repr=False)
    # Every task attempt, in the order they ended.
    tasks: list[TaskMetrics] = field(default_factory=list)
    # When the job started (seconds since the epoch), the runtime it ran on, and how it ended.
    started: float = 0.0
    runtime: str = ""
    error: str | None = None
    # What adaptive execution changed, one line each, and the stages as they finally ran (empty when it
    # changed nothing).
    adaptive: list[str] = field(default_factory=list)
    final_stages: str = ""
    # The action that started the job (collect, count, show, write.parquet, ...; jobs.action), "" if none did.
    action: str = ""

    @property
    def object_store(self) -> dict:
        """The block store's state: for Ray, the object store's used and spilled bytes."""
        return self.store_stats() if self.store_stats else {}

    @property
    def bytes_shuffled(self) -> int:
        """Bytes the map stages wrote for later stages to read."""
        return sum(s.bytes_written for s in self.stages if s.kind == "map")

    @property
    def spilled_bytes(self) -> int:
        """Bytes the job's operators wrote to spill files (the block store's spills are in `object_store`)."""
        return sum(s.spilled_bytes for s in self.stages)

    def __repr__(self) -> str:
        state = f"failed: {self.error}" if self.error else f"{self.seconds:.3f} s"
        spilled = f", {self.spilled_bytes:,} bytes spilled" if self.spilled_bytes else ""
        if self.adaptive:
            spilled += f", {len(self.adaptive)} adaptive change{'s' if len(self.adaptive) != 1 else ''}"
        return (f"JobMetrics(job {self.job_id} on {self.runtime}: {len(self.stages)} stages, {len(self.tasks)} task "
                f"attempts, {self.bytes_shuffled:,} bytes shuffled{spilled}, {state})")

    @property
    def spills(self) -> dict[str, tuple[int, int]]:
        """Per operator kind, over every stage: (spills, bytes written to spill files)."""
        out: dict[str, tuple[int, int]] = {}
        for stage in self.stages:
            for op, (n, b) in stage.spills.items():
                was = out.get(op, (0, 0))
                out[op] = (was[0] + n, was[1] + b)
        return out


class JobListener:
    """Told as a job runs (Spark's SparkListener): progress displays and logs subclass it."""

    def on_job_start(self, job: JobMetrics) -> None:
        """The job is about to run its first stage."""

    def on_stage_start(self, job: JobMetrics, stage: StageMetrics) -> None:
        """A stage's tasks are about to be submitted."""

    def on_task_start(self, job: JobMetrics, stage: StageMetrics, partition: int) -> None:
        """An attempt of the task of `partition` started running (`stage.tasks_running` counts it)."""

    def on_task_end(self, job: JobMetrics, stage: StageMetrics, task: TaskMetrics) -> None:
        """One task attempt ended (`task.error` says whether it failed)."""

    def on_stage_end(self, job: JobMetrics, stage: StageMetrics) -> None:
        """Every task of a stage has succeeded."""

    def on_job_end(self, job: JobMetrics) -> None:
        """The job ended (`job.error` says whether it failed)."""


class _AdaptivePlan:
    """A job's stages as adaptive execution leaves them: each by id (rewritten in place as it is re-planned),
    the statistics of those finished, and the stages run, in order."""

    def __init__(self, graph: StageGraph):
        self.order = [s.id for s in graph.stages]
        self.stages = {s.id: s for s in graph.stages}
        self.result_id = graph.result.id
        self.finished: dict[int, ShuffleStatistics] = {}
        self.run: list[Stage] = []
        self._dropped: set[int] = set()
        # `_needed` for the stages as they were when it was last worked out (the stages themselves, so that
        # a rewritten stage, a new object, is seen), and each stage's reads.
        self._needed_for: tuple[Stage, ...] = ()
        self._needed_ids: set[int] = set()
        self._reads: dict[int, tuple[Stage, set[int]]] = {}

    def finish(self, stage: Stage, stats: ShuffleStatistics) -> None:
        """`stage` ran and wrote `stats`: the stages still to run read the map outputs it really wrote."""
        self.finished[stage.id] = stats
        self.run.append(stage)
        for stage_id in self.pending():
            if stage.id in self.reads_of(stage_id):
                self.stages[stage_id] = with_map_outputs(self.stages[stage_id], stats)

    def needed(self, stage_id: int) -> bool:
        """Whether the result still depends on `stage_id` (a stage merged into another, or below an empty
        relation, is not)."""
        return stage_id in self._needed()

    def _needed(self) -> set[int]:
        current = tuple(self.stages.values())
        if len(current) == len(self._needed_for) and all(a is b for a, b in zip(current, self._needed_for)):
            return self._needed_ids
        needed: set[int] = set()
        todo = [self.result_id]
        while todo:
            stage_id = todo.pop()
            if stage_id in needed:
                continue
            needed.add(stage_id)
            todo.extend(self.reads_of(stage_id))
        self._needed_for, self._needed_ids = current, needed
        return needed

    def reads_of(self, stage_id: int) -> set[int]:
        """The stages whose blocks stage `stage_id`, as it stands now, reads."""
        stage = self.stages[stage_id]
        known = self._reads.get(stage_id)
        if known is None or known[0] is not stage:
            known = self._reads[stage_id] = (stage, _reads(stage))
        return known[1]

    def pending(self) -> list[int]:
        """Stages not yet run that the result still needs, in run order."""
        needed = self._needed()
        return [s for s in self.order if s in needed and s not in self.finished]

    def pending_stages(self) -> dict[int, Stage]:
        return {s: self.stages[s] for s in self.pending()}

    def unread(self) -> list[int]:
        """Finished stages no pending stage reads: their blocks may go (each named once)."""
        read = {r for s in self.pending() for r in self.reads_of(s)}
        out = [s for s in self.finished if s not in read and s not in self._dropped]
        self._dropped.update(out)
        return out


def _reads(stage: Stage) -> set[int]:
    """The stages whose blocks `stage` reads."""
    return {n.stage_id for n in stage.root.walk() if isinstance(n, ShuffleReadExec)}


@dataclass
class _Job:
    """One running job: its ids, metrics, and which task spec wrote each block (its lineage)."""

    id: int
    namespace: str
    metrics: JobMetrics
    producers: dict[BlockId, TaskSpec] = field(default_factory=dict)
    stage_metrics: dict[int, StageMetrics] = field(default_factory=dict)
    # Per stage, the partitions whose task has succeeded (a rerun or range cut is not counted twice).
    done: dict[int, set[int]] = field(default_factory=dict)
    # The query's ANSI mode, which every task of the job carries.
    ansi: bool = False
    # The session's memory budget and spill folder, which every task of the job carries.
    memory: MemorySettings = field(default_factory=MemorySettings)
    # Set when the job is cancelled: its tasks watch it.
    cancel: Cancellation = field(default_factory=Cancellation)
    # Per stage, the placement of each task adaptive execution moved to another device (by partition).
    task_placements: dict[int, dict[int, dict[int, Any]]] = field(default_factory=dict)
    # Per (stage id, mode), the stage as last placed and its placement: adaptive execution and the stage's
    # tasks ask for the same stage's placement, which costs a placement search and the fragments' translation.
    placements: dict[tuple[int, str | None], tuple[Stage, dict[int, Any]]] = field(default_factory=dict)


class DAGScheduler:
    """Runs stage graphs on a runtime with one default (CPU) executor."""

    def __init__(self, runtime: Runtime, executor: Executor, max_failures: int = 4,
                 placer: StagePlacer | None = None,
                 job_record: type[JobMetrics] = JobMetrics):
        self.runtime = runtime
        self.executor = executor
        self.max_failures = max(1, max_failures)
        self.placer = placer
        # What each job's metrics are recorded in: a session records them in a `ReportedJob` (engine/ui), which
        # can draw itself, without this layer knowing how.
        self.job_record = job_record
        self.last_job: JobMetrics | None = None
        # The last job each thread ran, for the action that ran it (a session's threads run jobs side by side).
        self._thread_jobs = threading.local()
        # Told of each job, stage and task as they run: progress displays.
        self.listeners: list[JobListener] = []
        # The job group and tags each thread gives its jobs, and the running jobs, for cancelling them.
        self.jobs = JobGroups()

    @property
    def thread_last_job(self) -> JobMetrics | None:
        """The last job the calling thread ran."""
        return getattr(self._thread_jobs, "last", None)

    @property
    def store(self) -> BlockStore:
        return self.runtime.store

    @property
    def _separate_blocks(self) -> bool:
        """Whether blocks leave the process (Ray), so each must own its buffers rather than slice shared ones."""
        return self.runtime.blocks_leave_process

    def run_job(self, graph: StageGraph, result_task: Callable[[int, Iterator[pa.RecordBatch]], R],
                ansi: bool = False, memory: MemorySettings | None = None,
                adaptive: AdaptiveSettings | None = None) -> list[R]:
        """Run every stage; returns `result_task(partition, batches)` for each result partition, in order.
        `ansi`: the query's ANSI mode, which each task runs in; `memory`: the budget its tasks spill under;
        `adaptive`: how the stages not yet run are re-planned from the sizes the finished ones wrote
        (off where None)."""
        job_id = next(_job_ids)
        job = _Job(job_id, f"job{job_id}",
                   self.job_record(job_id, store_stats=getattr(self.runtime, "store_stats", None),
                                   started=time.time(), runtime=type(self.runtime).__name__, action=current_action()),
                   ansi=ansi, memory=memory or MemorySettings())
        started = time.perf_counter()
        settings = adaptive if adaptive is not None and adaptive.enabled else None
        plan = _AdaptivePlan(graph)
        job.cancel = self.jobs.start(job_id).token
        self._tell("on_job_start", job.metrics)
        try:
            for stage_id in [s.id for s in graph.stages[:-1]]:
                if settings is not None:
                    self._switch_joins(plan, job, settings)
                if not plan.needed(stage_id):
                    continue
                stage = self._adapted(plan, stage_id, job, settings)
                plan.finish(stage, self._run_map_stage(stage, job))
                self.store.drop([b for s in plan.unread() for b in self.store.blocks_of(job.namespace, s)])
            if settings is not None:
                self._switch_joins(plan, job, settings)
            result = self._adapted(plan, graph.result.id, job, settings)
            plan.run.append(result)
            job.metrics.final_stages = StageGraph(tuple(plan.run)).describe() if job.metrics.adaptive else ""
            metrics = self._stage_metrics(result, job, "result")
            t0 = time.perf_counter()
            specs = self._stage_specs(result, job, metrics, ReturnResult(result_task))
            out = self._run_specs(specs, job)
            metrics.seconds = time.perf_counter() - t0
            self._tell("on_stage_end", job.metrics, metrics)
            return out
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                job.cancel.cancel("because the driver was interrupted")
            job.metrics.error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            raise
        finally:
            self.jobs.finish(job_id)
            self.store.drop_namespace(job.namespace)
            job.metrics.seconds = time.perf_counter() - started
            self.last_job = self._thread_jobs.last = job.metrics
            self._tell("on_job_end", job.metrics)

    # ---------------------------------------------------------- stages

    def _stage_metrics(self, stage: Stage, job: _Job, kind: str = "map") -> StageMetrics:
        metrics = StageMetrics(stage.id, stage.num_partitions, kind=kind, description=_describe(stage),
                               started=time.time())
        job.stage_metrics[stage.id] = metrics
        job.metrics.stages.append(metrics)
        return metrics

    def _tell(self, event: str, *args: Any) -> None:
        """Tell each listener of `event`; a listener's failure is logged, never the job's."""
        for listener in self.listeners:
            try:
                getattr(listener, event)(*args)
            except Exception:  # noqa: BLE001 — a progress display must not fail the job it shows
                log.warning("job listener %s failed on %s", type(listener).__name__, event, exc_info=True)

    def _stage_specs(self, stage: Stage, job: _Job, metrics: StageMetrics, finish) -> list[TaskSpec]:
        placed = self._placement(stage, job)
        moved = job.task_placements.get(stage.id, {})
        nodes = preorder(stage.root)
        bodies: dict[int, tuple[StageTask, TaskResources]] = {}

        def body_for(task_placed: dict[int, Any]) -> tuple[StageTask, TaskResources]:
            key = id(task_placed)
            if key not in bodies:
                placement = tuple((i, task_placed[id(n)]) for i, n in enumerate(nodes) if id(n) in task_placed)
                bodies[key] = StageTask(stage.root, self.executor, finish, placement), _resources(task_placed.values())
            return bodies[key]

        home = body_for(placed)
        metrics.resources = home[1]
        executors = [e for task_placed in (placed, *moved.values()) for e in task_placed.values()]
        if executors:
            metrics.devices = ("cpu:0", *sorted({str(e.device) for e in executors}))
        self._tell("on_stage_start", job.metrics, metrics)
        specs = []
        for p in range(stage.num_partitions):
            body, resources = body_for(moved[p]) if p in moved else home
            specs.append(TaskSpec(stage.id, p, job.id, body, stage_inputs(stage.root, p, job.namespace),
                                  stage_outputs(stage.id, p, stage.output, job.namespace), resources, ansi=job.ansi,
                                  memory=job.memory))
        return specs

    def _placement(self, stage: Stage, job: _Job, mode: str | None = None) -> dict[int, Any]:
        """The executors of the stage's operators placed off the CPU (`mode`: as `StagePlacer` takes it), worked
        out once per version of the stage."""
        if self.placer is None:
            return {}
        known = job.placements.get((stage.id, mode))
        if known is not None and known[0] is stage:
            return known[1]
        actual = {m.stage_id: (m.rows_written, m.bytes_written) for m in job.metrics.stages}
        placed = self.placer(stage, actual, mode)
        job.placements[(stage.id, mode)] = (stage, placed)
        return placed

    def _switch_joins(self, plan: _AdaptivePlan, job: _Job, settings: AdaptiveSettings) -> None:
        """Re-plan each stage not yet run whose shuffled join has a finished side small enough to broadcast
        (or empty), before the other side's map stage runs."""
        for stage_id in plan.pending():
            switched = switch_join(plan.stages[stage_id], plan.pending_stages(), plan.finished, settings)
            if switched is not None:
                plan.stages[stage_id], decision = switched
                self._decided(job, decision)

    def _adapted(self, plan: _AdaptivePlan, stage_id: int, job: _Job, settings: AdaptiveSettings | None) -> Stage:
        """The stage about to run, its reads cut into tasks by its inputs' real sizes."""
        stage = plan.stages[stage_id]
        if settings is None:
            return stage
        adapted, decisions = adapt_reads(stage, plan.finished, settings)
        device = _device_of(self._placement(adapted, job)) if decisions else None
        if device is not None:
            # Placed on a GPU or NPU, the stage's partitions are sized for that device's memory.
            label, free = device
            adapted, decisions = adapt_reads(stage, plan.finished, settings.for_device(free))
            decisions = [replace(d, detail=f"{d.detail}, sized for {label}") for d in decisions]
        for decision in decisions:
            self._decided(job, decision)
        plan.stages[stage_id] = adapted
        job.task_placements[stage_id] = self._skewed_task_placements(adapted, plan.finished, job, settings)
        return adapted

    def _skewed_task_placements(self, stage: Stage, finished: dict[int, ShuffleStatistics], job: _Job,
                                settings: AdaptiveSettings) -> dict[int, dict[int, Any]]:
        """The placement of each task of `stage` that is skewed past what its device may hold, on the device
        with the room for it (`place_skewed_tasks`), by partition; the decision is recorded."""
        sizes = task_input_bytes(stage, finished) if self.placer is not None else None
        if sizes is None or not skewed_tasks(sizes, settings):
            return {}
        home_placed = self._placement(stage, job)
        home = self._room(home_placed, settings)
        if not oversized_tasks(sizes, home, settings):
            return {}
        options: dict[str, tuple[TaskRoom, dict[int, Any]]] = {}
        for kind in _TASK_DEVICE_KINDS:
            placed = self._placement(stage, job, kind)
            room = self._room(placed, settings)
            if room.device != home.device and room.device not in options and _holds_input_on(stage, placed, kind):
                options[room.device] = (room, placed)
        moves, decisions = place_skewed_tasks(stage.id, sizes, home, [room for room, _ in options.values()],
                                              settings)
        for decision in decisions:
            self._decided(job, decision)
        return {task: options[label][1] for task, label in moves.items()}

    def _room(self, placed: dict[int, Any], settings: AdaptiveSettings) -> TaskRoom:
        """What one task of a stage placed as `placed` may read on its device: a GPU's or NPU's free memory
        share, else a concurrent CPU task's share of the memory budget."""
        device = _device_of(placed)
        if device is None:
            return TaskRoom(str(self.executor.device), settings.max_partition_bytes)
        return device_room(*device)

    def _decided(self, job: _Job, decision: AdaptiveDecision) -> None:
        job.metrics.adaptive.append(decision.describe())
        log.debug("adaptive: %s", decision.describe())

    def _run_map_stage(self, stage: Stage, job: _Job) -> ShuffleStatistics:
        """Run a map stage; what it wrote, per map task and reduce partition."""
        metrics = self._stage_metrics(stage, job)
        t0 = time.perf_counter()
        specs = self._stage_specs(stage, job, metrics, WriteShuffle(stage.output, self._separate_blocks))
        written = self._run_specs(specs, job)
        for w in written:
            metrics.rows_written += w["rows"]
            metrics.bytes_written += w["bytes"]
        if isinstance(stage.output, RangePartitioning):
            written = self._cut_range_exchange(stage, job, [(w["rows"], w["sample"]) for w in written])
        metrics.seconds = time.perf_counter() - t0
        self._tell("on_stage_end", job.metrics, metrics)
        log.debug("stage %s done: %s tasks, %s rows", stage.id, stage.num_partitions, metrics.rows_written)
        return ShuffleStatistics(stage.id, tuple(tuple(w["block_bytes"]) for w in written),
                                 tuple(tuple(w["block_rows"]) for w in written))

    def _cut_range_exchange(self, stage: Stage, job: _Job, samples: list) -> list[dict]:
        """Bounds from every map task's sample, then one task per map output cutting it by them; what each
        cut wrote."""
        bounds = range_bounds(samples, stage.output)
        n = stage.output.num_partitions
        specs = []
        for m in range(stage.num_partitions):
            whole = BlockId(job.namespace, stage.id, m, UNCUT)
            specs.append(TaskSpec(stage.id, m, job.id, CutByRange(whole, stage.output, bounds, self._separate_blocks),
                                  (whole,),
                                  tuple(BlockId(job.namespace, stage.id, m, r) for r in range(n)), ansi=job.ansi,
                                  memory=job.memory))
        cuts = self._run_specs(specs, job)
        self.store.drop([s.inputs[0] for s in specs])
        return cuts

    # ---------------------------------------------------------- tasks

    def _run_specs(self, specs: list[TaskSpec], job: _Job) -> list[Any]:
        """Run tasks until each succeeds; retries failures, falls back from devices, recomputes lost blocks."""
        values: list[Any] = [None] * len(specs)
        failures = [0] * len(specs)
        recomputes = [0] * len(specs)
        for spec in specs:
            for block in spec.outputs:
                job.producers[block] = spec
        pending = list(enumerate(specs))
        while pending:
            self._check_cancelled(job)
            batch = [s for _, s in pending]
            outcomes = self.runtime.run_tasks(batch,
                                              lambda k, outcome, batch=batch: self._task_ended(batch[k], outcome, job),
                                              job.cancel,
                                              on_start=lambda k, batch=batch: self._task_started(batch[k], job))
            self._check_cancelled(job)
            retry: list[tuple[int, TaskSpec]] = []
            for (i, spec), outcome in zip(pending, outcomes):
                error = outcome.error
                if error is None:
                    values[i] = outcome.value
                    continue
                retry.append((i, self._after_failure(spec, error, failures, recomputes, i, job)))
            pending = retry
        return values

    def _task_started(self, spec: TaskSpec, job: _Job) -> None:
        """Count a task of a stage's own work (not a range exchange's cut) as running, and tell the listeners."""
        metrics = job.stage_metrics.get(spec.stage_id)
        if metrics is None or not isinstance(spec.body, StageTask):
            return
        metrics.tasks_running += 1
        self._tell("on_task_start", job.metrics, metrics, spec.partition)

    def _task_ended(self, spec: TaskSpec, outcome: Any, job: _Job) -> None:
        """Record one task attempt in the job's metrics and tell the listeners, as it ends."""
        task = TaskMetrics(spec.stage_id, spec.partition, spec.attempt, outcome.worker, outcome.node,
                           _task_devices(spec), outcome.started, outcome.finished, outcome.rows, outcome.bytes,
                           None if outcome.error is None else _one_line(outcome.error), dict(outcome.spills))
        job.metrics.tasks.append(task)
        metrics = job.stage_metrics.get(spec.stage_id)
        if metrics is None:
            return
        metrics.attempts += 1
        if outcome.node not in metrics.nodes:
            metrics.nodes = (*metrics.nodes, outcome.node)
        if isinstance(spec.body, StageTask):
            metrics.tasks_running = max(0, metrics.tasks_running - 1)
        done = job.done.setdefault(spec.stage_id, set())
        if outcome.error is None and isinstance(spec.body, StageTask) and spec.partition not in done:
            done.add(spec.partition)
            metrics.tasks_done = len(done)
            metrics.rows += outcome.rows
            metrics.bytes += outcome.bytes
            for operator, (count, nbytes) in outcome.spills.items():
                was = metrics.spills.get(operator, (0, 0))
                metrics.spills[operator] = (was[0] + count, was[1] + nbytes)
        self._tell("on_task_end", job.metrics, metrics, task)

    def _after_failure(self, spec: TaskSpec, error: BaseException, failures: list[int], recomputes: list[int],
                       i: int, job: _Job) -> TaskSpec:
        """The spec to run next after `error`, or raise when the job cannot go on."""
        again = replace(spec, attempt=spec.attempt + 1)
        if isinstance(error, (AnalysisException, QuiverNotSupported, SparkRuntimeException, StorageFullError,
                              MemoryBudgetExceeded, ResultTooLargeError)):
            raise error  # the query's own fault (a bad value under ANSI mode, a full disk): every attempt meets it
        if isinstance(error, TaskCancelled):
            self._check_cancelled(job)
        if isinstance(error, BlocksLost):
            recomputes[i] += 1
            if recomputes[i] > self.max_failures:
                raise self._failed(spec, self.max_failures, error, "lost its input blocks")
            log.warning("task %s of stage %s lost %s input block(s); recomputing them from lineage",
                        spec.partition, spec.stage_id, len(error.blocks))
            self._recompute(error.blocks, job, spec)
            return again
        if isinstance(error, DeviceFallback):
            body = spec.body
            if not getattr(body, "placement", ()):
                raise TaskFailedError(
                    f"Task {spec.partition} in stage {spec.stage_id} (partition {spec.partition}) met data no "
                    f"executor can hold, with every operator on the CPU: {error}", spec.stage_id, spec.partition,
                    spec.attempt + 1) from error
            log.warning("task %s of stage %s falls back to the CPU: %s", spec.partition, spec.stage_id, error)
            metrics = job.stage_metrics.get(spec.stage_id)
            if metrics is not None:
                metrics.fallbacks += 1
            return replace(again, body=body.without_placement(), resources=TaskResources())
        failures[i] += 1
        log.warning("task %s of stage %s failed (attempt %s/%s): %s",
                    spec.partition, spec.stage_id, failures[i], self.max_failures, error)
        if failures[i] >= self.max_failures:
            raise self._failed(spec, self.max_failures, error, f"failed {self.max_failures} times")
        return again

    def _recompute(self, lost: tuple[BlockId, ...], job: _Job, reader: TaskSpec) -> None:
        """Run again the tasks that wrote the lost blocks (each once), as Spark resubmits on a fetch failure."""
        producers: dict[int, TaskSpec] = {}
        for block in lost:
            spec = job.producers.get(block)
            if spec is None:
                raise TaskFailedError(
                    f"Task {reader.partition} in stage {reader.stage_id} (partition {reader.partition}) lost block "
                    f"{block}, which no task of this job wrote (a cached block whose worker died); unpersist and "
                    "cache the DataFrame again", reader.stage_id, reader.partition, reader.attempt + 1)
            producers[id(spec)] = spec
        for spec in producers.values():
            metrics = job.stage_metrics.get(spec.stage_id)
            if metrics is not None:
                metrics.recomputed += 1
        self._run_specs([replace(s, attempt=s.attempt + 1) for s in producers.values()], job)

    @staticmethod
    def _check_cancelled(job: _Job) -> None:
        if job.cancel.cancelled:
            raise JobCancelledError(job.id, job.cancel.reason)

    @staticmethod
    def _failed(spec: TaskSpec, attempts: int, error: BaseException, what: str) -> TaskFailedError:
        exc = TaskFailedError(
            f"Task {spec.partition} in stage {spec.stage_id} (partition {spec.partition}) {what}; "
            f"most recent failure: {type(error).__name__}: {error}", spec.stage_id, spec.partition, attempts)
        exc.__cause__ = error
        return exc


def _device_of(placed: dict[int, Any]) -> tuple[str, int | None] | None:
    """The GPU or NPU (its label and free memory, None where unbounded) a stage's operators are placed on;
    None when all stay on the CPU (Quiver's executor or a native fragment's)."""
    executors = [e for e in placed.values() if e.device.kind != "cpu"]
    if not executors:
        return None
    free = [f for f in (getattr(e, "free_bytes", lambda: None)() for e in executors) if f is not None]
    return str(executors[0].device), (min(free) if free else None)


def _holds_input_on(stage: Stage, placed: dict[int, Any], kind: str) -> bool:
    """Whether every operator of `stage` that holds its input (a join's hash table, an aggregate's, a sort's
    runs) runs on a device of `kind` as `placed` places them (the CPU: none placed on a GPU or NPU)."""
    holders = [n for n in stage.root.walk() if isinstance(n, HOLDS_INPUT)]
    if not holders:
        return False

    def on(node: Any) -> str:
        executor = placed.get(id(node))
        return "cpu" if executor is None else executor.device.kind

    return all(on(n) == kind for n in holders)


def _task_devices(spec: TaskSpec) -> tuple[str, ...]:
    """The devices a task's operators ran on: each placed executor's, else the CPU."""
    placed = getattr(spec.body, "placement", ())
    return tuple(sorted({str(e.device) for _, e in placed})) if placed else ("cpu:0",)


def _describe(stage: Stage) -> str:
    """A stage in one line: its root operator, as explain() prints it."""
    return stage.root.node_string().splitlines()[0][:120]


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"[:300]


def _resources(executors) -> TaskResources:
    """What a task asks of a worker: a GPU or NPU when any of its operators is placed on one."""
    devices = [e.device for e in executors]
    kinds = {d.kind for d in devices}
    return TaskResources(1.0, 1.0 if "gpu" in kinds else 0.0, 1.0 if "npu" in kinds else 0.0,
                         emulated=bool(devices) and all(d.emulated for d in devices))


__all__ = ["BlockId", "DAGScheduler", "JobListener", "JobMetrics", "StageMetrics", "TaskMetrics"]
