"""Project(Project(x, inner), outer) -> Project(x, outer with inner's definitions substituted)."""
from __future__ import annotations

from collections import Counter

from quiver.engine.core.expressions import Alias, AttributeRef, Expr, substitute_attributes
from quiver.engine.core.plan import LogicalPlan, Project, transform_up


def collapse_projects(plan: LogicalPlan) -> LogicalPlan:
    """Merge adjacent projections unless that would compute a non-trivial expression twice."""
    def rule(node: LogicalPlan) -> LogicalPlan:
        if not (isinstance(node, Project) and isinstance(node.child, Project)):
            return node
        inner = node.child
        if not all(p.deterministic for p in inner.projections):
            return node
        defs: dict[int, Expr] = {}
        for p in inner.projections:
            if isinstance(p, Alias):
                defs[p.expr_id] = p.child
        uses = Counter(e.expr_id for p in node.projections for e in p.walk()
                       if isinstance(e, AttributeRef) and e.expr_id in defs)
        if any(n > 1 and not isinstance(defs[r], AttributeRef) for r, n in uses.items()):
            return node
        merged = tuple(_rebind(p, defs) for p in node.projections)
        return Project(inner.child, merged)
    return transform_up(plan, rule)


def _rebind(p: Expr, defs: dict[int, Expr]) -> Expr:
    if isinstance(p, AttributeRef) and p.expr_id in defs:
        return Alias(defs[p.expr_id], p.name, p.expr_id)
    if isinstance(p, Alias):
        return Alias(substitute_attributes(p.child, defs), p.name, p.expr_id)
    return substitute_attributes(p, defs)
