"""Read and carry only the columns the query uses, down to the scan.

Walks top-down with the set of attribute ids needed above each node; projections and
aggregates drop unused outputs, scans and in-memory tables drop unused columns. A node
never ends up with no columns (a count still needs rows), so one narrow column is kept.
"""
from __future__ import annotations

from dataclasses import replace

from quiver.engine.core.expressions import AttributeRef
from quiver.engine.core.plan import (
    Aggregate,
    BroadcastHint,
    DeviceHint,
    Filter,
    Generate,
    Join,
    Limit,
    LocalRelation,
    LogicalPlan,
    MapInBatches,
    Offset,
    Project,
    RangeRelation,
    Repartition,
    Sort,
    SourceScan,
    SubqueryAlias,
    Union,
    Window,
)
from quiver.planners.statistics import row_width


def prune_columns(plan: LogicalPlan) -> LogicalPlan:
    """Prune every subtree to the columns needed by the root's output."""
    return _prune(plan, {a.expr_id for a in plan.output})


def _refs(exprs) -> set[int]:
    out: set[int] = set()
    for e in exprs:
        out |= e.references()
    return out


def _narrowest(attrs: tuple[AttributeRef, ...]) -> tuple[AttributeRef, ...]:
    """The one narrowest column, kept so rows can still be counted; none when there are none
    (a CSV file without lines has no columns)."""
    return (min(attrs, key=lambda a: row_width([a])),) if attrs else ()


def _prune(node: LogicalPlan, needed: set[int]) -> LogicalPlan:
    if isinstance(node, Project):
        kept = tuple(p for p in node.projections if _id(p) in needed) or node.projections[:1]
        return Project(_prune(node.child, _refs(kept) or _one(node.child)), kept)
    if isinstance(node, Aggregate):
        kept = tuple(a for a in node.aggregates if _id(a) in needed) or node.aggregates[:1]
        child_needs = _refs(node.grouping) | _refs(kept)
        return replace(node, child=_prune(node.child, child_needs or _one(node.child)), aggregates=kept)
    if isinstance(node, Filter):
        return Filter(_prune(node.child, needed | node.condition.references()), node.condition)
    if isinstance(node, Window):
        kept = tuple(w for w in node.window_exprs if _id(w) in needed) or node.window_exprs[:1]
        child_needs = (needed & {a.expr_id for a in node.child.output}) | _refs(kept) | _refs(node.partition_by) \
            | _refs(node.order_by)
        return replace(node, child=_prune(node.child, child_needs or _one(node.child)), window_exprs=kept)
    if isinstance(node, Sort):
        return replace(node, child=_prune(node.child, needed | _refs(node.orders)))
    if isinstance(node, Repartition):
        return replace(node, child=_prune(node.child, needed | _refs(node.keys)))
    if isinstance(node, (Limit, Offset, SubqueryAlias, DeviceHint, BroadcastHint)):
        return node.with_children((_prune(node.children()[0], needed),))
    if isinstance(node, Generate):
        # The generator's input and the child columns wanted above; the generated columns stay
        # (they are what the node makes), and unwanted child columns are dropped before repeating rows.
        child_needs = (needed & {a.expr_id for a in node.child.output}) | node.generator.references()
        child = _narrowed(_prune(node.child, child_needs or _one(node.child)), child_needs)
        return replace(node, child=child)
    if isinstance(node, MapInBatches):
        # The user's function may read any column of its input: all of them are kept.
        return replace(node, child=_prune(node.child, {a.expr_id for a in node.child.output}))
    if isinstance(node, Join):
        cond = node.condition.references() if node.condition is not None else set()
        want = needed | cond
        left_ids = {a.expr_id for a in node.left.output}
        right_ids = {a.expr_id for a in node.right.output}
        left = _narrowed(_prune(node.left, (want & left_ids) or _one(node.left)), want)
        right = _narrowed(_prune(node.right, (want & right_ids) or _one(node.right)), want)
        return replace(node, left=left, right=right)
    if isinstance(node, Union):
        positions = [i for i, a in enumerate(node.output) if a.expr_id in needed] or [0]
        if len(positions) == len(node.output):
            return Union(tuple(_prune(c, {a.expr_id for a in c.output}) for c in node.inputs))
        inputs = []
        for c in node.inputs:
            keep = tuple(c.output[i] for i in positions)
            inputs.append(Project(_prune(c, {a.expr_id for a in keep}), keep))
        return Union(tuple(inputs))
    if isinstance(node, SourceScan):
        attrs = tuple(a for a in node.attributes if a.expr_id in needed) or _narrowest(node.attributes)
        return node if attrs == node.attributes else replace(node, attributes=attrs)
    if isinstance(node, LocalRelation):
        idx = [i for i, a in enumerate(node.attributes) if a.expr_id in needed]
        if not idx:
            idx = [node.attributes.index(a) for a in _narrowest(node.attributes)]
        if len(idx) == len(node.attributes):
            return node
        return LocalRelation(node.table.select(idx), tuple(node.attributes[i] for i in idx))
    if isinstance(node, RangeRelation):
        return node
    return node


def _narrowed(side: LogicalPlan, want: set[int]) -> LogicalPlan:
    """A join side without the columns only its own filters read (TPC-H Q13's o_comment), so they
    are not carried into the join's shuffle."""
    kept = tuple(a for a in side.output if a.expr_id in want)
    if not kept or len(kept) == len(side.output):
        return side
    return Project(side, kept)


def _one(node: LogicalPlan) -> set[int]:
    return {a.expr_id for a in _narrowest(node.output)}


def _id(e) -> int | None:
    return getattr(e, "expr_id", None)
