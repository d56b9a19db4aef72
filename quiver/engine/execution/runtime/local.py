"""The embedded runtime: a pool of N worker threads for `local[N]`.

Arrow kernels release the GIL, so threads run partitions in parallel; blocks stay the
producer's batches, held by reference in one `InProcessBlockStore`. A thread cannot be stopped
from outside, so a cancelled job's tasks stop themselves: they see their token between batches,
and user Python code runs in worker processes that cancellation kills (executors/cpu/worker_pool.py).
"""
from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from quiver.engine.execution.runtime.base import OnOutcome, OnStart, TaskOutcome
from quiver.engine.execution.tasks import TaskSpec
from quiver.executors.blocks import InProcessBlockStore
from quiver.executors.cancellation import Cancellation, TaskCancelled, cancellable

# How long a cancelled job's running tasks get to stop before the runtime stops waiting for them.
CANCEL_GRACE_S = 3.0


class LocalRuntime:
    """Runs tasks on a thread pool of `parallelism` workers over one in-process block store."""

    blocks_leave_process = False

    def __init__(self, parallelism: int):
        self.parallelism = max(1, parallelism)
        self.store = InProcessBlockStore()
        self._pool = self._new_pool()

    def _new_pool(self) -> ThreadPoolExecutor:
        return ThreadPoolExecutor(max_workers=self.parallelism, thread_name_prefix="quiver-task")

    def run_tasks(self, tasks: Sequence[TaskSpec], on_outcome: OnOutcome | None = None,
                  cancel: Cancellation | None = None, on_start: OnStart | None = None) -> list[TaskOutcome]:
        outcomes: list[TaskOutcome | None] = [None] * len(tasks)
        if len(tasks) == 1 or self.parallelism == 1:
            for i, task in enumerate(tasks):
                if on_start is not None:
                    on_start(i)
                outcomes[i] = self._run(task, cancel)
                if on_outcome is not None:
                    on_outcome(i, outcomes[i])
            return outcomes
        # A worker thread notes each task it starts here; the caller's thread tells `on_start`, so listeners
        # are only ever called from one thread. (list.append and popleft are atomic.)
        started: deque[int] = deque()
        futures = {self._pool.submit(self._run, t, cancel, started, i): i for i, t in enumerate(tasks)}
        pending = set(futures)
        try:
            while pending:
                # Wake up now and then to see a cancellation, and tasks that started, while every task still runs.
                done, pending = wait(pending, timeout=0.1 if cancel is not None or on_start is not None else None,
                                     return_when=FIRST_COMPLETED)
                while started and on_start is not None:
                    on_start(started.popleft())
                for future in done:
                    i = futures[future]
                    outcomes[i] = future.result()
                    if on_outcome is not None:
                        on_outcome(i, outcomes[i])
                if pending and cancel is not None and cancel.cancelled:
                    self._stop(pending)
                    for future in pending:
                        i = futures[future]
                        outcomes[i] = future.result() if future.done() and not future.cancelled() else \
                            TaskOutcome(error=TaskCancelled(f"task cancelled: {cancel.reason}"))
                    break
        except BaseException:
            # Ctrl-C (or a listener's error) in the driver: the job's tasks stop before the error goes on,
            # so no task keeps running and the next job finds the workers free.
            if cancel is not None:
                cancel.cancel("because the driver was interrupted")
            self._stop(pending)
            raise
        return outcomes

    def _stop(self, pending: set[Future]) -> None:
        """Drop tasks not started, give running ones CANCEL_GRACE_S to stop (their token is set), and
        replace the thread pool if some do not, so they cannot hold up the next job."""
        for future in pending:
            future.cancel()
        _, stuck = wait(pending, timeout=CANCEL_GRACE_S)
        if stuck:
            old, self._pool = self._pool, self._new_pool()
            old.shutdown(wait=False, cancel_futures=True)

    def _run(self, task: TaskSpec, cancel: Cancellation | None = None, started_tasks: deque[int] | None = None,
             index: int = 0) -> TaskOutcome:
        if started_tasks is not None:
            started_tasks.append(index)
        worker = threading.current_thread().name
        worker = "driver" if worker == "MainThread" else worker
        started = time.time()
        if cancel is not None and cancel.cancelled:
            return TaskOutcome(error=TaskCancelled(f"task cancelled: {cancel.reason}"), worker=worker,
                               started=started)
        try:
            with cancellable(cancel):
                run = task.run(self.reader(task))
        except Exception as exc:  # noqa: BLE001 — the scheduler decides what a failure means
            return TaskOutcome(error=exc, worker=worker, started=started)
        for block, batches in zip(task.outputs, run.blocks):
            self.store.put(block, batches)
        return TaskOutcome(run.value, worker=worker, rows=run.rows, bytes=run.bytes, started=run.started,
                           finished=run.finished, spills=run.spills)

    def reader(self, task: TaskSpec):
        """Where `task` reads blocks: the whole store (threads share it)."""
        return self.store

    def inventory(self) -> dict[str, float]:
        return {"CPU": float(self.parallelism)}

    def store_stats(self) -> dict[str, int]:
        """Bytes the block store holds in memory, and what it has spilled to disk under the memory budget."""
        return self.store.stats()

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
