"""Row selection on a device: keep the rows a boolean column marks, or gather rows by index."""
from __future__ import annotations

from typing import Any

import array_api_compat

from quiver.executors.device.kernels.columns import DeviceBatch, DeviceColumn


def filter_batch(batch: DeviceBatch, mask: DeviceColumn, xp: Any) -> DeviceBatch:
    """The rows where `mask` is true; null counts as false, as in SQL's WHERE."""
    keep = mask.values if mask.valid is None else mask.values & mask.valid
    return take_batch(batch, xp.nonzero(keep)[0], xp)


def take_batch(batch: DeviceBatch, indices: Any, xp: Any, null_where: Any | None = None) -> DeviceBatch:
    """Rows `indices` of `batch`, in that order; where `null_where` is true the output row is all null
    (an outer join's unmatched side), whatever its index says (-1 is usual)."""
    columns = tuple(take_column(c, indices, xp, null_where) for c in batch.columns)
    return DeviceBatch(batch.names, columns, int(indices.shape[0]))


def take_column(col: DeviceColumn, indices: Any, xp: Any, null_where: Any | None = None) -> DeviceColumn:
    """Rows `indices` of one column; `null_where` as in `take_batch`."""
    if null_where is not None:
        indices = xp.where(null_where, xp.zeros_like(indices), indices)
    n = int(indices.shape[0])
    if col.length == 0:
        if n and null_where is None:
            raise IndexError(f"cannot take {n} rows from an empty column")
        # only all-null rows can come from an empty side
        device = array_api_compat.device(col.values)
        values = xp.zeros((n,), dtype=col.values.dtype, device=device)
        return DeviceColumn(values, xp.zeros((n,), dtype=xp.bool, device=device), col.arrow_type, col.dictionary)
    values = xp.take(col.values, indices)
    valid = None if col.valid is None else xp.take(col.valid, indices)
    if null_where is not None:
        values = xp.where(null_where, xp.zeros_like(values), values)
        valid = ~null_where if valid is None else valid & ~null_where
    return DeviceColumn(values, valid, col.arrow_type, col.dictionary)
