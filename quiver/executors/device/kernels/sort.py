"""Sorting on a device in Spark's order, matching the CPU executor's `quiver/executors/cpu/sort.py` row for row.

Each key becomes one int64 order code (its value's dense rank, turned round for a descending key,
with nulls placed first or last and NaN above every number), and the keys are applied by successive
stable argsorts from the last to the first, so ties keep their input order. Strings rank by their
text: the host sorts the (small) dictionary and the device gathers each code's rank.
"""
from __future__ import annotations

from typing import Any

from quiver.executors.device.kernels.columns import (
    DeviceColumn,
    dictionary_ranks,
    gather_from_host,
)


def order_codes(key: DeviceColumn, ascending: bool, nulls_first: bool, xp: Any) -> Any:
    """int64 codes whose ascending order is `key`'s order under (ascending, nulls_first)."""
    v = key.values
    nan = None
    if key.dictionary is not None:
        rank = gather_from_host(dictionary_ranks(key.dictionary), v, xp)
        distinct = len(key.dictionary)
    else:
        if xp.isdtype(v.dtype, "real floating"):
            nan = xp.isnan(v)
            v = xp.where(nan, xp.zeros_like(v), v)  # unique_inverse ties -0.0 with 0.0, as Arrow's sort does
        if key.valid is not None:
            v = xp.where(key.valid, v, xp.zeros_like(v))
        values, inverse = xp.unique_inverse(v)
        rank, distinct = xp.astype(inverse, xp.int64), int(values.shape[0])
    # values take 1..distinct, NaN the code after (ascending) or before (descending) them
    code = rank + 1 if ascending else distinct - rank
    if nan is not None:
        code = xp.where(nan, xp.full_like(code, distinct + 1 if ascending else 0), code)
    if key.valid is not None:
        code = xp.where(key.valid, code, xp.full_like(code, -1 if nulls_first else distinct + 2))
    return code


def sort_indices(keys: list[DeviceColumn], ascending: list[bool], nulls_first: list[bool], xp: Any) -> Any:
    """The stable permutation (int64) that sorts rows by `keys`, each with its direction and null placement."""
    if not keys:
        raise ValueError("sort_indices needs at least one key column")
    if not len(keys) == len(ascending) == len(nulls_first):
        raise ValueError(f"{len(keys)} sort keys need as many directions and null placements, "
                         f"got {len(ascending)} and {len(nulls_first)}")
    perm = None
    for key, asc, first in reversed(list(zip(keys, ascending, nulls_first))):
        code = order_codes(key, asc, first, xp)
        if perm is None:
            perm = xp.argsort(code, stable=True)
        else:
            perm = xp.take(perm, xp.argsort(xp.take(code, perm), stable=True))
    return xp.astype(perm, xp.int64, copy=False)


def top_k_indices(keys: list[DeviceColumn], ascending: list[bool], nulls_first: list[bool], k: int, xp: Any) -> Any:
    """The first `k` rows in sort order; ties keep input order (the array API has no partial sort)."""
    order = sort_indices(keys, ascending, nulls_first, xp)
    return order[:max(0, min(k, int(order.shape[0])))]
