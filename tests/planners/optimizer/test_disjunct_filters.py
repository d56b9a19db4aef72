"""quiver/planners/optimizer/disjunct_filters.py: an OR over several tables implies a filter on each table
that every branch constrains; the implied filters are added, pushed to the scans, and change no row."""
from __future__ import annotations

import pyarrow as pa

from quiver import functions as F
from quiver.engine.core import plan as L
from quiver.engine.core.expressions import Or
from quiver.planners.optimizer.disjunct_filters import derive_disjunct_filters

NATION = pa.table({"n_key": pa.array(range(6), pa.int64()),
                   "n_name": ["FRANCE", "GERMANY", "PERU", "CHINA", "KENYA", "JAPAN"]})
TRADE = pa.table({"seller": pa.array([i % 6 for i in range(60)], pa.int64()),
                  "buyer": pa.array([(i // 6) % 6 for i in range(60)], pa.int64()),
                  "qty": pa.array(range(60), pa.int64())})


def _q7_shape(spark):
    """Two nations joined to one fact table, filtered by an OR over both (TPC-H Q7's shape)."""
    n1 = spark.createDataFrame(NATION).select(F.col("n_key").alias("k1"), F.col("n_name").alias("name1"))
    n2 = spark.createDataFrame(NATION).select(F.col("n_key").alias("k2"), F.col("n_name").alias("name2"))
    trade = spark.createDataFrame(TRADE)
    joined = trade.join(n1, F.col("seller") == F.col("k1")).join(n2, F.col("buyer") == F.col("k2"))
    either = (((F.col("name1") == "FRANCE") & (F.col("name2") == "GERMANY"))
              | ((F.col("name1") == "GERMANY") & (F.col("name2") == "FRANCE")))
    return joined.filter(either).select("qty", "name1", "name2")


def _filters_over_one_table(plan: L.LogicalPlan) -> list[str]:
    """The SQL of each OR filter that reads columns of one input only."""
    return sorted(f.condition.sql() for f in plan.walk()
                  if isinstance(f, L.Filter) and isinstance(f.condition, Or)
                  and not isinstance(f.child, L.Join))


def test_each_table_gets_the_or_of_its_own_conjuncts(spark):
    q = _q7_shape(spark)
    derived = derive_disjunct_filters(q._plan)
    conditions = [f.condition.sql() for f in derived.walk() if isinstance(f, L.Filter)]
    assert any("((name1 = FRANCE) OR (name1 = GERMANY))" in c for c in conditions)
    assert any("((name2 = GERMANY) OR (name2 = FRANCE))" in c for c in conditions)


def test_derived_filters_reach_the_tables_and_change_no_row(spark, run_plan):
    q = _q7_shape(spark)
    execution = q._execution()
    optimized, fired = execution.optimized, execution.fired_rules
    assert "derive_disjunct_filters" in fired
    # pushed through the projections that renamed them, onto each nation's own column
    assert _filters_over_one_table(optimized) == [
        "((n_name = FRANCE) OR (n_name = GERMANY))", "((n_name = GERMANY) OR (n_name = FRANCE))"]
    expected = sorted((i, n1, n2) for i in range(60)
                      for n1, n2 in [(NATION["n_name"][i % 6].as_py(), NATION["n_name"][(i // 6) % 6].as_py())]
                      if (n1, n2) in {("FRANCE", "GERMANY"), ("GERMANY", "FRANCE")})
    assert expected and run_plan(optimized) == run_plan(q._plan) == expected


def test_a_branch_without_a_conjunct_on_a_table_implies_nothing_for_it(spark):
    n1 = spark.createDataFrame(NATION).select(F.col("n_key").alias("k1"), F.col("n_name").alias("name1"))
    trade = spark.createDataFrame(TRADE)
    loose = ((F.col("name1") == "FRANCE") & (F.col("qty") > 5)) | (F.col("qty") < 3)
    q = trade.join(n1, F.col("seller") == F.col("k1")).filter(loose)
    derived = derive_disjunct_filters(q._plan)
    ors = [f.condition for f in derived.walk() if isinstance(f, L.Filter)]
    # qty is constrained in both branches, name1 only in one
    assert any("((qty > CAST(5 AS BIGINT)) OR (qty < CAST(3 AS BIGINT)))" in c.sql() for c in ors)
    assert not any("name1 = FRANCE) OR" in c.sql() for c in ors)


def test_outer_joins_are_a_boundary(spark):
    n1 = spark.createDataFrame(NATION).select(F.col("n_key").alias("k1"), F.col("n_name").alias("name1"))
    trade = spark.createDataFrame(TRADE)
    either = ((F.col("name1") == "FRANCE") & (F.col("qty") > 5)) | ((F.col("name1").isNull()) & (F.col("qty") < 3))
    q = trade.join(n1, F.col("seller") == F.col("k1"), "left").filter(either)
    assert derive_disjunct_filters(q._plan) == q._plan
