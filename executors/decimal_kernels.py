"""Decimal +, -, * on 64-bit unscaled integers when every value fits, the common case in practice.

Arrow computes a decimal product exactly, in as many digits as it may need: a decimal(32,4)
times a decimal(16,2) takes 49 digits, so it runs in 256-bit decimals, far slower than integer
arithmetic (TPC-H Q1's charge column is such a product; what this bought is in the ledger of
benchmarks/RESULTS.md).
The values themselves rarely need more than 18 digits, so this module checks the operands'
magnitudes, and when the exact result provably fits in an int64 it computes it with numpy,
rounds half away from zero to Spark's result scale and returns a decimal128 array sharing
the numpy buffer. Anything that may not fit returns None and the caller takes the exact path.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

_INT64_LIMIT = 2**63 - 1


def _unscaled(value: pa.Array | pa.Scalar) -> tuple[np.ndarray | int, int] | None:
    """The unscaled integers of a decimal128 array or scalar and the largest magnitude among them.

    None when some value needs more than 64 bits. Null slots read as 0.
    """
    if isinstance(value, pa.ChunkedArray):
        return None
    if isinstance(value, pa.Scalar):
        if not value.is_valid:
            return None
        unscaled = int(value.as_py().scaleb(value.type.scale))
        return (unscaled, abs(unscaled)) if abs(unscaled) <= _INT64_LIMIT else None
    if len(value) == 0:
        return np.zeros(0, np.int64), 0
    words = np.frombuffer(value.buffers()[1], dtype=np.int64, count=2 * (value.offset + len(value)))
    words = words[2 * value.offset:]
    low, high = words[0::2], words[1::2]
    if not np.array_equal(high, low >> 63):
        if value.null_count == 0:
            return None
        # Null slots may hold anything; only the valid ones have to fit.
        valid = np.asarray(value.is_valid())
        if not np.array_equal(high[valid], low[valid] >> 63):
            return None
    if value.null_count:
        low = np.where(np.asarray(value.is_valid()), low, 0)
    return low, _largest_magnitude(low)


def _largest_magnitude(values: np.ndarray) -> int:
    """max |v| as a Python int (np.abs would wrap -2**63 back to itself)."""
    return max(abs(int(values.max())), abs(int(values.min()))) if len(values) else 0


def _as_decimal128(unscaled: np.ndarray, validity: pa.Buffer | None, null_count: int, out: pa.Decimal128Type) -> pa.Array:
    """A decimal128 array of `out` whose values are `unscaled`, sign-extended to 128 bits."""
    words = np.empty((len(unscaled), 2), dtype=np.int64)
    words[:, 0] = unscaled
    np.right_shift(unscaled, 63, out=words[:, 1])
    return pa.Array.from_buffers(out, len(unscaled), [validity, pa.py_buffer(words)], null_count=null_count)


def _rescale(values: np.ndarray | int, largest: int, by: int) -> tuple[np.ndarray | int, int] | None:
    """`values` times 10**by (by >= 0), or None when that may leave the int64 range."""
    factor = 10**by
    if largest * factor > _INT64_LIMIT:
        return None
    return values * factor, largest * factor


def _round_down_scale(values: np.ndarray, digits: int) -> np.ndarray:
    """Drop `digits` decimal places, rounding half away from zero as Spark's HALF_UP does."""
    factor = 10**digits
    half = factor // 2
    magnitude = (np.abs(values) + half) // factor
    return np.where(values < 0, -magnitude, magnitude)


def _validity(left: pa.Array | pa.Scalar, right: pa.Array | pa.Scalar, length: int) -> tuple[pa.Buffer | None, int]:
    """The validity bitmap of an elementwise result over `left` and `right`, and its null count."""
    arrays = [v for v in (left, right) if isinstance(v, pa.Array) and v.null_count]
    if not arrays:
        return None, 0
    valid = np.ones(length, dtype=bool)
    for a in arrays:
        valid &= np.asarray(a.is_valid())
    mask = pa.array(valid)
    return mask.buffers()[1], length - int(valid.sum())


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
    lhs, rhs = _unscaled(left), _unscaled(right)
    if lhs is None or rhs is None:
        return None
    (a, a_max), (b, b_max) = lhs, rhs
    if op == "*":
        if a_max * b_max > _INT64_LIMIT:
            return None
        values, scale, largest = np.multiply(a, b), left.type.scale + right.type.scale, a_max * b_max
    else:
        scale = max(left.type.scale, right.type.scale)
        scaled_a = _rescale(a, a_max, scale - left.type.scale)
        scaled_b = _rescale(b, b_max, scale - right.type.scale)
        if scaled_a is None or scaled_b is None or scaled_a[1] + scaled_b[1] > _INT64_LIMIT:
            return None
        (a, a_max), (b, b_max) = scaled_a, scaled_b
        values = np.add(a, b) if op == "+" else np.subtract(a, b)
        largest = a_max + b_max
    values = np.broadcast_to(np.asarray(values, dtype=np.int64), (length,))
    if scale > out.scale:
        values = _round_down_scale(values, scale - out.scale)
    elif scale < out.scale:
        scaled = _rescale(values, largest, out.scale - scale)
        if scaled is None:
            return None
        values = scaled[0]
    if _largest_magnitude(values) >= 10**out.precision:
        return None
    validity, null_count = _validity(left, right, length)
    return _as_decimal128(np.ascontiguousarray(values, dtype=np.int64), validity, null_count, out)
