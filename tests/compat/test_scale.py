"""Medium-sized inputs (tens of thousands of rows): many batches, many groups, skewed keys."""
from __future__ import annotations

from .harness import assert_same


def _facts(spark, F, n=50_000):
    return (spark.range(n)
            .withColumn("k", (F.col("id") % 97).cast("int"))
            .withColumn("s", F.concat(F.lit("key-"), (F.col("id") % 301).cast("string")))
            .withColumn("x", F.when(F.col("id") % 11 == 0, None).otherwise(F.col("id") * 0.5))
            .withColumn("skew", F.when(F.col("id") % 10 < 8, F.lit(0)).otherwise(F.col("id") % 1000)))


def test_group_by_many_groups():
    def program(spark, F, T, Window):
        return _facts(spark, F).groupBy("k").agg(
            F.count("*").alias("n"), F.sum("x").alias("sx"), F.avg("id").alias("avg_id"),
            F.min("s").alias("min_s"), F.max("x").alias("max_x"), F.countDistinct("s").alias("ds"))
    assert_same(program)


def test_group_by_string_key_and_skewed_key():
    def program(spark, F, T, Window):
        f = _facts(spark, F)
        return f.groupBy("s").agg(F.count("x").alias("cx")).join(
            f.groupBy("skew").agg(F.count("*").alias("n")).withColumnRenamed("skew", "cx"), "cx", "left")
    assert_same(program)


def test_join_many_to_one():
    def program(spark, F, T, Window):
        f = _facts(spark, F, 30_000)
        dim = spark.range(0, 97, 2).withColumnRenamed("id", "k").withColumn("label", F.concat(F.lit("L"), F.col("k")))
        dim = dim.withColumn("k", F.col("k").cast("int"))
        return f.join(dim, "k", "left").groupBy("label").agg(F.count("*").alias("n"), F.sum("x").alias("sx"))
    assert_same(program)


def test_order_by_limit_over_many_rows():
    def program(spark, F, T, Window):
        return _facts(spark, F).orderBy(F.col("x").desc_nulls_first(), F.col("id")).limit(15)
    assert_same(program, ordered=True)


def test_distinct_and_count_of_many_rows():
    def program(spark, F, T, Window):
        f = _facts(spark, F)
        return f.select("k", "skew").distinct().groupBy("k").count()
    assert_same(program)


def test_row_number_top_three_per_group():
    def program(spark, F, T, Window):
        w = Window.partitionBy("k").orderBy(F.col("id").desc())
        return _facts(spark, F, 20_000).withColumn("rn", F.row_number().over(w)).filter(F.col("rn") <= 3) \
            .select("k", "id", "rn")
    assert_same(program)
