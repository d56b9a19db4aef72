"""quiver/planners/optimizer/decorrelate_subqueries.py: each subquery shape decorrelates into the join Spark
uses, and no correlated subquery or outer reference is left for an executor to meet.

Rows are checked on the rewritten plan run without the optimizer, against answers worked out
by hand from the small views below (tests/compat/test_subqueries.py compares with PySpark).
"""
from __future__ import annotations

import pytest

from quiver.engine.core import plan as L
from quiver.engine.core.expressions import CaseWhen
from quiver.engine.core.subqueries import InSubquery, OuterReference, ScalarSubquery, SubqueryExpression
from quiver.planners.optimizer.decorrelate_subqueries import rewrite_subqueries


@pytest.fixture(scope="module")
def views(spark):
    spark.createDataFrame([(1, 10), (1, 20), (2, 30), (3, None), (None, 50), (4, 60)],
                          "k int, v int").createOrReplaceTempView("rw_a")
    spark.createDataFrame([(1, 100), (2, 200), (2, None), (None, 300), (5, 500)],
                          "k int, w int").createOrReplaceTempView("rw_b")
    return spark


def _leftovers(plan: L.LogicalPlan) -> list[str]:
    """Correlated subqueries and outer references still in `plan` (uncorrelated scalars are inlined later)."""
    found = []
    for node in plan.walk():
        for e in node.expressions():
            for x in e.walk():
                if isinstance(x, OuterReference) or (isinstance(x, SubqueryExpression) and (
                        not isinstance(x, ScalarSubquery) or x.correlated)):
                    found.append(f"{x.sql()} in {node.node_string()}")
    return found


def _joins(plan: L.LogicalPlan) -> list[str]:
    return [n.how for n in plan.walk() if isinstance(n, L.Join)]


def _rewritten(spark, query: str) -> L.LogicalPlan:
    plan = rewrite_subqueries(spark.sql(query)._plan)
    assert _leftovers(plan) == []
    return plan


def _subqueries(plan: L.LogicalPlan) -> list[SubqueryExpression]:
    return [x for n in plan.walk() for e in n.expressions() for x in e.walk() if isinstance(x, SubqueryExpression)]


def test_subquery_over_the_outer_querys_own_view_is_correlated(views):
    # The subquery reads rw_a too: the outer columns' ids also occur deep inside its plan.
    plan = views.sql("SELECT a.k, (SELECT count(*) FROM rw_a x WHERE x.k = a.k) AS n FROM rw_a a")._plan
    (sub,) = _subqueries(plan)
    assert sub.correlated and [a.name for a in sub.outer_references()] == ["k"]


def test_two_correlation_keys_become_one_left_join(views, run_plan):
    plan = _rewritten(views, "SELECT a.k, a.v, (SELECT count(*) FROM rw_a x WHERE x.k = a.k AND x.v = a.v) AS n "
                             "FROM rw_a a")
    assert _joins(plan) == ["left"]
    assert run_plan(plan) == [(1, 10, 1), (1, 20, 1), (2, 30, 1), (3, None, 0), (4, 60, 1), (None, 50, 0)]


def test_correlated_scalar_in_arithmetic_in_where(views, run_plan):
    plan = _rewritten(views,
                      "SELECT a.k, a.v FROM rw_a a WHERE a.v - (SELECT min(x.v) FROM rw_a x WHERE x.k = a.k) > 0")
    assert _joins(plan) == ["left"]
    assert run_plan(plan) == [(1, 20)]


def test_several_subqueries_in_one_where(views, run_plan):
    plan = _rewritten(views, "SELECT a.k, a.v FROM rw_a a WHERE a.k IN (SELECT k FROM rw_b) "
                             "AND EXISTS (SELECT 1 FROM rw_b b WHERE b.k = a.k AND b.w > 150) "
                             "AND a.v >= (SELECT max(x.v) FROM rw_a x WHERE x.k = a.k)")
    assert sorted(_joins(plan)) == ["left", "left_semi", "left_semi"]
    assert run_plan(plan) == [(2, 30)]


def test_order_by_a_dropped_column_inside_a_subquery_is_not_an_outer_reference(views):
    plan = views.sql("SELECT k, (SELECT w FROM rw_b ORDER BY k DESC NULLS LAST LIMIT 1) AS top FROM rw_a")._plan
    (sub,) = _subqueries(plan)
    assert not sub.correlated
    assert views.sql("SELECT (SELECT w FROM rw_b ORDER BY k DESC NULLS LAST LIMIT 1) AS top").collect()[0].top == 500


def test_correlated_scalar_in_having_reads_a_grouping_column(views, run_plan, shape):
    plan = _rewritten(views, "SELECT a.k, count(*) AS c FROM rw_a a GROUP BY a.k "
                             "HAVING count(*) > (SELECT count(*) FROM rw_b b WHERE b.k = a.k)")
    # The aggregate is computed first; the subquery joins its groups.
    assert _joins(plan) == ["left"]
    join = next(n for n in plan.walk() if isinstance(n, L.Join))
    assert isinstance(join.left, L.Aggregate)
    # groups: 1 (2 rows vs 1), 2 (1 vs 2), 3 (1 vs 0), 4 (1 vs 0), null (1 vs 0: null never matches)
    assert run_plan(plan) == [(1, 2), (3, 1), (4, 1), (None, 1)]


def test_correlated_scalar_in_having_may_not_read_other_columns(views):
    from quiver.engine.core.errors import AnalysisException

    df = views.sql("SELECT a.k, count(*) AS c FROM rw_a a GROUP BY a.k "
                   "HAVING count(*) > (SELECT count(*) FROM rw_b b WHERE b.w = a.v)")
    with pytest.raises(AnalysisException, match="grouping columns"):
        rewrite_subqueries(df._plan)


@pytest.mark.parametrize("having, expected", [
    # key 1: one row; key 2: two rows; keys 3, 4, null: no rows (count 0)
    ("count(*) > 1", [(1, None), (2, 2), (3, None), (4, None), (None, None)]),
    ("count(*) < 2", [(1, 1), (2, None), (3, 0), (4, 0), (None, 0)]),
], ids=["rejects_empty_group", "accepts_empty_group"])
def test_having_inside_a_correlated_scalar_is_evaluated_above_the_join(views, run_plan, having, expected):
    plan = _rewritten(views, f"SELECT DISTINCT a.k, (SELECT count(*) FROM rw_b b WHERE b.k = a.k HAVING {having}) "
                             "AS n FROM rw_a a")
    assert _joins(plan) == ["left"]
    assert any(isinstance(x, CaseWhen) for n in plan.walk() for e in n.expressions() for x in e.walk())
    assert run_plan(plan) == expected


def test_count_bug_without_having_gives_zero(views, run_plan):
    plan = _rewritten(views, "SELECT DISTINCT a.k, (SELECT count(b.w) FROM rw_b b WHERE b.k = a.k) AS n FROM rw_a a")
    assert run_plan(plan) == [(1, 1), (2, 1), (3, 0), (4, 0), (None, 0)]


def test_multi_column_in_is_a_semi_join_on_every_column(views, run_plan):
    plan = _rewritten(views, "SELECT k, v FROM rw_a WHERE (k, v) IN (SELECT k, v FROM rw_a WHERE v > 15)")
    assert _joins(plan) == ["left_semi"]
    join = next(n for n in plan.walk() if isinstance(n, L.Join))
    assert len(join.condition.references()) == 4
    assert run_plan(plan) == [(1, 20), (2, 30), (4, 60)]


def test_multi_column_not_in_is_null_aware(views, run_plan):
    plan = _rewritten(views, "SELECT k, v FROM rw_a WHERE (k, v) NOT IN (SELECT k, w FROM rw_b WHERE k IN (1, 2))")
    assert _joins(plan) == ["left_anti"]
    # Against (2, null), (2, 30) compares as true AND unknown, and (null, 50) as unknown AND unknown: both
    # unknown, which rejects; a false column (k = 3 vs 1 or 2) makes the whole comparison false. As PySpark.
    assert run_plan(plan) == [(1, 10), (1, 20), (3, None), (4, 60)]


def test_multi_column_in_needs_one_subquery_column_per_value(views):
    from quiver.engine.core.errors import AnalysisException

    with pytest.raises(AnalysisException, match="2 columns"):
        views.sql("SELECT k FROM rw_a WHERE (k, v) IN (SELECT k FROM rw_b)")
    plan = views.sql("SELECT k FROM rw_a WHERE (k, v) IN (SELECT k, w FROM rw_b)")._plan
    (sub,) = _subqueries(plan)
    assert isinstance(sub, InSubquery) and len(sub.values) == 2


@pytest.mark.parametrize("negated, expected", [(False, 6), (True, 0)], ids=["exists", "not_exists"])
def test_exists_over_an_aggregate_without_grouping_is_always_true(views, run_plan, negated, expected):
    not_ = "NOT " if negated else ""
    plan = _rewritten(views, f"SELECT a.k FROM rw_a a WHERE {not_}EXISTS (SELECT count(*) FROM rw_b b WHERE b.k = a.k)")
    assert _joins(plan) == []
    assert len(run_plan(plan)) == expected


def test_exists_over_a_grouped_aggregate_still_joins(views, run_plan):
    plan = _rewritten(views,
                      "SELECT a.k FROM rw_a a WHERE EXISTS (SELECT b.w FROM rw_b b WHERE b.k = a.k GROUP BY b.w)")
    assert _joins(plan) == ["left_semi"]
    assert run_plan(plan) == [(1,), (1,), (2,)]


def test_having_inside_a_correlated_scalar_may_read_the_outer_row(views, run_plan):
    plan = _rewritten(views,
                      "SELECT DISTINCT a.k, (SELECT count(*) FROM rw_b b WHERE b.k = a.k HAVING count(*) >= a.k) "
                             "AS n FROM rw_a a")
    assert _joins(plan) == ["left"]
    # key 1: 1 >= 1; key 2: 2 >= 2; keys 3, 4: the empty group's 0 is rejected; null: unknown, rejected.
    assert run_plan(plan) == [(1, 1), (2, 2), (3, None), (4, None), (None, None)]


@pytest.mark.parametrize("subquery_nulls", [False, True], ids=["no-nulls", "a-null"])
def test_not_in_over_parquet_without_nulls_is_a_plain_anti_join(spark, tmp_path, subquery_nulls):
    """Columns stay nullable (as Spark reads files), but footers that count no nulls on either side
    make NOT IN a plain anti join, with no null-counting subqueries; one null keeps it null-aware."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    pq.write_table(pa.table({"k": pa.array([1, 2, 3, 4], pa.int64())}), tmp_path / "outer.parquet")
    inner = [2, 3, None] if subquery_nulls else [2, 3]
    pq.write_table(pa.table({"j": pa.array(inner, pa.int64())}), tmp_path / "inner.parquet")
    spark.read.parquet(str(tmp_path / "outer.parquet")).createOrReplaceTempView("ni_outer")
    spark.read.parquet(str(tmp_path / "inner.parquet")).createOrReplaceTempView("ni_inner")
    query = "SELECT k FROM ni_outer WHERE k NOT IN (SELECT j FROM ni_inner)"
    plan = _rewritten(spark, query)
    assert _joins(plan) == ["left_anti"]
    assert bool(_subqueries(plan)) == subquery_nulls
    assert sorted(tuple(r) for r in spark.sql(query).collect()) == ([] if subquery_nulls else [(1,), (4,)])
