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
    """count(*) / count(1) count rows; count(col) counts non-null values.

    >>> frame = spark.createDataFrame([(1,), (None,)], "v int")
    >>> frame.select(F.count("*").alias("rows"), F.count("v").alias("vs")).collect()
    [Row(rows=2, vs=1)]
    """
    if isinstance(c, str) and c == "*":
        return Column(AggregateFunction("count", ()))
    if isinstance(c, Column) and isinstance(c.expr, UnresolvedStar):
        return Column(AggregateFunction("count", ()))
    if isinstance(c, int) or (isinstance(c, Column) and isinstance(c.expr, Literal) and c.expr.value is not None):
        return Column(AggregateFunction("count", ()))
    return _agg("count", c)


def sum(c: Any) -> Column:  # noqa: A001 — PySpark's name
    """The sum of the non-null values: bigint for integer columns, double for floating point, a wider decimal for
    decimals; null where every value is null. Under ANSI mode (the default) an integer sum that overflows raises
    an error (`try_sum` gives null instead).

    >>> df.agg(F.sum("age")).collect()
    [Row(sum(age)=7)]
    """
    return _agg("sum", c)


def avg(c: Any) -> Column:
    """The mean of the non-null values, as a double (a decimal for decimals); null where every value is null.

    >>> df.agg(F.avg("age")).collect()
    [Row(avg(age)=3.5)]
    """
    return _agg("avg", c)


def mean(c: Any) -> Column:
    """The mean of the non-null values: `avg` under its other name (the column is named `avg(...)`, as in Spark).

    >>> df.agg(F.mean("age")).collect()
    [Row(avg(age)=3.5)]
    """
    return _agg("avg", c, display="avg")


def try_sum(col: ColumnOrName) -> Column:
    """sum, but NULL where the total overflows its type (in either ANSI mode), where `sum` raises an error under ANSI
    mode.

    >>> df.agg(F.try_sum("age")).collect()
    [Row(try_sum(age)=7)]
    >>> spark.createDataFrame([(9223372036854775807,), (1,)], ["v"]).agg(F.try_sum("v").alias("s")).collect()
    [Row(s=None)]
    """
    return _agg("sum", col, display="try_sum", is_try=True)


def try_avg(col: ColumnOrName) -> Column:
    """avg, but NULL where the sum behind it overflows.

    >>> df.select(F.try_avg("age")).collect()
    [Row(try_avg(age)=3.5)]
    """
    return _agg("avg", col, display="try_avg", is_try=True)


def min(c: Any) -> Column:  # noqa: A001
    """The smallest non-null value of any orderable type (numbers, strings, dates, ...); null where every value is
    null.

    >>> df.agg(F.min("age"), F.min("name")).collect()
    [Row(min(age)=2, min(name)='Alice')]
    """
    return _agg("min", c)


def max(c: Any) -> Column:  # noqa: A001
    """The largest non-null value of any orderable type (numbers, strings, dates, ...); null where every value is
    null.

    >>> df.agg(F.max("age"), F.max("name")).collect()
    [Row(max(age)=5, max(name)='Bob')]
    """
    return _agg("max", c)


def first(c: Any, ignorenulls: bool = False) -> Column:
    """The value of the group's first row (its first non-null value with `ignorenulls`). Which row is first depends
    on how the rows arrive, so, as in Spark, it is only deterministic where that order is fixed.

    >>> v = spark.createDataFrame([(None,), ("x",)], "v string")
    >>> v.agg(F.first("v", ignorenulls=True).alias("f")).collect()
    [Row(f='x')]
    """
    return _agg("first", c, ignore_nulls=ignorenulls)


def last(c: Any, ignorenulls: bool = False) -> Column:
    """The value of the group's last row (its last non-null value with `ignorenulls`). Which row is last depends on
    how the rows arrive, so, as in Spark, it is only deterministic where that order is fixed.

    >>> v = spark.createDataFrame([("x",), (None,)], "v string")
    >>> v.agg(F.last("v", ignorenulls=True).alias("l")).collect()
    [Row(l='x')]
    """
    return _agg("last", c, ignore_nulls=ignorenulls)


def any_value(c: Any, ignoreNulls: bool = False) -> Column:
    """Some value of the group (a non-null one with `ignoreNulls`), for a column that is the same in every row of the
    group and need not be a grouping key.

    >>> v = spark.createDataFrame([(1, None), (1, "x")], "k int, v string")
    >>> v.groupBy("k").agg(F.any_value("v", True).alias("v")).collect()
    [Row(k=1, v='x')]
    """
    return _agg("any_value", c, ignore_nulls=ignoreNulls)


def stddev(c: Any) -> Column:
    """The sample standard deviation of the non-null values, as a double: `stddev_samp` (null for a single value).

    >>> df.agg(F.stddev("age")).collect()
    [Row(stddev(age)=2.1213203435596424)]
    """
    return _agg("stddev", c)


def stddev_samp(c: Any) -> Column:
    """The sample standard deviation (divided by n - 1) of the non-null values, as a double; null for a single value.

    >>> df.agg(F.stddev_samp("age")).collect()
    [Row(stddev_samp(age)=2.1213203435596424)]
    """
    return _agg("stddev_samp", c)


def stddev_pop(c: Any) -> Column:
    """The population standard deviation (divided by n) of the non-null values, as a double; 0.0 for a single value.

    >>> df.agg(F.stddev_pop("age")).collect()
    [Row(stddev_pop(age)=1.5)]
    """
    return _agg("stddev_pop", c)


def variance(c: Any) -> Column:
    """The sample variance of the non-null values, as a double: `var_samp` (null for a single value).

    >>> df.agg(F.variance("age")).collect()
    [Row(variance(age)=4.5)]
    """
    return _agg("variance", c)


def var_samp(c: Any) -> Column:
    """The sample variance (divided by n - 1) of the non-null values, as a double; null for a single value.

    >>> df.agg(F.var_samp("age")).collect()
    [Row(var_samp(age)=4.5)]
    """
    return _agg("var_samp", c)


def var_pop(c: Any) -> Column:
    """The population variance (divided by n) of the non-null values, as a double; 0.0 for a single value.

    >>> df.agg(F.var_pop("age")).collect()
    [Row(var_pop(age)=2.25)]
    """
    return _agg("var_pop", c)


def collect_list(c: Any) -> Column:
    """The group's non-null values as an array, repeats kept; their order depends on how the rows arrive (sort it
    with `sort_array` for a fixed one).

    >>> spark.createDataFrame([(1,), (None,), (1,)], "v int").agg(F.collect_list("v").alias("l")).collect()
    [Row(l=[1, 1])]
    """
    return _agg("collect_list", c)


def collect_set(c: Any) -> Column:
    """The group's distinct non-null values as an array, in no fixed order (sort it with `sort_array` for one).

    >>> v = spark.createDataFrame([(1,), (1,), (2,), (None,)], "v int")
    >>> v.agg(F.sort_array(F.collect_set("v")).alias("s")).collect()
    [Row(s=[1, 2])]
    """
    return _agg("collect_set", c)


def product(c: Any) -> Column:
    """The product of the non-null values, as a double; null where every value is null.

    >>> df.agg(F.product("age")).collect()
    [Row(product(age)=10.0)]
    """
    return _agg("product", c)


def median(c: Any) -> Column:
    """The exact median of the non-null values, as a double: for an even count, halfway between the two middle
    values, as Spark's percentile(c, 0.5) interpolates; NaN sorts above every number; null for no values.

    >>> df.groupBy().agg(F.median("age")).collect()
    [Row(median(age)=3.5)]
    """
    return _agg("median", c)


def bool_and(c: Any) -> Column:
    """Whether every non-null value is true; null where every value is null. `every` is the same aggregate under
    its other name, which names its column.

    >>> b = spark.createDataFrame([(True,), (False,), (None,)], "b boolean")
    >>> b.agg(F.bool_and("b"), F.every("b")).collect()
    [Row(bool_and(b)=False, every(b)=False)]
    """
    return _agg("bool_and", c)


def bool_or(c: Any) -> Column:
    """Whether any non-null value is true; null where every value is null. `some` is the same aggregate under its
    other name, which names its column.

    >>> b = spark.createDataFrame([(True,), (False,), (None,)], "b boolean")
    >>> b.agg(F.bool_or("b"), F.some("b")).collect()
    [Row(bool_or(b)=True, some(b)=True)]
    """
    return _agg("bool_or", c)


def every(c: Any) -> Column:
    """`bool_and` under Spark's other name: whether every non-null value is true; the column is `every(...)`.

    >>> spark.createDataFrame([(True,), (None,)], "b boolean").agg(F.every("b")).collect()
    [Row(every(b)=True)]
    """
    return _agg("bool_and", c, display="every")


def some(c: Any) -> Column:
    """`bool_or` under Spark's other name: whether any non-null value is true; the column is `some(...)`.

    >>> spark.createDataFrame([(False,), (None,)], "b boolean").agg(F.some("b")).collect()
    [Row(some(b)=False)]
    """
    return _agg("bool_or", c, display="some")


def countDistinct(c: Any, *cols: Any) -> Column:
    """The number of distinct non-null values of `c` (of distinct combinations of `c` and `cols`, skipping those
    with a null); `count_distinct` is the same function under its other name.

    >>> v = spark.createDataFrame([(1, "a"), (1, "a"), (2, "b"), (None, "c")], ["v", "w"])
    >>> v.agg(F.countDistinct("v"), F.count_distinct("v", "w")).collect()
    [Row(count(DISTINCT v)=2, count(DISTINCT v, w)=2)]
    """
    return Column(AggregateFunction("count", tuple(to_expr(x) for x in (c, *cols)), distinct=True))


count_distinct = countDistinct


def sum_distinct(c: Any) -> Column:
    """The sum of the distinct non-null values; `sumDistinct` is the same function under its older, deprecated name.

    >>> spark.createDataFrame([(1,), (1,), (2,), (None,)], ["v"]).agg(F.sum_distinct("v")).collect()
    [Row(sum(DISTINCT v)=3)]
    """
    return Column(AggregateFunction("sum", (to_expr(c),), distinct=True))


sumDistinct = sum_distinct


def approx_count_distinct(c: Any, rsd: float | None = None) -> Column:
    """The number of distinct non-null values. Spark estimates it with HyperLogLog++ within the relative standard
    deviation `rsd`; Quiver counts them exactly, whatever `rsd`, so its answer is always within any `rsd` of the
    truth.

    >>> spark.createDataFrame([(1,), (1,), (2,), (None,)], ["v"]).agg(F.approx_count_distinct("v")).collect()
    [Row(approx_count_distinct(v)=2)]
    """
    return Column(AggregateFunction("count", (to_expr(c),), distinct=True, display="approx_count_distinct"))


def grouping(col: ColumnOrName) -> Column:
    """1 where `col` is aggregated away in this row's grouping set (rollup, cube), else 0.

    >>> df.rollup("name").agg(F.grouping("name").alias("g"), F.sum("age").alias("s")).orderBy("g", "name").collect()
    [Row(name='Alice', g=0, s=2), Row(name='Bob', g=0, s=5), Row(name=None, g=1, s=7)]
    """
    return call("grouping", to_expr(col))


def grouping_id(*cols: ColumnOrName) -> Column:
    """The grouping() bits of the grouping columns (or of `cols`), first column highest.

    >>> df.cube("name").agg(F.grouping_id().alias("g")).orderBy("g", "name").collect()
    [Row(name='Alice', g=0), Row(name='Bob', g=0), Row(name=None, g=1)]
    """
    return call("grouping_id", *column_args("grouping_id", cols))


__all__ = [
    "try_sum", "try_avg", "count", "sum", "avg", "mean", "min", "max", "first", "last", "any_value", "stddev",
    "stddev_samp", "stddev_pop", "variance", "var_samp", "var_pop", "collect_list", "collect_set", "product",
    "median", "bool_and", "bool_or", "every", "some", "countDistinct", "count_distinct", "sum_distinct", "sumDistinct",
    "approx_count_distinct", "grouping", "grouping_id",
]
