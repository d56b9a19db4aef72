"""int64 decimal arithmetic agrees with exact decimal arithmetic, and declines what may not fit."""
from __future__ import annotations

import decimal
import random

import pyarrow as pa
import pytest

from quiver.executors.cpu.decimal import int64_decimal_arithmetic

D = decimal.Decimal


def _exact(op: str, a: D | None, b: D | None, out: pa.Decimal128Type) -> D | None:
    if a is None or b is None:
        return None
    with decimal.localcontext(prec=100):
        r = a + b if op == "+" else a - b if op == "-" else a * b
        return r.quantize(D(1).scaleb(-out.scale), rounding=decimal.ROUND_HALF_UP)


def _random_decimals(rng: random.Random, precision: int, scale: int, n: int) -> list[D | None]:
    return [None if rng.random() < 0.1 else D(rng.randint(-10**precision + 1, 10**precision - 1)).scaleb(-scale)
            for _ in range(n)]


@pytest.mark.parametrize("seed", range(4))
def test_matches_exact_arithmetic_with_half_up_rounding(seed):
    rng = random.Random(seed)
    checked = 0
    for _ in range(400):
        p1, p2 = rng.randint(1, 18), rng.randint(1, 18)
        left_type, right_type = pa.decimal128(p1, rng.randint(0, p1)), pa.decimal128(p2, rng.randint(0, p2))
        precision = rng.randint(1, 38)
        out = pa.decimal128(precision, rng.randint(0, min(precision, 12)))
        op = rng.choice("+-*")
        left = pa.array(_random_decimals(rng, p1, left_type.scale, 24), left_type).slice(rng.randint(0, 3), 20)
        right = pa.array(_random_decimals(rng, p2, right_type.scale, 24), right_type).slice(rng.randint(0, 3), 20)
        right = right if rng.random() < 0.8 else right[0]
        result = int64_decimal_arithmetic(op, left, right, out)
        if result is None:
            continue
        checked += 1
        result.validate(full=True)
        rights = [right.as_py()] * len(left) if isinstance(right, pa.Scalar) else right.to_pylist()
        assert result.type == out
        assert result.to_pylist() == [_exact(op, a, b, out) for a, b in zip(left.to_pylist(), rights)]
    assert checked > 100


def test_tpch_charge_product_rounds_to_sparks_type():
    price = pa.array([D("19.3800"), D("-0.0050"), None], pa.decimal128(32, 4))
    tax = pa.array([D("5.00"), D("0.01"), D("1.00")], pa.decimal128(16, 2))
    result = int64_decimal_arithmetic("*", price, tax, pa.decimal128(38, 6))
    assert result.to_pylist() == [D("96.900000"), D("-0.000050"), None]


def test_declines_values_beyond_int64():
    big = pa.array([D(10**20)], pa.decimal128(38, 0))
    assert int64_decimal_arithmetic("+", big, pa.array([D(1)], pa.decimal128(38, 0)), pa.decimal128(38, 0)) is None


def test_declines_products_that_may_overflow_int64():
    a = pa.array([D(4 * 10**9), D(1)], pa.decimal128(18, 0))
    assert int64_decimal_arithmetic("*", a, a, pa.decimal128(38, 0)) is None


def test_declines_results_beyond_the_result_precision():
    a = pa.array([D("999.99")], pa.decimal128(5, 2))
    assert int64_decimal_arithmetic("+", a, a, pa.decimal128(5, 2)) is None


def test_declines_division_and_non_decimal_operands():
    a = pa.array([D("1.5")], pa.decimal128(5, 1))
    assert int64_decimal_arithmetic("/", a, a, pa.decimal128(10, 4)) is None
    assert int64_decimal_arithmetic("+", a, pa.array([1.5]), pa.decimal128(10, 4)) is None
