"""Adaptive execution end to end: the scheduler re-plans the stages not yet run from what the finished ones
wrote, the answers stay those of the plan as it was, and `spark.lastJob()`, `explain()` and the job report
say what changed (the rules themselves: tests/planners/test_adaptive.py; against PySpark:
tests/compat/test_adaptive.py)."""
from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

from quiver import functions as F


@contextlib.contextmanager
def _conf(spark, **values):
    keys = {k.replace("__", "."): v for k, v in values.items()}
    before = {k: spark.conf.get(k, None) for k in keys}
    for k, v in keys.items():
        spark.conf.set(k, v)
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)


def _aqe(spark, on: bool, **values):
    return _conf(spark, spark__sql__adaptive__enabled=str(on).lower(), **values)


def _rows(df) -> list[tuple]:
    return sorted(tuple(r) for r in df.collect())


def test_a_few_groups_are_reduced_by_one_task_not_eight(spark):
    q = spark.range(0, 10_000, numPartitions=4).groupBy((F.col("id") % 3).alias("k")).count()
    with _aqe(spark, True, spark__sql__shuffle__partitions="8"):
        on = _rows(q)
        job = spark.lastJob()
    assert job.stages[-1].tasks == 1
    assert any("coalesce partitions" in line and "8 partitions" in line for line in job.adaptive)
    with _aqe(spark, False, spark__sql__shuffle__partitions="8"):
        off = _rows(q)
        assert spark.lastJob().stages[-1].tasks == 8 and spark.lastJob().adaptive == []
    assert on == off == [(0, 3334), (1, 3333), (2, 3333)]


def test_explain_after_a_run_shows_what_changed_and_the_stages_as_they_ran(spark, capsys):
    q = spark.range(0, 1000, numPartitions=2).groupBy((F.col("id") % 5).alias("k")).count()
    with _aqe(spark, True):
        q.collect()
        q.explain()
    out = capsys.readouterr().out
    assert "== Adaptive execution of the last run" in out
    assert "coalesce partitions" in out and "adaptive: 1 task" in out
    report = spark.lastJob()._repr_html_()
    assert "Adaptive execution" in report and "coalesce partitions" in report
    assert "adaptive change" in repr(spark.lastJob())


def test_a_join_side_estimated_500_times_too_big_is_broadcast_and_the_other_side_never_shuffled(spark):
    facts = spark.range(0, 200_000, numPartitions=2).withColumn("k", F.col("id") % 50_000)
    # The estimator cannot see that only 1 id in 1000 passes: it plans for 20,000 rows where 200 come.
    rare = spark.range(0, 200_000, numPartitions=2).filter(F.col("id") % 1000 == 7).withColumnRenamed("id", "k")
    q = facts.join(rare, "k").groupBy().agg(F.count("*").alias("n"), F.sum("id").alias("s"))
    planned = {"spark__sql__autoBroadcastJoinThreshold": "64k", "quiver__sql__join__broadcastByCostMaxBytes": "-1"}
    with _aqe(spark, False, **planned):
        assert "ShuffledHashJoin" in q._execution().stages.describe()
        off = _rows(q)
        stages_off = len(spark.lastJob().stages)
    with _aqe(spark, True, **planned):
        on = _rows(q)
        job = spark.lastJob()
    assert on == off
    assert any("broadcast join" in line for line in job.adaptive), job.adaptive
    assert len(job.stages) == stages_off - 1  # the facts side's map stage was folded into the join's
    assert "BroadcastHashJoin" in job.final_stages and "adaptive: stage" in job.final_stages


def test_an_empty_side_short_circuits_the_join_and_the_stages_only_it_needed(spark):
    facts = spark.range(0, 100_000, numPartitions=2).withColumn("k", F.col("id") % 100)
    none = spark.range(0, 1000, numPartitions=2).filter(F.col("id") < 0).withColumnRenamed("id", "k")
    q = facts.join(none, "k").groupBy("k").count()
    with _aqe(spark, True, spark__sql__autoBroadcastJoinThreshold="-1"):
        assert q.collect() == []
        job = spark.lastJob()
        planned = q._execution().stages.stages
    assert any("empty relation" in line for line in job.adaptive), job.adaptive
    # The facts side's map stage never ran: nothing read it once the join was known to be empty.
    facts_stage = next(s.id for s in planned if "Range (0, 100000" in s.root.tree_string())
    assert facts_stage not in {t.stage_id for t in job.tasks}
    assert len({t.stage_id for t in job.tasks}) == len(planned) - 1
    with _aqe(spark, False, spark__sql__autoBroadcastJoinThreshold="-1"):
        assert q.collect() == []


def test_a_skewed_key_is_joined_by_several_tasks_with_the_same_answer(spark):
    n = 400_000
    facts = (spark.range(0, n, numPartitions=4)
             .withColumn("k", F.when(F.col("id") % 10 < 3, F.lit(0)).otherwise(F.col("id") % 997)))
    dim = spark.range(0, 997, numPartitions=2).withColumnRenamed("id", "k").withColumn("w", F.col("k") * 2)
    q = facts.join(dim, "k").groupBy().agg(F.count("*").alias("n"), F.sum("w").alias("sw"), F.sum("id").alias("s"))
    skew = {"spark__sql__autoBroadcastJoinThreshold": "-1",
            "spark__sql__adaptive__skewJoin__skewedPartitionThresholdInBytes": "256k",
            "spark__sql__adaptive__skewJoin__skewedPartitionFactor": "2",
            "spark__sql__adaptive__advisoryPartitionSizeInBytes": "256k",
            "spark__sql__shuffle__partitions": "8"}
    with _aqe(spark, True, **skew):
        on = _rows(q)
        job = spark.lastJob()
    with _aqe(spark, False, **skew):
        off = _rows(q)
    assert on == off
    assert on[0][0] == n
    assert any(line.split(": ", 1)[1].startswith("skew join") for line in job.adaptive), job.adaptive
    # The join's stage ran more tasks than its 8 shuffle partitions: the skewed one was split.
    assert max(s.tasks for s in job.stages) > 8


@pytest.mark.parametrize("how", ["inner", "left", "right", "full", "left_semi", "left_anti"])
def test_every_join_type_keeps_its_answer_with_adaptive_execution(spark, how):
    left = spark.range(0, 3000, numPartitions=3).withColumn("k", F.col("id") % 50)
    right = spark.range(0, 40, numPartitions=2).withColumnRenamed("id", "k").withColumn("v", F.col("k") * 3)
    q = left.join(right, "k", how)
    with _aqe(spark, False, spark__sql__autoBroadcastJoinThreshold="-1"):
        off = _rows(q)
    with _aqe(spark, True, spark__sql__autoBroadcastJoinThreshold="-1",
              spark__sql__adaptive__autoBroadcastJoinThreshold="10m"):
        on = _rows(q)
    assert on == off


def test_a_query_with_no_shuffle_partitions_set_starts_with_as_many_as_its_size_asks(spark):
    from quiver.planners.adaptive import MAX_INITIAL_PARTITIONS

    previous = spark.conf.get("spark.sql.shuffle.partitions", None)
    spark.conf.unset("spark.sql.shuffle.partitions")
    try:
        small = spark.range(0, 100).groupBy((F.col("id") % 3).alias("k")).count()
        assert small._execution().stages.result.num_partitions == 8
        big = spark.range(0, 1_000_000).groupBy("id").count()
        assert big._execution().stages.result.num_partitions == 8  # each of 8 fits a task's share of memory
        with _conf(spark, quiver__memory__limit="4m"):
            # 16 MiB estimated, and a task may hold 4 MiB / (2 tasks x 4) = 512 KiB: 32 partitions.
            assert 8 < big._execution().stages.result.num_partitions <= MAX_INITIAL_PARTITIONS
        with _conf(spark, spark__sql__adaptive__coalescePartitions__initialPartitionNum="13"):
            assert small._execution().stages.result.num_partitions == 13
    finally:
        if previous is not None:
            spark.conf.set("spark.sql.shuffle.partitions", previous)


def test_the_job_report_lists_the_adaptive_changes(spark, tmp_path):
    with _aqe(spark, True):
        spark.range(0, 1000, numPartitions=2).groupBy((F.col("id") % 5).alias("k")).count().collect()
    page = Path(spark.lastJob().report(tmp_path / "job.html")).read_text(encoding="utf-8")
    assert "<h2>Adaptive execution</h2>" in page and "Stages as they ran" in page


def test_a_stage_placed_on_a_device_gets_partitions_sized_for_that_device(spark):
    q = spark.range(0, 400_000, numPartitions=2).groupBy((F.col("id") % 100_000).alias("k")).agg(F.sum("id"))
    with _aqe(spark, True, spark__sql__shuffle__partitions="8"):
        on_cpu = _rows(q)
        cpu_job = spark.lastJob()
    with _aqe(spark, True, spark__sql__shuffle__partitions="8", quiver__devices="cpu,gpu:emulated",
              quiver__placement="gpu"):
        on_gpu = _rows(q)
        gpu_job = spark.lastJob()
    assert on_cpu == on_gpu
    # On the CPU, the reduce side is cut for both cores; on the device, into one partition its memory holds.
    assert cpu_job.stages[-1].tasks > 1 and gpu_job.stages[-1].tasks == 1
    assert any("sized for gpu:0" in line for line in gpu_job.adaptive), gpu_job.adaptive



def _gpu_profile(tmp_path: Path, memory_bytes: int, link_bytes_per_s: float | None = None) -> str:
    """The path of a GPU profile like the shipped H100's with `memory_bytes` of memory and, where given, a host
    link of that speed (so slow that the cost model keeps a stage on the CPU)."""
    from importlib import resources

    profile = json.loads(resources.files("quiver.executors").joinpath("profiles", "nvidia-h100.json")
                         .read_text(encoding="utf-8"))
    profile.update(name="test-gpu", memory_bytes=memory_bytes)
    if link_bytes_per_s is not None:
        profile.update(host_to_device_bytes_per_s=link_bytes_per_s, device_to_host_bytes_per_s=link_bytes_per_s)
    path = tmp_path / "gpu.json"
    path.write_text(json.dumps(profile), encoding="utf-8")
    return str(path)


# 30% of the rows hold key 0, so a sort by the key puts them in one range partition no split can cut.
_SKEWED_SORT = {"spark__sql__adaptive__skewJoin__skewedPartitionThresholdInBytes": "256k",
                "spark__sql__adaptive__skewJoin__skewedPartitionFactor": "2",
                "spark__sql__adaptive__advisoryPartitionSizeInBytes": "256k",
                "spark__sql__shuffle__partitions": "8"}


def _skewed_sort(spark):
    return (spark.range(0, 400_000, numPartitions=4)
            .withColumn("k", F.when(F.col("id") % 10 < 3, F.lit(0)).otherwise(F.col("id") % 997))
            .orderBy("k"))


def _sort_tasks(job) -> dict[int, tuple[str, ...]]:
    """The devices of each task of the job's sort stage (its last), by partition."""
    last = job.stages[-1].stage_id
    return {t.partition: t.devices for t in job.tasks if t.stage_id == last and t.error is None}


def _keys_and_ids(rows) -> tuple[list[int], list[int]]:
    return [r.k for r in rows], sorted(r.id for r in rows)


def test_a_skewed_task_over_a_cpu_tasks_share_of_the_budget_runs_on_the_gpu_that_holds_it(spark, tmp_path):
    with _aqe(spark, True, **_SKEWED_SORT, quiver__memory__limit="8m"):
        on_cpu = _keys_and_ids(_skewed_sort(spark).collect())
    # The GPU's link is so slow that the cost model keeps the sort on the CPU, but its memory holds the skewed task.
    with _aqe(spark, True, **_SKEWED_SORT, quiver__memory__limit="8m", quiver__devices="cpu,gpu:emulated",
              quiver__profile__gpu=_gpu_profile(tmp_path, 72_000_000_000, link_bytes_per_s=1e5)):
        moved = _keys_and_ids(_skewed_sort(spark).collect())
        job = spark.lastJob()
    assert moved == on_cpu and on_cpu[0] == sorted(on_cpu[0])
    devices = _sort_tasks(job)
    assert [p for p, d in devices.items() if d == ("gpu:0 (emulated)",)] == [0], devices
    assert all(d == ("cpu:0",) for p, d in devices.items() if p != 0)
    line = next(line for line in job.adaptive if "skewed task placement" in line)
    assert "over what a task may hold on cpu:0 (1.0 MiB a task): it runs on gpu:0 (emulated)" in line
    with _aqe(spark, False, **_SKEWED_SORT, quiver__memory__limit="8m", quiver__devices="cpu,gpu:emulated",
              quiver__profile__gpu=_gpu_profile(tmp_path, 72_000_000_000, link_bytes_per_s=1e5)):
        _skewed_sort(spark).collect()
        assert all(d == ("cpu:0",) for d in _sort_tasks(spark.lastJob()).values())


def test_a_skewed_task_a_small_gpu_cannot_hold_runs_on_the_cpu(spark, tmp_path):
    small = {**_SKEWED_SORT, "quiver__devices": "cpu,gpu:emulated",
             "quiver__profile__gpu": _gpu_profile(tmp_path, 12_000_000),
             "spark__sql__adaptive__coalescePartitions__enabled": "false"}
    with _aqe(spark, True, **small):
        rows = _keys_and_ids(_skewed_sort(spark).collect())
        job = spark.lastJob()
    with _aqe(spark, True, **_SKEWED_SORT):
        assert rows == _keys_and_ids(_skewed_sort(spark).collect())
    devices = _sort_tasks(job)
    assert devices[0] == ("cpu:0",) and all(d == ("gpu:0 (emulated)",) for p, d in devices.items() if p != 0), devices
    assert any("it runs on cpu:0" in line for line in job.adaptive), job.adaptive
    assert job.stages[-1].fallbacks == 0
