"""Window functions over one partition of rows, vectorised with numpy.

Rows are sorted once by (PARTITION BY, ORDER BY); partition and peer boundaries become
index arrays, and every function is index arithmetic over them: ranks from run starts,
lag/lead from shifted indices, framed aggregates from per-row frame bounds [lo, hi]
(prefix sums for sum/count/avg, running or sliding extrema for min/max).
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from quiver.engine.core.errors import QuiverError
from quiver.engine.core.expressions import (
    UNBOUNDED,
    WINDOW_AGGREGATES,
    AggregateFunction,
    Alias,
    Expr,
    SortOrder,
    WindowExpression,
    WindowFunction,
)
from quiver.executors.cpu.evaluate import evaluate_array
from quiver.executors.cpu.sort import sort_indices

_MAX_SLIDING_WIDTH = 4096


def compute_windows(table: pa.Table, window_exprs: tuple[Expr, ...], partition_by: tuple[Expr, ...],
                    order_by: tuple[SortOrder, ...]) -> pa.Table:
    """`table` sorted by its window keys, with one column appended per (aliased) window expression."""
    batch = _batch(table)
    part_keys = [evaluate_array(e, batch) for e in partition_by]
    order_keys = [evaluate_array(o.child, batch) for o in order_by]
    keys = part_keys + order_keys
    orders = tuple(SortOrder(e, True, True) for e in partition_by) + tuple(order_by)
    if keys:
        idx = sort_indices(keys, orders)
        table = table.take(idx)
        batch = _batch(table)
        part_keys = [k.take(idx) for k in part_keys]
        order_keys = [k.take(idx) for k in order_keys]
    frame = _Frames(table.num_rows, part_keys, order_keys)
    for w in window_exprs:
        assert isinstance(w, Alias) and isinstance(w.child, WindowExpression)
        values = _compute(w.child, batch, frame, order_keys)
        table = table.append_column(w.to_attribute().internal_name, values)
    return table


def _batch(table: pa.Table) -> pa.RecordBatch:
    table = table.combine_chunks()
    return pa.RecordBatch.from_arrays([c.combine_chunks() for c in table.columns], schema=table.schema)


def _changes(keys: list[pa.Array], n: int) -> np.ndarray:
    """True where a row starts a new run of equal keys (null equals null, NaN equals NaN here)."""
    new = np.zeros(n, dtype=bool)
    if n:
        new[0] = True
    for k in keys:
        if n < 2:
            break
        a, b = k.slice(1), k.slice(0, n - 1)
        differ = pc.fill_null(pc.not_equal(a, b), False)
        if pa.types.is_floating(k.type):
            # Spark groups every NaN together: NaN is a peer of NaN, not a new run.
            differ = pc.and_(differ, pc.invert(pc.fill_null(pc.and_(pc.is_nan(a), pc.is_nan(b)), False)))
        null_mismatch = pc.xor(pc.is_null(a), pc.is_null(b))
        new[1:] |= pc.or_(differ, null_mismatch).to_numpy(zero_copy_only=False)
    return new


class _Frames:
    """Partition and peer boundaries of sorted rows, as per-row index arrays."""

    def __init__(self, n: int, part_keys: list[pa.Array], order_keys: list[pa.Array]):
        self.n = n
        self.pos = np.arange(n, dtype=np.int64)
        new_part = _changes(part_keys, n)
        part_id = np.cumsum(new_part) - 1
        starts = np.flatnonzero(new_part)
        ends = np.append(starts[1:], n)
        self.start = starts[part_id]
        self.end = ends[part_id]
        self.part_id = part_id
        new_peer = new_part | _changes(order_keys, n)
        peer_id = np.cumsum(new_peer) - 1
        peer_starts = np.flatnonzero(new_peer)
        peer_ends = np.append(peer_starts[1:], n)
        self.peer_start = peer_starts[peer_id]
        self.peer_end = peer_ends[peer_id]
        self.peer_id = peer_id

    def bounds(self, frame: tuple[str, int, int], order_keys: list[pa.Array],
               ascending: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Inclusive [lo, hi] row bounds of each row's frame (lo > hi means empty)."""
        kind, a, b = frame
        if kind == "rows":
            lo = self.start if a <= UNBOUNDED else np.maximum(self.start, self.pos + a)
            hi = self.end - 1 if b >= -UNBOUNDED - 1 else np.minimum(self.end - 1, self.pos + b)
            return lo, hi
        if a <= UNBOUNDED:
            lo = self.start
        elif a == 0:
            lo = self.peer_start
        else:
            lo = self._range_offset(order_keys, a, ascending, lower=True)
        if b >= -UNBOUNDED - 1:
            hi = self.end - 1
        elif b == 0:
            hi = self.peer_end - 1
        else:
            hi = self._range_offset(order_keys, b, ascending, lower=False)
        return lo, hi

    def _range_offset(self, order_keys: list[pa.Array], offset: int, ascending: bool, lower: bool) -> np.ndarray:
        """Each row's first (lower) or last frame row for a RANGE bound `offset` away from its key.

        PRECEDING means earlier in the window's order: smaller keys when ascending, larger when
        descending, so a descending key is negated and treated as ascending. A row whose key is
        null has the other null rows as its frame, and null rows are in no other row's frame.
        """
        if len(order_keys) != 1:
            raise QuiverError("a RANGE frame with an offset needs exactly one numeric ORDER BY column")
        key = order_keys[0]
        values = key.to_numpy(zero_copy_only=False).astype(np.float64)
        if not ascending:
            values = -values
        null = key.is_null().to_numpy(zero_copy_only=False)
        out = np.where(null, self.peer_start if lower else self.peer_end - 1, 0)
        for s in np.unique(self.start):
            e = int(self.end[s])
            rows = np.arange(s, e)[~null[s:e]]
            if not len(rows):
                continue
            first, last = int(rows[0]), int(rows[-1]) + 1
            seg = values[first:last]
            if lower:
                out[first:last] = first + np.searchsorted(seg, seg + offset, side="left")
            else:
                out[first:last] = first + np.searchsorted(seg, seg + offset, side="right") - 1
        return out


def _compute(w: WindowExpression, batch: pa.RecordBatch, f: _Frames, order_keys: list[pa.Array]) -> pa.Array:
    fn = w.function
    out_type = w.dtype.to_arrow()
    if isinstance(fn, WindowFunction) and fn.name == "nth_value":
        lo, hi = f.bounds(w.effective_frame, order_keys, w.order_by[0].ascending if w.order_by else True)
        return _nth_value(fn, batch, lo, hi, out_type)
    if isinstance(fn, WindowFunction):
        return _window_function(fn, batch, f, out_type)
    if isinstance(fn, AggregateFunction):
        lo, hi = f.bounds(w.effective_frame, order_keys, w.order_by[0].ascending if w.order_by else True)
        return _framed_aggregate(fn, batch, lo, hi, f, out_type)
    raise QuiverError(f"cannot evaluate {fn.sql()} over a window")


def _window_function(fn: WindowFunction, batch: pa.RecordBatch, f: _Frames, out_type: pa.DataType) -> pa.Array:
    name = fn.name
    size = f.end - f.start
    if name == "row_number":
        return pa.array(f.pos - f.start + 1, out_type)
    if name == "rank":
        return pa.array(f.peer_start - f.start + 1, out_type)
    if name == "dense_rank":
        return pa.array(f.peer_id - f.peer_id[f.start] + 1, out_type)
    if name == "percent_rank":
        rank = f.peer_start - f.start
        with np.errstate(divide="ignore", invalid="ignore"):
            pr = np.where(size > 1, rank / np.maximum(size - 1, 1), 0.0)
        return pa.array(pr, out_type)
    if name == "cume_dist":
        return pa.array((f.peer_end - f.start) / size, out_type)
    if name == "ntile":
        buckets = int(fn.args[0].value)
        p = f.pos - f.start
        q, r = size // buckets, size % buckets
        big = r * (q + 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            tile = np.where(p < big, p // np.maximum(q + 1, 1), r + (p - big) // np.maximum(q, 1)) + 1
        tile = np.where(q == 0, p + 1, tile)
        return pa.array(tile, out_type)
    if name in ("lag", "lead"):
        values = evaluate_array(fn.args[0], batch)
        offset = int(fn.args[1].value)
        default = evaluate_array(fn.args[2], batch)
        src = f.pos - offset if name == "lag" else f.pos + offset
        inside = (src >= f.start) & (src < f.end)
        taken = values.take(pa.array(np.where(inside, src, 0)))
        out = pc.if_else(pa.array(inside), taken, default.cast(values.type))
        return out.cast(out_type)
    raise QuiverError(f"window function {name} is not supported")


def _nth_value(fn: WindowFunction, batch: pa.RecordBatch, lo: np.ndarray, hi: np.ndarray,
               out_type: pa.DataType) -> pa.Array:
    """The value of the n-th row of each frame (the n-th non-null one with IGNORE NULLS); null past its end."""
    values = evaluate_array(fn.args[0], batch)
    n = int(fn.args[1].value)
    empty = lo > hi
    if fn.ignore_nulls:
        pick = _nth_valid(values.is_valid().to_numpy(zero_copy_only=False), lo, n)
    else:
        pick = lo + n - 1
    none = empty | (pick > hi)
    pick = np.clip(pick, 0, max(len(values) - 1, 0))
    taken = values.take(pa.array(pick))
    return pc.if_else(pa.array(none), pa.scalar(None, values.type), taken).cast(out_type)


def _nth_valid(valid: np.ndarray, lo: np.ndarray, n: int) -> np.ndarray:
    """Per row, the index of the n-th valid value at or after `lo` (len(valid) or more when there is none)."""
    seen = np.cumsum(valid)
    before = np.where(lo > 0, seen[np.maximum(lo - 1, 0)], 0)
    return np.searchsorted(seen, before + n, side="left")


def _framed_aggregate(fn: AggregateFunction, batch: pa.RecordBatch, lo: np.ndarray, hi: np.ndarray,
                      f: _Frames, out_type: pa.DataType) -> pa.Array:
    name = fn.name
    empty = lo > hi
    count_rows = np.where(empty, 0, hi - lo + 1)
    if name == "count" and not fn.args:
        return pa.array(count_rows, out_type)
    values = evaluate_array(fn.args[0], batch)
    valid = values.is_valid().to_numpy(zero_copy_only=False)
    valid_prefix = np.concatenate([[0], np.cumsum(valid)])
    lo_c, hi_c = np.where(empty, 0, lo), np.where(empty, 0, hi)
    n_valid = np.where(empty, 0, valid_prefix[hi_c + 1] - valid_prefix[lo_c])
    if name == "count":
        return pa.array(n_valid, out_type)
    if name in ("sum", "avg"):
        numeric = values.cast(pa.float64() if not pa.types.is_integer(values.type) else pa.int64())
        raw = numeric.fill_null(0).to_numpy(zero_copy_only=False)
        total = _frame_sums(raw, lo_c, hi_c, empty, f)
        if name == "sum":
            result = pa.array(total, mask=n_valid == 0)
            return result.cast(out_type)
        with np.errstate(divide="ignore", invalid="ignore"):
            avg = total / np.maximum(n_valid, 1)
        return pa.array(avg, mask=n_valid == 0).cast(out_type)
    if name in ("min", "max"):
        return _extreme(values, lo_c, hi_c, empty | (n_valid == 0), f, name, out_type)
    if name in ("first", "last", "any_value"):
        pick = lo_c if name != "last" else hi_c
        none = empty
        if fn.ignore_nulls:
            # The first (last) non-null value at or after lo (at or before hi), if inside the frame.
            if name != "last":
                pick = _nth_valid(valid, lo_c, 1)
                none = empty | (pick > hi_c)
            else:
                pick = np.maximum.accumulate(np.where(valid, np.arange(len(valid)), -1))[hi_c]
                none = empty | (pick < lo_c)
            pick = np.clip(pick, 0, max(len(valid) - 1, 0))
        taken = values.take(pa.array(pick))
        return pc.if_else(pa.array(none), pa.scalar(None, values.type), taken).cast(out_type)
    raise QuiverError(f"aggregate {name} is not supported over a window frame; "
                      f"supported: {', '.join(WINDOW_AGGREGATES)}")


def _frame_sums(raw: np.ndarray, lo: np.ndarray, hi: np.ndarray, empty: np.ndarray, f: _Frames) -> np.ndarray:
    """Sum of raw[lo..hi] for each row's frame, from prefix sums.

    Infinities and NaNs are counted apart rather than summed: in a prefix difference they
    would spread to every later frame (inf - inf), not only to the frames that hold them.
    """
    if raw.dtype.kind != "f":
        return _prefix_difference(raw, lo, hi, empty, f)
    total = _prefix_difference(np.where(np.isfinite(raw), raw, 0.0), lo, hi, empty, f)
    nans, pos, neg = (_prefix_difference(m.astype(np.int64), lo, hi, empty, f) > 0
                      for m in (np.isnan(raw), raw == np.inf, raw == -np.inf))
    total = np.where(pos, np.inf, np.where(neg, -np.inf, total))
    return np.where(nans | (pos & neg), np.nan, total)


def _prefix_difference(raw: np.ndarray, lo: np.ndarray, hi: np.ndarray, empty: np.ndarray, f: _Frames) -> np.ndarray:
    running = _segment_cumsum(raw, f)
    before = np.where(lo > f.start, running[np.maximum(lo - 1, 0)], 0)
    return np.where(empty, 0, running[hi] - before)


def _segment_cumsum(raw: np.ndarray, f: _Frames) -> np.ndarray:
    """Cumulative sums that restart at each partition, so a running sum never subtracts across partitions."""
    csum = np.cumsum(raw)
    return csum - np.concatenate([[0], csum])[f.start]


def _extreme(values: pa.Array, lo: np.ndarray, hi: np.ndarray, null: np.ndarray, f: _Frames, name: str,
             out_type: pa.DataType) -> pa.Array:
    """Min or max over each row's frame: running, whole-partition or sliding."""
    n = len(values)
    ordinal = _ordinal(values, name)
    best = np.zeros(n, dtype=np.float64)
    whole = (lo == f.start) & (hi == f.end - 1)
    running = (lo == f.start) & ~whole
    if whole.any() or running.any():
        best = _running_extreme(ordinal, f, name)[np.clip(hi, 0, n - 1)]
    other = ~(whole | running)
    if other.any():
        width = int((hi - lo)[other].max()) + 1
        if width > _MAX_SLIDING_WIDTH:
            raise QuiverError(f"sliding {name} over frames wider than {_MAX_SLIDING_WIDTH} rows is not supported")
        cur = np.full(n, np.inf if name == "min" else -np.inf)
        for k in range(width):
            idx = lo + k
            ok = other & (idx <= hi)
            cand = ordinal[np.clip(idx, 0, n - 1)]
            cur = np.where(ok, np.fmin(cur, cand) if name == "min" else np.fmax(cur, cand), cur)
        best = np.where(other, cur, best)
    null = null | ~np.isfinite(best)
    return _from_ordinal(values, best, null, out_type)


def _running_extreme(ordinal: np.ndarray, f: _Frames, name: str) -> np.ndarray:
    """The running min or max of dense ranks (±inf for nulls, `_ordinal`) from each row's partition start.

    One running max over the whole column, each partition's ranks lifted above every earlier partition's (rows
    of a partition are contiguous), so no partition's extreme carries into the next; a min is the max of the
    ranks turned upside down. Exact in int64 for any column that fits in memory.
    """
    n = len(ordinal)
    top = n + 1
    finite = np.isfinite(ordinal)
    ranks = np.where(finite, ordinal, 0).astype(np.int64)
    upside = ranks if name == "max" else np.where(finite, top - ranks, 0)
    lift = f.part_id.astype(np.int64) * (top + 1)
    running = np.maximum.accumulate(upside + lift) - lift
    null = np.inf if name == "min" else -np.inf
    return np.where(running == 0, null, running if name == "max" else top - running).astype(np.float64)


def _ordinal(values: pa.Array, name: str) -> np.ndarray:
    """Dense ranks of the values (as floats; nulls become ±inf so they never win)."""
    filler = np.inf if name == "min" else -np.inf
    ranks = pc.rank(values, sort_keys="ascending", tiebreaker="dense").to_numpy(
        zero_copy_only=False).astype(np.float64)
    return np.where(values.is_null().to_numpy(zero_copy_only=False), filler, ranks)


def _from_ordinal(values: pa.Array, best: np.ndarray, null: np.ndarray, out_type: pa.DataType) -> pa.Array:
    """Map winning dense ranks back to the values they stand for."""
    ranks = pc.rank(values, sort_keys="ascending", tiebreaker="dense").to_numpy(
        zero_copy_only=False)
    order = np.argsort(ranks, kind="stable")
    uniq, first_idx = np.unique(ranks[order], return_index=True)
    lookup = order[first_idx]
    safe = np.where(null, uniq[0] if len(uniq) else 1, best).astype(np.int64)
    pos = np.searchsorted(uniq, safe)
    pos = np.clip(pos, 0, max(len(lookup) - 1, 0))
    taken = values.take(pa.array(lookup[pos] if len(lookup) else np.zeros(len(values), np.int64)))
    return pc.if_else(pa.array(null), pa.scalar(None, values.type), taken).cast(out_type)
