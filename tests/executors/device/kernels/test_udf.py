"""UDFs on an emulated GPU: numba UDFs run as compiled kernels on the device's arrays, and
mapInArrow with a resource profile asking for a GPU runs in the GPU executor's task."""
from __future__ import annotations

import pyarrow as pa

import quiver
from quiver import functions as F
from quiver.resource import ResourceProfileBuilder, TaskResourceRequests


def emulated_gpu(conf_override, placement: str):
    return conf_override({"quiver.devices": "cpu,gpu:emulated", "quiver.placement": placement})


def devices_used(spark) -> set[str]:
    return {d for s in spark._context.scheduler.last_job.stages for d in s.devices}


def test_a_numba_udf_runs_on_the_device_with_the_cpus_answer(spark, conf_override):
    hypot = quiver.udf(lambda x, y: (x * x + y * y) ** 0.5, "double", engine="numba")
    data = spark.createDataFrame(pa.table({"x": pa.array([3.0, None, 5.0, -1.5] * 50),
                                           "y": pa.array([4.0, 1.0, None, 2.0] * 50)}))
    df = data.filter(F.col("x") > -10).select(hypot("x", "y").alias("h"), (F.col("x") + 1).alias("x1"))
    expected = df.toArrow()
    with emulated_gpu(conf_override, "gpu"):
        got = df.toArrow()
        assert "gpu:0 (emulated)" in devices_used(spark)
        text = df._execution().placement_string()
    assert got.equals(expected)
    assert "Project on gpu:0 (emulated)" in text


def test_a_row_udf_stays_on_the_cpu_and_says_why(spark, conf_override):
    shout = F.udf(lambda s: s.upper(), "string")
    df = spark.createDataFrame([("a",), ("b",)], ["s"]).select(shout("s"))
    with emulated_gpu(conf_override, "gpu"):
        text = df._execution().placement_string()
        assert sorted(df.collect()) == [("A",), ("B",)]
    assert "runs Python code on the CPU" in text


def test_map_in_arrow_asking_for_a_gpu_runs_in_the_gpu_executor(spark, conf_override):
    def double(batches):
        for b in batches:
            yield pa.RecordBatch.from_arrays([pa.compute.multiply(b.column(0), 2)], names=["v"])

    profile = ResourceProfileBuilder().require(TaskResourceRequests().resource("gpu", 1)).build
    df = spark.range(0, 100).mapInArrow(double, "v long", profile=profile)
    with emulated_gpu(conf_override, "cost"):
        rows = sorted(r.v for r in df.collect())
        assert "gpu:0 (emulated)" in devices_used(spark)
        text = df._execution().placement_string()
    assert rows == [2 * i for i in range(100)]
    assert "MapInBatches on gpu:0 (emulated)" in text and "pinned to gpu" in text
