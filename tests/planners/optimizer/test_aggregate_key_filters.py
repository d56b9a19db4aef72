"""quiver/planners/optimizer/aggregate_key_filters.py: an aggregate whose groups a join mostly drops gets a
semi join on a small subtree holding the join's keys; where the join keeps unmatched groups, or the
keys are not much fewer than the groups, the plan stays as it is; rows never change."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from quiver import functions as F
from quiver.engine.core import plan as L
from quiver.planners.optimizer.aggregate_key_filters import filter_aggregates_by_join_keys


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """parts (5000, p_size 0..49) and lines (4 per part); Parquet so estimates have statistics."""
    root = tmp_path_factory.mktemp("aggkeys")
    pq.write_table(pa.table({"p_key": pa.array(range(5000), pa.int64()),
                             "p_size": pa.array([i % 50 for i in range(5000)], pa.int64())}), root / "parts.parquet")
    pq.write_table(pa.table({"l_part": pa.array([i % 5000 for i in range(20000)], pa.int64()),
                             "l_qty": pa.array([(i // 5000) * 10 + i % 3 for i in range(20000)], pa.int64())}),
                   root / "lines.parquet")
    return root


def _semi_joins_under_aggregates(plan: L.LogicalPlan) -> list[L.Join]:
    return [j for a in plan.walk() if isinstance(a, L.Aggregate)
            for j in a.walk() if isinstance(j, L.Join) and j.how == "left_semi"]


def _register(spark, tables) -> None:
    spark.read.parquet(str(tables / "parts.parquet")).createOrReplaceTempView("parts")
    spark.read.parquet(str(tables / "lines.parquet")).createOrReplaceTempView("lines")


def test_correlated_aggregate_is_computed_for_the_outer_keys_only(spark, tables, run_plan):
    _register(spark, tables)
    q = spark.sql("""select p_key, l_qty from lines, parts
                     where l_part = p_key and p_size = 3
                       and l_qty < (select avg(l_qty) from lines l2 where l2.l_part = p_key)""")
    execution = q._execution()
    plan = execution.optimized
    assert "filter_aggregates_by_join_keys" in execution.fired_rules
    [semi] = _semi_joins_under_aggregates(plan)
    # The keys come from the filtered parts scan, not from the lines-parts join above it.
    assert {n.__class__ for n in semi.right.walk()} >= {L.Filter, L.SourceScan}
    assert not any(isinstance(n, L.Join) for n in semi.right.walk())
    lines = [(i % 5000, (i // 5000) * 10 + i % 3) for i in range(20000)]
    average = {k: sum(q for p, q in lines if p == k) / 4 for k in range(3, 5000, 50)}
    expected = sorted((p, q) for p, q in lines if p % 50 == 3 and q < average[p])
    assert run_plan(plan) == expected != []


def test_inner_join_with_a_grouped_dataframe(spark, tables, run_plan):
    parts = spark.read.parquet(str(tables / "parts.parquet")).filter(F.col("p_size") == 7)
    totals = spark.read.parquet(str(tables / "lines.parquet")).groupBy("l_part").agg(F.sum("l_qty").alias("q"))
    q = parts.join(totals, F.col("p_key") == F.col("l_part"))
    plan = q._execution().optimized
    assert len(_semi_joins_under_aggregates(plan)) == 1
    assert run_plan(plan) == run_plan(q._plan)


def test_preserved_side_of_an_outer_join_keeps_every_group(spark, tables, run_plan):
    parts = spark.read.parquet(str(tables / "parts.parquet")).filter(F.col("p_size") == 7)
    totals = spark.read.parquet(str(tables / "lines.parquet")).groupBy("l_part").agg(F.sum("l_qty").alias("q"))
    q = totals.join(parts, F.col("p_key") == F.col("l_part"), "left")
    plan = q._execution().optimized
    assert _semi_joins_under_aggregates(plan) == []
    assert filter_aggregates_by_join_keys(plan) == plan


def test_null_safe_equality_is_left_alone(spark, tables):
    parts = spark.read.parquet(str(tables / "parts.parquet")).filter(F.col("p_size") == 7)
    totals = spark.read.parquet(str(tables / "lines.parquet")).groupBy("l_part").agg(F.sum("l_qty").alias("q"))
    q = parts.join(totals, F.col("p_key").eqNullSafe(F.col("l_part")))
    assert _semi_joins_under_aggregates(q._execution().optimized) == []


def test_keys_about_as_many_as_the_groups_are_not_worth_a_second_scan(spark, tables):
    parts = spark.read.parquet(str(tables / "parts.parquet")).filter(F.col("p_size") < 40)
    totals = spark.read.parquet(str(tables / "lines.parquet")).groupBy("l_part").agg(F.sum("l_qty").alias("q"))
    q = parts.join(totals, F.col("p_key") == F.col("l_part"))
    assert _semi_joins_under_aggregates(q._execution().optimized) == []
