"""Operators forced to spill by a budget of a few hundred KiB give the answers they give in memory.

Each query runs twice on one session: with no bound, then under `quiver.memory.limit`; the rows must be
the same, the job must have spilled through the operator under test, and no spill file may be left.
"""
from __future__ import annotations

import math
import os
import random
import subprocess
import sys
import textwrap

import pyarrow as pa
import pytest

from quiver import Window
from quiver import functions as F
from quiver.engine.core.errors import MemoryBudgetExceeded, ResultTooLargeError
from quiver.executors.spill import SPILL_PREFIX, process_spill_folder

BUDGET = "256k"


@pytest.fixture
def budget(spark):
    """Run under `limit` (a context manager: the conf is unset again after)."""
    previous = spark.conf.get("quiver.memory.limit", None)

    class Budget:
        def __call__(self, limit: str | None):
            if limit is None:
                spark.conf.unset("quiver.memory.limit")
            else:
                spark.conf.set("quiver.memory.limit", limit)
            return self

    yield Budget()
    if previous is None:
        spark.conf.unset("quiver.memory.limit")
    else:
        spark.conf.set("quiver.memory.limit", previous)


def spill_files_left() -> list[str]:
    """Files under this process's spill folder other than its owner file."""
    root = process_spill_folder("").path
    return [os.path.join(d, f) for d, _, files in os.walk(root) for f in files if f != "owner"]


def rows_of(df, ordered: bool) -> list[tuple]:
    rows = [tuple(_canonical(v) for v in r) for r in df.collect()]
    return rows if ordered else sorted(rows, key=repr)


def _canonical(v):
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if isinstance(v, list):
        return sorted(v, key=repr)
    return v


def check_spills(spark, budget, make, operator: str, ordered: bool = False) -> None:
    """`make()`'s rows without a bound and under BUDGET are equal, and `operator` spilled under BUDGET."""
    budget(None)
    expected = rows_of(make(), ordered)
    budget(BUDGET)
    got = rows_of(make(), ordered)
    spills = spark.lastJob().spills
    budget(None)
    assert got == expected
    assert any(op.startswith(operator) for op in spills), f"{operator} did not spill: {spills}"
    assert spill_files_left() == []


def keyed(spark, n: int, keys: int, seed: int = 1):
    rng = random.Random(seed)
    ks = [rng.randrange(keys) for _ in range(n)]
    return spark.createDataFrame(pa.table({
        "k": ks,
        "s": [f"key-{k:06d}" if k % 17 else None for k in ks],
        "v": [rng.random() * 100 for _ in range(n)],
        "i": [rng.randrange(-1000, 1000) for _ in range(n)],
    }))


def test_explain_cost_after_a_run_says_which_stage_and_operator_spilled(spark, budget, capsys):
    df = keyed(spark, 120_000, 30_000).groupBy("s", "k").agg(F.sum("i").alias("total"), F.min("v").alias("lo"),
                                                             F.max("s").alias("hi"))
    df.explain("cost")
    assert "== Last run" not in capsys.readouterr().out  # not run yet
    budget(BUDGET)
    # Few shuffle partitions, so each final aggregate holds more than the budget (many would each fit).
    partitions = spark.conf.get("spark.sql.shuffle.partitions", None)
    spark.conf.set("spark.sql.shuffle.partitions", 4)
    try:
        df.collect()
        job = spark.lastJob()
        df.explain("cost")
    finally:
        budget(None)
        if partitions is None:
            spark.conf.unset("spark.sql.shuffle.partitions")
        else:
            spark.conf.set("spark.sql.shuffle.partitions", partitions)
    out = capsys.readouterr().out
    section = out[out.index("== Last run: what spilled to disk under the memory budget =="):]
    stage = next(s for s in job.stages if "HashAggregate" in s.spills)
    count, written = stage.spills["HashAggregate"]
    assert f"memory budget {256 * 1024:,} bytes" in section
    assert f"stage {stage.stage_id} " in section
    assert f"HashAggregate {count:,} spill" in section and f"({written:,} bytes)" in section
    df.collect()  # a run that did not spill replaces it
    df.explain("cost")
    assert "no operator spilled" in capsys.readouterr().out


@pytest.mark.parametrize("partitions", [1, 3])
def test_a_hash_aggregate_spills_by_key_and_gives_the_same_groups(spark, budget, partitions):
    spark.conf.set("spark.sql.shuffle.partitions", partitions)
    try:
        df = keyed(spark, 120_000, 30_000)
        check_spills(spark, budget, lambda: df.groupBy("s", "k").agg(
            F.sum("i").alias("total"), F.count("*").alias("n"), F.min("v").alias("lo"), F.max("s").alias("hi"),
            F.avg("i").alias("mean"), F.collect_set("i").alias("seen")), "HashAggregate")
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", 8)


def test_float_and_null_grouping_keys_stay_one_group_each_across_spill_files(spark, budget):
    values = [0.0, -0.0, float("nan"), None, 1.5] * 20_000 + [float(i) for i in range(40_000)]
    df = spark.createDataFrame(pa.table({"x": values, "y": list(range(len(values)))}))
    check_spills(spark, budget, lambda: df.groupBy("x").agg(F.count("*").alias("n"), F.sum("y").alias("t")),
                 "HashAggregate")


@pytest.mark.parametrize("how", ["inner", "left", "right", "full", "left_semi", "left_anti"])
def test_a_hash_join_that_does_not_fit_is_a_grace_hash_join_with_the_same_rows(spark, budget, how):
    left = keyed(spark, 60_000, 40_000, seed=2)
    right = keyed(spark, 60_000, 50_000, seed=3).select(F.col("k").alias("rk"), F.col("i").alias("ri"),
                                                        F.col("s").alias("rs"))
    check_spills(spark, budget, lambda: left.join(right, (left.k == right.rk) & (left.i > right.ri - 500), how),
                 "HashJoin")


def test_a_join_on_keys_of_different_types_matches_the_same_rows_after_spilling(spark, budget):
    left = spark.createDataFrame(pa.table({"a": pa.array(range(80_000), pa.int32()), "x": range(80_000)}))
    right = spark.createDataFrame(pa.table({"b": pa.array(range(0, 160_000, 2), pa.int64()), "y": range(80_000)}))
    check_spills(spark, budget, lambda: left.join(right, left.a == right.b, "full"), "HashJoin")


def test_a_sort_that_does_not_fit_is_an_external_sort_in_spark_order(spark, budget):
    rng = random.Random(4)
    n = 150_000
    df = spark.createDataFrame(pa.table({
        "a": [rng.choice([None, float("nan"), -0.0, 1.0, 2.5, -3.0]) for _ in range(n)],
        "b": [rng.choice([None, "x", "y", "zz"]) for _ in range(n)],
        "c": list(range(n)),
    }))
    check_spills(spark, budget, lambda: df.orderBy(F.col("a").desc_nulls_first(), F.col("b").asc_nulls_last(),
                                                   F.col("c").desc()), "Sort", ordered=True)


def test_a_sort_of_rows_with_one_key_streams_them_without_running_out_of_room(spark, budget):
    df = spark.range(0, 200_000, numPartitions=1).select(F.lit(7).alias("k"), F.col("id"))
    budget(BUDGET)
    try:
        assert df.orderBy("k").count() == 200_000
        rows = df.orderBy("k").collect()
        assert {r.k for r in rows} == {7} and len(rows) == 200_000
    finally:
        budget(None)


def test_a_window_spills_by_its_partition_keys(spark, budget):
    df = keyed(spark, 100_000, 20_000, seed=5)
    w = Window.partitionBy("k").orderBy("i", "v")
    check_spills(spark, budget, lambda: df.select("k", "i", "v", F.row_number().over(w).alias("rn"),
                                                  F.sum("i").over(w).alias("running")), "Window")


def test_one_join_key_whose_rows_do_not_fit_fails_naming_the_operator_the_key_and_the_budget(spark, budget):
    big = spark.range(0, 300_000, numPartitions=1).select((F.col("id") * 0 + 42).alias("k"), F.col("id").alias("x"))
    probe = spark.range(0, 10).select((F.col("id") * 0 + 42).alias("k2"))
    budget("128k")
    try:
        with pytest.raises(MemoryBudgetExceeded, match=r"HashJoin .*join key \(42\).*quiver.memory.limit"):
            probe.join(big, probe.k2 == big.k, "left").agg(F.sum("x")).collect()
    finally:
        budget(None)
    assert spill_files_left() == []


def test_spill_files_are_removed_when_the_task_that_wrote_them_fails(spark, budget):
    @F.udf("long")
    def fail_on(x):
        if x == 12345:
            raise ValueError("no")
        return x

    df = spark.range(0, 150_000, numPartitions=1).orderBy(F.col("id").desc()).select(fail_on("id"))
    budget(BUDGET)
    try:
        with pytest.raises(Exception, match="no"):
            df.collect()
    finally:
        budget(None)
    assert spill_files_left() == []


def test_spill_files_of_a_killed_process_are_swept_by_the_next_session(tmp_path):
    local = tmp_path / "local"
    killed = textwrap.dedent(f"""
        import os, signal, quiver
        from quiver import functions as F
        spark = (quiver.SparkSession.builder.master("local[1]").config("quiver.memory.limit", "256k")
                 .config("quiver.local.dir", {str(local)!r}).config("quiver.python.udf.inProcess", "true")
                 .getOrCreate())

        @F.udf("long")
        def die(x):
            if x == 5:
                os.kill(os.getpid(), signal.SIGKILL)
            return x

        spark.range(0, 150_000, numPartitions=1).orderBy(F.col("id").desc()).select(die("id")).collect()
    """)
    done = subprocess.run([sys.executable, "-c", killed], capture_output=True, text=True, timeout=300)
    assert done.returncode == -9, done.stderr[-2000:]
    left = [d for d in os.listdir(local) if d.startswith(SPILL_PREFIX)]
    assert left and any(files for _, _, files in os.walk(local / left[0]) if files != ["owner"])
    sweep = ("import quiver; quiver.SparkSession.builder.master('local[1]')"
             f".config('quiver.local.dir', {str(local)!r}).getOrCreate()")
    subprocess.run([sys.executable, "-c", sweep], check=True, timeout=300)
    assert not (local / left[0]).exists()


def test_persist_disk_only_keeps_cached_partitions_on_disk(spark):
    from quiver import StorageLevel

    df = spark.range(0, 10_000).persist(StorageLevel.DISK_ONLY)
    try:
        assert df.count() == 10_000 and df.agg(F.sum("id")).collect()[0][0] == sum(range(10_000))
        assert df.storageLevel == StorageLevel.DISK_ONLY
    finally:
        df.unpersist()


def test_a_result_larger_than_max_result_size_fails_at_once_naming_the_key(spark):
    spark.conf.set("spark.driver.maxResultSize", "1m")
    try:
        assert len(spark.range(10_000).collect()) == 10_000
        with pytest.raises(ResultTooLargeError, match=r"bigger than spark.driver.maxResultSize \(1.0 MiB\)"):
            spark.range(5_000_000).toPandas()
    finally:
        spark.conf.unset("spark.driver.maxResultSize")
    assert len(spark.range(200_000).collect()) == 200_000
