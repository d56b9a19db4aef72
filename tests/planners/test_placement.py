"""Device placement: the decisions that matter, read from the placement and from explain().

Sizes come from the planner's estimates, so `spark.range` stands in for tables of any size
without materialising them (only plans are made here, nothing runs on a billion rows).
"""
from __future__ import annotations

import json

import pytest

from quiver import functions as F
from quiver.engine.core.errors import ConfigurationError
from quiver.planners.cost import load_profile


def settings(conf_override, **values):
    return conf_override({k.replace("_", "."): v for k, v in values.items()})


def gpu(conf_override, placement="cost", **extra):
    return settings(conf_override, quiver_devices="cpu,gpu:emulated", quiver_placement=placement, **extra)


def placements(spark, df):
    """{operator name: set of device kinds} over every stage of `df`'s plan."""
    qe = df._execution()
    out: dict[str, set[str]] = {}
    for stage in qe.stages.stages:
        for op in spark.place(stage.id, stage.root).operators:
            out.setdefault(op.operator, set()).add(op.device.kind)
    return out


def big_join(spark, rows: int):
    left = spark.range(0, rows).withColumn("k", F.col("id") % (rows // 2)).withColumn("v", F.col("id") * 2)
    right = spark.range(0, rows).withColumnRenamed("id", "k2").withColumn("w", F.col("k2") + 1)
    return left.join(right, left.k == right.k2).groupBy("k").agg(F.sum("v").alias("s"), F.count("*").alias("n"))


def test_tiny_inputs_stay_on_the_cpu(spark, conf_override):
    df = spark.range(0, 1000).filter(F.col("id") > 10).groupBy((F.col("id") % 7).alias("g")).agg(F.sum("id"))
    with gpu(conf_override):
        kinds = placements(spark, df)
    assert all(k == {"cpu"} for k in kinds.values()), kinds


def test_transfer_bound_filter_over_host_data_stays_on_the_cpu(spark, conf_override):
    df = spark.range(0, 200_000_000).filter(F.col("id") % 3 == 0)
    with gpu(conf_override):
        kinds = placements(spark, df)
    assert kinds["Filter"] == {"cpu"}


def test_large_join_and_high_cardinality_aggregate_go_to_the_gpu(spark, conf_override):
    df = big_join(spark, 2_000_000_000)
    with gpu(conf_override):
        kinds = placements(spark, df)
        text = df._execution().placement_string()
    joins = [name for name in kinds if name.startswith("HashJoin")]
    assert joins and all(kinds[j] == {"gpu"} for j in joins), kinds
    assert kinds["HashAggregate(partial)"] == {"gpu"}, kinds
    assert "gpu:0 (emulated)" in text


def test_a_working_set_over_device_memory_does_not_go_there(spark, conf_override, tmp_path):
    small = json.loads(load_profile("nvidia-h200").to_json())
    small["name"] = "tiny-gpu"
    small["memory_bytes"] = 64 << 20
    path = tmp_path / "tiny-gpu.json"
    path.write_text(json.dumps(small))
    df = big_join(spark, 2_000_000_000)
    with gpu(conf_override, quiver_profile_gpu=str(path)):
        kinds = placements(spark, df)
        text = df._execution().placement_string()
    assert all(k == {"cpu"} for n, k in kinds.items() if n.startswith(("HashJoin", "HashAggregate"))), kinds
    assert "working set" in text


def test_forced_placement_puts_every_supported_operator_on_the_device(spark, conf_override):
    df = spark.range(0, 1000).filter(F.col("id") > 10).groupBy((F.col("id") % 7).alias("g")).agg(F.sum("id"))
    with gpu(conf_override, placement="gpu"):
        kinds = placements(spark, df)
    assert kinds["Filter"] == {"gpu"}
    assert kinds["HashAggregate(partial)"] == {"gpu"}
    assert kinds["Range"] == {"cpu"}  # host data is read on the host
    with gpu(conf_override, placement="cpu"):
        kinds = placements(spark, df)
    assert all(k == {"cpu"} for k in kinds.values())


def test_explain_shows_device_size_and_cost_per_candidate(spark, conf_override, capsys):
    df = big_join(spark, 2_000_000_000)
    with gpu(conf_override):
        df.explain()
    out = capsys.readouterr().out
    placement = out.split("== Placement ==")[1]
    line = next(ln for ln in placement.splitlines() if "HashAggregate(partial)" in ln)
    assert " on gpu:0 (emulated)" in line
    assert "rows≈" in line and "bytes≈" in line
    assert "cpu:0 " in line.split("cost:")[1] and "gpu:0 (emulated) " in line.split("cost:")[1]


def test_unsupported_operators_explain_why(spark, conf_override):
    df = spark.range(0, 2_000_000_000).groupBy((F.col("id") % 1000).alias("g")).agg(F.countDistinct("id"))
    with gpu(conf_override, placement="gpu"):
        text = df._execution().placement_string()
    assert "has no device kernel" in text


def test_device_list_errors_name_the_entry(spark):
    with pytest.raises(ConfigurationError, match="'tpu'"):
        spark.conf.set("quiver.devices", "cpu,tpu")
    with pytest.raises(ConfigurationError, match="cost, cpu, gpu, npu"):
        spark.conf.set("quiver.placement", "fastest")


def test_a_real_gpu_without_cuda_says_to_use_the_emulated_one(spark, conf_override):
    with settings(conf_override, quiver_devices="cpu,gpu"):
        with pytest.raises(ConfigurationError, match="gpu:emulated"):
            spark.range(0, 10).collect()


def test_a_device_hint_pins_the_operator(spark, conf_override):
    base = spark.range(0, 1000).filter(F.col("id") > 10)
    pinned = base.hint("device", "gpu").groupBy((F.col("id") % 7).alias("g")).agg(F.sum("id"))
    with gpu(conf_override):
        kinds = placements(spark, pinned)
        text = pinned._execution().placement_string()
    assert kinds["Filter"] == {"gpu"}, kinds
    assert kinds["HashAggregate(partial)"] == {"cpu"}, kinds  # tiny, and not pinned
    assert "pinned to gpu by a hint" in text
    with gpu(conf_override):
        assert sorted(pinned.collect()) == sorted(base.groupBy((F.col("id") % 7).alias("g")).agg(F.sum("id")).collect())


def test_a_device_hint_names_the_valid_kinds(spark):
    with pytest.raises(ConfigurationError, match="cpu, gpu, npu"):
        spark.range(3).hint("device", "tpu")


def test_later_stages_are_placed_with_the_finished_stages_actual_sizes(spark, conf_override):
    df = spark.range(0, 50_000).filter(F.col("id") % 7 == 0).groupBy((F.col("id") % 10).alias("g")).agg(F.count("*"))
    with gpu(conf_override):
        spark.last_placements.clear()
        df.collect()
        job = spark._context.scheduler.last_job
    written = {m.stage_id: m.rows_written for m in job.stages}
    reads = [op for p in spark.last_placements.values() for op in p.operators if op.operator.startswith("ShuffleRead")]
    assert reads
    for op in reads:
        stage = int(op.operator.split("stage ")[1].rstrip(")"))
        assert op.rows == written[stage], (op, written)


def test_data_cached_on_the_device_is_read_there_without_a_transfer(spark, conf_override):
    with gpu(conf_override, quiver_cache_device="gpu"):
        cached = spark.range(0, 20_000).withColumn("v", F.col("id") * 3).cache()
        cached.count()
        query = cached.filter(F.col("v") % 2 == 0).groupBy((F.col("id") % 10).alias("g")).agg(F.sum("v").alias("s"))
        on_host = spark.range(0, 20_000).withColumn("v", F.col("id") * 3).filter(F.col("v") % 2 == 0)
        cached_plan = [op for s in query._execution().stages.stages
                       for op in spark.place(s.id, s.root).operators]
        host_plan = [op for s in on_host._execution().stages.stages for op in spark.place(s.id, s.root).operators]
        with settings(conf_override, quiver_placement="gpu"):
            forced = sorted(query.collect())
            used = {d for s in spark._context.scheduler.last_job.stages for d in s.devices}
        cached.unpersist()
    expected = sorted(spark.range(0, 20_000).withColumn("v", F.col("id") * 3).filter(F.col("v") % 2 == 0)
                      .groupBy((F.col("id") % 10).alias("g")).agg(F.sum("v").alias("s")).collect())
    assert forced == expected and "gpu:0 (emulated)" in used
    scan = next(op for op in cached_plan if op.operator == "Cached")
    assert next(c for c in scan.costs if c.device.startswith("gpu")).compute_s is not None  # lives there too
    cached_filter = next(op for op in cached_plan if op.operator == "Filter")
    host_filter = next(op for op in host_plan if op.operator == "Filter")
    gpu_cost = lambda op: next(c for c in op.costs if c.device.startswith("gpu"))  # noqa: E731
    assert gpu_cost(cached_filter).transfer_in_s == 0 < gpu_cost(host_filter).transfer_in_s


def test_the_device_cache_must_name_a_configured_device(spark, conf_override):
    with settings(conf_override, quiver_devices="cpu", quiver_cache_device="npu"):
        with pytest.raises(ConfigurationError, match="lists no npu"):
            spark.range(0, 10).cache().count()


def test_the_runtimes_device_counts_spread_the_cost(spark, conf_override):
    """A Ray cluster reports how many CPUs and GPUs it has: a stage spreads over them, so thousands of
    cluster cores take the join one GPU wins on one host, and enough GPUs (each with its own link to its
    host) win it back."""
    import dataclasses

    from quiver.planners.placement import place_stage

    df = big_join(spark, 2_000_000_000)
    with gpu(conf_override):
        stages = df._execution().stages.stages
        cpu, device = spark.placement_candidates()

        def join_devices(candidates):
            kinds = set()
            for stage in stages:
                for op in place_stage(stage.id, stage.root, candidates, "cost").operators:
                    if op.operator.startswith("HashJoin"):
                        kinds.add(op.device.kind)
            return kinds

        assert join_devices([cpu, device]) == {"gpu"}
        assert join_devices([dataclasses.replace(cpu, units=20000), device]) == {"cpu"}
        assert join_devices([dataclasses.replace(cpu, units=20000), dataclasses.replace(device, units=2000)]) == {"gpu"}
