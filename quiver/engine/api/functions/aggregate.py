"""Aggregate functions of `quiver.functions` (F): count, sum, avg, min, max, first, last, the statistics,
collect_list and collect_set, the boolean aggregates, and grouping() / grouping_id() for grouping sets."""
from __future__ import annotations

from typing import Any

from quiver.engine.api.column import Column, to_expr
from quiver.engine.api.functions.calls import ColumnOrName, call, column_args
from quiver.engine.core.expressions import AggregateFunction, Literal, UnresolvedStar


def _agg(name: str, c: Any, display: str | None = None, **kw: Any) -> Column:
    return Column(AggregateFunction(name, (to_expr(c),), display=display, **kw))


def count(c: Any) -> Column:
    """count(*) / count(1) count rows; count(col) counts non-null values."""
    if isinstance(c, str) and c == "*":
        return Column(AggregateFunction("count", ()))
    if isinstance(c, Column) and isinstance(c.expr, UnresolvedStar):
        return Column(AggregateFunction("count", ()))
    if isinstance(c, int) or (isinstance(c, Column) and isinstance(c.expr, Literal) and c.expr.value is not None):
        return Column(AggregateFunction("count", ()))
    return _agg("count", c)


def sum(c: Any) -> Column:  # noqa: A001 — PySpark's name
    return _agg("sum", c)


def avg(c: Any) -> Column:
    return _agg("avg", c)


def mean(c: Any) -> Column:
    return _agg("avg", c, display="avg")


def try_sum(col: ColumnOrName) -> Column:
    """sum, but NULL where the total overflows its type (in either ANSI mode).

    >>> df.groupBy("k").agg(F.try_sum("v"))
    """
    return _agg("sum", col, display="try_sum", is_try=True)


def try_avg(col: ColumnOrName) -> Column:
    """avg, but NULL where the sum behind it overflows."""
    return _agg("avg", col, display="try_avg", is_try=True)


def min(c: Any) -> Column:  # noqa: A001
    return _agg("min", c)


def max(c: Any) -> Column:  # noqa: A001
    return _agg("max", c)


def first(c: Any, ignorenulls: bool = False) -> Column:
    return _agg("first", c, ignore_nulls=ignorenulls)


def last(c: Any, ignorenulls: bool = False) -> Column:
    return _agg("last", c, ignore_nulls=ignorenulls)


def any_value(c: Any, ignoreNulls: bool = False) -> Column:
    return _agg("any_value", c, ignore_nulls=ignoreNulls)


def stddev(c: Any) -> Column:
    return _agg("stddev", c)


def stddev_samp(c: Any) -> Column:
    return _agg("stddev_samp", c)


def stddev_pop(c: Any) -> Column:
    return _agg("stddev_pop", c)


def variance(c: Any) -> Column:
    return _agg("variance", c)


def var_samp(c: Any) -> Column:
    return _agg("var_samp", c)


def var_pop(c: Any) -> Column:
    return _agg("var_pop", c)


def collect_list(c: Any) -> Column:
    return _agg("collect_list", c)


def collect_set(c: Any) -> Column:
    return _agg("collect_set", c)


def product(c: Any) -> Column:
    return _agg("product", c)


def median(c: Any) -> Column:
    return _agg("median", c)


def bool_and(c: Any) -> Column:
    return _agg("bool_and", c)


def bool_or(c: Any) -> Column:
    return _agg("bool_or", c)


every = bool_and
some = bool_or


def countDistinct(c: Any, *cols: Any) -> Column:
    return Column(AggregateFunction("count", tuple(to_expr(x) for x in (c, *cols)), distinct=True))


count_distinct = countDistinct


def sum_distinct(c: Any) -> Column:
    return Column(AggregateFunction("sum", (to_expr(c),), distinct=True))


sumDistinct = sum_distinct


def approx_count_distinct(c: Any, rsd: float | None = None) -> Column:
    return Column(AggregateFunction("count", (to_expr(c),), distinct=True, display="approx_count_distinct"))


def grouping(col: ColumnOrName) -> Column:
    """1 where `col` is aggregated away in this row's grouping set (rollup, cube), else 0."""
    return call("grouping", to_expr(col))


def grouping_id(*cols: ColumnOrName) -> Column:
    """The grouping() bits of the grouping columns (or of `cols`), first column highest."""
    return call("grouping_id", *column_args("grouping_id", cols))


__all__ = [
    "try_sum", "try_avg", "count", "sum", "avg", "mean", "min", "max", "first", "last", "any_value", "stddev",
    "stddev_samp", "stddev_pop", "variance", "var_samp", "var_pop", "collect_list", "collect_set", "product",
    "median", "bool_and", "bool_or", "every", "some", "countDistinct", "count_distinct", "sum_distinct", "sumDistinct",
    "approx_count_distinct", "grouping", "grouping_id",
]
