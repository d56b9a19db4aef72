"""quiver/executors/cpu/sort.py: per-key null placement against DuckDB's ORDER BY ... NULLS FIRST/LAST,
top-k against a full sort, and range partition ids that cut sorted rows into ordered ranges."""
from __future__ import annotations

import math

import duckdb
import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from quiver.engine.core.expressions import Literal, SortOrder
from quiver.executors.cpu.sort import (
    choose_range_bounds,
    range_partition_ids,
    sort_indices,
    top_k_indices,
)

_DUCK = duckdb.connect()

ints = st.one_of(st.none(), st.integers(-3, 3))
doubles = st.one_of(st.none(), st.sampled_from([-1.5, 0.0, 2.0, float("inf"), float("-inf"), float("nan")]))
strings = st.one_of(st.none(), st.sampled_from(["", "a", "B", "b", "ab"]))
rows = st.lists(st.tuples(ints, doubles, strings), min_size=1, max_size=30)
# (ascending, nulls_first) per key; None keeps Spark's default (nulls first when ascending)
order = st.tuples(st.booleans(), st.sampled_from([None, True, False]))
orders = st.lists(st.tuples(st.sampled_from([0, 1, 2]), order), min_size=1, max_size=3, unique_by=lambda o: o[0])

TYPES = (pa.int64(), pa.float64(), pa.string())
NAMES = ("i", "d", "s")


def _columns(data) -> list[pa.Array]:
    return [pa.array([r[c] for r in data], t) for c, t in enumerate(TYPES)]


def _sort_orders(spec) -> tuple[SortOrder, ...]:
    return tuple(SortOrder(Literal(None, None), asc, nulls_first) for _, (asc, nulls_first) in spec)


def _duckdb_order(data, spec) -> list[int]:
    table = pa.table(dict(zip(NAMES, _columns(data)))).append_column(
        "row", pa.array(np.arange(len(data), dtype=np.int64)))
    _DUCK.register("t", table)
    keys = []
    for col, (asc, nulls_first) in spec:
        first = asc if nulls_first is None else nulls_first
        keys.append(f"{NAMES[col]} {'ASC' if asc else 'DESC'} NULLS {'FIRST' if first else 'LAST'}")
    return [r[0] for r in _DUCK.execute(f"SELECT row FROM t ORDER BY {', '.join(keys)}, row").fetchall()]


@settings(max_examples=60, deadline=None)
@given(data=rows, spec=orders)
def test_sort_indices_match_duckdb_order_by_with_per_key_null_placement(data, spec):
    cols = _columns(data)
    got = sort_indices([cols[c] for c, _ in spec], _sort_orders(spec)).to_pylist()
    assert got == _duckdb_order(data, spec)


@settings(max_examples=40, deadline=None)
@given(data=rows, spec=orders, k=st.integers(0, 35))
def test_top_k_is_the_head_of_the_full_sort(data, spec, k):
    cols = [_columns(data)[c] for c, _ in spec]
    orders_ = _sort_orders(spec)
    top = top_k_indices(cols, orders_, k).to_pylist()
    full = sort_indices(cols, orders_).to_pylist()
    # ties may come back in any order from top-k; the keys must be the sorted head
    def keys(idx):
        return [tuple(_key(c[i].as_py()) for c in cols) for i in idx]
    assert keys(top) == keys(full[:k])


def _key(v):
    return "NaN" if isinstance(v, float) and math.isnan(v) else v


@settings(max_examples=60, deadline=None)
@given(data=rows, spec=orders, partitions=st.integers(1, 6))
def test_range_partition_ids_cut_sorted_rows_into_ordered_ranges(data, spec, partitions):
    cols = [_columns(data)[c] for c, _ in spec]
    orders_ = _sort_orders(spec)
    bounds = choose_range_bounds(cols, orders_, partitions)
    assert all(len(b) == (partitions - 1 if partitions > 1 else 0) for b in bounds)
    ids = range_partition_ids(cols, bounds, orders_)
    assert ids.min() >= 0 and ids.max() < partitions
    in_order = ids[sort_indices(cols, orders_).to_numpy()]
    assert (np.diff(in_order) >= 0).all(), f"partition ids along the sort order: {in_order.tolist()}"
    # equal keys never straddle a boundary
    seen: dict = {}
    for i, row_key in enumerate(zip(*[[_key(v) for v in c.to_pylist()] for c in cols])):
        assert seen.setdefault(row_key, ids[i]) == ids[i]


def test_range_partition_ids_with_a_sample_taken_elsewhere():
    """Bounds come from a sample; rows outside the sample's range land in the first or last range."""
    sample = [pa.array([10, 20, 30, 40], pa.int64())]
    orders_ = (SortOrder(Literal(None, None), True, None),)
    bounds = choose_range_bounds(sample, orders_, 4)
    rows = [pa.array([100, None, -5, 10, 25, 40], pa.int64())]
    # bounds are 20, 30, 40; null and small values go first, a row equal to a bound goes below it
    assert range_partition_ids(rows, bounds, orders_).tolist() == [3, 0, 0, 0, 1, 2]


def test_public_order_by_places_nan_and_nulls_like_duckdb(spark, partitions):
    """orderBy through a range exchange: every key direction and null placement, NaN above +Infinity."""
    from quiver import functions as F

    rng = np.random.default_rng(5)
    values = rng.choice([-1.5, 0.0, 2.0, np.inf, -np.inf, np.nan], 200)
    table = pa.table({"d": pa.array(values, mask=rng.random(200) < 0.1),
                      "row": pa.array(np.arange(200, dtype=np.int64))})
    df = spark.createDataFrame(table)
    _DUCK.register("t", table)
    for col, sql in ((F.col("d").desc(), "d DESC NULLS LAST"), (F.col("d").asc(), "d ASC NULLS FIRST"),
                     (F.col("d").desc_nulls_first(), "d DESC NULLS FIRST"),
                     (F.col("d").asc_nulls_last(), "d ASC NULLS LAST")):
        got = [r["row"] for r in df.orderBy(col, "row").collect()]
        assert got == [r[0] for r in _DUCK.execute(f"SELECT row FROM t ORDER BY {sql}, row").fetchall()], sql
