"""Stop reading early: Limit(Limit(x, a), b) -> Limit(x, min(a, b)); a limit passes below a
projection; each input of a union gets a local limit.
"""
from __future__ import annotations

from quiver.engine.core.plan import Limit, LogicalPlan, Offset, Project, Union, transform_down


def push_down_limits(plan: LogicalPlan) -> LogicalPlan:
    """Push limits towards the leaves where that cannot change the result."""
    def rule(node: LogicalPlan) -> LogicalPlan:
        if not isinstance(node, Limit):
            return node
        child = node.child
        if isinstance(child, Limit):
            return Limit(child.child, min(node.n, child.n))
        if isinstance(child, Offset):
            # LIMIT n OFFSET m reads the first n + m rows, so a sort below becomes a top-(n + m).
            return Offset(Limit(child.child, node.n + child.n), child.n)
        if isinstance(child, Project) and all(p.deterministic for p in child.projections):
            return Project(Limit(child.child, node.n), child.projections)
        if isinstance(child, Union) and not all(isinstance(c, Limit) and c.n <= node.n for c in child.inputs):
            return Limit(Union(tuple(c if isinstance(c, Limit) and c.n <= node.n else Limit(c, node.n)
                                     for c in child.inputs)), node.n)
        return node
    return transform_down(plan, rule)
