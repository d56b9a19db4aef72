"""`GroupedData`: what `df.groupBy(...)` returns; `agg` and the shortcut aggregates."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from quiver.engine.analysis import builder
from quiver.engine.api.column import Column, to_expr
from quiver.engine.api.unsupported import PySparkMembers
from quiver.engine.core import types as T
from quiver.engine.core.errors import AnalysisException
from quiver.engine.core.expressions import AggregateFunction, Alias, Expr, UnresolvedColumn

if TYPE_CHECKING:
    from quiver.engine.api.dataframe import DataFrame

_DICT_FUNCTIONS = {
    "sum": "sum", "avg": "avg", "mean": "avg", "min": "min", "max": "max", "count": "count",
    "first": "first", "last": "last", "stddev": "stddev", "collect_list": "collect_list",
    "collect_set": "collect_set", "variance": "variance",
}


class GroupedData(PySparkMembers):
    """Grouping keys waiting for aggregates.

    >>> df.groupBy("name").count().orderBy("name").collect()
    [Row(name='Alice', count=1), Row(name='Bob', count=1)]
    """

    _pyspark_name = "GroupedData"

    def __init__(self, df: DataFrame, keys: list[Expr], pivot: tuple[Expr, list] | None = None):
        self._df = df
        self._keys = keys
        self._pivot = pivot
        # rollup, cube and groupingSets set the grouping sets
        self._grouping_sets: list[tuple[int, ...]] | None = None

    def pivot(self, pivot_col: Any, values: list | None = None) -> GroupedData:
        """One output column per value of `pivot_col` for each aggregate; without `values` the distinct values are
        found with an extra job, sorted, as in Spark.

        >>> sales = spark.createDataFrame([("a", 2024, 1), ("a", 2025, 2), ("b", 2024, 3)], ["k", "year", "n"])
        >>> sales.groupBy("k").pivot("year").sum("n").orderBy("k").collect()
        [Row(k='a', 2024=1, 2025=2), Row(k='b', 2024=3, 2025=None)]
        >>> sales.groupBy("k").pivot("year", [2025]).sum("n").orderBy("k").collect()
        [Row(k='a', 2025=2), Row(k='b', 2025=None)]
        """
        if values is None:
            name = pivot_col if isinstance(pivot_col, str) else None
            distinct = self._df.select(pivot_col).distinct()
            values = sorted((r[0] for r in distinct.collect()), key=lambda v: (v is not None, v))
            if name is None:
                values = list(values)
        return GroupedData(self._df, self._keys, (to_expr(pivot_col), list(values)))

    def agg(self, *exprs: Any) -> DataFrame:
        """One row per group with the aggregates `exprs`: aggregate Columns (`F.sum("n")`), or one dict of column name
        -> aggregate function name (`{"age": "max"}`; "*" with "count" counts rows).

        >>> df.groupBy("name").agg(F.count("*").alias("n"), F.avg("age")).orderBy("name").collect()
        [Row(name='Alice', n=1, avg(age)=2.0), Row(name='Bob', n=1, avg(age)=5.0)]
        >>> df.groupBy().agg({"age": "max"}).collect()
        [Row(max(age)=5)]
        """
        aggs: list[Expr] = []
        if len(exprs) == 1 and isinstance(exprs[0], dict):
            for col, fn in exprs[0].items():
                name = _DICT_FUNCTIONS.get(fn.lower())
                if name is None:
                    raise AnalysisException(
                        f"unknown aggregate '{fn}' for column '{col}'; valid: {', '.join(sorted(_DICT_FUNCTIONS))}"
                    )
                arg: tuple[Expr, ...] = () if (col == "*" and name == "count") else (UnresolvedColumn.parse(col),)
                aggs.append(AggregateFunction(name, arg))
        else:
            if not exprs:
                raise AnalysisException("agg() needs at least one aggregate expression")
            for e in exprs:
                if not isinstance(e, Column):
                    raise TypeError(f"agg() takes Columns or one dict, got {type(e).__name__}")
                aggs.append(e.expr)
        return self._aggregate(aggs)

    def _aggregate(self, aggs: list[Expr]) -> DataFrame:
        keys = tuple(self._keys)
        if self._pivot is not None:
            aggs = builder.pivoted_aggregates(aggs, *self._pivot)
        return self._df._built(builder.aggregate, self._df._plan, keys, keys + tuple(aggs), self._grouping_sets)

    def count(self) -> DataFrame:
        """The rows of each group, as the column `count`.

        >>> df.union(df).groupBy("name").count().orderBy("name").collect()
        [Row(name='Alice', count=2), Row(name='Bob', count=2)]
        """
        return self._aggregate([Alias(AggregateFunction("count", ()), "count")])

    def _numeric(self, fn: str, cols: tuple[str, ...]) -> DataFrame:
        if not cols:
            grouped = {id(k) for k in self._keys}
            cols = tuple(a.name for a in self._df._plan.output
                         if isinstance(a.dtype, T.NumericType) and id(a) not in grouped)
        return self._aggregate([AggregateFunction(fn, (UnresolvedColumn.parse(c),)) for c in cols])

    def sum(self, *cols: str) -> DataFrame:
        """The sum of each of `cols` (every numeric column that is not a key when none are given) per group.

        >>> df.groupBy("name").sum("age").orderBy("name").collect()
        [Row(name='Alice', sum(age)=2), Row(name='Bob', sum(age)=5)]
        """
        return self._numeric("sum", cols)

    def avg(self, *cols: str) -> DataFrame:
        """The mean of each of `cols` (every numeric column that is not a key when none are given) per group; `mean`
        is the same.

        >>> df.groupBy().avg("age").collect()
        [Row(avg(age)=3.5)]
        """
        return self._numeric("avg", cols)

    mean = avg

    def min(self, *cols: str) -> DataFrame:
        """The least value of each of `cols` (every numeric column that is not a key when none are given) per group.

        >>> df.groupBy().min("age").collect()
        [Row(min(age)=2)]
        """
        return self._numeric("min", cols)

    def max(self, *cols: str) -> DataFrame:
        """The greatest value of each of `cols` (every numeric column that is not a key when none are given) per group.

        >>> df.groupBy().max("age").collect()
        [Row(max(age)=5)]
        """
        return self._numeric("max", cols)
