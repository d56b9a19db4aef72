"""Decorrelate subqueries into joins, so no subquery runs once per row.

    Filter(x, EXISTS(q))               -> Join(x, q', left_semi, correlation)
    Filter(x, NOT EXISTS(q))           -> Join(x, q', left_anti, correlation)
    Filter(x, v IN (q))                -> Join(x, q', left_semi, v = q.c AND correlation)
    Filter(x, v NOT IN (q))            -> null-aware anti join (below)
    Filter(x, v < (SELECT agg .. corr)) -> Filter(Join(x, Aggregate(q' by corr keys), left, corr), v < agg)

`q'` is the subquery with its correlated predicates (those reading an `OuterReference`)
pulled out of it; they become the join condition. A correlated scalar subquery must be an
aggregate: its correlated equalities become grouping keys, so it yields one row per key.
Uncorrelated scalar subqueries stay: `QueryExecution` runs each once and inlines its value.
"""
from __future__ import annotations

from dataclasses import replace

from quiver.engine import types as T
from quiver.engine.analyzer import analyze, coerce
from quiver.engine.errors import AnalysisException
from quiver.engine.expressions import (
    AggregateFunction, Alias, AttributeRef, CaseWhen, Comparison, Expr, IsNotNull, IsNull, Literal, Not, Or,
    conjoin, split_conjuncts, substitute_attributes, transform_expr,
)
from quiver.engine.plan import (
    Aggregate, Filter, Join, Limit, LogicalPlan, Project, Sort, SubqueryAlias, transform_up,
)
from quiver.engine.subqueries import (
    Exists, InSubquery, OuterReference, ScalarSubquery, SubqueryExpression, has_subquery, scalar_subquery,
    subquery_expressions,
)
from quiver.planners.optimizer.constant_folding import fold_expression


def rewrite_subqueries(plan: LogicalPlan) -> LogicalPlan:
    """Turn IN/EXISTS and correlated scalar subqueries into joins, inner subqueries first."""
    return transform_up(plan, _rewrite_node)


def _rewrite_node(node: LogicalPlan) -> LogicalPlan:
    if not any(has_subquery(e) for e in node.expressions()):
        return node
    node = node.map_expressions(_rewrite_inner_plans)
    if isinstance(node, Filter):
        return _rewrite_filter(node)
    if isinstance(node, Project):
        return _rewrite_project(node)
    for e in node.expressions():
        for sub in subquery_expressions(e):
            if not isinstance(sub, ScalarSubquery) or sub.correlated:
                raise AnalysisException(
                    f"{_describe(sub)} is not supported in {type(node).__name__}; subqueries may appear in WHERE "
                    "and HAVING conditions, and uncorrelated scalar subqueries anywhere in a query"
                )
    return node


def _rewrite_inner_plans(e: Expr) -> Expr:
    """Rewrite the subqueries nested inside each subquery's own plan first."""
    def visit(x: Expr) -> Expr:
        if isinstance(x, SubqueryExpression):
            inner = rewrite_subqueries(x.plan)
            return x if inner is x.plan else replace(x, plan=inner)
        return x
    return transform_expr(e, visit)


def _describe(sub: SubqueryExpression) -> str:
    if isinstance(sub, Exists):
        return "EXISTS (subquery)"
    if isinstance(sub, InSubquery):
        return "IN (subquery)"
    return "a correlated scalar subquery" if sub.correlated else "a scalar subquery"


# ---------------------------------------------------------------- WHERE / HAVING


def _rewrite_filter(node: Filter) -> LogicalPlan:
    plan = node.child
    kept: list[Expr] = []
    for conjunct in split_conjuncts(node.condition):
        negated = isinstance(conjunct, Not) and isinstance(conjunct.child, (Exists, InSubquery))
        target = conjunct.child if negated else conjunct
        if isinstance(target, Exists):
            plan, extra = _exists_join(plan, target, negated)
            kept.extend(extra)
        elif isinstance(target, InSubquery):
            plan, extra = _in_join(plan, target, negated)
            kept.extend(extra)
        else:
            for sub in subquery_expressions(conjunct):
                if isinstance(sub, (Exists, InSubquery)):
                    raise AnalysisException(
                        f"{_describe(sub)} must be a condition of its own, joined to the others by AND; "
                        f"Quiver cannot run it inside {conjunct.sql()}"
                    )
            plan, conjunct = _join_correlated_scalars(plan, conjunct)
            kept.append(conjunct)
    if kept:
        plan = Filter(plan, conjoin(kept))
    return plan if plan.output == node.child.output else Project(plan, node.child.output)


def _rewrite_project(node: Project) -> LogicalPlan:
    plan = node.child
    projections = []
    for p in node.projections:
        plan, p = _join_correlated_scalars(plan, p)
        projections.append(p)
    return Project(plan, tuple(projections))


def _exists_join(plan: LogicalPlan, sub: Exists, negated: bool) -> tuple[LogicalPlan, list[Expr]]:
    inner, correlation = decorrelate(sub.plan)
    if not correlation:
        # Uncorrelated: one check for the whole query, as a scalar count over at most one row.
        found = _row_count(Limit(inner, 1))
        return plan, [Comparison("=" if negated else ">", found, Literal(0, T.LongType()))]
    return Join(plan, inner, "left_anti" if negated else "left_semi", conjoin(correlation)), []


def _in_join(plan: LogicalPlan, sub: InSubquery, negated: bool) -> tuple[LogicalPlan, list[Expr]]:
    inner, correlation = decorrelate(sub.plan)
    column = inner.output[0] if inner.output[0].expr_id == sub.plan.output[0].expr_id else sub.plan.output[0]
    match = coerce(Comparison("=", sub.value, column))
    if not negated:
        return Join(plan, inner, "left_semi", conjoin(correlation + [match])), []
    if not sub.value.nullable and not column.nullable:
        return Join(plan, inner, "left_anti", conjoin(correlation + [match])), []
    if correlation:
        # v NOT IN (...) is false when any comparison is true or unknown.
        unknown = Or(match, IsNull(match))
        return Join(plan, inner, "left_anti", conjoin(correlation + [unknown])), []
    # Null-aware anti join: a null in the subquery rejects every row; a null value rejects
    # its row unless the subquery is empty.
    no_nulls = Comparison("=", _row_count(Filter(inner, IsNull(column))), Literal(0, T.LongType()))
    value_known = Or(IsNotNull(sub.value), Comparison("=", _row_count(inner), Literal(0, T.LongType())))
    return Join(plan, inner, "left_anti", match), [no_nulls, value_known]


def _row_count(plan: LogicalPlan) -> ScalarSubquery:
    counted = analyze(Aggregate(plan, (), (Alias(AggregateFunction("count", ()), "count"),)))
    return scalar_subquery(counted)


# ---------------------------------------------------------------- correlated scalar subqueries


def _join_correlated_scalars(plan: LogicalPlan, e: Expr) -> tuple[LogicalPlan, Expr]:
    """Left-join each correlated scalar subquery in `e` to `plan`, and read its value from the join."""
    for sub in list(subquery_expressions(e)):
        if not isinstance(sub, ScalarSubquery) or not sub.correlated:
            continue
        inner, correlation = decorrelate(sub.plan)
        if not _is_aggregated(sub.plan):
            raise AnalysisException(
                f"a correlated scalar subquery must be aggregated so it returns one value per outer row, e.g. "
                f"(SELECT max(x) FROM t WHERE t.k = outer.k); got:\n{sub.plan.tree_string()}"
            )
        plan = Join(plan, inner, "left", conjoin(correlation))
        value: Expr = next(a for a in plan.output if a.expr_id == sub.plan.output[0].expr_id)
        empty = _value_on_no_rows(sub.plan)
        if empty is not None:
            # The count bug: a key with no rows gets count's 0, not the left join's null.
            matched = IsNotNull(next(a for a in plan.output if a.expr_id == _first_key(correlation, inner)))
            value = CaseWhen((matched,), (value,), empty)
        e = transform_expr(e, lambda x, s=sub, v=value: v if x is s else x)
    return plan, e


def _first_key(correlation: list[Expr], inner: LogicalPlan) -> int:
    inner_ids = {a.expr_id for a in inner.output}
    for c in correlation:
        for ref in c.references():
            if ref in inner_ids:
                return ref
    raise AnalysisException("a correlated scalar subquery needs an equality with an outer column")


def _is_aggregated(plan: LogicalPlan) -> bool:
    while isinstance(plan, (Project, SubqueryAlias, Filter, Sort)):
        plan = plan.children()[0]
    return isinstance(plan, Aggregate) and not plan.grouping


def _value_on_no_rows(plan: LogicalPlan) -> Literal | None:
    """The subquery's value over no rows when that is not null (a count is 0, not null), else None."""
    chain: list[LogicalPlan] = []
    node = plan
    while isinstance(node, (Project, SubqueryAlias, Filter, Sort)):
        chain.append(node)
        node = node.children()[0]
    if not isinstance(node, Aggregate):
        return None

    def aggregate_on_empty(x: Expr) -> Expr:
        if isinstance(x, AggregateFunction):
            return Literal(0, T.LongType()) if x.name in ("count", "count_distinct") else Literal(None, x.dtype)
        return x

    values = {a.expr_id: _unaliased(transform_expr(a, aggregate_on_empty)) for a in node.aggregates
              if isinstance(a, (Alias, AttributeRef))}
    for above in reversed(chain):
        if isinstance(above, Project):
            values = {p.expr_id: _unaliased(substitute_attributes(p, values)) for p in above.projections
                      if isinstance(p, (Alias, AttributeRef))}
    folded = fold_expression(values.get(plan.output[0].expr_id, Literal(None, T.NullType())))
    return folded if isinstance(folded, Literal) and folded.value is not None else None


def _unaliased(e: Expr) -> Expr:
    return e.child if isinstance(e, Alias) else e


# ---------------------------------------------------------------- pulling correlated predicates out


def _reads_outer(e: Expr) -> bool:
    return any(isinstance(x, OuterReference) for x in e.walk())


def _plain(e: Expr) -> Expr:
    """A pulled predicate over the outer query's own columns."""
    return transform_expr(e, lambda x: x.attribute if isinstance(x, OuterReference) else x)


def decorrelate(plan: LogicalPlan) -> tuple[LogicalPlan, list[Expr]]:
    """`plan` without its correlated predicates, and those predicates over plain columns.

    The columns the predicates read inside the subquery are kept in its output; an aggregate
    below them also groups by them, so it yields one row per correlation key.
    """
    inner, predicates = _pull(plan)
    return inner, [_plain(p) for p in predicates]


def _pull(plan: LogicalPlan) -> tuple[LogicalPlan, list[Expr]]:
    if not any(_reads_outer(e) for node in plan.walk() for e in node.expressions()):
        return plan, []
    if isinstance(plan, Filter):
        child, pulled = _pull(plan.child)
        local = [c for c in split_conjuncts(plan.condition) if not _reads_outer(c)]
        pulled = pulled + [c for c in split_conjuncts(plan.condition) if _reads_outer(c)]
        return (Filter(child, conjoin(local)) if local else child), pulled
    if isinstance(plan, Project):
        if any(_reads_outer(p) for p in plan.projections):
            raise _unsupported_correlation(plan)
        child, pulled = _pull(plan.child)
        return Project(child, plan.projections + _missing(pulled, plan.projections, child)), pulled
    if isinstance(plan, SubqueryAlias):
        child, pulled = _pull(plan.child)
        return SubqueryAlias(child, plan.alias), pulled
    if isinstance(plan, Sort):
        return _pull(plan.child)
    if isinstance(plan, Aggregate):
        if any(_reads_outer(e) for e in plan.expressions()):
            raise _unsupported_correlation(plan)
        child, pulled = _pull(plan.child)
        keys = _missing(pulled, plan.aggregates, child)
        for p in pulled:
            if not (isinstance(p, Comparison) and p.op == "="):
                raise AnalysisException(
                    f"a correlated condition under an aggregate must be an equality with an outer column, "
                    f"got {p.sql()}"
                )
        return Aggregate(child, plan.grouping + keys, plan.aggregates + keys), pulled
    if isinstance(plan, Join) and plan.how in ("inner", "cross"):
        left, lp = _pull(plan.left)
        right, rp = _pull(plan.right)
        local, outer = [], []
        for c in split_conjuncts(plan.condition):
            (outer if _reads_outer(c) else local).append(c)
        return Join(left, right, plan.how, conjoin(local)), lp + rp + outer
    raise _unsupported_correlation(plan)


def _missing(pulled: list[Expr], exprs: tuple[Expr, ...], child: LogicalPlan) -> tuple[AttributeRef, ...]:
    """The child's columns the pulled predicates read that `exprs` does not already output."""
    have = {e.expr_id for e in exprs if isinstance(e, (Alias, AttributeRef))}
    by_id = {a.expr_id: a for a in child.output}
    needed: dict[int, AttributeRef] = {}
    for p in pulled:
        for ref in p.references():
            if ref in by_id and ref not in have:
                needed.setdefault(ref, by_id[ref])
    return tuple(needed.values())


def _unsupported_correlation(plan: LogicalPlan) -> AnalysisException:
    return AnalysisException(
        f"a correlated reference to an outer column is only supported in the WHERE conditions of a subquery, "
        f"not in {plan.node_string()}"
    )

