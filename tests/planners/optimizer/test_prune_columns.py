"""quiver/planners/optimizer/prune_columns.py: every node carries only the columns someone above reads, down
to the scan."""
from __future__ import annotations

import pyarrow as pa

from quiver import Window
from quiver import functions as F
from quiver.connectors.base import SourceStatistics
from quiver.engine.core import plan as L
from quiver.planners.optimizer import prune_columns


def _leaf(plan):
    return next(n for n in plan.walk() if not n.children())


def _wide(spark):
    return spark.createDataFrame([(1, "a", 1.5, True), (2, "b", None, False), (3, None, 3.5, None)],
                                 "id BIGINT, name STRING, score DOUBLE, flag BOOLEAN")


def test_local_relation_keeps_only_selected_and_filtered_columns(spark, run_plan):
    q = _wide(spark).filter(F.col("flag")).select("name")
    pruned = prune_columns(q._plan)
    assert [a.name for a in _leaf(pruned).output] == ["name", "flag"]
    assert _leaf(pruned).table.column_names == ["name", "flag"]
    assert run_plan(pruned) == run_plan(q._plan) == [("a",)]


def test_count_keeps_the_narrowest_column(spark, run_plan):
    q = _wide(spark).groupBy().count()
    pruned = prune_columns(q._plan)
    assert [a.name for a in _leaf(pruned).output] == ["flag"]
    assert run_plan(pruned) == run_plan(q._plan) == [(3,)]


def test_join_sides_keep_their_output_and_condition_columns(spark, run_plan):
    left = _wide(spark)
    right = spark.createDataFrame([(1, "x", 9), (3, "z", 8)], "rid BIGINT, label STRING, unused INT")
    q = left.join(right, left["id"] == right["rid"]).select("name", "label")
    pruned = prune_columns(q._plan)
    join = next(n for n in pruned.walk() if isinstance(n, L.Join))
    assert [a.name for a in join.left.output] == ["id", "name"]
    assert [a.name for a in join.right.output] == ["rid", "label"]
    assert run_plan(pruned) == run_plan(q._plan) == [("a", "x"), (None, "z")]


def test_unused_aggregates_and_window_expressions_are_dropped(spark, run_plan):
    agg = _wide(spark).groupBy("flag").agg(F.max("score").alias("m"), F.count("name").alias("n")).select("flag", "n")
    pruned = prune_columns(agg._plan)
    aggregate = next(n for n in pruned.walk() if isinstance(n, L.Aggregate))
    assert [a.name for a in aggregate.output] == ["flag", "n"]
    assert "score" not in [a.name for a in _leaf(pruned).output]
    assert run_plan(pruned) == run_plan(agg._plan)
    win = _wide(spark).select("id", F.rank().over(Window.orderBy("score")).alias("r"),
                              F.sum("score").over(Window.partitionBy("flag")).alias("s")).select("id", "r")
    pruned = prune_columns(win._plan)
    assert "name" not in [a.name for a in _leaf(pruned).output]
    assert run_plan(pruned) == run_plan(win._plan)


def test_union_inputs_are_pruned_by_position(spark, run_plan):
    a = _wide(spark)
    b = spark.createDataFrame([(9, "n", 0.5, False)], "i BIGINT, nm STRING, sc DOUBLE, fl BOOLEAN")
    q = a.union(b).select("name")
    pruned = prune_columns(q._plan)
    union = next(n for n in pruned.walk() if isinstance(n, L.Union))
    assert all(len(c.output) == 1 for c in union.inputs)
    assert run_plan(pruned) == run_plan(q._plan)


class _Source:
    def __init__(self):
        self.columns_read = []

    def describe(self):
        return "mem"

    def schema(self):
        return pa.schema([pa.field("x", pa.int64()), pa.field("y", pa.string()), pa.field("z", pa.float64())])

    def statistics(self):
        return SourceStatistics(num_rows=2)

    def splits(self, target):
        return [0]

    def read(self, split, columns, predicate):
        self.columns_read.append(list(columns))
        yield from pa.table({"x": [1, 2], "y": ["a", "b"], "z": [0.5, 1.5]}).select(columns).to_batches()


def test_scan_reads_only_the_needed_columns(spark):
    source = _Source()
    q = spark._dataframe_from_source(source).filter(F.col("z") > 1).select("y")
    pruned = prune_columns(q._plan)
    assert [a.name for a in _leaf(pruned).output] == ["y", "z"]
    assert [tuple(r) for r in q.collect()] == [("b",)]
    assert source.columns_read == [["y", "z"]]


def test_pruning_is_idempotent(spark):
    q = _wide(spark).select("id", "score").filter(F.col("score") > 1)
    once = prune_columns(q._plan)
    assert prune_columns(once) == once


def test_a_join_side_drops_the_columns_only_its_own_filter_reads(spark, run_plan):
    """TPC-H Q13's o_comment: read to filter orders, then not carried into the join's shuffle."""
    customers = spark.createDataFrame([(1,), (2,), (3,)], "c INT")
    orders = spark.createDataFrame([(10, 1, "special requests"), (11, 1, "plain"), (12, 2, "plain")],
                                   "o INT, oc INT, comment STRING")
    q = customers.join(orders, (F.col("c") == F.col("oc")) & ~F.col("comment").like("%special%"), "left") \
        .select("c", "o")
    plan = q._execution().optimized
    join = next(n for n in plan.walk() if isinstance(n, L.Join))
    assert [a.name for a in join.right.output] == ["o", "oc"]
    assert isinstance(join.right, L.Project) and isinstance(join.right.child, L.Filter)
    assert run_plan(plan) == run_plan(q._plan) == [(1, 11), (2, 12), (3, None)]
