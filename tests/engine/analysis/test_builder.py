"""quiver/engine/analysis/builder.py: the joins, set operations, aggregates, sorts and limits the DataFrame API
and SQL share. Each case builds plans directly and reads the analyzed plan (its columns, types and shape) or
the rows it computes; the same semantics are checked against real PySpark in tests/compat."""
from __future__ import annotations

import pytest

from quiver.engine.analysis import builder
from quiver.engine.analysis.analyzer import analyze
from quiver.engine.core import plan as L
from quiver.engine.core import types as T
from quiver.engine.core.errors import AnalysisException, UnresolvedColumnError
from quiver.engine.core.expressions import (
    AggregateFunction,
    Alias,
    Cast,
    Comparison,
    Literal,
    ScalarFunction,
    SortOrder,
    UnresolvedColumn,
    WindowExpression,
    WindowFunction,
)


@pytest.fixture(scope="module")
def left(spark):
    return spark.createDataFrame([(10, 1, "a"), (20, 2, "b"), (30, 2, "c")], "v int, k int, s string")._plan


@pytest.fixture(scope="module")
def right(spark):
    return spark.createDataFrame([(1, "x"), (3, "y")], "K bigint, w string")._plan


def _columns(plan: L.LogicalPlan) -> list[tuple[str, str]]:
    return [(a.name, a.dtype.simpleString()) for a in plan.output]


def _rows(spark, plan: L.LogicalPlan) -> list[tuple]:
    return sorted((tuple(r) for r in spark._df(plan).collect()), key=repr)


# ---------------------------------------------------------------- join types

@pytest.mark.parametrize("how, kind", [
    ("inner", "inner"), ("cross", "cross"),
    ("outer", "full"), ("full", "full"), ("fullouter", "full"), ("full_outer", "full"), ("FULL_OUTER", "full"),
    ("left", "left"), ("leftouter", "left"), ("left_outer", "left"), ("Left_Outer", "left"),
    ("right", "right"), ("rightouter", "right"), ("right_outer", "right"),
    ("semi", "left_semi"), ("leftsemi", "left_semi"), ("left_semi", "left_semi"),
    ("anti", "left_anti"), ("leftanti", "left_anti"), ("left_anti", "left_anti"),
    ("le_ft", "left"),
])
def test_join_type_reads_every_spark_spelling(how, kind):
    assert builder.join_type(how) == kind


@pytest.mark.parametrize("how", ["left outer", "sideways", "", "natural"])
def test_join_type_names_the_unsupported_type_and_the_supported_ones(how):
    with pytest.raises(AnalysisException, match=f"Unsupported join type '{how}'") as info:
        builder.join_type(how)
    assert "'left_outer'" in str(info.value) and "'leftanti'" in str(info.value)


def test_join_without_condition_is_cross_and_cross_with_condition_is_inner(left, right):
    assert builder.join(left, right).how == "cross"
    assert builder.join(left, right, "left").how == "left"
    joined = builder.join(left, right, "cross", Comparison(">", UnresolvedColumn(("v",)), Literal(15, T.IntegerType())))
    assert isinstance(joined, L.Join) and joined.how == "inner"


def test_join_of_a_plan_with_itself_is_ambiguous_where_the_condition_reads_a_shared_column(left):
    with pytest.raises(AnalysisException, match="join condition is ambiguous.*'k'"):
        builder.join(left, left, "inner", Comparison("=", left.output[1], left.output[1]))


# ---------------------------------------------------------------- USING joins

@pytest.mark.parametrize("how, columns", [
    ("inner", [("k", "int"), ("v", "int"), ("s", "string"), ("w", "string")]),
    ("left", [("k", "int"), ("v", "int"), ("s", "string"), ("w", "string")]),
    ("right", [("K", "bigint"), ("v", "int"), ("s", "string"), ("w", "string")]),
    ("full_outer", [("k", "bigint"), ("v", "int"), ("s", "string"), ("w", "string")]),
    ("leftsemi", [("k", "int"), ("v", "int"), ("s", "string")]),
    ("anti", [("k", "int"), ("v", "int"), ("s", "string")]),
])
def test_using_join_gives_each_key_once_first_named_as_spark_names_it(left, right, how, columns):
    assert _columns(builder.using_join(left, right, ["k"], how)) == columns


def test_using_join_full_outer_keeps_the_non_null_key_of_either_side(spark, left, right):
    joined = builder.using_join(left, right, ["K"], "full")
    assert _rows(spark, joined) == sorted([(1, 10, "a", "x"), (2, 20, "b", None), (2, 30, "c", None),
                                           (3, None, None, "y")], key=repr)
    key = joined.projections[0]
    assert isinstance(key, Alias) and isinstance(key.child, ScalarFunction) and key.child.name == "coalesce"


def test_using_join_of_a_plan_with_itself_gives_the_right_side_new_ids(spark, left):
    joined = builder.using_join(left, left, ["k"], "inner")
    ids = [a.expr_id for a in joined.output]
    assert len(set(ids)) == len(ids)
    assert _columns(joined) == [("k", "int"), ("v", "int"), ("s", "string"), ("v", "int"), ("s", "string")]
    assert len(_rows(spark, joined)) == 5


def test_using_join_takes_the_first_column_of_that_name(spark, left, right):
    both = builder.join(left, right)
    assert [a.name.lower() for a in both.output] == ["v", "k", "s", "k", "w"]
    joined = builder.using_join(both, spark.createDataFrame([(2, True)], "k int, flag boolean")._plan, ["k"])
    assert joined.output[0].expr_id == left.output[1].expr_id
    assert _columns(joined) == [("k", "int"), ("v", "int"), ("s", "string"), ("K", "bigint"), ("w", "string"),
                                ("flag", "boolean")]
    assert len(_rows(spark, joined)) == 4


@pytest.mark.parametrize("name, side, shown", [("kk", "left", "v, k, s"), ("v", "right", "K, w")])
def test_using_join_names_the_missing_column_and_the_side(left, right, name, side, shown):
    with pytest.raises(UnresolvedColumnError) as info:
        builder.using_join(left, right, [name])
    message = str(info.value)
    assert f"USING column '{name}' cannot be resolved on the {side} side" in message
    assert f"The {side}-side columns: {shown}" in message


# ---------------------------------------------------------------- set operations

def test_union_widens_each_column_and_the_left_names_it(spark, left, right):
    plan = builder.union(L.Project(left, (left.output[1], left.output[2])), right)
    assert _columns(plan) == [("k", "bigint"), ("s", "string")]
    first = plan.inputs[0]
    assert isinstance(first, L.Project) and isinstance(first.projections[0].child, Cast)
    assert len(_rows(spark, plan)) == 5


@pytest.mark.parametrize("build, operation", [
    (builder.union, "UNION"),
    (lambda a, b: builder.intersect(a, b), "INTERSECT"),
    (lambda a, b: builder.intersect(a, b, is_all=True), "INTERSECT ALL"),
    (lambda a, b: builder.except_(a, b), "EXCEPT"),
    (lambda a, b: builder.except_(a, b, is_all=True), "EXCEPT ALL"),
])
def test_set_operations_check_the_column_count_with_one_message(left, right, build, operation):
    with pytest.raises(AnalysisException) as info:
        build(left, right)
    assert str(info.value) == (
        f"{operation} can only be performed on inputs with the same number of columns, but the first input has "
        "3 columns (v, k, s) and the second input has 2 columns (K, w)"
    )


@pytest.mark.parametrize("build, operation", [
    (builder.union, "UNION"), (lambda a, b: builder.except_(a, b, is_all=True), "EXCEPT ALL"),
])
def test_set_operations_name_the_incompatible_column(spark, build, operation):
    dates = spark.sql("SELECT 1 AS n, DATE'2024-01-01' AS d")._plan
    numbers = spark.sql("SELECT 2 AS n, 3 AS d")._plan
    with pytest.raises(AnalysisException, match=(
            f"{operation} can only be performed on tables with compatible column types. The second column "
            r"\('d'\) of the second table is int type which is not compatible with date")):
        build(dates, numbers)


def test_a_union_of_many_inputs_counts_them_as_spark_does(left):
    with pytest.raises(AnalysisException, match="the first input has 3 columns .* the third input has 1 columns"):
        analyze(L.Union((left, left, L.Project(left, (left.output[0],)))))


def test_intersect_and_except_widen_both_sides(spark, left, right):
    keys = L.Project(left, (left.output[1],))
    other = L.Project(right, (right.output[0],))
    for plan, rows in ((builder.intersect(keys, other), [(1,)]), (builder.except_(keys, other), [(2,)]),
                       (builder.except_(keys, other, is_all=True), [(2,), (2,)])):
        assert _columns(plan) == [("k", "bigint")]
        assert _rows(spark, plan) == rows


def test_intersect_all_keeps_the_smaller_count_of_each_row(spark):
    a = spark.createDataFrame([(1,), (1,), (1,), (None,), (None,)], "x int")._plan
    b = spark.createDataFrame([(1,), (1,), (None,), (4,)], "x int")._plan
    assert _rows(spark, builder.intersect(a, b, is_all=True)) == sorted([(1,), (1,), (None,)], key=repr)
    assert _rows(spark, builder.intersect(a, b)) == sorted([(1,), (None,)], key=repr)
    assert _rows(spark, builder.intersect(a, a)) == sorted([(1,), (None,)], key=repr)


def test_union_by_name_matches_names_in_any_case(spark, left):
    reordered = spark.createDataFrame([("z", 9, 99)], "S string, K bigint, V int")._plan
    plan = builder.union_by_name(left, reordered)
    assert _columns(plan) == [("v", "int"), ("k", "bigint"), ("s", "string")]
    assert (99, 9, "z") in _rows(spark, plan)


def test_union_by_name_with_missing_columns_fills_nulls_and_appends_the_rights_extras(spark, left, right):
    plan = builder.union_by_name(left, right, allow_missing_columns=True)
    assert _columns(plan) == [("v", "int"), ("k", "bigint"), ("s", "string"), ("w", "string")]
    assert (None, 3, None, "y") in _rows(spark, plan) and (10, 1, "a", None) in _rows(spark, plan)


def test_union_by_name_without_missing_columns_follows_spark_errors(spark, left, right):
    with pytest.raises(UnresolvedColumnError, match=r"Cannot resolve column name 'v' among \(K, w\)"):
        builder.union_by_name(left, right)
    keys_only = L.Project(right, (right.output[0],))
    with pytest.raises(AnalysisException, match="UNION can only be performed on inputs with the same number"):
        builder.union_by_name(keys_only, right)
    twice = spark.createDataFrame([(1, 2)], "k int, K int")._plan
    with pytest.raises(AnalysisException, match="The column 'K' already exists"):
        builder.union_by_name(left, twice)


def test_distinct_groups_by_every_column(spark, left):
    plan = builder.distinct(L.Project(left, (left.output[1],)))
    assert isinstance(plan, L.Aggregate) and plan.grouping == plan.aggregates
    assert _rows(spark, plan) == [(1,), (2,)]


# ---------------------------------------------------------------- aggregates

def test_aggregate_plain_and_with_grouping_sets(spark, left):
    k = left.output[1]
    total = Alias(AggregateFunction("sum", (left.output[0],)), "total")
    plain = builder.aggregate(left, (k,), (k, total))
    assert isinstance(plain, L.Aggregate) and _rows(spark, plain) == [(1, 10), (2, 50)]
    rolled = builder.aggregate(left, (k,), (k, total), [(0,), ()])
    assert _rows(spark, rolled) == sorted([(1, 10), (2, 50), (None, 60)], key=repr)


def test_pivoted_aggregates_name_and_null_empty_counts(spark, left):
    k, s = left.output[1], left.output[2]
    columns = builder.pivoted_aggregates([AggregateFunction("count", ())], s, ["a", "c", "q"])
    assert [c.name for c in columns] == ["a", "c", "q"]
    assert _rows(spark, builder.aggregate(left, (k,), (k, *columns))) == [(1, 1, None, None), (2, None, 1, None)]
    named = builder.pivoted_aggregates([Alias(AggregateFunction("max", (left.output[0],)), "m"),
                                        AggregateFunction("min", (left.output[0],))], s, [None])
    assert [c.name for c in named] == ["null_m", "null_min(v)"]


# ---------------------------------------------------------------- order and row counts

def test_sort_orders_plain_keys_ascending(left):
    plan = builder.sort(left, [left.output[0], SortOrder(left.output[1], False, None)], is_global=False)
    assert isinstance(plan, L.Sort) and not plan.is_global
    assert [(o.ascending, o.effective_nulls_first) for o in plan.orders] == [(True, True), (False, False)]


@pytest.mark.parametrize("build, clause", [(builder.limit, "limit"), (builder.offset, "offset")])
def test_limit_and_offset_refuse_a_negative_count_as_spark_does(spark, left, build, clause):
    with pytest.raises(AnalysisException, match=(
            f'The limit like expression "-1" is invalid. The {clause} expression must be equal to or greater '
            "than 0, but got -1")):
        build(left, -1)
    assert len(_rows(spark, build(left, 0))) == (0 if clause == "limit" else 3)


# ---------------------------------------------------------------- windows

def test_window_expression_builds_and_checks_the_function(left):
    k, v = left.output[1], left.output[0]
    ranked = builder.window_expression(WindowFunction("rank"), (k,), (SortOrder(v),))
    assert isinstance(ranked, WindowExpression) and ranked.partition_by == (k,)
    with pytest.raises(AnalysisException, match="window function rank requires the window to be ordered"):
        builder.window_expression(WindowFunction("rank"), (k,))
    with pytest.raises(AnalysisException, match="is not a window function and cannot be used with OVER"):
        builder.window_expression(Literal(1, T.IntegerType()))
    with pytest.raises(AnalysisException, match="DISTINCT aggregates are not supported over a window"):
        builder.window_expression(AggregateFunction("count", (v,), distinct=True))


def test_a_ranking_functions_only_frame_is_its_default_so_none_is_kept(left):
    v = left.output[0]
    order = (SortOrder(v),)
    default = builder.window_expression(WindowFunction("rank"), (), order, ("rows", builder.UNBOUNDED_PRECEDING, 0))
    assert default.frame is None
    with pytest.raises(AnalysisException, match=r"frame of rank\(\) must be ROWS BETWEEN UNBOUNDED PRECEDING AND "
                                                "CURRENT ROW, got ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING"):
        builder.window_expression(WindowFunction("rank"), (), order, ("rows", -1, 1))
    with pytest.raises(AnalysisException, match=r"frame of cume_dist\(\) must be RANGE BETWEEN"):
        builder.window_expression(WindowFunction("cume_dist"), (), order, ("rows", builder.UNBOUNDED_PRECEDING, 0))
    lag = WindowFunction("lag", (v, Literal(1, T.IntegerType()), Literal(None, T.NullType())))
    with pytest.raises(AnalysisException, match=r"cannot specify a window frame for lag\(\)"):
        builder.window_expression(lag, (), order, ("rows", -1, 1))
    nth = WindowFunction("nth_value", (v, Literal(2, T.IntegerType())))
    assert builder.window_expression(nth, (), order, ("rows", -1, 1)).frame == ("rows", -1, 1)


@pytest.mark.parametrize("frame, needle", [
    (("rows", 1, -1), "lower bound of a window frame must be less than or equal to the upper bound: "
                      "ROWS BETWEEN 1 FOLLOWING AND 1 PRECEDING"),
    (("range", builder.UNBOUNDED_FOLLOWING, builder.UNBOUNDED_FOLLOWING), "UNBOUNDED FOLLOWING can only end"),
    (("rows", 0, builder.UNBOUNDED_PRECEDING), "UNBOUNDED PRECEDING only start"),
])
def test_window_frames_must_be_in_order(left, frame, needle):
    with pytest.raises(AnalysisException, match=needle):
        builder.window_expression(AggregateFunction("sum", (left.output[0],)), (), (SortOrder(left.output[0]),), frame)
