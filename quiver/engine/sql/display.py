"""How Spark shows what SQL wrote: the column names of select-list entries.

Spark names an unaliased entry by its SQL text, and some SQL-only syntax (`a BETWEEN 1 AND 3`,
`IF(c, x, y)`, `x DIV y`, `f() OVER (...)`) computes what an ordinary expression does but is shown
its own way. The translators mark such syntax with `SparkDisplay` while a select-list entry is
named; `strip_display` takes the markers off before the expression goes on.
"""
from __future__ import annotations

from dataclasses import dataclass

from quiver.engine.analysis.analyzer import resolve_name
from quiver.engine.analysis.generators import GENERATORS
from quiver.engine.core.errors import AnalysisException
from quiver.engine.core.expressions import (
    Alias,
    AttributeRef,
    Cast,
    Expr,
    ScalarFunction,
    UnresolvedColumn,
    transform_expr,
    transform_expr_down,
)


@dataclass(frozen=True)
class SparkDisplay(Expr):
    """Marks SQL-only syntax (BETWEEN, IF, x DIV y): computes `child`, shown as Spark shows it.

    It exists only while a select-list entry is named; `strip_display` removes it before the
    expression leaves the SQL front end, so the analyzer and executors never see it.
    """

    child: Expr
    operands: tuple[Expr, ...]
    template: str

    def sql(self) -> str:
        return self.template.format(*(o.sql() for o in self.operands))


def strip_display(e: Expr) -> Expr:
    """`e` without its `SparkDisplay` markers: what the engine evaluates."""
    def unwrap(x: Expr) -> Expr:
        while isinstance(x, SparkDisplay):
            x = x.child
        return x
    return transform_expr_down(e, unwrap)


def name_select_item(e: Expr, inputs: tuple[AttributeRef, ...]) -> Expr:
    """An unaliased select-list entry, aliased with Spark's column name where ours would differ.

    Two cases differ: SQL-only syntax (`between(a, 1, 3)`, `(IF(c, x, y))`), and Spark 4's rule
    that a cast of a column keeps the column's name (`CAST(a AS BIGINT)` is named `a`). Entries
    that need no resolution (`1`, `count(*)`) are named here too.
    """
    clean = strip_display(e)
    if isinstance(clean, ScalarFunction) and clean.name in GENERATORS:
        return clean  # named by the columns it makes (col, key, value, ...)
    if isinstance(clean, Cast) and isinstance(clean.child, UnresolvedColumn):
        return Alias(clean, display_name(clean.child, inputs))
    if clean != e or (clean.resolved and not isinstance(clean, AttributeRef)):
        # The analyzer names only entries it has to resolve; `1` or `count(*)` arrive resolved.
        return Alias(clean, display_name(e, inputs))
    return e


def display_name(e: Expr, inputs: tuple[AttributeRef, ...]) -> str:
    """The column name Spark gives `e`: its SQL text with columns spelled as the input spells them."""
    def bind(x: Expr) -> Expr:
        if isinstance(x, UnresolvedColumn) and inputs:
            try:
                return resolve_name(x.parts, inputs)
            except AnalysisException:
                return x
        return x
    return transform_expr(e, bind).sql()


__all__ = ["SparkDisplay", "strip_display", "name_select_item", "display_name"]
