"""quiver/executors/device/array_executor.py through a session: wide decimals run on an emulated GPU while their
values fit 64 bits, and a task whose data does not fit falls back to the CPU with the CPU's answer."""
from __future__ import annotations

import logging
from decimal import Decimal as D

import pyarrow as pa
import pytest

from quiver import functions as F


def on_emulated_gpu(spark, conf_override):
    """Every operator the device supports forced onto an emulated GPU; the previous settings restored after."""
    spark.last_placements.clear()
    return conf_override({"quiver.devices": "cpu,gpu:emulated", "quiver.placement": "gpu"})


def _devices(spark) -> set[str]:
    return {d for s in spark._context.scheduler.last_job.stages for d in s.devices}


def _fallbacks(spark) -> int:
    return sum(s.fallbacks for s in spark._context.scheduler.last_job.stages)


def _aggregates_on_gpu(spark) -> list[str]:
    return [op.operator for p in spark.last_placements.values() for op in p.operators
            if op.operator.startswith("HashAggregate") and op.device.kind == "gpu"]


def _lineitem(spark, extreme: D | None = None):
    """A price (decimal(15,2)) and a discount per row in 5 groups, in chunks of 10 rows (so a task streams
    several batches); `extreme` replaces the price of row 123 (then typed decimal(38,2))."""
    prices = [D(i * 37 % 100_000) + D("0.05") * (i % 20) for i in range(400)]
    price_type = pa.decimal128(15, 2)
    if extreme is not None:
        prices[123] = extreme
        price_type = pa.decimal128(38, 2)
    table = pa.table({
        "g": pa.array([i % 5 for i in range(400)]),
        "price": pa.array(prices, price_type),
        "disc": pa.array([D(i % 11) / 100 for i in range(400)], pa.decimal128(15, 2)),
    })
    return spark.createDataFrame(pa.Table.from_batches(table.to_batches(max_chunksize=10)))


def _revenue(df):
    charge = F.col("price") * (F.lit(1) - F.col("disc"))
    return df.groupBy("g").agg(F.sum(charge).alias("revenue"), F.sum("price").alias("total"),
                               F.avg("price").alias("mean"), F.max(charge).alias("top")).orderBy("g")


def test_a_decimal_38_sum_runs_on_the_emulated_gpu_with_the_cpus_answer(spark, conf_override, partitions):
    df = _revenue(_lineitem(spark))
    want = df.toArrow()
    assert want.schema.field("revenue").type == pa.decimal128(38, 4)
    with on_emulated_gpu(spark, conf_override):
        got = df.toArrow()
        assert "gpu:0 (emulated)" in _devices(spark)
        assert {"HashAggregate(partial)", "HashAggregate(final)"} <= set(_aggregates_on_gpu(spark))
        assert _fallbacks(spark) == 0
    assert got.equals(want)


def test_a_value_beyond_64_bits_makes_the_task_fall_back_with_the_cpus_answer(spark, conf_override, partitions, caplog):
    df = _revenue(_lineitem(spark, extreme=D(10**20)))
    want = df.toArrow()
    assert want.column("total").to_pylist()[3] > 10**20
    with on_emulated_gpu(spark, conf_override), caplog.at_level(logging.WARNING, logger="quiver.scheduler"):
        got = df.toArrow()
        assert _fallbacks(spark) >= 1
        assert _aggregates_on_gpu(spark), "the plan still places the aggregates on the GPU; only the task falls back"
    assert got.equals(want)
    assert any("of stage" in r.message and "falls back to the CPU" in r.message and "'price'" in r.message
               and "100000000000000000000" in r.message for r in caplog.records), caplog.text


def test_a_sum_that_may_leave_64_bits_falls_back_rather_than_wrap(spark, conf_override):
    """Each value fits, their sum does not: the device's exactness check, not the edge, sends it to the CPU."""
    big = D(2**62)
    table = pa.table({"g": pa.array([0, 0, 0, 1]), "x": pa.array([big, big, big, D(5)], pa.decimal128(38, 0))})
    df = spark.createDataFrame(table).groupBy("g").agg(F.sum("x").alias("s")).orderBy("g")
    with on_emulated_gpu(spark, conf_override):
        got = df.toArrow()
        assert _fallbacks(spark) >= 1
    assert got.column("s").to_pylist() == [3 * big, D(5)]


def test_a_fallback_is_not_counted_against_max_failures(spark, conf_override):
    scheduler = spark._context.scheduler
    previous = scheduler.max_failures
    scheduler.max_failures = 1
    try:
        with on_emulated_gpu(spark, conf_override):
            total = _lineitem(spark, extreme=D(-(10**30))).agg(F.sum("price").alias("t")).collect()[0]["t"]
            assert _fallbacks(spark) >= 1
    finally:
        scheduler.max_failures = previous
    assert total == _lineitem(spark, extreme=D(-(10**30))).agg(F.sum("price").alias("t")).collect()[0]["t"]
    assert total < -(10**29)


@pytest.mark.parametrize("extreme", [None, D(10**20)], ids=["fits", "beyond-64-bits"])
def test_a_cached_result_and_a_written_file_hold_each_row_once(spark, conf_override, tmp_path, extreme):
    """A task that falls back reruns from the start: its first attempt leaves no rows behind."""
    df = _lineitem(spark, extreme=extreme).filter(F.col("price") > 0).select("g", "price")
    want = sorted(df.collect())
    with on_emulated_gpu(spark, conf_override):
        cached = df.cache()
        try:
            assert sorted(cached.collect()) == want
        finally:
            cached.unpersist()
        # the device filter streams the batches before row 123's into the file, then falls back
        df.write.parquet(str(tmp_path / "out"))
        assert _fallbacks(spark) == (0 if extreme is None else 1)
    assert sorted(spark.read.parquet(str(tmp_path / "out")).collect()) == want


def test_a_bigint_sum_under_ansi_runs_on_the_gpu_and_an_overflow_still_raises(spark, conf_override):
    small = spark.createDataFrame(pa.table({"g": [i % 3 for i in range(300)], "v": list(range(300))}))
    query = small.groupBy("g").agg(F.sum("v").alias("s")).orderBy("g")
    want = query.toArrow()
    with on_emulated_gpu(spark, conf_override):
        got = query.toArrow()
        assert {"HashAggregate(partial)", "HashAggregate(final)"} <= set(_aggregates_on_gpu(spark))
        assert _fallbacks(spark) == 0
    assert got.equals(want) and got.schema.field("s").type == pa.int64()

    huge = spark.createDataFrame(pa.table({"v": [2**62, 2**62, 2**62]}))
    with on_emulated_gpu(spark, conf_override), pytest.raises(Exception, match="ARITHMETIC_OVERFLOW"):
        huge.agg(F.sum("v")).collect()
    with on_emulated_gpu(spark, conf_override), conf_override({"spark.sql.ansi.enabled": "false"}):
        assert huge.agg(F.sum("v")).collect()[0][0] == -(2**62)  # wraps as Java's long does
