"""Adaptive query execution against PySpark: the same programs, with Spark's `spark.sql.adaptive.*` keys
on and off on both engines, give the same columns, types and rows (Quiver's decisions themselves are
checked in tests/engine/execution/test_adaptive.py)."""
from __future__ import annotations

import pytest

from .harness import assert_same

# Small thresholds, so that inputs of a few MiB are skewed and small to both engines alike.
_SKEW = {"spark.sql.autoBroadcastJoinThreshold": -1,
         "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes": "256k",
         "spark.sql.adaptive.skewJoin.skewedPartitionFactor": "2",
         "spark.sql.adaptive.advisoryPartitionSizeInBytes": "256k"}


def _skewed_facts(spark, F, n=300_000):
    """`n` rows whose key 0 holds 30% of them, the rest spread over 997 keys."""
    return (spark.range(0, n, numPartitions=4)
            .withColumn("k", F.when(F.col("id") % 10 < 3, F.lit(0)).otherwise(F.col("id") % 997))
            .withColumn("x", (F.col("id") % 13).cast("double")))


@pytest.mark.parametrize("adaptive", [True, False], ids=["aqe-on", "aqe-off"])
@pytest.mark.parametrize("how", ["inner", "left", "right", "left_semi", "left_anti"])
def test_a_join_on_a_key_holding_30_percent_of_the_rows(how, adaptive):
    def program(spark, F, T, Window):
        dim = (spark.range(0, 1200, numPartitions=2).withColumnRenamed("id", "k")
               .withColumn("label", F.concat(F.lit("d"), F.col("k").cast("string"))))
        joined = _skewed_facts(spark, F).join(dim, "k", how)
        keys = ["k", "label"] if how not in ("left_semi", "left_anti") else ["k"]
        return joined.groupBy(*keys).agg(F.count("*").alias("n"), F.sum("x").alias("sx"))
    assert_same(program, shuffle_partitions=(8,), conf={**_SKEW, "spark.sql.adaptive.enabled": adaptive})


@pytest.mark.parametrize("adaptive", [True, False], ids=["aqe-on", "aqe-off"])
def test_a_join_whose_side_is_estimated_100_times_too_big(adaptive):
    """The filter keeps 1 row in 1000 where the estimators plan for far more: with adaptive execution the
    join is broadcast once that side has run; the answer is the same either way."""
    def program(spark, F, T, Window):
        facts = spark.range(0, 200_000, numPartitions=2).withColumn("k", F.col("id") % 50_000)
        rare = (spark.range(0, 200_000, numPartitions=2).filter(F.col("id") % 1000 == 7)
                .withColumnRenamed("id", "k").withColumn("tag", F.col("k") % 3))
        return facts.join(rare, "k").groupBy("tag").agg(F.count("*").alias("n"), F.sum("id").alias("s"))
    assert_same(program, shuffle_partitions=(8,),
                conf={"spark.sql.autoBroadcastJoinThreshold": "64k", "quiver.sql.join.broadcastByCostMaxBytes": -1,
                      "spark.sql.adaptive.enabled": adaptive})


@pytest.mark.parametrize("adaptive", [True, False], ids=["aqe-on", "aqe-off"])
def test_coalesced_partitions_keep_a_global_order(adaptive):
    def program(spark, F, T, Window):
        return (spark.range(0, 5000, numPartitions=3).withColumn("g", F.col("id") % 7)
                .groupBy("g").agg(F.sum("id").alias("s")).orderBy(F.col("s").desc()))
    assert_same(program, ordered=True, shuffle_partitions=(8, 64), conf={"spark.sql.adaptive.enabled": adaptive})


def test_an_empty_side_gives_an_empty_inner_join_and_a_padded_left_join():
    def program(spark, F, T, Window):
        facts = spark.range(0, 20_000, numPartitions=2).withColumn("k", F.col("id") % 100)
        none = spark.range(0, 100, numPartitions=2).filter(F.col("id") < 0).withColumnRenamed("id", "k") \
            .withColumn("v", F.lit(1))
        inner = facts.join(none, "k").groupBy("k").count().withColumn("kind", F.lit("inner"))
        left = facts.join(none, "k", "left").groupBy("k").agg(F.count("v").alias("count")) \
            .withColumn("kind", F.lit("left"))
        return inner.unionByName(left)
    assert_same(program, shuffle_partitions=(8,), conf={"spark.sql.autoBroadcastJoinThreshold": -1})


@pytest.mark.parametrize("adaptive", [True, False], ids=["aqe-on", "aqe-off"])
def test_a_join_on_a_key_holding_30_percent_of_20_million_rows(adaptive):
    """The issue's size: 20M fact rows, 6M of them on key 0, joined to 1M dim rows through a shuffle (the
    skew threshold lowered to 16 MiB so that the partition is skewed by size to both engines)."""
    def program(spark, F, T, Window):
        facts = (spark.range(0, 20_000_000, numPartitions=4)
                 .withColumn("k", F.when(F.col("id") % 10 < 3, F.lit(0)).otherwise(F.col("id") % 999_983)))
        dim = spark.range(0, 1_000_000, numPartitions=2).withColumnRenamed("id", "k").withColumn("w", F.col("k") % 7)
        return (facts.join(dim, "k").groupBy((F.col("k") % 10).alias("digit"))
                .agg(F.count("*").alias("n"), F.sum("w").alias("sw"), F.max("id").alias("top")))
    assert_same(program, shuffle_partitions=(16,),
                conf={"spark.sql.autoBroadcastJoinThreshold": -1, "quiver.sql.join.broadcastByCostMaxBytes": -1,
                      "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes": "16m",
                      "spark.sql.adaptive.enabled": adaptive})
