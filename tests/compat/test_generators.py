"""Generators (explode, posexplode, inline and their _outer forms) against real PySpark: in
select with other columns, in withColumn, in selectExpr, and in SQL as a select item and as
LATERAL VIEW [OUTER]; over arrays, maps, null and empty collections, and nested values."""
from __future__ import annotations

from .harness import assert_both_raise, assert_same

NON_ANSI = {"spark.sql.ansi.enabled": False}

SCHEMA = "id int, xs array<int>, m map<string,int>, rows array<struct<u:int,w:string>>, nested array<array<int>>"
ROWS = [
    (1, [10, None, 30], {"a": 1, "b": None}, [(1, "x"), (2, "y")], [[1], []]),
    (2, [], {}, [], []),
    (3, None, None, None, None),
    (4, [40], {"c": 3}, [None, (4, None)], [None, [2, 3]]),
]


def data(spark):
    return spark.createDataFrame(ROWS, SCHEMA)


def same(program):
    assert_same(program, conf=NON_ANSI)


def test_explode_arrays_with_other_columns():
    same(lambda spark, F, T, Window: data(spark).select("id", F.explode("xs")))
    same(lambda spark, F, T, Window: data(spark).select(F.explode("xs").alias("x"), "id", (F.col("id") * 2).alias("d")))


def test_explode_outer_keeps_null_and_empty_rows():
    same(lambda spark, F, T, Window: data(spark).select("id", F.explode_outer("xs")))
    same(lambda spark, F, T, Window: data(spark).select("id", F.explode_outer("m")))


def test_explode_maps_and_nested_arrays():
    same(lambda spark, F, T, Window: data(spark).select("id", F.explode("m")))
    same(lambda spark, F, T, Window: data(spark).select("id", F.explode("nested")))
    same(lambda spark, F, T, Window: data(spark).select("id", F.explode("m").alias("k", "v")))


def test_posexplode_forms():
    same(lambda spark, F, T, Window: data(spark).select("id", F.posexplode("xs")))
    same(lambda spark, F, T, Window: data(spark).select("id", F.posexplode("m")))
    same(lambda spark, F, T, Window: data(spark).select("id", F.posexplode_outer("xs").alias("p", "x")))
    same(lambda spark, F, T, Window: data(spark).select(F.posexplode_outer("m"), "id"))


def test_inline():
    same(lambda spark, F, T, Window: data(spark).select("id", F.inline("rows")))
    same(lambda spark, F, T, Window: data(spark).select("id", F.inline_outer("rows")))


def test_with_column_and_then_filter_group():
    def program(spark, F, T, Window):
        df = data(spark).withColumn("x", F.explode("xs"))
        return df.filter(F.col("x").isNotNull() & (F.col("id") < 4)).groupBy("id").agg(F.sum("x").alias("s"))
    same(program)


def test_explode_of_built_arrays_and_select_star():
    same(lambda spark, F, T, Window:
         data(spark).select("*", F.explode(F.array("id", F.lit(0)))).drop("m", "rows", "nested"))
    same(lambda spark, F, T, Window: data(spark).select(F.explode(F.sequence(F.lit(1), "id")).alias("n"), "id"))
    same(lambda spark, F, T, Window: spark.range(3).select(F.explode(F.array_repeat("id", 2))))


def test_select_expr_generators():
    same(lambda spark, F, T, Window: data(spark).selectExpr("id", "explode(xs)"))
    same(lambda spark, F, T, Window: data(spark).selectExpr("id", "posexplode(xs) AS (p, x)"))
    same(lambda spark, F, T, Window: data(spark).selectExpr("explode(m) AS (k, v)", "id"))


def _view(spark):
    data(spark).createOrReplaceTempView("gen_t")


def test_sql_select_generators():
    def program(sql):
        def run(spark, F, T, Window):
            _view(spark)
            return spark.sql(sql)
        return run
    for sql in ("SELECT id, explode(xs) FROM gen_t",
                "SELECT explode(xs) AS x FROM gen_t",
                "SELECT posexplode(xs) AS (p, x) FROM gen_t",
                "SELECT id, explode_outer(m) FROM gen_t",
                "SELECT inline(array(struct(1, 'a'), struct(2, 'b')))",
                "SELECT explode(array(1, 2, 3)) AS n"):
        same(program(sql))


def test_sql_lateral_view():
    def program(sql):
        def run(spark, F, T, Window):
            _view(spark)
            return spark.sql(sql)
        return run
    for sql in ("SELECT id, x FROM gen_t LATERAL VIEW explode(xs) t AS x",
                "SELECT id, t.x FROM gen_t LATERAL VIEW OUTER explode(xs) t AS x",
                "SELECT id, k, v FROM gen_t LATERAL VIEW explode(m) t AS k, v WHERE v IS NOT NULL",
                "SELECT id, p, x FROM gen_t LATERAL VIEW posexplode(xs) t AS p, x WHERE x > 10 AND id < 4",
                "SELECT id, t.* FROM gen_t LATERAL VIEW explode(m) t",
                "SELECT id, u, w FROM gen_t LATERAL VIEW inline(rows) t AS u, w",
                "SELECT id, a, b FROM gen_t LATERAL VIEW explode(xs) t1 AS a LATERAL VIEW OUTER explode(xs) t2 AS b",
                "SELECT id, count(x) AS n FROM gen_t LATERAL VIEW OUTER explode(xs) t AS x GROUP BY id"):
        same(program(sql))


def test_two_generators_in_one_select_stack():
    same(lambda spark, F, T, Window: data(spark).select(F.explode("xs"), "id", F.posexplode("m")))


def test_nested_generator_is_an_error():
    assert_both_raise(lambda spark, F, T, Window: data(spark).select(F.explode("xs") + 1).collect())


def test_broadcast_hint_gives_the_same_rows():
    def program(spark, F, T, Window):
        left = data(spark).select("id", F.explode_outer("xs").alias("x"))
        right = spark.createDataFrame([(1, "one"), (4, "four")], "id int, name string")
        return left.join(F.broadcast(right), "id").join(right.hint("broadcast"), "id", "left_semi")
    same(program)
