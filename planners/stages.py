"""Stage splitting: cut a physical plan at its exchanges into a DAG of stages.

Each `ExchangeExec` becomes the boundary between a map stage (its child, whose tasks write
partitioned blocks) and the stage above it, which reads them through `ShuffleReadExec`.
Every stage runs one task per partition of its root.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from quiver.planners.physical import (
    BroadcastPartitioning, ExchangeExec, PhysicalPlan, ShuffleReadExec, transform_physical,
)


@dataclass(frozen=True)
class Stage:
    """A pipeline of operators run as one task per partition; `output` says how its blocks are cut."""

    id: int
    root: PhysicalPlan
    output: Any | None
    parents: tuple[int, ...]

    @property
    def num_partitions(self) -> int:
        return self.root.num_partitions

    def describe(self) -> str:
        kind = "result" if self.output is None else f"map -> {self.output.describe()}"
        deps = f" after {', '.join(map(str, self.parents))}" if self.parents else ""
        return f"Stage {self.id} ({kind}, {self.num_partitions} tasks{deps})\n{self.root.tree_string(1)}"


@dataclass(frozen=True)
class StageGraph:
    """Stages in dependency order; the last is the result stage."""

    stages: tuple[Stage, ...]

    @property
    def result(self) -> Stage:
        return self.stages[-1]

    def describe(self) -> str:
        return "\n".join(s.describe() for s in self.stages)


def split_stages(plan: PhysicalPlan) -> StageGraph:
    """Cut `plan` at exchanges; parents come before the stages that read them."""
    stages: list[Stage] = []

    def cut(node: PhysicalPlan) -> PhysicalPlan:
        if not isinstance(node, ExchangeExec):
            return node
        child_root = node.child
        stage = Stage(len(stages), child_root, node.partitioning, _parents(child_root))
        stages.append(stage)
        broadcast = isinstance(node.partitioning, BroadcastPartitioning)
        return ShuffleReadExec(stage.id, child_root.output,
                               1 if broadcast else node.partitioning.num_partitions,
                               child_root.num_partitions, broadcast)

    root = transform_physical(plan, cut)
    stages.append(Stage(len(stages), root, None, _parents(root)))
    return StageGraph(tuple(stages))


def _parents(root: PhysicalPlan) -> tuple[int, ...]:
    return tuple(sorted({n.stage_id for n in root.walk() if isinstance(n, ShuffleReadExec)}))
