"""compute_current_time: one current time per query, as Spark's ComputeCurrentTime."""
from __future__ import annotations

import datetime as dt

from quiver import functions as F
from quiver.planners.optimizer.current_time import compute_current_time


def test_every_call_reads_the_instant_the_query_was_given(spark):
    df = spark.range(3).select(F.current_timestamp().alias("a"), F.now().alias("b"), F.current_date().alias("c"),
                               F.unix_timestamp().alias("d"))
    now = dt.datetime(2024, 2, 29, 23, 30, 0, 900_000, tzinfo=dt.timezone(dt.timedelta(hours=-2)))
    plan = compute_current_time(df._plan, now)
    values = [p.child for p in plan.projections]
    instant = dt.datetime(2024, 3, 1, 1, 30, 0, 900_000)
    assert [v.value for v in values] == [instant, instant, dt.date(2024, 3, 1), 1709256600]


def test_a_query_sees_one_current_time_across_rows_batches_and_tasks(spark):
    df = spark.range(0, 200_000, numPartitions=4).select(
        F.current_timestamp().alias("t"), (F.current_timestamp() == F.now()).alias("same"))
    rows = df.distinct().collect()
    assert len(rows) == 1 and rows[0]["same"] is True
