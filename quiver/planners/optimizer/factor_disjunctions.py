"""Pull the conjuncts every branch of an OR shares out of it, so they can become join keys.

    (a AND b) OR (a AND c)  ->  a AND (b OR c)

TPC-H Q19 writes its join key `p_partkey = l_partkey` inside each of three OR branches;
factored out, the join is a hash join instead of a filtered cross product.
"""
from __future__ import annotations

from quiver.engine.core.expressions import Expr, Or, conjoin, split_conjuncts, transform_expr
from quiver.engine.core.plan import Filter, Join, LogicalPlan, transform_up


def factor_disjunctions(plan: LogicalPlan) -> LogicalPlan:
    """Rewrite the filter and join conditions of `plan` with common OR conjuncts factored out."""
    def rule(node: LogicalPlan) -> LogicalPlan:
        if isinstance(node, Filter):
            cond = transform_expr(node.condition, factor)
            return node if cond == node.condition else Filter(node.child, cond)
        if isinstance(node, Join) and node.condition is not None:
            cond = transform_expr(node.condition, factor)
            return node if cond == node.condition else Join(node.left, node.right, node.how, cond)
        return node
    return transform_up(plan, rule)


def disjuncts(e: Expr) -> list[Expr]:
    """The branches of a (nested) OR; `e` alone when it is not one."""
    if isinstance(e, Or):
        return disjuncts(e.left) + disjuncts(e.right)
    return [e]


def factor(e: Expr) -> Expr:
    """`e` with the conjuncts common to all its OR branches pulled in front (e itself if none or not an OR)."""
    if not isinstance(e, Or) or not e.deterministic:
        return e
    branches = [split_conjuncts(d) for d in disjuncts(e)]
    common = [c for c in branches[0] if all(c in b for b in branches[1:])]
    if not common:
        return e
    rests = [[c for c in b if c not in common] for b in branches]
    if any(not r for r in rests):
        # One branch is exactly the common part: the OR adds nothing beyond it.
        return conjoin(common)
    disjunction = conjoin(rests[0])
    for r in rests[1:]:
        disjunction = Or(disjunction, conjoin(r))
    return conjoin(common + [disjunction])
