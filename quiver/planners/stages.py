"""Stage splitting: cut a physical plan at its exchanges into a DAG of stages.

Each `ExchangeExec` becomes the boundary between a map stage (its child, whose tasks write
partitioned blocks) and the stage above it, which reads them through `ShuffleReadExec`.
Every stage runs one task per partition of its root.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from quiver.planners.physical.nodes import (
    BroadcastPartitioning,
    ExchangeExec,
    HashJoinExec,
    PhysicalPlan,
    ShuffleReadExec,
    estimated_size,
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
    """Cut `plan` at exchanges; parents come before the stages that read them.

    An exchange the plan holds in two places (a join's side that also feeds a key filter on the
    other side) is one node object, and becomes one stage that both read.
    """
    stages: list[Stage] = []
    done: dict[int, PhysicalPlan] = {}

    def cut(node: PhysicalPlan) -> PhysicalPlan:
        if id(node) in done:
            return done[id(node)]
        kids = node.children()
        if kids:
            done_kids = {id(k): cut(k) for k in _cut_order(node, kids)}
            new = node.with_children(tuple(done_kids[id(k)] for k in kids))
        else:
            new = node
        if isinstance(new, ExchangeExec):
            child_root = new.child
            stage = Stage(len(stages), child_root, new.partitioning, _parents(child_root))
            stages.append(stage)
            broadcast = isinstance(new.partitioning, BroadcastPartitioning)
            new = ShuffleReadExec(stage.id, child_root.output,
                                  1 if broadcast else new.partitioning.num_partitions,
                                  child_root.num_partitions, broadcast, fixed=new.fixed,
                                  estimate=estimated_size(child_root))
        done[id(node)] = new
        return new

    root = cut(plan)
    stages.append(Stage(len(stages), root, None, _parents(root)))
    return StageGraph(tuple(stages))


def _cut_order(node: PhysicalPlan, kids: tuple[PhysicalPlan, ...]) -> tuple[PhysicalPlan, ...]:
    """The order a node's inputs become stages: a shuffled join's build side first, so that adaptive
    execution knows its real size before the probe side's stage runs (and may broadcast it instead)."""
    if isinstance(node, HashJoinExec) and node.strategy == "shuffle" and not node.build_left:
        return (node.right, node.left)
    return kids


def _parents(root: PhysicalPlan) -> tuple[int, ...]:
    return tuple(sorted({n.stage_id for n in root.walk() if isinstance(n, ShuffleReadExec)}))
