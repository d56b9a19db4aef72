"""quiver/executors/device/kernels/expressions.py against the CPU executor: every supported expression, evaluated on
a device over batches with nulls, NaN, -0.0, infinities, negative decimals and repeated strings,
must give what `quiver/executors/cpu/evaluate.py::evaluate_array` gives, value for value and null for null."""
from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal as D

import pyarrow as pa
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from quiver.engine.analysis.analyzer import coerce
from quiver.engine.core import types as T
from quiver.engine.core.errors import QuiverError
from quiver.engine.core.expressions import (
    Alias,
    And,
    AttributeRef,
    BinaryArithmetic,
    CaseWhen,
    Cast,
    Comparison,
    In,
    IsNotNull,
    IsNull,
    Literal,
    Negate,
    Not,
    Or,
    ScalarFunction,
    new_expr_id,
)
from quiver.executors.base import DeviceFallback
from quiver.executors.cpu.evaluate import evaluate_array
from quiver.executors.device.kernels.columns import column_to_arrow, to_device
from quiver.executors.device.kernels.expressions import evaluate, unsupported_reason

# IEEE operations such as inf - inf are meant to give NaN here, as they do on the CPU; numpy says so.
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning",
                                        "ignore:overflow encountered:RuntimeWarning")

A = AttributeRef("a", T.LongType(), True, new_expr_id())
B = AttributeRef("b", T.LongType(), True, new_expr_id())
I32 = AttributeRef("i", T.IntegerType(), True, new_expr_id())
X = AttributeRef("x", T.DoubleType(), True, new_expr_id())
Y = AttributeRef("y", T.DoubleType(), True, new_expr_id())
F = AttributeRef("f", T.FloatType(), True, new_expr_id())
P = AttributeRef("p", T.BooleanType(), True, new_expr_id())
Q = AttributeRef("q", T.BooleanType(), True, new_expr_id())
D1 = AttributeRef("d1", T.DecimalType(7, 2), True, new_expr_id())
D2 = AttributeRef("d2", T.DecimalType(5, 3), True, new_expr_id())
S = AttributeRef("s", T.StringType(), True, new_expr_id())
S2 = AttributeRef("s2", T.StringType(), True, new_expr_id())
DT = AttributeRef("dt", T.DateType(), True, new_expr_id())
TS = AttributeRef("ts", T.TimestampType(), True, new_expr_id())
ATTRS = (A, B, I32, X, Y, F, P, Q, D1, D2, S, S2, DT, TS)

small_int = st.one_of(st.none(), st.integers(-20, 20), st.sampled_from([2**62, -(2**63), 2**31 + 5, -(2**31) - 3]))
int32 = st.one_of(st.none(), st.integers(-(2**31), 2**31 - 1), st.integers(-5, 5))
special = st.one_of(st.none(), st.sampled_from([0.0, -0.0, 1.5, -2.5, 3.0, 0.5, -0.5, 7.25, 1e20, -3e9, 4e9,
                                                float("nan"), float("inf"), float("-inf"), 1e300]))
maybe_bool = st.one_of(st.none(), st.booleans())
dec72 = st.one_of(st.none(), st.decimals(min_value=D("-99999.99"), max_value=D("99999.99"), places=2,
                                         allow_nan=False, allow_infinity=False),
                  st.sampled_from([D("-0.05"), D("2.55")]))
dec53 = st.one_of(st.none(), st.decimals(min_value=D("-99.999"), max_value=D("99.999"), places=3,
                                         allow_nan=False, allow_infinity=False))
text = st.one_of(st.none(), st.sampled_from(["a", "b", "", "ab", "é"]))
date = st.one_of(st.none(), st.dates(min_value=dt.date(1800, 1, 1), max_value=dt.date(2200, 1, 1)))
stamp = st.one_of(st.none(), st.integers(-(10**15), 10**15))
rows = st.lists(st.tuples(small_int, small_int, int32, special, special, special, maybe_bool, maybe_bool, dec72,
                          dec53, text, text, date, stamp), min_size=1, max_size=20)


def _batch(data) -> pa.RecordBatch:
    cols = list(zip(*data))
    arrays = []
    for c, a in zip(cols, ATTRS):
        t = pa.int64() if a is TS else a.dtype.to_arrow()
        arr = pa.array(list(c), t)
        arrays.append(arr.view(pa.timestamp("us")) if a is TS else arr)
    return pa.RecordBatch.from_arrays(arrays, names=[a.internal_name for a in ATTRS])


def _exact(values: list) -> list:
    out = []
    for v in values:
        if isinstance(v, float):
            v = ("nan",) if math.isnan(v) else (v, math.copysign(1.0, v))
        out.append(v)
    return out


def assert_device_matches_cpu(expr, batch, xp) -> None:
    expr = coerce(expr)
    assert unsupported_reason(expr) is None, unsupported_reason(expr)
    want = evaluate_array(expr, batch)
    got = column_to_arrow(evaluate(expr, to_device(batch, xp), xp))
    assert got.type == want.type, expr.sql()
    assert _exact(got.to_pylist()) == _exact(want.to_pylist()), expr.sql()


def lit(v, t=None):
    return Literal(v, t) if t is not None else Literal.of(v)


ARITHMETIC = [BinaryArithmetic(op, left, right) for op in ("+", "-", "*", "/", "%")
              for left, right in ((A, B), (X, Y), (I32, A), (F, X), (A, lit(3)), (lit(-7), I32), (F, F), (I32, I32))]
DECIMAL = [BinaryArithmetic("+", D1, D2), BinaryArithmetic("-", D2, D1), BinaryArithmetic("*", D1, D2),
           BinaryArithmetic("+", D1, lit(1)), BinaryArithmetic("*", D2, lit(D("-1.5"))), Negate(D1),
           BinaryArithmetic("-", BinaryArithmetic("*", D2, D2), D2), BinaryArithmetic("*", D1, I32),
           BinaryArithmetic("+", D1, X)]
COMPARISONS = [Comparison(op, left, right) for op in ("=", "<", "<=", ">", ">=", "<=>")
               for left, right in ((A, B), (X, Y), (F, X), (I32, A), (P, Q), (D1, D2), (DT, lit(dt.date(2000, 1, 1))),
                                   (TS, DT), (X, lit(float("nan"))), (A, lit(None, T.LongType())),
                                   (D1, lit(D("1.50"))))]
STRINGS = [Comparison("=", S, lit("a")), Comparison("=", S, S2), Comparison("<=>", S, S2),
           Comparison("=", lit("b"), S2),
           Comparison("<=>", S, lit(None, T.StringType())), Not(Comparison("=", S, lit("zz"))),
           In(S, (lit("a"), lit(""))), In(S, (lit("b"), lit(None, T.StringType()))), In(S, (S2, lit("a"))),
           S, Alias(S2, "t"), lit("const"), lit(None, T.StringType()),
           CaseWhen((Comparison(">", A, lit(0)),), (S,), S2), CaseWhen((P, Q), (lit("yes"), S), None)]
LOGIC = [And(P, Q), Or(P, Q), Not(P), And(P, lit(None, T.BooleanType())), Or(lit(None, T.BooleanType()), Q),
         And(Comparison("<", A, B), Or(P, Not(Q))), IsNull(A), IsNotNull(X), IsNull(S), IsNotNull(D1),
         In(A, (lit(1), lit(-3), lit(2**62))), In(A, (lit(1), lit(None, T.IntegerType()))), In(A, ()),
         In(X, (lit(float("nan")), lit(0.0))), In(X, (lit(-0.0), lit(1.5))), In(X, (Y, lit(3.0))), In(X, (A,)),
         In(D1, (lit(D("2.55")), lit(D("-0.05")))), In(DT, (lit(dt.date(2000, 1, 1)),)), In(P, (lit(True),)),
         In(A, (B, lit(None, T.LongType()))), In(A, (lit(1, T.LongType()), lit(-7, T.LongType()))),
         In(A, (lit(2**62, T.LongType()), lit(None, T.LongType()))), In(I32, (lit(None, T.IntegerType()),)),
         In(D1, (lit(D("2.55"), T.DecimalType(7, 2)), lit(D("-123.45"), T.DecimalType(7, 2))))]
CASTS = [Cast(c, t) for c in (X, F, A, I32, D1, D2, P)
         for t in (T.LongType(), T.IntegerType(), T.ShortType(), T.ByteType(), T.DoubleType(), T.FloatType(),
                   T.BooleanType())] + \
        [Cast(A, T.DecimalType(5, 2)), Cast(I32, T.DecimalType(18, 0)), Cast(D1, T.DecimalType(6, 1)),
         Cast(D1, T.DecimalType(4, 2)), Cast(D2, T.DecimalType(18, 10)), Cast(D2, T.DecimalType(2, 0)),
         Cast(P, T.DecimalType(3, 1)), Cast(DT, T.TimestampType()), Cast(TS, T.DateType()), Cast(X, X.dtype)]
CASES = [CaseWhen((Comparison(">", A, lit(0)), IsNull(X)), (X, lit(-1.0)), Y),
         CaseWhen((P,), (D1,), None), CaseWhen((Q, P), (I32, A), lit(7)),
         Alias(Negate(BinaryArithmetic("*", A, lit(2))), "n"), Negate(X), Negate(F), lit(5), lit(None, T.DoubleType()),
         lit(dt.date(2024, 2, 29)), lit(D("-3.25")), lit(True), lit(dt.datetime(2001, 2, 3, 4, 5, 6, 7))]
EXPRESSIONS = ARITHMETIC + DECIMAL + COMPARISONS + STRINGS + LOGIC + CASTS + CASES


@settings(max_examples=25, deadline=None)
@given(data=rows)
def test_every_supported_expression_matches_the_cpu_executor(xp, data):
    assume(not any(r[0] == -(2**63) and r[1] == -1 for r in data))  # see test_long_min_remainder_minus_one
    batch = _batch(data)
    for expr in EXPRESSIONS:
        assert_device_matches_cpu(expr, batch, xp)


FIXED_ROWS = [
    (7, 0, -7, 5.5, 0.0, float("nan"), True, None, D("-123.45"), D("0.005"), "a", "a", dt.date(1969, 12, 31), -1),
    (-7, 3, 2**31 - 1, -5.5, -0.0, -0.0, False, False, D("99999.99"), D("-99.999"), "b", None, None, 86_400_000_000),
    (None, -3, None, float("inf"), float("inf"), 1e20, None, True, None, D("1.000"), None, "a", dt.date(2000, 1, 1),
     None),
    (-(2**63), -2, -(2**31), float("nan"), float("nan"), float("-inf"), True, True, D("0.05"), D("-0.500"), "", "",
     None,
     -86_400_000_001),
]


@pytest.mark.parametrize("expr", EXPRESSIONS, ids=lambda e: coerce(e).sql())
def test_expression_on_edge_values(xp, expr):
    assert_device_matches_cpu(expr, _batch(FIXED_ROWS), xp)


def test_spark_semantics_spelled_out(xp):
    """Independent of the CPU path: x / 0 and x % 0 are null, % takes the dividend's sign, NaN = NaN."""
    batch = _batch(FIXED_ROWS)
    device = to_device(batch, xp)

    def run(e):
        return column_to_arrow(evaluate(coerce(e), device, xp)).to_pylist()

    assert run(BinaryArithmetic("/", A, B))[:2] == [None, -7 / 3]
    assert run(BinaryArithmetic("%", A, B))[:2] == [None, -1]
    assert run(BinaryArithmetic("%", lit(7), lit(-3)))[0] == 1
    assert run(Comparison("=", X, Y))[3] is True
    assert run(Comparison(">", X, lit(float("inf"))))[3] is True
    assert run(BinaryArithmetic("+", D1, D2))[0] == D("-123.445")
    assert run(Cast(D1, T.DecimalType(6, 1)))[:4] == [D("-123.5"), None, None, D("0.1")]
    assert run(And(P, Q))[:4] == [None, False, None, True]
    assert run(Or(P, Q))[:4] == [True, False, True, True]


def test_long_min_remainder_minus_one_is_zero_as_in_java(xp):
    """Long.MIN_VALUE % -1 is 0 in Java and Spark. The CPU path computes a - (a / b) * b with Arrow, whose
    MIN_VALUE / -1 is 0, and so gives MIN_VALUE: the one known difference, and the device is the one that is right."""
    batch = pa.record_batch({A.internal_name: pa.array([-(2**63), 5]), B.internal_name: pa.array([-1, -1])})
    got = column_to_arrow(evaluate(coerce(BinaryArithmetic("%", A, B)), to_device(batch, xp), xp))
    assert got.to_pylist() == [0, 0]


def test_empty_batch(xp):
    batch = _batch(FIXED_ROWS).slice(0, 0)
    for expr in (BinaryArithmetic("+", A, B), Comparison("=", S, lit("a")), lit(3), In(X, (lit(1.0),)),
                 CaseWhen((P,), (S,), S2)):
        assert_device_matches_cpu(expr, batch, xp)


@pytest.mark.parametrize("expr, reason", [
    (ScalarFunction("upper", (S,)), "function upper has no device kernel"),
    (BinaryArithmetic("/", D1, D2), "decimal division has no device kernel"),
    (BinaryArithmetic("%", D1, D2), "decimal remainder has no device kernel"),
    (Comparison("<", S, lit("a")), "string comparison < has no device kernel"),
    (Cast(A, T.StringType()), "cast to string"),
    (Cast(S, T.LongType()), "cast from string"),
    (Cast(X, T.DecimalType(10, 2)), "cast from floating point to decimal"),
    (Cast(Cast(D1, T.DecimalType(17, 2)), T.DoubleType()), "exact on a device only up to precision 15"),
    (Comparison("=", AttributeRef("big", T.DecimalType(38, 0), True, new_expr_id()), lit(D(10**20))),
     "decimal literal 100000000000000000000 needs more than the 64 bits"),
    (AttributeRef("raw", T.BinaryType(), True, new_expr_id()), "binary, which has no device representation"),
    (And(P, Comparison("=", ScalarFunction("lower", (S,)), lit("a"))), "function lower has no device kernel"),
    (Cast(DT, T.LongType()), "cast from date to bigint has no device kernel"),
])
def test_unsupported_reason_names_what_has_no_kernel(xp, expr, reason):
    expr = coerce(expr)
    assert reason in unsupported_reason(expr)
    with pytest.raises(QuiverError, match="on a device"):
        evaluate(expr, to_device(_batch(FIXED_ROWS), xp), xp)


def test_supported_expressions_have_no_reason():
    for expr in EXPRESSIONS:
        assert unsupported_reason(coerce(expr)) is None, coerce(expr).sql()



# ---------------------------------------------------------------- decimals wider than 18 digits

PRICE = AttributeRef("price", T.DecimalType(15, 2), True, new_expr_id())
DISC = AttributeRef("disc", T.DecimalType(15, 2), True, new_expr_id())
W = AttributeRef("w", T.DecimalType(38, 4), True, new_expr_id())
V = AttributeRef("v", T.DecimalType(25, 2), True, new_expr_id())
Z = AttributeRef("z", T.DecimalType(20, 0), True, new_expr_id())
R = AttributeRef("r", T.DecimalType(38, 19), True, new_expr_id())
WIDE_ATTRS = (PRICE, DISC, W, V, Z, R, A, I32)


def _wide_batch(data) -> pa.RecordBatch:
    """Rows of (price, disc, w, v, z, r, a, i); r is given unscaled, to reach every int64."""
    cols = [list(c) for c in zip(*data)]
    cols[5] = [None if u is None else D(u).scaleb(-19) for u in cols[5]]
    return pa.record_batch([pa.array(c, a.dtype.to_arrow()) for c, a in zip(cols, WIDE_ATTRS)],
                           names=[a.internal_name for a in WIDE_ATTRS])


def _dec(low: str, high: str, places: int):
    return st.one_of(st.none(), st.decimals(min_value=D(low), max_value=D(high), places=places,
                                            allow_nan=False, allow_infinity=False))


# values whose every result below fits int64: the device must then give the CPU's answer, never fall back
wide_rows = st.lists(st.tuples(
    _dec("-99999.99", "99999.99", 2), _dec("-1", "1", 2), _dec("-99999.9999", "99999.9999", 4),
    _dec("-9999999.99", "9999999.99", 2), st.one_of(st.none(), st.integers(-(10**14), 10**14)),
    st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1), st.sampled_from([5 * 10**18, -5 * 10**18, 5 * 10**18 - 1])),
    small_int, int32), min_size=1, max_size=20)

CHARGE = BinaryArithmetic("*", BinaryArithmetic("*", PRICE, BinaryArithmetic("-", lit(1), DISC)),
                          BinaryArithmetic("+", lit(1), DISC))
WIDE_EXPRESSIONS = [
    BinaryArithmetic("*", PRICE, BinaryArithmetic("-", lit(1), DISC)), CHARGE, BinaryArithmetic("+", W, V),
    BinaryArithmetic("-", V, W), BinaryArithmetic("*", W, W), BinaryArithmetic("*", W, PRICE),
    BinaryArithmetic("+", Z, W),
    BinaryArithmetic("-", W, lit(D("0.0001"))), BinaryArithmetic("*", W, lit(D("0.5"))), Negate(W), Negate(Z),
    Comparison("<", W, V), Comparison("=", Z, W), Comparison(">=", V, PRICE), Comparison("<=>", W, W),
    In(W, (lit(D("1.5")), lit(D("-0.0005")))), CaseWhen((Comparison(">", W, lit(0)),), (W,), V),
    Cast(W, T.DecimalType(10, 2)), Cast(W, T.DecimalType(38, 3)), Cast(W, T.DecimalType(38, 0)),
    Cast(V, T.DecimalType(38, 10)), Cast(Z, T.DecimalType(19, 1)), Cast(W, T.LongType()), Cast(Z, T.IntegerType()),
    Cast(R, T.LongType()), Cast(R, T.DecimalType(38, 0)), Cast(R, T.DecimalType(20, 1)), Cast(R, T.DecimalType(38, 18)),
    Cast(A, T.DecimalType(20, 0)), Cast(I32, T.DecimalType(38, 8)), Cast(DISC, T.DecimalType(38, 18)),
]


def assert_device_matches_cpu_wide(expr, batch, xp) -> None:
    expr = coerce(expr)
    assert unsupported_reason(expr) is None, unsupported_reason(expr)
    want = evaluate_array(expr, batch)
    got = column_to_arrow(evaluate(expr, to_device(batch, xp), xp))
    assert got.type == want.type, expr.sql()
    assert got.to_pylist() == want.to_pylist(), expr.sql()


@settings(max_examples=25, deadline=None)
@given(data=wide_rows)
def test_wide_decimals_that_fit_match_the_cpu_without_falling_back(xp, data):
    batch = _wide_batch(data)
    for expr in WIDE_EXPRESSIONS:
        assert_device_matches_cpu_wide(expr, batch, xp)


WIDE_EDGE_ROWS = [
    (D("99999.99"), D("0.05"), D("0.0005"), D("-0.01"), 10**14, 5 * 10**18, 2**62, 2**31 - 1),
    (D("-0.01"), None, D("-0.0005"), D("9999999.99"), -(10**14), -5 * 10**18, -(2**63), -(2**31)),
    (None, D("-1.00"), D("0.0004"), None, None, 5 * 10**18 - 1, None, None),
    (D("0.05"), D("1.00"), D("-0.0015"), D("0.01"), 0, -(2**63), 0, 0),
    (D("0.09"), D("0.00"), D("99999.9999"), D("-9999999.99"), 7, 2**63 - 1, -7, 5),
]


@pytest.mark.parametrize("expr", WIDE_EXPRESSIONS, ids=lambda e: coerce(e).sql())
def test_wide_decimal_expression_on_edge_values(xp, expr):
    assert_device_matches_cpu_wide(expr, _wide_batch(WIDE_EDGE_ROWS), xp)


def test_wide_decimals_round_half_up_and_null_beyond_precision_as_spark(xp):
    rows = [(None, None, D(w), None, None, r, None, None) for w, r in
            [("0.0005", 5 * 10**18), ("-0.0005", -5 * 10**18), ("0.0004", 5 * 10**18 - 1), ("-0.0015", -(2**63)),
             ("99999999.9949", 2**63 - 1), ("99999999.9950", -(5 * 10**18 - 1)), ("100000000.0000", 0)]]
    batch = _wide_batch(rows)
    device = to_device(batch, xp)

    def run(e):
        e = coerce(e)
        got = column_to_arrow(evaluate(e, device, xp)).to_pylist()
        assert got == evaluate_array(e, batch).to_pylist(), e.sql()
        return got

    assert run(Cast(W, T.DecimalType(38, 3))) == [D("0.001"), D("-0.001"), D("0.000"), D("-0.002"), D("99999999.995"),
                                                  D("99999999.995"), D("100000000.000")]
    assert run(Cast(W, T.DecimalType(10, 2))) == [D("0.00"), D("-0.00"), D("0.00"), D("-0.00"), D("99999999.99"),
                                                  None, None]
    assert run(Cast(R, T.DecimalType(38, 0))) == [D(1), D(-1), D(0), D(-1), D(1), D(0), D(0)]
    assert run(Cast(R, T.LongType())) == [0] * 7
    assert run(BinaryArithmetic("*", W, lit(D("0.5"))))[:4] == [D("0.00025"), D("-0.00025"), D("0.00020"),
                                                                D("-0.00075")]
    product = BinaryArithmetic("*", W, lit(D("0.0010")))  # 8 places rounded to Spark's 6 (decimal(38,6))
    assert run(product)[:4] == [D("0.000001"), D("-0.000001"), D("0.000000"), D("-0.000002")]


@pytest.mark.parametrize("expr, row, why", [
    (BinaryArithmetic("*", W, PRICE), (D("99999.99"), None, D("1000000000.0000"), None, None, None, None, None),
     "may leave the 64 bits"),
    (BinaryArithmetic("+", W, V), (None, None, D(2**63 - 1).scaleb(-4), D("0.01"), None, None, None, None),
     "may leave the 64 bits"),
    (Cast(V, T.DecimalType(38, 10)), (None, None, None, D(10**15), None, None, None, None), "leaves the 64 bits"),
    (Negate(W), (None, None, D(-(2**63)).scaleb(-4), None, None, None, None, None), "negates -2\\*\\*63"),
    (Cast(A, T.DecimalType(38, 10)), (None, None, None, None, None, None, 2**62, None), "leaves the 64 bits"),
    (Cast(PRICE, T.DecimalType(38, 20)), (D("1.00"), None, None, None, None, None, None, None), "leaves the 64 bits"),
    (Comparison("=", Z, W), (None, None, D(0), None, 10**17, None, None, None), "leaves the 64 bits"),
])
def test_a_wide_decimal_result_that_may_leave_64_bits_falls_back(xp, expr, row, why):
    """The CPU computes these exactly in 128 bits; the device refuses rather than wrap, and is exact once they fit."""
    expr = coerce(expr)
    assert unsupported_reason(expr) is None
    batch = _wide_batch([row, (None,) * 8])
    assert evaluate_array(expr, batch).to_pylist()[0] is not None
    with pytest.raises(DeviceFallback, match=why):
        evaluate(expr, to_device(batch, xp), xp)
    # the same expression over a null in that slot holds nothing wide, and runs
    assert_device_matches_cpu_wide(expr, batch.slice(1), xp)
