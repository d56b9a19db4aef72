"""quiver/executors/device/array_executor.py under a device whose free memory is smaller than its profile says:
device operators split their input into chunks that fit, an operator whose whole input must be held and does
not fit runs on the CPU alone (the rest of the task stays on the device), and a device allocation that fails
anyway reruns the task on the CPU. Every answer is the CPU's."""
from __future__ import annotations

import pyarrow as pa
import pytest

from quiver import functions as F
from quiver.executors.device import array_executor
from quiver.executors.device.array_executor import ArrayExecutor
from tests.executors.device.test_array_executor import _devices, _fallbacks, on_emulated_gpu


@pytest.fixture
def device_free(monkeypatch):
    """Set the emulated device's free memory (bytes); count the operators handed to the CPU and the chunks."""
    seen = {"on_host": [], "chunks": 0}
    original_on_host, original_chunks = ArrayExecutor._on_host, ArrayExecutor._chunks

    def on_host(self, plan, partition, ctx, pulled):
        seen["on_host"].append(type(plan).__name__)
        return original_on_host(self, plan, partition, ctx, pulled)

    def chunks(self, batches, operator, reserved=0):
        for chunk in original_chunks(self, batches, operator, reserved):
            seen["chunks"] += 1
            yield chunk

    monkeypatch.setattr(ArrayExecutor, "_on_host", on_host)
    monkeypatch.setattr(ArrayExecutor, "_chunks", chunks)

    def set_free(nbytes: int | None) -> dict:
        monkeypatch.setattr(ArrayExecutor, "free_bytes", lambda self: nbytes)
        seen["on_host"].clear()
        seen["chunks"] = 0
        return seen

    return set_free


def _facts(spark, rows: int = 6000):
    """Rows in batches of 100 (so a task streams many), keys with repeats, some nulls."""
    table = pa.table({
        "k": pa.array([i % 700 for i in range(rows)], pa.int64()),
        "v": pa.array([float((i * 7919) % 1000) if i % 13 else None for i in range(rows)]),
        "n": pa.array([(i * 31) % 97 for i in range(rows)], pa.int64()),
    })
    return spark.createDataFrame(pa.Table.from_batches(table.to_batches(max_chunksize=100)))


def _dims(spark):
    return spark.createDataFrame(pa.table({"dk": pa.array(range(0, 700, 2), pa.int64()),
                                           "label": pa.array([i * 10 for i in range(0, 700, 2)], pa.int64())}))


def _same_on_a_small_device(spark, conf_override, device_free, make, free: int) -> dict:
    """`make()` on the CPU and on an emulated GPU with `free` bytes free: the same rows, no task rerun."""
    want = make().toArrow()
    with on_emulated_gpu(spark, conf_override):
        seen = device_free(free)
        got = make().toArrow()
        assert "gpu:0 (emulated)" in _devices(spark)
        assert _fallbacks(spark) == 0, "no task should rerun on the CPU"
    assert got.equals(want)
    return seen


def test_a_partial_aggregate_and_a_join_probe_go_through_in_chunks_that_fit(spark, conf_override, device_free):
    def make():
        return (_facts(spark).join(_dims(spark), F.col("k") == F.col("dk"))
                .groupBy("label").agg(F.sum("v").alias("s"), F.count("*").alias("c")).orderBy("label"))

    seen = _same_on_a_small_device(spark, conf_override, device_free, make, free=64 * 1024)
    assert seen["chunks"] > 4 and "HashJoinExec" not in seen["on_host"]


def test_an_aggregate_too_big_for_the_device_runs_on_the_cpu_alone(spark, conf_override, device_free):
    def make():
        return _facts(spark).groupBy("k", "n").agg(F.sum("v").alias("s"), F.max("v").alias("m")).orderBy("k", "n")

    seen = _same_on_a_small_device(spark, conf_override, device_free, make, free=4 * 1024)
    assert "HashAggregateExec" in seen["on_host"]


def test_a_join_whose_build_side_does_not_fit_runs_on_the_cpu_alone(spark, conf_override, device_free):
    def make():
        return (_facts(spark).join(_dims(spark), F.col("k") == F.col("dk"), "left")
                .select("k", "n", "label").orderBy("k", "n", "label"))

    seen = _same_on_a_small_device(spark, conf_override, device_free, make, free=2 * 1024)
    assert "HashJoinExec" in seen["on_host"]


def test_a_sort_too_big_for_the_device_runs_on_the_cpu_and_top_k_goes_in_chunks(spark, conf_override, device_free):
    seen = _same_on_a_small_device(spark, conf_override, device_free,
                                   lambda: _facts(spark).orderBy(F.col("v").desc_nulls_last(), "k", "n"),
                                   free=4 * 1024)
    assert "SortExec" in seen["on_host"]
    seen = _same_on_a_small_device(spark, conf_override, device_free,
                                   lambda: _facts(spark).orderBy("n", F.col("v").desc(), "k").limit(25),
                                   free=16 * 1024)
    assert seen["chunks"] > 2 and "TopKExec" not in seen["on_host"]


def test_with_room_nothing_is_handed_to_the_cpu(spark, conf_override, device_free):
    def make():
        return _facts(spark).groupBy("k").agg(F.sum("v").alias("s")).orderBy("k")

    seen = _same_on_a_small_device(spark, conf_override, device_free, make, free=None)
    assert seen["on_host"] == []


def test_a_device_allocation_that_fails_reruns_the_task_on_the_cpu(spark, conf_override, monkeypatch):
    def make():
        return _facts(spark).groupBy("k").agg(F.sum("v").alias("s")).orderBy("k")

    want = make().toArrow()

    def no_memory(*args, **kwargs):
        raise MemoryError("out of device memory (injected)")

    monkeypatch.setattr(array_executor, "group_by", no_memory)
    with on_emulated_gpu(spark, conf_override):
        got = make().toArrow()
        assert _fallbacks(spark) >= 1
    assert got.equals(want)
