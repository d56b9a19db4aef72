"""The embedded runtime: a pool of N worker threads for `local[N]`.

Arrow kernels release the GIL, so threads run partitions in parallel; blocks stay the
producer's batches, held by reference in one `InProcessBlockStore`.
"""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed

from quiver.engine.execution.runtime.base import OnOutcome, TaskOutcome
from quiver.engine.execution.tasks import TaskSpec
from quiver.executors.blocks import InProcessBlockStore


class LocalRuntime:
    """Runs tasks on a thread pool of `parallelism` workers over one in-process block store."""

    blocks_leave_process = False

    def __init__(self, parallelism: int):
        self.parallelism = max(1, parallelism)
        self.store = InProcessBlockStore()
        self._pool = ThreadPoolExecutor(max_workers=self.parallelism, thread_name_prefix="quiver-task")

    def run_tasks(self, tasks: Sequence[TaskSpec], on_outcome: OnOutcome | None = None) -> list[TaskOutcome]:
        outcomes: list[TaskOutcome | None] = [None] * len(tasks)
        if len(tasks) == 1 or self.parallelism == 1:
            for i, task in enumerate(tasks):
                outcomes[i] = self._run(task)
                if on_outcome is not None:
                    on_outcome(i, outcomes[i])
            return outcomes
        futures = {self._pool.submit(self._run, t): i for i, t in enumerate(tasks)}
        for future in as_completed(futures):
            i = futures[future]
            outcomes[i] = future.result()
            if on_outcome is not None:
                on_outcome(i, outcomes[i])
        return outcomes

    def _run(self, task: TaskSpec) -> TaskOutcome:
        worker = threading.current_thread().name
        worker = "driver" if worker == "MainThread" else worker
        started = time.time()
        try:
            run = task.run(self.reader(task))
        except Exception as exc:  # noqa: BLE001 — the scheduler decides what a failure means
            return TaskOutcome(error=exc, worker=worker, started=started)
        for block, batches in zip(task.outputs, run.blocks):
            self.store.put(block, batches)
        return TaskOutcome(run.value, worker=worker, rows=run.rows, bytes=run.bytes, started=run.started,
                           finished=run.finished)

    def reader(self, task: TaskSpec):
        """Where `task` reads blocks: the whole store (threads share it)."""
        return self.store

    def inventory(self) -> dict[str, float]:
        return {"CPU": float(self.parallelism)}

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def parse_local_master(master: str, cpu_count: int | None = None) -> int | None:
    """Threads for `local`, `local[N]`, `local[*]`; None if `master` is not a local master."""
    m = master.strip()
    if m == "local":
        return 1
    if m.startswith("local[") and m.endswith("]"):
        inner = m[6:-1].split(",")[0].strip()
        if inner == "*":
            return cpu_count or os.cpu_count() or 1
        if inner.isdigit() and int(inner) > 0:
            return int(inner)
    return None
