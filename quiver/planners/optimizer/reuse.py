"""Aggregates a query would compute twice: in an uncorrelated scalar subquery and the query, or twice
in the query.

TPC-H Q15 reads its `revenue0` view twice, in the FROM clause and in `(SELECT max(total_revenue)
FROM revenue0)`; the subquery runs as a job of its own before the query (its value is inlined),
so without reuse lineitem is scanned and aggregated twice. Written with DataFrames, the same query
joins `revenue` with `revenue.agg(max(...))`, one aggregate on both sides of a join. Spark shares
the exchange in both cases (ReuseExchange/ReuseSubquery). Here the shared aggregate runs once, its
result is kept in the block store for the query's lifetime, and every place reads it as an
in-memory relation.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from quiver.engine.core import plan as L
from quiver.engine.core.expressions import Expr, transform_expr
from quiver.engine.core.subqueries import ScalarSubquery, has_subquery

REUSED = "reused within this query"


def shared_aggregates(plan: L.LogicalPlan) -> list[L.Aggregate]:
    """Aggregates that occur more than once in `plan` and its uncorrelated scalar subqueries (a view
    read twice, a DataFrame joined with an aggregate of itself), outermost first; deterministic ones only."""
    counts: Counter[L.Aggregate] = Counter()
    for tree in _trees(plan):
        for node in tree.walk():
            if isinstance(node, L.Aggregate):
                counts[node] += 1
    shared = [a for a, n in counts.items() if n > 1 and _deterministic(a)]
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


def _trees(plan: L.LogicalPlan) -> Iterator[L.LogicalPlan]:
    """`plan` and, recursively, the plans of its uncorrelated scalar subqueries."""
    yield plan
    for node in plan.walk():
        for e in node.expressions():
            for sub in e.walk():
                if isinstance(sub, ScalarSubquery) and not sub.correlated:
                    yield from _trees(sub.plan)


def _deterministic(plan: L.LogicalPlan) -> bool:
    return all(e.deterministic for node in plan.walk() for e in node.expressions())


def _contains(outer: L.LogicalPlan, inner: L.LogicalPlan) -> bool:
    return any(node == inner for node in outer.walk())


