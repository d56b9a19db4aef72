"""Aggregate only the groups a join will keep: a semi join on the join key goes below the aggregate.

    Join(B, Aggregate(g..., A), b = g)  ->  Join(B, Aggregate(g..., Semi(A, Project[s](S), g = s)), b = g)

where S is a small subtree of B through which `b` flows unchanged or by an equi-join (`s` is `b`'s
value there), so S's keys are a superset of the keys B can offer. A decorrelated subquery is the
usual case: TPC-H Q17 averages l_quantity per part over all of lineitem, yet only the ~200 parts of
one brand and container ask; Q20 and Q2 likewise. This is the "magic set" DuckDB's delim join and
sideways information passing give: S runs a second time (a filtered scan of a small table), and in
exchange the aggregate and its shuffle see the matching rows only.

It applies where the join drops the aggregate's unmatched groups (inner, and the right side of a
left outer join or the left of a semi join) and the estimates say S is at least
`MIN_REDUCTION` times smaller than the groups it filters, while running S again reads at most half
the rows the aggregate's input reads.
"""
from __future__ import annotations

from collections.abc import Iterator

from quiver.engine.core.expressions import Alias, AttributeRef, Comparison, Expr, new_expr_id, split_conjuncts
from quiver.engine.core.plan import (
    Aggregate,
    Filter,
    Join,
    LogicalPlan,
    Project,
    SourceScan,
    SubqueryAlias,
    named_output,
    transform_down,
)
from quiver.planners.statistics import estimate

MIN_REDUCTION = 10

# Join types under which a side's rows without a match never reach the output.
_FILTERED_SIDES = {"inner": ("left", "right"), "cross": ("left", "right"), "left": ("right",),
                   "right": ("left",), "left_semi": ("left",)}


def filter_aggregates_by_join_keys(plan: LogicalPlan) -> LogicalPlan:
    """One top-down pass; each eligible join gets at most one semi join under its aggregate side."""
    return transform_down(plan, _filter_join)


def _filter_join(node: LogicalPlan) -> LogicalPlan:
    if not (isinstance(node, Join) and node.how in _FILTERED_SIDES and node.condition is not None):
        return node
    for side in _FILTERED_SIDES[node.how]:
        aggregated = getattr(node, side)
        offering = node.right if side == "left" else node.left
        rewritten = _with_key_filter(aggregated, offering, _equalities(node.condition, aggregated, offering))
        if rewritten is not None:
            return Join(rewritten, node.right, node.how, node.condition) if side == "left" \
                else Join(node.left, rewritten, node.how, node.condition)
    return node


def _equalities(condition: Expr, aggregated: LogicalPlan, offering: LogicalPlan) -> list[tuple[int, AttributeRef]]:
    """(aggregated side's column id, offering side's column) for each `a = b` conjunct (not `<=>`: a
    null-safe match would keep null groups the semi join drops)."""
    mine = {a.expr_id for a in aggregated.output}
    theirs = {a.expr_id: a for a in offering.output}
    pairs = []
    for c in split_conjuncts(condition):
        if isinstance(c, Comparison) and c.op == "=" and isinstance(c.left, AttributeRef) \
                and isinstance(c.right, AttributeRef):
            for a, b in ((c.left, c.right), (c.right, c.left)):
                if a.expr_id in mine and b.expr_id in theirs:
                    pairs.append((a.expr_id, theirs[b.expr_id]))
    return pairs


def _with_key_filter(
    plan: LogicalPlan, offering: LogicalPlan, pairs: list[tuple[int, AttributeRef]],
) -> LogicalPlan | None:
    """`plan` with a semi join under its aggregate for the most selective pair; None when none pays."""
    if isinstance(plan, (Filter, SubqueryAlias)):
        inner = _with_key_filter(plan.child, offering, pairs)
        return None if inner is None else plan.with_children((inner,))
    if isinstance(plan, Project):
        renamed = []
        for column, offered in pairs:
            source = _projected_column(plan, column)
            if source is not None:
                renamed.append((source, offered))
        inner = _with_key_filter(plan.child, offering, renamed)
        return None if inner is None else Project(inner, plan.projections)
    if not (isinstance(plan, Aggregate) and plan.grouping):
        return None
    groups = estimate(plan).rows
    input_cost = _scanned_rows(plan.child)
    if groups < 0:
        return None
    best: tuple[int, AttributeRef, LogicalPlan, AttributeRef] | None = None
    for column, offered in pairs:
        grouped = _grouping_input(plan, column)
        if grouped is None:
            continue
        for subtree, key in _key_sources(offering, offered):
            rows = estimate(subtree).rows
            if rows < 0 or rows * MIN_REDUCTION > groups or _scanned_rows(subtree) * 2 > input_cost:
                continue
            if best is None or rows < best[0]:
                best = (rows, grouped, subtree, key)
    if best is None:
        return None
    _, grouped, subtree, key = best
    domain = Project(subtree, (Alias(key.with_qualifier(()), key.name, new_expr_id()),))
    domain_key = named_output(domain.projections[0])
    semi = Join(plan.child, domain, "left_semi", Comparison("=", grouped, domain_key))
    return Aggregate(semi, plan.grouping, plan.aggregates)


def _projected_column(plan: Project, column: int) -> int | None:
    """The child column a projection passes on as `column` (as is or renamed), if it does."""
    for p in plan.projections:
        if named_output(p).expr_id != column:
            continue
        source = p.child if isinstance(p, Alias) else p
        return source.expr_id if isinstance(source, AttributeRef) else None
    return None


def _grouping_input(plan: Aggregate, column: int) -> AttributeRef | None:
    """The input column whose groups the aggregate outputs as `column`: a grouping column passed through."""
    grouped = {g.expr_id for g in plan.grouping if isinstance(g, AttributeRef)}
    for e in plan.aggregates:
        if named_output(e).expr_id != column:
            continue
        source = e.child if isinstance(e, Alias) else e
        if isinstance(source, AttributeRef) and source.expr_id in grouped:
            return source
    return None


def _key_sources(plan: LogicalPlan, key: AttributeRef) -> Iterator[tuple[LogicalPlan, AttributeRef]]:
    """Subtrees of `plan` whose column `key` holds every value `plan` outputs as `key`: the plan itself,
    then down through filters, projections that pass it on, the sides of joins that carry it, and
    across the equi-join conditions of inner and semi joins (where the other side restricts it)."""
    yield plan, key
    if isinstance(plan, (Filter, SubqueryAlias)):
        yield from _key_sources(plan.child, _attribute(plan.child, key.expr_id))
    elif isinstance(plan, Project):
        source = _projected_column(plan, key.expr_id)
        if source is not None:
            yield from _key_sources(plan.child, _attribute(plan.child, source))
    elif isinstance(plan, Join):
        left_ids = {a.expr_id for a in plan.left.output}
        side = plan.left if key.expr_id in left_ids else plan.right
        if plan.how in ("inner", "cross", "left_semi") or (plan.how == "left" and side is plan.left) \
                or (plan.how == "right" and side is plan.right):
            yield from _key_sources(side, _attribute(side, key.expr_id))
        if plan.how in ("inner", "left_semi") and plan.condition is not None:
            other = plan.right if side is plan.left else plan.left
            for column, partner in _equalities(plan.condition, side, other):
                if column == key.expr_id:
                    yield from _key_sources(other, partner)


def _attribute(plan: LogicalPlan, expr_id: int) -> AttributeRef:
    return next(a for a in plan.output if a.expr_id == expr_id)


def _scanned_rows(plan: LogicalPlan) -> int:
    """Rows the subtree's scans read: what running it once more costs."""
    total = 0
    for node in plan.walk():
        if isinstance(node, SourceScan) or not node.children():
            rows = estimate(node).rows
            total += max(0, rows)
    return total
