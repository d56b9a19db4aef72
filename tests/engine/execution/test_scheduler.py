"""quiver/engine/execution/scheduler.py: retries, the error a job that keeps failing raises, and shuffle blocks
freed once read. Failures are injected through a connector `Source` whose `read()` raises."""
from __future__ import annotations

import threading
from collections import Counter

import pyarrow as pa
import pytest

from quiver import functions as F
from quiver.connectors.base import Source, SourceStatistics
from quiver.engine.core.errors import TaskFailedError
from quiver.engine.execution.scheduler import JobListener


class FlakySource:
    """Splits of one small table; `read` raises for the first `failures` attempts of each split."""

    def __init__(self, splits: int = 3, failures: int = 1, error: type[Exception] = RuntimeError):
        self.n = splits
        self.failures = failures
        self.error = error
        self.reads: Counter = Counter()
        self._lock = threading.Lock()

    def describe(self) -> str:
        return f"flaky[{self.n} splits]"

    def schema(self) -> pa.Schema:
        return pa.schema([pa.field("k", pa.int64()), pa.field("v", pa.int64())])

    def statistics(self) -> SourceStatistics:
        return SourceStatistics(num_rows=self.n * 10, size_bytes=self.n * 160)

    def splits(self, target: int):
        return list(range(self.n))

    def read(self, split, columns, predicate):
        with self._lock:
            self.reads[split] += 1
            attempt = self.reads[split]
        if attempt <= self.failures:
            raise self.error(f"injected failure reading split {split} (attempt {attempt})")
        table = pa.table({"k": [i % 4 for i in range(10)], "v": [split * 10 + i for i in range(10)]})
        yield from table.select(columns or table.column_names).to_batches()


def _frame(spark, source):
    assert isinstance(source, Source)
    return spark._dataframe_from_source(source)


def test_task_that_fails_once_is_retried_and_the_job_succeeds(spark, partitions):
    source = FlakySource(splits=3, failures=1)
    rows = _frame(spark, source).groupBy("k").agg(F.sum("v").alias("s")).orderBy("k").collect()
    assert [(r.k, r.s) for r in rows] == [(k, sum(s * 10 + i for s in range(3) for i in range(10) if i % 4 == k))
                                          for k in range(4)]
    assert source.reads == Counter({0: 2, 1: 2, 2: 2})


def test_task_that_always_fails_names_stage_task_partition_and_chains_the_cause(spark, partitions):
    source = FlakySource(splits=2, failures=10**6, error=ValueError)
    with pytest.raises(TaskFailedError) as err:
        _frame(spark, source).groupBy("k").count().collect()
    e = err.value
    max_failures = spark.conf.max_failures()
    assert isinstance(e.__cause__, ValueError) and "injected failure" in str(e.__cause__)
    assert e.attempts == max_failures
    assert e.partition in (0, 1)
    message = str(e)
    assert f"Task {e.partition} in stage {e.stage_id}" in message
    assert f"partition {e.partition}" in message
    assert f"failed {max_failures} times" in message and "ValueError" in message
    assert source.reads[e.partition] == max_failures


def test_failure_in_the_result_stage_is_reported_too(spark):
    source = FlakySource(splits=1, failures=10**6)
    with pytest.raises(TaskFailedError) as err:
        _frame(spark, source).collect()
    assert err.value.stage_id == 0 and isinstance(err.value.__cause__, RuntimeError)


def _job_blocks(spark) -> int:
    job = spark._context.scheduler.last_job
    return spark._context.store.nbytes(f"job{job.job_id}") + sum(
        len(spark._context.store.blocks_of(f"job{job.job_id}", s.stage_id)) for s in job.stages)


def test_shuffle_blocks_are_freed_after_the_job(spark, partitions):
    df = spark.range(0, 1000, numPartitions=4).withColumn("k", F.col("id") % 7)
    rows = df.groupBy("k").count().orderBy("k").collect()
    assert [r["count"] for r in rows] == [143, 143, 143, 143, 143, 143, 142]
    assert len(spark._context.scheduler.last_job.stages) >= 2
    assert _job_blocks(spark) == 0


def test_shuffle_blocks_are_freed_after_a_failed_job(spark):
    source = FlakySource(splits=2, failures=10**6)
    with pytest.raises(TaskFailedError):
        _frame(spark, source).union(spark.range(5).select(F.col("id").alias("k"), F.col("id").alias("v"))) \
            .groupBy("k").count().collect()
    assert spark._context.store.nbytes() == spark._context.store.nbytes("cache")


def test_parent_blocks_are_released_once_their_reader_stage_finishes(spark):
    """groupBy then orderBy: stage 0 (partial agg) is read only by stage 1 (final agg, range
    map side), so its blocks are gone while the result stage runs."""
    previous = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", 3)
    try:
        df = spark.range(0, 300, numPartitions=3).withColumn("k", F.col("id") % 5).groupBy("k").count().orderBy("k")
        spark.range(1).collect()  # so `last_job` names the job before ours
        qe = df._execution()
        stages = qe.stages.stages
        assert len(stages) == 3
        seen = []

        def result_task(p, batches):
            ns, store = f"job{spark._context.scheduler.last_job.job_id + 1}", spark._context.store
            seen.append((len(store.blocks_of(ns, stages[0].id)), len(store.blocks_of(ns, stages[1].id))))
            return sum(b.num_rows for b in batches)

        assert sum(qe.run(result_task)) == 5
        assert all(first == 0 and second > 0 for first, second in seen), seen
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", previous)


def test_job_metrics_count_stages_tasks_and_rows(spark):
    spark.range(0, 100, numPartitions=4).groupBy((F.col("id") % 3).alias("k")).count().collect()
    job = spark._context.scheduler.last_job
    assert job.stages[0].tasks == 4
    assert job.stages[0].rows_written > 0 and job.seconds > 0


class _TaskEvents(JobListener):
    """Every task start and end of the jobs it hears, with the stage's counts as each listener saw them."""

    def __init__(self):
        self.events: list[tuple[str, int, int, int, int]] = []

    def on_task_start(self, job, stage, partition):
        self.events.append(("start", stage.stage_id, partition, stage.tasks_done, stage.tasks_running))

    def on_task_end(self, job, stage, task):
        self.events.append(("end", stage.stage_id, task.partition, stage.tasks_done, stage.tasks_running))


def test_listeners_hear_each_task_start_before_its_end_with_the_running_count(spark):
    """Progress moves as tasks start: each start comes before its end and counts the task as running."""
    heard = _TaskEvents()
    spark._context.scheduler.listeners.append(heard)
    try:
        spark.range(0, 400, numPartitions=4).groupBy((F.col("id") % 5).alias("k")).count().collect()
    finally:
        spark._context.scheduler.listeners.remove(heard)
    job = spark._context.scheduler.last_job
    starts = [e for e in heard.events if e[0] == "start"]
    ends = [e for e in heard.events if e[0] == "end"]
    assert len(starts) == len(ends) == sum(s.tasks for s in job.stages)
    for _, stage, partition, done, running in starts:
        assert running >= 1  # counted as it starts
        assert heard.events.index(("start", stage, partition, done, running)) < next(
            i for i, e in enumerate(heard.events) if e[:3] == ("end", stage, partition))
    first_stage = job.stages[0].stage_id
    assert any(e[3] == 0 for e in starts if e[1] == first_stage)  # the display moves before any task ends
    assert all(s.tasks_running == 0 and s.tasks_done == s.tasks for s in job.stages)
