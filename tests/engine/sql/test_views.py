"""Temp-view statements in `spark.sql` (`quiver/engine/sql/views.py`): CREATE / DROP VIEW, CACHE / UNCACHE TABLE.

Each statement acts when `spark.sql` runs it and returns an empty DataFrame, as in Spark;
the views it makes are the ones `createOrReplaceTempView` makes. The statement sequences
at the end run on real PySpark too and must leave the same views behind.
"""
from __future__ import annotations

import pytest

from quiver.engine.core.errors import AnalysisException, ParseException

ROWS = [("a", 1, 10.0), ("a", 2, None), ("b", 1, 1.0), (None, 3, 3.0)]
SCHEMA = "k string, t int, v double"


@pytest.fixture()
def base(spark):
    """The session with a fresh `sv_base` view; every view these tests make is dropped afterwards."""
    before = set(spark._catalog.view_names())
    spark.createDataFrame(ROWS, SCHEMA).createOrReplaceTempView("sv_base")
    yield spark
    for name in set(spark._catalog.view_names()) - before:
        spark.catalog.dropTempView(name)


def _rows(df) -> list[tuple]:
    return sorted((tuple(r) for r in df.collect()), key=str)


# ---------------------------------------------------------------- CREATE VIEW


def test_create_view_returns_an_empty_result_and_registers_the_query(base):
    result = base.sql("CREATE TEMPORARY VIEW sv_a AS SELECT k, t + 1 AS t1 FROM sv_base WHERE t < 3")
    assert result.columns == [] and result.collect() == []
    view = base.sql("SELECT * FROM sv_a")
    assert view.columns == ["k", "t1"]
    assert _rows(view) == sorted([("a", 2), ("a", 3), ("b", 2)], key=str)
    assert "sv_a" in base.catalog.listTables()
    assert _rows(base.table("sv_a")) == _rows(view)


def test_create_view_that_exists_needs_or_replace(base):
    base.sql("CREATE TEMP VIEW sv_b AS SELECT k FROM sv_base")
    with pytest.raises(AnalysisException, match="'SV_B' because it already exists.*CREATE OR REPLACE"):
        base.sql("CREATE TEMP VIEW SV_B AS SELECT t FROM sv_base")
    base.sql("CREATE OR REPLACE TEMPORARY VIEW sv_b AS SELECT t FROM sv_base")
    assert base.sql("SELECT * FROM sv_b").columns == ["t"]


def test_create_view_names_its_columns(base):
    base.sql("CREATE TEMP VIEW sv_c (key, value COMMENT 'the value') AS SELECT k, v FROM sv_base")
    df = base.sql("SELECT * FROM sv_c")
    assert df.columns == ["key", "value"] and df.dtypes == [("key", "string"), ("value", "double")]


@pytest.mark.parametrize("statement, needles", [
    ("CREATE TEMP VIEW sv_d (a) AS SELECT k, t FROM sv_base", ["names 1 columns (a)", "returns 2 (k, t)"]),
    ("CREATE TEMP VIEW sv_d AS SELECT k, k FROM sv_base", ["'k' appears twice"]),
    ("CREATE TEMP VIEW db.sv_d AS SELECT 1", ["cannot be qualified", "db.sv_d"]),
    ("CREATE TEMP VIEW sv_d AS SELECT nope FROM sv_base", ["nope"]),
])
def test_create_view_mistakes(base, statement, needles):
    with pytest.raises(AnalysisException) as info:
        base.sql(statement)
    for needle in needles:
        assert needle.lower() in str(info.value).lower(), str(info.value)
    assert not base._catalog.has_view("sv_d")


@pytest.mark.parametrize("statement, needles", [
    ("CREATE VIEW sv_e AS SELECT 1", ["without TEMPORARY", "CREATE [OR REPLACE] TEMPORARY VIEW"]),
    ("CREATE TEMPORARY TABLE sv_e AS SELECT 1", ["CREATE TABLE"]),
    ("CREATE TEMPORARY VIEW IF NOT EXISTS sv_e AS SELECT 1", ["IF NOT EXISTS", "OR REPLACE"]),
    ("CREATE TEMPORARY VIEW sv_e USING parquet OPTIONS (path '/tmp/x')", ["spark.read"]),
    ("SHOW TABLES", ["SHOW", "CREATE/DROP TEMPORARY VIEW"]),
])
def test_unsupported_statements_say_what_is_supported(base, statement, needles):
    with pytest.raises(ParseException) as info:
        base.sql(statement)
    for needle in needles:
        assert needle.lower() in str(info.value).lower(), str(info.value)


def test_views_of_views_windows_and_ctes(base):
    base.sql("CREATE TEMP VIEW sv_f AS WITH c AS (SELECT k, t FROM sv_base WHERE k IS NOT NULL) "
             "SELECT k, row_number() OVER (PARTITION BY k ORDER BY t DESC) AS rn FROM c")
    base.sql("CREATE TEMP VIEW sv_g AS SELECT k FROM sv_f WHERE rn = 1")
    assert _rows(base.sql("SELECT * FROM sv_g")) == [("a",), ("b",)]


def test_global_temp_view_is_read_through_global_temp(base):
    base.sql("CREATE OR REPLACE GLOBAL TEMPORARY VIEW sv_h AS SELECT 1 AS one")
    assert _rows(base.sql("SELECT * FROM global_temp.sv_h")) == [(1,)]
    base.sql("DROP VIEW global_temp.sv_h")
    assert not base._catalog.has_view("sv_h")


# ---------------------------------------------------------------- DROP VIEW


def test_drop_view(base):
    base.sql("CREATE TEMP VIEW sv_i AS SELECT k FROM sv_base")
    assert base.sql("DROP VIEW sv_i").collect() == []
    with pytest.raises(AnalysisException, match="not found"):
        base.sql("SELECT * FROM sv_i")


def test_drop_missing_view_needs_if_exists(base):
    with pytest.raises(AnalysisException) as info:
        base.sql("DROP VIEW sv_missing")
    assert "'sv_missing' not found" in str(info.value) and "sv_base" in str(info.value)
    assert "IF EXISTS" in str(info.value)
    assert base.sql("DROP VIEW IF EXISTS sv_missing").collect() == []


def test_drop_table_drops_a_temp_view(base):
    base.sql("CREATE TEMP VIEW sv_j AS SELECT 1 AS x")
    base.sql("DROP TABLE sv_j")
    assert not base._catalog.has_view("sv_j")
    base.sql("DROP TABLE IF EXISTS sv_j")


def test_drop_view_uncaches_it(base):
    base.sql("CREATE TEMP VIEW sv_k AS SELECT k FROM sv_base")
    base.sql("CACHE LAZY TABLE sv_k")
    plan = base._catalog.view("sv_k")
    base.sql("DROP VIEW sv_k")
    assert not base._context.cache.is_cached(plan)


# ---------------------------------------------------------------- CACHE / UNCACHE TABLE


def test_cache_and_uncache_table(base):
    base.sql("CREATE TEMP VIEW sv_l AS SELECT k, sum(v) AS s FROM sv_base GROUP BY k")
    assert base.sql("CACHE TABLE sv_l").collect() == []
    assert base.catalog.isCached("sv_l")
    assert _rows(base.sql("SELECT * FROM sv_l")) == sorted([("a", 10.0), ("b", 1.0), (None, 3.0)], key=str)
    base.sql("UNCACHE TABLE sv_l")
    assert not base.catalog.isCached("sv_l")


def test_cache_table_as_query_creates_the_view(base):
    base.sql("CACHE LAZY TABLE sv_m OPTIONS ('storageLevel' 'DISK_ONLY') AS SELECT t FROM sv_base WHERE t > 1")
    assert base.catalog.isCached("sv_m")
    assert base._context.cache.storage_level(base._catalog.view("sv_m")) == "DISK_ONLY"
    assert _rows(base.sql("SELECT * FROM sv_m")) == [(2,), (3,)]
    with pytest.raises(AnalysisException, match="already exists"):
        base.sql("CACHE TABLE sv_m AS SELECT 1")


@pytest.mark.parametrize("statement, kind, needles", [
    ("CACHE TABLE sv_missing", AnalysisException, ["CACHE TABLE", "'sv_missing' not found"]),
    ("UNCACHE TABLE sv_missing", AnalysisException, ["UNCACHE TABLE", "'sv_missing' not found"]),
    ("CACHE TABLE sv_base OPTIONS ('storageLevel' 'SOMEWHERE')", ParseException, ["SOMEWHERE", "DISK_ONLY"]),
    ("CACHE TABLE sv_base OPTIONS ('lazy' 'true')", ParseException, ["storageLevel", "lazy"]),
])
def test_cache_mistakes(base, statement, kind, needles):
    with pytest.raises(kind) as info:
        base.sql(statement)
    for needle in needles:
        assert needle.lower() in str(info.value).lower(), str(info.value)


def test_uncache_if_exists_ignores_a_missing_view(base):
    assert base.sql("UNCACHE TABLE IF EXISTS sv_missing").collect() == []


# ---------------------------------------------------------------- against PySpark

SEQUENCES = [
    ["CREATE TEMPORARY VIEW sv_p AS SELECT k, t FROM sv_base",
     "CREATE OR REPLACE TEMP VIEW sv_p (key, n) AS SELECT k, count(*) FROM sv_base GROUP BY k"],
    ["CREATE TEMP VIEW sv_p AS SELECT k, rank() OVER (PARTITION BY k ORDER BY t), v * 2 FROM sv_base"],
    ["CACHE TABLE sv_p AS SELECT t, v FROM sv_base WHERE v IS NOT NULL", "UNCACHE TABLE sv_p"],
    ["CREATE TEMP VIEW sv_q AS SELECT t + 1 AS b FROM sv_base", "CREATE TEMP VIEW sv_p AS SELECT b * 2 AS c FROM sv_q",
     "DROP VIEW IF EXISTS sv_missing", "DROP TABLE IF EXISTS sv_missing"],
]


@pytest.mark.parametrize("statements", SEQUENCES)
def test_statement_sequences_match_pyspark(base, pyspark_legacy, statements):
    pyspark_legacy.createDataFrame(ROWS, SCHEMA).createOrReplaceTempView("sv_base")
    try:
        for statement in statements:
            ref, got = pyspark_legacy.sql(statement), base.sql(statement)
            assert (got.columns, got.collect()) == (ref.columns, ref.collect()) == ([], []), statement
        ref, got = pyspark_legacy.sql("SELECT * FROM sv_p"), base.sql("SELECT * FROM sv_p")
        assert got.columns == ref.columns and got.dtypes == ref.dtypes
        assert _rows(got) == _rows(ref)
    finally:
        for name in ("sv_p", "sv_q", "sv_base"):
            pyspark_legacy.catalog.dropTempView(name)
