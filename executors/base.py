"""The executor seam: a `Device` and an `Executor` that runs a stage's operators on it.

Executors declare what they can run as data (`capabilities`), so the planner can place
operators without knowing devices by name. The CPU executor is always present.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, Protocol

import pyarrow as pa


@dataclass(frozen=True)
class Device:
    """Where an executor runs: kind ('cpu', 'gpu', 'npu'), index, memory, and whether it is emulated."""

    kind: str
    index: int = 0
    memory_bytes: int | None = None
    emulated: bool = False

    def __str__(self) -> str:
        return f"{self.kind}:{self.index}{' (emulated)' if self.emulated else ''}"


@dataclass
class TaskContext:
    """What a running task may use: its stage, partition, attempt, the block store and metrics."""

    stage_id: int
    partition: int
    attempt: int
    blocks: Any
    job_id: int
    metrics: dict = field(default_factory=dict)


class Executor(Protocol):
    """Runs a physical operator tree for one partition, streaming Arrow record batches."""

    device: Device
    capabilities: frozenset[str]

    def execute(self, plan: Any, partition: int, ctx: TaskContext) -> Iterator[pa.RecordBatch]:
        """Yield the batches of partition `partition` of `plan`."""
