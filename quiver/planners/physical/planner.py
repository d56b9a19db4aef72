"""Physical planning: logical plan -> physical operators with exchanges.

Decides how data is partitioned between operators: two-phase aggregation around a hash
exchange, broadcast or shuffled hash joins (by estimated size against
`quiver.sql.autoBroadcastJoinThreshold`), range exchange for a global sort, a single
partition for a global limit. Physical nodes are plain immutable values; executors run them.

`PLAN_FNS` maps each logical node type to the function that plans it (`plan_<op>`), as Ray
Data's planner does: a new logical operator is planned by adding its function to that table.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from quiver.engine.core import plan as L
from quiver.engine.core import types as T
from quiver.engine.core.errors import QuiverError
from quiver.engine.core.expressions import (
    AggregateFunction,
    Alias,
    AttributeRef,
    Comparison,
    Expr,
    IsNull,
    Literal,
    ScalarFunction,
    conjoin,
    new_expr_id,
    split_conjuncts,
)
from quiver.planners.physical.nodes import (
    AggregateCall,
    BroadcastPartitioning,
    CachedExec,
    CoalesceExec,
    ExchangeExec,
    FilterExec,
    GenerateExec,
    HashAggregateExec,
    HashJoinExec,
    HashPartitioning,
    KeyFilterExec,
    LimitExec,
    LocalTableExec,
    MapInBatchesExec,
    NestedLoopJoinExec,
    OffsetExec,
    PhysicalPlan,
    ProjectExec,
    RangeExec,
    RangePartitioning,
    RoundRobinPartitioning,
    ScanExec,
    SinglePartition,
    SortExec,
    TopKExec,
    UnionExec,
    WindowExec,
    estimated_size,
)
from quiver.planners.statistics import estimate, row_width

# ---------------------------------------------------------------- planning


@dataclass(frozen=True)
class PlannerConfig:
    shuffle_partitions: int
    broadcast_threshold: int
    default_parallelism: int
    # Above the threshold, a side up to this size still broadcasts where that costs less than a shuffle.
    broadcast_by_cost_max_bytes: int = -1


def plan_physical(plan: L.LogicalPlan, conf: PlannerConfig) -> PhysicalPlan:
    """Translate an optimized logical plan into physical operators with exchanges.

    `plan` has been through every logical step of the query pipeline (engine/execution/query_execution.py):
    in particular an aggregate computes no nondeterministic expression itself (pull_out_nondeterministic).
    """
    return Planner(conf).plan(plan)


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
    if isinstance(plan, HashJoinExec) and plan.strategy == "shuffle" and plan.how in ("inner", "left", "left_semi",
                                                                                      "left_anti"):
        return output_partitioning(plan.left)
    return None


class Planner:
    """Plans one logical tree: each node by the function `PLAN_FNS` holds for its type, with its estimated size."""

    def __init__(self, conf: PlannerConfig):
        self.conf = conf

    def plan(self, node: L.LogicalPlan) -> PhysicalPlan:
        """The physical operators for `node` and its subtree; a node type without a planning function raises."""
        plan_fn = PLAN_FNS.get(type(node))
        if plan_fn is None:
            raise QuiverError(
                f"no physical plan for logical node {type(node).__name__}; the physical planner plans "
                f"{', '.join(sorted(t.__name__ for t in PLAN_FNS))}")
        physical = plan_fn(node, self)
        if physical.estimate is None:
            e = estimate(node)
            physical = replace(physical, estimate=(e.rows, e.size_bytes))
        return physical


def _exchange(child: PhysicalPlan, partitioning: Any) -> PhysicalPlan:
    """Repartition `child`, unless it is already partitioned exactly that way."""
    current = output_partitioning(child)
    if isinstance(partitioning, HashPartitioning) and current == partitioning:
        return child
    if isinstance(partitioning, SinglePartition) and child.num_partitions == 1:
        return child
    return ExchangeExec(child, partitioning)


# -- leaves


def plan_local_relation(node: L.LocalRelation, planner: Planner) -> PhysicalPlan:
    """An in-memory table, cut into about one partition per 1,024 rows, at most the default parallelism."""
    parts = max(1, min(planner.conf.default_parallelism, node.table.num_rows // 1024 + 1))
    return LocalTableExec(node.table, node.attributes, parts)


def plan_source_scan(node: L.SourceScan, planner: Planner) -> PhysicalPlan:
    """A connector's scan, one task per split the source cuts for the default parallelism."""
    splits = tuple(node.source.splits(planner.conf.default_parallelism))
    return ScanExec(node.source, node.attributes, node.pushed_filters, splits)


def plan_range(node: L.RangeRelation, planner: Planner) -> PhysicalPlan:
    """`spark.range`: in the partitions it asked for, else the default parallelism."""
    parts = node.num_partitions or planner.conf.default_parallelism
    return RangeExec(node.start, node.end, node.step, max(1, parts), node.attribute)


def plan_in_memory_relation(node: L.InMemoryRelation, planner: Planner) -> PhysicalPlan:
    """A cached or reused result, read from the block store partition by partition."""
    return CachedExec(node.cache_key, node.attributes, node.partitions)


# -- nodes that leave no operator of their own


def plan_subquery_alias(node: L.SubqueryAlias, planner: Planner) -> PhysicalPlan:
    """An alias only names columns for analysis: its child's operators."""
    return planner.plan(node.child)


def plan_broadcast_hint(node: L.BroadcastHint, planner: Planner) -> PhysicalPlan:
    """The hint was read when the join above was planned (`broadcast_hinted`): its child's operators."""
    return planner.plan(node.child)


def plan_device_hint(node: L.DeviceHint, planner: Planner) -> PhysicalPlan:
    """The child's operators, its top one pinned to the hinted device kind for placement."""
    return replace(planner.plan(node.child), device_pin=node.device)


# -- row-at-a-time operators


def plan_filter(node: L.Filter, planner: Planner) -> PhysicalPlan:
    """A filter in each of its input's tasks."""
    return FilterExec(planner.plan(node.child), node.condition)


def plan_project(node: L.Project, planner: Planner) -> PhysicalPlan:
    """A projection in each of its input's tasks."""
    return ProjectExec(planner.plan(node.child), node.projections)


def plan_generate(node: L.Generate, planner: Planner) -> PhysicalPlan:
    """explode, posexplode or inline in each of its input's tasks."""
    return GenerateExec(planner.plan(node.child), node.generator, node.outer, node.attributes)


def plan_map_in_batches(node: L.MapInBatches, planner: Planner) -> PhysicalPlan:
    """`mapInArrow` / `mapInPandas` in each of its input's tasks, pinned to the device its resource profile asks for."""
    return MapInBatchesExec(planner.plan(node.child), node.function, node.kind, node.attributes,
                            device_pin=node.device)


def plan_union(node: L.Union, planner: Planner) -> PhysicalPlan:
    """UNION ALL: every input's partitions side by side."""
    return UnionExec(tuple(planner.plan(c) for c in node.inputs), node.output)


# -- aggregation and windows


def plan_aggregate(node: L.Aggregate, planner: Planner) -> PhysicalPlan:
    """Partial aggregates, a hash exchange on the keys and final aggregates where every call decomposes;
    else the rows exchanged on the keys and aggregated complete. A projection above computes the outputs."""
    child = planner.plan(node.child)
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
        partitioning: Any = HashPartitioning(key_attrs, planner.conf.shuffle_partitions)
    else:
        partitioning = SinglePartition()
    if decomposable:
        partial = HashAggregateExec(child, keys, call_list, "partial")
        groups, child_size = estimate(node), estimated_size(child)
        if groups.rows >= 0 and child_size is not None and child_size[0] >= 0:
            # each task keeps one state row per group it saw: at most its input, at most every group
            rows = min(child_size[0], groups.rows * max(1, child.num_partitions))
            partial = replace(partial, estimate=(rows, rows * row_width(partial.output)))
        exchanged = _exchange(partial, partitioning)
        final_keys = tuple((a, a) for a in key_attrs)
        agg: PhysicalPlan = HashAggregateExec(exchanged, final_keys, call_list, "final")
    else:
        pre = ProjectExec(child, tuple(Alias(g, a.name, a.expr_id) if g is not a else a for g, a in keys)
                          + tuple(a for a in child.output if a.expr_id not in {k.expr_id for k in key_attrs}))
        exchanged = _exchange(pre, partitioning)
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


def plan_window(node: L.Window, planner: Planner) -> PhysicalPlan:
    """Window functions over rows exchanged on the partition keys (all in one partition without them)."""
    child = planner.plan(node.child)
    part: Any = (HashPartitioning(node.partition_by, planner.conf.shuffle_partitions)
                 if node.partition_by else SinglePartition())
    return WindowExec(_exchange(child, part), node.window_exprs, node.partition_by, node.order_by)


# -- joins


def plan_join(node: L.Join, planner: Planner) -> PhysicalPlan:
    """A hash join on the equality keys, broadcast or shuffled (with a key filter where one may pay);
    a nested-loop join where there are none."""
    left, right = planner.plan(node.left), planner.plan(node.right)
    conf = planner.conf
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
    right_reason = _broadcast_reason(conf, right_size, left_size, left.num_partitions) \
        if how in ("inner", "left", "left_semi", "left_anti") else None
    left_reason = _broadcast_reason(conf, left_size, right_size, right.num_partitions) \
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
    n = conf.shuffle_partitions
    left_exchange = _exchange(left, HashPartitioning(left_keys, n))
    right_exchange = _exchange(right, HashPartitioning(right_keys, n))
    filtered = _key_filtered_side(node, how, left_keys, right_keys)
    if filtered:
        side, target_keys = filtered
        # A source side already partitioned on its keys (an aggregate's output) has no exchange of its own
        # to materialize before the other side runs; a filtered aggregate (a HAVING) gets one, since its
        # real size, often a handful of rows, is what the estimates cannot see.
        if side == "right" and not isinstance(left_exchange, ExchangeExec) and _filtered_aggregate(node.left):
            left_exchange = ExchangeExec(left_exchange, HashPartitioning(left_keys, n))
        if side == "left" and not isinstance(right_exchange, ExchangeExec) and _filtered_aggregate(node.right):
            right_exchange = ExchangeExec(right_exchange, HashPartitioning(right_keys, n))
        # The filtered side's exchange gets a key filter fed by the other side's exchange (the same node).
        if isinstance(left_exchange, ExchangeExec) and isinstance(right_exchange, ExchangeExec):
            if side == "right":
                right_exchange = _key_filtered(right_exchange, right_keys, left_exchange, left_keys, target_keys)
            else:
                left_exchange = _key_filtered(left_exchange, left_keys, right_exchange, right_keys, target_keys)
    return HashJoinExec(
        left_exchange,
        right_exchange,
        how, left_keys, right_keys, residual, "shuffle", out,
        _shuffle_reason(left_size, right_size, conf.broadcast_threshold),
        build_left=how in ("inner", "left", "left_semi", "left_anti") and 0 <= 2 * left_size < right_size)


def _broadcast_reason(conf: PlannerConfig, build: int, probe: int, probe_tasks: int) -> str | None:
    """Why the `build` side (estimated bytes) may be broadcast to the probe side's tasks; None if not.

    Within spark.sql.autoBroadcastJoinThreshold it always may, as in Spark (-1 turns broadcasting
    off). Above it, up to quiver.sql.join.broadcastByCostMaxBytes, it may when building the side
    once per probe task costs well under hashing and moving both sides through a shuffle: at most
    half the probe side's bytes, since a large build side's hash table, made in every task at
    once, thrashes the caches it shares (TPC-H Q18's 92 MiB orders side ran slower broadcast
    to 2 tasks than shuffled).
    """
    threshold = conf.broadcast_threshold
    if threshold < 0 or build < 0:
        return None
    if build <= threshold:
        return f"est. {_size(build)} <= threshold {_size(threshold)}"
    if build > conf.broadcast_by_cost_max_bytes or probe < 0:
        return None
    tasks = max(probe_tasks, 1)
    if 2 * build * tasks <= probe:
        return f"by cost: est. {_size(build)} x {tasks} tasks <= half the {_size(probe)} probe side"
    return None


# -- ordering, limits and partitioning


def plan_sort(node: L.Sort, planner: Planner) -> PhysicalPlan:
    """A global sort over a range exchange (one partition where only one is shuffled to); a local sort in place."""
    child = planner.plan(node.child)
    if not node.is_global:
        return SortExec(child, node.orders)
    n = planner.conf.shuffle_partitions
    part: Any = RangePartitioning(node.orders, n) if n > 1 else SinglePartition()
    return SortExec(ExchangeExec(child, part), node.orders)


def plan_limit(node: L.Limit, planner: Planner) -> PhysicalPlan:
    """A limit over a global sort as a top-k per task and again over their results; else a limit per
    task and again in one partition."""
    if isinstance(node.child, L.Sort) and node.child.is_global:
        sort = node.child
        local = TopKExec(planner.plan(sort.child), sort.orders, node.n)
        return TopKExec(ExchangeExec(local, SinglePartition()), sort.orders, node.n)
    child = planner.plan(node.child)
    if child.num_partitions == 1:
        return LimitExec(child, node.n)
    return LimitExec(ExchangeExec(LimitExec(child, node.n), SinglePartition()), node.n)


def plan_offset(node: L.Offset, planner: Planner) -> PhysicalPlan:
    """OFFSET skips the first rows of the whole input, so in one partition."""
    child = planner.plan(node.child)
    single = child if child.num_partitions == 1 else ExchangeExec(child, SinglePartition())
    return OffsetExec(single, node.n)


def plan_repartition(node: L.Repartition, planner: Planner) -> PhysicalPlan:
    """`repartition` / `repartitionByRange` as the exchange they name; `coalesce` merges partitions without one."""
    child = planner.plan(node.child)
    n = node.num_partitions or planner.conf.shuffle_partitions
    fixed = node.num_partitions is not None
    if node.kind == "coalesce":
        return CoalesceExec(child, n)
    if node.kind == "range":
        return ExchangeExec(child, RangePartitioning(node.keys, n), fixed)
    if node.kind == "roundrobin":
        return ExchangeExec(child, RoundRobinPartitioning(n), fixed)
    return ExchangeExec(child, HashPartitioning(node.keys, n), fixed)


# A planning function takes the node type it is registered for (a Filter, a Join), hence Any.
PlanFn = Callable[[Any, Planner], PhysicalPlan]

# Logical node type -> the function that plans it; dispatch is by exact type, so a type missing here
# (a subclass of one listed included) has no physical plan.
PLAN_FNS: dict[type[L.LogicalPlan], PlanFn] = {
    L.LocalRelation: plan_local_relation,
    L.SourceScan: plan_source_scan,
    L.RangeRelation: plan_range,
    L.InMemoryRelation: plan_in_memory_relation,
    L.SubqueryAlias: plan_subquery_alias,
    L.BroadcastHint: plan_broadcast_hint,
    L.DeviceHint: plan_device_hint,
    L.Filter: plan_filter,
    L.Project: plan_project,
    L.Generate: plan_generate,
    L.MapInBatches: plan_map_in_batches,
    L.Union: plan_union,
    L.Aggregate: plan_aggregate,
    L.Window: plan_window,
    L.Join: plan_join,
    L.Sort: plan_sort,
    L.Limit: plan_limit,
    L.Offset: plan_offset,
    L.Repartition: plan_repartition,
}


# At run time a side's keys filter the other side of a shuffled join when it has at most this many
# rows, and this many times fewer than the other side's estimated distinct keys.
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
    sides, the one whose keys outnumber the other's the most, except that a filtered aggregate (a
    HAVING) is always the source: its estimate is a guess, and its real size, often a handful of
    rows, is the case this filter exists for. Whether it pays is left to run time, when the other
    side's real size is known.
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
        if _filtered_aggregate(source) and not _filtered_aggregate(target):
            ratio = float("inf")
        if ratio > best_ratio:
            best, best_ratio = (side, target_distinct), ratio
    return best


def _filtered_aggregate(plan: L.LogicalPlan) -> bool:
    """Whether `plan` is an aggregate's groups with a filter over them (a HAVING, or a WHERE over a grouped
    subquery), looking through aliases and projections: the rows whose count no estimate knows."""
    filtered = False
    while isinstance(plan, (L.SubqueryAlias, L.Project, L.Filter)):
        filtered = filtered or isinstance(plan, L.Filter)
        plan = plan.children()[0]
    return filtered and isinstance(plan, L.Aggregate)


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
        lhs, rhs = c.left, c.right
    elif lr and rr and lr <= right_ids and rr <= left_ids:
        lhs, rhs = c.right, c.left
    else:
        return None
    zero = _zero_of(lhs.dtype)
    if zero is None or lhs.dtype != rhs.dtype:
        return None
    return ((ScalarFunction("coalesce", (lhs, zero)), IsNull(lhs)),
            (ScalarFunction("coalesce", (rhs, zero)), IsNull(rhs)))


def _zero_of(t) -> Literal | None:
    import datetime as dt
    import decimal

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


__all__ = ["PLAN_FNS", "Planner", "PlannerConfig", "plan_physical"]
