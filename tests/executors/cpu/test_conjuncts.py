"""quiver/executors/cpu/conjuncts.py: a filter conjunct by conjunct keeps exactly the rows DuckDB's WHERE keeps."""
from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quiver.engine.core import types as T
from quiver.engine.core.expressions import (
    And,
    AttributeRef,
    Comparison,
    IsNotNull,
    Literal,
    ScalarFunction,
    new_expr_id,
)
from quiver.executors.cpu import conjuncts
from quiver.executors.cpu.evaluate import evaluate, filter_batch

A = AttributeRef("a", T.LongType(), True, new_expr_id())
B = AttributeRef("b", T.LongType(), True, new_expr_id())
S = AttributeRef("s", T.StringType(), True, new_expr_id())
values = st.one_of(st.none(), st.integers(-4, 4))
rows = st.lists(st.tuples(values, values, st.one_of(st.none(), st.sampled_from("abcxyz"))), max_size=40)
# Conjuncts of every selectivity, and constants: true, false and null; the string ones cost enough to cut for.
CONJUNCTS = [
    (Comparison("<", S, Literal("c", T.StringType())), "s < 'c'"),
    (Comparison("=", S, Literal("z", T.StringType())), "s = 'z'"),
    (Comparison("<", A, Literal(3, T.LongType())), "a < 3"),
    (Comparison(">", A, Literal(-3, T.LongType())), "a > -3"),
    (Comparison("=", A, B), "a = b"),
    (Comparison("<=", B, Literal(0, T.LongType())), "b <= 0"),
    (IsNotNull(B), "b IS NOT NULL"),
    (Comparison("=", Literal(1, T.LongType()), Literal(1, T.LongType())), "1 = 1"),
    (Comparison("=", Literal(1, T.LongType()), Literal(2, T.LongType())), "1 = 2"),
    (Comparison("=", Literal(None, T.LongType()), Literal(1, T.LongType())), "NULL = 1"),
]


@pytest.mark.parametrize("fraction", [0.0, 0.25, 1.0], ids=["never-cut", "cut-when-few", "always-cut"])
@settings(max_examples=40, deadline=None)
@given(data=rows, picked=st.lists(st.integers(0, len(CONJUNCTS) - 1), min_size=1, max_size=4))
def test_filter_by_conjuncts_matches_duckdb(fraction, data, picked):
    conjuncts.NARROW_FRACTION, saved = fraction, conjuncts.NARROW_FRACTION
    try:
        batch = pa.RecordBatch.from_pydict({A.internal_name: pa.array([r[0] for r in data], pa.int64()),
                                            B.internal_name: pa.array([r[1] for r in data], pa.int64()),
                                            S.internal_name: pa.array([r[2] for r in data], pa.string())})
        condition = CONJUNCTS[picked[0]][0]
        for i in picked[1:]:
            condition = And(condition, CONJUNCTS[i][0])
        got = filter_batch(batch, condition)
    finally:
        conjuncts.NARROW_FRACTION = saved
    duck = duckdb.connect()
    duck.register("t", pa.table({"a": batch.column(0), "b": batch.column(1), "s": batch.column(2)}))
    where = " AND ".join(CONJUNCTS[i][1] for i in picked)
    want = duck.execute(f"SELECT a, b, s FROM t WHERE {where}").fetchall()
    got_rows = list(zip(*[c.to_pylist() for c in got.columns])) if got.num_rows else []
    assert sorted(got_rows, key=_order) == sorted(want, key=_order)


def _order(row):
    return tuple((v is None, v or 0) for v in row)


def test_conjuncts_left_see_only_the_rows_kept_when_they_cost_more_than_the_cut():
    """rand() gives each row a value by its position in the batch, so its conjuncts are not split;
    comparing integers costs less than cutting the batch, so such a condition is evaluated whole."""
    batch = pa.RecordBatch.from_pydict({A.internal_name: pa.array(list(range(8)), pa.int64()),
                                        S.internal_name: pa.array(list("abcdefgh"))})
    seen = []

    def counting(expr, rows, memo):
        seen.append(rows.num_rows)
        return evaluate(expr, rows, memo)

    keep_few = Comparison("<", A, Literal(1, T.LongType()))
    assert conjuncts.filter_by_conjuncts(batch, And(keep_few, IsNotNull(S)), counting).num_rows == 1
    assert seen == [8, 1]
    seen.clear()
    assert conjuncts.filter_by_conjuncts(batch, And(keep_few, IsNotNull(A)), counting).num_rows == 1
    assert seen == [8]
    seen.clear()
    random = Comparison(">=", ScalarFunction("rand", ()), Literal(0.0, T.DoubleType()))
    conjuncts.filter_by_conjuncts(batch, And(keep_few, random), lambda e, r, m: seen.append(r.num_rows) or
                                  pa.array([True] * r.num_rows))
    assert seen == [8]


def test_every_row_position_function_is_nondeterministic_so_no_filter_cuts_under_it():
    from quiver.engine.core.expressions import NONDETERMINISTIC_FUNCTIONS
    from quiver.executors.cpu.kernels.row_position import POSITIONAL_FUNCTIONS

    # a positional function evaluated on a batch already cut by an earlier AND term would see other positions
    assert POSITIONAL_FUNCTIONS <= NONDETERMINISTIC_FUNCTIONS
