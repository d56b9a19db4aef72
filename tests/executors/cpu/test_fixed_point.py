"""quiver/executors/cpu/fixed_point.py: decimal +, -, * trees in int64 give exactly what Python's Decimal gives
when every node is rounded HALF_UP to its Spark type, as the node-by-node Arrow path does; nulls stay
null; where a bound may leave int64 or a value outgrows its precision it declines (None)."""
from __future__ import annotations

import decimal
import random

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given
from hypothesis import strategies as st

from quiver.engine.core import types as T
from quiver.engine.core.expressions import (
    AttributeRef,
    BinaryArithmetic,
    Comparison,
    Literal,
)
from quiver.executors.cpu import evaluate as E
from quiver.executors.cpu.fixed_point import fixed_point_comparison, fixed_point_decimal

PRICE = AttributeRef("price", T.DecimalType(15, 2), True, 101)
RATE = AttributeRef("rate", T.DecimalType(15, 2), True, 102)
ONE = Literal(decimal.Decimal(1), T.DecimalType(1, 0))


def _batch(prices, rates) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.array(prices, pa.decimal128(15, 2)), pa.array(rates, pa.decimal128(15, 2))],
                                      names=[PRICE.internal_name, RATE.internal_name])


def _decimal(expr, row: dict):
    """The oracle: the tree in Python decimals, each node rounded HALF_UP to its Spark scale."""
    if isinstance(expr, AttributeRef):
        return row[expr.name]
    if isinstance(expr, Literal):
        return decimal.Decimal(expr.value)
    left, right = _decimal(expr.left, row), _decimal(expr.right, row)
    if left is None or right is None:
        return None
    with decimal.localcontext() as ctx:
        ctx.prec = 100
        exact = {"+": left + right, "-": left - right, "*": left * right}[expr.op]
        value = exact.quantize(decimal.Decimal(1).scaleb(-expr.dtype.scale), rounding=decimal.ROUND_HALF_UP)
    return None if abs(value) >= decimal.Decimal(10) ** (expr.dtype.precision - expr.dtype.scale) else value


CHARGE = BinaryArithmetic("*", BinaryArithmetic("*", PRICE, BinaryArithmetic("-", ONE, RATE)),
                          BinaryArithmetic("+", ONE, RATE))


@pytest.mark.parametrize("expr", [
    CHARGE,
    BinaryArithmetic("*", PRICE, BinaryArithmetic("-", ONE, RATE)),
    BinaryArithmetic("-", BinaryArithmetic("*", PRICE, RATE), PRICE),
    BinaryArithmetic("*", BinaryArithmetic("*", CHARGE, RATE), RATE),  # past 38 digits: rounded by Spark's rule
], ids=["charge", "discounted", "difference", "deep"])
def test_matches_decimal_arithmetic_rounded_per_node(expr):
    rng = random.Random(7)
    prices = ([decimal.Decimal(rng.randint(-10**7, 10**7)).scaleb(-2) for _ in range(2000)]
              + [None, decimal.Decimal("0.05")])
    rates = [decimal.Decimal(rng.randint(0, 10)).scaleb(-2) for _ in range(2000)] + [decimal.Decimal("0.01"), None]
    batch = _batch(prices, rates)
    out = fixed_point_decimal(expr, batch)
    assert out is not None and out.type == expr.dtype.to_arrow()
    expected = [_decimal(expr, {"price": p, "rate": r}) for p, r in zip(prices, rates)]
    assert out.to_pylist() == expected
    E.fixed_point_decimal = lambda *a, **k: None
    try:
        assert E.evaluate_array(expr, batch).to_pylist() == expected  # the exact path agrees
    finally:
        E.fixed_point_decimal = fixed_point_decimal


def test_ties_round_half_away_from_zero():
    # 0.05 * 0.05 = 0.0025 at scale 4; times 1.01 = 0.002525 at scale 6 -> rounded by the outer node.
    half = BinaryArithmetic("*", BinaryArithmetic("*", PRICE, RATE), BinaryArithmetic("+", ONE, RATE))
    batch = _batch([decimal.Decimal("0.05"), decimal.Decimal("-0.05")],
                   [decimal.Decimal("0.05"), decimal.Decimal("0.05")])
    assert fixed_point_decimal(half, batch).to_pylist() == [_decimal(half, {"price": p, "rate": r})
                                                             for p, r in [(decimal.Decimal("0.05"),) * 2,
                                                                          (decimal.Decimal("-0.05"),
                                                                           decimal.Decimal("0.05"))]]


def test_declines_when_values_may_leave_int64():
    big = decimal.Decimal(10**12)
    batch = _batch([big, big], [big, big])
    square = BinaryArithmetic("*", BinaryArithmetic("*", PRICE, RATE), PRICE)
    assert fixed_point_decimal(square, batch) is None
    expected = _decimal(square, {"price": big, "rate": big})
    assert E.evaluate_array(square, batch).to_pylist() == [expected, expected]  # the exact path answers


def test_a_single_operator_within_38_digits_is_left_to_arrow():
    assert fixed_point_decimal(BinaryArithmetic("*", PRICE, RATE),
                               _batch([decimal.Decimal(1)], [decimal.Decimal(1)])) is None


def test_common_subexpressions_are_computed_once():
    discounted = BinaryArithmetic("*", PRICE, BinaryArithmetic("-", ONE, RATE))
    batch = _batch([decimal.Decimal("2.00")], [decimal.Decimal("0.10")])
    memo: dict = {}
    fixed_point_decimal(discounted, batch, memo)
    first = memo[discounted]
    fixed_point_decimal(BinaryArithmetic("*", discounted, BinaryArithmetic("+", ONE, RATE)), batch, memo)
    assert memo[discounted] is first


@given(st.lists(st.one_of(st.none(), st.decimals(min_value=-10**6, max_value=10**6, places=2)), min_size=1,
                max_size=40),
       st.decimals(min_value=-10**6, max_value=10**6, places=3), st.sampled_from(["=", "<", "<=", ">", ">="]))
def test_decimal_comparisons_in_int64_match_arrows(values, constant, op):
    column = pa.array(values, pa.decimal128(12, 2))
    attr = AttributeRef("c", T.DecimalType(12, 2), True, 0)
    batch = pa.RecordBatch.from_arrays([column], names=[attr.internal_name])
    expr = Comparison(op, attr, Literal(constant, T.DecimalType(10, 3)))
    fast = fixed_point_comparison(expr, batch)
    assert fast is not None
    arrow = {"=": pc.equal, "<": pc.less, "<=": pc.less_equal, ">": pc.greater, ">=": pc.greater_equal}[op]
    assert fast.equals(arrow(column, pa.scalar(constant, pa.decimal128(10, 3))))
