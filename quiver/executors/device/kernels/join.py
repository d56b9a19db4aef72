"""Equi-join matching on a device: which left row pairs with which right row, for every join type.

Both sides' key columns are coded together (one dense int64 per row, equal exactly where all keys
are equal under Spark's join semantics: -0.0 = 0.0, NaN = NaN, strings by value even across
dictionaries), the right codes are sorted once, and each left row finds its run of matches with
two binary searches; pairs are expanded with repeat and a prefix sum. Null keys never match.
"""
from __future__ import annotations

from typing import Any

import array_api_compat

from quiver.executors.device.kernels.columns import DeviceColumn, unify_dictionaries
from quiver.executors.device.kernels.groupby import key_codes

JOIN_TYPES = ("inner", "left", "right", "full", "left_semi", "left_anti")


def join_indices(left_keys: list[DeviceColumn], right_keys: list[DeviceColumn], how: str,
                 xp: Any) -> tuple[Any, Any | None]:
    """(left_idx, right_idx) int64 row pairs of the join; -1 on an outer join's unmatched side.

    Inner and left joins list pairs by left row, then right row; right joins by right row. Semi and
    anti joins return the left rows in their order, and None for the right side.
    """
    if how not in JOIN_TYPES:
        raise ValueError(f"unknown join type {how!r}; valid: {', '.join(JOIN_TYPES)}")
    if not left_keys or len(left_keys) != len(right_keys):
        raise ValueError(f"an equi-join needs the same number (at least one) of key columns on both sides, "
                         f"got {len(left_keys)} and {len(right_keys)}")
    if how == "right":
        right_idx, left_idx = join_indices(right_keys, left_keys, "left", xp)
        return left_idx, right_idx
    left_codes, right_codes = _joint_codes(left_keys, right_keys, xp)
    matches = _Matches(left_codes, right_codes, xp)
    if how == "left_semi":
        return xp.nonzero(matches.counts > 0)[0], None
    if how == "left_anti":
        return xp.nonzero(matches.counts == 0)[0], None
    left_idx, right_idx = matches.pairs(keep_unmatched=how != "inner")
    if how == "full":
        unmatched = xp.nonzero(~_found_in(right_codes, left_codes, xp))[0]
        left_idx = xp.concat([left_idx, xp.full_like(unmatched, -1)])
        right_idx = xp.concat([right_idx, unmatched])
    return left_idx, right_idx


def _joint_codes(left_keys: list[DeviceColumn], right_keys: list[DeviceColumn], xp: Any) -> tuple[Any, Any]:
    """Key codes of both sides from one coding; a row with a null key gets -1 (left) or -2 (right)."""
    n_left = left_keys[0].length
    stacked = []
    null_left = null_right = None
    for left, right in zip(left_keys, right_keys):
        left, right = _comparable(left, right, xp)
        valid = None
        if left.valid is not None or right.valid is not None:
            valid = xp.concat([_valid_array(left, xp), _valid_array(right, xp)])
            null_left = _either(null_left, ~valid[:n_left])
            null_right = _either(null_right, ~valid[n_left:])
        stacked.append(DeviceColumn(xp.concat([left.values, right.values]), valid, left.arrow_type, left.dictionary))
    codes, _ = key_codes(stacked, xp)
    left_codes, right_codes = codes[:n_left], codes[n_left:]
    if null_left is not None:
        left_codes = xp.where(null_left, xp.full_like(left_codes, -1), left_codes)
        right_codes = xp.where(null_right, xp.full_like(right_codes, -2), right_codes)
    return left_codes, right_codes


def _comparable(left: DeviceColumn, right: DeviceColumn, xp: Any) -> tuple[DeviceColumn, DeviceColumn]:
    """Two key columns in one representation: strings in one dictionary, numbers in one dtype."""
    if (left.dictionary is None) != (right.dictionary is None):
        raise TypeError(f"cannot join a {left.arrow_type} key with a {right.arrow_type} key")
    if left.dictionary is not None:
        left, right = unify_dictionaries([left, right], xp)
        return left, right
    lt, rt = left.arrow_type, right.arrow_type
    if getattr(lt, "scale", None) != getattr(rt, "scale", None):
        raise TypeError(f"cannot join a {lt} key with a {rt} key; cast one side first")
    a, b = left.values, right.values
    if a.dtype != b.dtype:
        floating = xp.isdtype(a.dtype, "real floating") or xp.isdtype(b.dtype, "real floating")
        wide = xp.float64 if floating else xp.int64
        left = DeviceColumn(xp.astype(a, wide), left.valid, lt)
        right = DeviceColumn(xp.astype(b, wide), right.valid, rt)
    return left, right


def _valid_array(col: DeviceColumn, xp: Any) -> Any:
    if col.valid is not None:
        return col.valid
    return xp.ones((col.length,), dtype=xp.bool, device=array_api_compat.device(col.values))


def _either(a: Any | None, b: Any) -> Any:
    return b if a is None else a | b


class _Matches:
    """Each left row's run [lo, hi) of equal codes among the right rows sorted by code (stable)."""

    def __init__(self, left_codes: Any, right_codes: Any, xp: Any):
        self.xp = xp
        # null-keyed rows stay in (code -2), where no left code (-1 for a null key) can find them
        self.sorted_rows = xp.argsort(right_codes, stable=True)
        self.sorted_codes = xp.take(right_codes, self.sorted_rows)
        self.lo = xp.searchsorted(self.sorted_codes, left_codes, side="left")
        self.counts = xp.searchsorted(self.sorted_codes, left_codes, side="right") - self.lo

    def pairs(self, keep_unmatched: bool) -> tuple[Any, Any]:
        """Every (left row, right row) match; with `keep_unmatched`, (row, -1) for a left row without one."""
        xp = self.xp
        counts = self.counts
        n_left = int(counts.shape[0])
        device = array_api_compat.device(counts)
        per_row = xp.where(counts > 0, counts, xp.ones_like(counts)) if keep_unmatched else counts
        left_idx = xp.repeat(xp.arange(n_left, dtype=xp.int64, device=device), per_row)
        if int(self.sorted_rows.shape[0]) == 0:
            return left_idx, xp.full_like(left_idx, -1)
        starts = xp.cumulative_sum(per_row, include_initial=True)[:-1]
        within = xp.arange(int(left_idx.shape[0]), dtype=xp.int64, device=device) - xp.take(starts, left_idx)
        matched = xp.take(counts, left_idx) > 0
        position = xp.where(matched, xp.take(self.lo, left_idx) + within, xp.zeros_like(within))
        right_idx = xp.where(matched, xp.take(self.sorted_rows, position), xp.full_like(position, -1))
        return left_idx, right_idx


def _found_in(codes: Any, other_codes: Any, xp: Any) -> Any:
    """Whether each code occurs among `other_codes` (the sides' null codes, -1 and -2, never meet)."""
    present = xp.sort(other_codes)
    return xp.searchsorted(present, codes, side="right") - xp.searchsorted(present, codes, side="left") > 0
