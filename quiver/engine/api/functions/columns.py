"""Column references and orderings of `quiver.functions` (F): col, column, lit, expr, asc, desc and their
nulls-first/last forms, and the broadcast hint (PySpark's normal and sort functions)."""
from __future__ import annotations

from typing import Any

from quiver.engine.api.column import Column, lit
from quiver.engine.api.functions.calls import ColumnOrName
from quiver.engine.core.expressions import UnresolvedColumn, UnresolvedStar


def col(name: str) -> Column:
    """A column by name; `"d.grp"` is column grp of the DataFrame aliased `d`.

    >>> df.select(F.col("name")).collect()
    [Row(name='Alice'), Row(name='Bob')]
    """
    if name == "*":
        return Column(UnresolvedStar(None))
    return Column(UnresolvedColumn.parse(name))


column = col


def _column(c: ColumnOrName) -> Column:
    return c if isinstance(c, Column) else col(c)


def expr(text: str) -> Column:
    """A column from a SQL expression string, parsed with Spark SQL's grammar (functions, operators, `CASE`, `AS`), for
    what is shorter to write as SQL than with column methods.

    >>> df.select(F.expr("length(name) + 1 AS n")).collect()
    [Row(n=6), Row(n=4)]
    """
    from quiver.engine.sql.expressions import parse_expression  # sqlglot, imported only for SQL text

    return Column(parse_expression(text))


def asc(col: ColumnOrName) -> Column:
    """The sort order of `col` (a Column or a column name), ascending with nulls first (Spark's default), for `orderBy`
    and windows.

    >>> df.orderBy(F.asc("age")).collect()
    [Row(age=2, name='Alice'), Row(age=5, name='Bob')]
    """
    return _column(col).asc()


def desc(col: ColumnOrName) -> Column:
    """The sort order of `col` (a Column or a column name), descending with nulls last (Spark's default), for `orderBy`
    and windows.

    >>> df.orderBy(F.desc("age")).collect()
    [Row(age=5, name='Bob'), Row(age=2, name='Alice')]
    >>> df.orderBy(F.desc(F.length("name"))).first().name
    'Alice'
    """
    return _column(col).desc()


def asc_nulls_first(col: ColumnOrName) -> Column:
    """The sort order of `col` (a Column or a column name), ascending, nulls before every value (what `asc` does too).

    >>> spark.createDataFrame([(1,), (None,), (3,)], "v int").orderBy(F.asc_nulls_first("v")).collect()
    [Row(v=None), Row(v=1), Row(v=3)]
    """
    return _column(col).asc_nulls_first()


def asc_nulls_last(col: ColumnOrName) -> Column:
    """The sort order of `col` (a Column or a column name), ascending, nulls after every value.

    >>> spark.createDataFrame([(1,), (None,), (3,)], "v int").orderBy(F.asc_nulls_last("v")).collect()
    [Row(v=1), Row(v=3), Row(v=None)]
    """
    return _column(col).asc_nulls_last()


def desc_nulls_first(col: ColumnOrName) -> Column:
    """The sort order of `col` (a Column or a column name), descending, nulls before every value.

    >>> spark.createDataFrame([(1,), (None,), (3,)], "v int").orderBy(F.desc_nulls_first("v")).collect()
    [Row(v=None), Row(v=3), Row(v=1)]
    """
    return _column(col).desc_nulls_first()


def desc_nulls_last(col: ColumnOrName) -> Column:
    """The sort order of `col` (a Column or a column name), descending, nulls after every value (what `desc` does too).

    >>> spark.createDataFrame([(1,), (None,), (3,)], "v int").orderBy(F.desc_nulls_last("v")).collect()
    [Row(v=3), Row(v=1), Row(v=None)]
    """
    return _column(col).desc_nulls_last()


def broadcast(df: Any) -> Any:
    """Mark a DataFrame to be broadcast in a join (Spark's broadcast hint): the planner builds the
    hash table from all of it in every task of the other side, whatever its estimated size.

    >>> ages = spark.createDataFrame([(2, "two")], ["age", "word"])
    >>> df.join(F.broadcast(ages), "age").collect()
    [Row(age=2, name='Alice', word='two')]
    """
    return df.hint("broadcast")


__all__ = [
    "lit", "col", "column", "expr", "asc", "desc", "asc_nulls_first", "asc_nulls_last", "desc_nulls_first",
    "desc_nulls_last", "broadcast",
]
