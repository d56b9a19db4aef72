"""Decorrelate subqueries into joins, so no subquery runs once per row.

    Filter(x, EXISTS(q))               -> Join(x, q', left_semi, correlation)
    Filter(x, NOT EXISTS(q))           -> Join(x, q', left_anti, correlation)
    Filter(x, v IN (q))                -> Join(x, q', left_semi, v = q.c AND correlation)
    Filter(x, v NOT IN (q))            -> null-aware anti join (below)
    Filter(x, (v, w) IN (q))           -> Join(x, q', left_semi, v = q.c AND w = q.d AND correlation)
    Filter(x, EXISTS(SELECT agg ..))   -> x  (an aggregate without GROUP BY always has one row)
    Filter(x, v < (SELECT agg .. corr)) -> Filter(Join(x, Aggregate(q' by corr keys), left, corr), v < agg)
    Aggregate(x, g, [.. (SELECT .. corr) ..]) -> Project(Aggregate(x, g, [..]), [.. (SELECT ..) ..]), as above

`q'` is the subquery with its correlated predicates (those reading an `OuterReference`)
pulled out of it; they become the join condition. A correlated scalar subquery must be an
aggregate: its correlated equalities become grouping keys, so it yields one row per key; what
sits above its aggregate (projection, HAVING) is computed above the join, with Spark's answer
for an outer row no group matches (the count bug). Uncorrelated scalar subqueries stay:
`QueryExecution` runs each once and inlines its value.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from quiver.engine.analysis.analyzer import analyze, coerce
from quiver.engine.core import types as T
from quiver.engine.core.errors import AnalysisException
from quiver.engine.core.expressions import (
    AggregateFunction,
    Alias,
    AttributeRef,
    CaseWhen,
    Comparison,
    Expr,
    IsNotNull,
    IsNull,
    Literal,
    Not,
    Or,
    conjoin,
    split_conjuncts,
    substitute_attributes,
    transform_expr,
    transform_expr_down,
)
from quiver.engine.core.plan import (
    Aggregate,
    Filter,
    Join,
    Limit,
    LogicalPlan,
    Project,
    Sort,
    SubqueryAlias,
    transform_up,
)
from quiver.engine.core.subqueries import (
    Exists,
    InSubquery,
    OuterReference,
    ScalarSubquery,
    SubqueryExpression,
    has_subquery,
    scalar_subquery,
    subquery_expressions,
)
from quiver.planners.optimizer.constant_folding import fold_expression
from quiver.planners.statistics import never_null


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
    if isinstance(node, Aggregate) and any(_correlated_scalars(a) for a in node.aggregates):
        return _rewrite_project(_hoist_above_aggregate(node, lambda e: bool(_correlated_scalars(e))))
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
    if _always_one_row(sub.plan):
        # An aggregate without GROUP BY (or HAVING) returns one row even over no input rows.
        return plan, [Literal(False, T.BooleanType())] if negated else []
    inner, correlation = decorrelate(sub.plan)
    if not correlation:
        # Uncorrelated: one check for the whole query, as a scalar count over at most one row.
        found = _row_count(Limit(inner, 1))
        return plan, [Comparison("=" if negated else ">", found, Literal(0, T.LongType()))]
    return Join(plan, inner, "left_anti" if negated else "left_semi", conjoin(correlation)), []


def _in_join(plan: LogicalPlan, sub: InSubquery, negated: bool) -> tuple[LogicalPlan, list[Expr]]:
    inner, correlation = decorrelate(sub.plan)
    by_id = {a.expr_id: a for a in inner.output}
    columns = [by_id.get(a.expr_id, a) for a in sub.plan.output]
    match = conjoin([coerce(Comparison("=", v, c)) for v, c in zip(sub.values, columns)])
    if not negated:
        return Join(plan, inner, "left_semi", conjoin(correlation + [match])), []
    if all(isinstance(v, AttributeRef) and never_null(plan, v) or not v.nullable for v in sub.values) \
            and all(never_null(inner, c) for c in columns):
        # No nulls on either side (by type or by the sources' statistics): a plain anti join.
        return Join(plan, inner, "left_anti", conjoin(correlation + [match])), []
    if correlation or len(columns) > 1:
        # (v, ..) NOT IN (...) is false when any row's comparison is true or unknown.
        unknown = Or(match, IsNull(match))
        return Join(plan, inner, "left_anti", conjoin(correlation + [unknown])), []
    # Null-aware anti join: a null in the subquery rejects every row; a null value rejects
    # its row unless the subquery is empty.
    column, value = columns[0], sub.values[0]
    no_nulls = Comparison("=", _row_count(Filter(inner, IsNull(column))), Literal(0, T.LongType()))
    value_known = Or(IsNotNull(value), Comparison("=", _row_count(inner), Literal(0, T.LongType())))
    return Join(plan, inner, "left_anti", match), [no_nulls, value_known]


def _row_count(plan: LogicalPlan) -> ScalarSubquery:
    counted = analyze(Aggregate(plan, (), (Alias(AggregateFunction("count", ()), "count"),)))
    return scalar_subquery(counted)


# ---------------------------------------------------------------- correlated scalar subqueries


def _correlated_scalars(e: Expr) -> list[ScalarSubquery]:
    return [s for s in subquery_expressions(e) if isinstance(s, ScalarSubquery) and s.correlated]


def _join_correlated_scalars(plan: LogicalPlan, e: Expr) -> tuple[LogicalPlan, Expr]:
    """Left-join each correlated scalar subquery in `e` to `plan`, and read its value from the join."""
    for sub in _correlated_scalars(e):
        plan, value = _join_scalar(plan, sub)
        e = transform_expr(e, lambda x, s=sub, v=value: v if x is s else x)
    return plan, e


def _join_scalar(plan: LogicalPlan, sub: ScalarSubquery) -> tuple[LogicalPlan, Expr]:
    """Join(plan, Aggregate(q' by correlation keys), left) and the subquery's value over the join's columns.

    What sits above the subquery's aggregate (a projection, a HAVING filter) is evaluated above
    the join, as Spark's RewriteCorrelatedScalarSubquery does: a group HAVING rejects is null, and
    an outer row no group matches gets the subquery's value over no rows (the count bug: a count
    is 0 there, not null), if HAVING accepts that empty group.
    """
    above, aggregate = _split_at_aggregate(sub.plan)
    if aggregate is not None and any(_reads_outer(a) for a in aggregate.aggregates):
        # HAVING count(*) > outer.x: computed above the aggregate, hence above the join.
        hoisted = _hoist_above_aggregate(aggregate, _reads_outer)
        above, aggregate = above + [hoisted], hoisted.child
    if aggregate is None:
        raise AnalysisException(
            f"a correlated scalar subquery must be aggregated so it returns one value per outer row, e.g. "
            f"(SELECT max(x) FROM t WHERE t.k = outer.k); got:\n{sub.plan.tree_string()}"
        )
    inner, correlation = decorrelate(aggregate)
    plan = Join(plan, inner, "left", conjoin(correlation) if correlation else None)
    joined = {a.expr_id: a for a in plan.output}
    value, having = _evaluate_above(above, {a.expr_id: joined[a.expr_id] for a in aggregate.output}, sub)
    empty_value, empty_having = _evaluate_above(above, _aggregate_on_no_rows(aggregate), sub)
    empty = _fold_on_no_rows(empty_value, empty_having, sub.dtype)
    branches: list[tuple[Expr, Expr]] = []
    if correlation and (having is not None or not _is_null(empty)):
        matched = joined[_first_key(correlation, inner)]
        branches.append((IsNull(matched), empty))
    if having is not None:
        branches.append((Not(having), Literal(None, sub.dtype)))
    if branches:
        value = coerce(CaseWhen(tuple(c for c, _ in branches), tuple(v for _, v in branches), value))
    return plan, value


def _split_at_aggregate(plan: LogicalPlan) -> tuple[list[LogicalPlan], Aggregate | None]:
    """The nodes above a scalar subquery's grouping-free aggregate (top first), and that aggregate."""
    above: list[LogicalPlan] = []
    node = plan
    while isinstance(node, (Project, SubqueryAlias, Filter, Sort)) or (isinstance(node, Limit) and node.n > 0):
        above.append(node)
        node = node.children()[0]
    if isinstance(node, Aggregate) and not node.grouping:
        return above, node
    return above, None


def _always_one_row(plan: LogicalPlan) -> bool:
    """Whether `plan` is an aggregate without grouping under projections only, so it has exactly one row."""
    while isinstance(plan, (Project, SubqueryAlias, Sort)) or (isinstance(plan, Limit) and plan.n > 0):
        plan = plan.children()[0]
    return isinstance(plan, Aggregate) and not plan.grouping


def _evaluate_above(above: list[LogicalPlan], values: dict[int, Expr], sub: ScalarSubquery
                    ) -> tuple[Expr, Expr | None]:
    """The subquery's value, and its HAVING condition (None without one), given its aggregate's columns."""
    conditions: list[Expr] = []
    for node in reversed(above):
        if isinstance(node, Project):
            values = {p.expr_id: _plain(_unaliased(substitute_attributes(p, values))) for p in node.projections
                      if isinstance(p, (Alias, AttributeRef))}
        elif isinstance(node, Filter):
            conditions.append(_plain(substitute_attributes(node.condition, values)))
    value = values.get(sub.plan.output[0].expr_id)
    if value is None:
        raise AnalysisException(f"cannot find the value of the scalar subquery in:\n{sub.plan.tree_string()}")
    return value, (conjoin(conditions) if conditions else None)


def _aggregate_on_no_rows(aggregate: Aggregate) -> dict[int, Expr]:
    """Each output of a grouping-free aggregate over no rows: a count is 0, any other aggregate null."""
    def on_empty(x: Expr) -> Expr:
        if isinstance(x, AggregateFunction):
            return Literal(0, T.LongType()) if x.name in ("count", "count_distinct") else Literal(None, x.dtype)
        return x
    return {a.expr_id: _unaliased(transform_expr(a, on_empty)) for a in aggregate.aggregates
            if isinstance(a, (Alias, AttributeRef))}


def _fold_on_no_rows(value: Expr, having: Expr | None, dtype: T.DataType) -> Expr:
    """The subquery's value over no rows: null unless HAVING accepts the empty group."""
    value = fold_expression(value)
    if having is None:
        return value
    accepted = fold_expression(having)
    if isinstance(accepted, Literal):
        return value if accepted.value is True else Literal(None, dtype)
    return coerce(CaseWhen((accepted,), (value,), Literal(None, dtype)))


def _is_null(e: Expr) -> bool:
    return isinstance(e, Literal) and e.value is None


def _first_key(correlation: list[Expr], inner: LogicalPlan) -> int:
    inner_ids = {a.expr_id for a in inner.output}
    for c in correlation:
        for ref in c.references():
            if ref in inner_ids:
                return ref
    raise AnalysisException("a correlated scalar subquery needs an equality with an outer column")


def _unaliased(e: Expr) -> Expr:
    return e.child if isinstance(e, Alias) else e


def _hoist_above_aggregate(node: Aggregate, hoisted: Callable[[Expr], bool]) -> Project:
    """Aggregate(x, g, [.., f(sum(y), g, s)]) -> Project(Aggregate(x, g, [.., sum(y), g]), [.., f(#sum, g, s)])
    for each output where `hoisted` holds.

    A correlated scalar subquery `s` in HAVING or in an aggregate's select list reads the groups,
    so it is computed over the aggregate's output, where `_rewrite_project` can join it; likewise
    a subquery's HAVING that reads an outer column is computed above the subquery's aggregate.
    """
    grouped = {g.expr_id for g in node.grouping if isinstance(g, AttributeRef)}
    grouping_exprs = [g for g in node.grouping if not isinstance(g, AttributeRef)]
    child_ids = {a.expr_id for a in node.child.output}
    kept: list[Expr] = []
    hidden: list[Expr] = []

    def keep(a: AttributeRef) -> AttributeRef:
        if a.expr_id not in grouped:
            raise AnalysisException(
                f"a correlated scalar subquery in an aggregate query may only read its grouping columns, but "
                f"reads '{a.name}'; grouped by: {', '.join(g.sql() for g in node.grouping) or '(nothing)'}"
            )
        if not any(h.expr_id == a.expr_id for h in hidden):
            hidden.append(a)
        return a

    def computed(x: Expr) -> AttributeRef:
        for h in hidden:
            if isinstance(h, Alias) and h.child == x:
                return h.to_attribute()
        alias = Alias(x, x.sql())
        hidden.append(alias)
        return alias.to_attribute()

    def hoist(x: Expr) -> Expr:
        if isinstance(x, AggregateFunction) or any(x == g for g in grouping_exprs):
            return computed(x)
        if isinstance(x, AttributeRef):
            return keep(x)
        if isinstance(x, ScalarSubquery):
            for a in x.outer_references():
                if a.expr_id in child_ids:
                    keep(a)
        return x

    top: list[Expr] = []
    for a in node.aggregates:
        if isinstance(a, Alias) and hoisted(a):
            if any(hoisted(f) for f in a.walk() if isinstance(f, AggregateFunction)):
                raise AnalysisException(
                    f"an aggregate function's argument cannot read the outer query (directly or through a correlated "
                    f"scalar subquery): {a.sql()}"
                )
            top.append(Alias(transform_expr_down(a.child, hoist), a.name, a.expr_id))
        else:
            kept.append(a)
            top.append(a if isinstance(a, AttributeRef) else a.to_attribute())
    kept_ids = {k.expr_id for k in kept}
    extra = tuple(h for h in hidden if h.expr_id not in kept_ids)
    return Project(Aggregate(node.child, node.grouping, tuple(kept) + extra), tuple(top))


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

