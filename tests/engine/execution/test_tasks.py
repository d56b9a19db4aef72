"""quiver/engine/execution/tasks.py: a task names exactly the blocks it reads, as a runtime without a shared store
(Ray) hands it only those. A local runtime that does the same runs jobs with every way of routing
partitions (coalesce, union, key filters, broadcast, cache) and must give the same answers."""
from __future__ import annotations

import pytest

import quiver
from quiver import functions as F
from quiver.engine.core.errors import QuiverError
from quiver.engine.execution.runtime.local import LocalRuntime
from quiver.engine.execution.tasks import InputBlocks, stage_inputs
from quiver.executors.blocks import BlockId


class DeclaredInputsOnly(LocalRuntime):
    """Threads, but each task sees only the blocks its spec declares: reading another raises."""

    def reader(self, task):
        return InputBlocks({b: self.store.get(b) for b in task.inputs})


@pytest.fixture(scope="module")
def strict():
    session = quiver.Session({"quiver.master": "local[2]", "spark.sql.shuffle.partitions": 3})
    runtime = DeclaredInputsOnly(2)
    session._context.runtime = session._context.scheduler.runtime = runtime
    yield session
    session.stop()


def _programs(spark):
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", -1)
    facts = spark.range(0, 3000, numPartitions=4).select(F.col("id"), (F.col("id") % 13).alias("k"))
    dims = spark.range(0, 13, numPartitions=2).select(F.col("id").alias("k"), (F.col("id") * 10).alias("w"))
    cached = facts.filter("k < 5").cache()
    try:
        out = {
            "coalesce": facts.groupBy("k").count().coalesce(2).orderBy("k").collect(),
            "union": facts.union(facts.filter("k = 1")).repartition(5).groupBy("k").count().orderBy("k").collect(),
            "shuffled_join": facts.join(dims, "k").groupBy("w").agg(F.sum("id")).orderBy("w").collect(),
            "cache": cached.groupBy("k").agg(F.max("id")).orderBy("k").collect(),
            "semi_join": facts.join(dims.filter("w > 50"), "k", "left_semi").count(),
        }
        spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")
        out["broadcast_join"] = facts.join(dims, "k").groupBy("w").count().orderBy("w").collect()
        return out
    finally:
        cached.unpersist()
        spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")


def test_jobs_read_only_their_declared_blocks_and_agree(strict):
    reference = quiver.Session({"quiver.master": "local[2]", "spark.sql.shuffle.partitions": 3})
    try:
        assert _programs(strict) == _programs(reference)
    finally:
        reference.stop()


def test_a_block_not_declared_is_an_error_naming_it():
    blocks = InputBlocks({BlockId("job1", 0, 0, 0): []})
    with pytest.raises(QuiverError, match=r"BlockId\(namespace='job1', stage=0, map_partition=1.*not among its inputs"):
        blocks.get(BlockId("job1", 0, 1, 0))


def test_a_coalesced_partition_reads_its_run_of_reduce_partitions(spark):
    df = spark.range(0, 100, numPartitions=2).repartition(6).coalesce(2)
    stage = df._execution().stages.result
    ids = stage_inputs(stage.root, 1, "job9")
    assert sorted({b.reduce_partition for b in ids}) == [3, 4, 5]
    assert {b.map_partition for b in ids} == {0, 1}


def test_tpch_queries_read_only_their_declared_blocks(strict):
    """The 22 TPC-H queries (SF 0.01) under declared inputs only give the answers of the shared store."""
    from benchmarks.tpch.answers import answer_difference
    from benchmarks.tpch.datagen import ensure_tables
    from benchmarks.tpch.queries import QUERY_NUMBERS, has_order_by, sql_text

    reference = quiver.Session({"quiver.master": "local[2]", "spark.sql.shuffle.partitions": 3})
    try:
        for name, path in ensure_tables(0.01).items():
            for session in (strict, reference):
                session.read.parquet(str(path)).createOrReplaceTempView(name)
        for n in QUERY_NUMBERS:
            expected = reference.sql(sql_text(n)).toArrow()
            difference = answer_difference(expected, strict.sql(sql_text(n)).toArrow(), ordered=has_order_by(n))
            assert difference is None, f"Q{n}: {difference}"
    finally:
        reference.stop()
