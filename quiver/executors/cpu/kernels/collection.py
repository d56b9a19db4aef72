"""CPU kernels for Spark's array, map and struct functions, vectorised on Arrow list layouts.

Every kernel works on the flattened values of its lists and each value's parent row
(`pc.list_parent_indices`), then rebuilds lists from offsets; set operations (distinct,
union, intersect, except) group (row, value) pairs with Arrow's hash group-by and keep
each value's first position. Nothing loops over rows in Python, except the set
operations on nested element types (arrays of arrays or structs), which Arrow cannot hash.

Null and error semantics are Spark's with ANSI off: an index past the end is null, but
`element_at(a, 0)` and `slice(a, 0, n)` raise as Spark does in every mode; a null or
duplicate map key raises.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from quiver.engine.core import types as T
from quiver.engine.core.ansi import ansi_enabled
from quiver.engine.core.errors import QuiverError, SparkRuntimeException, invalid_array_index
from quiver.executors.cpu.kernels.registry import (
    KERNELS,
    Value,
    all_null,
    as_array,
    constant,
    kernel,
    length_of,
    list_offsets,
    list_values,
    mask_null,
    null_scalar,
)

# ---------------------------------------------------------------- layout helpers

def _arrays(args: list[Value]) -> tuple[list[pa.Array], int]:
    n = length_of(args) if any(isinstance(a, pa.Array) for a in args) else 1
    return [as_array(a, n) for a in args], n


def _np(a: pa.Array) -> np.ndarray:
    return a.to_numpy(zero_copy_only=False)


def _nulls(a: pa.Array) -> np.ndarray:
    return _np(a.is_null())


def _flat(lists: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """Each value's parent row, and the values, of a (possibly sliced) list or map array."""
    if pa.types.is_null(lists.type):
        return np.zeros(0, np.int64), pa.array([], pa.null())
    if pa.types.is_map(lists.type):
        offsets = list_offsets(lists).to_numpy()
        parents = np.repeat(np.arange(len(lists)), np.diff(offsets))
        return parents, _entries(lists)
    return _np(pc.list_parent_indices(lists)).astype(np.int64), pc.list_flatten(lists)


def _entries(m: pa.Array) -> pa.StructArray:
    """The key/value structs spanned by a (possibly sliced) map array."""
    start = m.offsets[0].as_py()
    count = m.offsets[-1].as_py() - start
    return pa.StructArray.from_arrays([m.keys.slice(start, count), m.items.slice(start, count)], ["key", "value"])


def _lengths(lists: pa.Array) -> np.ndarray:
    if pa.types.is_null(lists.type):
        return np.zeros(len(lists), np.int64)
    return np.diff(list_offsets(lists).to_numpy()).astype(np.int64)


def _starts(lists: pa.Array) -> np.ndarray:
    """Where each row's values begin among `_flat(lists)`'s values."""
    return np.concatenate([[0], np.cumsum(_lengths(lists))])[:-1]


def _build(parents: np.ndarray, values: pa.Array, n: int, list_type: pa.DataType, null: np.ndarray | None) -> pa.Array:
    """A list array of `n` rows from values sorted by their parent row; rows in `null` are null."""
    counts = np.bincount(parents, minlength=n) if len(parents) else np.zeros(n, np.int64)
    offsets = pa.array(np.concatenate([[0], np.cumsum(counts)]).astype(np.int32))
    if values.type != list_type.value_type:
        values = values.cast(list_type.value_type)
    mask = pa.array(null) if null is not None and null.any() else None
    return pa.ListArray.from_arrays(offsets, values, type=list_type, mask=mask)


def _take(values: pa.Array, positions: np.ndarray) -> pa.Array:
    return pc.take(values, pa.array(positions.astype(np.int64)))


def _per_parent(args: list[pa.Array], parents: np.ndarray) -> list[pa.Array]:
    """Each row-level argument repeated for every value of its row."""
    index = pa.array(parents)
    return [pc.take(a, index) for a in args]


def _first_hit(parents: np.ndarray, hits: np.ndarray, n: int) -> np.ndarray:
    """Index (among the flat values) of each row's first hit, -1 where none."""
    out = np.full(n, -1, np.int64)
    where = np.flatnonzero(hits)[::-1]
    out[parents[where]] = where
    return out


def _hashable(t: pa.DataType) -> bool:
    return not (pa.types.is_nested(t) or pa.types.is_null(t))


def _list_type(rt: T.DataType) -> pa.DataType:
    return rt.to_arrow()


# ---------------------------------------------------------------- constructors

@kernel("array", data="all")
def array(args: list[Value], rt: T.DataType) -> Value:
    """array(a, b, ...): one list per row, the arguments in order."""
    element = _list_type(rt).value_type
    if not args:
        return pa.array([[]], _list_type(rt))
    columns, n = _arrays(args)
    k = len(columns)
    stacked = pa.concat_arrays([c.cast(element) for c in columns])
    order = (np.arange(n)[:, None] + np.arange(k)[None, :] * n).ravel()
    offsets = pa.array(np.arange(0, n * k + 1, k, dtype=np.int32))
    return pa.ListArray.from_arrays(offsets, _take(stacked, order), type=_list_type(rt))


@kernel("named_struct", "struct", data="all")
def named_struct(args: list[Value], rt: T.DataType) -> Value:
    """A struct per row; the field names come from the result type (the literal names)."""
    columns, n = _arrays(args[1::2])
    fields = list(rt.to_arrow())
    if not fields:
        return pa.array([{}] * n, pa.struct([]))
    return pa.StructArray.from_arrays([c.cast(f.type) for c, f in zip(columns, fields)], fields=fields)


def _check_keys(parents: np.ndarray, keys: pa.Array, function: str) -> None:
    if keys.null_count:
        raise QuiverError(f"[NULL_MAP_KEY] Cannot use null as map key (in {function})")
    if len(keys) and _hashable(keys.type):
        t = pa.table({"p": parents, "k": keys})
        counts = t.group_by(["p", "k"], use_threads=False).aggregate([("p", "count")])
        dup = pc.greater(counts["p_count"], 1)
        if pc.any(dup).as_py():
            key = counts.filter(dup)["k"][0].as_py()
            raise QuiverError(f"[DUPLICATED_MAP_KEY] Duplicate map key {key!r} was found in {function}; "
                              "each key may appear once (Spark's spark.sql.mapKeyDedupPolicy=EXCEPTION)")


@kernel("map", data="all")
def create_map(args: list[Value], rt: T.DataType) -> Value:
    """map(k1, v1, k2, v2, ...): one map per row."""
    map_type = rt.to_arrow()
    columns, n = _arrays(args)
    k = len(columns) // 2
    if k == 0:
        return pa.MapArray.from_arrays(pa.array(np.zeros(n + 1, np.int32)), pa.array([], map_type.key_type),
                                       pa.array([], map_type.item_type), type=map_type)
    order = (np.arange(n)[:, None] + np.arange(k)[None, :] * n).ravel()
    keys = _take(pa.concat_arrays([c.cast(map_type.key_type) for c in columns[0::2]]), order)
    items = _take(pa.concat_arrays([c.cast(map_type.item_type) for c in columns[1::2]]), order)
    _check_keys(np.repeat(np.arange(n), k), keys, "map()")
    offsets = pa.array(np.arange(0, n * k + 1, k, dtype=np.int32))
    return pa.MapArray.from_arrays(offsets, keys, items, type=map_type)


@kernel("map_from_arrays", data="all")
def map_from_arrays(args: list[Value], rt: T.DataType) -> Value:
    """A map per row from an array of keys and an equally long array of values; null if either is null."""
    (keys, items), n = _arrays(args)
    map_type = rt.to_arrow()
    null = _nulls(keys) | _nulls(items)
    key_lengths, item_lengths = _lengths(keys), _lengths(items)
    bad = ~null & (key_lengths != item_lengths)
    if bad.any():
        raise QuiverError("map_from_arrays: the key and value arrays must have the same length, "
                          f"but a row has {key_lengths[bad][0]} keys and {item_lengths[bad][0]} values")
    key_parents, key_values = _flat(keys)
    item_parents, item_values = _flat(items)
    keep_keys, keep_items = ~null[key_parents], ~null[item_parents]
    key_values = key_values.filter(pa.array(keep_keys)).cast(map_type.key_type)
    item_values = item_values.filter(pa.array(keep_items)).cast(map_type.item_type)
    parents = key_parents[keep_keys]
    _check_keys(parents, key_values, "map_from_arrays()")
    counts = np.bincount(parents, minlength=n) if len(parents) else np.zeros(n, np.int64)
    offsets = pa.array(np.concatenate([[0], np.cumsum(counts)]).astype(np.int32),
                       mask=np.concatenate([null, [False]]) if null.any() else None)
    return pa.MapArray.from_arrays(offsets, key_values, item_values, type=map_type)


@kernel("array_repeat", data="all")
def array_repeat(args: list[Value], rt: T.DataType) -> Value:
    """The value `count` times (none for count <= 0); null where the count is null."""
    (value, count), n = _arrays(args)
    null = _nulls(count)
    times = np.maximum(_np(pc.fill_null(count.cast(pa.int64()), 0)), 0)
    parents = np.repeat(np.arange(n), times)
    return _build(parents, _take(value, parents), n, _list_type(rt), null)


@kernel("sequence", data="all")
def sequence(args: list[Value], rt: T.DataType) -> Value:
    """Integers from start to stop (inclusive) by step (default 1, or -1 counting down)."""
    columns, n = _arrays(args)
    null = np.zeros(n, bool)
    for c in columns:
        null |= _nulls(c)
    start, stop = (_np(pc.fill_null(c.cast(pa.int64()), 0)).astype(np.int64) for c in columns[:2])
    if len(columns) > 2:
        step = _np(pc.fill_null(columns[2].cast(pa.int64()), 1)).astype(np.int64)
    else:
        step = np.where(start <= stop, 1, -1)
    valid = (step > 0) & (start <= stop) | (step < 0) & (start >= stop) | (start == stop) & (step != 0)
    wrong = ~valid & ~null
    if wrong.any():
        i = int(np.flatnonzero(wrong)[0])
        raise QuiverError(f"sequence: illegal sequence boundaries: {start[i]} to {stop[i]} by {step[i]}")
    safe_step = np.where(step == 0, 1, step)
    counts = np.where(null, 0, (stop - start) // safe_step + 1)
    parents = np.repeat(np.arange(n), counts)
    within = np.arange(len(parents)) - np.repeat(np.concatenate([[0], np.cumsum(counts)])[:-1], counts)
    values = start[parents] + step[parents] * within
    return _build(parents, pa.array(values), n, _list_type(rt), null)


# ---------------------------------------------------------------- access

def _array_at(lists: pa.Array, index: np.ndarray, rt: T.DataType) -> pa.Array:
    """Each row's element at a 0-based `index` (null where the index is outside the array)."""
    lengths = _lengths(lists)
    inside = (index >= 0) & (index < lengths) & ~_nulls(lists)
    _, values = _flat(lists)
    if len(values) == 0:
        return pa.nulls(len(lists), rt.to_arrow())
    positions = np.where(inside, _starts(lists) + index, 0)
    taken = _take(values, positions)
    return pc.if_else(pa.array(inside), taken, pa.scalar(None, taken.type)).cast(rt.to_arrow())


def _map_at(maps: pa.Array, key: pa.Array, rt: T.DataType) -> pa.Array:
    """Each row's value under `key`, null where the map or key is null or the key is absent."""
    parents, entries = _flat(maps)
    if len(entries) == 0:
        return pa.nulls(len(maps), rt.to_arrow())
    (wanted,) = _per_parent([key.cast(entries.field(0).type)], parents)
    hits = _np(pc.fill_null(pc.equal(entries.field(0), wanted), False))
    first = _first_hit(parents, hits, len(maps))
    taken = _take(entries.field(1), np.maximum(first, 0))
    return pc.if_else(pa.array(first >= 0), taken, pa.scalar(None, taken.type)).cast(rt.to_arrow())


def _element_at(args: list[Value], rt: T.DataType, one_based: bool, strict: bool) -> pa.Array:
    """The array element at each row's index (1-based, negative from the end, or 0-based), or the map value
    under each row's key. A 1-based index 0 is an error; an index past the end is null, or, when `strict`
    (element_at under ANSI mode), Spark's INVALID_ARRAY_INDEX_IN_ELEMENT_AT."""
    (value, key), n = _arrays(args)
    if pa.types.is_map(value.type):
        return _map_at(value, key, rt)
    raw = _np(pc.fill_null(key.cast(pa.int64()), 0)).astype(np.int64)
    key_null = _nulls(key)
    present = ~key_null & ~_nulls(value)
    if one_based:
        if ((raw == 0) & present).any():
            raise SparkRuntimeException(
                "INVALID_INDEX_OF_ZERO", "The index 0 is invalid. An index shall be either < 0 or > 0 (the first "
                "element has index 1).", "22003")
        index = np.where(raw > 0, raw - 1, _lengths(value) + raw)
        index = np.where(raw == 0, -1, index)
    else:
        index = raw
    if strict:
        lengths = _lengths(value)
        outside = present & ((index < 0) | (index >= lengths))
        if outside.any():
            row = int(np.argmax(outside))
            raise invalid_array_index(int(raw[row]), int(lengths[row]), element_at=True)
    return _array_at(value, np.where(key_null, -1, index), rt)


@kernel("element_at", data="all")
def element_at(args: list[Value], rt: T.DataType) -> Value:
    """Array element by 1-based index (negative counts from the end; past the end is null, or an error under
    ANSI mode), or map value by key (null for a missing key)."""
    return _element_at(args, rt, one_based=True, strict=ansi_enabled())


@kernel("try_element_at", data="all")
def try_element_at(args: list[Value], rt: T.DataType) -> Value:
    """element_at, but null past the end of the array in either mode (index 0 is still an error, as in Spark)."""
    return _element_at(args, rt, one_based=True, strict=False)


@kernel("get", data="all")
def get(args: list[Value], rt: T.DataType) -> Value:
    """Array element by 0-based index; null outside the array."""
    return _element_at(args, rt, one_based=False, strict=False)


def _map_part(maps: pa.Array, field: int, rt: T.DataType) -> pa.Array:
    _, entries = _flat(maps)
    return pa.ListArray.from_arrays(list_offsets(maps), entries.field(field), type=rt.to_arrow(),
                                    mask=maps.is_null() if maps.null_count else None)


@kernel("map_keys")
def map_keys(args: list[Value], rt: T.DataType) -> Value:
    return _map_part(args[0], 0, rt)


@kernel("map_values")
def map_values(args: list[Value], rt: T.DataType) -> Value:
    return _map_part(args[0], 1, rt)


@kernel("map_entries")
def map_entries(args: list[Value], rt: T.DataType) -> Value:
    maps = args[0]
    _, entries = _flat(maps)
    struct_type = rt.to_arrow().value_type
    values = pa.StructArray.from_arrays([entries.field(0), entries.field(1)], fields=list(struct_type))
    return pa.ListArray.from_arrays(list_offsets(maps), values, type=rt.to_arrow(),
                                    mask=maps.is_null() if maps.null_count else None)


@kernel("map_contains_key", data="all")
def map_contains_key(args: list[Value], rt: T.DataType) -> Value:
    (maps, key), n = _arrays(args)
    parents, entries = _flat(maps)
    (wanted,) = _per_parent([key.cast(maps.type.key_type)], parents)
    hits = _np(pc.fill_null(pc.equal(entries.field(0), wanted), False)) if len(entries) else np.zeros(0, bool)
    found = _first_hit(parents, hits, n) >= 0
    return pa.array(found, pa.bool_(), mask=_nulls(maps) | _nulls(key))


@kernel("array_size")
def array_size(args: list[Value], rt: T.DataType) -> Value:
    return pc.list_value_length(args[0]).cast(pa.int32())


# ---------------------------------------------------------------- arrays: one list in, one list out

def _filtered(lists: pa.Array, keep: np.ndarray, rt: T.DataType, null: np.ndarray | None = None) -> pa.Array:
    parents, values = _flat(lists)
    return _build(parents[keep], values.filter(pa.array(keep)), len(lists),
                  _list_type(rt), _nulls(lists) if null is None else null)


@kernel("array_compact")
def array_compact(args: list[Value], rt: T.DataType) -> Value:
    lists = args[0]
    _, values = _flat(lists)
    return _filtered(lists, ~_nulls(values), rt)


@kernel("array_remove", data="all")
def array_remove(args: list[Value], rt: T.DataType) -> Value:
    """The array without elements equal to the value (null elements stay); null if the value is null."""
    (lists, value), n = _arrays(args)
    parents, values = _flat(lists)
    (wanted,) = _per_parent([value.cast(values.type)], parents)
    equal = _np(pc.fill_null(pc.equal(values, wanted), False)) if len(values) else np.zeros(0, bool)
    return _filtered(lists, ~equal, rt, _nulls(lists) | _nulls(value))


@kernel("array_position", data="all")
def array_position(args: list[Value], rt: T.DataType) -> Value:
    """1-based position of the first element equal to the value; 0 if none."""
    (lists, value), n = _arrays(args)
    parents, values = _flat(lists)
    (wanted,) = _per_parent([value.cast(values.type)], parents)
    equal = _np(pc.fill_null(pc.equal(values, wanted), False)) if len(values) else np.zeros(0, bool)
    first = _first_hit(parents, equal, n)
    position = np.where(first >= 0, first - _starts(lists) + 1, 0)
    return pa.array(position, pa.int64(), mask=_nulls(lists) | _nulls(value))


def _append(args: list[Value], rt: T.DataType, front: bool) -> pa.Array:
    (lists, value), n = _arrays(args)
    parents, values = _flat(lists)
    element = _list_type(rt).value_type
    extra_parents = np.arange(n)
    all_parents = np.concatenate([extra_parents, parents] if front else [parents, extra_parents])
    side = np.concatenate([np.zeros(n), np.ones(len(parents))] if front else [np.zeros(len(parents)), np.ones(n)])
    both = pa.concat_arrays([value.cast(element), values.cast(element)] if front
                            else [values.cast(element), value.cast(element)])
    order = np.lexsort((np.arange(len(all_parents)), side, all_parents))
    return _build(all_parents[order], _take(both, order), n, _list_type(rt), _nulls(lists))


@kernel("array_append", data="all")
def array_append(args: list[Value], rt: T.DataType) -> Value:
    return _append(args, rt, front=False)


@kernel("array_prepend", data="all")
def array_prepend(args: list[Value], rt: T.DataType) -> Value:
    return _append(args, rt, front=True)


def _sorted_order(parents: np.ndarray, values: pa.Array) -> np.ndarray:
    """Positions ordering the values by row, then ascending with NaN above numbers and nulls last."""
    keys = {"parent": pa.array(parents), "null": values.is_null()}
    if pa.types.is_floating(values.type):
        keys["nan"] = pc.fill_null(pc.is_nan(values), False)
    keys["value"] = values
    return _np(pc.sort_indices(pa.table(keys), sort_keys=[(k, "ascending") for k in keys]))


@kernel("array_sort")
def array_sort(args: list[Value], rt: T.DataType) -> Value:
    """Each array ascending, nulls last (sort_array puts them first)."""
    lists = args[0]
    parents, values = _flat(lists)
    if not _hashable(values.type) and len(values):
        return _per_row(lists, rt, lambda xs: sorted([x for x in xs if x is not None], key=_py_key)
                        + [x for x in xs if x is None])
    order = _sorted_order(parents, values)
    return _build(parents[order], _take(values, order), len(lists), _list_type(rt), _nulls(lists))


def _extreme(args: list[Value], rt: T.DataType, largest: bool) -> pa.Array:
    lists = args[0]
    n = len(lists)
    parents, values = _flat(lists)
    if len(values) == 0 or pa.types.is_null(values.type):
        return pa.nulls(n, rt.to_arrow())
    keep = ~_nulls(values)
    parents, values = parents[keep], values.filter(pa.array(keep))
    order = _sorted_order(parents, values)
    parents, values = parents[order], _take(values, order)
    counts = np.bincount(parents, minlength=n)
    ends = np.cumsum(counts)
    pick = ends - 1 if largest else ends - counts
    has = counts > 0
    taken = _take(values, np.where(has, pick, 0)) if len(values) else pa.nulls(n, values.type)
    return pc.if_else(pa.array(has), taken, pa.scalar(None, taken.type)).cast(rt.to_arrow())


@kernel("array_max")
def array_max(args: list[Value], rt: T.DataType) -> Value:
    """Largest non-null element (NaN above every number); null for an empty or all-null array."""
    return _extreme(args, rt, largest=True)


@kernel("array_min")
def array_min(args: list[Value], rt: T.DataType) -> Value:
    return _extreme(args, rt, largest=False)


@kernel("array_join", data=(0,))
def array_join(args: list[Value], rt: T.DataType) -> Value:
    """Elements joined by the delimiter; nulls skipped, or replaced by the third argument."""
    lists, delimiter = args[0], args[1]
    replacement = args[2] if len(args) > 2 else None
    n = len(lists)
    parents, values = _flat(lists)
    values = values.cast(pa.string())
    if replacement is None:
        keep = ~_nulls(values)
        cleaned = _build(parents[keep], values.filter(pa.array(keep)), n, pa.list_(pa.string()), _nulls(lists))
    else:
        filled = pc.fill_null(values, replacement) if isinstance(replacement, pa.Scalar) else pc.coalesce(
            values, pc.take(replacement, pa.array(parents)))
        cleaned = _build(parents, filled, n, pa.list_(pa.string()), _nulls(lists))
    out = pc.binary_join(cleaned, delimiter)
    if replacement is not None and not isinstance(replacement, pa.Scalar):
        out = pc.if_else(replacement.is_null(), pa.scalar(None, pa.string()), out)
    elif isinstance(replacement, pa.Scalar) and not replacement.is_valid:
        return pa.nulls(n, pa.string())
    return out


@kernel("slice", data="all")
def slice_(args: list[Value], rt: T.DataType) -> Value:
    """`length` elements from 1-based `start` (negative counts from the end)."""
    (lists, start, length), n = _arrays(args)
    null = _nulls(lists) | _nulls(start) | _nulls(length)
    s = _np(pc.fill_null(start.cast(pa.int64()), 1)).astype(np.int64)
    k = _np(pc.fill_null(length.cast(pa.int64()), 0)).astype(np.int64)
    if ((s == 0) & ~null).any():
        raise QuiverError("slice: unexpected value 0 for start; SQL array indices start at 1 (negative counts from the "
                          "end)")
    if ((k < 0) & ~null).any():
        raise QuiverError(f"slice: unexpected negative length {int(k[(k < 0) & ~null][0])}; the length must be >= 0")
    lengths = _lengths(lists)
    first = np.where(s > 0, s - 1, lengths + s)
    ok = (first >= 0) & (first < lengths) & ~null
    counts = np.where(ok, np.minimum(first + k, lengths) - first, 0)
    parents = np.repeat(np.arange(n), counts)
    within = np.arange(len(parents)) - np.repeat(np.concatenate([[0], np.cumsum(counts)])[:-1], counts)
    _, values = _flat(lists)
    positions = _starts(lists)[parents] + first[parents] + within
    return _build(parents, _take(values, positions), n, _list_type(rt), null)


@kernel("flatten")
def flatten(args: list[Value], rt: T.DataType) -> Value:
    """An array of arrays as one array; null if it or any inner array is null."""
    outer = args[0]
    n = len(outer)
    outer_parents, inner = _flat(outer)
    if pa.types.is_null(inner.type):
        return pa.ListArray.from_arrays(list_offsets(outer), pa.array([], pa.null()), type=rt.to_arrow(),
                                        mask=outer.is_null() if outer.null_count else None)
    null = _nulls(outer)
    inner_null = _nulls(inner)
    if inner_null.any():
        null = null | (np.bincount(outer_parents[inner_null], minlength=n) > 0)
    inner_parents, values = _flat(inner)
    parents = outer_parents[inner_parents] if len(inner_parents) else inner_parents
    keep = ~null[parents]
    return _build(parents[keep], values.filter(pa.array(keep)), n, _list_type(rt), null)


@kernel("arrays_zip", data="all")
def arrays_zip(args: list[Value], rt: T.DataType) -> Value:
    """The i-th elements of each array as one struct; shorter arrays give nulls; null if any array is null."""
    columns, n = _arrays(args[len(args) // 2:])
    struct_type = rt.to_arrow().value_type
    null = np.zeros(n, bool)
    for c in columns:
        null |= _nulls(c)
    lengths = np.stack([_lengths(c) for c in columns]).max(axis=0) if columns else np.zeros(n, np.int64)
    lengths = np.where(null, 0, lengths)
    parents = np.repeat(np.arange(n), lengths)
    within = np.arange(len(parents)) - np.repeat(np.concatenate([[0], np.cumsum(lengths)])[:-1], lengths)
    fields = []
    for c, f in zip(columns, struct_type):
        _, values = _flat(c)
        inside = within < _lengths(c)[parents]
        positions = pa.array((_starts(c)[parents] + within).astype(np.int64), mask=~inside)
        fields.append(pc.take(values, positions).cast(f.type) if len(values) else pa.nulls(len(parents), f.type))
    values = pa.StructArray.from_arrays(fields, fields=list(struct_type)) if fields else pa.array(
        [{}] * len(parents), struct_type)
    return _build(parents, values, n, rt.to_arrow(), null)


# ---------------------------------------------------------------- set operations

def _py_key(x: Any) -> Any:
    return (x != x, x) if isinstance(x, float) else x


def _per_row(lists: pa.Array, rt: T.DataType, fn: Callable[[list], list | None]) -> pa.Array:
    """Python per row: only for nested element types, which Arrow's hash group-by cannot key on."""
    return pa.array([None if xs is None else fn(xs) for xs in lists.to_pylist()], rt.to_arrow())


def _distinct_rows(parents: np.ndarray, values: pa.Array, rank: np.ndarray, side: np.ndarray) -> pa.Table:
    """One row per distinct (parent, value): its first rank and the sides (0 left, 1 right) it occurs on."""
    t = pa.table({"p": parents, "v": values, "r": rank, "s": side})
    grouped = t.group_by(["p", "v"], use_threads=False).aggregate([("r", "min"), ("s", "min"), ("s", "max")])
    return grouped.sort_by("r_min")


def _set_operation(args: list[Value], rt: T.DataType, keep: Callable[[pa.Table], pa.Array] | None) -> pa.Array:
    """The distinct elements of one or two arrays per row, in first-seen order, kept by `keep(groups)`."""
    columns, n = _arrays(args)
    null = np.zeros(n, bool)
    parts, parents, side = [], [], []
    for i, c in enumerate(columns):
        null |= _nulls(c)
        p, v = _flat(c)
        parts.append(v.cast(_list_type(rt).value_type))
        parents.append(p)
        side.append(np.full(len(p), i, np.int64))
    parents_all = np.concatenate(parents)
    values = pa.concat_arrays(parts)
    if not _hashable(values.type) and len(values):
        return _set_operation_per_row(columns, rt, keep)
    side_all = np.concatenate(side)
    # rank: row, then first array before second, then position
    rank = np.empty(len(parents_all), np.int64)
    rank[np.lexsort((np.arange(len(parents_all)), side_all, parents_all))] = np.arange(len(parents_all))
    groups = _distinct_rows(parents_all, values, rank, side_all)
    if keep is not None:
        groups = groups.filter(keep(groups))
    kept_parents = _np(groups["p"]).astype(np.int64)
    order = np.argsort(kept_parents, kind="stable")
    kept = groups.take(pa.array(order))
    return _build(kept_parents[order], kept["v"].combine_chunks() if kept.num_rows else values.slice(0, 0),
                  n, _list_type(rt), null)


def _set_operation_per_row(columns: list[pa.Array], rt: T.DataType, keep: Any) -> pa.Array:
    rows = zip(*(c.to_pylist() for c in columns))

    def distinct(xs: list) -> list:
        out: list = []
        for x in xs:
            if x not in out:
                out.append(x)
        return out

    out = []
    for row in rows:
        if any(r is None for r in row):
            out.append(None)
            continue
        first = distinct(row[0])
        second = distinct(row[1]) if len(row) > 1 else []
        if keep is None:
            out.append(distinct(first + second))
        elif keep is _INTERSECT:
            out.append([x for x in first if x in second])
        else:
            out.append([x for x in first if x not in second])
    return pa.array(out, rt.to_arrow())


def _INTERSECT(groups: pa.Table) -> pa.Array:
    return pc.and_(pc.equal(groups["s_min"], 0), pc.equal(groups["s_max"], 1))


def _EXCEPT(groups: pa.Table) -> pa.Array:
    return pc.equal(groups["s_max"], 0)


@kernel("array_distinct")
def array_distinct(args: list[Value], rt: T.DataType) -> Value:
    """Each array without repeats, in first-occurrence order (one null kept)."""
    return _set_operation(args, rt, None)


@kernel("array_union", data="all")
def array_union(args: list[Value], rt: T.DataType) -> Value:
    return _set_operation(args, rt, None)


@kernel("array_intersect", data="all")
def array_intersect(args: list[Value], rt: T.DataType) -> Value:
    return _set_operation(args, rt, _INTERSECT)


@kernel("array_except", data="all")
def array_except(args: list[Value], rt: T.DataType) -> Value:
    return _set_operation(args, rt, _EXCEPT)


@kernel("arrays_overlap", data="all")
def arrays_overlap(args: list[Value], rt: T.DataType) -> Value:
    """True if the arrays share a non-null element; else null if both are non-empty and one holds a null."""
    (a, b), n = _arrays(args)
    pa_, va = _flat(a)
    pb, vb = _flat(b)
    null = _nulls(a) | _nulls(b)
    element = va.type if not pa.types.is_null(va.type) else vb.type
    values = pa.concat_arrays([va.cast(element), vb.cast(element)])
    parents = np.concatenate([pa_, pb])
    side = np.concatenate([np.zeros(len(pa_), np.int64), np.ones(len(pb), np.int64)])
    if not _hashable(values.type) and len(values):
        lists = zip(a.to_pylist(), b.to_pylist())
        shared = np.array([bool(x and y and any(v is not None and v in y for v in x)) for x, y in lists], bool)
    else:
        groups = _distinct_rows(parents, values, np.arange(len(parents)), side)
        both = pc.and_(pc.and_(pc.equal(groups["s_min"], 0), pc.equal(groups["s_max"], 1)), groups["v"].is_valid())
        hit_parents = _np(groups.filter(both)["p"]).astype(np.int64)
        shared = np.bincount(hit_parents, minlength=n) > 0 if len(hit_parents) else np.zeros(n, bool)
    has_null = np.zeros(n, bool)
    nulls = _nulls(values)
    if nulls.any():
        has_null = np.bincount(parents[nulls], minlength=n) > 0
    unknown = ~shared & has_null & (_lengths(a) > 0) & (_lengths(b) > 0)
    return pa.array(shared, pa.bool_(), mask=null | unknown)


# ---------------------------------------------------------------- size, containment, sorting and access

@kernel("size", "cardinality")
def size(args: list[Value], rt: T.DataType) -> Value:
    """Number of elements; for a null collection null under ANSI mode, else -1 (Spark's legacy sizeOfNull, which
    ANSI mode turns off)."""
    value = args[0]
    null_size = None if ansi_enabled() else -1
    if pa.types.is_null(value.type):
        return pa.nulls(len(value), pa.int32()) if null_size is None else pa.array(np.full(len(value), -1, np.int32))
    if pa.types.is_map(value.type):  # list_value_length has no map kernel
        lengths = pa.array(np.diff(value.offsets.to_numpy()).astype(np.int32), mask=value.is_null().to_numpy(
            zero_copy_only=False))
    else:
        lengths = pc.list_value_length(value).cast(pa.int32())
    return lengths if null_size is None else pc.fill_null(lengths, null_size)


@kernel("array_contains", data="all")
def array_contains(args: list[Value], rt: T.DataType) -> Value:
    """True if found; null if not found but the array holds a null; null for a null array or value."""
    length = length_of(args)
    lists, needle = as_array(args[0], length), args[1]
    element_type = lists.type.value_type
    values = pc.list_flatten(lists)
    parents = pc.list_parent_indices(lists).to_numpy(zero_copy_only=False)
    if isinstance(needle, pa.Scalar):
        target = needle.cast(element_type) if needle.is_valid else null_scalar(element_type)
    else:
        target = pc.take(needle.cast(element_type), pa.array(parents, pa.int64()))
    hits = pc.fill_null(pc.equal(values, target), False).to_numpy(zero_copy_only=False)
    found = np.bincount(parents[hits], minlength=length) > 0
    has_null = np.bincount(parents[values.is_null().to_numpy(zero_copy_only=False)], minlength=length) > 0
    mask = lists.is_null().to_numpy(zero_copy_only=False) | (~found & has_null)
    mask |= as_array(needle, length).is_null().to_numpy(zero_copy_only=False)
    return pa.array(found, pa.bool_(), mask=mask)


@kernel("sort_array")
def sort_array(args: list[Value], rt: T.DataType) -> Value:
    """Each array sorted: ascending with nulls first and NaN last, or the exact reverse of that."""
    lists = args[0]
    ascending = True if len(args) < 2 else constant(args[1], "sort_array", "ascending flag")
    if ascending is None:
        return all_null(len(lists), rt)
    offsets = list_offsets(lists).to_numpy()
    values = list_values(lists)
    parents = np.repeat(np.arange(len(lists)), np.diff(offsets))
    keys = {"parent": pa.array(parents)}
    if pa.types.is_floating(values.type):
        # Arrow sorts NaN next to nulls; Spark counts it above every number
        keys["nan"] = pc.is_nan(values)
    keys["value"] = values
    order = pc.sort_indices(pa.table(keys), sort_keys=[(k, "ascending", "at_start") for k in keys])
    ordered = pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), pc.take(values, order),
                                       type=lists.type, mask=lists.is_null())
    return ordered if ascending else KERNELS["reverse"]([ordered], rt)


@kernel("get_field")
def get_field(args: list[Value], rt: T.DataType) -> Value:
    """A struct's field by name (exact, then case-insensitive), or a map's value by key."""
    value = args[0]
    key = constant(args[1], "get_field", "field name or key")
    if pa.types.is_map(value.type):
        return pc.map_lookup(value, pa.scalar(key, value.type.key_type), "first")
    names = [value.type.field(i).name for i in range(value.type.num_fields)]
    index = names.index(key) if key in names else [n.lower() for n in names].index(str(key).lower())
    field = pc.struct_field(value, [index])
    return mask_null(field, value.is_null()) if value.null_count else field


@kernel("element_at_index")
def element_at_index(args: list[Value], rt: T.DataType) -> Value:
    """arr[i] (0-based; out of range is null, or INVALID_ARRAY_INDEX under ANSI mode) or map[key]."""
    value = args[0]
    key = constant(args[1], "element_at_index", "index or key")
    if key is None:
        return all_null(len(value), rt)
    if pa.types.is_map(value.type):
        return pc.map_lookup(value, pa.scalar(key, value.type.key_type), "first")
    offsets = list_offsets(value).to_numpy()
    valid = value.is_valid().to_numpy(zero_copy_only=False)
    inside = (key >= 0) & (key < np.diff(offsets)) & valid
    if ansi_enabled() and (valid & ~inside).any():
        row = int(np.argmax(valid & ~inside))
        raise invalid_array_index(int(key), int(offsets[row + 1] - offsets[row]), element_at=False)
    values = list_values(value)
    if len(values) == 0:
        return all_null(len(value), rt)
    positions = np.where(inside, offsets[:-1] + key, 0)
    return mask_null(pc.take(values, pa.array(positions.astype(np.int64))), ~inside)
