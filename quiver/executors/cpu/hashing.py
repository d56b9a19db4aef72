"""Hashes of Arrow columns for hash partitioning: the same value hashes the same in every batch.

Fixed-width columns are mixed with splitmix64 by a numba kernel; strings and binaries are hashed
from their offsets and data buffers by a numba kernel (no Python per row). A batch of at most
`SMALL_BATCH_ROWS` rows is hashed with numpy instead, to the same values: numba's import and first kernel
load cost more than the whole of a small query (`jit.py`).
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from quiver.executors.cpu.jit import njit

# The hash of a null, whatever its type.
NULL_HASH = np.uint64(0x9E3779B97F4A7C15)
# Batches up to this many rows are hashed with numpy; strings only while no value is longer than
# SMALL_BATCH_BYTES (numpy takes one pass per byte position).
SMALL_BATCH_ROWS = 16384
SMALL_BATCH_BYTES = 64
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


def _splitmix(x: np.ndarray) -> np.ndarray:
    """splitmix64 of each value (its 64 bits as unsigned), in one compiled pass that releases the GIL."""
    bits = x.view(np.uint64) if x.dtype.itemsize == 8 and x.dtype.kind in "iu" else x.astype(np.uint64)
    if len(bits) <= SMALL_BATCH_ROWS:
        return _splitmix_numpy(bits)
    out = np.empty(len(bits), dtype=np.uint64)
    _splitmix_into(np.ascontiguousarray(bits), out)
    return out


def _splitmix_numpy(z: np.ndarray) -> np.ndarray:
    """`splitmix64` of each value with numpy's wrapping uint64 arithmetic: the kernel's own Python function
    over the whole array, so the values are the kernel's, without numba."""
    with np.errstate(over="ignore"):
        return splitmix64.py_func(z)


def _hash_binary_numpy(offsets: np.ndarray, data: np.ndarray) -> np.ndarray:
    """FNV-1a of each value's bytes, one numpy pass per byte position: `_hash_binary`'s values."""
    starts = offsets[:-1].astype(np.int64)
    lengths = offsets[1:].astype(np.int64) - starts
    out = np.full(len(starts), _FNV_OFFSET, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(int(lengths.max(initial=0))):
            longer = lengths > j
            out[longer] = (out[longer] ^ data[starts[longer] + j].astype(np.uint64)) * _FNV_PRIME
    return out


@njit(inline="always")
def splitmix64(x: np.uint64) -> np.uint64:
    """splitmix64 of one 64-bit value, for numba kernels that mix hashes value by value."""
    z = x + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True, nogil=True)
def _splitmix_into(x: np.ndarray, out: np.ndarray) -> None:
    for i in range(x.shape[0]):
        out[i] = splitmix64(x[i])


@njit(cache=True, nogil=True)
def _hash_binary(offsets: np.ndarray, data: np.ndarray, out: np.ndarray) -> None:
    for i in range(out.shape[0]):
        h = _FNV_OFFSET
        for j in range(offsets[i], offsets[i + 1]):
            h = (h ^ np.uint64(data[j])) * _FNV_PRIME
        out[i] = h


def plain_array(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    """One contiguous array of plain values (chunks combined, a dictionary decoded): what a kernel over raw
    buffers reads."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    return arr.dictionary_decode() if pa.types.is_dictionary(arr.type) else arr


def binary_buffers(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The offsets (int32, or int64 for large types, as the column holds them) and the bytes of a string or
    binary column, without copying them."""
    large = pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type)
    arr = arr.cast(pa.large_binary() if large else pa.binary())
    bufs = arr.buffers()
    offsets = np.frombuffer(bufs[1], dtype=np.int64 if large else np.int32, count=len(arr) + 1 + arr.offset)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(1, np.uint8)
    return offsets[arr.offset:], data


def hash_array(arr: pa.Array) -> np.ndarray:
    """A uint64 hash per value of `arr`; nulls get one fixed hash."""
    arr = plain_array(arr)
    t = arr.type
    if pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_large_string(t) or pa.types.is_large_binary(t):
        offsets, data = binary_buffers(arr)
        if len(arr) <= SMALL_BATCH_ROWS and int((offsets[1:] - offsets[:-1]).max(initial=0)) <= SMALL_BATCH_BYTES:
            out = _hash_binary_numpy(offsets, data)
        else:
            out = np.empty(len(arr), dtype=np.uint64)
            _hash_binary(offsets, data, out)
        hashed = _splitmix(out)
    elif pa.types.is_boolean(t):
        hashed = _splitmix(arr.fill_null(False).to_numpy(zero_copy_only=False).astype(np.uint64))
    elif pa.types.is_floating(t):
        vals = arr.cast(pa.float64()).fill_null(0.0).to_numpy(zero_copy_only=False)
        vals = np.where(vals == 0.0, 0.0, vals)  # -0.0 and 0.0 are equal, so hash alike
        vals = np.where(np.isnan(vals), np.nan, vals)  # so are NaNs of any sign or payload (Spark groups them)
        hashed = _splitmix(vals.view(np.uint64))
    elif pa.types.is_decimal(t):
        hashed = hash_array(pc.cast(arr, pa.string()))
    elif pa.types.is_date(t) or pa.types.is_timestamp(t) or pa.types.is_time(t) or pa.types.is_duration(t):
        # date32 casts to int32 only; a view as the integer of the same width works for every temporal type
        ints = arr.view(pa.int32() if t.bit_width == 32 else pa.int64()).cast(pa.int64())
        hashed = _splitmix(ints.fill_null(0).to_numpy(zero_copy_only=False).view(np.uint64))
    elif pa.types.is_integer(t):
        hashed = _splitmix(arr.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False).view(np.uint64))
    elif pa.types.is_null(t):
        return np.full(len(arr), NULL_HASH, dtype=np.uint64)
    else:
        hashed = hash_array(pc.cast(arr, pa.string()) if not pa.types.is_nested(t)
                            else pa.array([str(v) for v in arr.to_pylist()]))
    if arr.null_count:
        hashed = np.where(arr.is_null().to_numpy(zero_copy_only=False), NULL_HASH, hashed)
    return hashed


def canonical_floats(arr: pa.Array) -> pa.Array:
    """-0.0 as 0.0 and every NaN as one NaN, as Spark normalises grouping and join keys.

    Kernels that compare keys bit for bit (Acero's hash join and group-by) then agree with
    Spark, where `-0.0 = 0.0` and all NaNs are one value. Other types pass through.
    """
    if not pa.types.is_floating(arr.type):
        return arr
    zero = pa.scalar(0.0, arr.type)
    arr = pc.if_else(pc.equal(arr, zero), zero, arr)
    return pc.if_else(pc.is_nan(arr), pa.scalar(float("nan"), arr.type), arr)


def reseeded(hashes: np.ndarray, seed: int) -> np.ndarray:
    """The hashes mixed again with `seed`: ids taken modulo n from these are independent of those taken from
    the original hashes, so rows that one hash partitioning put together are spread by the next."""
    with np.errstate(over="ignore"):
        return _splitmix(hashes ^ (np.uint64(seed) * np.uint64(0xD6E8FEB86659FD93)))


def hash_columns(columns: list[pa.Array]) -> np.ndarray:
    """Combine per-column hashes into one uint64 per row."""
    if not columns:
        raise ValueError("hash_columns needs at least one column")
    h = hash_array(columns[0])
    with np.errstate(over="ignore"):
        for col in columns[1:]:
            h = _splitmix(h * np.uint64(31) + hash_array(col))
    return h
