"""SQL PIVOT: `FROM rel PIVOT (agg [AS a], ... FOR col IN (v [AS alias], ...))` as one Aggregate.

Spark groups by every column of `rel` that neither the aggregates nor the FOR column read,
and computes each aggregate once per listed value over the rows holding that value. The
plan is the one `df.groupBy(...).pivot(col, values).agg(...)` builds; the output columns
are named as Spark names them (the value, or `value_agg` with several aggregates), which
sqlglot works out for the Spark dialect.
"""
from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from quiver.engine.analysis import builder
from quiver.engine.core.errors import ParseException
from quiver.engine.core.expressions import Alias, Expr, Literal
from quiver.engine.core.plan import LogicalPlan


def pivot_relation(plan: LogicalPlan, pivot: exp.Pivot, translate: Callable[[exp.Expression], Expr],
                   unsupported: Callable[[exp.Expression, str], ParseException]) -> LogicalPlan:
    """`plan` pivoted as the PIVOT clause `pivot` says; an analyzed Aggregate."""
    if pivot.args.get("unpivot"):
        raise unsupported(pivot, "UNPIVOT")
    fields = pivot.args.get("fields") or []
    if len(fields) != 1 or not isinstance(fields[0], exp.In) or not isinstance(fields[0].this, exp.Column):
        raise unsupported(pivot, "PIVOT over several columns or an expression")
    field = fields[0]
    values = [_value(v, translate, unsupported) for v in field.expressions]
    aggregates = [translate(e) for e in pivot.expressions]
    if not aggregates:
        raise ParseException(f"PIVOT needs at least one aggregate: {pivot.sql(dialect='spark')!r}")
    read = {c.name.lower() for e in [*pivot.expressions, field.this] for c in e.find_all(exp.Column)}
    keys = tuple(a for a in plan.output if a.name.lower() not in read)
    pivot_column = translate(field.this)
    columns = builder.pivoted_aggregates(aggregates, pivot_column, values)
    names = [c.name for c in pivot.args.get("columns") or []]
    if len(names) == len(columns):
        columns = [Alias(c.child, name) for c, name in zip(columns, names)]
    return builder.aggregate(plan, keys, keys + tuple(columns))


def _value(node: exp.Expression, translate: Callable[[exp.Expression], Expr],
           unsupported: Callable[[exp.Expression, str], ParseException]) -> object:
    """A pivot value: a literal (a PivotAlias's alias only renames its column, which sqlglot has done)."""
    literal = node.this if isinstance(node, exp.PivotAlias) else node
    value = translate(literal)
    if not isinstance(value, Literal):
        raise unsupported(node, "a PIVOT value that is not a literal")
    return value.value


__all__ = ["pivot_relation"]
