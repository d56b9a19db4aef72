"""Window functions in SQL (`quiver/engine/sql/windows.py`): the nodes and plans they become, and their errors.

Results are compared with real PySpark in tests/compat/test_sql_windows.py; here we check
that SQL builds exactly what the DataFrame API builds, how GROUP BY / HAVING / QUALIFY
queries with windows are planned, and that each mistake gets an error naming it.
"""
from __future__ import annotations

import pytest

from quiver import Window
from quiver import functions as F
from quiver.engine.core.errors import AnalysisException, ParseException
from quiver.engine.core.expressions import Alias, Expr, SortOrder, WindowExpression, transform_expr
from quiver.engine.core.plan import Aggregate, LogicalPlan
from quiver.engine.core.plan import Window as WindowNode
from quiver.engine.sql.statements import parse_expression

ROWS = [("a", 1, 10.0), ("a", 2, None), ("a", 3, 5.0), ("b", 1, 1.0), ("b", 2, 2.0), (None, 1, 3.0)]


@pytest.fixture(scope="module")
def views(spark):
    spark.createDataFrame(ROWS, "k string, t int, v double").createOrReplaceTempView("sw")
    return spark


def _node(text: str) -> Expr:
    """The window expression `text` parses to, without the name Spark would give it."""
    e = parse_expression(text)
    return e.child if isinstance(e, Alias) else e


def _effective_nulls(e: Expr) -> Expr:
    """`ORDER BY x` and `orderBy('x')` spell the default null placement differently; compare its effect."""
    return transform_expr(e, lambda x: SortOrder(x.child, x.ascending, x.effective_nulls_first)
                          if isinstance(x, SortOrder) else x)


def _nodes(plan: LogicalPlan, kind: type) -> list[LogicalPlan]:
    found = [plan] if isinstance(plan, kind) else []
    for c in plan.children():
        found.extend(_nodes(c, kind))
    return found


def _shape(plan: LogicalPlan) -> list[str]:
    """Node types from the root down the first-child spine."""
    out = []
    while plan is not None:
        out.append(type(plan).__name__)
        plan = plan.children()[0] if plan.children() else None
    return out


# ---------------------------------------------------------------- the same nodes as the DataFrame API


@pytest.mark.parametrize("sql, column", [
    ("row_number() OVER (PARTITION BY k ORDER BY t DESC NULLS LAST)",
     lambda: F.row_number().over(Window.partitionBy("k").orderBy(F.col("t").desc_nulls_last()))),
    ("rank() OVER (ORDER BY t)", lambda: F.rank().over(Window.orderBy("t"))),
    ("cume_dist() OVER (PARTITION BY k ORDER BY t)", lambda: F.cume_dist().over(Window.partitionBy("k").orderBy("t"))),
    ("ntile(3) OVER (ORDER BY t)", lambda: F.ntile(3).over(Window.orderBy("t"))),
    ("lag(v) OVER (ORDER BY t)", lambda: F.lag("v").over(Window.orderBy("t"))),
    ("lead(v, 2, 0) OVER (ORDER BY t)", lambda: F.lead("v", 2, 0).over(Window.orderBy("t"))),
    ("sum(v) OVER (PARTITION BY k ORDER BY t ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING)",
     lambda: F.sum("v").over(Window.partitionBy("k").orderBy("t").rowsBetween(-2, 1))),
    ("sum(v) OVER (ORDER BY t ROWS UNBOUNDED PRECEDING)",
     lambda: F.sum("v").over(Window.orderBy("t").rowsBetween(Window.unboundedPreceding, Window.currentRow))),
    ("avg(v) OVER (ORDER BY t RANGE BETWEEN 1 PRECEDING AND UNBOUNDED FOLLOWING)",
     lambda: F.avg("v").over(Window.orderBy("t").rangeBetween(-1, Window.unboundedFollowing))),
    ("first_value(v) IGNORE NULLS OVER (ORDER BY t)", lambda: F.first("v", True).over(Window.orderBy("t"))),
    ("last(v, true) OVER (PARTITION BY k)", lambda: F.last("v", True).over(Window.partitionBy("k"))),
    ("count(*) OVER ()", lambda: F.count("*").over(Window.partitionBy())),
])
def test_sql_builds_the_window_expression_the_dataframe_api_builds(sql, column):
    assert _effective_nulls(_node(sql)) == _effective_nulls(column().expr)


def test_first_value_keeps_its_name_unless_a_nulls_clause_is_written():
    assert _node("first_value(v) OVER (ORDER BY t)").function.display == "first_value"
    assert _node("last_value(v) RESPECT NULLS OVER (ORDER BY t)").function.display is None


def test_named_windows_resolve_to_their_definition(views):
    named = views.sql("SELECT sum(v) OVER w2 AS s, rank() OVER (w) AS r FROM sw "
                      "WINDOW w AS (PARTITION BY k ORDER BY t), w2 AS w")
    inline = views.sql("SELECT sum(v) OVER (PARTITION BY k ORDER BY t) AS s, rank() OVER (PARTITION BY k ORDER BY t) "
                       "AS r FROM sw")
    def windows(df):
        return [tuple(e.child for e in w.window_exprs) for w in _nodes(df._plan, WindowNode)]
    assert windows(named) and windows(named) == windows(inline)
    assert sorted(named.collect()) == sorted(inline.collect())


def test_sql_frames_are_named_as_written_and_dataframe_frames_as_offsets(views):
    sql = views.sql("SELECT sum(v) OVER (ORDER BY t ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING) FROM sw")
    api = views.table("sw").select(F.sum("v").over(Window.orderBy("t").rowsBetween(-2, 1)))
    assert sql.columns == ["sum(v) OVER (ORDER BY t ASC NULLS FIRST ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING)"]
    assert api.columns == ["sum(v) OVER (ORDER BY t ASC NULLS FIRST ROWS BETWEEN -2 FOLLOWING AND 1 FOLLOWING)"]


def test_unaliased_window_names_follow_spark(views):
    df = views.sql("SELECT rank() OVER (ORDER BY t), cume_dist() OVER (ORDER BY t), lag(v) OVER (ORDER BY t), "
                   "count(*) OVER (PARTITION BY k) FROM sw")
    assert df.columns == [
        "RANK() OVER (ORDER BY t ASC NULLS FIRST ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)",
        "cume_dist() OVER (ORDER BY t ASC NULLS FIRST RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)",
        "lag(v, 1, NULL) OVER (ORDER BY t ASC NULLS FIRST ROWS BETWEEN -1 FOLLOWING AND -1 FOLLOWING)",
        "count(1) OVER (PARTITION BY k ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)",
    ]


def test_window_in_select_expr(views):
    df = views.table("sw").selectExpr("k", "row_number() OVER (PARTITION BY k ORDER BY t DESC) AS rn")
    got = sorted((r.k or "", r.rn) for r in df.collect())
    assert got == [("", 1), ("a", 1), ("a", 2), ("a", 3), ("b", 1), ("b", 2)]


# ---------------------------------------------------------------- plans


def test_one_window_node_per_specification_and_each_window_once(views):
    df = views.sql("SELECT rank() OVER (PARTITION BY k ORDER BY t) AS a, rank() OVER (PARTITION BY k ORDER BY t) + 1 "
                   "AS b, sum(v) OVER (PARTITION BY k ORDER BY t) AS c, sum(v) OVER () AS d FROM sw")
    windows = _nodes(df._plan, WindowNode)
    assert [len(w.window_exprs) for w in windows] == [1, 2]
    assert sorted((r.a, r.b) for r in df.collect()) == [(1, 2), (1, 2), (1, 2), (2, 3), (2, 3), (3, 4)]


def test_windows_over_a_group_by_run_above_the_aggregate_and_its_having(views):
    df = views.sql("SELECT k, sum(v) AS s, rank() OVER (ORDER BY sum(v) DESC) AS r FROM sw GROUP BY k "
                   "HAVING count(*) > 1")
    shape = _shape(df._plan)
    assert shape.index("Window") < shape.index("Filter") < shape.index("Aggregate"), shape
    assert sorted(df.collect()) == sorted([("a", 15.0, 1), ("b", 3.0, 2)])
    assert df.columns == ["k", "s", "r"]


def test_window_over_an_aggregate_is_named_like_spark(views):
    df = views.sql("SELECT k, sum(sum(v)) OVER () FROM sw GROUP BY k")
    assert df.columns == ["k", "sum(sum(v)) OVER (ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)"]
    assert {r[1] for r in df.collect()} == {21.0}


def test_a_window_reading_an_aggregate_makes_the_query_aggregate(views):
    df = views.sql("SELECT rank() OVER (ORDER BY sum(v)) AS r FROM sw")
    assert _nodes(df._plan, Aggregate) and [tuple(r) for r in df.collect()] == [(1,)]


def test_qualify_filters_above_the_window_and_hides_its_condition(views):
    df = views.sql("SELECT k, t FROM sw QUALIFY row_number() OVER (PARTITION BY k ORDER BY t DESC) = 1")
    shape = _shape(df._plan)
    assert shape.index("Filter") < shape.index("Window"), shape
    assert df.columns == ["k", "t"]
    assert sorted(df.collect(), key=str) == sorted([("a", 3), ("b", 2), (None, 1)], key=str)


def test_qualify_reads_select_list_aliases(views):
    df = views.sql("SELECT k, sum(v) AS s FROM sw GROUP BY k QUALIFY rank() OVER (ORDER BY s DESC) = 1")
    assert [tuple(r) for r in df.collect()] == [("a", 15.0)]
    df = views.sql("SELECT k, t, row_number() OVER (PARTITION BY k ORDER BY t) AS rn FROM sw QUALIFY rn = 2")
    assert sorted(tuple(r) for r in df.collect()) == [("a", 2, 2), ("b", 2, 2)]


def test_order_by_a_window(views):
    df = views.sql("SELECT k, t FROM sw WHERE k IS NOT NULL ORDER BY row_number() OVER (PARTITION BY k ORDER BY t), k")
    assert [tuple(r) for r in df.collect()] == [("a", 1), ("b", 1), ("a", 2), ("b", 2), ("a", 3)]
    assert df.columns == ["k", "t"]


def test_window_clause_is_scoped_to_its_select(views):
    with pytest.raises(AnalysisException, match="'w' is not defined"):
        views.sql("SELECT * FROM (SELECT sum(v) OVER w FROM sw) WINDOW w AS (PARTITION BY k)")


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize("query, kind, needles", [
    ("SELECT rank() FROM sw", AnalysisException, ["requires an OVER clause"]),
    ("SELECT lag(v, 1) FROM sw", AnalysisException, ["lag", "OVER"]),
    ("SELECT sum(v) OVER x FROM sw WINDOW w AS (PARTITION BY k), w2 AS (ORDER BY t)",
     AnalysisException, ["'x' is not defined", "w, w2"]),
    ("SELECT sum(v) OVER a FROM sw WINDOW a AS b, b AS a", AnalysisException, ["in terms of itself", "a -> b -> a"]),
    ("SELECT rank() OVER (w ORDER BY t) FROM sw WINDOW w AS (PARTITION BY k)", ParseException, ["WINDOW w AS"]),
    ("SELECT rank() OVER (PARTITION BY k) FROM sw", AnalysisException, ["rank", "ORDER BY"]),
    ("SELECT dense_rank() OVER (ORDER BY t ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM sw", AnalysisException,
     ["dense_rank", "must be ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"]),
    ("SELECT cume_dist() OVER (ORDER BY t ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM sw",
     AnalysisException, ["RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"]),
    ("SELECT lead(v) OVER (ORDER BY t ROWS CURRENT ROW) FROM sw", AnalysisException, ["frame for lead()"]),
    ("SELECT ntile(0) OVER (ORDER BY t) FROM sw", AnalysisException, ["ntile", "positive"]),
    ("SELECT ntile(t) OVER (ORDER BY t) FROM sw", AnalysisException, ["ntile", "literal"]),
    ("SELECT lag(v, t) OVER (ORDER BY t) FROM sw", AnalysisException, ["offset of lag()", "integer literal"]),
    ("SELECT row_number(t) OVER (ORDER BY t) FROM sw", AnalysisException, ["row_number() takes no arguments"]),
    ("SELECT upper(k) OVER (ORDER BY t) FROM sw", AnalysisException, ["upper", "not a window function"]),
    ("SELECT sum(DISTINCT v) OVER (PARTITION BY k) FROM sw", AnalysisException, ["DISTINCT"]),
    ("SELECT k FROM sw WHERE rank() OVER (ORDER BY t) = 1", AnalysisException, ["not allowed in WHERE", "QUALIFY"]),
    ("SELECT k FROM sw GROUP BY k HAVING rank() OVER (ORDER BY k) = 1", AnalysisException, ["not allowed in HAVING"]),
    ("SELECT count(*) FROM sw GROUP BY rank() OVER (ORDER BY t)", AnalysisException, ["not allowed in GROUP BY"]),
    ("SELECT k FROM sw QUALIFY t > 1", AnalysisException, ["QUALIFY", "needs a window function", "WHERE"]),
    ("SELECT sum(v) OVER (ORDER BY t ROWS BETWEEN 1 FOLLOWING AND CURRENT ROW) FROM sw", AnalysisException,
     ["lower bound"]),
    ("SELECT sum(v) OVER (ORDER BY t ROWS BETWEEN CURRENT ROW AND UNBOUNDED PRECEDING) FROM sw", AnalysisException,
     ["UNBOUNDED PRECEDING only start"]),
    ("SELECT sum(v) OVER (RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM sw", AnalysisException,
     ["RANGE", "one numeric ORDER BY key", "none"]),
    ("SELECT sum(v) OVER (ORDER BY k RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM sw", AnalysisException,
     ["RANGE", "string"]),
    ("SELECT sum(v) OVER (ORDER BY t ROWS BETWEEN 1.5 PRECEDING AND CURRENT ROW) FROM sw", ParseException,
     ["integer literal n PRECEDING"]),
    ("SELECT sum(v) OVER (ORDER BY t RANGE BETWEEN INTERVAL 1 DAY PRECEDING AND CURRENT ROW) FROM sw",
     ParseException, ["intervals are not supported"]),
    ("SELECT lag(v) IGNORE NULLS OVER (ORDER BY t) FROM sw", ParseException, ["IGNORE NULLS in lag()"]),
    ("SELECT nth_value(v, 0) OVER (ORDER BY t) FROM sw", AnalysisException, ["nth_value", "positive integer"]),
    ("SELECT k, sum(v) OVER (PARTITION BY k) FROM sw GROUP BY k", AnalysisException,
     ["'v' is neither grouped nor aggregated"]),
    ("SELECT sum(rank() OVER (ORDER BY t)) FROM sw", AnalysisException, ["inside the aggregate function sum()"]),
    ("SELECT sum(v) OVER (PARTITION BY rank() OVER (ORDER BY t)) FROM sw", AnalysisException,
     ["nested inside another window"]),
])
def test_window_mistakes_are_named(views, query, kind, needles):
    with pytest.raises(kind) as info:
        views.sql(query).collect()
    message = str(info.value)
    for needle in needles:
        assert needle.lower() in message.lower(), f"{query}: {needle!r} not in:\n{message}"


def test_window_function_without_over_in_an_expression_string():
    with pytest.raises(AnalysisException, match="requires an OVER clause"):
        F.expr("row_number()")


def test_window_expression_nodes_have_no_sql_display_markers(views):
    df = views.sql("SELECT sum(v) OVER (ORDER BY t ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s FROM sw")
    window = _nodes(df._plan, WindowNode)[0].window_exprs[0]
    assert isinstance(window, Alias) and type(window.child) is WindowExpression
    assert window.child.frame == ("rows", -1, 0)
