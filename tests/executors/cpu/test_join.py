"""quiver/executors/cpu/join.py: `join_tables` and `stream_hash_join` for every join type, with null keys and a residual
condition, vs DuckDB."""
from __future__ import annotations

import math

import duckdb
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quiver.engine.core import types as T
from quiver.engine.core.expressions import AttributeRef, Comparison, conjoin, new_expr_id
from quiver.executors.cpu import join as join_module
from quiver.executors.cpu import join_index
from quiver.executors.cpu.join import join_tables, stream_hash_join

LK = AttributeRef("k", T.LongType(), True, new_expr_id())
LK2 = AttributeRef("k2", T.LongType(), True, new_expr_id())
LV = AttributeRef("v", T.LongType(), True, new_expr_id())
RK = AttributeRef("k", T.LongType(), True, new_expr_id())
RK2 = AttributeRef("k2", T.LongType(), True, new_expr_id())
RV = AttributeRef("v", T.LongType(), True, new_expr_id())

DUCKDB_JOIN = {
    "inner": "INNER JOIN", "left": "LEFT JOIN", "right": "RIGHT JOIN", "full": "FULL OUTER JOIN",
    "left_semi": "SEMI JOIN", "left_anti": "ANTI JOIN", "cross": "INNER JOIN",
}
JOIN_TYPES = list(DUCKDB_JOIN)

keys = st.one_of(st.none(), st.integers(0, 4))
values = st.one_of(st.none(), st.integers(-3, 3))
sides = st.lists(st.tuples(keys, keys, values), max_size=12)


def _table(rows, attrs) -> pa.Table:
    cols = list(zip(*rows)) if rows else [[] for _ in attrs]
    return pa.table({a.internal_name: pa.array(list(c), pa.int64()) for a, c in zip(attrs, cols)})


def _output(how: str) -> tuple[AttributeRef, ...]:
    left = (LK, LK2, LV)
    if how in ("left_semi", "left_anti"):
        return left
    return left + (RK, RK2, RV)


def _quiver_rows(left_rows, right_rows, how, two_keys, residual):
    left, right = _table(left_rows, (LK, LK2, LV)), _table(right_rows, (RK, RK2, RV))
    lkeys, rkeys = ((LK, LK2), (RK, RK2)) if two_keys else ((LK,), (RK,))
    conjuncts = [Comparison("<", LV, RV)] if residual else []
    if how == "cross":
        # no equi-keys: the nested-loop path, where the key equalities are part of the condition
        conjuncts = [Comparison("=", a, b) for a, b in zip(lkeys, rkeys)] + conjuncts
        lkeys, rkeys = (), ()
    out = join_tables(left, right, how, lkeys, rkeys, conjoin(conjuncts), _output(how))
    assert out.column_names == [a.internal_name for a in _output(how)]
    return sorted((tuple(r.values()) for r in out.to_pylist()), key=_sort_key)


_DUCK = duckdb.connect()


def _duckdb_rows(left_rows, right_rows, how, two_keys, residual):
    def table(rows):
        return pa.table({name: pa.array([r[i] for r in rows], pa.int64()) for i, name in enumerate(("k", "k2", "v"))})

    _DUCK.register("l", table(left_rows))
    _DUCK.register("r", table(right_rows))
    cond = "l.k = r.k" + (" AND l.k2 = r.k2" if two_keys else "") + (" AND l.v < r.v" if residual else "")
    cols = "l.k, l.k2, l.v" if how in ("left_semi", "left_anti") else "l.k, l.k2, l.v, r.k, r.k2, r.v"
    rows = _DUCK.execute(f"SELECT {cols} FROM l {DUCKDB_JOIN[how]} r ON {cond}").fetchall()
    return sorted(rows, key=_sort_key)


def _sort_key(row):
    return tuple((v is None, v if v is not None else 0) for v in row)


@pytest.mark.parametrize("residual", [False, True], ids=["keys-only", "with-residual"])
@pytest.mark.parametrize("two_keys", [False, True], ids=["1key", "2keys"])
@settings(max_examples=20, deadline=None)
@given(left=sides, right=sides)
def test_join_tables_matches_duckdb_for_every_join_type(residual, two_keys, left, right):
    for how in JOIN_TYPES:
        got = _quiver_rows(left, right, how, two_keys, residual)
        assert got == _duckdb_rows(left, right, how, two_keys, residual), how


def _streamed_rows(left_rows, right_rows, how, two_keys, residual, probe_is_left, batch_rows):
    """`stream_hash_join` of the two sides, the probe side in batches of `batch_rows` rows."""
    import pyarrow.compute as pc

    left, right = _table(left_rows, (LK, LK2, LV)), _table(right_rows, (RK, RK2, RV))
    lkeys, rkeys = ((LK, LK2), (RK, RK2)) if two_keys else ((LK,), (RK,))
    condition = pc.field(LV.internal_name) < pc.field(RV.internal_name) if residual else None
    probe, build = (left, right) if probe_is_left else (right, left)
    pattrs, bkeys, pkeys = ((LK, LK2, LV), rkeys, lkeys) if probe_is_left else ((RK, RK2, RV), lkeys, rkeys)
    batches = probe.to_batches(max_chunksize=batch_rows)
    out = list(stream_hash_join(iter(batches), pattrs, pkeys, build, bkeys, how, _output(how), probe_is_left,
                                residual=condition))
    return sorted((tuple(r.values()) for b in out for r in b.to_pylist()), key=_sort_key)


@pytest.mark.parametrize("path, chunk_rows", [("indexed", 1 << 20), ("acero", 2), ("acero", 1 << 20)],
                         ids=["key-index", "acero-small-chunks", "acero-one-chunk"])
@pytest.mark.parametrize("residual", [False, True], ids=["keys-only", "with-residual"])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(left=sides, right=sides, two_keys=st.booleans())
def test_stream_hash_join_matches_duckdb_on_either_side(monkeypatch, path, chunk_rows, residual, left, right,
                                                        two_keys):
    """The key index (fixed-width keys without a residual) and Acero (here forced for keys-only joins too): on
    Acero, chunks smaller than the build side are built on themselves (the join swapped); join types whose
    unmatched build rows matter keep a bitmap of matched build rows over the chunks and add them at the end."""
    if path == "acero":
        monkeypatch.setattr(join_module, "indexable", lambda types: False)
    monkeypatch.setattr(join_index, "MAX_OUTPUT_ROWS", 2)
    monkeypatch.setattr(join_module, "CHUNK_ROWS", chunk_rows)
    monkeypatch.setattr(join_module, "BUILD_REUSE", 0 if chunk_rows < 8 else 16)
    monkeypatch.setattr(join_module, "MAX_CHUNK_ROWS", 1 << 24)
    for how in ("inner", "left", "right", "full", "left_semi", "left_anti"):
        want = _duckdb_rows(left, right, how, two_keys, residual)
        assert _streamed_rows(left, right, how, two_keys, residual, True, 3) == want, (how, "probe left")
        if how not in ("left_semi", "left_anti"):
            assert _streamed_rows(left, right, how, two_keys, residual, False, 3) == want, (how, "probe right")


def test_null_keys_never_match_but_survive_outer_joins():
    left = [(None, 0, 1), (1, 0, 2)]
    right = [(None, 0, 3), (1, 0, 4)]
    assert _quiver_rows(left, right, "inner", False, False) == [(1, 0, 2, 1, 0, 4)]
    full = _quiver_rows(left, right, "full", False, False)
    assert (None, 0, 1, None, None, None) in full and (None, None, None, None, 0, 3) in full
    assert _quiver_rows(left, right, "left_anti", False, False) == [(None, 0, 1)]


@pytest.mark.parametrize("how", ["inner", "left", "full", "left_semi"])
def test_float_keys_match_nan_with_nan_and_zero_with_negative_zero(how):
    """Spark (and DuckDB) join NaN to NaN and -0.0 to 0.0; a bitwise hash join would not."""
    nan = float("nan")
    lk = AttributeRef("k", T.DoubleType(), True, new_expr_id())
    rk = AttributeRef("k", T.DoubleType(), True, new_expr_id())
    left = pa.table({lk.internal_name: pa.array([nan, -0.0, 1.0, None])})
    right = pa.table({rk.internal_name: pa.array([-nan, 0.0, 2.0, None])})
    output = (lk,) if how == "left_semi" else (lk, rk)
    got = join_tables(left, right, how, (lk,), (rk,), None, output)
    _DUCK.register("l", pa.table({"k": left.column(0)}))
    _DUCK.register("r", pa.table({"k": right.column(0)}))
    cols = "l.k" if how == "left_semi" else "l.k, r.k"
    want = _DUCK.execute(f"SELECT {cols} FROM l {DUCKDB_JOIN[how]} r ON l.k = r.k").fetchall()

    def norm(rows):
        return sorted((tuple("nan" if isinstance(v, float) and math.isnan(v) else v for v in r) for r in rows),
                      key=lambda r: tuple(str(x) for x in r))

    assert norm(tuple(r.values()) for r in got.to_pylist()) == norm(want)


def test_empty_sides_keep_the_output_schema():
    empty = _table([], (RK, RK2, RV))
    left = _table([(1, 1, 1)], (LK, LK2, LV))
    out = join_tables(left, empty, "left", (LK,), (RK,), None, _output("left"))
    assert out.to_pylist() == [{LK.internal_name: 1, LK2.internal_name: 1, LV.internal_name: 1,
                                RK.internal_name: None, RK2.internal_name: None, RV.internal_name: None}]
    out = join_tables(empty.rename_columns([a.internal_name for a in (LK, LK2, LV)]), left.rename_columns(
        [a.internal_name for a in (RK, RK2, RV)]), "inner", (LK,), (RK,), None, _output("inner"))
    assert out.num_rows == 0 and out.column_names == [a.internal_name for a in _output("inner")]


@pytest.mark.parametrize("how", ["inner", "left", "right", "full", "left_semi", "left_anti"])
def test_public_join_on_float_keys_matches_duckdb(spark, partitions, how):
    """Through the planner (broadcast or shuffled, streaming or not), float keys follow Spark's equality."""
    nan = float("nan")
    left = pa.table({"k": pa.array([nan, -0.0, 1.0, None, -nan, 3.0]), "a": pa.array([1, 2, 3, 4, 5, 6])})
    right = pa.table({"k": pa.array([-nan, 0.0, 2.0, None, 1.0]), "b": pa.array([10, 20, 30, 40, 50])})
    ql, qr = spark.createDataFrame(left), spark.createDataFrame(right)
    joined = ql.join(qr, ql["k"] == qr["k"], how)
    cols = ["a"] if how in ("left_semi", "left_anti") else ["a", "b"]
    got = [tuple(r) for r in joined.select(*cols).collect()]
    _DUCK.register("l", left)
    _DUCK.register("r", right)
    sql_cols = "l.a" if how in ("left_semi", "left_anti") else "l.a, r.b"
    join_sql = DUCKDB_JOIN[how] if how != "right" else "RIGHT JOIN"
    want = _DUCK.execute(f"SELECT {sql_cols} FROM l {join_sql} r ON l.k = r.k").fetchall()
    assert sorted(got, key=_sort_key) == sorted(want, key=_sort_key)


@pytest.mark.parametrize("how", ["inner", "left", "full"])
def test_nested_payload_goes_through_a_join_on_fixed_width_keys(how):
    """Acero cannot carry list, map or struct columns through its join; the key index gathers them by `take`."""
    arr = AttributeRef("arr", T.ArrayType(T.LongType(), True), True, new_expr_id())
    probe = pa.table({LK.internal_name: pa.array([1, 3], pa.int64()),
                      arr.internal_name: pa.array([[1, 2], [3]], pa.list_(pa.int64()))})
    build = pa.table({RK.internal_name: pa.array([1, 2], pa.int64()), RV.internal_name: pa.array([10, 20], pa.int64())})
    out = list(stream_hash_join(iter(probe.to_batches()), (LK, arr), (LK,), build, (RK,), how, (LK, arr, RK, RV), True))
    rows = sorted((tuple(r.values()) for b in out for r in b.to_pylist()), key=_sort_key)
    want = {"inner": [(1, [1, 2], 1, 10)],
            "left": [(1, [1, 2], 1, 10), (3, [3], None, None)],
            "full": [(1, [1, 2], 1, 10), (3, [3], None, None), (None, None, 2, 20)]}[how]
    assert rows == sorted(want, key=_sort_key)
