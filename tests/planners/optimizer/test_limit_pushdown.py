"""quiver/planners/optimizer/limit_pushdown.py: limits merge, pass below projections, and give each union
input a local limit."""
from __future__ import annotations

import pytest

from quiver import functions as F
from quiver.engine.core import plan as L
from quiver.planners.optimizer import push_down_limits


@pytest.mark.parametrize("outer,inner", [(3, 5), (5, 3), (4, 4)])
def test_nested_limits_merge_to_the_smaller(spark, run_plan, shape, outer, inner):
    q = spark.range(10).limit(inner).limit(outer)
    pushed = push_down_limits(q._plan)
    assert shape(pushed) == "Limit(RangeRelation)" and pushed.n == min(outer, inner)
    assert len(run_plan(pushed)) == len(run_plan(q._plan)) == min(outer, inner)


def test_limit_moves_below_a_projection(spark, run_plan, shape):
    q = spark.range(10).select((F.col("id") * 2).alias("x")).limit(3)
    pushed = push_down_limits(q._plan)
    assert shape(pushed) == "Project(Limit(RangeRelation))"
    assert len(run_plan(pushed)) == 3 and all(v % 2 == 0 for (v,) in run_plan(pushed))


def test_union_inputs_get_a_local_limit_once(spark, run_plan, shape):
    q = spark.range(10).union(spark.range(100, 105)).limit(4)
    pushed = push_down_limits(q._plan)
    assert shape(pushed) == "Limit(Union(Limit(RangeRelation), Limit(RangeRelation)))"
    assert [c.n for c in pushed.child.inputs] == [4, 4]
    assert push_down_limits(pushed) == pushed
    assert len(run_plan(pushed)) == 4


@pytest.mark.parametrize("build", [
    lambda df: df.orderBy(F.col("id").desc()),
    lambda df: df.filter(F.col("id") > 5),
    lambda df: df.groupBy((F.col("id") % 3).alias("g")).count(),
], ids=["sort", "filter", "aggregate"])
def test_limit_stays_above_operators_that_change_which_rows_come_first(spark, run_plan, build):
    q = build(spark.range(10)).limit(2)
    assert push_down_limits(q._plan) == q._plan
    assert isinstance(q._plan, L.Limit)


def test_top_rows_after_pushdown_match(spark, run_plan):
    q = spark.range(50).select("id", (F.col("id") + 1).alias("y")).limit(7).limit(10)
    assert run_plan(push_down_limits(q._plan)) == run_plan(q._plan)


def test_limit_over_offset_reads_limit_plus_offset_rows_so_a_sort_becomes_top_k(spark, shape):
    from quiver.planners.physical import nodes as P

    q = spark.range(100).orderBy(F.col("id").desc()).offset(7).limit(3)
    pushed = push_down_limits(q._plan)
    assert shape(pushed) == "Offset(Limit(Sort(RangeRelation)))"
    assert pushed.n == 7 and pushed.child.n == 10
    physical = q._execution().physical
    assert any(isinstance(n, P.TopKExec) and n.n == 10 for n in physical.walk())
    assert [r.id for r in q.collect()] == [92, 91, 90]
