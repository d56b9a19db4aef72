"""All 22 TPC-H queries in the DataFrame API (benchmarks/tpch/dataframe_queries.py), compared with DuckDB's
answers to the SQL text.

The DataFrame forms of Q1's averages and Q8's ratio are doubles where the SQL gives decimals; the
comparison reads both as numbers, to 1e-6 relative.
"""
from __future__ import annotations

import pytest

from benchmarks.tpch.dataframe_queries import QUERIES
from benchmarks.tpch.queries import QUERY_NUMBERS


@pytest.fixture(scope="module")
def tpch_dataframes(tpch_session, tpch_tables):
    """The eight tables as DataFrames by name: the same views the SQL test reads."""
    return {name: tpch_session.table(name) for name in tpch_tables}


def test_every_query_has_a_dataframe_form():
    assert sorted(QUERIES) == list(QUERY_NUMBERS)


@pytest.mark.parametrize("number", QUERY_NUMBERS, ids=lambda n: f"q{n:02d}")
def test_dataframe_query_matches_duckdb(tpch_session, tpch_dataframes, assert_matches_duckdb, number):
    assert_matches_duckdb(number, QUERIES[number](tpch_session, tpch_dataframes).toArrow())


@pytest.mark.parametrize("number", QUERY_NUMBERS, ids=lambda n: f"q{n:02d}")
def test_dataframe_query_matches_duckdb_on_one_shuffle_partition(
    tpch_session, tpch_dataframes, assert_matches_duckdb, one_shuffle_partition, number
):
    assert_matches_duckdb(number, QUERIES[number](tpch_session, tpch_dataframes).toArrow())
