"""quiver/planners/stages.py: a physical plan is cut at every exchange into a DAG of stages, parents first."""
from __future__ import annotations

from quiver import functions as F
from quiver.planners.physical import nodes as P
from quiver.planners.stages import split_stages


def _graph(df):
    return df._execution().stages


def _reads(stage):
    return [n for n in stage.root.walk() if isinstance(n, P.ShuffleReadExec)]


def test_a_plan_without_exchanges_is_one_result_stage(spark):
    graph = _graph(spark.range(0, 10, numPartitions=3).filter(F.col("id") > 2))
    assert len(graph.stages) == 1
    assert graph.result.output is None and graph.result.parents == () and graph.result.num_partitions == 3


def test_each_exchange_becomes_a_map_stage_read_by_its_parent(spark, partitions):
    q = spark.range(0, 100, numPartitions=4).groupBy((F.col("id") % 5).alias("g")).count().orderBy("g")
    physical = q._execution().physical
    exchanges = [n for n in physical.walk() if isinstance(n, P.ExchangeExec)]
    graph = split_stages(physical)
    assert len(graph.stages) == len(exchanges) + 1
    assert [s.id for s in graph.stages] == list(range(len(graph.stages)))
    for stage in graph.stages:
        assert all(p < stage.id for p in stage.parents)
        assert not any(isinstance(n, P.ExchangeExec) for n in stage.root.walk())
        assert sorted(r.stage_id for r in _reads(stage)) == list(stage.parents)
    assert graph.stages[0].num_partitions == 4  # the map side keeps the scan's partitions
    assert graph.stages[0].output == exchanges[-1].partitioning
    assert graph.result.num_partitions == partitions
    assert [tuple(r) for r in q.collect()] == [(g, 20) for g in range(5)]


def test_shuffle_reads_know_both_partition_counts(spark, partitions):
    q = spark.range(0, 30, numPartitions=2).groupBy((F.col("id") % 3).alias("g")).count()
    graph = _graph(q)
    (read,) = _reads(graph.result)
    assert read.map_partitions == 2 and read.partitions == partitions and not read.broadcast


def test_a_broadcast_is_read_whole_by_every_task(spark):
    previous = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "10m")
    try:
        big = spark.range(0, 40, numPartitions=4)
        small = spark.createDataFrame([(1, "a"), (2, "b")], "k BIGINT, name STRING")
        q = big.join(small, big["id"] == small["k"])
        graph = _graph(q)
        (read,) = [r for s in graph.stages for r in _reads(s)]
        assert read.broadcast and read.partitions == 1
        assert graph.result.num_partitions == 4
        assert sorted(r.name for r in q.collect()) == ["a", "b"]
    finally:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", previous)


def test_a_join_stage_has_two_parents(spark):
    previous = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        a = spark.range(0, 20, numPartitions=2)
        b = spark.range(0, 20, numPartitions=3).withColumnRenamed("id", "k")
        graph = _graph(a.join(b, a["id"] == b["k"]))
        assert len(graph.result.parents) == 2
        assert sorted(s.num_partitions for s in graph.stages[:-1]) == [2, 3]
    finally:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", previous)


def test_describe_lists_every_stage_with_its_kind_and_dependencies(spark):
    graph = _graph(spark.range(0, 10, numPartitions=2).groupBy((F.col("id") % 2).alias("g")).count())
    text = graph.describe()
    assert "Stage 0 (map -> hashpartitioning(" in text and ", 2 tasks)" in text
    assert f"Stage 1 (result, {graph.result.num_partitions} tasks after 0)" in text
    assert "ShuffleRead stage=0" in text
