"""The DAG scheduler: runs a job's stages in dependency order, one task per partition.

Map stages write shuffle blocks; the result stage hands each partition's batches to the
action. A failing task is retried up to `maxFailures` times; an error that persists is
raised naming the stage, task and partition, with the original exception chained. A task
whose device operators meet data the device cannot hold (`DeviceFallback`) reruns at once
with every operator on the CPU, without counting as a failure. Shuffle blocks are freed as
soon as every stage that reads them has finished.

A rerun cannot duplicate output: a map task's blocks are put in the store only after its
batches are all computed (`write_shuffle`), a result task's value is only what its last
attempt returns, and a file sink keeps only the files of the attempt that reported them.
"""
from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pyarrow as pa
from quiver.engine.errors import AnalysisException, TaskFailedError
from quiver.engine.shuffle import finish_range_exchange, write_shuffle
from quiver.engine.store import BlockId, BlockStore
from quiver.executors.base import DeviceFallback, TaskContext
from quiver.planners.physical import RangePartitioning
from quiver.planners.stages import Stage, StageGraph

log = logging.getLogger("quiver.scheduler")

R = TypeVar("R")
_job_ids = itertools.count(1)


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


@dataclass
class JobMetrics:
    job_id: int
    stages: list[StageMetrics] = field(default_factory=list)
    seconds: float = 0.0


class DAGScheduler:
    """Runs stage graphs on a runtime with one executor."""

    def __init__(self, runtime, store: BlockStore, executor, max_failures: int = 4,
                 placer: Callable[[Stage, dict[int, tuple[int, int]]], dict[int, Any]] | None = None):
        self.runtime = runtime
        self.store = store
        self.executor = executor
        self.max_failures = max(1, max_failures)
        # Given a stage and the rows and bytes its finished parents wrote, the executor of each
        # operator (by node identity) placed off the default executor.
        self.placer = placer
        self.last_job: JobMetrics | None = None
        self._metrics_lock = threading.Lock()

    def _placement(self, stage: Stage, metrics: JobMetrics, stage_metrics: StageMetrics) -> dict[int, Any]:
        if self.placer is None:
            return {}
        actual = {m.stage_id: (m.rows_written, m.bytes_written) for m in metrics.stages}
        placed = self.placer(stage, actual)
        if placed:
            devices = {str(e.device) for e in placed.values()}
            stage_metrics.devices = ("cpu:0", *sorted(devices))
        return placed

    def run_job(self, graph: StageGraph, result_task: Callable[[int, Iterator[pa.RecordBatch]], R]) -> list[R]:
        """Run every stage; returns `result_task(partition, batches)` for each result partition, in order."""
        job_id = next(_job_ids)
        namespace = f"job{job_id}"
        metrics = JobMetrics(job_id)
        started = time.perf_counter()
        readers_left = {s.id: sum(1 for t in graph.stages if s.id in t.parents) for s in graph.stages}
        try:
            for stage in graph.stages[:-1]:
                self._run_map_stage(stage, job_id, namespace, metrics)
                self._release_parents(stage, readers_left, namespace)
            result = graph.result
            stage_metrics = StageMetrics(result.id, result.num_partitions)
            t0 = time.perf_counter()
            placed = self._placement(result, metrics, stage_metrics)
            tasks = [self._task(result, p, job_id, stage_metrics, placed,
                                lambda ctx, p=p: result_task(p, self.executor.execute(result.root, p, ctx)))
                     for p in range(result.num_partitions)]
            out = self.runtime.run_all(tasks)
            stage_metrics.seconds = time.perf_counter() - t0
            metrics.stages.append(stage_metrics)
            return out
        finally:
            self.store.drop_namespace(namespace)
            metrics.seconds = time.perf_counter() - started
            self.last_job = metrics

    def _run_map_stage(self, stage: Stage, job_id: int, namespace: str, metrics: JobMetrics) -> None:
        stage_metrics = StageMetrics(stage.id, stage.num_partitions)
        t0 = time.perf_counter()
        placed = self._placement(stage, metrics, stage_metrics)

        def body(ctx: TaskContext, p: int) -> dict:
            return write_shuffle(self.store, namespace, stage.id, p, stage.output,
                                 self.executor.execute(stage.root, p, ctx))

        tasks = [self._task(stage, p, job_id, stage_metrics, placed, lambda ctx, p=p: body(ctx, p))
                 for p in range(stage.num_partitions)]
        for written in self.runtime.run_all(tasks):
            stage_metrics.rows_written += written["rows"]
            stage_metrics.bytes_written += written["bytes"]
        if isinstance(stage.output, RangePartitioning):
            finish_range_exchange(self.store, namespace, stage.id, stage.num_partitions, stage.output)
        stage_metrics.seconds = time.perf_counter() - t0
        metrics.stages.append(stage_metrics)
        log.debug("stage %s done: %s tasks, %s rows", stage.id, stage.num_partitions, stage_metrics.rows_written)

    def _release_parents(self, stage: Stage, readers_left: dict[int, int], namespace: str) -> None:
        for parent in stage.parents:
            readers_left[parent] -= 1
            if readers_left[parent] == 0:
                self.store.drop(self.store.blocks_of(namespace, parent))

    def _task(self, stage: Stage, partition: int, job_id: int, stage_metrics: StageMetrics,
              placed: dict[int, Any], body: Callable[[TaskContext], R]) -> Callable[[], R]:
        def run() -> R:
            last: BaseException | None = None
            placement = placed
            failures = attempt = 0
            while failures < self.max_failures:
                ctx = TaskContext(stage.id, partition, attempt, self.store, job_id,
                                  placement=placement, default_executor=self.executor)
                attempt += 1
                with self._metrics_lock:
                    stage_metrics.attempts += 1
                try:
                    return body(ctx)
                except AnalysisException:
                    raise
                except DeviceFallback as exc:
                    if not placement:
                        raise TaskFailedError(
                            f"Task {partition} in stage {stage.id} (partition {partition}) met data no executor "
                            f"can hold, with every operator on the CPU: {exc}", stage.id, partition, attempt) from exc
                    log.warning("task %s of stage %s falls back to the CPU: %s", partition, stage.id, exc)
                    placement = {}
                    with self._metrics_lock:
                        stage_metrics.fallbacks += 1
                except Exception as exc:  # noqa: BLE001 — any task failure is retried, as in Spark
                    last = exc
                    failures += 1
                    log.warning("task %s of stage %s failed (attempt %s/%s): %s",
                                partition, stage.id, failures, self.max_failures, exc)
            raise TaskFailedError(
                f"Task {partition} in stage {stage.id} (partition {partition}) failed {self.max_failures} "
                f"times; most recent failure: {type(last).__name__}: {last}",
                stage.id, partition, self.max_failures,
            ) from last

        return run


__all__ = ["BlockId", "DAGScheduler", "JobMetrics", "StageMetrics"]
