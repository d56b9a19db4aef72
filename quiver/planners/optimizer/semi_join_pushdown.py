"""Move a semi or anti join below the inner joins it does not need, when that filters fewer rows.

    Semi(Join(A, B), R, a = r)  ->  Join(Semi(A, R, a = r), B)      (the condition reads A and R only)

A semi/anti join keeps or drops each left row by its own columns, so it may run on the input
those columns come from. That is cheaper when it leaves that input no larger than the inner
join would: TPC-H Q18 keeps orders whose lineitems sum past 300; checked on orders (1.5M rows)
instead of orders joined to lineitem (6M), the 57 survivors then meet lineitem. Q2's partsupp
keeps the rows of a few hundred parts before it meets Europe's suppliers. When the joins above
cut the input down more (Q21's lineitem, joined to one nation's suppliers), the semi join
stays on top.
"""
from __future__ import annotations

from quiver.engine.core.expressions import AttributeRef
from quiver.engine.core.plan import Join, LogicalPlan, Project, transform_down
from quiver.planners.statistics import estimate


def push_down_semi_joins(plan: LogicalPlan) -> LogicalPlan:
    """One top-down pass; each semi/anti join sinks as far as the estimates say it should."""
    return transform_down(plan, _sink)


def _sink(node: LogicalPlan) -> LogicalPlan:
    if not (isinstance(node, Join) and node.how in ("left_semi", "left_anti") and node.condition is not None):
        return node
    left_refs = node.condition.references() & {a.expr_id for a in node.left.output}
    child = node.left
    if isinstance(child, Project) and all(isinstance(p, AttributeRef) for p in child.projections):
        inner = _sink(Join(child.child, node.right, node.how, node.condition))
        if isinstance(inner, Join) and inner.how == node.how:
            return node
        return Project(inner, child.projections)
    if not (isinstance(child, Join) and child.how in ("inner", "cross")):
        return node
    joined_rows = estimate(child).rows
    for side in ("left", "right"):
        target = getattr(child, side)
        if not left_refs <= {a.expr_id for a in target.output}:
            continue
        filtered = Join(target, node.right, node.how, node.condition)
        filtered_rows = estimate(filtered).rows
        if filtered_rows < 0 or joined_rows < 0 or filtered_rows > joined_rows:
            return node
        sunk = _sink(filtered)
        if side == "left":
            return Join(sunk, child.right, child.how, child.condition)
        return Join(child.left, sunk, child.how, child.condition)
    return node
