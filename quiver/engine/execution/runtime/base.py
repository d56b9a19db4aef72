"""The runtime seam: where a stage's tasks run (threads in this process, or Ray workers) and where blocks live.

A runtime runs `TaskSpec`s (quiver/engine/execution/tasks.py) and keeps the blocks they write in its
`store`; the scheduler above it is the same for every runtime.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from quiver.engine.execution.tasks import TaskSpec
from quiver.executors.blocks import BlockStore
from quiver.executors.cancellation import Cancellation


@dataclass
class TaskOutcome:
    """What one task attempt came to: its value, or the exception it raised (then `value` is None)."""

    value: Any = None
    error: BaseException | None = None
    # Where it ran ("local", or a Ray node id), for metrics and for finding blocks a dead node held.
    node: str = "local"
    # The worker that ran it (a thread of this process, or a Ray worker's node and pid): a job report lane.
    worker: str = "driver"
    # Rows and bytes its operators produced, and when it ran (seconds since the epoch).
    rows: int = 0
    bytes: int = 0
    started: float = field(default_factory=time.time)
    finished: float = field(default_factory=time.time)
    # Per operator that spilled: (spills, bytes written to spill files).
    spills: dict[str, tuple[int, int]] = field(default_factory=dict)


# Called with a task's index in the list given to `run_tasks` and its outcome, as each task ends.
OnOutcome = Callable[[int, TaskOutcome], None]
# Called with a task's index in the list given to `run_tasks` as the task starts, before its outcome.
OnStart = Callable[[int], None]


class Runtime(Protocol):
    """Runs task specs concurrently; keeps their output blocks in `store`."""

    parallelism: int
    store: BlockStore
    # Whether blocks are serialized out of the producing process (Ray), so each must own its buffers.
    blocks_leave_process: bool

    def run_tasks(self, tasks: Sequence[TaskSpec], on_outcome: OnOutcome | None = None,
                  cancel: Cancellation | None = None, on_start: OnStart | None = None) -> list[TaskOutcome]:
        """Run every task once; the outcomes in order. A task's output blocks are in `store` once it succeeds.

        `on_start` and `on_outcome` are called in the caller's thread as each task starts and ends, for live
        progress; a task's start is told before its end (a start is seen within the runtime's polling
        interval, 0.1-0.2 s). Once `cancel` is set, the tasks are stopped (within about a second) and those
        that did not finish end with `TaskCancelled`; an interrupt (Ctrl-C) while waiting sets `cancel` and
        is raised again."""

    def inventory(self) -> dict[str, float]:
        """Devices and CPUs the runtime's workers have in all: {"CPU": n, "GPU": g, "NPU": k}."""

    def shutdown(self) -> None:
        """Release workers (and a cluster this runtime started)."""
