"""All 22 TPC-H queries through spark.sql, every row compared with DuckDB's answer."""
from __future__ import annotations

import pytest

from benchmarks.tpch.queries import QUERY_NUMBERS, sql_text


@pytest.mark.parametrize("number", QUERY_NUMBERS, ids=lambda n: f"q{n:02d}")
def test_sql_query_matches_duckdb(tpch_session, assert_matches_duckdb, number):
    assert_matches_duckdb(number, tpch_session.sql(sql_text(number)).toArrow())


@pytest.mark.parametrize("number", QUERY_NUMBERS, ids=lambda n: f"q{n:02d}")
def test_sql_query_matches_duckdb_on_one_shuffle_partition(
    tpch_session, assert_matches_duckdb, one_shuffle_partition, number
):
    assert_matches_duckdb(number, tpch_session.sql(sql_text(number)).toArrow())


@pytest.mark.parametrize("number", [2, 4, 11, 15, 16, 17, 18, 20, 21, 22], ids=lambda n: f"q{n:02d}")
def test_subqueries_are_decorrelated_into_joins(tpch_session, number):
    """No subquery is left for per-row execution: each became a join or an inlined value."""
    from quiver.engine.core.subqueries import has_subquery

    optimized = tpch_session.sql(sql_text(number))._execution().optimized
    assert not any(has_subquery(e) for node in optimized.walk() for e in node.expressions())
