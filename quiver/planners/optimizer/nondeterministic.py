"""Nondeterministic expressions of an Aggregate move into a projection below it, as Spark's
PullOutNondeterministic does: a function of the row's position (rand, monotonically_increasing_id,
spark_partition_id) is computed once per row where a task knows that position.

    Aggregate([spark_partition_id()], [spark_partition_id(), count(1)], x)
    -> Aggregate([#p], [#p AS SPARK_PARTITION_ID(), count(1)], Project(x, [x.*, spark_partition_id() AS #p]))
"""
from __future__ import annotations

from quiver.engine.core.expressions import AggregateFunction, Alias, AttributeRef, Expr
from quiver.engine.core.plan import Aggregate, LogicalPlan, Project, transform_up


def pull_out_nondeterministic(plan: LogicalPlan) -> LogicalPlan:
    """`plan` with each Aggregate's nondeterministic grouping keys and aggregate arguments computed by a
    Project below it."""
    def rule(node: LogicalPlan) -> LogicalPlan:
        if isinstance(node, Aggregate) and not all(e.deterministic for e in node.expressions()):
            return _pull_out(node)
        return node
    return transform_up(plan, rule)


def _pull_out(node: Aggregate) -> Aggregate:
    """`node` with its nondeterministic grouping keys and aggregate arguments computed by a Project below it."""
    found: dict[Expr, Alias] = {}

    def lift(e: Expr) -> Expr:
        if isinstance(e, AttributeRef) or e.deterministic:
            return e
        key = e.child if isinstance(e, Alias) else e
        if key not in found:
            found[key] = e if isinstance(e, Alias) else Alias(e, f"_nondeterministic{len(found)}")
        return found[key].to_attribute()

    grouping = tuple(lift(g) for g in node.grouping)

    def rewrite(e: Expr, inside_aggregate: bool) -> Expr:
        if isinstance(e, AggregateFunction):
            return e.with_children(tuple(lift(a) for a in e.children())) if not e.deterministic else e
        if e in found:
            return found[e].to_attribute()
        kids = e.children()
        new = tuple(rewrite(k, inside_aggregate) for k in kids)
        return e.with_children(new) if any(a is not b for a, b in zip(new, kids)) else e

    aggregates = []
    for item in node.aggregates:
        if isinstance(item, Alias):
            aggregates.append(Alias(rewrite(item.child, False), item.name, item.expr_id))
        else:
            aggregates.append(rewrite(item, False))
    if not found:
        return node
    child = Project(node.child, tuple(node.child.output) + tuple(found.values()))
    return Aggregate(child, grouping, tuple(aggregates))
