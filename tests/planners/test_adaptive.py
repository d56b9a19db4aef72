"""quiver/planners/adaptive.py: the stages not yet run, re-planned from what the finished ones really wrote.

The rules are pure functions of stages and statistics, so these tests plan real queries, hand the rules
made-up sizes, and check the rewritten stages (the scheduler applying them end to end is tested in
tests/engine/execution/test_adaptive.py, and its answers against PySpark in tests/compat/test_adaptive.py).
"""
from __future__ import annotations

import pytest

from quiver import Window
from quiver import functions as F
from quiver.engine.core.conf import RuntimeConfig
from quiver.planners.adaptive import (
    AdaptiveSettings,
    ShuffleStatistics,
    TaskRoom,
    adapt_reads,
    coalesce_target,
    device_room,
    oversized_tasks,
    place_skewed_tasks,
    routed_reads,
    split_sizes,
    switch_join,
    task_input_bytes,
    with_map_outputs,
)
from quiver.planners.physical import nodes as P

MIB = 1 << 20


def _stats(stage_id: int, per_map: list[list[int]], rows_per_byte: float = 0.01) -> ShuffleStatistics:
    return ShuffleStatistics(stage_id, tuple(tuple(m) for m in per_map),
                             tuple(tuple(int(b * rows_per_byte) + (1 if b else 0) for b in m) for m in per_map))


def _join_graph(spark, how: str = "inner"):
    """A shuffled join of two scans (broadcasting off), its stages by id, and the join stage."""
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        left = spark.range(0, 2000, numPartitions=2).withColumn("k", F.col("id") % 1000)
        right = spark.range(0, 1000, numPartitions=2).withColumnRenamed("id", "k")
        graph = left.join(right, "k", how)._execution().stages
    finally:
        spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")
    stages = {s.id: s for s in graph.stages}
    join_stage = next(s for s in graph.stages if any(isinstance(n, P.HashJoinExec) for n in s.root.walk()))
    return stages, join_stage


def _join_of(stage) -> P.HashJoinExec:
    return next(n for n in stage.root.walk() if isinstance(n, P.HashJoinExec))


def _sides_in_run_order(join: P.HashJoinExec) -> tuple[P.ShuffleReadExec, P.ShuffleReadExec]:
    """The join's two reads, the one whose stage runs first (a key filter's source, else the build side) first."""
    return tuple(sorted((join.left, join.right), key=lambda r: r.stage_id))


def test_split_sizes_fills_runs_up_to_the_target_and_merges_a_small_tail():
    assert split_sizes([10, 10, 10, 10], 20) == [(0, 2), (2, 4)]
    assert split_sizes([50, 5, 5, 50], 60) == [(0, 3), (3, 4)]
    # A last run under a fifth of the target joins its neighbour when the two stay within 1.2 times it.
    assert split_sizes([100, 10], 100) == [(0, 2)]
    assert split_sizes([100, 30], 100) == [(0, 1), (1, 2)]
    # An item over the target is a run of its own, never split.
    assert split_sizes([5, 500, 5], 100) == [(0, 1), (1, 2), (2, 3)]
    assert split_sizes([], 100) == []


def test_coalesce_target_keeps_parallelism_first_and_never_goes_under_the_minimum_size():
    settings = AdaptiveSettings(min_partitions=2)
    assert coalesce_target(1000, settings) == 1 * MIB  # tiny data: the minimum partition size
    assert coalesce_target(40 * MIB, settings) == 20 * MIB  # two cores: half each
    assert coalesce_target(4000 * MIB, settings) == 64 * MIB  # big data: the advisory size
    assert coalesce_target(40 * MIB, AdaptiveSettings(parallelism_first=False)) == 64 * MIB


def test_small_partitions_are_read_by_one_task(spark):
    spark.conf.set("spark.sql.shuffle.partitions", "8")
    try:
        graph = spark.range(0, 100, numPartitions=2).groupBy((F.col("id") % 5).alias("g")).count()._execution().stages
    finally:
        spark.conf.unset("spark.sql.shuffle.partitions")
    map_stage, result = graph.stages
    assert result.num_partitions == 8
    stats = _stats(map_stage.id, [[100] * 8, [100] * 8])
    adapted, decisions = adapt_reads(result, {map_stage.id: stats}, AdaptiveSettings(min_partitions=2))
    assert adapted.num_partitions == 1
    (read,) = routed_reads(adapted.root)
    assert read.reads == (P.BlockRange(0, 8),)
    assert read.blocks_for(0) == [(m, r) for r in range(8) for m in range(2)]
    assert [d.rule for d in decisions] == ["coalesce partitions"]
    assert "8 partitions of stage 0" in decisions[0].detail and "1 task" in decisions[0].detail


def test_coalescing_is_off_with_its_key_and_with_adaptive_execution(spark):
    graph = spark.range(0, 100, numPartitions=2).groupBy((F.col("id") % 5).alias("g")).count()._execution().stages
    map_stage, result = graph.stages
    stats = {map_stage.id: _stats(map_stage.id, [[1] * result.num_partitions] * 2)}
    for settings in (AdaptiveSettings(coalesce=False), AdaptiveSettings(enabled=False)):
        assert adapt_reads(result, stats, settings) == (result, [])


def test_a_partition_count_the_user_named_is_kept(spark):
    df = spark.range(0, 100, numPartitions=2).repartition(6)
    map_stage, result = df._execution().stages.stages
    read = routed_reads(result.root)[0]
    assert read.fixed
    assert adapt_reads(result, {map_stage.id: _stats(map_stage.id, [[1] * 6] * 2)}, AdaptiveSettings()) == (result, [])
    # By columns without a number, Spark coalesces it (REPARTITION_BY_COL), and so does Quiver.
    by_column = spark.range(0, 100, numPartitions=2).repartition("id")
    map_stage, result = by_column._execution().stages.stages
    adapted, _ = adapt_reads(result, {map_stage.id: _stats(map_stage.id, [[1] * 8] * 2)}, AdaptiveSettings())
    assert adapted.num_partitions == 1


def test_both_sides_of_a_shuffled_join_are_coalesced_alike(spark):
    stages, join_stage = _join_graph(spark)
    left, right = _join_of(join_stage).left, _join_of(join_stage).right
    n = left.partitions
    finished = {left.stage_id: _stats(left.stage_id, [[3 * MIB] * n] * 2),
                right.stage_id: _stats(right.stage_id, [[1 * MIB] * n] * 2)}
    adapted, decisions = adapt_reads(join_stage, finished, AdaptiveSettings(advisory_bytes=16 * MIB))
    reads = routed_reads(adapted.root)
    assert len(reads) == 2 and reads[0].reads == reads[1].reads
    assert adapted.num_partitions == len(reads[0].reads) < n
    assert [d.rule for d in decisions] == ["coalesce partitions"]


def test_a_skewed_partition_is_split_by_map_outputs_and_the_other_side_read_whole_by_each(spark):
    stages, join_stage = _join_graph(spark)
    join = _join_of(join_stage)
    left, right = join.left, join.right
    n = left.partitions
    skewed = [[1 * MIB] * n for _ in range(4)]
    for m in range(4):
        skewed[m][3] = 100 * MIB
    finished = {left.stage_id: _stats(left.stage_id, skewed), right.stage_id: _stats(right.stage_id, [[MIB] * n] * 4)}
    settings = AdaptiveSettings(coalesce=False, skew_threshold=50 * MIB, advisory_bytes=200 * MIB)
    adapted, decisions = adapt_reads(with_map_outputs(join_stage, finished[left.stage_id]), finished, settings)
    assert [d.rule for d in decisions] == ["skew join"]
    assert "partition 3 of stage" in decisions[0].detail and "read in 2 runs" in decisions[0].detail
    new_join = _join_of(adapted)
    assert adapted.num_partitions == n + 1
    # Partition 3 of the left is read in two runs of map outputs; the right's partition 3 by both tasks.
    assert new_join.left.reads[3:5] == (P.BlockRange(3, 4, 0, 2), P.BlockRange(3, 4, 2, 4))
    assert new_join.right.reads[3:5] == (P.BlockRange(3, 4), P.BlockRange(3, 4))
    assert new_join.left.reads[:3] == tuple(P.BlockRange(r, r + 1) for r in range(3))


def test_a_side_the_join_type_keeps_whole_is_not_split(spark):
    """A right outer join must see all of its left side's partition at once: only its right side splits."""
    stages, join_stage = _join_graph(spark, "right")
    join = _join_of(join_stage)
    n = join.left.partitions
    skewed = [[MIB] * n for _ in range(4)]
    for m in range(4):
        skewed[m][2] = 100 * MIB
    finished = {join.left.stage_id: _stats(join.left.stage_id, skewed),
                join.right.stage_id: _stats(join.right.stage_id, [[MIB] * n] * 2)}
    settings = AdaptiveSettings(coalesce=False, skew_threshold=50 * MIB)
    assert adapt_reads(join_stage, finished, settings) == (join_stage, [])


def test_a_shuffled_join_under_a_window_over_its_keys_is_neither_split_nor_switched(spark):
    """A window partitioned by the join key reads the join's output without an exchange, relying on all
    rows of a key being in one task: no split, and no switch to a broadcast over the other side's scan."""
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        left = spark.range(0, 2000, numPartitions=2).withColumn("k", F.col("id") % 1000)
        right = spark.range(0, 1000, numPartitions=2).withColumnRenamed("id", "k")
        graph = left.join(right, "k").withColumn("n", F.count("*").over(Window.partitionBy("k")))._execution().stages
    finally:
        spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")
    join_stage = graph.result
    assert any(isinstance(n, P.WindowExec) for n in join_stage.root.walk())
    join = _join_of(join_stage)
    n = join.left.partitions
    skewed = [[MIB] * n for _ in range(2)]
    skewed[0][1] = skewed[1][1] = 500 * MIB
    finished = {join.left.stage_id: _stats(join.left.stage_id, skewed),
                join.right.stage_id: _stats(join.right.stage_id, [[MIB] * n] * 2)}
    assert adapt_reads(join_stage, finished, AdaptiveSettings(coalesce=False, skew_threshold=MIB)) == (join_stage, [])
    stages = {s.id: s for s in graph.stages}
    first, _ = _sides_in_run_order(join)
    small = {first.stage_id: _stats(first.stage_id, [[10] * n] * 2)}
    assert switch_join(join_stage, stages, small, AdaptiveSettings()) is None


def test_the_build_side_of_a_join_without_a_key_filter_runs_first(spark):
    stages, join_stage = _join_graph(spark, "full")
    join = _join_of(join_stage)
    assert not any(isinstance(n, P.KeyFilterExec) for s in stages.values() for n in s.root.walk())
    assert not join.build_left and join.right.stage_id < join.left.stage_id


def test_a_small_finished_side_turns_the_join_into_a_broadcast_of_it_over_the_other_sides_pipeline(spark):
    stages, join_stage = _join_graph(spark)
    join = _join_of(join_stage)
    first, second = _sides_in_run_order(join)
    finished = {first.stage_id: _stats(first.stage_id, [[100] * first.partitions] * 2)}
    switched = switch_join(join_stage, stages, finished, AdaptiveSettings())
    assert switched is not None
    new_stage, decision = switched
    new_join = _join_of(new_stage)
    on_left = first is join.left
    assert new_join.strategy == ("broadcast-left" if on_left else "broadcast-right")
    assert new_join.reason.startswith("adaptive:")
    build, probe = (new_join.left, new_join.right) if on_left else (new_join.right, new_join.left)
    assert build.broadcast and build.blocks_for(5) == [
        (m, r) for r in range(first.partitions) for m in range(first.map_partitions)]
    # The other side's map stage is not run: its pipeline runs in the join's stage.
    assert probe is stages[second.stage_id].root
    assert second.stage_id not in new_stage.parents and first.stage_id in new_stage.parents
    assert new_stage.num_partitions == stages[second.stage_id].num_partitions
    assert decision.rule == "broadcast join"
    assert f"stage {second.stage_id}'s operators run in this stage" in decision.detail


def test_no_switch_past_the_threshold_for_a_full_join_or_once_both_sides_ran(spark):
    stages, join_stage = _join_graph(spark)
    first, second = _sides_in_run_order(_join_of(join_stage))
    big = {first.stage_id: _stats(first.stage_id, [[20 * MIB] * first.partitions] * 2)}
    assert switch_join(join_stage, stages, big, AdaptiveSettings()) is None
    small = _stats(first.stage_id, [[100] * first.partitions] * 2)
    both = {first.stage_id: small, second.stage_id: _stats(second.stage_id, [[100] * second.partitions] * 2)}
    assert switch_join(join_stage, stages, both, AdaptiveSettings()) is None
    assert switch_join(join_stage, stages, {first.stage_id: small}, AdaptiveSettings(broadcast_threshold=-1)) is None
    stages, full_stage = _join_graph(spark, "full")
    first, _ = _sides_in_run_order(_join_of(full_stage))
    finished = {first.stage_id: _stats(first.stage_id, [[100] * first.partitions] * 2)}
    assert switch_join(full_stage, stages, finished, AdaptiveSettings()) is None


def _empty(read: P.ShuffleReadExec) -> ShuffleStatistics:
    return ShuffleStatistics(read.stage_id, ((0,) * read.partitions,) * 2, ((0,) * read.partitions,) * 2)


@pytest.mark.parametrize("how", ["inner", "left_semi", "left_anti", "right", "left"])
def test_an_empty_first_side_empties_a_join_that_then_has_no_rows(spark, how):
    stages, join_stage = _join_graph(spark, how)
    first, second = _sides_in_run_order(_join_of(join_stage))
    new_stage, decision = switch_join(join_stage, stages, {first.stage_id: _empty(first)}, AdaptiveSettings())
    assert decision.rule == "empty relation"
    assert not any(isinstance(n, (P.HashJoinExec, P.ShuffleReadExec)) for n in new_stage.root.walk())
    assert new_stage.parents == () and new_stage.num_partitions == 1


def test_an_empty_side_of_a_full_join_leaves_the_other_sides_rows(spark):
    stages, join_stage = _join_graph(spark, "full")
    first, _ = _sides_in_run_order(_join_of(join_stage))
    assert switch_join(join_stage, stages, {first.stage_id: _empty(first)}, AdaptiveSettings()) is None


def test_reads_of_a_finished_stage_name_the_map_outputs_it_really_wrote(spark):
    graph = spark.range(0, 100, numPartitions=2).groupBy((F.col("id") % 5).alias("g")).count()._execution().stages
    map_stage, result = graph.stages
    retargeted = with_map_outputs(result, _stats(map_stage.id, [[1] * 8]))
    assert routed_reads(retargeted.root)[0].map_partitions == 1
    assert with_map_outputs(result, _stats(map_stage.id, [[1] * 8] * 2)) is result


def test_settings_come_from_sparks_keys(spark):
    spark.conf.set("spark.sql.adaptive.advisoryPartitionSizeInBytes", "8m")
    spark.conf.set("spark.sql.adaptive.skewJoin.skewedPartitionFactor", "3")
    try:
        settings = AdaptiveSettings.from_conf(spark.conf, 2)
    finally:
        spark.conf.unset("spark.sql.adaptive.advisoryPartitionSizeInBytes")
        spark.conf.unset("spark.sql.adaptive.skewJoin.skewedPartitionFactor")
    assert settings.advisory_bytes == 8 * MIB and settings.skew_factor == 3.0 and settings.min_partitions == 2
    assert settings.broadcast_threshold == spark.conf.broadcast_threshold()
    defaults = AdaptiveSettings.from_conf(spark.conf, 2)
    assert (defaults.enabled, defaults.coalesce, defaults.skew_join, defaults.skew_threshold) == (True, True, True,
                                                                                                 256 * MIB)
    with pytest.raises(Exception, match="skewedPartitionFactor"):
        spark.conf.set("spark.sql.adaptive.skewJoin.skewedPartitionFactor", "0.5")


def test_a_device_stage_aims_for_partitions_its_memory_can_hold():
    settings = AdaptiveSettings()
    assert settings.for_device(141 << 30).advisory_bytes == 1 << 30
    assert settings.for_device(256 * MIB).advisory_bytes == 64 * MIB


def test_coalesced_partitions_stay_within_a_tasks_share_of_the_memory_budget():
    settings = AdaptiveSettings(min_partitions=1, parallelism_first=False, max_partition_bytes=8 * MIB)
    assert coalesce_target(4000 * MIB, settings) == 8 * MIB
    budgeted = AdaptiveSettings.from_conf(RuntimeConfig(), 2, 64 * MIB)
    assert budgeted.max_partition_bytes == 8 * MIB


def test_each_task_reads_the_bytes_of_the_blocks_its_reads_name(spark):
    stages, join_stage = _join_graph(spark)
    join = _join_of(join_stage)
    left, right = join.left, join.right
    n = left.partitions
    per_map = [[MIB] * n for _ in range(2)]
    per_map[0][1] = per_map[1][1] = 10 * MIB
    finished = {left.stage_id: _stats(left.stage_id, per_map), right.stage_id: _stats(right.stage_id, [[MIB] * n] * 2)}
    assert task_input_bytes(join_stage, finished) == [(20 if p == 1 else 2) * MIB + 2 * MIB for p in range(n)]
    # Split by map outputs, partition 1 is read by two tasks, each one map output of it and all of the other side.
    adapted, _ = adapt_reads(join_stage, finished, AdaptiveSettings(coalesce=False, skew_threshold=5 * MIB,
                                                                    advisory_bytes=10 * MIB))
    sizes = task_input_bytes(adapted, finished)
    assert adapted.num_partitions == n + 1 and sizes[1:3] == [12 * MIB, 12 * MIB] and sum(sizes) == sum(
        sum(map(sum, s.bytes)) for s in finished.values()) + 2 * MIB
    assert task_input_bytes(join_stage, {left.stage_id: finished[left.stage_id]}) is None


def test_a_skewed_task_its_device_cannot_hold_goes_to_the_device_with_the_most_room_for_it():
    settings = AdaptiveSettings(skew_factor=2.0, skew_threshold=4 * MIB)
    sizes = [MIB, 2 * MIB, 30 * MIB, MIB, 3 * MIB]
    home = TaskRoom("cpu:0", 8 * MIB)
    small, large = device_room("gpu:0", 80 * MIB), device_room("npu:0", 800 * MIB)
    assert (small.bytes, large.bytes) == (10 * MIB, 100 * MIB)
    moves, decisions = place_skewed_tasks(3, sizes, home, [small, large], settings)
    assert moves == {2: "npu:0"}
    assert [d.rule for d in decisions] == ["skewed task placement"]
    assert decisions[0].detail.startswith("task 2 reads 30.0 MiB (median 2.0 MiB), over what a task may hold on "
                                          "cpu:0 (8.0 MiB a task): it runs on npu:0 (100.0 MiB a task)")
    # A device with no bound holds any task; no device that holds it: the task stays home.
    assert place_skewed_tasks(3, sizes, home, [small, TaskRoom("cpu:1", None)], settings)[0] == {2: "cpu:1"}
    assert place_skewed_tasks(3, sizes, home, [small], settings) == ({}, [])


def test_a_task_is_moved_only_when_it_is_skewed_and_over_its_devices_room():
    settings = AdaptiveSettings(skew_factor=2.0, skew_threshold=4 * MIB)
    # Large but even: the stage's placement, not a task's, decides where such a stage runs.
    assert oversized_tasks([20 * MIB] * 4, TaskRoom("cpu:0", 8 * MIB), settings) == []
    # Skewed, but its device holds it.
    assert oversized_tasks([MIB, MIB, 30 * MIB], TaskRoom("gpu:0", 64 * MIB), settings) == []
    # Skewed by the factor but under the threshold.
    assert oversized_tasks([MIB // 4, MIB // 4, 3 * MIB], TaskRoom("cpu:0", 2 * MIB), settings) == []
    assert oversized_tasks([MIB, MIB, 30 * MIB], TaskRoom("cpu:0", 8 * MIB), settings) == [2]
    assert oversized_tasks([MIB, MIB, 30 * MIB], TaskRoom("cpu:0", None), settings) == []
    assert oversized_tasks([30 * MIB], TaskRoom("cpu:0", 8 * MIB), settings) == []
    assert oversized_tasks([MIB, MIB, 30 * MIB], TaskRoom("cpu:0", 8 * MIB), AdaptiveSettings(enabled=False)) == []
