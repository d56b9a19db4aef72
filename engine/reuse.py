"""Aggregates a query would compute twice: once for an uncorrelated scalar subquery, once for the query.

TPC-H Q15 reads its `revenue0` view twice, in the FROM clause and in `(SELECT max(total_revenue)
FROM revenue0)`; the subquery runs as a job of its own before the query (its value is inlined),
so without reuse lineitem is scanned and aggregated twice. Spark shares the exchange between the
two (ReuseExchange/ReuseSubquery). Here the shared aggregate runs once, its result is kept in the
block store for the query's lifetime, and both places read it as an in-memory relation.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from quiver.engine import plan as L
from quiver.engine.expressions import Expr, transform_expr
from quiver.engine.subqueries import ScalarSubquery, has_subquery

REUSED = "reused within this query"


def shared_aggregates(plan: L.LogicalPlan) -> list[L.Aggregate]:
    """Aggregates that occur in an uncorrelated scalar subquery of `plan` and once more elsewhere in it
    (the query or another such subquery), outermost first; deterministic ones only."""
    in_subqueries: set[L.Aggregate] = set()
    counts: Counter[L.Aggregate] = Counter()
    for tree, inside_subquery in _trees(plan, False):
        for node in tree.walk():
            if isinstance(node, L.Aggregate):
                counts[node] += 1
                if inside_subquery:
                    in_subqueries.add(node)
    shared = [a for a in in_subqueries if counts[a] > 1 and _deterministic(a)]
    outermost = [a for a in shared if not any(b is not a and _contains(b, a) for b in shared)]
    return sorted(outermost, key=lambda a: -sum(1 for _ in a.walk()))


def replace_subtrees(plan: L.LogicalPlan, replacements: dict[L.LogicalPlan, L.LogicalPlan]) -> L.LogicalPlan:
    """`plan` with each subtree found in `replacements` swapped, inside scalar subqueries too."""
    def visit(node: L.LogicalPlan) -> L.LogicalPlan:
        if node in replacements:
            return replacements[node]
        if any(has_subquery(e) for e in node.expressions()):
            return node.map_expressions(lambda e: transform_expr(e, rewrite))
        return node

    def rewrite(e: Expr) -> Expr:
        if isinstance(e, ScalarSubquery) and not e.correlated:
            return ScalarSubquery(replace_subtrees(e.plan, replacements), e.expr_id)
        return e

    return L.transform_down(plan, visit)


def _trees(plan: L.LogicalPlan, inside_subquery: bool) -> Iterator[tuple[L.LogicalPlan, bool]]:
    """`plan` and, recursively, the plans of its uncorrelated scalar subqueries."""
    yield plan, inside_subquery
    for node in plan.walk():
        for e in node.expressions():
            for sub in e.walk():
                if isinstance(sub, ScalarSubquery) and not sub.correlated:
                    yield from _trees(sub.plan, True)


def _deterministic(plan: L.LogicalPlan) -> bool:
    return all(e.deterministic for node in plan.walk() for e in node.expressions())


def _contains(outer: L.LogicalPlan, inner: L.LogicalPlan) -> bool:
    return any(node == inner for node in outer.walk())


