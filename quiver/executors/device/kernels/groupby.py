"""Sort-based group-by on a device: dense group ids from key columns, then per-group reductions.

Keys group as SQL's GROUP BY does: null is a group of its own, and floats group as Spark
normalises them (-0.0 with 0.0, every NaN together). Each reduction sorts rows by group once and
reads a group's result off its segment: differences of prefix sums for integer sums and counts
(exact, int64 wrap-around included), segment ends for min and max, and a segmented scan for float
sums, so that one group's infinity or cancellation never leaks into another group's sum. A decimal
sum is exact in int64 only while the largest value times the largest group's size fits; beyond
that it raises `DeviceFallback` and the task reruns on the CPU.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import array_api_compat
import pyarrow as pa

from quiver.executors.base import DeviceFallback
from quiver.executors.device.kernels.columns import (
    DECIMAL_INT64_PRECISION,
    INT64_MAX,
    DeviceColumn,
    dictionary_ranks,
    gather_from_host,
    largest_magnitude,
)
from quiver.executors.device.kernels.filter import take_column

REDUCTIONS = ("sum", "count", "count_all", "min", "max", "any", "all")
# Combined key codes are re-densified before their product could leave int64.
_CODE_LIMIT = 2**62


def key_codes(columns: list[DeviceColumn], xp: Any) -> tuple[Any, int]:
    """One int64 code per row, in [0, count), equal exactly where the rows' keys are equal under GROUP BY.

    Codes follow the keys' order (null first, NaN after every number), column by column.
    """
    combined, count = None, 1
    for col in columns:
        codes, cardinality = _column_codes(col, xp)
        if combined is None:
            combined, count = codes, cardinality
            continue
        if count * cardinality > _CODE_LIMIT:
            combined, count = _dense(combined, xp)
        combined, count = combined * cardinality + codes, count * cardinality
    return _dense(combined, xp)


def _column_codes(col: DeviceColumn, xp: Any) -> tuple[Any, int]:
    """Codes of one key column: 0 for null, 1 + the value's rank, and the top code for NaN."""
    v = col.values
    nan = None
    if xp.isdtype(v.dtype, "real floating"):
        nan = xp.isnan(v)  # unique_inverse keeps NaNs apart but, by value equality, -0.0 with 0.0
        v = xp.where(nan, xp.zeros_like(v), v)
    if col.valid is not None:
        v = xp.where(col.valid, v, xp.zeros_like(v))
    distinct, inverse = xp.unique_inverse(v)
    top = int(distinct.shape[0]) + 1
    codes = xp.astype(inverse, xp.int64) + 1
    if nan is not None:
        codes = xp.where(nan, top, codes)
    if col.valid is not None:
        codes = xp.where(col.valid, codes, xp.zeros_like(codes))
    return codes, top + 1


def _dense(codes: Any, xp: Any) -> tuple[Any, int]:
    distinct, inverse = xp.unique_inverse(codes)
    return xp.astype(inverse, xp.int64), int(distinct.shape[0])


def group_by(keys: list[DeviceColumn], xp: Any, num_rows: int | None = None) -> tuple[list[DeviceColumn], Any, int]:
    """Group rows by `keys`: one row per group of each key column, each row's group id, and the group count.

    Without keys every row is in one global group (which exists even for no rows, as in SQL's
    global aggregate); `num_rows` then says how many rows there are.
    """
    if not keys:
        if num_rows is None:
            raise ValueError("group_by without key columns needs num_rows, the number of rows to put in the global "
                             "group")
        return [], xp.zeros((num_rows,), dtype=xp.int64), 1
    group_ids, n_groups = key_codes(keys, xp)
    segments = _segments(group_ids, n_groups, xp)
    first = xp.take(segments.order, segments.starts)
    return [_canonical_floats(take_column(k, first, xp), xp) for k in keys], group_ids, n_groups


def _canonical_floats(col: DeviceColumn, xp: Any) -> DeviceColumn:
    """-0.0 as 0.0 and one NaN, as Spark shows a normalised grouping key."""
    v = col.values
    if not xp.isdtype(v.dtype, "real floating"):
        return col
    v = xp.where(v == 0, xp.zeros_like(v), v)
    v = xp.where(xp.isnan(v), xp.full_like(v, float("nan")), v)
    return DeviceColumn(v, col.valid, col.arrow_type, col.dictionary)


@dataclass(frozen=True)
class _Segments:
    """Rows ordered by group (stable), and each group's [start, end) in that order."""

    order: Any
    sorted_ids: Any
    starts: Any
    ends: Any


def _segments(group_ids: Any, n_groups: int, xp: Any) -> _Segments:
    order = xp.argsort(group_ids, stable=True)
    sorted_ids = xp.take(group_ids, order)
    groups = xp.arange(n_groups, dtype=xp.int64, device=array_api_compat.device(group_ids))
    return _Segments(order, sorted_ids, xp.searchsorted(sorted_ids, groups, side="left"),
                     xp.searchsorted(sorted_ids, groups, side="right"))


def _segment_totals(x_sorted: Any, seg: _Segments, xp: Any) -> Any:
    """Per-group sums of int64 values in group order, from one prefix sum (wraps exactly as int64 adds)."""
    prefix = xp.cumulative_sum(x_sorted, include_initial=True)
    return xp.take(prefix, seg.ends) - xp.take(prefix, seg.starts)


def _segmented_scan(x: Any, sorted_ids: Any, xp: Any) -> Any:
    """Inclusive running sum restarting at each group (Hillis-Steele doubling, log2(n) passes)."""
    n = int(x.shape[0])
    step = 1
    while step < n:
        same = sorted_ids[step:] == sorted_ids[:-step]
        x = xp.concat([x[:step], xp.where(same, x[step:] + x[:-step], x[step:])])
        step *= 2
    return x


def segment_reduce(values: DeviceColumn, group_ids: Any, n_groups: int, fn: str, xp: Any) -> DeviceColumn:
    """Reduce `values` per group with `fn` (one of REDUCTIONS), skipping nulls as Spark does.

    sum, min, max, any and all of a group without a non-null value are null; count is then 0.
    Sums of integers are int64, of floats float64, of decimals the unscaled int64 (typed as Spark's
    sum result, null beyond its precision; DeviceFallback when the sum might leave int64); min and
    max rank NaN above every number and strings by their text.
    """
    if fn not in REDUCTIONS:
        raise ValueError(f"unknown reduction {fn!r}; valid: {', '.join(REDUCTIONS)}")
    group_ids = xp.astype(group_ids, xp.int64, copy=False)
    seg = _segments(group_ids, n_groups, xp)
    sizes = seg.ends - seg.starts
    if fn == "count_all":
        return DeviceColumn(sizes, None, pa.int64())
    valid_sorted = None if values.valid is None else xp.take(values.valid, seg.order)
    counts = sizes if valid_sorted is None else _segment_totals(xp.astype(valid_sorted, xp.int64), seg, xp)
    if fn == "count":
        return DeviceColumn(counts, None, pa.int64())
    present = counts > 0
    if fn in ("any", "all"):
        return _any_all(values, valid_sorted, seg, present, fn, xp)
    if fn == "sum":
        return _sum(values, valid_sorted, seg, counts, present, xp)
    return _min_max(values, group_ids, seg, counts, present, fn, xp)


def _any_all(values: DeviceColumn, valid_sorted: Any, seg: _Segments, present: Any, fn: str, xp: Any) -> DeviceColumn:
    if values.values.dtype != xp.bool:
        raise TypeError(f"{fn} needs a boolean column, got {values.arrow_type}")
    v = xp.take(values.values, seg.order)
    wanted = v if fn == "any" else ~v
    if valid_sorted is not None:
        wanted = wanted & valid_sorted
    hits = _segment_totals(xp.astype(wanted, xp.int64), seg, xp)
    return DeviceColumn(hits > 0 if fn == "any" else hits == 0, present, pa.bool_())


def _sum(values: DeviceColumn, valid_sorted: Any, seg: _Segments, counts: Any, present: Any, xp: Any) -> DeviceColumn:
    v = xp.take(values.values, seg.order)
    t = values.arrow_type
    if v.dtype == xp.bool or values.dictionary is not None:
        raise TypeError(f"sum needs a numeric column, got {t}")
    if xp.isdtype(v.dtype, "real floating"):
        x = xp.astype(v, xp.float64)
        if valid_sorted is not None:
            x = xp.where(valid_sorted, x, xp.zeros_like(x))
        if int(x.shape[0]) == 0:
            return DeviceColumn(xp.zeros(present.shape, dtype=xp.float64, device=array_api_compat.device(present)),
                                present, pa.float64())
        running = _segmented_scan(x, seg.sorted_ids, xp)
        last = xp.where(present, seg.ends - 1, xp.zeros_like(seg.ends))
        sums = xp.take(running, last)
        return DeviceColumn(xp.where(present, sums, xp.zeros_like(sums)), present, pa.float64())
    x = xp.astype(v, xp.int64)
    if valid_sorted is not None:
        x = xp.where(valid_sorted, x, xp.zeros_like(x))
    if not pa.types.is_decimal(t):
        return DeviceColumn(_segment_totals(x, seg, xp), present, pa.int64())
    return _decimal_sum(x, t, seg, counts, present, xp)


def _decimal_sum(x: Any, t: pa.Decimal128Type, seg: _Segments, counts: Any, present: Any, xp: Any) -> DeviceColumn:
    """Per-group sums of unscaled decimals (nulls already 0), typed decimal(p + 10, s) as Spark's sum.

    A prefix-sum difference is exact modulo 2**64, so it is the exact sum whenever that fits int64,
    which max |v| times the largest group's count bounds; a sum beyond the result's precision
    (possible only when that is 18 digits or fewer) is null, as Spark's non-ANSI sum.
    """
    out = pa.decimal128(min(38, t.precision + 10), t.scale)
    if int(x.shape[0]):
        largest, rows = largest_magnitude(x, None, xp), int(xp.max(counts))
        if largest * rows > INT64_MAX:
            raise DeviceFallback(f"a sum of up to {rows} {t} values reaching {largest} unscaled may leave the "
                                 "64 bits a device sums decimals in")
    totals = _segment_totals(x, seg, xp)
    if out.precision <= DECIMAL_INT64_PRECISION:
        limit = 10**out.precision
        present = present & (totals < limit) & (totals > -limit)
    return DeviceColumn(xp.where(present, totals, xp.zeros_like(totals)), present, out)


def _min_max(values: DeviceColumn, group_ids: Any, seg: _Segments, counts: Any, present: Any, fn: str,
             xp: Any) -> DeviceColumn:
    """Sort rows by (group, null < value < NaN, value); a group's max is its last row, its min the
    first row after its nulls."""
    v = values.values
    if values.dictionary is not None:
        v = gather_from_host(dictionary_ranks(values.dictionary), v, xp)
    elif v.dtype == xp.bool:
        v = xp.astype(v, xp.int8)
    flag = xp.zeros(v.shape, dtype=xp.int64, device=array_api_compat.device(v))
    if xp.isdtype(v.dtype, "real floating"):
        nan = xp.isnan(v)
        v = xp.where(nan, xp.zeros_like(v), v)
        flag = xp.astype(nan, xp.int64)
    if values.valid is not None:
        flag = xp.where(values.valid, flag + 1, xp.zeros_like(flag))
    else:
        flag = flag + 1
    by_value = xp.argsort(v, stable=True)
    by_group = xp.argsort(xp.take(group_ids * 3 + flag, by_value), stable=True)
    order = xp.take(by_value, by_group)
    if int(order.shape[0]) == 0:
        return DeviceColumn(xp.zeros(present.shape, dtype=values.values.dtype, device=array_api_compat.device(present)),
                            present, values.arrow_type, values.dictionary)
    nulls = (seg.ends - seg.starts) - counts
    position = seg.ends - 1 if fn == "max" else seg.starts + nulls
    rows = xp.take(order, xp.where(present, position, xp.zeros_like(position)))
    result = xp.take(values.values, rows)
    return DeviceColumn(xp.where(present, result, xp.zeros_like(result)), present, values.arrow_type, values.dictionary)
