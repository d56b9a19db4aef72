"""Concatenating device batches: one array per column, string codes moved onto one shared dictionary.

Each batch brought to a device carries its own dictionary per string column (a Parquet row
group's, or one made at the edge), so codes of different batches mean different strings
until they are remapped onto the union of the dictionaries.
"""
from __future__ import annotations

from typing import Any

from quiver.executors.device.kernels.columns import (
    DeviceBatch,
    DeviceColumn,
    unify_dictionaries,
)


def concat_batches(batches: list[DeviceBatch], xp: Any) -> DeviceBatch:
    """All rows of `batches` (same names and types) as one device batch."""
    if not batches:
        raise ValueError("concat_batches needs at least one batch")
    if len(batches) == 1:
        return batches[0]
    first = batches[0]
    columns = tuple(concat_columns([b.columns[i] for b in batches], xp) for i in range(len(first.names)))
    return DeviceBatch(first.names, columns, sum(b.num_rows for b in batches))


def concat_columns(parts: list[DeviceColumn], xp: Any) -> DeviceColumn:
    """One column from several; string columns get one dictionary and remapped codes."""
    if parts[0].dictionary is not None:
        parts = unify_dictionaries(parts, xp)
    if any(p.valid is not None for p in parts):
        valid = xp.concat([p.valid if p.valid is not None else xp.ones(p.values.shape[0], dtype=xp.bool)
                           for p in parts])
    else:
        valid = None
    return DeviceColumn(xp.concat([p.values for p in parts]), valid, parts[0].arrow_type, parts[0].dictionary)


__all__ = ["concat_batches", "concat_columns"]
