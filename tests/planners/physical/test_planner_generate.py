"""Generate (explode & co.) and the broadcast hint through the optimizer and planners: filters on
generated columns stay above the Generate, filters on the input go below it, unused input columns
are pruned before rows are repeated, Generate runs on the CPU (array executors say they cannot
run it), and F.broadcast / hint("broadcast") make the join broadcast that side."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from quiver import functions as F
from quiver.engine.core import plan as L
from quiver.executors.base import Device
from quiver.executors.device.array_executor import ArrayExecutor
from quiver.planners.physical import nodes as P

TABLE = pa.table({"id": pa.array([1, 2, 3], pa.int32()), "pad": ["a", "b", "c"],
                  "xs": pa.array([[1, 5], [], None], pa.list_(pa.int64()))})


def _nodes(plan, kind):
    return [n for n in plan.walk() if isinstance(n, kind)]


def test_a_filter_on_a_generated_column_stays_above_the_generate(spark):
    df = spark.createDataFrame(TABLE).select("id",
                                             F.explode("xs").alias("x")).filter((F.col("x") > 1) & (F.col("id") < 3))
    optimized = df._execution().optimized
    (generate,) = _nodes(optimized, L.Generate)
    above = [f for f in _nodes(optimized, L.Filter) if generate in list(f.walk())]
    below = _nodes(generate.child, L.Filter)
    assert [f.condition.sql() for f in above] == ["(x > 1)"]
    assert [f.condition.sql() for f in below] == ["(id < 3)"]
    assert sorted(tuple(r) for r in df.collect()) == [(1, 5)]


def test_unused_input_columns_are_pruned_before_the_generate(spark):
    df = spark.createDataFrame(TABLE).select(F.explode("xs").alias("x"))
    (generate,) = _nodes(df._execution().optimized, L.Generate)
    assert [a.name for a in generate.child.output] == ["xs"]
    assert sorted(r.x for r in df.collect()) == [1, 5]


def test_generate_is_a_cpu_operator_the_array_executors_decline(spark):
    df = spark.createDataFrame(TABLE).select("id", F.explode_outer("xs"))
    (generate,) = _nodes(df._execution().physical, P.GenerateExec)
    device = ArrayExecutor(Device("gpu", 0), np)
    assert "has no device kernel" in device.unsupported(generate)
    assert "Generate explode(xs), outer=true" in df._execution().explain_string()
    assert sorted(tuple(r) for r in df.collect()) == [(1, 1), (1, 5), (2, None), (3, None)]


@pytest.mark.parametrize("mark", [lambda df: F.broadcast(df), lambda df: df.hint("broadcast")])
def test_the_broadcast_hint_broadcasts_a_side_above_the_threshold(spark, mark):
    previous = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        left = spark.createDataFrame(pa.table({"k": list(range(100)), "v": list(range(100))}))
        right = spark.createDataFrame(pa.table({"k": [1, 2, 3], "w": ["a", "b", "c"]}))
        plain = left.join(right, "k")
        hinted = left.join(mark(right), "k")
        assert [j.strategy for j in _nodes(plain._execution().physical, P.HashJoinExec)] == ["shuffle"]
        (join,) = _nodes(hinted._execution().physical, P.HashJoinExec)
        assert join.strategy == "broadcast-right"
        assert "broadcast hint" in hinted._execution().explain_string()
        flipped = mark(right).join(left, "k")
        assert [j.strategy for j in _nodes(flipped._execution().physical, P.HashJoinExec)] == ["broadcast-left"]
        assert sorted(tuple(r) for r in hinted.collect()) == [(1, 1, "a"), (2, 2, "b"), (3, 3, "c")]
    finally:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", previous)
