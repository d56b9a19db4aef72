"""`DataFrame`: an immutable, analyzed logical plan with PySpark's methods.

Every transformation returns a new DataFrame whose plan is analyzed at once, so a wrong
column name fails on the line that names it, as in PySpark; actions plan and run a job.
"""
from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, overload

import pyarrow as pa

from quiver.engine.analysis import builder
from quiver.engine.analysis.analyzer import resolve_expression, resolve_name
from quiver.engine.analysis.grouping_sets import cube_sets, rollup_sets
from quiver.engine.api.column import Column, to_expr
from quiver.engine.api.grouped import GroupedData
from quiver.engine.api.readwriter import DataFrameWriter
from quiver.engine.api.sampling import DataFrameStatFunctions, random_split, sample, sample_by
from quiver.engine.api.udf import map_in_batches
from quiver.engine.api.unsupported import missing_member
from quiver.engine.core import plan as L
from quiver.engine.core import types as T
from quiver.engine.core.errors import AnalysisException, ConfigurationError
from quiver.engine.core.expressions import (
    AggregateFunction,
    Alias,
    AttributeRef,
    BinaryArithmetic,
    CaseWhen,
    Cast,
    ColumnOrigin,
    Comparison,
    Expr,
    IsNull,
    Literal,
    Not,
    Or,
    SortOrder,
    UnresolvedColumn,
    UnresolvedStar,
    conjoin,
    transform_expr,
)
from quiver.engine.core.row import Row
from quiver.engine.core.storage_level import StorageLevel
from quiver.engine.execution.jobs import action

if TYPE_CHECKING:
    import pandas as pd

    from quiver.engine.api.session import Session
    from quiver.engine.execution.query_execution import QueryExecution


def _is_ordinal(c: Any) -> bool:
    """An int standing for a column by position (bools are values, not positions)."""
    return isinstance(c, int) and not isinstance(c, bool)


def _flatten(cols: tuple) -> list:
    if len(cols) == 1 and isinstance(cols[0], (list, tuple)):
        return list(cols[0])
    return list(cols)


_MISSING = object()


class DataFrame:
    """A distributed collection of rows with named, typed columns.

    >>> df.filter(df.age > 3).collect()
    [Row(age=5, name='Bob')]
    """

    def __init__(self, session: Session, plan: L.LogicalPlan):
        self._session = session
        self._plan = plan
        self._last_execution: QueryExecution | None = None

    @property
    def sparkSession(self) -> Session:
        """The session this DataFrame belongs to.

        >>> df.sparkSession is spark
        True
        """
        return self._session

    def _with(self, plan: L.LogicalPlan) -> DataFrame:
        return self._session._df(plan)

    def _built(self, build: Callable[..., L.LogicalPlan], *args: Any) -> DataFrame:
        """The DataFrame of the plan `build(*args)` makes: a function of the plan builder, which analyzes as it
        builds, so it runs under this session's type coercion rules."""
        with self._session._analysis():
            return self._with(build(*args))

    def _execution(self) -> QueryExecution:
        """A fresh execution of this DataFrame's plan, kept as its last so `explain("cost")` can show its run."""
        from quiver.engine.execution.query_execution import QueryExecution

        self._last_execution = QueryExecution(self._session._context, self._plan)
        return self._last_execution

    # ---------------------------------------------------------- schema

    @property
    def columns(self) -> list[str]:
        """The column names, in order.

        >>> df.columns
        ['age', 'name']
        """
        return [a.name for a in self._plan.output]

    @property
    def dtypes(self) -> list[tuple[str, str]]:
        """(name, type) of each column, the type as Spark's simple string (`bigint`, `string`, `array<int>`).

        >>> df.dtypes
        [('age', 'bigint'), ('name', 'string')]
        """
        return [(a.name, a.dtype.simpleString()) for a in self._plan.output]

    @property
    def schema(self) -> T.StructType:
        """The columns' names, types and nullability as a `StructType`; no job runs.

        >>> df.schema
        StructType([StructField('age', LongType(), True), StructField('name', StringType(), True)])
        """
        return T.StructType([T.StructField(a.name, a.dtype, a.nullable) for a in self._plan.output])

    def printSchema(self, level: int | None = None) -> None:
        """Print the schema as a tree. `level` (how deep to print nested fields) is accepted and ignored: the whole tree
        is printed.

        >>> df.printSchema()
        root
         |-- age: long (nullable = true)
         |-- name: string (nullable = true)
        """
        print(self.schema.treeString())

    def __repr__(self) -> str:
        return "DataFrame[" + ", ".join(f"{n}: {t}" for n, t in self.dtypes) + "]"

    def __getitem__(self, item: Any) -> Any:
        """`df["age"]` a column, `df[0]` the first column, `df[condition]` a filter and `df[["a", "b"]]` a select.

        >>> df[df["age"] > 3].select(df[1]).collect()
        [Row(name='Bob')]
        """
        if isinstance(item, str):
            return Column(self._resolve_column(item))
        if isinstance(item, int):
            return Column(self._column_handle(self._plan.output[item]))
        if isinstance(item, Column):
            return self.filter(item)
        if isinstance(item, (list, tuple)):
            return self.select(*item)
        raise TypeError(f"unexpected item type {type(item).__name__}; use a column name, an index, a Column or a list")

    if not TYPE_CHECKING:
        # `df.age` as PySpark allows, hidden from type checkers so that a misspelt method (`df.selectt`)
        # is an error there; typed code writes df["age"] or F.col("age").
        def __getattr__(self, name: str) -> Column:
            """`df.age`: the column `age`, as `df["age"]` (a name that is no column raises AttributeError).

            >>> df.select(df.age + 1).collect()
            [Row((age + 1)=3), Row((age + 1)=6)]
            """
            if name.startswith("_"):
                raise AttributeError(name)
            if any(a.name == name for a in self._plan.output):
                return Column(self._resolve_column(name))
            missing = missing_member("DataFrame", name)
            if missing is not None:
                raise missing
            methods = [m for m in dir(type(self)) if not m.startswith("_")]
            close = difflib.get_close_matches(name, methods + self.columns, n=1, cutoff=0.75)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            raise AttributeError(
                f"'DataFrame' object has no attribute '{name}'.{hint} Columns: {', '.join(self.columns)}"
            )

    def _resolve_column(self, name: str) -> Expr:
        """`df[name]`: the column resolved in this DataFrame, its attribute marked as taken from this DataFrame."""
        found = resolve_name(UnresolvedColumn.parse(name).parts, self._plan.output)
        return transform_expr(found, lambda e: self._column_handle(e) if isinstance(e, AttributeRef) else e)

    def _column_handle(self, attribute: AttributeRef) -> AttributeRef:
        """`attribute` of this DataFrame's output, marked with where it came from, so that used above a join
        of frames derived from one another it resolves to this frame's side (see analyzer.resolve_origins)."""
        ids = [a.expr_id for a in self._plan.output]
        if self._plan.plan_id is None or attribute.expr_id not in ids:
            return attribute
        return dataclasses.replace(attribute, origin=ColumnOrigin(self._plan.plan_id, ids.index(attribute.expr_id)))

    # ---------------------------------------------------------- projections

    def select(self, *cols: Any) -> DataFrame:
        """A DataFrame of the given columns: names (`"*"` for all), Columns, or one list of them.

        >>> df.select("name", (F.col("age") * 2).alias("twice")).collect()
        [Row(name='Alice', twice=4), Row(name='Bob', twice=10)]
        """
        exprs = tuple(_select_expr(c) for c in _flatten(cols))
        return self._with(L.Project(self._plan, exprs))

    def selectExpr(self, *exprs: str) -> DataFrame:
        """`select` of SQL expression strings.

        >>> df.selectExpr("name", "age + 1 AS next").collect()
        [Row(name='Alice', next=3), Row(name='Bob', next=6)]
        """
        from quiver.engine.sql.expressions import parse_expression  # sqlglot, only where SQL text is given

        return self.select(*[Column(parse_expression(e)) for e in _flatten(exprs)])

    def withColumn(self, colName: str, col: Column) -> DataFrame:
        """Add the column `colName`, or replace the one of that name (compared case-insensitively, as in Spark).
        `col` must be a Column; wrap a Python value in `F.lit`.

        >>> df.withColumn("age", df.age + 10).collect()
        [Row(age=12, name='Alice'), Row(age=15, name='Bob')]
        """
        return self.withColumns({colName: col})

    def withColumns(self, *colsMap: dict[str, Column]) -> DataFrame:
        """`withColumn` for each name -> Column of the dict `colsMap`, in one projection.

        >>> df.withColumns({"a1": df.age + 1, "a2": df.age * 2}).columns
        ['age', 'name', 'a1', 'a2']
        """
        mapping = dict(colsMap[0]) if colsMap else {}
        for name, c in mapping.items():
            if not isinstance(c, Column):
                raise AnalysisException(f"withColumn('{name}', ...) needs a Column, got {type(c).__name__}; wrap "
                                        "values in F.lit()")
        projections: list[Expr] = []
        replaced = set()
        for a in self._plan.output:
            match = next((n for n in mapping if n.lower() == a.name.lower()), None)
            if match is not None and match not in replaced:
                projections.append(Alias(mapping[match].expr, match))
                replaced.add(match)
            elif match is None:
                projections.append(a)
        for name, c in mapping.items():
            if name not in replaced:
                projections.append(Alias(c.expr, name))
        return self._with(L.Project(self._plan, tuple(projections)))

    def withColumnRenamed(self, existing: str, new: str) -> DataFrame:
        """Rename the column `existing` to `new`; nothing happens when there is no such column, as in Spark.

        >>> df.withColumnRenamed("age", "years").columns
        ['years', 'name']
        """
        return self.withColumnsRenamed({existing: new})

    def withColumnsRenamed(self, colsMap: dict[str, str]) -> DataFrame:
        """Rename each column named by a key of `colsMap` to its value.

        >>> df.withColumnsRenamed({"age": "a", "name": "n"}).columns
        ['a', 'n']
        """
        lower = {k.lower(): v for k, v in colsMap.items()}
        projections = tuple(
            Alias(a, lower[a.name.lower()]) if a.name.lower() in lower else a for a in self._plan.output
        )
        return self._with(L.Project(self._plan, projections))

    def toDF(self, *cols: str) -> DataFrame:
        """The same columns under new names, one name per column.

        >>> df.toDF("a", "n").columns
        ['a', 'n']
        """
        names = _flatten(cols)
        if len(names) != len(self._plan.output):
            raise AnalysisException(
                f"toDF() got {len(names)} names for {len(self._plan.output)} columns ({', '.join(self.columns)})"
            )
        return self._with(L.Project(self._plan, tuple(Alias(a, n) for a, n in zip(self._plan.output, names))))

    def drop(self, *cols: Any) -> DataFrame:
        """Every column but those named (or given as Columns); names that match nothing are ignored, as in Spark.

        >>> df.drop("age").columns
        ['name']
        """
        drop_ids: set[int] = set()
        for c in _flatten(cols):
            if isinstance(c, str):
                drop_ids |= {a.expr_id for a in self._plan.output if a.name.lower() == c.lower()}
            elif isinstance(c, Column):
                e = resolve_expression(c.expr, self._plan.output)
                if isinstance(e, AttributeRef):
                    drop_ids.add(e.expr_id)
            else:
                raise TypeError(f"drop() takes column names or Columns, got {type(c).__name__}")
        kept = tuple(a for a in self._plan.output if a.expr_id not in drop_ids)
        return self._with(L.Project(self._plan, kept))

    def alias(self, alias: str) -> DataFrame:
        """The same rows under the name `alias`, so columns can be told apart as `"alias.col"` (in a self-join).

        >>> a, b = df.alias("a"), df.alias("b")
        >>> a.join(b, F.col("a.age") < F.col("b.age")).select("a.name", "b.name").collect()
        [Row(name='Alice', name='Bob')]
        """
        return self._with(L.SubqueryAlias(self._plan, alias))

    # ---------------------------------------------------------- rows

    def filter(self, condition: Column | str) -> DataFrame:
        """The rows for which `condition` (a boolean Column, or a SQL expression string) is true; `where` is the same.

        >>> df.filter(df.age > 3).collect()
        [Row(age=5, name='Bob')]
        >>> df.where("name = 'Alice'").count()
        1
        """
        if isinstance(condition, str):
            from quiver.engine.sql.expressions import parse_expression

            cond = parse_expression(condition)
        elif isinstance(condition, Column):
            cond = condition.expr
        else:
            raise TypeError(f"filter() takes a Column or a SQL string, got {type(condition).__name__}")
        return self._with(L.Filter(self._plan, cond))

    where = filter

    def limit(self, num: int) -> DataFrame:
        """At most `num` rows.

        >>> df.limit(1).count()
        1
        """
        return self._built(builder.limit, self._plan, num)

    def offset(self, num: int) -> DataFrame:
        """Every row but the first `num`, in this DataFrame's order (PySpark 3.4's `offset`).

        >>> df.orderBy("age").offset(1).collect()
        [Row(age=5, name='Bob')]
        """
        return self._built(builder.offset, self._plan, num)

    def orderBy(self, *cols: Any, ascending: bool | list[bool] | None = None) -> DataFrame:
        """Rows sorted by `cols` (names, Columns such as `F.desc("age")`, or 1-based ordinals); `ascending` is a bool
        or one per column. Nulls sort first ascending and last descending, as in Spark. `sort` is the same.

        >>> df.orderBy("age", ascending=False).collect()
        [Row(age=5, name='Bob'), Row(age=2, name='Alice')]
        >>> df.sort(F.col("name").desc()).first().name
        'Bob'
        """
        items = _flatten(cols)
        if not items:
            raise AnalysisException("orderBy() needs at least one column")
        if ascending is None:
            flags = [True] * len(items)
        elif isinstance(ascending, (list, tuple)):
            if len(ascending) != len(items):
                raise AnalysisException(f"orderBy() got {len(ascending)} ascending flags for {len(items)} columns")
            flags = [bool(a) for a in ascending]
        else:
            flags = [bool(ascending)] * len(items)
        orders = []
        for c, asc in zip(items, flags):
            if _is_ordinal(c) and c < 0:
                # A negative ordinal sorts by that column descending (PySpark 4).
                orders.append(SortOrder(self._ordinal(-c, "orderBy"), False, None))
                continue
            if _is_ordinal(c) and c == 0:
                raise AnalysisException("orderBy() column ordinal 0 names no column: ordinals are 1-based (1 is the "
                                        "first column, -1 the first column descending)")
            e = self._ordinal(c, "orderBy") if _is_ordinal(c) else to_expr(c)
            if isinstance(e, SortOrder):
                orders.append(e)
            else:
                orders.append(SortOrder(e, asc, None))
        return self._built(builder.sort, self._plan, orders)

    sort = orderBy

    def sortWithinPartitions(self, *cols: Any, ascending: Any = None) -> DataFrame:
        """Each partition's rows sorted by `cols`, without a shuffle (so the whole is not sorted).

        >>> df.coalesce(1).sortWithinPartitions(F.desc("age")).collect()
        [Row(age=5, name='Bob'), Row(age=2, name='Alice')]
        """
        ordered = self.orderBy(*cols, ascending=ascending)._plan
        assert isinstance(ordered, L.Sort)
        return self._built(builder.sort, self._plan, ordered.orders, False)

    def repartition(self, numPartitions: Any = None, *cols: Any) -> DataFrame:
        """Shuffle into `numPartitions` partitions, by the hash of `cols` or round robin; with only columns, into
        `spark.sql.shuffle.partitions` partitions.

        >>> df.repartition(3, "name").select(F.spark_partition_id().alias("p")).distinct().count() <= 3
        True
        """
        if isinstance(numPartitions, (str, Column)):
            cols = (numPartitions, *cols)
            numPartitions = None
        n = _partition_count(numPartitions)
        keys = tuple(to_expr(c) for c in _flatten(cols))
        return self._with(L.Repartition(self._plan, n, keys, "hash" if keys else "roundrobin"))

    def repartitionByRange(self, numPartitions: Any, *cols: Any) -> DataFrame:
        """Shuffle into ranges of the sort order of `cols` (each partition a run of the order).

        >>> df.repartitionByRange(2, "age").orderBy("age").collect()
        [Row(age=2, name='Alice'), Row(age=5, name='Bob')]
        """
        if isinstance(numPartitions, (str, Column)):
            cols = (numPartitions, *cols)
            numPartitions = None
        if not cols:
            raise AnalysisException("repartitionByRange() needs at least one column")
        orders = self.orderBy(*cols)._plan
        assert isinstance(orders, L.Sort)
        return self._with(L.Repartition(self._plan, _partition_count(numPartitions), orders.orders, "range"))

    def coalesce(self, numPartitions: int) -> DataFrame:
        """Merge partitions down to `numPartitions` without a shuffle.

        >>> df.coalesce(1).select(F.spark_partition_id().alias("p")).distinct().collect()
        [Row(p=0)]
        """
        return self._with(L.Repartition(self._plan, _partition_count(numPartitions), (), "coalesce"))

    def distinct(self) -> DataFrame:
        """The distinct rows.

        >>> df.union(df).distinct().count()
        2
        """
        return self._built(builder.distinct, self._plan)

    def dropDuplicates(self, subset: list[str] | None = None) -> DataFrame:
        """One row per distinct value of the `subset` columns (all columns by default); `drop_duplicates` is the same.
        Which row of a duplicate group is kept is unspecified, as in Spark.

        >>> spark.createDataFrame([(1, "a"), (1, "b"), (2, "c")], ["k", "v"]).dropDuplicates(["k"]).count()
        2
        """
        if subset is None:
            return self.distinct()
        if isinstance(subset, str):
            subset = [subset]
        keys = [self._resolve_column(s) for s in subset]
        key_ids = {k.expr_id for k in keys if isinstance(k, AttributeRef)}
        aggs: list[Expr] = []
        for a in self._plan.output:
            if a.expr_id in key_ids:
                aggs.append(a)
            else:
                aggs.append(Alias(AggregateFunction("first", (a,)), a.name))
        return self._built(builder.aggregate, self._plan, keys, aggs)

    drop_duplicates = dropDuplicates

    def union(self, other: DataFrame) -> DataFrame:
        """Every row of both, matched by position (SQL's UNION ALL, duplicates kept); this DataFrame names the columns.
        `unionAll` is the same.

        >>> df.union(df).count()
        4
        """
        return self._built(builder.union, self._plan, other._plan)

    unionAll = union

    def unionByName(self, other: DataFrame, allowMissingColumns: bool = False) -> DataFrame:
        """Every row of both, matched by column name; with `allowMissingColumns`, a column one side lacks is null.

        >>> other = spark.createDataFrame([("Carol", 7)], ["name", "age"])
        >>> df.unionByName(other).orderBy("age").collect()
        [Row(age=2, name='Alice'), Row(age=5, name='Bob'), Row(age=7, name='Carol')]
        """
        return self._built(builder.union_by_name, self._plan, other._plan, allowMissingColumns)

    def intersect(self, other: DataFrame) -> DataFrame:
        """Distinct rows present in both (SQL's INTERSECT); nulls compare equal, as in set operations.

        >>> df.intersect(df.filter("age > 3")).collect()
        [Row(age=5, name='Bob')]
        """
        return self._built(builder.intersect, self._plan, other._plan)

    def subtract(self, other: DataFrame) -> DataFrame:
        """Distinct rows of this DataFrame not present in `other` (SQL's EXCEPT DISTINCT).

        >>> df.subtract(df.filter("age > 3")).collect()
        [Row(age=2, name='Alice')]
        """
        return self._built(builder.except_, self._plan, other._plan)

    def intersectAll(self, other: DataFrame) -> DataFrame:
        """Rows present in both, duplicates kept: a row found m and n times appears min(m, n) times.

        >>> df.union(df).intersectAll(df).count()
        2
        """
        return self._built(builder.intersect, self._plan, other._plan, True)

    def exceptAll(self, other: DataFrame) -> DataFrame:
        """Rows of this DataFrame not matched in `other`, duplicates kept: m and n copies leave max(m - n, 0).

        >>> df.union(df).exceptAll(df).count()
        2
        """
        return self._built(builder.except_, self._plan, other._plan, True)

    # ---------------------------------------------------------- grouping and joins

    def groupBy(self, *cols: Any) -> GroupedData:
        """Group by `cols` (names or Columns) for the aggregates of the returned `GroupedData`; `groupby` is the same.

        >>> df.groupBy("name").agg(F.max("age").alias("oldest")).orderBy("name").collect()
        [Row(name='Alice', oldest=2), Row(name='Bob', oldest=5)]
        """
        return GroupedData(self, self._grouping_keys(cols, "groupBy"))

    groupby = groupBy

    def _ordinal(self, n: int, method: str) -> Expr:
        """The column at 1-based position `n`, as PySpark 4's `groupBy(1)` and `orderBy(1)` read an int."""
        columns = self._plan.output
        if not 1 <= n <= len(columns):
            raise AnalysisException(f"{method}() column ordinal {n} is out of range: the DataFrame has {len(columns)} "
                                    f"column(s) ({', '.join(a.name for a in columns)}), numbered from 1")
        return self[n - 1].expr

    def _grouping_keys(self, cols: tuple, method: str) -> list[Expr]:
        return [self._ordinal(c, method) if _is_ordinal(c) else to_expr(c) for c in _flatten(cols)]

    def _grouped_by_sets(self, keys: list[Any], sets: list[tuple[int, ...]]) -> GroupedData:
        grouped = GroupedData(self, keys)
        grouped._grouping_sets = sets
        return grouped

    def rollup(self, *cols: Any) -> GroupedData:
        """Aggregates per (k0..kn), (k0..kn-1), ..., (k0) and over everything; `F.grouping()` tells which.

        >>> df.rollup("name").count().orderBy("name").collect()
        [Row(name=None, count=2), Row(name='Alice', count=1), Row(name='Bob', count=1)]
        """
        keys = self._grouping_keys(cols, "rollup")
        return self._grouped_by_sets(keys, rollup_sets(len(keys)))

    def cube(self, *cols: Any) -> GroupedData:
        """Aggregates per every subset of the columns; `F.grouping()` and `F.grouping_id()` tell which.

        >>> df.cube("name", "age").count().count()
        7
        """
        keys = self._grouping_keys(cols, "cube")
        return self._grouped_by_sets(keys, cube_sets(len(keys)))

    def groupingSets(self, groupingSets: Any, *cols: Any) -> GroupedData:  # noqa: N802,N803 — PySpark's names
        """Aggregates per each listed set of the grouping columns `cols` (PySpark 4's `groupingSets`).

        >>> df.groupingSets([["name"], []], "name").count().orderBy("name").collect()
        [Row(name=None, count=2), Row(name='Alice', count=1), Row(name='Bob', count=1)]
        """
        keys = self._grouping_keys(cols, "groupingSets")
        sets = []
        for group in groupingSets:
            members = self._grouping_keys(tuple(group) if isinstance(group, (list, tuple)) else (group,),
                                          "groupingSets")
            positions = []
            for m in members:
                if m not in keys:
                    raise AnalysisException(f"grouping set member {m.sql()} is not one of the grouping columns "
                                            f"{', '.join(k.sql() for k in keys)}")
                positions.append(keys.index(m))
            sets.append(tuple(positions))
        return self._grouped_by_sets(keys, sets)

    # ---------------------------------------------------------- samples and statistics (quiver/engine/api/sampling.py)

    def sample(self, withReplacement: Any = None, fraction: Any = None, seed: Any = None) -> DataFrame:  # noqa: N803
        """About `fraction` of the rows, chosen by `rand(seed)`; with replacement, rows may repeat. Called as
        `sample(fraction)`, `sample(fraction, seed)` or `sample(withReplacement, fraction, seed)`, as PySpark takes it.
        The rows chosen for a seed differ from Spark's, whose generator differs.

        >>> spark.range(1000).sample(0.1, seed=1).count() < 200
        True
        """
        return sample(self, withReplacement, fraction, seed)

    def randomSplit(self, weights: list[float], seed: int | None = None) -> list[DataFrame]:  # noqa: N802
        """Disjoint random parts of the rows in proportion to `weights`, which together hold every row.

        >>> parts = spark.range(100).randomSplit([0.5, 0.5], seed=7)
        >>> sum(p.count() for p in parts)
        100
        """
        return random_split(self, weights, seed)

    def sampleBy(self, col: Any, fractions: dict, seed: int | None = None) -> DataFrame:  # noqa: N802
        """A sample without replacement taking each stratum (value of `col`) with its own fraction (0 where absent).

        >>> spark.range(10).sampleBy(F.col("id") % 2, {0: 1.0}, seed=1).count()
        5
        """
        return sample_by(self, col, fractions, seed)

    @property
    def stat(self) -> Any:
        """Statistics of the columns: corr, cov, crosstab, freqItems, approxQuantile, sampleBy.

        >>> df.stat.corr("age", "age")
        1.0
        """
        return DataFrameStatFunctions(self)

    def corr(self, col1: str, col2: str, method: str | None = None) -> float:
        """The Pearson correlation of two numeric columns (`method` may only be "pearson").

        >>> spark.createDataFrame([(1, 2), (2, 4), (3, 7)], ["x", "y"]).corr("x", "y")
        0.9933992677987828
        """
        return self.stat.corr(col1, col2, method)

    def cov(self, col1: str, col2: str) -> float:
        """The sample covariance of two numeric columns.

        >>> spark.createDataFrame([(1, 2), (2, 4), (3, 6)], ["x", "y"]).cov("x", "y")
        2.0
        """
        return self.stat.cov(col1, col2)

    def crosstab(self, col1: str, col2: str) -> DataFrame:
        """A contingency table: one row per value of `col1`, one count column per value of `col2`.

        >>> df.crosstab("name", "age").orderBy("name_age").collect()
        [Row(name_age='Alice', 2=1, 5=0), Row(name_age='Bob', 2=0, 5=1)]
        """
        return self.stat.crosstab(col1, col2)

    def freqItems(self, cols: list[str], support: float | None = None) -> DataFrame:  # noqa: N802
        """Items of each of `cols` found in at least `support` (default 1%) of the rows. Quiver counts exactly, so the
        arrays hold only frequent items (Spark's sketch may add others).

        >>> df.freqItems(["age"], 0.5).collect()
        [Row(age_freqItems=[2, 5])]
        """
        return self.stat.freqItems(cols, support)

    def approxQuantile(self, col: Any, probabilities: list[float], relativeError: float) -> list:  # noqa: N802,N803
        """The quantiles at `probabilities` of a numeric column (or a list of them: a list per column). Quiver computes
        exact ranks, which are within any `relativeError`.

        >>> spark.range(101).approxQuantile("id", [0.0, 0.5, 1.0], 0.01)
        [0.0, 50.0, 100.0]
        """
        return self.stat.approxQuantile(col, probabilities, relativeError)

    def agg(self, *exprs: Any) -> DataFrame:
        """Aggregates over all rows, as `groupBy().agg(...)`.

        >>> df.agg(F.min("age"), F.max("age")).collect()
        [Row(min(age)=2, max(age)=5)]
        """
        return self.groupBy().agg(*exprs)

    def join(self, other: DataFrame, on: Any = None, how: str | None = None) -> DataFrame:
        """Join with `other` on a column name or a list of them (USING: each key once in the result), or on a Column
        condition or a list of them (ANDed); without `on`, a cross join. `how` is one of Spark's join types: inner
        (default), cross, outer/full/fullouter/full_outer, left/leftouter/left_outer, right/rightouter/right_outer,
        semi/leftsemi/left_semi, anti/leftanti/left_anti.

        >>> heights = spark.createDataFrame([("Alice", 165), ("Carol", 170)], ["name", "height"])
        >>> df.join(heights, "name").collect()
        [Row(name='Alice', age=2, height=165)]
        >>> df.join(heights, "name", "left").orderBy("name").collect()
        [Row(name='Alice', age=2, height=165), Row(name='Bob', age=5, height=None)]
        >>> df.join(heights, df.name == heights.name, "anti").collect()
        [Row(age=5, name='Bob')]
        """
        how = how or "inner"
        if on is None:
            return self._built(builder.join, self._plan, other._plan, how)
        if isinstance(on, str):
            on = [on]
        if isinstance(on, (list, tuple)) and on and all(isinstance(x, str) for x in on):
            return self._built(builder.using_join, self._plan, other._plan, list(on), how)
        conditions = [on] if isinstance(on, Column) else list(on)
        return self._built(builder.join, self._plan, other._plan, how, conjoin([c.expr for c in conditions]))

    def crossJoin(self, other: DataFrame) -> DataFrame:
        """Every pair of a row of this DataFrame and a row of `other` (the Cartesian product).

        >>> df.crossJoin(df.select(F.col("name").alias("other"))).count()
        4
        """
        return self._built(builder.join, self._plan, other._plan, "cross")

    # ---------------------------------------------------------- missing values

    @property
    def na(self) -> DataFrameNaFunctions:
        """The missing-value functions (`df.na.fill`, `df.na.drop`, `df.na.replace`).

        >>> spark.createDataFrame([(None,), (1,)], "x int").na.fill(0).collect()
        [Row(x=0), Row(x=1)]
        """
        return DataFrameNaFunctions(self)

    def fillna(self, value: Any, subset: Any = None) -> DataFrame:
        """Replace nulls (and NaN in floating-point columns) with `value` in the columns of a matching type: a number
        fills numeric columns, a string string columns, a bool boolean ones; a dict maps column names to values.
        `subset` limits the columns.

        >>> nulls = spark.createDataFrame([(None, None), (1, "b")], "x int, s string")
        >>> nulls.fillna(0).collect()
        [Row(x=0, s=None), Row(x=1, s='b')]
        >>> nulls.fillna({"s": "?"}).collect()
        [Row(x=None, s='?'), Row(x=1, s='b')]
        """
        if isinstance(value, dict):
            mapping = {k.lower(): v for k, v in value.items()}
            for k in value:
                self._resolve_column(k)
        else:
            if not isinstance(value, (int, float, str, bool)):
                raise TypeError(f"fillna() value must be int, float, str, bool or dict, got {type(value).__name__}")
            names = [subset] if isinstance(subset, str) else subset
            targets = [a.name.lower() for a in self._plan.output] if names is None else [n.lower() for n in names]
            mapping = dict.fromkeys(targets, value)
        projections: list[Expr] = []
        for a in self._plan.output:
            v = mapping.get(a.name.lower(), _MISSING)
            if v is _MISSING or v is None or not _fill_applies(v, a.dtype):
                projections.append(a)
                continue
            fill = Cast(Literal.of(v), a.dtype) if Literal.of(v).dtype != a.dtype else Literal.of(v)
            projections.append(Alias(CaseWhen((_null_or_nan(a),), (fill,), a), a.name))
        return self._with(L.Project(self._plan, tuple(projections)))

    def dropna(self, how: str = "any", thresh: int | None = None, subset: Any = None) -> DataFrame:
        """The rows without nulls (or NaN): with how="any" (the default) none may be missing, with "all" at least one
        must be present; `thresh` is the fewest non-null values a kept row has, overriding `how`. `subset` limits
        the columns.

        >>> nulls = spark.createDataFrame([(None, None), (1, None), (1, "b")], "x int, s string")
        >>> nulls.dropna().count(), nulls.dropna(how="all").count(), nulls.dropna(subset=["x"]).count()
        (1, 2, 2)
        """
        if how not in ("any", "all"):
            raise ConfigurationError(f"dropna(how={how!r}) must be 'any' or 'all'")
        names = [subset] if isinstance(subset, str) else subset
        cols = self._plan.output if names is None else [self._resolve_column(n) for n in names]
        if thresh is None:
            thresh = len(cols) if how == "any" else 1
        count: Expr = Literal(0, T.IntegerType())
        for c in cols:
            count = BinaryArithmetic("+", count, CaseWhen((_null_or_nan(c),), (Literal(0, T.IntegerType()),),
                                                         Literal(1, T.IntegerType())))
        return self._with(L.Filter(self._plan, Comparison(">=", count, Literal(int(thresh), T.IntegerType()))))

    def replace(self, to_replace: Any, value: Any = _MISSING, subset: Any = None) -> DataFrame:
        """Replace values in the columns of a matching type: `to_replace` a scalar (with `value`), a list matched by
        position with a list of values (or one value), or a dict of old -> new; `subset` limits the columns.

        >>> df.replace("Alice", "Ann").collect()
        [Row(age=2, name='Ann'), Row(age=5, name='Bob')]
        >>> df.replace({2: 20}, subset=["age"]).collect()
        [Row(age=20, name='Alice'), Row(age=5, name='Bob')]
        """
        if isinstance(to_replace, dict):
            pairs = list(to_replace.items())
        else:
            if value is _MISSING:
                raise AnalysisException("replace() needs `value` unless `to_replace` is a dict")
            olds = list(to_replace) if isinstance(to_replace, (list, tuple)) else [to_replace]
            news = list(value) if isinstance(value, (list, tuple)) else [value] * len(olds)
            if len(olds) != len(news):
                raise AnalysisException(f"replace() got {len(olds)} values to replace but {len(news)} replacements")
            pairs = list(zip(olds, news))
        names = [subset] if isinstance(subset, str) else subset
        targets = None if names is None else {n.lower() for n in names}
        projections: list[Expr] = []
        for a in self._plan.output:
            usable = [(o, n) for o, n in pairs if _fill_applies(o, a.dtype)
                      and (n is None or _fill_applies(n, a.dtype))]
            if (targets is not None and a.name.lower() not in targets) or not usable:
                projections.append(a)
                continue
            conds = tuple(Comparison("=", a, Literal.of(o)) for o, _ in usable)
            vals = tuple(Cast(Literal.of(n), a.dtype) for _, n in usable)
            projections.append(Alias(CaseWhen(conds, vals, a), a.name))
        return self._with(L.Project(self._plan, tuple(projections)))

    def describe(self, *cols: Any) -> DataFrame:
        """count, mean, stddev, min and max of numeric and string columns (or of `cols`), as strings, as Spark's
        describe.

        >>> df.describe("age").show()
        +-------+------------------+
        |summary|               age|
        +-------+------------------+
        |  count|                 2|
        |   mean|               3.5|
        | stddev|2.1213203435596424|
        |    min|                 2|
        |    max|                 5|
        +-------+------------------+
        """
        return self._summary(["count", "mean", "stddev", "min", "max"], _flatten(cols))

    def summary(self, *statistics: str) -> DataFrame:
        """The statistics named in `statistics` (default count, mean, stddev, min, max) of the numeric and string
        columns. Quiver supports only those five: Spark's percentiles ("25%", ...) and count_distinct are refused.

        >>> df.summary("count", "max").show()
        +-------+---+----+
        |summary|age|name|
        +-------+---+----+
        |  count|  2|   2|
        |    max|  5| Bob|
        +-------+---+----+
        """
        stats = list(statistics) or ["count", "mean", "stddev", "min", "max"]
        unsupported = [s for s in stats if s not in ("count", "mean", "stddev", "min", "max")]
        if unsupported:
            raise AnalysisException(
                f"summary() statistic '{unsupported[0]}' is not supported; valid: count, mean, stddev, min, max"
            )
        return self._summary(stats, [])

    def _summary(self, stats: list[str], cols: list) -> DataFrame:
        attrs = [self._resolve_column(c) if isinstance(c, str) else c for c in cols] or [
            a for a in self._plan.output if isinstance(a.dtype, (T.NumericType, T.StringType))]
        aggs: list[Expr] = []
        for i, a in enumerate(attrs):
            numeric = isinstance(a.dtype, T.NumericType)
            aggs += [Alias(AggregateFunction("count", (a,)), f"count{i}"),
                     Alias(AggregateFunction("avg", (a,)) if numeric else Literal(None, T.DoubleType()), f"mean{i}"),
                     Alias(AggregateFunction("stddev", (a,)) if numeric else Literal(None, T.DoubleType()),
                           f"stddev{i}"),
                     Alias(AggregateFunction("min", (a,)), f"min{i}"),
                     Alias(AggregateFunction("max", (a,)), f"max{i}")]
        row = self._with(L.Aggregate(self._plan, (), tuple(aggs))).collect()[0] if attrs else Row._make([], ())
        from quiver.engine.ui.display import format_value

        rows = []
        for stat in stats:
            values = []
            for i, a in enumerate(attrs):
                v = row[f"{stat}{i}"]
                dtype = T.LongType() if stat == "count" else T.DoubleType() if stat in ("mean", "stddev") else a.dtype
                values.append(None if v is None else format_value(v, dtype))
            rows.append((stat, *values))
        schema = T.StructType([T.StructField("summary", T.StringType())] +
                              [T.StructField(a.name if isinstance(a, AttributeRef) else a.sql(), T.StringType())
                               for a in attrs])
        return self._session.createDataFrame(rows, schema)

    # ---------------------------------------------------------- caching

    def cache(self) -> DataFrame:
        """Keep this DataFrame's result at MEMORY_AND_DISK once an action first computes it; later queries over it
        read the kept blocks. Returns this DataFrame.

        >>> cached = df.cache(); cached.is_cached, cached.storageLevel
        (True, StorageLevel.MEMORY_AND_DISK)
        >>> _ = cached.unpersist()
        """
        return self.persist(StorageLevel.MEMORY_AND_DISK)

    def persist(self, storageLevel: StorageLevel = StorageLevel.MEMORY_AND_DISK) -> DataFrame:
        """`cache` at the given storage level (default MEMORY_AND_DISK).

        >>> from quiver import StorageLevel
        >>> df.persist(StorageLevel.MEMORY_ONLY).storageLevel
        StorageLevel.MEMORY_ONLY
        >>> _ = df.unpersist()
        """
        self._session._context.cache.register(self._plan, storageLevel.name)
        return self

    def unpersist(self, blocking: bool = False) -> DataFrame:
        """Stop caching this DataFrame and drop its kept blocks; `blocking` is accepted and ignored (the blocks go at
        once).

        >>> df.cache().unpersist().is_cached
        False
        """
        self._session._context.cache.unregister(self._plan)
        return self

    @property
    def is_cached(self) -> bool:
        """Whether this DataFrame is marked for caching.

        >>> df.is_cached
        False
        """
        return self._session._context.cache.is_cached(self._plan)

    @property
    def storageLevel(self) -> StorageLevel:
        """The storage level this DataFrame is cached at (`StorageLevel.NONE` when not cached).

        >>> df.storageLevel
        StorageLevel.NONE
        """
        level = self._session._context.cache.storage_level(self._plan)
        return StorageLevel(level) if level else StorageLevel.NONE

    # ---------------------------------------------------------- views

    def createOrReplaceTempView(self, name: str) -> None:
        """Name this DataFrame `name` for `spark.sql` and `spark.table` in this session, replacing a view of that name.

        >>> df.createOrReplaceTempView("people"); spark.sql("SELECT count(*) AS n FROM people").collect()
        [Row(n=2)]
        """
        self._session._register_view(name, self._plan, replace=True)

    def createTempView(self, name: str) -> None:
        """`createOrReplaceTempView`, but an error if a temp view `name` exists.

        >>> df.createTempView("people_once"); spark.catalog.dropTempView("people_once")
        True
        """
        self._session._register_view(name, self._plan, replace=False)

    def createOrReplaceGlobalTempView(self, name: str) -> None:
        """As `createOrReplaceTempView`: Quiver has no `global_temp` database, so a global temp view is a temp
        view of the session, named without the `global_temp.` prefix (unlike Spark).

        >>> df.createOrReplaceGlobalTempView("people_g"); spark.table("people_g").count()
        2
        """
        self.createOrReplaceTempView(name)

    # ---------------------------------------------------------- actions

    @action("toArrow")
    def toArrow(self) -> pa.Table:
        """The result as a `pyarrow.Table` (columns and types as `schema`), as PySpark 4's `toArrow`.

        >>> df.toArrow().to_pydict()
        {'age': [2, 5], 'name': ['Alice', 'Bob']}
        """
        return self._execution().to_table()

    @action("collect")
    def collect(self) -> list[Row]:
        """Every row of the result as a list of `Row`; timestamps as naive datetimes in the machine's zone, as
        PySpark gives them.

        >>> df.collect()
        [Row(age=2, name='Alice'), Row(age=5, name='Bob')]
        """
        return table_to_rows(self._local_table(zone=self._session.conf.python_time_zone()))

    def _local_table(self, table: pa.Table | None = None, zone: str | None = None) -> pa.Table:
        """The result (or `table`, part of it) with its instants as wall-clock times in `zone`: the session time
        zone for pandas and `show()`, the machine's for Python's datetimes, as PySpark gives them; `toArrow()`
        keeps the instants (in UTC)."""
        from quiver.engine.core.time_zones import table_in_zone

        return table_in_zone(self.toArrow() if table is None else table, self.schema,
                             zone or self._session.conf.session_time_zone())

    # ---------------------------------------------------------- Arrow interchange

    def __arrow_c_schema__(self) -> Any:
        """The result's Arrow schema, as `toArrow()` gives it, through the Arrow PyCapsule interface, without running
        the query.

        >>> import pyarrow as pa
        >>> pa.schema(df).names
        ['age', 'name']
        """
        return pa.schema([pa.field(a.name, a.dtype.to_arrow()) for a in self._plan.output]).__arrow_c_schema__()

    @action("__arrow_c_stream__")
    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The result as an Arrow C stream (the Arrow PyCapsule interface): any Arrow consumer reads a
        DataFrame without a copy, e.g. `pyarrow.table(df)`, `polars.DataFrame(df)`, or DuckDB's
        `SELECT * FROM df` over a Python variable `df`. Runs the query, as `toArrow()` does.

        >>> import pyarrow as pa
        >>> pa.table(spark.range(2)).column("id").to_pylist()
        [0, 1]
        """
        return self.toArrow().__arrow_c_stream__(requested_schema)

    @action("toPolars")
    def toPolars(self) -> Any:
        """The result as a Polars DataFrame (the `polars` package), from its Arrow result without a copy where
        Polars' layouts allow. Polars needs distinct column names.

        >>> spark.range(3).toPolars().height
        3
        """
        try:
            import polars as pl
        except ImportError as e:
            raise ImportError("toPolars() needs the polars package: pip install polars") from e
        names = self.columns
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise AnalysisException(f"toPolars() needs distinct column names, and {', '.join(repeated)} "
                                    f"appear more than once in {names}; rename them first (withColumnRenamed, "
                                    "alias, or toDF with new names)")
        return pl.from_arrow(self.toArrow())

    @action("toLocalIterator")
    def toLocalIterator(self, prefetchPartitions: bool = False) -> Iterable[Row]:
        """An iterator over the result's rows. Quiver computes the whole result first (Spark fetches a partition at a
        time); `prefetchPartitions` is accepted and ignored.

        >>> [r.name for r in df.toLocalIterator()]
        ['Alice', 'Bob']
        """
        return iter(self.collect())

    @action("toPandas")
    def toPandas(self) -> pd.DataFrame:
        """The result as a `pandas.DataFrame` (dates as `datetime.date` objects, timestamps
        in the session time zone, as PySpark gives them).

        >>> df.toPandas()
           age   name
        0    2  Alice
        1    5    Bob
        """
        from quiver.engine.core.imports import optional_module

        optional_module("pandas", "pandas", "toPandas()")
        table = self._local_table()
        names = table.column_names
        frame = table.rename_columns([f"c{i}" for i in range(len(names))]).to_pandas(date_as_object=True)
        frame.columns = names
        return frame

    @action("count")
    def count(self) -> int:
        """The number of rows.

        >>> df.count()
        2
        """
        counted = self._with(L.Aggregate(self._plan, (), (Alias(AggregateFunction("count", ()), "count"),)))
        return int(counted.toArrow().column(0)[0].as_py())

    @action("take")
    def take(self, num: int) -> list[Row]:
        """The first `num` rows as a list of `Row`.

        >>> df.take(1)
        [Row(age=2, name='Alice')]
        """
        return self.limit(num).collect()

    @overload
    def head(self, n: None = None) -> Row | None: ...

    @overload
    def head(self, n: int) -> list[Row]: ...

    @action("head")
    def head(self, n: int | None = None) -> Row | None | list[Row]:
        """The first row (None when there is none), or with `n` a list of the first `n` rows.

        >>> df.head()
        Row(age=2, name='Alice')
        >>> df.head(2)
        [Row(age=2, name='Alice'), Row(age=5, name='Bob')]
        """
        if n is None:
            rows = self.take(1)
            return rows[0] if rows else None
        return self.take(n)

    @action("first")
    def first(self) -> Row | None:
        """The first row, or None when there is none.

        >>> df.first()
        Row(age=2, name='Alice')
        """
        return self.head()

    @action("tail")
    def tail(self, num: int) -> list[Row]:
        """The last `num` rows as a list of `Row`. Quiver collects the whole result to take them.

        >>> df.tail(1)
        [Row(age=5, name='Bob')]
        """
        rows = self.collect()
        return rows[-num:] if num else []

    @action("isEmpty")
    def isEmpty(self) -> bool:
        """Whether the DataFrame has no rows (runs a job that stops at the first row).

        >>> df.isEmpty(), df.filter("age > 100").isEmpty()
        (False, True)
        """
        return len(self.take(1)) == 0

    @action("show")
    def show(self, n: int = 20, truncate: bool | int = True, vertical: bool = False) -> None:
        """Print the first `n` rows as a table; `truncate` cuts cells to 20 characters (or to the number given),
        `vertical` prints one block per row. Formats values as Spark does.

        >>> df.show()
        +---+-----+
        |age| name|
        +---+-----+
        |  2|Alice|
        |  5|  Bob|
        +---+-----+
        >>> df.show(1, vertical=True)
        -RECORD 0-----
         age  | 2
         name | Alice
        only showing top 1 row
        """

        print(self._show_string(n, truncate, vertical))

    def _show_string(self, n: int = 20, truncate: bool | int = True, vertical: bool = False) -> str:
        table = self._local_table(self.limit(n + 1).toArrow() if n >= 0 else None)
        from quiver.engine.ui.display import show_string

        return show_string(table, self.schema, n, truncate, vertical)

    def explain(self, extended: bool | str | None = None, mode: str | None = None, *,
                path: str | None = None) -> None:
        """Print the plans (`mode` simple, extended, codegen, cost or formatted; `extended=True` is extended),
        or with mode="graph" write the stage DAG, each operator coloured by its device, as a PNG (to `path`, or
        a new numbered file in `quiver.ui.graphDir`) and show it inline in a notebook. After an action on this
        DataFrame, "cost" also says what each stage and operator of that run spilled to disk. Unlike Spark's,
        the simple mode (the default) prints the logical plans, the stages, the devices and the native
        fragments besides the physical plan.

        >>> df.filter(df.age > 3).explain()
        == Analyzed Logical Plan ==
        ...
        == Physical Plan ==
        Filter (age > 3)
        +- LocalTableScan [age#..., name#...] 2 rows
        ...
        """
        from quiver.engine.execution.query_execution import QueryExecution, explain_mode

        chosen = explain_mode(extended, mode)
        if path is not None and chosen != "graph":
            raise ConfigurationError(f"explain(path=...) is for mode='graph', not mode={chosen!r}")
        qe = QueryExecution(self._session._context, self._plan, describe_only=True)
        if chosen == "graph":
            from quiver.engine.ui.plan_graph import explain_graph

            explain_graph(qe, path)
            return
        last = self._last_execution
        print(qe.explain_string(chosen, last_run=last.last_job if last is not None else None))

    def transform(self, func: Any, *args: Any, **kwargs: Any) -> DataFrame:
        """`func(self, *args, **kwargs)`: chain functions that take and return a DataFrame.

        >>> def adults(frame, age): return frame.filter(frame.age >= age)
        >>> df.transform(adults, 3).collect()
        [Row(age=5, name='Bob')]
        """
        return func(self, *args, **kwargs)

    @property
    def write(self) -> Any:
        """The `DataFrameWriter` that saves this DataFrame (`df.write.mode("overwrite").parquet(path)`).

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "people")
        >>> df.write.mode("overwrite").parquet(path)
        >>> spark.read.parquet(path).count()
        2
        """
        return DataFrameWriter(self)

    def hint(self, name: str, *parameters: Any) -> DataFrame:
        """`hint("broadcast")` (as `F.broadcast(df)`) makes a join broadcast this side; Spark's other join hints
        (merge, shuffle_hash, ...) are accepted and left to the planner. Quiver's own `hint("device", kind)` pins
        the operator computing this DataFrame to that kind of device ("cpu", "gpu" or "npu").

        >>> df.join(df.hint("broadcast"), "name").count()
        2
        """
        if str(name).lower() in ("broadcast", "broadcastjoin", "mapjoin"):
            return self._with(L.BroadcastHint(self._plan))
        if str(name).lower() != "device":
            return self
        kinds = ("cpu", "gpu", "npu")
        if len(parameters) != 1 or str(parameters[0]).lower() not in kinds:
            raise ConfigurationError(
                f"hint('device', ...) takes one device kind, one of {', '.join(kinds)}; got {parameters!r}")
        return self._with(L.DeviceHint(self._plan, str(parameters[0]).lower()))

    def mapInArrow(self, func: Any, schema: T.StructType | str, barrier: bool = False,
                   profile: Any = None) -> DataFrame:
        """`func` turns each partition's iterator of `pyarrow.RecordBatch` into an iterator of batches with the
        columns of `schema` (a StructType or DDL string). `barrier=True` is refused; `profile`, a resource profile
        asking tasks for a "gpu" or "npu", pins the operator to that kind of device.

        >>> import pyarrow.compute as pc
        >>> def double(batches):
        ...     for b in batches:
        ...         yield b.set_column(0, "age", pc.multiply(b.column(0), 2))
        >>> df.mapInArrow(double, "age long, name string").collect()
        [Row(age=4, name='Alice'), Row(age=10, name='Bob')]
        """
        return self._with(map_in_batches(self._plan, func, schema, "arrow", profile, barrier))

    def mapInPandas(self, func: Any, schema: T.StructType | str, barrier: bool = False,
                    profile: Any = None) -> DataFrame:
        """As `mapInArrow`, with each batch a `pandas.DataFrame`.

        >>> def older(frames):
        ...     for pdf in frames:
        ...         yield pdf.assign(age=pdf.age + 1)
        >>> df.mapInPandas(older, df.schema).collect()
        [Row(age=3, name='Alice'), Row(age=6, name='Bob')]
        """
        return self._with(map_in_batches(self._plan, func, schema, "pandas", profile, barrier))

    @action("show")
    def _repr_html_(self) -> str:
        """The first rows as an HTML table with each column's type (Jupyter shows this for a DataFrame);
        `spark.sql.repl.eagerEval.maxNumRows` and `.truncate` set how many rows and characters per cell."""
        conf = self._session.conf
        n = int(conf.get("quiver.sql.repl.eagerEval.maxNumRows"))
        truncate = int(conf.get("quiver.sql.repl.eagerEval.truncate"))
        from quiver.engine.ui.display import html_table

        return html_table(self._local_table(self.limit(n + 1).toArrow()), self.schema, n, truncate)


def _partition_count(n: Any) -> int | None:
    if n is None:
        return None
    if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
        raise ConfigurationError(f"the number of partitions must be a positive integer, got {n!r}")
    return n


def _select_expr(c: Any) -> Expr:
    if isinstance(c, str):
        return UnresolvedStar(None) if c == "*" else UnresolvedColumn.parse(c)
    if isinstance(c, Column):
        return c.expr
    raise TypeError(f"select() takes column names or Columns, got {type(c).__name__}: {c!r}")


def _fill_applies(value: Any, dtype: T.DataType) -> bool:
    """fillna fills numbers into numeric columns, strings into string columns, bools into booleans."""
    if isinstance(value, bool):
        return isinstance(dtype, T.BooleanType)
    if isinstance(value, (int, float)):
        return isinstance(dtype, T.NumericType)
    if isinstance(value, str):
        return isinstance(dtype, T.StringType)
    return False


def _null_or_nan(e: Expr) -> Expr:
    """Spark's na functions treat NaN like null in floating-point columns."""
    if isinstance(e.dtype, (T.DoubleType, T.FloatType)):
        return Or(IsNull(e), Not(Comparison("=", e, e)))
    return IsNull(e)


class DataFrameNaFunctions:
    """`df.na`: fill, drop.

    >>> spark.createDataFrame([(1,), (None,)], "v int").na.fill(0).collect()
    [Row(v=1), Row(v=0)]
    """

    def __init__(self, df: DataFrame):
        self._df = df

    def fill(self, value: Any, subset: Any = None) -> DataFrame:
        """`df.fillna(value, subset)`.

        >>> spark.createDataFrame([(None,), ("x",)], "s string").na.fill("-").collect()
        [Row(s='-'), Row(s='x')]
        """
        return self._df.fillna(value, subset)

    def drop(self, how: str = "any", thresh: int | None = None, subset: Any = None) -> DataFrame:
        """`df.dropna(how, thresh, subset)`.

        >>> spark.createDataFrame([(None,), ("x",)], "s string").na.drop().collect()
        [Row(s='x')]
        """
        return self._df.dropna(how, thresh, subset)

    def replace(self, to_replace: Any, value: Any = _MISSING, subset: Any = None) -> DataFrame:
        """`df.replace(to_replace, value, subset)`.

        >>> df.na.replace("Bob", "Rob").collect()
        [Row(age=2, name='Alice'), Row(age=5, name='Rob')]
        """
        return self._df.replace(to_replace, value, subset)


def table_to_rows(table: pa.Table) -> list[Row]:
    """Rows of an Arrow table; structs become Rows, maps become dicts, as PySpark returns them."""
    names = table.column_names
    columns = [_py_values(table.column(i)) for i in range(table.num_columns)]
    return [Row._make(names, values) for values in zip(*columns)] if columns else [Row._make([], ())
                                                                                   for _ in range(table.num_rows)]


def _py_values(col: pa.ChunkedArray) -> list:
    t = col.type
    values = col.to_pylist()
    if _needs_conversion(t):
        return [_convert(v, t) for v in values]
    return values


def _needs_conversion(t: pa.DataType) -> bool:
    return pa.types.is_struct(t) or pa.types.is_map(t) or (
        (pa.types.is_list(t) or pa.types.is_large_list(t)) and _needs_conversion(t.value_type))


def _convert(v: Any, t: pa.DataType) -> Any:
    if v is None:
        return None
    if pa.types.is_struct(t):
        return Row._make([f.name for f in t], [_convert(v[f.name], f.type) for f in t])
    if pa.types.is_map(t):
        return {k: _convert(x, t.item_type) for k, x in v}
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return [_convert(x, t.value_type) for x in v]
    return v


__all__ = ["DataFrame", "StorageLevel", "table_to_rows"]
