"""Idioms ordinary PySpark programs use beyond the core contract: toDF, repartition, selectExpr, pivot...

These are marked ``beyond_contract``: a failure here is a gap to report, not a broken promise.
"""
from __future__ import annotations

import pytest

from .data import people, sales
from .harness import assert_same, assert_same_output, assert_same_value

pytestmark = pytest.mark.beyond_contract


def test_to_df_renames_all_columns():
    def program(spark, F, T, Window):
        return spark.createDataFrame([(1, "a"), (2, "b")]).toDF("id", "label")
    assert_same(program)


def test_default_names_without_schema_are_underscore_numbers():
    def program(spark, F, T, Window):
        return spark.createDataFrame([(1, "a", 2.0)])
    assert_same(program)


def test_repartition_and_coalesce_do_not_change_results():
    def program(spark, F, T, Window):
        df = sales(spark).repartition(3).filter(F.col("qty") > 1).repartition("region").coalesce(1)
        return df.groupBy("region").agg(F.sum("qty").alias("q")).repartition(2, "region")
    assert_same(program)


def test_select_with_list_comprehension_over_columns():
    def program(spark, F, T, Window):
        df = people(spark)
        return df.select(*[F.col(c).alias(c.upper()) for c in df.columns if c != "salary"])
    assert_same(program)


def test_with_columns_dict():
    def program(spark, F, T, Window):
        return people(spark).withColumns({"age2": F.col("age") * 2, "name": F.lower("name")})
    assert_same(program)


def test_select_expr_and_expr():
    def program(spark, F, T, Window):
        return people(spark).selectExpr("name", "age + 1 AS next_age", "upper(city) AS city").withColumn(
            "older", F.expr("next_age > 40"))
    assert_same(program)


def test_pivot_sum():
    def program(spark, F, T, Window):
        return sales(spark).filter(F.col("region").isNotNull()).groupBy("region").pivot(
            "category", ["fruit", "veg"]).sum("qty")
    assert_same(program)


def test_sql_on_temp_view():
    def program(spark, F, T, Window):
        people(spark).createOrReplaceTempView("people_v")
        return spark.sql(
            "SELECT city, COUNT(*) AS n, AVG(salary) AS avg_salary FROM people_v "
            "WHERE age IS NOT NULL GROUP BY city ORDER BY n DESC, city")
    assert_same(program, ordered=True)


def test_sql_join_between_views():
    def program(spark, F, T, Window):
        sales(spark).createOrReplaceTempView("sales_v")
        spark.createDataFrame([("fruit", 0.1), ("veg", 0.2)], "category string, tax double") \
            .createOrReplaceTempView("tax_v")
        return spark.sql(
            "SELECT s.category, SUM(s.qty * s.price * (1 + t.tax)) AS gross "
            "FROM sales_v s JOIN tax_v t ON s.category = t.category GROUP BY s.category")
    assert_same(program)


def test_string_compared_to_int_column():
    def program(spark, F, T, Window):
        return people(spark).filter(F.col("id") == "3").union(people(spark).filter(F.col("age") > "40"))
    assert_same(program)


def test_isin_empty_list():
    def program(spark, F, T, Window):
        return people(spark).filter(~F.col("city").isin([])).select("id")
    assert_same(program)


def test_window_lag_lead_dense_rank_and_range_frame_ties():
    def program(spark, F, T, Window):
        df = spark.createDataFrame(
            [("a", 1, 10.0), ("a", 2, 10.0), ("a", 3, 5.0), ("b", 1, 1.0), ("b", 2, None), ("b", 3, 1.0)],
            "k string, t int, v double")
        w = Window.partitionBy("k").orderBy("v")
        wt = Window.partitionBy("k").orderBy("t")
        return df.select(
            "k", "t", "v",
            F.sum("v").over(w).alias("range_sum_with_ties"),
            F.dense_rank().over(w).alias("dr"),
            F.lag("v", 1).over(wt).alias("prev"),
            F.lead("v", 1, -1.0).over(wt).alias("next"),
            F.avg("v").over(Window.partitionBy("k")).alias("k_avg"))
    assert_same(program)


def test_describe_count_mean():
    def program(spark, F, T, Window):
        # describe() renders numbers as strings; compare them as doubles so the last ulp of
        # stddev (summation order) does not count as a difference
        d = people(spark).select("age", "salary").describe()
        return d.select("summary", *[F.col(c).cast("double").alias(c) for c in ("age", "salary")])
    assert_same(program)


def test_replace_values():
    def program(spark, F, T, Window):
        return people(spark).na.replace(["Paris", "London"], ["FR", "UK"], "city")
    assert_same(program)


def test_round_trip_through_pandas():
    def program(spark, F, T, Window):
        pdf = people(spark).filter(F.col("age").isNotNull() & F.col("salary").isNotNull()).toPandas()
        return spark.createDataFrame(pdf).withColumn("k", F.col("salary") / 1000)
    assert_same(program)


def test_show_arrays_and_nested():
    def fn(spark, F, T, Window):
        sales(spark).groupBy("category").agg(F.sort_array(F.collect_list("order_id")).alias("ids")) \
            .orderBy("category").show(truncate=False)
    assert_same_output(fn)


def test_is_empty_and_columns_of_join():
    def fn(spark, F, T, Window):
        df = people(spark)
        return [df.isEmpty(), df.filter(F.col("id") < 0).isEmpty()]
    assert_same_value(fn)


def test_structs_arrays_explode():
    def program(spark, F, T, Window):
        df = spark.createDataFrame([(1, "a,b,c"), (2, ""), (3, None), (4, "d")], "id int, tags string")
        nested = df.withColumn("arr", F.split("tags", ",")).withColumn("st", F.struct("id", F.col("tags").alias("t")))
        return nested.select(
            "id", F.size("arr").alias("n"), F.col("st.t").alias("t"), F.col("st").getField("id").alias("sid"),
            F.array_contains("arr", "b").alias("has_b"), F.explode("arr").alias("tag"))
    assert_same(program)


def test_explode_outer_and_array_literal():
    def program(spark, F, T, Window):
        df = spark.createDataFrame([(1, [1, 2]), (2, []), (3, None)], "id int, xs array<int>")
        return df.select("id", F.explode_outer("xs").alias("x"), F.array(F.lit(1), F.col("id")).alias("pair"))
    assert_same(program)


def test_ordinals_in_group_by_and_order_by_as_pyspark_4_reads_them():
    # groupBy(1) grouped by the literal 1 (one row); orderBy(-1) was refused.
    def program(spark, F, T, Window):
        df = spark.createDataFrame([("a", 1, 2.0), ("b", 2, 1.0), ("a", 3, 1.0), ("c", None, 3.0)],
                                   "k string, v int, d double")
        by_ordinal = df.groupBy(1).agg(F.sum("v").alias("s")).orderBy(-1)
        mixed = df.groupBy(1, "d").count().orderBy(1, -2)
        rolled = df.rollup(1).count().orderBy(2, 1)
        return by_ordinal.unionByName(mixed.select("k", F.col("count").cast("bigint").alias("s"))) \
            .unionByName(rolled.select("k", F.col("count").alias("s")))
    assert_same(program, ordered=False)


def test_order_by_negative_ordinals_sorts_descending():
    def program(spark, F, T, Window):
        df = spark.createDataFrame([("a", 1), ("b", 2), ("a", 3), (None, 0)], "k string, v int")
        return df.orderBy(-1, 2)
    assert_same(program, ordered=True)
