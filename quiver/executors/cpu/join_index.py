"""A hash index on a join's build side, built once per task and probed batch by batch.

Acero's hash join builds its table again for every plan, so a probe side streamed through it
either pays that build per chunk of probe rows or is gathered into chunks large enough to
hide it — which is where a join's memory went. `KeyIndex` holds the build side's keys in an
open-addressing table (numba, GIL released) once; each probe batch then costs only its own
lookups, and the joined batch is assembled from row indices with Arrow's `take`.

Keys are fixed-width (integers, dates, timestamps, booleans, floats canonicalised so NaN
matches NaN and -0.0 matches 0.0); each key column is read as 64-bit integers and a row's
keys are compared column by column. A null key never matches, as in SQL. Joins on other key
types, and joins with a residual condition, stay on Acero (quiver/executors/cpu/join.py): a
residual checked in Python on each step's pairs was slower than Acero's filter inside its join
(benchmarks/RESULTS.md, "joins on a key index").
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from quiver.executors.cpu.hashing import plain_array, splitmix64
from quiver.executors.cpu.jit import njit

# The most output rows one probe step assembles: a batch whose matches fan out past this is
# joined in slices of probe rows, so one key with many build rows cannot make one huge batch.
MAX_OUTPUT_ROWS = 1 << 20

# A dense key's direct table may span up to this many values per hash slot it replaces (4 bytes each
# against 12 per slot): foreign keys into a whole dimension table are dense, a filtered one may not be.
DIRECT_SPAN_PER_SLOT = 3


def indexable(types: Sequence[pa.DataType]) -> bool:
    """Whether keys of these Arrow types can be held in a `KeyIndex` (fixed-width, at most 64 bits)."""
    return bool(types) and all(_fixed_width(t) for t in types)


def _fixed_width(t: pa.DataType) -> bool:
    return (pa.types.is_integer(t) or pa.types.is_boolean(t) or pa.types.is_floating(t) or pa.types.is_date(t)
            or pa.types.is_timestamp(t) or pa.types.is_time(t) or pa.types.is_duration(t))


def key_words(columns: Sequence[pa.Array | pa.ChunkedArray]) -> tuple[np.ndarray, np.ndarray]:
    """The key columns as one C-contiguous int64 matrix (a row per input row, a column per key) and a
    boolean per row that is False where any key is null. Equal values give equal words: integers by
    value, floats by their bits once canonicalised (the caller's job), temporal values by their count.
    One int64 key column without nulls is viewed, not copied."""
    arrays = [plain_array(c) for c in columns]
    n = len(arrays[0])
    valid = np.ones(n, dtype=bool)
    if len(arrays) == 1 and arrays[0].type == pa.int64() and not arrays[0].null_count:
        return arrays[0].to_numpy().reshape(n, 1), valid
    words = np.empty((n, len(arrays)), dtype=np.int64)
    for j, arr in enumerate(arrays):
        if arr.null_count:
            valid &= arr.is_valid().to_numpy(zero_copy_only=False)
        words[:, j] = _as_int64(arr)
    return words, valid


def _as_int64(arr: pa.Array) -> np.ndarray:
    t = arr.type
    if pa.types.is_boolean(t):
        return arr.fill_null(False).to_numpy(zero_copy_only=False).astype(np.int64)
    if pa.types.is_floating(t):
        return arr.cast(pa.float64()).fill_null(0.0).to_numpy(zero_copy_only=False).view(np.int64)
    if not pa.types.is_integer(t):
        # Dates, times, timestamps and durations: their stored count, as the integer of the same width.
        arr = arr.view(pa.int32() if t.bit_width == 32 else pa.int64())
    elif t == pa.uint64():
        arr = arr.view(pa.int64())  # the same bits: equal keys stay equal, and no value overflows
    values = arr.fill_null(0).to_numpy(zero_copy_only=False)
    return values.astype(np.int64, copy=False)


@njit(inline="always")
def _row_hash(words: np.ndarray, i: int) -> np.uint64:
    h = np.uint64(0x9E3779B97F4A7C15)
    for j in range(words.shape[1]):
        h = splitmix64(h ^ np.uint64(words[i, j]))
    return h


@njit(inline="always")
def _same_keys(a: np.ndarray, i: int, b: np.ndarray, k: int) -> bool:
    for j in range(a.shape[1]):
        if a[i, j] != b[k, j]:
            return False
    return True


@njit(inline="always")
def _tag(words: np.ndarray, i: int, h: np.uint64) -> np.int64:
    """What a slot holds to recognise a row's keys at once: the key itself where there is one, else the
    row's hash (a hash match is then confirmed on the keys)."""
    if words.shape[1] == 1:
        return words[i, 0]
    return np.int64(h)


@njit(inline="always")
def _lookup(words: np.ndarray, i: int, tags: np.ndarray, slot_group: np.ndarray, build_words: np.ndarray,
            first_row: np.ndarray) -> tuple[np.int64, np.int64, np.int64]:
    """Where row `i`'s keys are in the table: (slot, group), the group -1 at the empty slot where they would go;
    and the row's tag. A slot holds a tag (`tags`) and its group (`slot_group`, -1 where empty); the tags
    alone are compared first, so a lookup touches one cache line of them."""
    mask = np.int64(tags.shape[0] - 1)
    h = _row_hash(words, i)
    tag = _tag(words, i, h)
    s = np.int64(h & np.uint64(mask))
    while True:
        g = slot_group[s]
        if g == -1 or (tags[s] == tag and (words.shape[1] == 1 or _same_keys(words, i, build_words, first_row[g]))):
            return s, np.int64(g), tag
        s = (s + 1) & mask


@njit(cache=True, nogil=True)
def _build(words: np.ndarray, valid: np.ndarray, tags: np.ndarray, slot_group: np.ndarray,
           group_of_row: np.ndarray, first_row: np.ndarray) -> int:
    """Give each distinct valid key a group number (in order of first appearance); returns how many."""
    groups = 0
    for i in range(words.shape[0]):
        if not valid[i]:
            group_of_row[i] = -1
            continue
        s, g, tag = _lookup(words, i, tags, slot_group, words, first_row)
        if g == -1:
            tags[s] = tag
            slot_group[s] = groups
            first_row[groups] = i
            g = groups
            groups += 1
        group_of_row[i] = g
    return groups


@njit(cache=True, nogil=True)
def _probe(words: np.ndarray, valid: np.ndarray, tags: np.ndarray, slot_group: np.ndarray,
           build_words: np.ndarray, first_row: np.ndarray, out: np.ndarray) -> None:
    """The build group of each probe row's keys, or -1 where no build row has them (or a key is null)."""
    for i in range(words.shape[0]):
        out[i] = _lookup(words, i, tags, slot_group, build_words, first_row)[1] if valid[i] else -1


@njit(cache=True, nogil=True)
def _probe_direct(words: np.ndarray, valid: np.ndarray, low: np.int64, direct: np.ndarray,
                  out: np.ndarray) -> None:
    """`_probe` for one key whose build values span a short range: the group is `direct[key - low]`."""
    n = direct.shape[0]
    for i in range(words.shape[0]):
        j = words[i, 0] - low
        out[i] = direct[j] if valid[i] and 0 <= j < n else -1


@dataclass(frozen=True)
class Matches:
    """The pairs one probe step found: probe row indices and build row indices (-1 where an outer join
    keeps a probe row without a match)."""

    probe_rows: np.ndarray
    build_rows: np.ndarray


class KeyIndex:
    """The build side's rows grouped by key: per distinct key, the build rows that hold it."""

    def __init__(self, key_columns: Sequence[pa.Array | pa.ChunkedArray]):
        words, valid = key_words(key_columns)
        n = words.shape[0]
        capacity = 16
        while capacity * 3 < n * 4:  # at most three slots in four taken: short probe runs, a compact table
            capacity *= 2
        # Row and group numbers in 32 bits where they fit: the index is then about 40 bytes per build row.
        index_type = np.int64 if n >= 1 << 31 else np.int32
        self._tags = np.empty(capacity, dtype=np.int64)
        self._slot_group = np.full(capacity, -1, dtype=index_type)
        group_of_row = np.empty(n, dtype=index_type)
        first_row = np.empty(max(n, 1), dtype=index_type)
        groups = _build(words, valid, self._tags, self._slot_group, group_of_row, first_row)
        self._words, self._first_row = words, first_row[:groups]
        self._direct, self._low = self._direct_table(groups, capacity)
        self._group_of_row = group_of_row
        self.num_rows, self.num_groups = n, groups
        # Build rows ordered by group (stable), with each group's first position: a CSR layout.
        self._counts = np.bincount(group_of_row[valid], minlength=groups).astype(np.int64)
        self._starts = np.zeros(groups + 1, dtype=np.int64)
        np.cumsum(self._counts, out=self._starts[1:])
        self.unique = groups == int(valid.sum())
        self._rows = self._first_row if self.unique else \
            np.flatnonzero(valid)[np.argsort(group_of_row[valid], kind="stable")]

    def _direct_table(self, groups: int, capacity: int) -> tuple[np.ndarray | None, np.int64]:
        """For one key whose distinct values span at most DIRECT_SPAN_PER_SLOT times the hash table's slots,
        the group of each value in that span (-1 for a value no build row has): a probe is then one read,
        near the last one where probe keys come clustered, as foreign keys of a sorted table do."""
        if self._words.shape[1] != 1 or not groups:
            return None, np.int64(0)
        keys = self._words[self._first_row, 0]
        low, high = int(keys.min()), int(keys.max())
        if high - low >= DIRECT_SPAN_PER_SLOT * capacity:
            return None, np.int64(0)
        direct = np.full(high - low + 1, -1, dtype=self._slot_group.dtype)
        direct[keys - low] = np.arange(groups, dtype=direct.dtype)
        return direct, np.int64(low)

    def groups(self, key_columns: Sequence[pa.Array | pa.ChunkedArray]) -> np.ndarray:
        """The group of each probe row (-1: no build row has its keys)."""
        words, valid = key_words(key_columns)
        out = np.empty(words.shape[0], dtype=np.int64)
        if self._direct is not None:
            _probe_direct(words, valid, self._low, self._direct, out)
        else:
            _probe(words, valid, self._tags, self._slot_group, self._words, self._first_row, out)
        return out

    def rows_of(self, hit: np.ndarray, null_keys: bool) -> np.ndarray:
        """The build rows whose key group `hit` (a boolean per group) marks, in build order, and with
        `null_keys` the rows with a null key too (no probe row ever matches those)."""
        owned = self._group_of_row >= 0
        chosen = np.full(self.num_rows, null_keys, dtype=bool)
        chosen[owned] = hit[self._group_of_row[owned]]
        return np.flatnonzero(chosen)

    def matches(self, groups: np.ndarray, keep_unmatched: bool) -> Iterator[Matches]:
        """Every (probe row, build row) pair with equal keys, in probe order, in steps of at most about
        MAX_OUTPUT_ROWS pairs; with `keep_unmatched`, a probe row without a match once with build row -1."""
        matched = groups >= 0
        counts = np.zeros(len(groups), dtype=np.int64)
        counts[matched] = self._counts[groups[matched]]
        if keep_unmatched:
            counts[~matched] = 1
        if self.unique:
            rows = np.flatnonzero(counts)
            build = np.full(len(rows), -1, dtype=np.int64)
            hit = groups[rows] >= 0
            build[hit] = self._rows[self._starts[groups[rows[hit]]]]
            for start in range(0, len(rows), MAX_OUTPUT_ROWS):
                yield Matches(rows[start:start + MAX_OUTPUT_ROWS], build[start:start + MAX_OUTPUT_ROWS])
            return
        ends = np.cumsum(counts)
        begin = 0
        while begin < len(groups):
            # The probe rows whose pairs end within the next MAX_OUTPUT_ROWS (at least one row).
            base = ends[begin - 1] if begin else 0
            end = max(int(np.searchsorted(ends, base + MAX_OUTPUT_ROWS, side="right")), begin + 1)
            part_counts = counts[begin:end]
            total = int(part_counts.sum())
            if total:
                probe = np.repeat(np.arange(begin, end, dtype=np.int64), part_counts)
                offsets = np.repeat(np.cumsum(part_counts) - part_counts, part_counts)
                within = np.arange(total, dtype=np.int64) - offsets
                part_groups = groups[begin:end]
                hit = np.repeat(part_groups >= 0, part_counts)
                build = np.full(total, -1, dtype=np.int64)
                starts = np.repeat(self._starts[:-1][np.where(part_groups >= 0, part_groups, 0)], part_counts)
                build[hit] = self._rows[starts[hit] + within[hit]]
                yield Matches(probe, build)
            begin = end


def take_rows(columns: Sequence[pa.Array], rows: np.ndarray) -> list[pa.Array]:
    """The columns at `rows` (row -1 gives null)."""
    if len(rows) and rows.min() < 0:
        indices = pa.array(np.where(rows < 0, 0, rows), type=pa.int64(), mask=rows < 0)
    else:
        indices = pa.array(rows, type=pa.int64())
    return [pc.take(c, indices) for c in columns]
