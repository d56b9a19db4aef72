"""quiver/planners/optimizer/reuse.py: an aggregate that an uncorrelated scalar subquery and its query both compute runs
once (a counting source shows the scans), gives the same rows, and its blocks go when the query ends."""
from __future__ import annotations

from quiver import functions as F
from quiver.engine.core import plan as L
from tests.engine.api.test_dataframe_cache import CountingSource

TOP = """select k, total from totals
         where total = (select max(total) from totals) order by k"""


def _totals(spark) -> CountingSource:
    source = CountingSource()
    rows = spark._dataframe_from_source(source).select((F.col("k") % 4).alias("k"), F.length("v").alias("n"))
    rows.groupBy("k").agg(F.sum("n").alias("total")).createOrReplaceTempView("totals")
    return source


def test_the_shared_aggregate_is_computed_once(spark):
    source = _totals(spark)
    execution = spark.sql(TOP)._execution()
    assert "reuse_shared_aggregates" in execution.fired_rules
    assert any(isinstance(n, L.InMemoryRelation) for n in execution.optimized.walk())
    rows = execution.to_table().to_pylist()
    assert source.reads == 2  # one scan of the source's two splits, not two
    # k % 4 over 0..9 and 10..19; the lengths of 's0-i' and 's1-1i' differ past i = 9 only in k.
    lengths = {}
    for split in (0, 1):
        for i in range(10):
            k = (split * 10 + i) % 4
            lengths[k] = lengths.get(k, 0) + len(f"s{split}-{i}")
    best = max(lengths.values())
    assert rows == [{"k": k, "total": t} for k, t in sorted(lengths.items()) if t == best]


def test_blocks_are_dropped_when_the_query_ends(spark):
    _totals(spark)
    before = spark._context.store.nbytes("cache")
    spark.sql(TOP).collect()
    assert spark._context.store.nbytes("cache") == before


def test_an_aggregate_only_the_subquery_computes_is_not_kept(spark):
    _totals(spark)
    q = spark.sql("select k from totals where k < (select count(*) from totals where total > 0)")
    assert "reuse_shared_aggregates" in q._execution().fired_rules  # `totals` is in both
    q2 = spark.sql("select k, total from totals where k < (select count(*) from range(3))")
    assert "reuse_shared_aggregates" not in q2._execution().fired_rules
    assert sorted(r.k for r in q2.collect()) == [0, 1, 2]


def test_an_aggregate_joined_with_its_own_summary_is_computed_once(spark):
    """The DataFrame form of the query above: `totals` joined with `totals.agg(max(...))`."""
    source = _totals(spark)
    totals = spark.table("totals")
    top = totals.agg(F.max("total").alias("best"))
    execution = totals.join(top, F.col("total") == F.col("best")).select("k", "total").orderBy("k")._execution()
    assert "reuse_shared_aggregates" in execution.fired_rules
    rows = execution.to_table().to_pylist()
    assert source.reads == 2  # one scan of the two splits
    assert rows == spark.sql(TOP).toArrow().to_pylist()
