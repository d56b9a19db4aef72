"""The physical operators: plain immutable values that executors run, and how their output is partitioned."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from quiver.engine.core import plan as L
from quiver.engine.core.expressions import (
    AggregateFunction,
    Alias,
    AttributeRef,
    Expr,
    SortOrder,
)
from quiver.engine.core.tree import TreeNode

# ---------------------------------------------------------------- partitioning


@dataclass(frozen=True)
class HashPartitioning:
    keys: tuple[Expr, ...]
    num_partitions: int

    def describe(self) -> str:
        return f"hashpartitioning({', '.join(k.sql() for k in self.keys)}, {self.num_partitions})"


@dataclass(frozen=True)
class RangePartitioning:
    orders: tuple[SortOrder, ...]
    num_partitions: int

    def describe(self) -> str:
        return f"rangepartitioning({', '.join(o.sql() for o in self.orders)}, {self.num_partitions})"


@dataclass(frozen=True)
class SinglePartition:
    num_partitions: int = 1

    def describe(self) -> str:
        return "SinglePartition"


@dataclass(frozen=True)
class RoundRobinPartitioning:
    num_partitions: int

    def describe(self) -> str:
        return f"RoundRobinPartitioning({self.num_partitions})"


@dataclass(frozen=True)
class BroadcastPartitioning:
    num_partitions: int = 1

    def describe(self) -> str:
        return "BroadcastPartitioning"


Partitioning = HashPartitioning | RangePartitioning | RoundRobinPartitioning | SinglePartition | BroadcastPartitioning


# ---------------------------------------------------------------- physical nodes


@dataclass(frozen=True, eq=False)
class PhysicalPlan(TreeNode["PhysicalPlan"]):
    """Base of physical operators: output attributes and a partition count."""

    estimate: tuple[int, int] | None = field(default=None, compare=False, hash=False, repr=False, kw_only=True)
    """(rows, bytes) the planner expects this operator to produce, from the logical plan it came
    from; None where it set none (`estimated_size` then reads the input's). An annotation: `replace`,
    `with_children` and every rewrite keep it, since rewriting a physical plan keeps what each
    operator produces (stage cutting reads the rows an exchange moved through a ShuffleReadExec)."""

    device_pin: str | None = field(default=None, compare=False, hash=False, repr=False, kw_only=True)
    """The device kind `df.hint("device", ...)` or a resource profile pinned this operator to; None
    where none did. An annotation: every rewrite keeps it, as it is the user's choice, not
    something the operator's fields say."""

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        raise NotImplementedError(type(self).__name__)

    @property
    def num_partitions(self) -> int:
        raise NotImplementedError(type(self).__name__)


@dataclass(frozen=True, eq=False)
class UnaryExecNode(PhysicalPlan):
    """An operator over one input, `child` (its first field); it produces the child's columns in
    the child's partitions unless it says otherwise (Spark's UnaryExecNode)."""

    child: PhysicalPlan

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return self.child.output

    @property
    def num_partitions(self) -> int:
        return self.child.num_partitions


def estimated_size(plan: PhysicalPlan) -> tuple[int, int] | None:
    """(rows, bytes) this operator is expected to produce: the estimate of the logical plan it came
    from, or for an operator the planner added (an exchange, a key filter) its input's; None if unknown."""
    est = plan.estimate
    if est is not None and est[0] >= 0:
        return est
    kids = plan.children()
    if not kids or isinstance(plan, (HashJoinExec, NestedLoopJoinExec, UnionExec)):
        return None
    return estimated_size(kids[0])


# A key filter runs only where its source has this many times fewer rows than the keys it filters.
KEY_FILTER_REDUCTION = 4


def _cols(attrs: tuple[AttributeRef, ...]) -> str:
    return ", ".join(a.display_name for a in attrs)


@dataclass(frozen=True, eq=False)
class ScanExec(PhysicalPlan):
    source: Any
    attributes: tuple[AttributeRef, ...]
    filters: tuple[Expr, ...]
    splits: tuple[Any, ...]

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return self.attributes

    @property
    def num_partitions(self) -> int:
        return len(self.splits)

    def node_string(self) -> str:
        pushed = f" PushedFilters: [{', '.join(f.sql() for f in self.filters)}]" if self.filters else ""
        return f"Scan {self.source.describe()} [{_cols(self.attributes)}]{pushed} splits={len(self.splits)}"


@dataclass(frozen=True, eq=False)
class LocalTableExec(PhysicalPlan):
    """In-memory rows cut into slices, one per partition (zero-copy slices of one table)."""

    table: pa.Table
    attributes: tuple[AttributeRef, ...]
    partitions: int

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return self.attributes

    @property
    def num_partitions(self) -> int:
        return self.partitions

    def node_string(self) -> str:
        return f"LocalTableScan [{_cols(self.attributes)}] {self.table.num_rows} rows"


@dataclass(frozen=True, eq=False)
class CachedExec(PhysicalPlan):
    """Partitions materialised by df.cache(), read back from the block store."""

    cache_key: int
    attributes: tuple[AttributeRef, ...]
    partitions: int

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return self.attributes

    @property
    def num_partitions(self) -> int:
        return self.partitions

    def node_string(self) -> str:
        return f"InMemoryTableScan [{_cols(self.attributes)}] cache={self.cache_key}"


@dataclass(frozen=True)
class RangeExec(PhysicalPlan):
    start: int
    end: int
    step: int
    partitions: int
    attribute: AttributeRef

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return (self.attribute,)

    @property
    def num_partitions(self) -> int:
        return self.partitions

    def node_string(self) -> str:
        return f"Range ({self.start}, {self.end}, step={self.step}, splits={self.partitions})"


@dataclass(frozen=True)
class FilterExec(UnaryExecNode):
    condition: Expr

    def node_string(self) -> str:
        return f"Filter {self.condition.sql()}"


@dataclass(frozen=True)
class ProjectExec(UnaryExecNode):
    projections: tuple[Expr, ...]

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return tuple(L.named_output(p) for p in self.projections)

    def node_string(self) -> str:
        return f"Project [{', '.join(_named(p) for p in self.projections)}]"


def _named(e: Expr) -> str:
    if isinstance(e, Alias):
        return f"{e.child.sql()} AS {e.name}#{e.expr_id}"
    if isinstance(e, AttributeRef):
        return e.display_name
    return e.sql()


@dataclass(frozen=True)
class AggregateCall:
    """One aggregate function computed by a HashAggregateExec, and the attribute it fills."""

    function: AggregateFunction
    result: AttributeRef


@dataclass(frozen=True)
class HashAggregateExec(UnaryExecNode):
    """Group by `keys`; `mode` partial (per partition, before the exchange), final or complete."""

    keys: tuple[tuple[Expr, AttributeRef], ...]
    calls: tuple[AggregateCall, ...]
    mode: str

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return tuple(a for _, a in self.keys) + tuple(c.result for c in self.calls)

    def node_string(self) -> str:
        keys = ", ".join(a.display_name for _, a in self.keys)
        fns = ", ".join(f"{c.function.sql()}" for c in self.calls)
        return f"HashAggregate({self.mode}) keys=[{keys}] functions=[{fns}]"


@dataclass(frozen=True)
class HashJoinExec(PhysicalPlan):
    """Equi-join on key expressions; `strategy` is 'broadcast' or 'shuffle' (shown in explain)."""

    left: PhysicalPlan
    right: PhysicalPlan
    how: str
    left_keys: tuple[Expr, ...]
    right_keys: tuple[Expr, ...]
    residual: Expr | None
    strategy: str
    join_output: tuple[AttributeRef, ...]
    reason: str = ""
    # A shuffled join builds its hash table on the right, as Spark's does, unless the left is much smaller.
    build_left: bool = False

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return self.join_output

    @property
    def num_partitions(self) -> int:
        return self.right.num_partitions if self.strategy == "broadcast-left" else self.left.num_partitions

    def node_string(self) -> str:
        keys = ", ".join(f"{lk.sql()} = {rk.sql()}" for lk, rk in zip(self.left_keys, self.right_keys))
        extra = f" AND {self.residual.sql()}" if self.residual is not None else ""
        name = "BroadcastHashJoin" if self.strategy.startswith("broadcast") else "ShuffledHashJoin"
        notes = [self.reason] if self.reason else []
        if self.build_left:
            notes.append("builds on the left")
        why = f" ({'; '.join(notes)})" if notes else ""
        return f"{name} {self.how} [{keys}]{extra}{why}"


@dataclass(frozen=True, eq=False)
class KeyFilterExec(PhysicalPlan):
    """Rows of `child` whose `keys` occur among `source_keys` in the other side of a shuffled join,
    dropped before they are shuffled (a runtime semi-join filter, like Spark's injected ones).

    `source` is that other side's exchange, the very node the join reads, so it runs once, as one
    stage, before this one. Whether the filter pays is decided at run time, from that stage's
    actual size: it applies when the other side has at most `max_rows` rows and at least
    KEY_FILTER_REDUCTION times fewer than this side's estimated distinct keys (`target_keys`);
    otherwise rows pass through untouched.
    """

    child: PhysicalPlan
    keys: tuple[Expr, ...]
    source: PhysicalPlan
    source_keys: tuple[Expr, ...]
    max_rows: int
    target_keys: int

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return self.child.output

    @property
    def num_partitions(self) -> int:
        return self.child.num_partitions

    def applies_to(self, source_rows: int) -> bool:
        return source_rows <= self.max_rows and source_rows * KEY_FILTER_REDUCTION <= self.target_keys

    def node_string(self) -> str:
        keys = ", ".join(k.sql() for k in self.keys)
        return (f"KeyFilter [{keys}] in the other side's [{', '.join(k.sql() for k in self.source_keys)}] "
                f"(if it has <= {min(self.max_rows, self.target_keys // KEY_FILTER_REDUCTION)} rows)")


@dataclass(frozen=True)
class NestedLoopJoinExec(PhysicalPlan):
    """Join without equality keys: each left partition against the whole (broadcast) right side."""

    left: PhysicalPlan
    right: PhysicalPlan
    how: str
    condition: Expr | None
    join_output: tuple[AttributeRef, ...]

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return self.join_output

    @property
    def num_partitions(self) -> int:
        return self.left.num_partitions

    def node_string(self) -> str:
        cond = f" {self.condition.sql()}" if self.condition is not None else ""
        return f"BroadcastNestedLoopJoin {self.how}{cond}"


@dataclass(frozen=True)
class WindowExec(UnaryExecNode):
    """Window functions over partitions co-located by a hash exchange on the PARTITION BY keys."""

    window_exprs: tuple[Expr, ...]
    partition_by: tuple[Expr, ...]
    order_by: tuple[SortOrder, ...]

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return self.child.output + tuple(L.named_output(e) for e in self.window_exprs)

    def node_string(self) -> str:
        return (f"Window [{', '.join(_named(e) for e in self.window_exprs)}] "
                f"partition=[{', '.join(p.sql() for p in self.partition_by)}] "
                f"order=[{', '.join(o.sql() for o in self.order_by)}]")


@dataclass(frozen=True)
class SortExec(UnaryExecNode):
    """Sort within each partition (globally sorted after a range exchange)."""

    orders: tuple[SortOrder, ...]

    def node_string(self) -> str:
        return f"Sort [{', '.join(o.sql() for o in self.orders)}]"


@dataclass(frozen=True)
class TopKExec(UnaryExecNode):
    """The first `n` rows of each partition by `orders` (sort + limit without a full sort)."""

    orders: tuple[SortOrder, ...]
    n: int

    def node_string(self) -> str:
        return f"TakeOrdered {self.n} [{', '.join(o.sql() for o in self.orders)}]"


@dataclass(frozen=True)
class OffsetExec(UnaryExecNode):
    """Skip the first `n` rows of its input, which the planner gives one partition."""

    n: int

    def node_string(self) -> str:
        return f"Offset {self.n}"


@dataclass(frozen=True)
class LimitExec(UnaryExecNode):
    """The first `n` rows of each partition; stops pulling input once it has them."""

    n: int

    def node_string(self) -> str:
        return f"Limit {self.n}"


@dataclass(frozen=True)
class CoalesceExec(UnaryExecNode):
    """Fewer partitions without a shuffle: output partition p reads a contiguous run of input partitions."""

    partitions: int

    @property
    def num_partitions(self) -> int:
        return min(self.partitions, self.child.num_partitions)

    def node_string(self) -> str:
        return f"Coalesce {self.partitions}"

    def input_partitions(self, partition: int) -> range:
        """The child partitions output partition `partition` reads, one after another."""
        inputs, outputs = self.child.num_partitions, self.num_partitions
        return range(inputs * partition // outputs, inputs * (partition + 1) // outputs)


@dataclass(frozen=True)
class UnionExec(PhysicalPlan):
    """Partitions of every input, one after another; columns by position from the first input."""

    inputs: tuple[PhysicalPlan, ...]
    attributes: tuple[AttributeRef, ...]

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return self.attributes

    @property
    def num_partitions(self) -> int:
        return sum(c.num_partitions for c in self.inputs)

    def input_for(self, partition: int) -> tuple[PhysicalPlan, int] | None:
        """The input whose partitions output partition `partition` is, and its partition there."""
        for child in self.inputs:
            if partition < child.num_partitions:
                return child, partition
            partition -= child.num_partitions
        return None


@dataclass(frozen=True)
class MapInBatchesExec(UnaryExecNode):
    """mapInArrow / mapInPandas: the user's function over each partition's stream of batches. The
    device kind a resource profile asked for is its `device_pin` annotation, as a hint's is."""

    function: Any
    kind: str
    attributes: tuple[AttributeRef, ...]

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return self.attributes

    def node_string(self) -> str:
        name = getattr(self.function, "__name__", type(self.function).__name__)
        op = "MapInArrow" if self.kind == "arrow" else "MapInPandas"
        return f"{op} {name} [{_cols(self.attributes)}]"


@dataclass(frozen=True)
class GenerateExec(UnaryExecNode):
    """explode / posexplode / inline: each child row repeated per element of `generator`'s input,
    with the element's columns `attributes` added (one row of nulls for a null or empty input
    with `outer`). Runs on the CPU: it reshapes lists, which the array executors do not hold."""

    generator: Expr
    outer: bool
    attributes: tuple[AttributeRef, ...]

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return self.child.output + self.attributes

    def node_string(self) -> str:
        return f"Generate {self.generator.sql()}, outer={str(self.outer).lower()}, [{_cols(self.attributes)}]"


@dataclass(frozen=True)
class ExchangeExec(UnaryExecNode):
    """Repartition the child's output; stages are cut here. `fixed`: the user named the partition count
    (`repartition(n)`), so adaptive execution keeps it rather than coalescing."""

    partitioning: Any
    fixed: bool = False

    @property
    def num_partitions(self) -> int:
        return self.partitioning.num_partitions

    def node_string(self) -> str:
        kind = "BroadcastExchange" if isinstance(self.partitioning, BroadcastPartitioning) else "Exchange"
        return f"{kind} {self.partitioning.describe()}"


@dataclass(frozen=True)
class BlockRange:
    """The blocks one task reads of a finished stage: reduce partitions [start, end) of the map outputs
    [map_start, map_end) (`map_end` None: every map output). Adaptive execution sets these on a read:
    a run of small partitions coalesced into one task, or one skewed partition's map outputs split
    across several tasks."""

    start: int
    end: int
    map_start: int = 0
    map_end: int | None = None

    def describe(self, map_partitions: int) -> str:
        reduce = f"{self.start}" if self.end == self.start + 1 else f"{self.start}-{self.end - 1}"
        map_end = map_partitions if self.map_end is None else self.map_end
        if self.map_start == 0 and map_end == map_partitions:
            return reduce
        if map_end == self.map_start + 1:
            return f"{reduce}[map {self.map_start}]"
        return f"{reduce}[maps {self.map_start}-{map_end - 1}]"


@dataclass(frozen=True)
class ShuffleReadExec(PhysicalPlan):
    """Reads the blocks a finished stage wrote for this partition (or all of them, for broadcast).

    Without `reads`, task p reads reduce partition p of every map output (block 0 of each for a
    broadcast). With them, task p reads `reads[p]` (a broadcast read: every task reads `reads[0]`).
    `fixed`: the user named the exchange's partition count, so it is never coalesced.
    """

    stage_id: int
    attributes: tuple[AttributeRef, ...]
    partitions: int
    map_partitions: int
    broadcast: bool = False
    reads: tuple[BlockRange, ...] | None = None
    fixed: bool = False

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return self.attributes

    @property
    def num_partitions(self) -> int:
        if self.broadcast or self.reads is None:
            return self.partitions
        return len(self.reads)

    def blocks_for(self, partition: int) -> list[tuple[int, int]]:
        """(map partition, reduce partition) of each block task `partition` reads, in reading order."""
        if self.reads is None:
            reduce = 0 if self.broadcast else partition
            return [(m, reduce) for m in range(self.map_partitions)]
        read = self.reads[0 if self.broadcast else partition]
        map_end = self.map_partitions if read.map_end is None else read.map_end
        return [(m, r) for r in range(read.start, read.end) for m in range(read.map_start, map_end)]

    def node_string(self) -> str:
        name = "BroadcastRead" if self.broadcast else "ShuffleRead"
        text = f"{name} stage={self.stage_id} partitions={self.partitions}"
        if self.reads is not None and self.broadcast:
            read = self.reads[0]
            text += f" adaptive: every task reads partitions {read.describe(self.map_partitions)}"
        elif self.reads is not None:
            shown = ", ".join(r.describe(self.map_partitions) for r in self.reads[:8])
            more = f", … {len(self.reads) - 8} more" if len(self.reads) > 8 else ""
            text += f" adaptive: {len(self.reads)} task{'s' if len(self.reads) != 1 else ''} [{shown}{more}]"
        return text
