"""quiver/planners/optimizer/collapse_projects.py: adjacent projections merge unless that computes an
expression twice."""
from __future__ import annotations

from quiver import functions as F
from quiver.engine.core import plan as L
from quiver.engine.core import types as T
from quiver.engine.core.expressions import (
    Alias,
    AttributeRef,
    BinaryArithmetic,
    Literal,
    ScalarFunction,
)
from quiver.planners.optimizer import collapse_projects


def _fixed_point(plan):
    while True:
        new = collapse_projects(plan)
        if new == plan:
            return plan
        plan = new


def test_projections_merge_with_definitions_substituted(spark, run_plan, shape):
    q = spark.range(4).select((F.col("id") + 1).alias("a"), "id").select((F.col("a") * 10).alias("b"), "id")
    assert shape(q._plan) == "Project(Project(RangeRelation))"
    merged = collapse_projects(q._plan)
    assert shape(merged) == "Project(RangeRelation)"
    assert [p.sql() for p in merged.projections] == ["b", "id"]
    assert merged.projections[0].child.sql() == "((id + CAST(1 AS BIGINT)) * CAST(10 AS BIGINT))"
    assert [a.expr_id for a in merged.output] == [a.expr_id for a in q._plan.output]
    assert run_plan(merged) == run_plan(q._plan) == [(10, 0), (20, 1), (30, 2), (40, 3)]


def test_a_computed_column_used_twice_is_not_recomputed(spark, run_plan, shape):
    used_in_two_outputs = spark.range(4).select((F.col("id") + 1).alias("a")).select((F.col("a") * 10).alias("b"), "a")
    assert shape(collapse_projects(used_in_two_outputs._plan)) == "Project(Project(RangeRelation))"
    used_twice_in_one = spark.range(4).select((F.col("id") * F.col("id")).alias("sq")) \
        .select((F.col("sq") + F.col("sq")).alias("x"))
    assert shape(collapse_projects(used_twice_in_one._plan)) == "Project(Project(RangeRelation))"


def test_a_plain_column_used_twice_still_merges(spark, run_plan, shape):
    q = spark.range(4).select(F.col("id").alias("i")).select((F.col("i") + F.col("i")).alias("x"))
    merged = collapse_projects(q._plan)
    assert shape(merged) == "Project(RangeRelation)"
    assert run_plan(merged) == run_plan(q._plan) == [(0,), (2,), (4,), (6,)]


def test_non_deterministic_inner_projection_is_kept(spark, shape):
    base = spark.range(3)._plan
    rand = Alias(ScalarFunction("rand", ()), "r")
    inner = L.Project(base, (rand,))
    r = AttributeRef("r", T.DoubleType(), True, rand.expr_id)
    outer = L.Project(inner, (Alias(BinaryArithmetic("*", r, Literal(2.0, T.DoubleType())), "r2"),))
    assert collapse_projects(outer) == outer


def test_three_projections_collapse_to_one(spark, run_plan, shape):
    q = spark.range(3).withColumn("a", F.col("id") + 1).withColumn("b", F.col("a") * 2).select("b")
    merged = _fixed_point(q._plan)
    assert shape(merged) == "Project(RangeRelation)"
    assert run_plan(merged) == run_plan(q._plan) == [(2,), (4,), (6,)]
