"""quiver/planners/optimizer/merge_filters.py: Filter(Filter(x, a), b) -> Filter(x, a AND b)."""
from __future__ import annotations

from quiver import functions as F
from quiver.engine.core.expressions import And
from quiver.planners.optimizer import merge_filters


def test_nested_filters_merge_inner_condition_first(spark, run_plan, shape):
    q = spark.range(20).filter(F.col("id") > 3).filter(F.col("id") % 2 == 0).filter(F.col("id") < 15)
    assert shape(q._plan) == "Filter(Filter(Filter(RangeRelation)))"
    merged = merge_filters(q._plan)
    assert shape(merged) == "Filter(RangeRelation)"
    assert isinstance(merged.condition, And)
    assert [c.sql() for c in (merged.condition.left.left, merged.condition.left.right, merged.condition.right)] == \
        [f.condition.sql() for f in reversed([q._plan, q._plan.child, q._plan.child.child])]
    assert run_plan(merged) == run_plan(q._plan) == [(4,), (6,), (8,), (10,), (12,), (14,)]


def test_filters_separated_by_a_projection_are_not_merged(spark, shape):
    q = spark.range(5).filter(F.col("id") > 1).select((F.col("id") * 2).alias("x")).filter(F.col("x") > 4)
    assert shape(merge_filters(q._plan)) == shape(q._plan)


def test_filters_of_the_filter_in_a_join_side_merge_in_place(spark, shape):
    left = spark.range(5).filter(F.col("id") > 0).filter(F.col("id") < 4)
    right = spark.range(3).withColumnRenamed("id", "k")
    q = left.join(right, left["id"] == right["k"])
    assert "Filter(Filter(RangeRelation))" in shape(q._plan)
    assert "Filter(Filter(" not in shape(merge_filters(q._plan))
