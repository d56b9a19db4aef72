"""Sorting with Spark's per-key null placement, on Arrow tables.

Arrow's sort has one null placement for all keys; Spark has one per key. Each key gets
an auxiliary boolean "is null" key in front of it, sorted so nulls land where asked; a
float key with NaNs gets an "is NaN" key too, since Spark sorts NaN above every value.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from quiver.engine.core.expressions import SortOrder


def sort_keys_table(columns: list[pa.Array], orders: tuple[SortOrder, ...]) -> tuple[pa.Table, list[tuple[str, str]]]:
    """A table of (null flag, value) pairs per key and the Arrow sort keys that order it as Spark would."""
    arrays: list[pa.Array] = []
    names: list[str] = []
    keys: list[tuple[str, str]] = []
    for i, (col, order) in enumerate(zip(columns, orders)):
        if col.null_count:
            names.append(f"n{i}")
            arrays.append(pc.is_null(col))
            keys.append((f"n{i}", "descending" if order.effective_nulls_first else "ascending"))
        if pa.types.is_floating(col.type) and pc.any(pc.is_nan(col)).as_py():
            # Spark's NaN is greater than every double; Arrow puts it last in either direction
            names.append(f"nan{i}")
            arrays.append(pc.fill_null(pc.is_nan(col), False))
            keys.append((f"nan{i}", "ascending" if order.ascending else "descending"))
        names.append(f"v{i}")
        arrays.append(col)
        keys.append((f"v{i}", "ascending" if order.ascending else "descending"))
    return pa.Table.from_arrays(arrays, names=names), keys


def sort_indices(columns: list[pa.Array], orders: tuple[SortOrder, ...]) -> pa.Array:
    """Stable permutation that sorts rows by `columns` under `orders`."""
    table, keys = sort_keys_table(columns, orders)
    return pc.sort_indices(table, sort_keys=keys)


def top_k_indices(columns: list[pa.Array], orders: tuple[SortOrder, ...], k: int) -> pa.Array:
    """Indices of the first `k` rows in sort order; select_k avoids sorting the rest.

    Rows that tie on every key may come back in any order, as in Spark.
    """
    table, keys = sort_keys_table(columns, orders)
    if k >= table.num_rows:
        return pc.sort_indices(table, sort_keys=keys)
    picked = pc.select_k_unstable(table, k, sort_keys=keys)
    return picked.take(pc.sort_indices(table.take(picked), sort_keys=keys))


def range_partition_ids(columns: list[pa.Array], bounds: list[pa.Array], orders: tuple[SortOrder, ...]) -> np.ndarray:
    """Partition id per row: how many range bounds sort at or before it."""
    n = len(columns[0])
    nb = len(bounds[0]) if bounds else 0
    if nb == 0:
        return np.zeros(n, dtype=np.int64)
    merged = [pa.concat_arrays([c.cast(b.type) if c.type != b.type else c, b]) for c, b in zip(columns, bounds)]
    tag = pa.array(np.concatenate([np.ones(n, dtype=np.int8), np.zeros(nb, dtype=np.int8)]))
    table, keys = sort_keys_table(merged, orders)
    table = table.append_column("tag", tag)
    # A row equal to a bound goes to the lower partition: rows sort before equal bounds.
    order = pc.sort_indices(table, sort_keys=keys + [("tag", "descending")]).to_numpy()
    is_bound = order >= n
    bounds_before = np.cumsum(is_bound) - is_bound
    ids = np.empty(n, dtype=np.int64)
    ids[order[~is_bound]] = bounds_before[~is_bound]
    return ids


def choose_range_bounds(columns: list[pa.Array], orders: tuple[SortOrder, ...], partitions: int) -> list[pa.Array]:
    """`partitions - 1` evenly spaced bound rows from a sample of the sort keys."""
    n = len(columns[0]) if columns else 0
    if n == 0 or partitions <= 1:
        return [c.slice(0, 0) for c in columns]
    idx = sort_indices(columns, orders).to_numpy()
    picks = [idx[min(n - 1, (i * n) // partitions)] for i in range(1, partitions)]
    take = pa.array(picks, type=pa.int64())
    return [c.take(take) for c in columns]
