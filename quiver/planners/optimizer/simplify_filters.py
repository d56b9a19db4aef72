"""Filter(x, true) -> x; Filter(x, false or null) -> an empty filter kept as false."""
from __future__ import annotations

from quiver.engine.core.expressions import Literal
from quiver.engine.core.plan import Filter, LogicalPlan, transform_up


def simplify_filters(plan: LogicalPlan) -> LogicalPlan:
    """Drop filters whose condition folded to the literal true."""
    def rule(node: LogicalPlan) -> LogicalPlan:
        if isinstance(node, Filter) and isinstance(node.condition, Literal) and node.condition.value is True:
            return node.child
        return node
    return transform_up(plan, rule)
