"""quiver/executors/cpu/aggregate.py: partial states merged by a final aggregate equal one complete
aggregate (and DuckDB's GROUP BY); a global aggregate over no rows still yields one row."""
from __future__ import annotations

import math

import duckdb
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quiver import functions as F
from quiver.engine.core import types as T
from quiver.engine.core.expressions import AggregateFunction, AttributeRef, new_expr_id
from quiver.executors.cpu.aggregate import aggregate_partition
from quiver.executors.cpu.partitioning import hash_partition_ids, split_by_ids
from quiver.planners.physical.nodes import AggregateCall

K = AttributeRef("k", T.LongType(), True, new_expr_id())
V = AttributeRef("v", T.LongType(), True, new_expr_id())
B = AttributeRef("b", T.BooleanType(), True, new_expr_id())

# (aggregate, DuckDB SQL of the same aggregate)
DECOMPOSABLE = [
    (AggregateFunction("count", ()), "count(*)"),
    (AggregateFunction("count", (V,)), "count(v)"),
    (AggregateFunction("sum", (V,)), "sum(v)"),
    (AggregateFunction("avg", (V,)), "avg(v)"),
    (AggregateFunction("min", (V,)), "min(v)"),
    (AggregateFunction("max", (V,)), "max(v)"),
    (AggregateFunction("bool_and", (B,)), "bool_and(b)"),
    (AggregateFunction("bool_or", (B,)), "bool_or(b)"),
    (AggregateFunction("collect_list", (V,)), "list_sort(list(v) FILTER (WHERE v IS NOT NULL))"),
]
COMPLETE_ONLY = [
    (AggregateFunction("count", (V,), distinct=True), "count(DISTINCT v)"),
    (AggregateFunction("stddev", (V,)), "stddev_samp(v)"),
    (AggregateFunction("var_pop", (V,)), "var_pop(v)"),
    (AggregateFunction("collect_set", (V,)), "list_sort(list(DISTINCT v) FILTER (WHERE v IS NOT NULL))"),
]


def _calls(specs) -> tuple[AggregateCall, ...]:
    return tuple(AggregateCall(f, AttributeRef(f.sql(), f.dtype, f.nullable, new_expr_id())) for f, _ in specs)


def _batch(rows) -> pa.RecordBatch:
    ks, vs, bs = (list(c) for c in zip(*rows)) if rows else ([], [], [])
    return pa.RecordBatch.from_arrays(
        [pa.array(ks, pa.int64()), pa.array(vs, pa.int64()), pa.array(bs, pa.bool_())],
        names=[K.internal_name, V.internal_name, B.internal_name])


def _rows(batches, grouped: bool, calls) -> dict:
    table = pa.Table.from_batches(list(batches)) if batches else None
    out = {}
    for row in (table.to_pylist() if table is not None else []):
        key = row[K.internal_name] if grouped else ()
        out[key] = tuple(_norm(row[c.result.internal_name]) for c in calls)
    return out


def _norm(v):
    if isinstance(v, list):
        return tuple(sorted(v))
    if isinstance(v, float):
        return round(v, 9)
    return v


def _two_phase(rows, grouped, calls, map_parts, reduce_parts) -> dict:
    """Partial per map partition, hash exchange on the key, final per reduce partition."""
    keys = ((K, K),) if grouped else ()
    batch = _batch(rows)
    bounds = np.linspace(0, batch.num_rows, map_parts + 1).astype(int)
    states = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        states += list(aggregate_partition([batch.slice(lo, hi - lo)], keys, calls, "partial"))
    reducers: list[list[pa.RecordBatch]] = [[] for _ in range(reduce_parts if grouped else 1)]
    for s in states:
        if grouped:
            ids = hash_partition_ids([s.column(K.internal_name)], len(reducers))
            for r, piece in enumerate(split_by_ids(s, ids, len(reducers))):
                if piece is not None:
                    reducers[r].append(piece)
        else:
            reducers[0].append(s)
    out: dict = {}
    for blocks in reducers:
        if grouped and not blocks:
            continue
        part = _rows(list(aggregate_partition(blocks, ((K, K),) if grouped else (), calls, "final")), grouped, calls)
        assert not (part.keys() & out.keys()), "a group appeared in two reduce partitions"
        out.update(part)
    return out


def _complete(rows, grouped, calls) -> dict:
    keys = ((K, K),) if grouped else ()
    return _rows(list(aggregate_partition([_batch(rows)], keys, calls, "complete")), grouped, calls)


_DUCK = duckdb.connect()


def _duckdb(rows, grouped, specs) -> dict:
    b = _batch(rows)
    _DUCK.register("t", pa.table({"k": b.column(0), "v": b.column(1), "b": b.column(2)}))
    aggs = ", ".join(sql for _, sql in specs)
    sql = f"SELECT k, {aggs} FROM t GROUP BY k" if grouped else f"SELECT 0, {aggs} FROM t"
    out = {}
    for row in _DUCK.execute(sql).fetchall():
        vals = tuple(_norm(float(x) if isinstance(x, float) else x) for x in row[1:])
        # DuckDB gives null for an empty list aggregate where Spark gives []
        vals = tuple(() if (v is None and sql_name.startswith("list_sort")) else v
                     for v, (_, sql_name) in zip(vals, specs))
        vals = tuple(0 if (v is None and s.startswith("count")) else v for v, (_, s) in zip(vals, specs))
        out[row[0] if grouped else ()] = vals
    return out


rows_strategy = st.lists(
    st.tuples(st.one_of(st.none(), st.integers(0, 5)), st.one_of(st.none(), st.integers(-100, 100)),
              st.one_of(st.none(), st.booleans())),
    max_size=40)


@pytest.mark.parametrize("grouped", [True, False], ids=["groupBy", "global"])
@settings(max_examples=15, deadline=None)
@given(rows=rows_strategy, map_parts=st.integers(1, 4), reduce_parts=st.integers(1, 4))
def test_partial_then_final_equals_complete_and_duckdb(grouped, rows, map_parts, reduce_parts):
    calls = _calls(DECOMPOSABLE)
    two_phase = _two_phase(rows, grouped, calls, map_parts, reduce_parts)
    assert two_phase == _complete(rows, grouped, calls)
    assert two_phase == _duckdb(rows, grouped, DECOMPOSABLE)


@pytest.mark.parametrize("grouped", [True, False], ids=["groupBy", "global"])
@settings(max_examples=15, deadline=None)
@given(rows=rows_strategy)
def test_complete_only_aggregates_match_duckdb(grouped, rows):
    calls = _calls(COMPLETE_ONLY)
    assert _complete(rows, grouped, calls) == _duckdb(rows, grouped, COMPLETE_ONLY)


@pytest.mark.parametrize("mode", ["complete", "final"])
def test_empty_global_aggregate_gives_one_row_with_count_zero(mode):
    calls = _calls(DECOMPOSABLE)
    if mode == "final":
        states = list(aggregate_partition([], (), calls, "partial"))
        out = list(aggregate_partition(states, (), calls, "final"))
    else:
        out = list(aggregate_partition([], (), calls, "complete"))
    rows = pa.Table.from_batches(out).to_pylist()
    assert len(rows) == 1
    values = [rows[0][c.result.internal_name] for c in calls]
    assert values == [0, 0, None, None, None, None, None, None, []]


def test_empty_grouped_aggregate_gives_no_rows():
    calls = _calls(DECOMPOSABLE)
    out = list(aggregate_partition([], ((K, K),), calls, "complete"))
    assert sum(b.num_rows for b in out) == 0


def test_empty_global_aggregate_through_the_public_api(spark, partitions):
    df = spark.range(10).filter(F.col("id") > 100)
    row = df.agg(F.count("id").alias("n"), F.sum("id").alias("s"), F.countDistinct("id").alias("d")).collect()
    assert [tuple(r) for r in row] == [(0, None, 0)]
    assert df.count() == 0


def test_grouping_treats_nan_as_one_key_and_negative_zero_as_zero(spark, partitions):
    """Spark normalises float grouping keys: all NaNs are one group, -0.0 groups with 0.0."""
    nan = float("nan")
    neg_nan = np.frombuffer(np.uint64(0xFFF8000000000000).tobytes(), np.float64)[0]
    df = spark.createDataFrame(pa.table({"k": pa.array([nan, neg_nan, 0.0, -0.0, 1.0, None]),
                                         "v": pa.array([1, 2, 3, 4, 5, 6])}))
    got = {("nan" if r["k"] is not None and math.isnan(r["k"]) else r["k"]): r["s"]
           for r in df.groupBy("k").agg(F.sum("v").alias("s")).collect()}
    assert got == {"nan": 3, 0.0: 7, 1.0: 5, None: 6}
    assert df.select("k").distinct().count() == 4
