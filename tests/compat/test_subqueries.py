"""SQL subqueries on PySpark and Quiver: scalar, IN / NOT IN, EXISTS / NOT EXISTS, nested and correlated."""
from __future__ import annotations

from decimal import Decimal

import pytest

from .data import depts, people
from .harness import assert_both_raise, assert_same


def _register_views(spark) -> None:
    """The temp views every query here reads (names prefixed `sq_` so other suites' views stay theirs)."""
    people(spark).createOrReplaceTempView("sq_people")
    depts(spark).createOrReplaceTempView("sq_depts")
    spark.createDataFrame([(1, 10), (1, 20), (2, 30), (3, None), (None, 50), (4, 60)],
                          "k int, v int").createOrReplaceTempView("sq_a")
    spark.createDataFrame([(1, 100), (2, 200), (2, None), (None, 300), (5, 500)],
                          "k int, w int").createOrReplaceTempView("sq_b")
    spark.createDataFrame([(1,), (3,), (2 ** 40,)], "b bigint").createOrReplaceTempView("sq_bigs")
    spark.createDataFrame([(Decimal("1.00"),), (Decimal("2.50"),), (Decimal("4.00"),)],
                          "d decimal(10,2)").createOrReplaceTempView("sq_decs")
    spark.createDataFrame([], "k int, v int").createOrReplaceTempView("sq_empty")


def _sql_program(name: str, query: str):
    """A differential program that registers the views and runs `query`."""
    def program(spark, F, T, Window):
        _register_views(spark)
        return spark.sql(query)
    program.__name__ = name
    return program


SCALAR = {
    "select_uncorrelated": "SELECT name, (SELECT max(age) FROM sq_people) AS oldest FROM sq_people",
    "select_uncorrelated_empty_is_null":
        "SELECT name, (SELECT max(age) FROM sq_people WHERE age > 100) AS m FROM sq_people",
    "select_non_aggregate_empty_is_null": "SELECT (SELECT name FROM sq_people WHERE id = 99) AS n",
    "select_non_aggregate_one_row": "SELECT (SELECT name FROM sq_people WHERE id = 3) AS n",
    "select_without_from": "SELECT (SELECT count(*) FROM sq_people) AS c, (SELECT sum(v) FROM sq_a) + 1 AS s",
    "select_limit_one": "SELECT id, (SELECT name FROM sq_people ORDER BY age DESC NULLS LAST, id LIMIT 1) AS top "
                        "FROM sq_people",
    "select_in_expression": "SELECT id, salary / (SELECT count(*) FROM sq_depts) AS share FROM sq_people",
    "select_correlated_sum":
        "SELECT d.dept_name, (SELECT sum(p.salary) FROM sq_people p WHERE p.dept_id = d.dept_id) AS total "
        "FROM sq_depts d",
    "select_correlated_count_bug":
        "SELECT d.dept_name, (SELECT count(*) FROM sq_people p WHERE p.dept_id = d.dept_id) AS n FROM sq_depts d",
    "select_correlated_count_column":
        "SELECT d.dept_name, (SELECT count(p.age) FROM sq_people p WHERE p.dept_id = d.dept_id) AS n "
        "FROM sq_depts d",
    "select_correlated_count_plus_one":
        "SELECT d.dept_name, (SELECT count(*) + 1 FROM sq_people p WHERE p.dept_id = d.dept_id) AS n "
        "FROM sq_depts d",
    "select_correlated_coalesce_sum":
        "SELECT d.dept_name, (SELECT coalesce(sum(p.age), -1) FROM sq_people p WHERE p.dept_id = d.dept_id) AS n "
        "FROM sq_depts d",
    "select_correlated_two_keys":
        "SELECT a.k, a.v, (SELECT count(*) FROM sq_a x WHERE x.k = a.k AND x.v = a.v) AS n FROM sq_a a",
    "select_correlated_in_arithmetic":
        "SELECT p1.name, p1.salary - (SELECT avg(p2.salary) FROM sq_people p2 WHERE p2.dept_id = p1.dept_id) AS diff "
        "FROM sq_people p1",
    "select_correlated_twice":
        "SELECT d.dept_name, (SELECT min(age) FROM sq_people p WHERE p.dept_id = d.dept_id) AS lo, "
        "(SELECT max(age) FROM sq_people p WHERE p.dept_id = d.dept_id) AS hi FROM sq_depts d",
    "select_correlated_with_local_filter":
        "SELECT d.dept_name, (SELECT count(*) FROM sq_people p WHERE p.dept_id = d.dept_id AND p.age > 30) AS n "
        "FROM sq_depts d",
    "where_uncorrelated": "SELECT name FROM sq_people WHERE age > (SELECT avg(age) FROM sq_people)",
    "where_uncorrelated_empty_gives_no_rows":
        "SELECT name FROM sq_people WHERE age > (SELECT max(age) FROM sq_people WHERE age > 100)",
    "where_correlated_avg":
        "SELECT p1.name FROM sq_people p1 "
        "WHERE p1.salary > (SELECT avg(p2.salary) FROM sq_people p2 WHERE p2.dept_id = p1.dept_id)",
    "where_correlated_same_table_unqualified":
        "SELECT name, salary FROM sq_people p "
        "WHERE salary = (SELECT max(salary) FROM sq_people WHERE dept_id = p.dept_id)",
    "where_count_bug_zero":
        "SELECT d.dept_name FROM sq_depts d WHERE (SELECT count(*) FROM sq_people p WHERE p.dept_id = d.dept_id) = 0",
    "where_count_bug_less_than":
        "SELECT d.dept_name FROM sq_depts d "
        "WHERE (SELECT count(*) FROM sq_people p WHERE p.dept_id = d.dept_id) < 3",
    "where_correlated_max_is_null":
        "SELECT d.dept_name FROM sq_depts d "
        "WHERE (SELECT max(p.age) FROM sq_people p WHERE p.dept_id = d.dept_id) IS NULL",
    "having_uncorrelated":
        "SELECT dept_id, count(*) AS c FROM sq_people GROUP BY dept_id "
        "HAVING count(*) >= (SELECT count(*) FROM sq_depts) / 2",
    "having_uncorrelated_avg":
        "SELECT dept_id, avg(salary) AS s FROM sq_people GROUP BY dept_id "
        "HAVING avg(salary) > (SELECT avg(salary) FROM sq_people)",
    "having_correlated_on_grouping_column":
        "SELECT p.dept_id, count(*) AS c FROM sq_people p GROUP BY p.dept_id "
        "HAVING count(*) > (SELECT count(*) FROM sq_depts d WHERE d.dept_id = p.dept_id)",
    "correlated_having_inside_subquery":
        "SELECT d.dept_name, (SELECT count(*) FROM sq_people p WHERE p.dept_id = d.dept_id HAVING count(*) > 1) AS n "
        "FROM sq_depts d",
    "correlated_having_inside_subquery_true_on_empty":
        "SELECT d.dept_name, (SELECT count(*) FROM sq_people p WHERE p.dept_id = d.dept_id HAVING count(*) < 3) AS n "
        "FROM sq_depts d",
    "scalar_in_order_by":
        "SELECT name FROM sq_people ORDER BY abs(age - (SELECT avg(age) FROM sq_people)) NULLS LAST, name",
    "scalar_in_case":
        "SELECT name, CASE WHEN age > (SELECT avg(age) FROM sq_people) THEN 'old' ELSE 'young' END AS band "
        "FROM sq_people",
    "scalar_inside_derived_table":
        "SELECT * FROM (SELECT name, age - (SELECT min(age) FROM sq_people) AS rel FROM sq_people) t WHERE rel > 10",
    "scalar_string_value": "SELECT id FROM sq_people WHERE city = (SELECT hq FROM sq_depts WHERE dept_id = 20)",
}


IN = {
    "in_basic": "SELECT name FROM sq_people WHERE dept_id IN (SELECT dept_id FROM sq_depts)",
    "in_null_probe_and_null_in_list": "SELECT k, v FROM sq_a WHERE k IN (SELECT k FROM sq_b)",
    "not_in_null_in_subquery_gives_nothing": "SELECT name FROM sq_people "
                                             "WHERE dept_id NOT IN (SELECT dept_id FROM sq_depts)",
    "not_in_null_probe_excluded":
        "SELECT name FROM sq_people WHERE dept_id NOT IN (SELECT dept_id FROM sq_depts WHERE dept_id IS NOT NULL)",
    "not_in_empty_subquery_keeps_null_probe":
        "SELECT name FROM sq_people WHERE dept_id NOT IN (SELECT dept_id FROM sq_depts WHERE dept_id > 100)",
    "not_in_empty_view": "SELECT k, v FROM sq_a WHERE k NOT IN (SELECT k FROM sq_empty)",
    "not_in_non_nullable_subquery": "SELECT k, v FROM sq_a WHERE k NOT IN (SELECT id FROM range(1, 3))",
    "not_in_non_nullable_probe": "SELECT id FROM range(0, 6) WHERE id NOT IN (SELECT k FROM sq_b)",
    "not_in_both_non_nullable": "SELECT id FROM range(0, 6) WHERE id NOT IN (SELECT id * 2 FROM range(0, 3))",
    "in_with_not_outside": "SELECT k, v FROM sq_a WHERE NOT (k IN (SELECT k FROM sq_b WHERE k IS NOT NULL))",
    "in_expression_probe": "SELECT k, v FROM sq_a WHERE k + 1 IN (SELECT k FROM sq_b)",
    "in_distinct_subquery": "SELECT k, v FROM sq_a WHERE k IN (SELECT DISTINCT k FROM sq_b)",
    "in_aggregated_subquery": "SELECT k, v FROM sq_a WHERE v IN (SELECT max(v) FROM sq_a GROUP BY k)",
    "in_int_vs_bigint": "SELECT k, v FROM sq_a WHERE k IN (SELECT b FROM sq_bigs)",
    "in_bigint_vs_int": "SELECT b FROM sq_bigs WHERE b IN (SELECT k FROM sq_a)",
    "not_in_bigint_vs_int": "SELECT b FROM sq_bigs WHERE b NOT IN (SELECT k FROM sq_a WHERE k IS NOT NULL)",
    "in_int_vs_decimal": "SELECT k, v FROM sq_a WHERE k IN (SELECT d FROM sq_decs)",
    "in_decimal_vs_int": "SELECT d FROM sq_decs WHERE d IN (SELECT k FROM sq_a)",
    "in_double_vs_decimal": "SELECT name FROM sq_people WHERE salary / 1000 IN (SELECT d FROM sq_decs)",
    "in_correlated":
        "SELECT p.name FROM sq_people p WHERE p.dept_id IN (SELECT d.dept_id FROM sq_depts d WHERE d.hq = p.city)",
    "not_in_correlated":
        "SELECT p.name FROM sq_people p "
        "WHERE p.dept_id NOT IN (SELECT d.dept_id FROM sq_depts d WHERE d.hq = p.city)",
    "not_in_correlated_with_nulls":
        "SELECT a.k, a.v FROM sq_a a WHERE a.v NOT IN (SELECT b.w FROM sq_b b WHERE b.k = a.k)",
    "in_two_subqueries": "SELECT k, v FROM sq_a WHERE k IN (SELECT k FROM sq_b) "
                         "AND v IN (SELECT v FROM sq_a WHERE v > 15)",
    "in_and_not_in": "SELECT k, v FROM sq_a WHERE k IN (SELECT k FROM sq_b) AND k NOT IN (SELECT k FROM sq_empty)",
    "in_multi_column": "SELECT k, v FROM sq_a WHERE (k, v) IN (SELECT k, v FROM sq_a WHERE v > 15)",
}


EXISTS = {
    "exists_correlated": "SELECT d.dept_name FROM sq_depts d "
                         "WHERE EXISTS (SELECT 1 FROM sq_people p WHERE p.dept_id = d.dept_id)",
    "not_exists_correlated":
        "SELECT d.dept_name FROM sq_depts d WHERE NOT EXISTS (SELECT 1 FROM sq_people p WHERE p.dept_id = d.dept_id)",
    "exists_extra_non_equality":
        "SELECT d.dept_name FROM sq_depts d "
        "WHERE EXISTS (SELECT * FROM sq_people p WHERE p.dept_id = d.dept_id AND p.city <> d.hq)",
    "not_exists_extra_non_equality":
        "SELECT d.dept_name FROM sq_depts d "
        "WHERE NOT EXISTS (SELECT * FROM sq_people p WHERE p.dept_id = d.dept_id AND p.city <> d.hq)",
    "exists_only_non_equality":
        "SELECT a.k, a.v FROM sq_a a WHERE EXISTS (SELECT 1 FROM sq_b b WHERE b.w > a.v * 10)",
    "exists_uncorrelated_true": "SELECT name FROM sq_people WHERE EXISTS (SELECT 1 FROM sq_depts WHERE hq = 'Rome')",
    "exists_uncorrelated_false": "SELECT name FROM sq_people WHERE EXISTS (SELECT 1 FROM sq_depts WHERE hq = 'Oslo')",
    "not_exists_uncorrelated": "SELECT name FROM sq_people WHERE NOT EXISTS (SELECT 1 FROM sq_empty)",
    "exists_with_local_and_outer_filters":
        "SELECT p.name FROM sq_people p WHERE p.age > 30 "
        "AND EXISTS (SELECT 1 FROM sq_depts d WHERE d.dept_id = p.dept_id AND d.hq = 'Paris')",
    "exists_aggregate_always_one_row":
        "SELECT d.dept_name FROM sq_depts d "
        "WHERE EXISTS (SELECT count(*) FROM sq_people p WHERE p.dept_id = d.dept_id)",
    "exists_group_by_subquery":
        "SELECT d.dept_name FROM sq_depts d "
        "WHERE EXISTS (SELECT p.city FROM sq_people p WHERE p.dept_id = d.dept_id GROUP BY p.city)",
    "exists_subquery_with_join":
        "SELECT a.k, a.v FROM sq_a a "
        "WHERE EXISTS (SELECT 1 FROM sq_b b JOIN sq_people p ON b.k = p.id WHERE b.k = a.k)",
    "exists_null_keys_never_match":
        "SELECT a.k, a.v FROM sq_a a WHERE NOT EXISTS (SELECT 1 FROM sq_b b WHERE b.k = a.k)",
}


NESTED = {
    "nested_in_in":
        "SELECT name FROM sq_people WHERE dept_id IN "
        "(SELECT dept_id FROM sq_depts WHERE hq IN (SELECT city FROM sq_people WHERE age > 40))",
    "nested_exists_with_correlated_scalar":
        "SELECT d.dept_name FROM sq_depts d WHERE EXISTS (SELECT 1 FROM sq_people p WHERE p.dept_id = d.dept_id "
        "AND p.salary >= (SELECT avg(p2.salary) FROM sq_people p2 WHERE p2.dept_id = p.dept_id))",
    "nested_scalar_in_scalar":
        "SELECT name FROM sq_people WHERE age > (SELECT avg(age) FROM sq_people "
        "WHERE dept_id = (SELECT min(dept_id) FROM sq_depts))",
    "nested_not_exists_inside_exists":
        "SELECT d.dept_name FROM sq_depts d WHERE EXISTS (SELECT 1 FROM sq_people p WHERE p.dept_id = d.dept_id "
        "AND NOT EXISTS (SELECT 1 FROM sq_a a WHERE a.k = p.id))",
    "nested_correlated_scalar_in_select_of_exists":
        "SELECT a.k FROM sq_a a WHERE EXISTS (SELECT 1 FROM sq_b b WHERE b.k = a.k "
        "AND b.w > (SELECT count(*) FROM sq_a a2 WHERE a2.k = b.k))",
    "cte_in_subquery":
        "WITH rich AS (SELECT * FROM sq_people WHERE salary > 4000) "
        "SELECT d.dept_name FROM sq_depts d WHERE EXISTS (SELECT 1 FROM rich r WHERE r.dept_id = d.dept_id)",
    "cte_outer_and_inner":
        "WITH known AS (SELECT * FROM sq_people WHERE age IS NOT NULL) "
        "SELECT name FROM known WHERE age > (SELECT avg(age) FROM known)",
    "cte_correlated_same_cte":
        "WITH known AS (SELECT * FROM sq_people WHERE age IS NOT NULL) "
        "SELECT k1.name FROM known k1 WHERE k1.age = (SELECT max(k2.age) FROM known k2 WHERE k2.city = k1.city)",
    "cte_in_list":
        "WITH ids AS (SELECT k FROM sq_b WHERE w > 150) SELECT k, v FROM sq_a WHERE k IN (SELECT k FROM ids)",
    "same_table_in": "SELECT name FROM sq_people WHERE id IN (SELECT id FROM sq_people WHERE age > 30)",
    "same_table_not_exists_self":
        "SELECT p.name FROM sq_people p WHERE NOT EXISTS "
        "(SELECT 1 FROM sq_people q WHERE q.dept_id = p.dept_id AND q.salary > p.salary)",
    "multiple_subqueries_in_where":
        "SELECT p.name FROM sq_people p WHERE p.dept_id IN (SELECT dept_id FROM sq_depts) "
        "AND EXISTS (SELECT 1 FROM sq_a a WHERE a.k = p.id) "
        "AND p.age < (SELECT max(age) FROM sq_people) "
        "AND p.salary >= (SELECT min(q.salary) FROM sq_people q WHERE q.dept_id = p.dept_id)",
    "with_join_and_group_by":
        "SELECT d.dept_name, count(*) AS n, sum(p.salary) AS s FROM sq_people p JOIN sq_depts d "
        "ON p.dept_id = d.dept_id WHERE p.age > (SELECT min(age) FROM sq_people) "
        "AND d.hq IN (SELECT city FROM sq_people) GROUP BY d.dept_name",
    "with_left_join_and_exists":
        "SELECT p.name, d.dept_name FROM sq_people p LEFT JOIN sq_depts d ON p.dept_id = d.dept_id "
        "WHERE EXISTS (SELECT 1 FROM sq_a a WHERE a.k = p.id)",
    "group_by_over_filtered_subquery":
        "SELECT city, count(*) AS n FROM sq_people WHERE dept_id NOT IN (SELECT k FROM sq_b WHERE k IS NOT NULL) "
        "GROUP BY city",
    "subquery_in_derived_table_with_exists":
        "SELECT t.dept_name FROM (SELECT * FROM sq_depts d WHERE EXISTS "
        "(SELECT 1 FROM sq_people p WHERE p.dept_id = d.dept_id)) t WHERE t.hq = 'Paris'",
    "union_of_subquery_filters":
        "SELECT k FROM sq_a WHERE k IN (SELECT k FROM sq_b) UNION ALL SELECT k FROM sq_a WHERE k NOT IN (SELECT 1)",
}


def _cases(group: dict[str, str]) -> list:
    return [pytest.param(name, query, id=name) for name, query in group.items()]


@pytest.mark.parametrize("name, query", _cases(SCALAR))
def test_scalar_subquery(name, query):
    assert_same(_sql_program(name, query))


@pytest.mark.parametrize("name, query", _cases(IN))
def test_in_subquery(name, query):
    assert_same(_sql_program(name, query))


@pytest.mark.parametrize("name, query", _cases(EXISTS))
def test_exists_subquery(name, query):
    assert_same(_sql_program(name, query))


@pytest.mark.parametrize("name, query", _cases(NESTED))
def test_nested_and_combined_subqueries(name, query):
    assert_same(_sql_program(name, query))


def _analysis_exception():
    from quiver.engine.core.errors import AnalysisException
    return AnalysisException


def _collect_program(name: str, query: str):
    """A program that runs `query` to the end, so errors raised while running count too."""
    def program(spark, F, T, Window):
        _register_views(spark)
        return spark.sql(query).collect()
    program.__name__ = name
    return program


def test_scalar_subquery_with_more_than_one_row_raises():
    from quiver.engine.core.errors import QuiverError

    program = _collect_program("too_many_rows", "SELECT name, (SELECT age FROM sq_people) AS a FROM sq_people")
    assert_both_raise(program, QuiverError, match=["scalar subquery", "more than one row"])


def test_scalar_subquery_with_two_columns_raises():
    program = _collect_program("two_columns", "SELECT (SELECT id, name FROM sq_people WHERE id = 1) AS x")
    assert_both_raise(program, _analysis_exception(), match=["one column", "id, name"])


def test_in_subquery_with_two_columns_for_one_value_raises():
    program = _collect_program("in_two_columns", "SELECT * FROM sq_a WHERE k IN (SELECT k, w FROM sq_b)")
    assert_both_raise(program, _analysis_exception(), match=["one column"])


def test_unknown_column_inside_subquery_is_named():
    program = _collect_program(
        "unknown_inner_column",
        "SELECT * FROM sq_depts d WHERE EXISTS (SELECT 1 FROM sq_people p WHERE p.dept = d.dept_id)")
    assert_both_raise(program, _analysis_exception(), match=["p.dept", "dept_id"])


def test_correlated_scalar_subquery_not_aggregated_raises():
    program = _collect_program(
        "correlated_not_aggregated",
        "SELECT d.dept_name, (SELECT p.name FROM sq_people p WHERE p.dept_id = d.dept_id) AS n FROM sq_depts d")
    assert_both_raise(program, _analysis_exception(), match=["correlated scalar subquery", "aggregate"])
