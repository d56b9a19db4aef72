"""Window functions of `quiver.functions` (F): row_number, rank, dense_rank, percent_rank, cume_dist, ntile,
nth_value, lag and lead, used with `.over(Window...)` as in PySpark."""
from __future__ import annotations

from typing import Any

from quiver.engine.api.column import Column, to_expr
from quiver.engine.core.errors import AnalysisException
from quiver.engine.core.expressions import Literal, WindowFunction


def _window(name: str, *args: Any) -> Column:
    return Column(WindowFunction(name, tuple(args)))


def row_number() -> Column:
    """1, 2, 3, ... for the rows of each window partition in the window's order, ties numbered apart, for picking the
    first n rows of each group.

    >>> df.select("name", F.row_number().over(Window.orderBy("age")).alias("n")).collect()
    [Row(name='Alice', n=1), Row(name='Bob', n=2)]
    """
    return _window("row_number")


def rank() -> Column:
    """The rank of each row in its window partition's order: ties share a rank and leave gaps after them (1, 1, 3).

    >>> v = spark.createDataFrame([(1,), (1,), (2,)], ["v"])
    >>> v.select("v", F.rank().over(Window.orderBy("v")).alias("rank")).collect()
    [Row(v=1, rank=1), Row(v=1, rank=1), Row(v=2, rank=3)]
    """
    return _window("rank")


def dense_rank() -> Column:
    """The rank of each row in its window partition's order: ties share a rank and leave no gaps (1, 1, 2).

    >>> v = spark.createDataFrame([(1,), (1,), (2,)], ["v"])
    >>> v.select("v", F.dense_rank().over(Window.orderBy("v")).alias("rank")).collect()
    [Row(v=1, rank=1), Row(v=1, rank=1), Row(v=2, rank=2)]
    """
    return _window("dense_rank")


def percent_rank() -> Column:
    """(rank - 1) / (rows in the partition - 1), as a double from 0.0 to 1.0: where each row stands in its window
    partition's order.

    >>> v = spark.createDataFrame([(1,), (1,), (2,)], ["v"])
    >>> v.select("v", F.percent_rank().over(Window.orderBy("v")).alias("p")).collect()
    [Row(v=1, p=0.0), Row(v=1, p=0.0), Row(v=2, p=1.0)]
    """
    return _window("percent_rank")


def cume_dist() -> Column:
    """The fraction of its window partition's rows that come before the row or tie with it in the window's order, as a
    double.

    >>> v = spark.createDataFrame([(1,), (1,), (2,)], ["v"])
    >>> v.select("v", F.cume_dist().over(Window.orderBy("v")).alias("c")).collect()
    [Row(v=1, c=0.6666666666666666), Row(v=1, c=0.6666666666666666), Row(v=2, c=1.0)]
    """
    return _window("cume_dist")


def ntile(n: int) -> Column:
    """The number (1 to `n`) of the bucket the row falls in when its window partition, in the window's order, is cut
    into `n` buckets as equal as can be, the first buckets one row larger where they cannot be equal.

    >>> spark.range(5).select("id", F.ntile(2).over(Window.orderBy("id")).alias("half")).collect()
    [Row(id=0, half=1), Row(id=1, half=1), Row(id=2, half=1), Row(id=3, half=2), Row(id=4, half=2)]
    """
    return _window("ntile", Literal.of(int(n)))


def nth_value(col: Any, offset: int, ignoreNulls: bool = False) -> Column:
    """The value at the `offset`-th row (from 1) of the window frame; null where the frame is shorter.

    >>> w = Window.orderBy("age").rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
    >>> df.select("name", F.nth_value("name", 2).over(w).alias("second")).collect()
    [Row(name='Alice', second='Bob'), Row(name='Bob', second='Bob')]
    """
    if int(offset) <= 0:
        raise AnalysisException(f"nth_value() takes a positive offset, got {offset}")
    return Column(WindowFunction("nth_value", (to_expr(col), Literal.of(int(offset))), ignore_nulls=bool(ignoreNulls)))


def lag(col: Any, offset: int = 1, default: Any = None) -> Column:
    """The value of `col` `offset` rows before this one in the window partition's order, or `default` (null unless
    given) where there is no such row; for comparing a row with the one before it.

    >>> w = Window.orderBy("age")
    >>> df.select("name", F.lag("age").over(w).alias("prev"), F.lag("age", 1, -1).over(w).alias("or")).collect()
    [Row(name='Alice', prev=None, or=-1), Row(name='Bob', prev=2, or=2)]
    """
    return _window("lag", to_expr(col), Literal.of(int(offset)), Literal.of(default))


def lead(col: Any, offset: int = 1, default: Any = None) -> Column:
    """The value of `col` `offset` rows after this one in the window partition's order, or `default` (null unless
    given) where there is no such row; for comparing a row with the one after it.

    >>> w = Window.orderBy("age")
    >>> df.select("name", F.lead("age").over(w).alias("next"), F.lead("age", 1, 0).over(w).alias("or")).collect()
    [Row(name='Alice', next=5, or=5), Row(name='Bob', next=None, or=0)]
    """
    return _window("lead", to_expr(col), Literal.of(int(offset)), Literal.of(default))


__all__ = [
    "row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "nth_value", "lag", "lead",
]
