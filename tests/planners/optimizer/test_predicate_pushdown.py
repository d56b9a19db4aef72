"""quiver/planners/optimizer/predicate_pushdown.py: filters move below projections, sorts, aliases and
unions, into join sides and below aggregates (grouping columns only), and into scans."""
from __future__ import annotations

import pyarrow as pa
import pytest

from quiver import functions as F
from quiver.connectors.base import SourceStatistics
from quiver.engine.core import plan as L
from quiver.engine.core import types as T
from quiver.engine.core.expressions import (
    Comparison,
    Literal,
    ScalarFunction,
    split_conjuncts,
)
from quiver.planners.optimizer import push_down_predicates


def _fixed_point(plan):
    for _ in range(10):
        new = push_down_predicates(plan)
        if new == plan:
            return plan
        plan = new
    raise AssertionError("push_down_predicates did not reach a fixed point")


@pytest.fixture
def left(spark):
    return spark.createDataFrame([(1, 10, "x"), (2, 20, "y"), (3, 30, None), (None, 40, "z")], "k INT, a INT, s STRING")


@pytest.fixture
def right(spark):
    return spark.createDataFrame([(1, 5), (2, 50), (2, 7), (None, 1), (4, 4)], "rk INT, b INT")


def test_filter_moves_below_a_projection_with_its_aliases_substituted(left, run_plan, shape):
    q = left.select("k", (F.col("a") * 2).alias("a2")).filter(F.col("a2") > 30)
    assert shape(q._plan) == "Filter(Project(LocalRelation))"
    pushed = push_down_predicates(q._plan)
    assert shape(pushed) == "Project(Filter(LocalRelation))"
    assert pushed.child.condition.sql() == "((a * 2) > 30)"
    assert run_plan(pushed) == run_plan(q._plan) == [(2, 40), (3, 60), (None, 80)]


def test_filter_moves_below_sort_and_subquery_alias(left, run_plan, shape):
    q = left.alias("t").orderBy("a").filter(F.col("t.k") >= 2)
    pushed = _fixed_point(q._plan)
    assert shape(pushed) == "Sort(SubqueryAlias(Filter(LocalRelation)))"
    assert run_plan(pushed) == run_plan(q._plan)


def test_inner_join_filter_splits_into_both_sides_and_the_join(left, right, run_plan, shape):
    q = left.join(right,
                  left["k"] == right["rk"]).filter((F.col("a") > 10) & (F.col("b") < 45) & (F.col("a") > F.col("b")))
    pushed = _fixed_point(q._plan)
    assert shape(pushed) == "Join(Filter(LocalRelation), Filter(LocalRelation))"
    assert pushed.left.condition.sql() == "(a > 10)"
    assert pushed.right.condition.sql() == "(b < 45)"
    assert {c.sql() for c in split_conjuncts(pushed.condition)} == {"(k = rk)", "(a > b)"}
    assert run_plan(pushed) == run_plan(q._plan) == [(2, 20, "y", 2, 7)]


@pytest.mark.parametrize("how,left_pushed,right_pushed", [
    ("left", True, False), ("right", False, True), ("full", False, False), ("left_semi", True, None),
    ("left_anti", True, None),
])
def test_outer_join_filters_only_move_to_the_preserved_side(left, right, run_plan, how, left_pushed, right_pushed):
    joined = left.join(right, left["k"] == right["rk"], how)
    cond = F.col("a") < 35
    if right_pushed is not None:
        cond = cond & F.col("b").isNull() if how != "right" else cond & (F.col("b") > 4)
    q = joined.filter(cond)
    pushed = _fixed_point(q._plan)
    join = next(n for n in pushed.walk() if isinstance(n, L.Join))
    assert isinstance(join.left, L.Filter) == left_pushed
    if right_pushed is not None:
        assert isinstance(join.right, L.Filter) == right_pushed
    assert run_plan(pushed) == run_plan(q._plan)


def test_one_sided_join_condition_filters_that_side_first(left, right, run_plan, shape):
    q = left.join(right, (left["k"] == right["rk"]) & (right["b"] > 5) & (left["a"] < 30))
    pushed = _fixed_point(q._plan)
    assert shape(pushed) == "Join(Filter(LocalRelation), Filter(LocalRelation))"
    assert pushed.condition.sql() == "(k = rk)"
    assert run_plan(pushed) == run_plan(q._plan)


def test_semi_join_condition_on_the_right_side_filters_the_right_input(left, right, run_plan, shape):
    q = left.join(right, (left["k"] == right["rk"]) & (right["b"] > 10), "left_semi")
    pushed = _fixed_point(q._plan)
    assert shape(pushed) == "Join(LocalRelation, Filter(LocalRelation))"
    assert run_plan(pushed) == run_plan(q._plan) == [(2, 20, "y")]


@pytest.mark.parametrize("how, expected_shape", [
    ("left", "Join(LocalRelation, Filter(LocalRelation))"),
    ("left_anti", "Join(LocalRelation, Filter(LocalRelation))"),
    ("right", "Join(Filter(LocalRelation), LocalRelation)"),
    ("full", "Join(LocalRelation, LocalRelation)"),
])
def test_outer_and_anti_join_conditions_filter_only_the_side_whose_unmatched_rows_drop(
        left, right, run_plan, shape, how, expected_shape):
    # Both one-sided conjuncts sit in the ON clause; only the one on the null-supplying (or
    # existence-tested) side may filter its input: the preserved side's rows must all stay.
    q = left.join(right, (left["k"] == right["rk"]) & (right["b"] > 5) & (left["a"] < 30), how)
    pushed = _fixed_point(q._plan)
    assert shape(pushed) == expected_shape
    assert run_plan(pushed) == run_plan(q._plan)


def test_filter_on_grouping_columns_moves_below_the_aggregate(left, run_plan, shape):
    q = left.groupBy("s").agg(F.sum("a").alias("total")).filter((F.col("s") != "x") & (F.col("total") > 15))
    pushed = _fixed_point(q._plan)
    assert shape(pushed) == "Filter(Aggregate(Filter(LocalRelation)))"
    assert pushed.condition.sql() == "(total > CAST(15 AS BIGINT))"
    assert run_plan(pushed) == run_plan(q._plan) == [("y", 20), ("z", 40)]


def test_filter_on_an_aggregate_result_stays_above(left, shape):
    q = left.groupBy("s").agg(F.count("*").alias("n")).filter(F.col("n") > 1)
    assert shape(_fixed_point(q._plan)) == "Filter(Aggregate(LocalRelation))"


def test_filter_over_a_union_goes_into_every_input_by_position(left, right, run_plan, shape):
    q = left.select("k", "a").union(right).filter((F.col("k") > 1) & (F.col("a") < 45))
    pushed = _fixed_point(q._plan)
    assert shape(pushed).startswith("Union(")
    filters = [n for n in pushed.walk() if isinstance(n, L.Filter)]
    assert len(filters) == 2
    assert {c.sql() for f in filters for c in split_conjuncts(f.condition)} >= {"(rk > 1)", "(b < 45)"}
    assert run_plan(pushed) == run_plan(q._plan) == [(2, 7), (2, 20), (3, 30), (4, 4)]


def test_non_deterministic_filter_stays_where_it_is(left):
    proj = left.select("k", "a")._plan
    plan = L.Filter(proj, Comparison(">", ScalarFunction("rand", ()), Literal(0.5, T.DoubleType())))
    assert push_down_predicates(plan) == plan


class _Source:
    def describe(self):
        return "mem"

    def schema(self):
        return pa.schema([pa.field("x", pa.int64()), pa.field("y", pa.string())])

    def statistics(self):
        return SourceStatistics(num_rows=3)

    def splits(self, target):
        return [0]

    def read(self, split, columns, predicate):
        yield from pa.table({"x": [1, 2, 3], "y": ["a", "b", "c"]}).select(columns).to_batches()


def test_scan_gets_the_conjuncts_as_pushed_filters_and_keeps_the_filter(spark, run_plan, shape):
    df = spark._dataframe_from_source(_Source()).filter((F.col("x") > 1) & (F.col("y") != "c"))
    pushed = _fixed_point(df._plan)
    assert shape(pushed) == "Filter(SourceScan)"
    assert [c.sql() for c in pushed.child.pushed_filters] == [c.sql() for c in split_conjuncts(pushed.condition)]
    assert "PushedFilters" in pushed.child.node_string()
    assert push_down_predicates(pushed) == pushed  # pushing twice adds nothing
    assert run_plan(pushed) == run_plan(df._plan) == [(2, "b")]


@pytest.mark.parametrize("n_rows", [0, 5])
def test_optimized_results_equal_unoptimized_for_a_pipeline(spark, partitions, run_plan, n_rows):
    base = spark.range(n_rows).select((F.col("id") % 3).alias("g"), F.col("id").alias("v"))
    q = base.groupBy("g").agg(F.max("v").alias("m")).filter((F.col("g") > 0) & (F.col("m") >= 0))
    assert run_plan(_fixed_point(q._plan)) == run_plan(q._plan)
