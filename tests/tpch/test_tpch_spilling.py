"""All 22 TPC-H queries under a memory budget far below their state, every row compared with DuckDB's answer:
the block store, hash aggregates, hash joins and sorts spill, and the answers do not change."""
from __future__ import annotations

import pytest

from benchmarks.tpch.queries import QUERY_NUMBERS, sql_text

# SF 0.01's lineitem is about 6 MB in Arrow: at 64 KiB every join's build side and every shuffle spills.
BUDGET = "64k"


@pytest.fixture(scope="module")
def under_budget(tpch_session):
    tpch_session.conf.set("quiver.memory.limit", BUDGET)
    yield tpch_session
    tpch_session.conf.unset("quiver.memory.limit")


@pytest.mark.parametrize("number", QUERY_NUMBERS, ids=lambda n: f"q{n:02d}")
def test_sql_query_under_a_small_memory_budget_matches_duckdb(under_budget, assert_matches_duckdb, number):
    assert_matches_duckdb(number, under_budget.sql(sql_text(number)).toArrow())


def test_the_budget_made_the_operators_and_the_block_store_spill(under_budget):
    # Quiver's own operators: a join in a native fragment spills inside DuckDB, which Quiver's counts do not see.
    previous = under_budget.conf.get("quiver.native.engine")
    under_budget.conf.set("quiver.native.engine", "none")
    try:
        under_budget.sql(sql_text(9)).toArrow()
    finally:
        under_budget.conf.set("quiver.native.engine", previous)
    job = under_budget.lastJob()
    assert any(op.startswith("HashJoin") for op in job.spills), job.spills
    assert job.object_store["spilled_bytes"] > 0
