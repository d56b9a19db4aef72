"""All 22 TPC-H queries through spark.sql, every row compared with DuckDB's answer."""
from __future__ import annotations

import pytest

from benchmarks.tpch.answers import answer_difference
from benchmarks.tpch.queries import QUERY_NUMBERS, has_order_by, sql_text


@pytest.mark.parametrize("number", QUERY_NUMBERS, ids=lambda n: f"q{n:02d}")
def test_sql_query_matches_duckdb(tpch_session, duckdb_answers, number):
    answer = tpch_session.sql(sql_text(number)).toArrow()
    difference = answer_difference(duckdb_answers[number], answer, ordered=has_order_by(number))
    assert difference is None, f"Q{number}: {difference}"


@pytest.mark.parametrize("number", QUERY_NUMBERS, ids=lambda n: f"q{n:02d}")
def test_sql_query_matches_duckdb_on_one_shuffle_partition(tpch_session, duckdb_answers, number):
    """One partition takes other physical paths (no range exchange, single-task joins)."""
    previous = tpch_session.conf.get("spark.sql.shuffle.partitions")
    tpch_session.conf.set("spark.sql.shuffle.partitions", 1)
    try:
        answer = tpch_session.sql(sql_text(number)).toArrow()
    finally:
        tpch_session.conf.set("spark.sql.shuffle.partitions", previous)
    difference = answer_difference(duckdb_answers[number], answer, ordered=has_order_by(number))
    assert difference is None, f"Q{number}: {difference}"


@pytest.mark.parametrize("number", [2, 4, 11, 15, 16, 17, 18, 20, 21, 22], ids=lambda n: f"q{n:02d}")
def test_subqueries_are_decorrelated_into_joins(tpch_session, number):
    """No subquery is left for per-row execution: each became a join or an inlined value."""
    from quiver.engine.subqueries import has_subquery

    optimized = tpch_session.sql(sql_text(number))._execution().optimized
    assert not any(has_subquery(e) for node in optimized.walk() for e in node.expressions())
