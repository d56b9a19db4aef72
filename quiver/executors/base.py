"""The executor seam: a `Device` and an `Executor` that runs a stage's operators on it.

Executors declare what they can run as data (`capabilities`), so the planner can place
operators without knowing devices by name. The CPU executor is always present.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol

import pyarrow as pa

from quiver.engine.core.errors import QuiverError
from quiver.executors.blocks import BlockReader
from quiver.executors.memory import MemoryManager, MemorySettings, process_memory
from quiver.executors.spill import SpillSpace, process_spill_folder
from quiver.planners.physical.nodes import PhysicalPlan


class DeviceFallback(QuiverError):
    """An operator placed on a device met data the device cannot hold; the task reruns on the CPU.

    Placement decides from types before any data moves, so a value only the data reveals (a
    decimal beyond 64 bits, a sum that may leave them) is raised as this instead of a wrong
    answer, and the scheduler reruns the task with every operator on the CPU.
    """


@dataclass(frozen=True)
class Device:
    """Where an executor runs: kind ('cpu', 'gpu', 'npu'), index, memory, whether it is emulated, and the
    native engine its executor hands operators to (`cpu:0 (duckdb)`)."""

    kind: str
    index: int = 0
    memory_bytes: int | None = None
    emulated: bool = False
    # The native engine an executor on this device runs its operators on ("duckdb"), where not Quiver's own.
    engine: str | None = None

    def __str__(self) -> str:
        engine = f" ({self.engine})" if self.engine else ""
        return f"{self.kind}:{self.index}{' (emulated)' if self.emulated else ''}{engine}"


@dataclass
class TaskContext:
    """What a running task may use: its stage, partition, attempt, the block store, metrics, and the process's
    memory budget with a spill space of its own (removed by `release` when the attempt ends)."""

    stage_id: int
    partition: int
    attempt: int
    blocks: BlockReader
    job_id: int
    metrics: dict = field(default_factory=dict)
    # The executor of each operator node (by identity) placed off the default executor.
    placement: dict[int, Executor] = field(default_factory=dict)
    default_executor: Executor | None = None
    memory_settings: MemorySettings = field(default_factory=MemorySettings)
    _spill: SpillSpace | None = field(default=None, repr=False)

    @property
    def memory(self) -> MemoryManager:
        """The budget this task's operators reserve their state from, shared with the process's other tasks."""
        return process_memory(self.memory_settings)

    @property
    def spill(self) -> SpillSpace:
        """Where this attempt's operators write spill files."""
        if self._spill is None:
            label = f"stage{self.stage_id}-task{self.partition}-attempt{self.attempt}"
            self._spill = process_spill_folder(self.memory_settings.spill_root).space(label)
        return self._spill

    def record_spill(self, operator: str, nbytes: int) -> None:
        """Count one spill of `nbytes` by `operator` in the task's metrics and the process's totals."""
        spills = self.metrics.setdefault("spills", {})
        count, total = spills.get(operator, (0, 0))
        spills[operator] = (count + 1, total + nbytes)
        self.memory.record_spill(nbytes)

    def release(self) -> None:
        """Remove the attempt's spill files."""
        if self._spill is not None:
            self._spill.close()

    def executor_for(self, plan: PhysicalPlan) -> Executor:
        """The executor that runs operator `plan` in this task."""
        executor = self.placement.get(id(plan), self.default_executor)
        if executor is None:
            raise QuiverError(f"task {self.partition} of stage {self.stage_id} has no executor for "
                              f"{type(plan).__name__}")
        return executor


class Executor(Protocol):
    """Runs a physical operator tree for one partition, streaming Arrow record batches.

    `capabilities` names the operators it runs; `unsupported(plan)` says, for one operator,
    why it cannot run it here (an expression, a type, a join type) or None when it can. A
    child placed on another executor is run through `ctx.executor_for(child)`.
    """

    device: Device
    capabilities: frozenset[str]

    def unsupported(self, plan: PhysicalPlan) -> str | None:
        """None when this executor can run operator `plan`, else the reason it cannot."""

    def execute(self, plan: PhysicalPlan, partition: int, ctx: TaskContext) -> Iterator[pa.RecordBatch]:
        """Yield the batches of partition `partition` of `plan`."""
