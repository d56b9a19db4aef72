"""quiver/executors/cpu/window.py: window functions through the public API, against DuckDB's window SQL.

Every test builds random data with nulls and ties in the partition and order keys, runs
one window expression on Quiver (`F.xxx().over(Window...)`) and the same expression in
DuckDB, and compares per row (rows are matched by a unique `id`). Spark orders nulls
first when ascending, DuckDB last by default, so the DuckDB side always says NULLS FIRST.
"""
from __future__ import annotations

import math

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from quiver import Window
from quiver import functions as F


def _random_table(seed: int, n: int) -> pa.Table:
    rng = np.random.default_rng(seed)

    def with_nulls(values: np.ndarray, rate: float) -> pa.Array:
        return pa.array(values, mask=rng.random(n) < rate)

    return pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "g": with_nulls(rng.integers(0, 4, n), 0.15),          # partition key: few groups, plus a null group
        "o": with_nulls(rng.integers(0, 6, n), 0.2),           # order key: many ties, and nulls
        "v": with_nulls(rng.integers(-50, 50, n), 0.25),       # value: nulls inside frames
    })


DATA = [pytest.param(seed, n, id=f"seed{seed}-{n}rows") for seed, n in ((0, 120), (2, 9))]


def _quiver(spark, table: pa.Table, column) -> dict[int, object]:
    df = spark.createDataFrame(table)
    rows = df.select("id", column.alias("w")).collect()
    return {r["id"]: r["w"] for r in rows}


def _duckdb(table: pa.Table, window_sql: str) -> dict[int, object]:
    con = duckdb.connect()
    con.register("t", table)
    rows = con.execute(f"SELECT id, {window_sql} AS w FROM t").fetchall()
    return {i: (float(w) if isinstance(w, float) else w) for i, w in rows}


def _assert_same(got: dict, want: dict) -> None:
    assert got.keys() == want.keys()
    diffs = []
    for i in sorted(want):
        a, b = got[i], want[i]
        if a is None or b is None:
            same = a is None and b is None
        elif isinstance(a, float) or isinstance(b, float):
            same = math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)
        else:
            same = a == b
        if not same:
            diffs.append((i, a, b))
    assert not diffs, f"{len(diffs)} rows differ (id, quiver, duckdb), first: {diffs[:5]}"


# Ranking functions: ties matter, so ORDER BY o alone (rank-like) or o, id (positional).
RANKING = [
    ("row_number", lambda: F.row_number(), "row_number()", True),
    ("rank", lambda: F.rank(), "rank()", False),
    ("dense_rank", lambda: F.dense_rank(), "dense_rank()", False),
    ("percent_rank", lambda: F.percent_rank(), "percent_rank()", False),
    ("cume_dist", lambda: F.cume_dist(), "cume_dist()", False),
    ("ntile3", lambda: F.ntile(3), "ntile(3)", True),
    ("ntile7", lambda: F.ntile(7), "ntile(7)", True),
]


@pytest.mark.parametrize("seed,n", DATA)
@pytest.mark.parametrize("name,make,sql,total_order", RANKING, ids=[r[0] for r in RANKING])
def test_ranking_functions_match_duckdb(spark, partitions, seed, n, name, make, sql, total_order):
    table = _random_table(seed, n)
    if total_order:
        spec = Window.partitionBy("g").orderBy(F.col("o").desc(), "id")
        over = "PARTITION BY g ORDER BY o DESC NULLS LAST, id ASC NULLS FIRST"
    else:
        spec = Window.partitionBy("g").orderBy("o")
        over = "PARTITION BY g ORDER BY o ASC NULLS FIRST"
    _assert_same(_quiver(spark, table, make().over(spec)), _duckdb(table, f"{sql} OVER ({over})"))


@pytest.mark.parametrize("seed,n", DATA)
@pytest.mark.parametrize("fn,offset,default", [("lag", 1, None), ("lag", 2, -1), ("lead", 1, 99), ("lead", 3, None)])
def test_lag_lead_with_defaults_match_duckdb(spark, partitions, seed, n, fn, offset, default):
    table = _random_table(seed, n)
    spec = Window.partitionBy("g").orderBy("o", "id")
    col = getattr(F, fn)("v", offset, default).over(spec)
    default_sql = "NULL" if default is None else str(default)
    want = _duckdb(table, f"{fn}(v, {offset}, {default_sql}) OVER "
                          f"(PARTITION BY g ORDER BY o ASC NULLS FIRST, id ASC NULLS FIRST)")
    _assert_same(_quiver(spark, table, col), want)


@pytest.mark.parametrize("seed,n", DATA)
def test_running_sum_includes_peers_like_duckdb(spark, partitions, seed, n):
    """The default frame with ORDER BY is RANGE UNBOUNDED PRECEDING..CURRENT ROW: ties share a sum."""
    table = _random_table(seed, n)
    got = _quiver(spark, table, F.sum("v").over(Window.partitionBy("g").orderBy("o")))
    want = _duckdb(table, "sum(v) OVER (PARTITION BY g ORDER BY o ASC NULLS FIRST)")
    _assert_same(got, want)


@pytest.mark.parametrize("seed,n", DATA)
def test_rows_between_sliding_avg_matches_duckdb(spark, partitions, seed, n):
    table = _random_table(seed, n)
    got = _quiver(spark, table, F.avg("v").over(Window.partitionBy("g").orderBy("o", "id").rowsBetween(-1, 1)))
    want = _duckdb(table, "avg(v) OVER (PARTITION BY g ORDER BY o ASC NULLS FIRST, id "
                          "ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING)")
    _assert_same(got, want)


@pytest.mark.parametrize("seed,n", DATA)
@pytest.mark.parametrize("fn", ["min", "max"])
def test_rows_between_sliding_extrema_match_duckdb(spark, partitions, seed, n, fn):
    table = _random_table(seed, n)
    spec = Window.partitionBy("g").orderBy("o", "id").rowsBetween(-2, 1)
    got = _quiver(spark, table, getattr(F, fn)("v").over(spec))
    want = _duckdb(table, f"{fn}(v) OVER (PARTITION BY g ORDER BY o ASC NULLS FIRST, id "
                          "ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING)")
    _assert_same(got, want)


@pytest.mark.parametrize("seed,n", DATA)
@pytest.mark.parametrize("fn", ["max", "min", "sum", "count", "avg"])
def test_whole_partition_aggregate_matches_duckdb(spark, partitions, seed, n, fn):
    table = _random_table(seed, n)
    got = _quiver(spark, table, getattr(F, fn)("v").over(Window.partitionBy("g")))
    _assert_same(got, _duckdb(table, f"{fn}(v) OVER (PARTITION BY g)"))


@pytest.mark.parametrize("seed,n", DATA)
def test_running_max_with_unbounded_preceding_rows_frame(spark, partitions, seed, n):
    table = _random_table(seed, n)
    spec = Window.partitionBy("g").orderBy("o", "id").rowsBetween(Window.unboundedPreceding, Window.currentRow)
    got = _quiver(spark, table, F.max("v").over(spec))
    want = _duckdb(table, "max(v) OVER (PARTITION BY g ORDER BY o ASC NULLS FIRST, id "
                          "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)")
    _assert_same(got, want)


def test_window_without_partition_by_runs_over_all_rows(spark, partitions):
    table = _random_table(3, 50)
    got = _quiver(spark, table, F.rank().over(Window.orderBy(F.col("o").desc())))
    _assert_same(got, _duckdb(table, "rank() OVER (ORDER BY o DESC NULLS LAST)"))


def test_nan_partition_keys_form_one_partition(spark, partitions):
    """Spark treats every NaN as one value in PARTITION BY (and -0.0 as 0.0)."""
    nan = float("nan")
    neg_nan = -nan
    df = spark.createDataFrame(pa.table({
        "k": pa.array([nan, neg_nan, 0.0, -0.0, 1.0]), "id": pa.array([1, 2, 3, 4, 5])}))
    rows = df.select("id", F.count("id").over(Window.partitionBy("k")).alias("n")).collect()
    assert {r["id"]: r["n"] for r in rows} == {1: 2, 2: 2, 3: 2, 4: 2, 5: 1}


@pytest.mark.parametrize("fn", ["sum", "avg"])
def test_sliding_sum_over_infinities_and_nan_only_affects_their_frames(spark, partitions, fn):
    """A frame sum from prefix sums must not carry Infinity or NaN into frames that no longer hold it."""
    rng = np.random.default_rng(9)
    values = rng.choice([1.0, -2.5, 4.0, np.inf, -np.inf, np.nan], 80, p=[0.3, 0.3, 0.25, 0.05, 0.05, 0.05])
    table = pa.table({"id": pa.array(np.arange(80, dtype=np.int64)), "g": pa.array(np.arange(80) % 2),
                      "v": pa.array(values, mask=rng.random(80) < 0.1)})
    spec = Window.partitionBy("g").orderBy("id").rowsBetween(-2, 1)
    got = _quiver(spark, table, getattr(F, fn)("v").over(spec))
    want = _duckdb(table, f"{fn}(v) OVER (PARTITION BY g ORDER BY id ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING)")

    def norm(d):
        return {k: ("NaN" if isinstance(v, float) and math.isnan(v) else v) for k, v in d.items()}

    assert norm(got) == norm(want)
