"""Column references and orderings of `quiver.functions` (F): col, column, lit, expr, asc, desc and their
nulls-first/last forms, and the broadcast hint (PySpark's normal and sort functions)."""
from __future__ import annotations

from typing import Any

from quiver.engine.api.column import Column, lit
from quiver.engine.core.expressions import UnresolvedColumn, UnresolvedStar


def col(name: str) -> Column:
    """A column by name; `"d.grp"` is column grp of the DataFrame aliased `d`."""
    if name == "*":
        return Column(UnresolvedStar(None))
    return Column(UnresolvedColumn.parse(name))


column = col


def expr(text: str) -> Column:
    """A column from a SQL expression string.

    >>> df.select(F.expr("length(name) + 1 AS n"))
    """
    from quiver.engine.sql.expressions import parse_expression  # sqlglot, imported only for SQL text

    return Column(parse_expression(text))


def asc(name: str) -> Column:
    return col(name).asc()


def desc(name: str) -> Column:
    return col(name).desc()


def asc_nulls_first(name: str) -> Column:
    return col(name).asc_nulls_first()


def asc_nulls_last(name: str) -> Column:
    return col(name).asc_nulls_last()


def desc_nulls_first(name: str) -> Column:
    return col(name).desc_nulls_first()


def desc_nulls_last(name: str) -> Column:
    return col(name).desc_nulls_last()


def broadcast(df: Any) -> Any:
    """Mark a DataFrame to be broadcast in a join (Spark's broadcast hint): the planner builds the
    hash table from all of it in every task of the other side, whatever its estimated size."""
    return df.hint("broadcast")


__all__ = [
    "lit", "col", "column", "expr", "asc", "desc", "asc_nulls_first", "asc_nulls_last", "desc_nulls_first",
    "desc_nulls_last", "broadcast",
]
