"""Physical planning: logical plan -> physical operators with exchanges.

Decides how data is partitioned between operators: two-phase aggregation around a hash
exchange, broadcast or shuffled hash joins (by estimated size against
`quiver.sql.autoBroadcastJoinThreshold`), range exchange for a global sort, a single
partition for a global limit. Physical nodes are plain immutable values; executors run them.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Iterator

import pyarrow as pa

from quiver.engine.errors import QuiverError
from quiver.engine.expressions import (
    AggregateFunction, Alias, AttributeRef, Comparison, Expr, IsNull, Literal, ScalarFunction, SortOrder,
    conjoin, field_names, new_expr_id, split_conjuncts,
)
from quiver.engine import plan as L
from quiver.planners.statistics import estimate, row_width


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
class PhysicalPlan:
    """Base of physical operators: output attributes and a partition count.

    A node may carry annotations outside its fields (the planner's size estimate, a device
    pinned by a hint); rebuilding a node with new children keeps them.
    """

    def children(self) -> tuple["PhysicalPlan", ...]:
        out: list[PhysicalPlan] = []
        for name in field_names(type(self)):
            v = getattr(self, name)
            if isinstance(v, PhysicalPlan):
                out.append(v)
            elif isinstance(v, tuple) and v and all(isinstance(x, PhysicalPlan) for x in v):
                out.extend(v)
        return tuple(out)

    def with_children(self, new: tuple["PhysicalPlan", ...]) -> "PhysicalPlan":
        it = iter(new)
        changes: dict[str, Any] = {}
        for name in field_names(type(self)):
            v = getattr(self, name)
            if isinstance(v, PhysicalPlan):
                changes[name] = next(it)
            elif isinstance(v, tuple) and v and all(isinstance(x, PhysicalPlan) for x in v):
                changes[name] = tuple(next(it) for _ in v)
        if not changes:
            return self
        rebuilt = replace(self, **changes)
        for key in ANNOTATIONS:
            if key in self.__dict__:
                rebuilt.__dict__[key] = self.__dict__[key]
        return rebuilt

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return self.children()[0].output

    @property
    def num_partitions(self) -> int:
        return self.children()[0].num_partitions

    def node_string(self) -> str:
        return type(self).__name__

    def tree_string(self, indent: int = 0) -> str:
        lines = [("   " * (indent - 1) + "+- " if indent else "") + self.node_string()]
        for c in self.children():
            lines.append(c.tree_string(indent + 1))
        return "\n".join(lines)

    def walk(self) -> Iterator["PhysicalPlan"]:
        yield self
        for c in self.children():
            yield from c.walk()


ANNOTATIONS = ("_estimate", "_device_pin")


def estimated_size(plan: PhysicalPlan) -> tuple[int, int] | None:
    """(rows, bytes) this operator is expected to produce: the estimate of the logical plan it came
    from, or for an operator the planner added (an exchange, a key filter) its input's; None if unknown."""
    est = plan.__dict__.get("_estimate")
    if est is not None and est[0] >= 0:
        return est
    kids = plan.children()
    if not kids or isinstance(plan, (HashJoinExec, NestedLoopJoinExec, UnionExec)):
        return None
    return estimated_size(kids[0])


def device_pin(plan: PhysicalPlan) -> str | None:
    """The device kind a `df.hint("device", ...)` pinned this operator to, if any."""
    return plan.__dict__.get("_device_pin")


def transform_physical(plan: PhysicalPlan, fn: Callable[[PhysicalPlan], PhysicalPlan]) -> PhysicalPlan:
    """Rebuild a physical tree bottom-up."""
    kids = plan.children()
    if kids:
        plan = plan.with_children(tuple(transform_physical(k, fn) for k in kids))
    return fn(plan)


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
class FilterExec(PhysicalPlan):
    child: PhysicalPlan
    condition: Expr

    def node_string(self) -> str:
        return f"Filter {self.condition.sql()}"


@dataclass(frozen=True)
class ProjectExec(PhysicalPlan):
    child: PhysicalPlan
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
class HashAggregateExec(PhysicalPlan):
    """Group by `keys`; `mode` partial (per partition, before the exchange), final or complete."""

    child: PhysicalPlan
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
        keys = ", ".join(f"{l.sql()} = {r.sql()}" for l, r in zip(self.left_keys, self.right_keys))
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
class WindowExec(PhysicalPlan):
    """Window functions over partitions co-located by a hash exchange on the PARTITION BY keys."""

    child: PhysicalPlan
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
class SortExec(PhysicalPlan):
    """Sort within each partition (globally sorted after a range exchange)."""

    child: PhysicalPlan
    orders: tuple[SortOrder, ...]

    def node_string(self) -> str:
        return f"Sort [{', '.join(o.sql() for o in self.orders)}]"


@dataclass(frozen=True)
class TopKExec(PhysicalPlan):
    """The first `n` rows of each partition by `orders` (sort + limit without a full sort)."""

    child: PhysicalPlan
    orders: tuple[SortOrder, ...]
    n: int

    def node_string(self) -> str:
        return f"TakeOrdered {self.n} [{', '.join(o.sql() for o in self.orders)}]"


@dataclass(frozen=True)
class OffsetExec(PhysicalPlan):
    """Skip the first `n` rows of its input, which the planner gives one partition."""

    child: PhysicalPlan
    n: int

    def node_string(self) -> str:
        return f"Offset {self.n}"


@dataclass(frozen=True)
class LimitExec(PhysicalPlan):
    """The first `n` rows of each partition; stops pulling input once it has them."""

    child: PhysicalPlan
    n: int

    def node_string(self) -> str:
        return f"Limit {self.n}"


@dataclass(frozen=True)
class CoalesceExec(PhysicalPlan):
    """Fewer partitions without a shuffle: output partition p reads a contiguous run of input partitions."""

    child: PhysicalPlan
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
class MapInBatchesExec(PhysicalPlan):
    """mapInArrow / mapInPandas: the user's function over each partition's stream of batches. The
    device kind a resource profile asked for is its `_device_pin` annotation, as a hint's is."""

    child: PhysicalPlan
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
class GenerateExec(PhysicalPlan):
    """explode / posexplode / inline: each child row repeated per element of `generator`'s input,
    with the element's columns `attributes` added (one row of nulls for a null or empty input
    with `outer`). Runs on the CPU: it reshapes lists, which the array executors do not hold."""

    child: PhysicalPlan
    generator: Expr
    outer: bool
    attributes: tuple[AttributeRef, ...]

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return self.child.output + self.attributes

    def node_string(self) -> str:
        return f"Generate {self.generator.sql()}, outer={str(self.outer).lower()}, [{_cols(self.attributes)}]"


@dataclass(frozen=True)
class ExchangeExec(PhysicalPlan):
    """Repartition the child's output; stages are cut here."""

    child: PhysicalPlan
    partitioning: Any

    @property
    def num_partitions(self) -> int:
        return self.partitioning.num_partitions

    def node_string(self) -> str:
        kind = "BroadcastExchange" if isinstance(self.partitioning, BroadcastPartitioning) else "Exchange"
        return f"{kind} {self.partitioning.describe()}"


@dataclass(frozen=True)
class ShuffleReadExec(PhysicalPlan):
    """Reads the blocks a finished stage wrote for this partition (or all of them, for broadcast)."""

    stage_id: int
    attributes: tuple[AttributeRef, ...]
    partitions: int
    map_partitions: int
    broadcast: bool = False

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return self.attributes

    @property
    def num_partitions(self) -> int:
        return self.partitions

    def node_string(self) -> str:
        return f"{'BroadcastRead' if self.broadcast else 'ShuffleRead'} stage={self.stage_id} partitions={self.partitions}"


# ---------------------------------------------------------------- planning


@dataclass(frozen=True)
class PlannerConfig:
    shuffle_partitions: int
    broadcast_threshold: int
    default_parallelism: int
    # Above the threshold, a side up to this size still broadcasts where that costs less than a shuffle.
    broadcast_by_cost_max_bytes: int = -1


def plan_physical(plan: L.LogicalPlan, conf: PlannerConfig) -> PhysicalPlan:
    """Translate an optimized logical plan into physical operators with exchanges."""
    return _Planner(conf).plan(plan)


def output_partitioning(plan: PhysicalPlan) -> Any | None:
    """How `plan`'s output rows are spread over partitions, where an operator keeps its input's layout."""
    if isinstance(plan, ExchangeExec):
        return plan.partitioning
    if isinstance(plan, (FilterExec, SortExec, WindowExec, ProjectExec)):
        part = output_partitioning(plan.child)
        if isinstance(part, HashPartitioning) and isinstance(plan, ProjectExec):
            kept = {a.expr_id for a in plan.output}
            if not all(k.references() <= kept for k in part.keys):
                return None
        return part
    if isinstance(plan, HashAggregateExec) and plan.mode != "partial":
        return output_partitioning(plan.child)
    if isinstance(plan, HashJoinExec) and plan.strategy == "shuffle" and plan.how in ("inner", "left", "left_semi", "left_anti"):
        return output_partitioning(plan.left)
    return None


class _Planner:
    def __init__(self, conf: PlannerConfig):
        self.conf = conf

    def _exchange(self, child: PhysicalPlan, partitioning: Any) -> PhysicalPlan:
        """Repartition `child`, unless it is already partitioned exactly that way."""
        current = output_partitioning(child)
        if isinstance(partitioning, HashPartitioning) and current == partitioning:
            return child
        if isinstance(partitioning, SinglePartition) and child.num_partitions == 1:
            return child
        return ExchangeExec(child, partitioning)

    def plan(self, node: L.LogicalPlan) -> PhysicalPlan:
        physical = self._plan_node(node)
        if "_estimate" not in physical.__dict__:
            e = estimate(node)
            physical.__dict__["_estimate"] = (e.rows, e.size_bytes)
        return physical

    def _plan_node(self, node: L.LogicalPlan) -> PhysicalPlan:
        if isinstance(node, L.InMemoryRelation):
            return CachedExec(node.cache_key, node.attributes, node.partitions)
        if isinstance(node, L.SubqueryAlias):
            return self.plan(node.child)
        if isinstance(node, L.DeviceHint):
            pinned = self.plan(node.child)
            pinned.__dict__["_device_pin"] = node.device
            return pinned
        if isinstance(node, L.Generate):
            return GenerateExec(self.plan(node.child), node.generator, node.outer, node.attributes)
        if isinstance(node, L.BroadcastHint):
            return self.plan(node.child)
        if isinstance(node, L.MapInBatches):
            mapped = MapInBatchesExec(self.plan(node.child), node.function, node.kind, node.attributes)
            if node.device is not None:
                mapped.__dict__["_device_pin"] = node.device
            return mapped
        if isinstance(node, L.LocalRelation):
            parts = max(1, min(self.conf.default_parallelism, node.table.num_rows // 1024 + 1))
            return LocalTableExec(node.table, node.attributes, parts)
        if isinstance(node, L.SourceScan):
            splits = tuple(node.source.splits(self.conf.default_parallelism))
            return ScanExec(node.source, node.attributes, node.pushed_filters, splits)
        if isinstance(node, L.RangeRelation):
            parts = node.num_partitions or self.conf.default_parallelism
            return RangeExec(node.start, node.end, node.step, max(1, parts), node.attribute)
        if isinstance(node, L.Filter):
            return FilterExec(self.plan(node.child), node.condition)
        if isinstance(node, L.Project):
            return ProjectExec(self.plan(node.child), node.projections)
        if isinstance(node, L.Aggregate):
            return self._aggregate(node)
        if isinstance(node, L.Join):
            return self._join(node)
        if isinstance(node, L.Sort):
            return self._sort(node)
        if isinstance(node, L.Limit):
            return self._limit(node)
        if isinstance(node, L.Offset):
            child = self.plan(node.child)
            single = child if child.num_partitions == 1 else ExchangeExec(child, SinglePartition())
            return OffsetExec(single, node.n)
        if isinstance(node, L.Window):
            child = self.plan(node.child)
            part: Any = (HashPartitioning(node.partition_by, self.conf.shuffle_partitions)
                         if node.partition_by else SinglePartition())
            return WindowExec(self._exchange(child, part), node.window_exprs, node.partition_by, node.order_by)
        if isinstance(node, L.Repartition):
            return self._repartition(node)
        if isinstance(node, L.Union):
            return UnionExec(tuple(self.plan(c) for c in node.inputs), node.output)
        raise QuiverError(f"no physical plan for logical node {type(node).__name__}")

    # -- aggregation

    def _aggregate(self, node: L.Aggregate) -> PhysicalPlan:
        if not all(e.deterministic for e in node.expressions()):
            from quiver.planners.nondeterministic import pull_out_nondeterministic

            node = pull_out_nondeterministic(node)
        child = self.plan(node.child)
        keys = tuple((g, _key_attribute(g)) for g in node.grouping)
        calls: dict[AggregateFunction, AggregateCall] = {}
        for e in node.aggregates:
            for sub in e.walk():
                if isinstance(sub, AggregateFunction) and sub not in calls:
                    calls[sub] = AggregateCall(sub, AttributeRef(sub.sql(), sub.dtype, sub.nullable, new_expr_id()))
        call_list = tuple(calls.values())
        decomposable = all(
            not c.function.distinct and c.function.name in DECOMPOSABLE_AGGREGATES for c in call_list
        )
        key_attrs = tuple(a for _, a in keys)
        if node.grouping:
            partitioning: Any = HashPartitioning(key_attrs, self.conf.shuffle_partitions)
        else:
            partitioning = SinglePartition()
        if decomposable:
            partial = HashAggregateExec(child, keys, call_list, "partial")
            groups, child_size = estimate(node), estimated_size(child)
            if groups.rows >= 0 and child_size is not None and child_size[0] >= 0:
                # each task keeps one state row per group it saw: at most its input, at most every group
                rows = min(child_size[0], groups.rows * max(1, child.num_partitions))
                partial.__dict__["_estimate"] = (rows, rows * row_width(partial.output))
            exchanged = self._exchange(partial, partitioning)
            final_keys = tuple((a, a) for a in key_attrs)
            agg: PhysicalPlan = HashAggregateExec(exchanged, final_keys, call_list, "final")
        else:
            pre = ProjectExec(child, tuple(Alias(g, a.name, a.expr_id) if g is not a else a for g, a in keys)
                              + tuple(a for a in child.output if a.expr_id not in {k.expr_id for k in key_attrs}))
            exchanged = self._exchange(pre, partitioning)
            agg = HashAggregateExec(exchanged, tuple((a, a) for a in key_attrs), call_list, "complete")
        replace_map = {c.function: c.result for c in call_list}
        key_map = {g: a for g, a in keys if g is not a}

        def substitute(e: Expr) -> Expr:
            if isinstance(e, AggregateFunction):
                return replace_map[e]
            for g, a in key_map.items():
                if e == g:
                    return a
            return e

        projections = tuple(_substitute_top(e, substitute) for e in node.aggregates)
        return ProjectExec(agg, projections)

    # -- joins

    def _join(self, node: L.Join) -> PhysicalPlan:
        left, right = self.plan(node.left), self.plan(node.right)
        left_ids = {a.expr_id for a in node.left.output}
        right_ids = {a.expr_id for a in node.right.output}
        left_keys, right_keys, residual = split_join_condition(node.condition, left_ids, right_ids)
        how = node.how
        out = node.output
        if not left_keys or how == "cross":
            if how in ("right", "full"):
                return NestedLoopJoinExec(
                    ExchangeExec(left, SinglePartition()), ExchangeExec(right, SinglePartition()),
                    how, node.condition, out)
            return NestedLoopJoinExec(left, ExchangeExec(right, BroadcastPartitioning()), how,
                                      node.condition, out)
        right_size = estimate(node.right).size_bytes
        left_size = estimate(node.left).size_bytes
        right_reason = self._broadcast_reason(right_size, left_size, left.num_partitions) \
            if how in ("inner", "left", "left_semi", "left_anti") else None
        left_reason = self._broadcast_reason(left_size, right_size, right.num_partitions) \
            if how in ("inner", "right") else None
        hinted_right, hinted_left = broadcast_hinted(node.right), broadcast_hinted(node.left)
        if hinted_right and how in ("inner", "left", "left_semi", "left_anti") and not (
                hinted_left and how in ("inner", "right") and left_size <= right_size):
            right_reason, left_reason = "broadcast hint", None
        elif hinted_left and how in ("inner", "right"):
            right_reason, left_reason = None, "broadcast hint"
        if right_reason and (not left_reason or right_size <= left_size):
            return HashJoinExec(left, ExchangeExec(right, BroadcastPartitioning()), how, left_keys,
                                right_keys, residual, "broadcast-right", out, right_reason)
        if left_reason:
            return HashJoinExec(ExchangeExec(left, BroadcastPartitioning()), right, how, left_keys,
                                right_keys, residual, "broadcast-left", out, left_reason)
        n = self.conf.shuffle_partitions
        left_exchange = self._exchange(left, HashPartitioning(left_keys, n))
        right_exchange = self._exchange(right, HashPartitioning(right_keys, n))
        filtered = _key_filtered_side(node, how, left_keys, right_keys)
        if filtered and isinstance(left_exchange, ExchangeExec) and isinstance(right_exchange, ExchangeExec):
            # The filtered side's exchange gets a key filter fed by the other side's exchange (the same node).
            side, target_keys = filtered
            if side == "right":
                right_exchange = _key_filtered(right_exchange, right_keys, left_exchange, left_keys, target_keys)
            else:
                left_exchange = _key_filtered(left_exchange, left_keys, right_exchange, right_keys, target_keys)
        return HashJoinExec(
            left_exchange,
            right_exchange,
            how, left_keys, right_keys, residual, "shuffle", out,
            _shuffle_reason(left_size, right_size, self.conf.broadcast_threshold),
            build_left=how in ("inner", "left", "left_semi", "left_anti") and 0 <= 2 * left_size < right_size)

    def _broadcast_reason(self, build: int, probe: int, probe_tasks: int) -> str | None:
        """Why the `build` side (estimated bytes) may be broadcast to the probe side's tasks; None if not.

        Within spark.sql.autoBroadcastJoinThreshold it always may, as in Spark (-1 turns broadcasting
        off). Above it, up to quiver.sql.join.broadcastByCostMaxBytes, it may when building the side
        once per probe task costs well under hashing and moving both sides through a shuffle: at most
        half the probe side's bytes, since a large build side's hash table, made in every task at
        once, thrashes the caches it shares (TPC-H Q18's 92 MiB orders side ran slower broadcast
        to 2 tasks than shuffled).
        """
        threshold = self.conf.broadcast_threshold
        if threshold < 0 or build < 0:
            return None
        if build <= threshold:
            return f"est. {_size(build)} <= threshold {_size(threshold)}"
        if build > self.conf.broadcast_by_cost_max_bytes or probe < 0:
            return None
        tasks = max(probe_tasks, 1)
        if 2 * build * tasks <= probe:
            return f"by cost: est. {_size(build)} x {tasks} tasks <= half the {_size(probe)} probe side"
        return None

    # -- ordering and limits

    def _sort(self, node: L.Sort) -> PhysicalPlan:
        child = self.plan(node.child)
        if not node.is_global:
            return SortExec(child, node.orders)
        n = self.conf.shuffle_partitions
        part: Any = RangePartitioning(node.orders, n) if n > 1 else SinglePartition()
        return SortExec(ExchangeExec(child, part), node.orders)

    def _repartition(self, node: L.Repartition) -> PhysicalPlan:
        child = self.plan(node.child)
        n = node.num_partitions or self.conf.shuffle_partitions
        if node.kind == "coalesce":
            return CoalesceExec(child, n)
        if node.kind == "range":
            return ExchangeExec(child, RangePartitioning(node.keys, n))
        if node.kind == "roundrobin":
            return ExchangeExec(child, RoundRobinPartitioning(n))
        return ExchangeExec(child, HashPartitioning(node.keys, n))

    def _limit(self, node: L.Limit) -> PhysicalPlan:
        if isinstance(node.child, L.Sort) and node.child.is_global:
            sort = node.child
            local = TopKExec(self.plan(sort.child), sort.orders, node.n)
            return TopKExec(ExchangeExec(local, SinglePartition()), sort.orders, node.n)
        child = self.plan(node.child)
        if child.num_partitions == 1:
            return LimitExec(child, node.n)
        return LimitExec(ExchangeExec(LimitExec(child, node.n), SinglePartition()), node.n)


# At run time a side's keys filter the other side of a shuffled join when it has at most this many
# rows, and this many times fewer than the other side's estimated distinct keys.
KEY_FILTER_REDUCTION = 4
KEY_FILTER_MAX_ROWS = 200_000


def _key_filtered(exchange: ExchangeExec, keys: tuple[Expr, ...], source: ExchangeExec,
                  source_keys: tuple[Expr, ...], target_keys: int) -> ExchangeExec:
    return ExchangeExec(KeyFilterExec(exchange.child, keys, source, source_keys, KEY_FILTER_MAX_ROWS, target_keys),
                        exchange.partitioning)


def _key_filtered_side(
    node: L.Join, how: str, left_keys: tuple[Expr, ...], right_keys: tuple[Expr, ...],
) -> tuple[str, int] | None:
    """Which side of a shuffled join may be filtered by the other side's keys before shuffling, with
    its estimated distinct keys; None where no side may be, or nothing is known of its size.

    Only a side whose rows without a match never reach the output may be filtered: both sides of
    inner and semi joins, the right of a left outer or anti join (a right row that matches no left
    key can neither keep nor drop a left row), the left of a right outer join. Of two candidate
    sides, the one whose keys outnumber the other's the most. Whether it pays is left to run
    time, when the other side's real size is known (a HAVING's selectivity, say, is not before).
    """
    candidates = {"inner": ("left", "right"), "left": ("right",), "left_semi": ("left", "right"),
                  "left_anti": ("right",), "right": ("left",)}.get(how, ())
    best: tuple[str, int] | None = None
    best_ratio = -1.0
    for side in candidates:
        target, source = (node.right, node.left) if side == "right" else (node.left, node.right)
        target_keys, source_keys = (right_keys, left_keys) if side == "right" else (left_keys, right_keys)
        target_distinct = _distinct_keys(target, target_keys)
        if target_distinct <= 0:
            continue
        ratio = target_distinct / max(_distinct_keys(source, source_keys), 1)
        if ratio > best_ratio:
            best, best_ratio = (side, target_distinct), ratio
    return best


def _distinct_keys(plan: L.LogicalPlan, keys: tuple[Expr, ...]) -> int:
    """Estimated distinct key tuples of `plan`: at most its rows; -1 when unknown."""
    e = estimate(plan)
    if e.rows < 0:
        return -1
    distinct = 1.0
    for k in keys:
        column = e.columns.get(k.expr_id) if isinstance(k, AttributeRef) else None
        distinct *= column.ndv if column is not None and column.ndv else e.rows
    return int(min(distinct, e.rows))


def broadcast_hinted(plan: L.LogicalPlan) -> bool:
    """Whether `plan` is a side marked by `F.broadcast(df)` / `df.hint("broadcast")`, looking through
    the nodes that keep its rows (aliases, projections, filters) down to the hint."""
    while True:
        if isinstance(plan, L.BroadcastHint):
            return True
        if isinstance(plan, (L.SubqueryAlias, L.Project, L.Filter, L.DeviceHint)):
            plan = plan.children()[0]
            continue
        return False


def _shuffle_reason(left: int, right: int, threshold: int) -> str:
    if threshold < 0:
        return "broadcasting is off: autoBroadcastJoinThreshold is -1"
    sizes = " and ".join("size unknown" if b < 0 else f"est. {_size(b)}" for b in (left, right))
    return f"{sizes}: broadcasting costs more"


def _size(n: int) -> str:
    """A byte count as explain shows it: 112 B, 68.8 KiB, 14.4 MiB."""
    if n < 1024:
        return f"{n} B"
    value = n / 1024
    for unit in ("KiB", "MiB"):
        if value < 1024:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def _key_attribute(g: Expr) -> AttributeRef:
    """The column a grouping expression becomes: itself, its alias's attribute, or a fresh one."""
    if isinstance(g, AttributeRef):
        return g
    if isinstance(g, Alias):
        return g.to_attribute()
    return AttributeRef(g.sql(), g.dtype, g.nullable, new_expr_id())


DECOMPOSABLE_AGGREGATES = frozenset(
    {"count", "sum", "avg", "min", "max", "first", "last", "any_value", "collect_list", "bool_and", "bool_or"}
)


def _substitute_top(e: Expr, fn: Callable[[Expr], Expr]) -> Expr:
    """Replace aggregate calls and grouping expressions top-down (a grouped expression wins over its parts)."""
    replaced = fn(e)
    if replaced is not e:
        return replaced
    kids = e.children()
    if not kids:
        return e
    return e.with_children(tuple(_substitute_top(k, fn) for k in kids))


def _null_safe_keys(c: Comparison, left_ids: set[int], right_ids: set[int]):
    """`l <=> r` as two ordinary keys, (coalesce(x, zero), x IS NULL), so a hash join can match nulls."""
    lr, rr = c.left.references(), c.right.references()
    if lr and rr and lr <= left_ids and rr <= right_ids:
        l, r = c.left, c.right
    elif lr and rr and lr <= right_ids and rr <= left_ids:
        l, r = c.right, c.left
    else:
        return None
    zero = _zero_of(l.dtype)
    if zero is None or l.dtype != r.dtype:
        return None
    return ((ScalarFunction("coalesce", (l, zero)), IsNull(l)),
            (ScalarFunction("coalesce", (r, zero)), IsNull(r)))


def _zero_of(t) -> Literal | None:
    import datetime as dt
    import decimal

    from quiver.engine import types as T

    if isinstance(t, T.BooleanType):
        return Literal(False, t)
    if isinstance(t, T.DecimalType):
        return Literal(decimal.Decimal(0), t)
    if isinstance(t, T.IntegralType):
        return Literal(0, t)
    if isinstance(t, T.FractionalType):
        return Literal(0.0, t)
    if isinstance(t, T.StringType):
        return Literal("", t)
    if isinstance(t, T.DateType):
        return Literal(dt.date(1970, 1, 1), t)
    if isinstance(t, T.TimestampType):
        return Literal(dt.datetime(1970, 1, 1), t)
    return None


def split_join_condition(
    condition: Expr | None, left_ids: set[int], right_ids: set[int]
) -> tuple[tuple[Expr, ...], tuple[Expr, ...], Expr | None]:
    """Equality conjuncts with one side per input become keys; the rest is a residual filter."""
    lk: list[Expr] = []
    rk: list[Expr] = []
    rest: list[Expr] = []
    for c in split_conjuncts(condition):
        if isinstance(c, Comparison) and c.op == "<=>":
            pair = _null_safe_keys(c, left_ids, right_ids)
            if pair is not None:
                lk.extend(pair[0])
                rk.extend(pair[1])
                continue
        if isinstance(c, Comparison) and c.op == "=":
            lr, rr = c.left.references(), c.right.references()
            if lr and rr and lr <= left_ids and rr <= right_ids:
                lk.append(c.left)
                rk.append(c.right)
                continue
            if lr and rr and lr <= right_ids and rr <= left_ids:
                lk.append(c.right)
                rk.append(c.left)
                continue
        rest.append(c)
    return tuple(lk), tuple(rk), conjoin(rest)


__all__ = ["plan_physical", "PlannerConfig"]
