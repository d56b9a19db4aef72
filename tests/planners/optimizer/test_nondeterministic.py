"""quiver/planners/optimizer/nondeterministic.py: an aggregate's nondeterministic grouping keys and
arguments are computed by a projection below it, where each row's position is known, and the
rows are those Spark gives."""
from __future__ import annotations

from quiver import functions as F
from quiver.engine.core import plan as L
from quiver.planners.optimizer.nondeterministic import pull_out_nondeterministic


def _aggregates(plan: L.LogicalPlan) -> list[L.Aggregate]:
    return [n for n in plan.walk() if isinstance(n, L.Aggregate)]


def test_a_nondeterministic_grouping_key_moves_into_a_projection_below(spark, run_plan):
    q = spark.range(0, 40, 1, 4).groupBy(F.spark_partition_id().alias("p")).agg(F.count("*").alias("n"))
    rewritten = pull_out_nondeterministic(q._plan)
    (aggregate,) = _aggregates(rewritten)
    assert all(e.deterministic for e in aggregate.expressions())
    assert isinstance(aggregate.child, L.Project)
    assert [a.name for a in aggregate.child.output] == ["id", "p"]
    assert rewritten.output == q._plan.output
    assert run_plan(rewritten) == [(0, 10), (1, 10), (2, 10), (3, 10)]


def test_a_nondeterministic_aggregate_argument_moves_too(spark, run_plan):
    q = spark.range(0, 30, 1, 3).groupBy((F.col("id") % 2).alias("k")).agg(
        F.max(F.spark_partition_id()).alias("last_part"))
    (aggregate,) = _aggregates(pull_out_nondeterministic(q._plan))
    assert all(e.deterministic for e in aggregate.expressions())
    assert run_plan(pull_out_nondeterministic(q._plan)) == [(0, 2), (1, 2)]


def test_every_aggregate_of_the_plan_is_rewritten(spark):
    inner = spark.range(0, 20, 1, 2).groupBy(F.spark_partition_id().alias("p")).count()
    q = inner.groupBy((F.col("count") + F.spark_partition_id()).alias("c")).count()
    aggregates = _aggregates(pull_out_nondeterministic(q._plan))
    assert len(aggregates) == 2
    assert all(isinstance(a.child, L.Project) and all(e.deterministic for e in a.expressions()) for a in aggregates)


def test_a_deterministic_plan_is_returned_as_it_is(spark):
    q = spark.range(10).groupBy((F.col("id") % 3).alias("k")).agg(F.sum("id"))
    assert pull_out_nondeterministic(q._plan) is q._plan
