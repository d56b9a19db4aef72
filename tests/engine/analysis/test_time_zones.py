"""Binding the session time zone into plans (analysis/time_zones.py): which expressions take it, that a bound
plan binds to itself again, that UTC plans are left alone, and what is refused rather than computed wrong."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from quiver import functions as F
from quiver.engine.analysis.analyzer import analyze
from quiver.engine.analysis.time_zones import analyzing_in_zone, bind_time_zone
from quiver.engine.core.errors import QuiverNotSupported
from quiver.engine.core.expressions import Cast

LA = "America/Los_Angeles"


@pytest.fixture
def in_los_angeles(spark) -> Iterator[None]:
    previous = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", LA)
    yield
    spark.conf.set("spark.sql.session.timeZone", previous)


def test_fields_of_an_instant_are_read_from_its_wall_clock_time(spark, in_los_angeles):
    df = spark.sql("SELECT CAST('2024-07-01 12:00:00' AS TIMESTAMP) AS ts").select(
        F.hour("ts").alias("h"), F.date_format("ts", "HH:mm").alias("t"), F.col("ts").cast("string").alias("s"))
    assert [p.child.sql() for p in df._plan.projections] == [
        "hour(CAST(ts AS TIMESTAMP_NTZ))", "date_format(CAST(ts AS TIMESTAMP_NTZ), HH:mm)", "CAST(ts AS STRING)"]
    assert df._plan.projections[2].child.time_zone == LA
    assert df.collect()[0].asDict() == {"h": 12, "t": "12:00", "s": "2024-07-01 12:00:00"}


def test_a_bound_plan_binds_to_itself_again(spark, in_los_angeles):
    df = spark.sql("SELECT TIMESTAMP '2024-07-01 12:00:00' + INTERVAL 1 DAY AS ts").select(
        F.hour("ts"), F.date_trunc("day", "ts"), F.unix_timestamp(F.col("ts").cast("string")),
        F.from_unixtime(F.lit(0)), F.current_date(), F.to_timestamp(F.lit("2024-01-01 10"), "yyyy-MM-dd HH"))
    plan = df._plan
    with analyzing_in_zone(LA):
        assert analyze(plan) == plan
    assert bind_time_zone(plan, LA) == plan


def test_in_utc_nothing_is_rewritten(spark):
    ts = spark.sql("SELECT CAST('2024-07-01 12:00:00' AS TIMESTAMP) AS ts")
    df = ts.select(F.hour("ts"), F.date_format("ts", "H"))
    assert [p.child.sql() for p in df._plan.projections] == ["hour(ts)", "date_format(ts, H)"]
    assert bind_time_zone(df._plan, "UTC") is df._plan


def test_printing_a_zone_outside_utc_is_refused_not_printed_wrong(spark, in_los_angeles):
    ts = spark.sql("SELECT CAST('2024-07-01 12:00:00' AS TIMESTAMP) AS ts")
    for pattern in ("yyyy-MM-dd HH:mm XXX", "z", "VV", "O"):
        with pytest.raises(QuiverNotSupported, match=r"date_format with a zone pattern letter.*America/Los_Angeles"):
            ts.select(F.date_format("ts", pattern))
    assert ts.select(F.date_format("ts", "HH 'o''clock' 'Z'")).collect()[0][0] == "12 o'clock Z"
    with pytest.raises(QuiverNotSupported, match=r"pattern computed per row"):
        ts.select(F.date_format("ts", F.lit("HH").substr(1, 2)))


def test_a_cast_through_a_wall_clock_time_stays_off_devices_and_the_native_engine(spark, in_los_angeles):
    from quiver.executors.device.kernels.expressions import _cast_reason
    from quiver.executors.native.sql import Untranslatable, expression

    df = spark.sql("SELECT CAST(CAST('2024-07-01 12:00:00' AS TIMESTAMP) AS DATE) AS d")
    cast = df._plan.projections[0].child
    assert isinstance(cast, Cast) and cast.time_zone == LA
    assert "America/Los_Angeles runs on the CPU" in _cast_reason(cast)
    with pytest.raises(Untranslatable):
        expression(cast)
