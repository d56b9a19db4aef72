"""quiver/executors/cpu/evaluate.py: Spark's null semantics on Arrow batches, checked against DuckDB.

Expressions are built over attributes and coerced as the analyzer does (`coerce`), then
evaluated over one batch. DuckDB shares Spark's three-valued logic, IN-list semantics,
NaN ordering and the sign rule of `%`; where Spark (non-ANSI) differs from DuckDB — a zero
divisor gives null — the test says so.
"""
from __future__ import annotations

import math
from decimal import Decimal as D

import duckdb
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quiver.engine.analysis.analyzer import coerce
from quiver.engine.core import types as T
from quiver.engine.core.expressions import (
    And,
    AttributeRef,
    BinaryArithmetic,
    Comparison,
    In,
    IsNotNull,
    IsNull,
    Literal,
    Not,
    Or,
    new_expr_id,
)
from quiver.executors.cpu.evaluate import evaluate_array, filter_batch

A = AttributeRef("a", T.LongType(), True, new_expr_id())
B = AttributeRef("b", T.LongType(), True, new_expr_id())
X = AttributeRef("x", T.DoubleType(), True, new_expr_id())
Y = AttributeRef("y", T.DoubleType(), True, new_expr_id())
P = AttributeRef("p", T.BooleanType(), True, new_expr_id())
Q = AttributeRef("q", T.BooleanType(), True, new_expr_id())
ATTRS = (A, B, X, Y, P, Q)

small_int = st.one_of(st.none(), st.integers(-20, 20))
special_double = st.one_of(st.none(), st.sampled_from([0.0, -0.0, 1.5, -2.5, 3.0, float("nan"), float("inf"),
                                                       float("-inf")]))
maybe_bool = st.one_of(st.none(), st.booleans())
rows = st.lists(st.tuples(small_int, small_int, special_double, special_double, maybe_bool, maybe_bool),
                min_size=1, max_size=25)

_DUCK = duckdb.connect()


def _batch(data) -> pa.RecordBatch:
    cols = list(zip(*data))
    return pa.RecordBatch.from_arrays([pa.array(list(c), a.dtype.to_arrow()) for c, a in zip(cols, ATTRS)],
                                      names=[a.internal_name for a in ATTRS])


def _quiver(expr, batch) -> list:
    return evaluate_array(coerce(expr), batch).to_pylist()


def _duckdb(sql: str, batch) -> list:
    _DUCK.register("t", pa.table({a.name: batch.column(i) for i, a in enumerate(ATTRS)}))
    return [r[0] for r in _DUCK.execute(f"SELECT {sql} FROM t").fetchall()]


def _same(got: list, want: list) -> bool:
    def norm(v):
        if isinstance(v, float) and math.isnan(v):
            return "NaN"
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v
    return [norm(v) for v in got] == [norm(v) for v in want]


COMPARISONS = ["=", "<", "<=", ">", ">="]


@settings(max_examples=25, deadline=None)
@given(data=rows)
def test_comparisons_are_null_when_either_side_is_null(data):
    batch = _batch(data)
    for op in COMPARISONS:
        assert _same(_quiver(Comparison(op, A, B), batch), _duckdb(f"a {op} b", batch)), op


@settings(max_examples=25, deadline=None)
@given(data=rows)
def test_double_comparisons_follow_spark_nan_semantics(data):
    """NaN = NaN is true and NaN sorts above +Infinity (Spark and DuckDB agree); -0.0 = 0.0."""
    batch = _batch(data)
    for op in COMPARISONS:
        assert _same(_quiver(Comparison(op, X, Y), batch), _duckdb(f"x {op} y", batch)), op
    assert _same(_quiver(Comparison("<=>", X, Y), batch), _duckdb("x IS NOT DISTINCT FROM y", batch))


@settings(max_examples=25, deadline=None)
@given(data=rows)
def test_and_or_not_follow_kleene_logic(data):
    batch = _batch(data)
    assert _same(_quiver(And(P, Q), batch), _duckdb("p AND q", batch))
    assert _same(_quiver(Or(P, Q), batch), _duckdb("p OR q", batch))
    assert _same(_quiver(Not(P), batch), _duckdb("NOT p", batch))
    assert _same(_quiver(And(P, Literal(None, T.BooleanType())), batch), _duckdb("p AND NULL", batch))
    assert _same(_quiver(Or(Literal(None, T.BooleanType()), Q), batch), _duckdb("NULL OR q", batch))


@settings(max_examples=25, deadline=None)
@given(data=rows, values=st.lists(st.one_of(st.none(), st.integers(-20, 20)), min_size=1, max_size=4))
def test_in_list_with_and_without_null(data, values):
    """`a IN (1, NULL)` is true on a match, otherwise null (never false) — and null for a null `a`."""
    batch = _batch(data)
    literal_list = tuple(Literal.of(v) if v is not None else Literal(None, T.NullType()) for v in values)
    sql_list = ", ".join("NULL" if v is None else str(v) for v in values)
    assert _same(_quiver(In(A, literal_list), batch), _duckdb(f"a IN ({sql_list})", batch))
    # the same list given as column expressions takes the general path
    assert _same(_quiver(In(A, (B,) + literal_list), batch), _duckdb(f"a IN (b, {sql_list})", batch))


@settings(max_examples=25, deadline=None)
@given(data=rows)
def test_remainder_sign_follows_the_dividend(data):
    data = [r for r in data if r[1] != 0 and r[3] not in (0.0,)]
    if not data:
        return
    batch = _batch(data)
    assert _same(_quiver(BinaryArithmetic("%", A, B), batch), _duckdb("a % b", batch))
    assert _same(_quiver(BinaryArithmetic("%", X, Y), batch), _duckdb("x % y", batch))
    assert _same(_quiver(BinaryArithmetic("/", A, B), batch), _duckdb("a / b", batch))


@pytest.mark.parametrize("left,right", [(A, B), (X, Y), (A, Y)], ids=["bigint", "double", "mixed"])
@pytest.mark.parametrize("op", ["/", "%"])
def test_zero_divisor_gives_null(left, right, op):
    """Spark without ANSI mode: x / 0 and x % 0 are null, never an error, Infinity or NaN."""
    batch = _batch([(7, 0, 7.5, 0.0, None, None), (-7, 0, -7.5, -0.0, None, None), (None, 0, None, 0.0, None, None),
                    (6, 4, 6.0, 4.0, None, None)])
    got = _quiver(BinaryArithmetic(op, left, right), batch)
    assert got[:3] == [None, None, None]
    assert got[3] == (1.5 if op == "/" else 2)


@pytest.mark.parametrize("op", ["/", "%"])
def test_zero_literal_divisor_gives_null(op):
    batch = _batch([(7, 1, 1.0, 1.0, None, None), (None, 1, 1.0, 1.0, None, None)])
    assert _quiver(BinaryArithmetic(op, A, Literal(0, T.IntegerType())), batch) == [None, None]
    assert _quiver(BinaryArithmetic(op, X, Literal(0.0, T.DoubleType())), batch) == [None, None]


@pytest.mark.parametrize("types,left,right,product", [
    # TPC-H Q1's charge: 49 exact digits, bounded to decimal(38,6) with every place kept.
    (((32, 4), (16, 2), (38, 6)),
     [D("19.3800"), D("1234567890123456789012345678.1234"), None, D("-0.0001")],
     [D("5.00"), D("5.00"), D("1.00"), D("0.05")],
     [D("96.900000"), D("6172839450617283945061728390.617000"), None, D("-0.000005")]),
    # 15 exact places cut to 6, half away from zero.
    (((38, 10), (10, 5), (38, 6)),
     [D("0.0000005000"), D("-0.0000005000"), D("1.2345678901"), D("123456789012345678901234.0123456789")],
     [D("1.00000"), D("1.00000"), D("1.00001"), D("99999.99999")],
     [D("0.000001"), D("-0.000001"), D("1.234580"), D("12345678899999999999999944445.555550")]),
], ids=["keeps-scale", "rounds"])
def test_decimal_product_past_38_digits_takes_sparks_bounded_type(types, left, right, product):
    """Spark bounds a decimal product whose exact type needs over 38 digits to decimal(38, s), s >= 6.

    PySpark gives these rows: tests/compat/test_columns_ops.py, test_decimal_product_past_38_digits_*.
    Each row is also evaluated alone, as a kernel may pick its path by the largest value in a batch.
    """
    (lp, ls), (rp, rs), (pp, ps) = types
    a = AttributeRef("a", T.DecimalType(lp, ls), True, new_expr_id())
    b = AttributeRef("b", T.DecimalType(rp, rs), True, new_expr_id())
    expr = coerce(BinaryArithmetic("*", a, b))
    assert expr.dtype == T.DecimalType(pp, ps)

    def product_of(rows: slice) -> pa.Array:
        arrays = [pa.array(left[rows], pa.decimal128(lp, ls)), pa.array(right[rows], pa.decimal128(rp, rs))]
        return evaluate_array(expr, pa.RecordBatch.from_arrays(arrays, names=[a.internal_name, b.internal_name]))

    got = product_of(slice(None))
    assert got.type == pa.decimal128(pp, ps)
    assert got.to_pylist() == product
    assert [product_of(slice(i, i + 1)).to_pylist()[0] for i in range(len(left))] == product


def test_is_null_and_is_not_null_are_never_null():
    batch = _batch([(None, 1, None, 1.0, None, True), (3, 1, float("nan"), 1.0, False, True)])
    assert _quiver(IsNull(A), batch) == [True, False]
    assert _quiver(IsNotNull(X), batch) == [False, True]  # NaN is a value, not a null


def test_filter_drops_rows_where_the_condition_is_null():
    batch = _batch([(1, 1, 0.0, 0.0, True, None), (2, None, 0.0, 0.0, None, None), (3, 3, 0.0, 0.0, False, None)])
    kept = filter_batch(batch, coerce(Comparison("=", A, B)))
    assert kept.column(0).to_pylist() == [1, 3]


@settings(max_examples=25, deadline=None)
@given(data=rows)
def test_in_list_of_doubles_matches_nan(data):
    batch = _batch(data)
    nan_list = (Literal(float("nan"), T.DoubleType()), Literal(1.5, T.DoubleType()))
    assert _same(_quiver(In(X, nan_list), batch), _duckdb("x IN ('NaN'::DOUBLE, 1.5)", batch))
    assert _same(_quiver(In(X, (Y,) + nan_list), batch), _duckdb("x IN (y, 'NaN'::DOUBLE, 1.5)", batch))


def test_in_an_empty_list_is_false_even_for_null():
    """Spark 4 (spark.sql.legacy.nullInEmptyListBehavior=false): `NULL IN ()` is false, so NOT of it keeps the row."""
    batch = _batch([(None, 1, None, 1.0, None, None), (3, 1, 1.0, 1.0, None, None)])
    assert _quiver(In(A, ()), batch) == [False, False]
    assert _quiver(Not(In(X, ())), batch) == [True, True]
    assert filter_batch(batch, coerce(Not(In(A, ())))).num_rows == 2
