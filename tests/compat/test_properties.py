"""Property tests: filter, groupBy-aggregate and joins on random small data with nulls, Quiver vs DuckDB.

DuckDB runs the same query in SQL on the same Arrow data. Floats are multiples of 1/4 so sums
are exact whatever the summation order.
"""
from __future__ import annotations

import os

import duckdb
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .harness import compare_rows, normalize

# Quiver answers in milliseconds; validating against PySpark-as-Quiver takes ~0.3 s an example
MAX_EXAMPLES = int(os.environ.get("QUIVER_COMPAT_MAX_EXAMPLES",
                                  "10" if os.environ.get("QUIVER_COMPAT_ENGINE") == "pyspark" else "100"))
SETTINGS = settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

keys = st.none() | st.sampled_from(["a", "b", "c", "", "ä"])
ints = st.none() | st.integers(min_value=-50, max_value=50)
floats = st.none() | st.integers(min_value=-400, max_value=400).map(lambda v: v / 4)

left_rows = st.lists(st.tuples(keys, ints, floats, ints), max_size=20)
right_rows = st.lists(st.tuples(keys, ints, floats), max_size=12)

LEFT_SCHEMA = pa.schema([("k", pa.string()), ("g", pa.int64()), ("x", pa.float64()), ("y", pa.int64())])
RIGHT_SCHEMA = pa.schema([("k", pa.string()), ("g", pa.int64()), ("z", pa.float64())])


def _table(rows, schema: pa.Schema) -> pa.Table:
    columns = list(zip(*rows)) if rows else [[] for _ in schema]
    return pa.table([pa.array(list(c), f.type) for c, f in zip(columns, schema)], schema=schema)


def _duck(sql: str, **tables: pa.Table) -> list[tuple]:
    con = duckdb.connect()
    try:
        for name, table in tables.items():
            con.register(name, table)
        return [tuple(normalize(v) for v in row) for row in con.execute(sql).fetchall()]
    finally:
        con.close()


def _values(df) -> list[tuple]:
    return [tuple(normalize(v) for v in tuple(row)) for row in df.collect()]


def _check(expected: list[tuple], actual: list[tuple], what: str) -> None:
    diff = compare_rows([list(r) for r in expected], [list(r) for r in actual], ordered=False)
    assert diff is None, f"{what}: DuckDB vs Quiver\n{diff}"


@SETTINGS
@given(rows=left_rows, threshold=st.integers(min_value=-60, max_value=60))
def test_filter_matches_duckdb(quiver_api, rows, threshold):
    spark, F, T, Window = quiver_api
    table = _table(rows, LEFT_SCHEMA)
    df = spark.createDataFrame(table)
    got = _values(df.filter(((F.col("x") > threshold / 2) & (F.col("g") != 0)) | F.col("k").isNull())
                  .select("k", "g", "x", (F.col("y") + F.col("g")).alias("s")))
    want = _duck(f"SELECT k, g, x, y + g AS s FROM t WHERE (x > {threshold / 2} AND g <> 0) OR k IS NULL", t=table)
    _check(want, got, "filter")


@SETTINGS
@given(rows=left_rows, key=st.sampled_from(["k", "g"]))
def test_group_by_aggregates_match_duckdb(quiver_api, rows, key):
    spark, F, T, Window = quiver_api
    table = _table(rows, LEFT_SCHEMA)
    df = spark.createDataFrame(table)
    got = _values(df.groupBy(key).agg(
        F.sum("y"), F.count("y"), F.count("*"), F.min("x"), F.max("x"), F.avg("x"), F.sum("x"), F.max("k")))
    want = _duck(f"SELECT {key}, SUM(y), COUNT(y), COUNT(*), MIN(x), MAX(x), AVG(x), SUM(x), MAX(k) "
                 f"FROM t GROUP BY {key}", t=table)
    _check(want, got, f"groupBy({key})")


@SETTINGS
@given(rows=left_rows)
def test_global_aggregates_match_duckdb(quiver_api, rows):
    spark, F, T, Window = quiver_api
    table = _table(rows, LEFT_SCHEMA)
    got = _values(spark.createDataFrame(table).agg(
        F.sum("g"), F.count("x"), F.count("*"), F.min("k"), F.max("y"), F.avg("y")))
    want = _duck("SELECT SUM(g), COUNT(x), COUNT(*), MIN(k), MAX(y), AVG(y) FROM t", t=table)
    _check(want, got, "global agg")


@SETTINGS
@given(left=left_rows, right=right_rows, how=st.sampled_from(["inner", "left", "full"]),
       key=st.sampled_from(["k", "g"]))
def test_joins_match_duckdb(quiver_api, left, right, how, key):
    spark, F, T, Window = quiver_api
    lt, rt = _table(left, LEFT_SCHEMA), _table(right, RIGHT_SCHEMA)
    a, b = spark.createDataFrame(lt), spark.createDataFrame(rt)
    got = _values(a.join(b, a[key] == b[key], how).select(
        a[key].alias("lk"), b[key].alias("rk"), a["x"], b["z"], a["y"]))
    sql_how = {"inner": "INNER", "left": "LEFT", "full": "FULL OUTER"}[how]
    want = _duck(f"SELECT a.{key} AS lk, b.{key} AS rk, a.x, b.z, a.y FROM a {sql_how} JOIN b ON a.{key} = b.{key}",
                 a=lt, b=rt)
    _check(want, got, f"{how} join on {key}")


@SETTINGS
@given(left=left_rows, right=right_rows)
def test_join_then_aggregate_matches_duckdb(quiver_api, left, right):
    spark, F, T, Window = quiver_api
    lt, rt = _table(left, LEFT_SCHEMA), _table(right, RIGHT_SCHEMA)
    a, b = spark.createDataFrame(lt), spark.createDataFrame(rt)
    got = _values(a.join(b, "k", "left").groupBy("k").agg(F.count("*").alias("n"), F.sum("z").alias("sz")))
    want = _duck("SELECT a.k, COUNT(*) AS n, SUM(b.z) AS sz FROM a LEFT JOIN b ON a.k = b.k GROUP BY a.k",
                 a=lt, b=rt)
    _check(want, got, "left join + groupBy")


@SETTINGS
@given(rows=left_rows, n=st.integers(min_value=0, max_value=8))
def test_order_by_limit_matches_duckdb(quiver_api, rows, n):
    spark, F, T, Window = quiver_api
    table = _table(rows, LEFT_SCHEMA)
    df = spark.createDataFrame(table)
    got = _values(df.orderBy(F.col("x").asc_nulls_first(), F.col("k").desc_nulls_last(), "g", F.desc("y")).limit(n))
    want = _duck(f"SELECT * FROM t ORDER BY x ASC NULLS FIRST, k DESC NULLS LAST, g ASC NULLS FIRST, "
                 f"y DESC NULLS LAST LIMIT {n}", t=table)
    diff = compare_rows([list(r) for r in want], [list(r) for r in got], ordered=True)
    assert diff is None, f"orderBy+limit: DuckDB vs Quiver\n{diff}"


@SETTINGS
@given(rows=left_rows)
def test_distinct_and_count_distinct_match_duckdb(quiver_api, rows):
    spark, F, T, Window = quiver_api
    table = _table(rows, LEFT_SCHEMA)
    df = spark.createDataFrame(table)
    _check(_duck("SELECT DISTINCT k, g FROM t", t=table), _values(df.select("k", "g").distinct()), "distinct")
    _check(_duck("SELECT k, COUNT(DISTINCT g) FROM t GROUP BY k", t=table),
           _values(df.groupBy("k").agg(F.countDistinct("g"))), "countDistinct")


@SETTINGS
@given(rows=left_rows)
def test_scalar_expressions_match_duckdb(quiver_api, rows):
    spark, F, T, Window = quiver_api
    table = _table(rows, LEFT_SCHEMA)
    g, x, y, k = F.col("g"), F.col("x"), F.col("y"), F.col("k")
    got = _values(spark.createDataFrame(table).select(
        F.upper(k), F.lower(k), F.length(k), F.concat(k, F.lit("-")), g + y, g - y, g * y, x * 2, F.abs(g),
        g % 7, y / 4, x > g, F.coalesce(g, y), F.when(g > 0, "pos").when(g < 0, "neg").otherwise("zero_or_null"),
        g.isNull() | (x <= 0), g.between(-10, 10), k.isin("a", "b")))
    want = _duck(
        "SELECT UPPER(k), LOWER(k), LENGTH(k), k || '-', g + y, g - y, g * y, x * 2, ABS(g), g % 7, y / 4, x > g, "
        "COALESCE(g, y), CASE WHEN g > 0 THEN 'pos' WHEN g < 0 THEN 'neg' ELSE 'zero_or_null' END, "
        "g IS NULL OR x <= 0, g BETWEEN -10 AND 10, k IN ('a', 'b') FROM t", t=table)
    _check(want, got, "scalar expressions")
