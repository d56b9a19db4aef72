"""Derive single-table filters from an OR that spans tables, so each table is filtered before the join.

    (n1.name = 'FRANCE' AND n2.name = 'GERMANY') OR (n1.name = 'GERMANY' AND n2.name = 'FRANCE')
implies
    (n1.name = 'FRANCE' OR n1.name = 'GERMANY')   and   (n2.name = 'GERMANY' OR n2.name = 'FRANCE')

For each table the OR reads, when every branch holds some conjunct on that table alone, the
OR of those conjuncts is implied; it is added beside the original condition (which stays), and
predicate pushdown then moves it to the table's scan. TPC-H Q7 and Q19 are written this way: the
derived filters cut nation to 2 rows of 25 and lineitem to the few ship modes and quantities asked.
Tables are the inputs found below inner joins, filters and aliases; an outer join is a boundary,
since a filter derived on its null-supplying side would change which rows come out null-extended.
"""
from __future__ import annotations

from quiver.engine.core.expressions import Expr, Or, conjoin, split_conjuncts
from quiver.engine.core.plan import Filter, Join, LogicalPlan, SubqueryAlias, transform_up
from quiver.planners.optimizer.factor_disjunctions import disjuncts


def derive_disjunct_filters(plan: LogicalPlan) -> LogicalPlan:
    """`plan` with the implied per-table filters of cross-table ORs added to their conditions.

    Run once, not to a fixed point: the derived filters are themselves ORs that a second pass
    would only derive again.
    """
    def rule(node: LogicalPlan) -> LogicalPlan:
        if isinstance(node, Filter):
            cond = _with_derived(node.condition, _tables(node.child))
            return node if cond is node.condition else Filter(node.child, cond)
        if isinstance(node, Join) and node.how in ("inner", "cross") and node.condition is not None:
            cond = _with_derived(node.condition, _tables(node.left) + _tables(node.right))
            return node if cond is node.condition else Join(node.left, node.right, node.how, cond)
        return node
    return transform_up(plan, rule)


def _tables(plan: LogicalPlan) -> list[frozenset[int]]:
    """The output column ids of each table-like input below inner joins, filters and aliases."""
    if isinstance(plan, Join) and plan.how in ("inner", "cross"):
        return _tables(plan.left) + _tables(plan.right)
    if isinstance(plan, (Filter, SubqueryAlias)):
        return _tables(plan.children()[0])
    return [frozenset(a.expr_id for a in plan.output)]


def _with_derived(condition: Expr, tables: list[frozenset[int]]) -> Expr:
    """`condition` and, for each cross-table OR among its conjuncts, the filters it implies per table."""
    conjuncts = split_conjuncts(condition)
    derived: list[Expr] = []
    for c in conjuncts:
        if not isinstance(c, Or) or not c.deterministic:
            continue
        refs = c.references()
        read = [t for t in tables if refs & t]
        if len(read) < 2:
            continue
        branches = [split_conjuncts(d) for d in disjuncts(c)]
        for table in read:
            implied = _implied(branches, table)
            if implied is not None and implied not in conjuncts and implied not in derived:
                derived.append(implied)
    return conjoin(conjuncts + derived) if derived else condition


def _implied(branches: list[list[Expr]], table: frozenset[int]) -> Expr | None:
    """OR over branches of each branch's conjuncts on `table` alone; None when a branch has none."""
    parts = []
    for branch in branches:
        own = [c for c in branch if c.references() and c.references() <= table and c.deterministic]
        if not own:
            return None
        parts.append(conjoin(own))
    implied = parts[0]
    for p in parts[1:]:
        implied = Or(implied, p)
    return implied
