"""Conditional and null-handling functions of `quiver.functions` (F): when, coalesce, ifnull, nvl, nvl2,
nullif, isnull, isnotnull, isnan, nanvl, as in PySpark."""
from __future__ import annotations

from typing import Any

from quiver.engine.api.column import Column, literal_expr, to_expr
from quiver.engine.api.functions.calls import ColumnOrName, call, column_args
from quiver.engine.core.expressions import CaseWhen


def when(condition: Column, value: Any) -> Column:
    """`value` where `condition` (a boolean Column) is true, else null: the start of a CASE WHEN, continued with
    `Column.when` and closed with `Column.otherwise`. A Python `value` is a literal.

    >>> df.select(F.when(df.age > 3, "old").alias("w")).collect()
    [Row(w=None), Row(w='old')]
    >>> df.select(F.when(df.age > 3, "old").otherwise("young").alias("w")).collect()
    [Row(w='young'), Row(w='old')]
    """
    if not isinstance(condition, Column):
        raise TypeError("when() condition must be a Column, e.g. F.col('x') > 1")
    return Column(CaseWhen((condition.expr,), (literal_expr(value),), None))


def coalesce(*cols: ColumnOrName) -> Column:
    """The first non-null argument.

    >>> spark.createDataFrame([(None, 1), (2, 3)], "a int, b int").select(F.coalesce("a", "b").alias("c")).collect()
    [Row(c=1), Row(c=2)]
    """
    return call("coalesce", *column_args("coalesce", cols, least=1))


def ifnull(col1: ColumnOrName, col2: ColumnOrName) -> Column:
    """col2 where col1 is null, else col1: two-argument `coalesce` under Spark SQL's name.

    >>> spark.createDataFrame([(None, 1), (2, 1)], "a int, b int").select(F.ifnull("a", "b").alias("v")).collect()
    [Row(v=1), Row(v=2)]
    """
    return call("ifnull", to_expr(col1), to_expr(col2))


def nvl(col1: ColumnOrName, col2: ColumnOrName) -> Column:
    """col2 where col1 is null, else col1: two-argument `coalesce` under Spark SQL's (and Oracle's) name.

    >>> spark.createDataFrame([(None, 1), (2, 1)], "a int, b int").select(F.nvl("a", "b").alias("v")).collect()
    [Row(v=1), Row(v=2)]
    """
    return call("nvl", to_expr(col1), to_expr(col2))


def nvl2(col1: ColumnOrName, col2: ColumnOrName, col3: ColumnOrName) -> Column:
    """col2 where col1 is not null, else col3.

    >>> frame = spark.createDataFrame([(None,), (1,)], "a int")
    >>> frame.select(F.nvl2("a", F.lit("set"), F.lit("null")).alias("n")).collect()
    [Row(n='null'), Row(n='set')]
    """
    return call("nvl2", to_expr(col1), to_expr(col2), to_expr(col3))


def nullif(col1: ColumnOrName, col2: ColumnOrName) -> Column:
    """Null where col1 = col2, else col1.

    >>> df.select(F.nullif("age", F.lit(2)).alias("n")).collect()
    [Row(n=None), Row(n=5)]
    """
    return call("nullif", to_expr(col1), to_expr(col2))


def isnull(col: ColumnOrName) -> Column:
    """Whether the value is null (never null itself), as `Column.isNull`.

    >>> spark.createDataFrame([(None,), (2,)], "a int").select(F.isnull("a")).collect()
    [Row((a IS NULL)=True), Row((a IS NULL)=False)]
    """
    return call("isnull", to_expr(col))


def isnotnull(col: ColumnOrName) -> Column:
    """Whether the value is not null (never null itself), as `Column.isNotNull`.

    >>> spark.createDataFrame([(None,), (2,)], "a int").select(F.isnotnull("a")).collect()
    [Row((a IS NOT NULL)=False), Row((a IS NOT NULL)=True)]
    """
    return call("isnotnull", to_expr(col))


def isnan(col: ColumnOrName) -> Column:
    """True for NaN (false for null).

    >>> spark.createDataFrame([(float("nan"),), (1.0,), (None,)], "v double").select(F.isnan("v").alias("n")).collect()
    [Row(n=True), Row(n=False), Row(n=False)]
    """
    return call("isnan", to_expr(col))


def nanvl(col1: ColumnOrName, col2: ColumnOrName) -> Column:
    """col2 where col1 is NaN, else col1.

    >>> frame = spark.createDataFrame([(float("nan"),), (1.0,)], "v double")
    >>> frame.select(F.nanvl("v", F.lit(0.0)).alias("n")).collect()
    [Row(n=0.0), Row(n=1.0)]
    """
    return call("nanvl", to_expr(col1), to_expr(col2))


__all__ = [
    "when", "coalesce", "ifnull", "nvl", "nvl2", "nullif", "isnull", "isnotnull", "isnan", "nanvl",
]
