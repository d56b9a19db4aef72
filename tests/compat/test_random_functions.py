"""rand, randn, monotonically_increasing_id, spark_partition_id, sample, randomSplit and sampleBy.

Spark's random values come from its own generator, so rand/randn and samples are checked for their
distribution, for determinism given a seed and for independence between partitions; names, types and
the exact formula of monotonically_increasing_id are compared with PySpark.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from .harness import assert_same, quiver_engine


@pytest.fixture(scope="module")
def api():
    engine = quiver_engine()
    return engine.spark, engine.F


def test_names_and_types_match_pyspark():
    def program(spark, F, T, Window):
        df = spark.range(0, 10, 1, 1).select(F.rand(42), F.randn(7), F.monotonically_increasing_id(),
                                              F.spark_partition_id(), F.expr("rand(5)"), F.expr("randn(1)"))
        return df.select([F.lit(c).alias(c) for c in df.columns]).limit(1)
    assert_same(program, shuffle_partitions=(1,))


def test_monotonically_increasing_id_is_sparks_formula():
    """partition << 33 | row within partition: the same on both engines for the same partitioning."""
    def program(spark, F, T, Window):
        return spark.range(0, 1000, 1, 4).select("id", F.monotonically_increasing_id().alias("m"),
                                                 F.spark_partition_id().alias("p"))
    assert_same(program)


def test_positional_functions_in_group_by_and_sql():
    def program(spark, F, T, Window):
        spark.range(0, 100, 1, 3).createOrReplaceTempView("positions")
        return spark.sql("SELECT spark_partition_id() AS p, count(*) AS n, max(id) AS m "
                         "FROM positions GROUP BY spark_partition_id()")
    assert_same(program)


def test_rand_is_uniform_and_randn_normal(api):
    spark, F = api
    table = spark.range(0, 200_000, 1, 4).select(F.rand(11).alias("u"), F.randn(12).alias("z")).toArrow()
    u = table.column("u").to_numpy()
    z = table.column("z").to_numpy()
    assert u.min() >= 0.0 and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 0.005 and abs(u.var() - 1 / 12) < 0.002
    histogram = np.histogram(u, bins=10, range=(0, 1))[0] / len(u)
    assert np.all(np.abs(histogram - 0.1) < 0.005)
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01
    assert abs((np.abs(z) < 1).mean() - 0.6827) < 0.005


def test_rand_is_deterministic_for_a_seed(api):
    spark, F = api
    df = spark.range(0, 50_000, 1, 3)
    first = df.select("id", F.rand(3).alias("u"), F.randn(3).alias("z")).orderBy("id").toArrow()
    again = df.select("id", F.rand(3).alias("u"), F.randn(3).alias("z")).orderBy("id").toArrow()
    other = df.select("id", F.rand(4).alias("u")).orderBy("id").toArrow()
    assert first.equals(again)
    assert not np.allclose(first.column("u").to_numpy(), other.column("u").to_numpy())


def test_rand_does_not_depend_on_batch_boundaries():
    """A row's value depends on its partition and position only, not on how the partition is cut into batches."""
    from quiver.executors.cpu.kernels.row_position import normal, uniform

    whole = uniform(5, 2, 0, 1000)
    pieces = np.concatenate([uniform(5, 2, 0, 333), uniform(5, 2, 333, 600), uniform(5, 2, 933, 67)])
    assert np.array_equal(whole, pieces)
    whole = normal(5, 2, 0, 1000)
    pieces = np.concatenate([normal(5, 2, 0, 1), normal(5, 2, 1, 999)])
    assert np.array_equal(whole, pieces)


def test_partitions_get_independent_streams(api):
    spark, F = api
    table = spark.range(0, 40_000, 1, 4).select(F.spark_partition_id().alias("p"), F.rand(9).alias("u")).toArrow()
    p = table.column("p").to_numpy()
    u = table.column("u").to_numpy()
    streams = [u[p == i] for i in range(4)]
    assert all(len(s) == 10_000 for s in streams)
    for a in range(4):
        assert abs(streams[a].mean() - 0.5) < 0.01
        for b in range(a + 1, 4):
            assert not np.allclose(streams[a][:100], streams[b][:100])
            assert abs(np.corrcoef(streams[a], streams[b])[0, 1]) < 0.05


def test_sample_fraction_determinism_and_replacement(api):
    spark, F = api
    df = spark.range(0, 100_000, 1, 4)
    n = df.sample(0.1, seed=1).count()
    assert abs(n - 10_000) < 500
    assert (sorted(r.id for r in df.sample(False, 0.01, 5).collect())
            == sorted(r.id for r in df.sample(0.01, 5).collect()))
    assert df.sample(fraction=0.0, seed=1).count() == 0
    assert df.sample(fraction=1.0, seed=1).count() == 100_000
    with_replacement = df.sample(True, 2.0, 3)
    counts = with_replacement.groupBy("id").count().toArrow().column("count").to_numpy()
    assert abs(with_replacement.count() - 200_000) < 3000
    assert counts.max() >= 5  # rows repeat, Poisson(2) counts
    assert with_replacement.columns == ["id"] and with_replacement.dtypes == [("id", "bigint")]
    with pytest.raises(Exception, match="fraction"):
        df.sample(False, 1.5, 1)


def test_random_split_is_disjoint_and_complete(api):
    spark, F = api
    df = spark.range(0, 30_000, 1, 3)
    parts = df.randomSplit([1.0, 2.0, 3.0], seed=17)
    ids = [{r.id for r in p.collect()} for p in parts]
    assert sum(len(s) for s in ids) == 30_000
    assert set().union(*ids) == set(range(30_000))
    for share, got in zip([1 / 6, 2 / 6, 3 / 6], ids):
        assert abs(len(got) / 30_000 - share) < 0.02
    again = [{r.id for r in p.collect()} for p in df.randomSplit([1.0, 2.0, 3.0], seed=17)]
    assert again == ids


def test_sample_by_takes_each_stratum_with_its_fraction(api):
    spark, F = api
    df = spark.range(0, 60_000, 1, 3).select((F.col("id") % 3).alias("k"))
    sampled = df.sampleBy("k", {0: 0.1, 1: 0.5}, seed=2)
    counts = {r.k: r["count"] for r in sampled.groupBy("k").count().collect()}
    assert 2 not in counts
    assert abs(counts[0] - 2000) < 200 and abs(counts[1] - 10_000) < 400
    same = df.stat.sampleBy("k", {0: 0.1, 1: 0.5}, seed=2).count()
    assert same == sum(counts.values())


def test_filter_on_rand_keeps_the_rows_it_shows(api):
    """A rand() column filtered on keeps the value the projection computed (the filter is not moved below it)."""
    spark, F = api
    df = spark.range(0, 10_000, 1, 2).withColumn("u", F.rand(8)).filter(F.col("u") < 0.3)
    values = df.toArrow().column("u").to_numpy()
    assert len(values) > 0 and values.max() < 0.3
    assert math.isclose(len(values) / 10_000, 0.3, abs_tol=0.03)
