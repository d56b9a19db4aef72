"""Move filters towards the data: below projections, sorts, aliases and unions, into join
sides and aggregates (on grouping columns only), and into scans so Parquet row groups are
skipped by their statistics.

Filter(Project(x, p), c)         -> Project(Filter(x, c[p]), p)
Filter(Join(l, r, inner), a & b) -> Join(Filter(l, a), Filter(r, b))   (a on l only, b on r only)
Join(l, r, left, k & b)          -> Join(l, Filter(r, b), left, k)      (b on r only, in the ON clause)
Filter(Scan, c)                  -> Filter(Scan(pushed=c), c)            (the scan's filter is a hint)
Filter(Generate(x), a & g)       -> Filter(Generate(Filter(x, a)), g)   (a on x's columns, g on generated ones)
"""
from __future__ import annotations

from dataclasses import replace

from quiver.engine.core.expressions import (
    Alias,
    AttributeRef,
    Expr,
    conjoin,
    split_conjuncts,
    substitute_attributes,
)
from quiver.engine.core.plan import (
    Aggregate,
    BroadcastHint,
    Filter,
    Generate,
    Join,
    LogicalPlan,
    Project,
    Sort,
    SourceScan,
    SubqueryAlias,
    Union,
    transform_down,
)

_PUSH_LEFT = ("inner", "left", "left_semi", "left_anti", "cross")
_PUSH_RIGHT = ("inner", "right", "cross")
# A join condition's conjunct on one side only filters that side first wherever a row of that side
# failing it could never match anyway: either side of an inner join, the right (null-supplying or
# existence-tested) side of left outer, semi and anti joins, the left side of a right outer join.
_CONDITION_TO_LEFT = ("inner", "cross", "right")
_CONDITION_TO_RIGHT = ("inner", "cross", "left", "left_semi", "left_anti")


def push_down_predicates(plan: LogicalPlan) -> LogicalPlan:
    """One top-down pass; the optimizer driver repeats it until filters stop moving."""
    return transform_down(plan, _push)


def _push(node: LogicalPlan) -> LogicalPlan:
    if isinstance(node, Join) and node.how in _CONDITION_TO_LEFT + _CONDITION_TO_RIGHT and node.condition is not None:
        return _push_join_condition(node)
    if not isinstance(node, Filter):
        return node
    child = node.child
    cond = node.condition
    if not cond.deterministic:
        return node
    if isinstance(child, Project) and all(p.deterministic for p in child.projections):
        defs = {p.expr_id: p.child for p in child.projections if isinstance(p, Alias)}
        return Project(Filter(child.child, substitute_attributes(cond, defs)), child.projections)
    if isinstance(child, (Sort, SubqueryAlias, BroadcastHint)):
        return child.with_children((Filter(child.children()[0], cond),))
    if isinstance(child, Generate):
        return _push_below_generate(node, child)
    if isinstance(child, Aggregate):
        return _push_into_aggregate(node, child)
    if isinstance(child, Join):
        return _push_into_join(node, child)
    if isinstance(child, Union):
        return Union(tuple(Filter(c, _positional(cond, child, c)) for c in child.inputs))
    if isinstance(child, SourceScan):
        new = [c for c in split_conjuncts(cond) if c not in child.pushed_filters]
        if new:
            return Filter(replace(child, pushed_filters=child.pushed_filters + tuple(new)), cond)
    return node


def _push_below_generate(node: Filter, generate: Generate) -> LogicalPlan:
    """Conditions on the child's columns only go below the Generate; those on generated columns stay above."""
    child_ids = {a.expr_id for a in generate.child.output}
    below = [c for c in split_conjuncts(node.condition) if c.references() <= child_ids]
    if not below:
        return node
    above = [c for c in split_conjuncts(node.condition) if not c.references() <= child_ids]
    pushed = replace(generate, child=Filter(generate.child, conjoin(below)))
    return Filter(pushed, conjoin(above)) if above else pushed


def _positional(cond: Expr, union: Union, target: LogicalPlan) -> Expr:
    mapping = {a.expr_id: b for a, b in zip(union.output, target.output)}
    return substitute_attributes(cond, mapping)


def _push_into_aggregate(node: Filter, agg: Aggregate) -> LogicalPlan:
    grouped = {g.expr_id for g in agg.grouping if isinstance(g, AttributeRef)}
    passthrough = {a.expr_id for a in agg.aggregates if isinstance(a, AttributeRef) and a.expr_id in grouped}
    below, above = [], []
    for c in split_conjuncts(node.condition):
        (below if c.references() and c.references() <= passthrough else above).append(c)
    if not below:
        return node
    pushed = replace(agg, child=Filter(agg.child, conjoin(below)))
    rest = conjoin(above)
    return Filter(pushed, rest) if rest is not None else pushed


def _push_into_join(node: Filter, join: Join) -> LogicalPlan:
    left_ids = {a.expr_id for a in join.left.output}
    right_ids = {a.expr_id for a in join.right.output}
    to_left, to_right, into_join, keep = [], [], [], []
    for c in split_conjuncts(node.condition):
        refs = c.references()
        if refs and refs <= left_ids and join.how in _PUSH_LEFT:
            to_left.append(c)
        elif refs and refs <= right_ids and join.how in _PUSH_RIGHT:
            to_right.append(c)
        elif join.how in ("inner", "cross") and refs <= left_ids | right_ids:
            into_join.append(c)
        else:
            keep.append(c)
    if not (to_left or to_right or into_join):
        return node
    left = Filter(join.left, conjoin(to_left)) if to_left else join.left
    right = Filter(join.right, conjoin(to_right)) if to_right else join.right
    how = join.how
    condition = conjoin(split_conjuncts(join.condition) + into_join)
    if how == "cross" and into_join:
        how = "inner"
    new_join = Join(left, right, how, condition)
    rest = conjoin(keep)
    return Filter(new_join, rest) if rest is not None else new_join


def _push_join_condition(join: Join) -> LogicalPlan:
    """Conjuncts of a join condition that read one side only filter that side first, where the join
    type allows (`_CONDITION_TO_LEFT`, `_CONDITION_TO_RIGHT`): TPC-H Q13's `o_comment NOT LIKE ...`
    in a left join's ON clause filters orders before they are shuffled."""
    left_ids = {a.expr_id for a in join.left.output}
    right_ids = {a.expr_id for a in join.right.output}
    to_left, to_right, keep = [], [], []
    for c in split_conjuncts(join.condition):
        refs = c.references()
        if refs and refs <= left_ids and join.how in _CONDITION_TO_LEFT and c.deterministic:
            to_left.append(c)
        elif refs and refs <= right_ids and join.how in _CONDITION_TO_RIGHT and c.deterministic:
            to_right.append(c)
        else:
            keep.append(c)
    if not (to_left or to_right):
        return join
    left = Filter(join.left, conjoin(to_left)) if to_left else join.left
    right = Filter(join.right, conjoin(to_right)) if to_right else join.right
    return Join(left, right, join.how, conjoin(keep))
