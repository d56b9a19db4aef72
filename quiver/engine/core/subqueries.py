"""Subqueries inside expressions: scalar `(SELECT ...)`, `x IN (SELECT ...)` and `EXISTS (SELECT ...)`.

Each holds the analyzed plan of its query. A name inside that plan that belongs to the
enclosing query is an `OuterReference`: the subquery is then *correlated*. The optimizer
rule `rewrite_subqueries` turns IN/EXISTS and correlated scalar subqueries into joins;
an uncorrelated scalar subquery runs once as its own job before the query, and its value
replaces it as a literal (Spark's "subquery" stage).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from quiver.engine.core import types as T
from quiver.engine.core.expressions import AttributeRef, Expr, Literal, new_expr_id, transform_expr
from quiver.engine.core.plan import LogicalPlan, transform_up


@dataclass(frozen=True, eq=False)
class OuterReference(Expr):
    """A column of the enclosing query, read inside a subquery; a leaf, so the inner plan's rules ignore it."""

    leaf_fields = frozenset({"attribute"})

    attribute: AttributeRef

    @property
    def resolved(self) -> bool:
        return True

    @property
    def dtype(self) -> T.DataType:
        return self.attribute.dtype

    @property
    def nullable(self) -> bool:
        return self.attribute.nullable

    def sql(self) -> str:
        return f"outer({self.attribute.sql()})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OuterReference) and other.attribute.expr_id == self.attribute.expr_id

    def __hash__(self) -> int:
        return hash(("outer", self.attribute.expr_id))


@dataclass(frozen=True, eq=False)
class SubqueryExpression(Expr):
    """Base of expressions that hold a query plan; equal when they are the same subquery (same id and plan)."""

    plan: LogicalPlan
    expr_id: int

    @property
    def resolved(self) -> bool:
        return self.plan.resolved and all(c.resolved for c in self.children())

    @property
    def deterministic(self) -> bool:
        return False

    @property
    def has_subquery(self) -> bool:
        return True

    def outer_references(self) -> list[AttributeRef]:
        """The enclosing query's columns this subquery reads (its correlation)."""
        return outer_references(self.plan)

    @property
    def correlated(self) -> bool:
        return bool(self.outer_references())

    def __eq__(self, other: object) -> bool:
        return (type(other) is type(self) and other.expr_id == self.expr_id and other.plan == self.plan
                and other.children() == self.children())

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.expr_id))


@dataclass(frozen=True, eq=False)
class ScalarSubquery(SubqueryExpression):
    """`(SELECT one_value ...)`: the single value of a one-column query, null when it returns no row."""

    @property
    def dtype(self) -> T.DataType:
        return self.plan.output[0].dtype

    @property
    def nullable(self) -> bool:
        return True

    def sql(self) -> str:
        return f"scalarsubquery#{self.expr_id}"


@dataclass(frozen=True, eq=False)
class Exists(SubqueryExpression):
    """`EXISTS (SELECT ...)`: whether the query returns any row."""

    @property
    def dtype(self) -> T.DataType:
        return T.BooleanType()

    @property
    def nullable(self) -> bool:
        return False

    def sql(self) -> str:
        return f"exists#{self.expr_id}"


@dataclass(frozen=True, eq=False)
class InSubquery(SubqueryExpression):
    """`value IN (SELECT column ...)`, or `(a, b) IN (SELECT x, y ...)` with one value per column,
    with SQL's three-valued answer when nulls are involved."""

    values: tuple[Expr, ...] = ()

    @property
    def dtype(self) -> T.DataType:
        return T.BooleanType()

    @property
    def nullable(self) -> bool:
        return True

    def sql(self) -> str:
        probe = self.values[0].sql() if len(self.values) == 1 else f"({', '.join(v.sql() for v in self.values)})"
        return f"({probe} IN (listquery#{self.expr_id}))"


def scalar_subquery(plan: LogicalPlan) -> ScalarSubquery:
    """A scalar subquery over an analyzed one-column plan."""
    return ScalarSubquery(plan, new_expr_id())


def subquery_expressions(e: Expr) -> Iterator[SubqueryExpression]:
    """Every subquery expression inside `e`."""
    for x in e.walk():
        if isinstance(x, SubqueryExpression):
            yield x


def has_subquery(e: Expr) -> bool:
    """Whether `e` holds a subquery expression (`Expr.has_subquery`, worked out once per expression)."""
    return e.has_subquery


def outer_references(plan: LogicalPlan) -> list[AttributeRef]:
    """Columns `plan` reads from queries around it.

    Every `OuterReference` in `plan`'s own nodes is one (the analyzer made it because no input
    had the name). A nested subquery's outer reference is one unless it names a column of the
    node that holds that subquery, the clause it was written in. Ids are compared by scope, not
    over the whole plan: a subquery over the same view as its outer query holds that view's
    columns (under fresh ids above them), so the outer columns' ids also occur deep inside it.
    """
    found: dict[int, AttributeRef] = {}
    for node in plan.walk():
        visible: set[int] | None = None
        for e in node.expressions():
            for x in e.walk():
                if isinstance(x, OuterReference):
                    found.setdefault(x.attribute.expr_id, x.attribute)
                elif isinstance(x, SubqueryExpression):
                    if visible is None:
                        visible = {a.expr_id for c in node.children() for a in c.output}
                    for a in outer_references(x.plan):
                        if a.expr_id not in visible:
                            found.setdefault(a.expr_id, a)
    return list(found.values())


def inline_scalar_subqueries(plan: LogicalPlan, value_of: Callable[[ScalarSubquery], Literal]) -> LogicalPlan:
    """`plan` with each uncorrelated scalar subquery replaced by its value, computed once per subquery."""
    values: dict[int, Literal] = {}

    def inline(e: Expr) -> Expr:
        if isinstance(e, ScalarSubquery) and not e.correlated:
            if e.expr_id not in values:
                values[e.expr_id] = value_of(e)
            return values[e.expr_id]
        return e

    def visit(node: LogicalPlan) -> LogicalPlan:
        if not any(has_subquery(e) for e in node.expressions()):
            return node
        return node.map_expressions(lambda e: transform_expr(e, inline))
    return transform_up(plan, visit)
