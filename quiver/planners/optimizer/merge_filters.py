"""Filter(Filter(x, a), b) -> Filter(x, a AND b): one pass over the rows instead of two."""
from __future__ import annotations

from quiver.engine.core.expressions import And
from quiver.engine.core.plan import Filter, LogicalPlan, transform_up


def merge_filters(plan: LogicalPlan) -> LogicalPlan:
    """Merge directly nested filters into one conjunction (inner condition first)."""
    def rule(node: LogicalPlan) -> LogicalPlan:
        if isinstance(node, Filter) and isinstance(node.child, Filter):
            return Filter(node.child.child, And(node.child.condition, node.condition))
        return node
    return transform_up(plan, rule)
