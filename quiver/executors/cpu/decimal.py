"""Decimal +, -, * on 64-bit unscaled integers when every value fits, the common case in practice.

Arrow computes a decimal product exactly, in as many digits as it may need: a decimal(32,4)
times a decimal(16,2) takes 49 digits, so it runs in 256-bit decimals, far slower than integer
arithmetic (TPC-H Q1's charge column is such a product; what this bought is in the ledger of
benchmarks/RESULTS.md).
The values themselves rarely need more than 18 digits, so this module checks the operands'
magnitudes, and when the exact result provably fits in an int64 it computes it with numpy,
rounds half away from zero to Spark's result scale and returns a decimal128 array sharing
the numpy buffer. Anything that may not fit returns None and the caller takes the exact path.
The `FixedPoint` operations below do that work; `quiver/executors/cpu/fixed_point.py` runs whole expression
trees on them, and `int64_decimal_arithmetic` one operator on evaluated operands.
"""
from __future__ import annotations

import decimal
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from quiver.engine.core.ansi import ansi_enabled
from quiver.engine.core.errors import arithmetic_overflow
from quiver.executors.cpu.jit import njit

INT64_LIMIT = 2**63 - 1


def unscaled_int64(value: pa.Array | pa.Scalar) -> tuple[np.ndarray | int, int] | None:
    """The unscaled integers of a decimal128 array or scalar and the largest magnitude among them.

    None when some value needs more than 64 bits, or for anything but decimal128 (a decimal256's words are
    twice as wide). Null slots read as 0.
    """
    if isinstance(value, pa.ChunkedArray) or not pa.types.is_decimal128(value.type):
        return None
    if isinstance(value, pa.Scalar):
        if not value.is_valid:
            return None
        unscaled = int(value.as_py().scaleb(value.type.scale))
        return (unscaled, abs(unscaled)) if abs(unscaled) <= INT64_LIMIT else None
    if len(value) == 0:
        return np.zeros(0, np.int64), 0
    words = np.frombuffer(value.buffers()[1], dtype=np.int64, count=2 * (value.offset + len(value)))
    words = words[2 * value.offset:]
    valid = np.asarray(value.is_valid()) if value.null_count else None
    low = np.empty(len(value), dtype=np.int64)
    largest = _low_words(words, valid if valid is not None else np.ones(0, dtype=np.bool_), low)
    return None if largest < 0 else (low, largest)


@njit(cache=True, nogil=True)
def _low_words(words: np.ndarray, valid: np.ndarray, low: np.ndarray) -> int:
    """Copy each valid slot's low 64 bits into `low` (0 for a null) and return the largest |value|,
    or -1 when some valid value needs its high word (more than 64 bits). One pass, no temporaries."""
    largest = 0
    check_validity = len(valid) > 0
    for i in range(len(low)):
        if check_validity and not valid[i]:
            low[i] = 0
            continue
        value = words[2 * i]
        if words[2 * i + 1] != (value >> 63):
            return -1
        if value == -9223372036854775808:
            return -1
        magnitude = -value if value < 0 else value
        if magnitude > largest:
            largest = magnitude
        low[i] = value
    return largest


def largest_magnitude(values: np.ndarray) -> int:
    """max |v| as a Python int (np.abs would wrap -2**63 back to itself)."""
    return max(abs(int(values.max())), abs(int(values.min()))) if len(values) else 0


def _as_decimal128(unscaled: np.ndarray, validity: pa.Buffer | None, null_count: int,
                   out: pa.Decimal128Type) -> pa.Array:
    """A decimal128 array of `out` whose values are `unscaled`, sign-extended to 128 bits."""
    words = np.empty((len(unscaled), 2), dtype=np.int64)
    words[:, 0] = unscaled
    np.right_shift(unscaled, 63, out=words[:, 1])
    return pa.Array.from_buffers(out, len(unscaled), [validity, pa.py_buffer(words)], null_count=null_count)


def decimal_average(sums: pa.Array, counts: pa.Array, out: pa.Decimal128Type,
                    overflow_is_null: bool = False) -> pa.Array:
    """Each `sums / counts` as `out`, exactly and rounded half away from zero (Spark's HALF_UP for
    avg over decimals); null where the count is 0 or the sum null. Int64 arithmetic where it fits,
    Python decimals otherwise."""
    n = counts.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    valid = (n > 0) & np.asarray(sums.is_valid())
    factor = 10 ** (out.scale - sums.type.scale)
    unscaled = unscaled_int64(sums)
    if unscaled is not None and factor >= 1 and unscaled[1] * factor * 2 <= INT64_LIMIT:
        numerator = unscaled[0] * factor
        divisor = np.where(valid, n, 1)
        magnitude = (2 * np.abs(numerator) + divisor) // (2 * divisor)
        values = np.where(numerator < 0, -magnitude, magnitude)
    else:
        results = []
        limit = decimal.Decimal(10) ** (out.precision - out.scale)
        quantum = decimal.Decimal(1).scaleb(-out.scale)
        with decimal.localcontext() as context:
            context.prec = 80
            for total, count, ok in zip(sums.to_pylist(), n.tolist(), valid.tolist()):
                value = (total / count).quantize(quantum, rounding=decimal.ROUND_HALF_UP) if ok else None
                if value is not None and abs(value) >= limit:
                    if ansi_enabled() and not overflow_is_null:
                        raise arithmetic_overflow("try_avg", "Overflow in sum of decimals")
                    value = None  # Spark without ANSI: NULL
                results.append(value)
        return pa.array(results, type=out)
    return decimal_array(FixedPoint(np.where(valid, values, 0), out.scale, 0, None if valid.all() else valid),
                         len(valid), out)


def _round_down_scale(values: np.ndarray, digits: int) -> np.ndarray:
    """Drop `digits` decimal places, rounding half away from zero as Spark's HALF_UP does."""
    factor = 10**digits
    half = factor // 2
    magnitude = (np.abs(values) + half) // factor
    return np.where(values < 0, -magnitude, magnitude)


@dataclass(frozen=True)
class FixedPoint:
    """Unscaled integers (an array, or one int for a constant) at `scale`, |each| <= `bound`;
    `valid` is None when every slot is valid."""

    values: np.ndarray | int
    scale: int
    bound: int
    valid: np.ndarray | None


def fixed_point_of(value: pa.Array | pa.Scalar) -> FixedPoint | None:
    """A decimal128 array or scalar as fixed point, or None when a value needs more than 64 bits."""
    unscaled = unscaled_int64(value)
    if unscaled is None:
        return None
    values, largest = unscaled
    valid = np.asarray(value.is_valid()) if isinstance(value, pa.Array) and value.null_count else None
    return FixedPoint(values, value.type.scale, largest, valid)


def decimal_array(value: FixedPoint, length: int, out: pa.Decimal128Type) -> pa.Array:
    """`value` as a decimal128 array of `out` with `length` slots (a constant is repeated)."""
    values = np.ascontiguousarray(np.broadcast_to(value.values, (length,)), dtype=np.int64)
    if value.valid is None:
        return _as_decimal128(values, None, 0, out)
    bitmap = pa.array(value.valid).buffers()[1]
    return _as_decimal128(values, bitmap, int(len(value.valid) - value.valid.sum()), out)


def int64_decimal_arithmetic(
    op: str, left: pa.Array | pa.Scalar, right: pa.Array | pa.Scalar, out: pa.Decimal128Type,
) -> pa.Array | None:
    """`left op right` (op one of +, -, *) as `out`, computed in int64; None when it might not fit.

    At least one operand is an array and both are decimal128. The result is exact before the
    final rounding to `out.scale`; values that would exceed `out.precision` also return None,
    so the caller's exact path decides what an overflow gives.
    """
    if op not in ("+", "-", "*") or not all(pa.types.is_decimal128(v.type) for v in (left, right)):
        return None
    length = len(left) if isinstance(left, pa.Array) else len(right)
    a, b = fixed_point_of(left), fixed_point_of(right)
    if a is None or b is None:
        return None
    exact = multiply(a, b) if op == "*" else add(a, b, op)
    value = None if exact is None else conform(exact, out)
    return None if value is None else decimal_array(value, length, out)


def rescaled(value: FixedPoint, scale: int) -> FixedPoint | None:
    """`value` at a scale at least its own: multiplied by a power of ten when that fits."""
    if scale == value.scale:
        return value
    factor = 10 ** (scale - value.scale)
    if value.bound * factor > INT64_LIMIT:
        return None
    return FixedPoint(value.values * factor, scale, value.bound * factor, value.valid)


def add(left: FixedPoint, right: FixedPoint, op: str) -> FixedPoint | None:
    scale = max(left.scale, right.scale)
    a, b = rescaled(left, scale), rescaled(right, scale)
    if a is None or b is None or a.bound + b.bound > INT64_LIMIT:
        return None
    values = np.add(a.values, b.values) if op == "+" else np.subtract(a.values, b.values)
    return FixedPoint(values, scale, a.bound + b.bound, both_valid(left.valid, right.valid))


def multiply(left: FixedPoint, right: FixedPoint) -> FixedPoint | None:
    if left.bound * right.bound > INT64_LIMIT:
        return None
    values = np.multiply(left.values, right.values)
    return FixedPoint(values, left.scale + right.scale, left.bound * right.bound, both_valid(left.valid, right.valid))


def conform(value: FixedPoint, to) -> FixedPoint | None:
    """`value` at `to`'s scale (`to` a decimal type, Arrow's or Quiver's) (rounding half away from zero, as
    Spark's HALF_UP), or None when some value has more digits than `to.precision` allows (Spark's null, left
    to the exact path)."""
    if value.scale > to.scale:
        digits = value.scale - to.scale
        values = value.values
        if isinstance(values, np.ndarray):
            rounded = _round_down_scale(values, digits)
        else:
            half = 10**digits // 2
            rounded = (abs(values) + half) // 10**digits * (1 if values >= 0 else -1)
        value = FixedPoint(rounded, to.scale, value.bound // 10**digits + 1, value.valid)
    elif value.scale < to.scale:
        value = rescaled(value, to.scale)
        if value is None:
            return None
    limit = 10**to.precision
    if value.bound >= limit:
        largest = largest_magnitude(value.values) if isinstance(value.values, np.ndarray) else abs(value.values)
        if largest >= limit:
            return None
        value = FixedPoint(value.values, value.scale, largest, value.valid)
    return value


def both_valid(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
    if a is None:
        return b
    if b is None:
        return a
    return a & b
