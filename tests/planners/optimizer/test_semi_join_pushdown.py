"""quiver/planners/optimizer/semi_join_pushdown.py: a semi/anti join sinks below an inner join that does not
shrink the input its condition reads, and stays on top of one that does; rows never change."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from quiver import functions as F
from quiver.engine.core import plan as L
from quiver.planners.optimizer.semi_join_pushdown import push_down_semi_joins


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """orders (2000 rows), lines (4 per order), tiny regions; Parquet so estimates have statistics."""
    root = tmp_path_factory.mktemp("semi")
    pq.write_table(pa.table({"o_key": pa.array(range(2000), pa.int64()),
                             "o_region": pa.array([i % 5 for i in range(2000)], pa.int64())}), root / "orders.parquet")
    pq.write_table(pa.table({"l_order": pa.array([i // 4 for i in range(8000)], pa.int64()),
                             "l_qty": pa.array([i % 50 for i in range(8000)], pa.int64())}), root / "lines.parquet")
    pq.write_table(pa.table({"r_key": pa.array([0], pa.int64())}), root / "regions.parquet")
    return root


def _semi_join_inputs(plan: L.LogicalPlan) -> list[tuple[str, int]]:
    """(how, number of columns on its left) for each semi/anti join: where each one sits."""
    return [(j.how, len(j.left.output)) for j in plan.walk()
            if isinstance(j, L.Join) and j.how in ("left_semi", "left_anti")]


@pytest.mark.parametrize("how", ["left_semi", "left_anti"])
def test_sinks_below_a_join_that_does_not_shrink_its_input(spark, tables, run_plan, how):
    orders = spark.read.parquet(str(tables / "orders.parquet"))
    lines = spark.read.parquet(str(tables / "lines.parquet"))
    big = lines.groupBy("l_order").agg(F.sum("l_qty").alias("q")).filter(F.col("q") > 150)
    joined = lines.join(orders, F.col("l_order") == F.col("o_key"))
    q = joined.join(big.select(F.col("l_order").alias("b_order")), F.col("o_key") == F.col("b_order"), how)
    plan = q._execution().optimized
    sunk = push_down_semi_joins(plan)
    assert _semi_join_inputs(sunk) == [(how, 2)]  # applied to orders' two columns, not the 4-column join
    assert sunk.output == plan.output
    assert run_plan(sunk) == run_plan(plan) == run_plan(q._plan)
    assert "push_down_semi_joins" in q._execution().fired_rules


def test_stays_above_a_join_that_filters_its_input(spark, tables, run_plan):
    orders = spark.read.parquet(str(tables / "orders.parquet"))
    lines = spark.read.parquet(str(tables / "lines.parquet"))
    regions = spark.read.parquet(str(tables / "regions.parquet"))
    few = orders.join(regions, F.col("o_region") == F.col("r_key"))  # a fifth of the orders
    q = few.join(lines, F.col("o_key") == F.col("l_order"), "left_semi")
    plan = q._execution().optimized
    assert push_down_semi_joins(plan) == plan
    assert run_plan(plan) == run_plan(q._plan)
