"""Spark's `hash` (Murmur3 x86_32, seed 42), `xxhash64` (XXH64, seed 42) and `crc32`, bit for bit,
and the digests md5, sha1 (sha) and sha2.

Spark hashes each argument into a running per-row hash, the previous argument's hash being
the seed of the next; a null argument leaves the hash as it is. The value is hashed by type
as Spark's `HashExpression` does: booleans, bytes, shorts, ints and dates as a 4-byte int;
longs and timestamps as an 8-byte long; floats and doubles by their IEEE bits, -0.0 as 0.0
and every NaN as Java's canonical NaN; strings and binaries by their bytes (Murmur3 with
Spark's own byte-at-a-time tail); decimals of precision <= 18 as the unscaled long, wider
ones by the big-endian two's-complement bytes of the unscaled integer (Java's
`BigInteger.toByteArray`). Every path is a numba kernel over whole columns.
"""
from __future__ import annotations

import decimal
import hashlib
from typing import Any

import numpy as np
import pyarrow as pa

from quiver.engine.core import types as T
from quiver.engine.core.errors import QuiverError
from quiver.executors.cpu.hashing import binary_buffers, plain_array
from quiver.executors.cpu.jit import njit
from quiver.executors.cpu.kernels.registry import Value, all_null, kernel, length_of, per_constant

_M32 = np.uint64(0xFFFFFFFF)

P1 = np.uint64(0x9E3779B185EBCA87)
P2 = np.uint64(0xC2B2AE3D27D4EB4F)
P3 = np.uint64(0x165667B19E3779F9)
P4 = np.uint64(0x85EBCA77C2B2AE63)
P5 = np.uint64(0x27D4EB2F165667C5)


# ---------------------------------------------------------------- Murmur3 x86_32 (values held in uint64, masked)

@njit(inline="always")
def _rotl32(x, r):
    return ((x << np.uint64(r)) | (x >> np.uint64(32 - r))) & np.uint64(0xFFFFFFFF)


@njit(inline="always")
def _mix_k1(k1):
    k1 = (k1 * np.uint64(0xCC9E2D51)) & np.uint64(0xFFFFFFFF)
    k1 = _rotl32(k1, 15)
    return (k1 * np.uint64(0x1B873593)) & np.uint64(0xFFFFFFFF)


@njit(inline="always")
def _mix_h1(h1, k1):
    h1 = h1 ^ k1
    h1 = _rotl32(h1, 13)
    return (h1 * np.uint64(5) + np.uint64(0xE6546B64)) & np.uint64(0xFFFFFFFF)


@njit(inline="always")
def _fmix32(h1, length):
    h1 = h1 ^ np.uint64(length)
    h1 = h1 ^ (h1 >> np.uint64(16))
    h1 = (h1 * np.uint64(0x85EBCA6B)) & np.uint64(0xFFFFFFFF)
    h1 = h1 ^ (h1 >> np.uint64(13))
    h1 = (h1 * np.uint64(0xC2B2AE35)) & np.uint64(0xFFFFFFFF)
    return h1 ^ (h1 >> np.uint64(16))


@njit(cache=True, nogil=True)
def _murmur_ints(values, valid, h):
    """values: uint64 holding the int's 32 bits."""
    for i in range(h.shape[0]):
        if valid[i]:
            h[i] = _fmix32(_mix_h1(h[i], _mix_k1(values[i] & np.uint64(0xFFFFFFFF))), 4)


@njit(cache=True, nogil=True)
def _murmur_longs(values, valid, h):
    for i in range(h.shape[0]):
        if valid[i]:
            v = values[i]
            h1 = _mix_h1(h[i], _mix_k1(v & np.uint64(0xFFFFFFFF)))
            h1 = _mix_h1(h1, _mix_k1(v >> np.uint64(32)))
            h[i] = _fmix32(h1, 8)


@njit(cache=True, nogil=True)
def _murmur_bytes(offsets, data, valid, h):
    for i in range(h.shape[0]):
        if not valid[i]:
            continue
        start = offsets[i]
        n = offsets[i + 1] - start
        aligned = n - n % 4
        h1 = h[i]
        for j in range(0, aligned, 4):
            p = start + j
            word = (np.uint64(data[p]) | (np.uint64(data[p + 1]) << np.uint64(8))
                    | (np.uint64(data[p + 2]) << np.uint64(16)) | (np.uint64(data[p + 3]) << np.uint64(24)))
            h1 = _mix_h1(h1, _mix_k1(word))
        for j in range(aligned, n):
            b = np.int64(data[start + j])
            if b >= 128:
                b -= 256  # Java bytes are signed, and Spark widens each tail byte to an int
            h1 = _mix_h1(h1, _mix_k1(np.uint64(b & 0xFFFFFFFF)))
        h[i] = _fmix32(h1, n)


# ---------------------------------------------------------------- XXH64

@njit(inline="always")
def _rotl64(x, r):
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


@njit(inline="always")
def _fmix64(h):
    h = h ^ (h >> np.uint64(33))
    h = h * P2
    h = h ^ (h >> np.uint64(29))
    h = h * P3
    return h ^ (h >> np.uint64(32))


@njit(cache=True, nogil=True)
def _xx_ints(values, valid, h):
    for i in range(h.shape[0]):
        if valid[i]:
            x = h[i] + P5 + np.uint64(4)
            x = x ^ ((values[i] & np.uint64(0xFFFFFFFF)) * P1)
            x = _rotl64(x, 23) * P2 + P3
            h[i] = _fmix64(x)


@njit(cache=True, nogil=True)
def _xx_longs(values, valid, h):
    for i in range(h.shape[0]):
        if valid[i]:
            x = h[i] + P5 + np.uint64(8)
            x = x ^ (_rotl64(values[i] * P2, 31) * P1)
            x = _rotl64(x, 27) * P1 + P4
            h[i] = _fmix64(x)


@njit(inline="always")
def _read_u64(data, p):
    out = np.uint64(0)
    for k in range(8):
        out |= np.uint64(data[p + k]) << np.uint64(8 * k)
    return out


@njit(inline="always")
def _xx_round(acc, lane):
    acc = acc + lane * P2
    acc = _rotl64(acc, 31)
    return acc * P1


@njit(cache=True, nogil=True)
def _xx_bytes(offsets, data, valid, h):
    for i in range(h.shape[0]):
        if not valid[i]:
            continue
        seed = h[i]
        p = offsets[i]
        end = offsets[i + 1]
        n = end - p
        if n >= 32:
            v1 = seed + P1 + P2
            v2 = seed + P2
            v3 = seed
            v4 = seed - P1
            while p <= end - 32:
                v1 = _xx_round(v1, _read_u64(data, p))
                v2 = _xx_round(v2, _read_u64(data, p + 8))
                v3 = _xx_round(v3, _read_u64(data, p + 16))
                v4 = _xx_round(v4, _read_u64(data, p + 24))
                p += 32
            x = _rotl64(v1, 1) + _rotl64(v2, 7) + _rotl64(v3, 12) + _rotl64(v4, 18)
            x = (x ^ _xx_round(np.uint64(0), v1)) * P1 + P4
            x = (x ^ _xx_round(np.uint64(0), v2)) * P1 + P4
            x = (x ^ _xx_round(np.uint64(0), v3)) * P1 + P4
            x = (x ^ _xx_round(np.uint64(0), v4)) * P1 + P4
        else:
            x = seed + P5
        x = x + np.uint64(n)
        while p <= end - 8:
            x = x ^ _xx_round(np.uint64(0), _read_u64(data, p))
            x = _rotl64(x, 27) * P1 + P4
            p += 8
        if p + 4 <= end:
            word = (np.uint64(data[p]) | (np.uint64(data[p + 1]) << np.uint64(8))
                    | (np.uint64(data[p + 2]) << np.uint64(16)) | (np.uint64(data[p + 3]) << np.uint64(24)))
            x = x ^ (word * P1)
            x = _rotl64(x, 23) * P2 + P3
            p += 4
        while p < end:
            x = x ^ (np.uint64(data[p]) * P5)
            x = _rotl64(x, 11) * P1
            p += 1
        h[i] = _fmix64(x)


# ---------------------------------------------------------------- CRC-32 (zlib's polynomial)

def _crc_table() -> np.ndarray:
    table = np.zeros(256, np.uint64)
    for n in range(256):
        c = n
        for _ in range(8):
            c = (0xEDB88320 ^ (c >> 1)) if c & 1 else (c >> 1)
        table[n] = c
    return table


_CRC_TABLE = _crc_table()


@njit(cache=True, nogil=True)
def _crc32(offsets, data, table, out):
    for i in range(out.shape[0]):
        c = np.uint64(0xFFFFFFFF)
        for j in range(offsets[i], offsets[i + 1]):
            c = table[(c ^ np.uint64(data[j])) & np.uint64(0xFF)] ^ (c >> np.uint64(8))
        out[i] = c ^ np.uint64(0xFFFFFFFF)


# ---------------------------------------------------------------- column -> Spark's hashed representation

def _valid(arr: pa.Array) -> np.ndarray:
    if arr.null_count == 0:
        return np.ones(len(arr), np.bool_)
    return arr.is_valid().to_numpy(zero_copy_only=False)


def _java_float_bits(values: np.ndarray, width: int) -> np.ndarray:
    """IEEE bits as Java's floatToIntBits/doubleToLongBits after Spark's -0.0 -> 0.0 (NaN canonical)."""
    values = np.where(values == 0, np.zeros(1, values.dtype), values)
    canonical = np.array([np.nan], values.dtype)
    values = np.where(np.isnan(values), canonical, values)
    bits = values.view(np.uint32 if width == 4 else np.uint64)
    return bits.astype(np.uint64)


def _decimal_bytes(arr: pa.Array) -> pa.Array:
    """Big-endian two's-complement bytes of each unscaled value (Java's BigInteger.toByteArray)."""
    scale = arr.type.scale
    out = []
    for v in arr.to_pylist():
        if v is None:
            out.append(None)
            continue
        unscaled = int(v.scaleb(scale, decimal.Context(prec=80)))
        out.append(unscaled.to_bytes(unscaled.bit_length() // 8 + 1, "big", signed=True))
    return pa.array(out, pa.binary())


def _decimal_longs(arr: pa.Array) -> np.ndarray:
    """Unscaled values of a decimal(p <= 18) column as uint64 bits (from the low word of decimal128)."""
    arr = arr.cast(pa.decimal128(arr.type.precision, arr.type.scale))
    words = np.frombuffer(arr.buffers()[1], dtype=np.uint64, count=2 * (len(arr) + arr.offset))[2 * arr.offset:]
    return np.ascontiguousarray(words[0::2])


def _update(arr: pa.Array, h: np.ndarray, algorithm: str) -> None:
    """Fold one argument column into the running hashes `h` (nulls leave them as they are)."""
    arr = plain_array(arr)
    t = arr.type
    if pa.types.is_null(t):
        return
    valid = _valid(arr)
    ints, longs, bytes_ = (_murmur_ints, _murmur_longs, _murmur_bytes) if algorithm == "murmur3" \
        else (_xx_ints, _xx_longs, _xx_bytes)
    if pa.types.is_boolean(t):
        ints(arr.fill_null(False).cast(pa.int64()).to_numpy().view(np.uint64), valid, h)
    elif pa.types.is_integer(t) and t.bit_width <= 32 or pa.types.is_date32(t):
        values = (arr.view(pa.int32()) if pa.types.is_date32(t) else arr).cast(pa.int64()).fill_null(0)
        ints(values.to_numpy().view(np.uint64), valid, h)
    elif pa.types.is_integer(t) or pa.types.is_timestamp(t):
        values = arr.view(pa.int64()) if pa.types.is_timestamp(t) else arr.cast(pa.int64())
        longs(values.fill_null(0).to_numpy().view(np.uint64), valid, h)
    elif pa.types.is_float32(t):
        ints(_java_float_bits(arr.fill_null(0.0).to_numpy(zero_copy_only=False), 4), valid, h)
    elif pa.types.is_floating(t):
        longs(_java_float_bits(arr.cast(pa.float64()).fill_null(0.0).to_numpy(zero_copy_only=False), 8), valid, h)
    elif pa.types.is_decimal(t):
        if t.precision <= 18:
            longs(_decimal_longs(arr), valid, h)
        else:
            offsets, data = binary_buffers(_decimal_bytes(arr))
            bytes_(offsets, data, valid, h)
    elif pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t):
        offsets, data = binary_buffers(arr)
        bytes_(offsets, data, valid, h)
    else:
        raise QuiverError(f"{'hash' if algorithm == 'murmur3' else 'xxhash64'}: values of type {t} cannot be hashed "
                          "yet; hash their fields or elements, or cast them to string")


def spark_hash(columns: list[pa.Array], algorithm: str, seed: int = 42) -> np.ndarray:
    """Spark's hash of each row of `columns`: int32 values for murmur3, int64 for xxhash64."""
    length = len(columns[0])
    mask = _M32 if algorithm == "murmur3" else np.uint64(0xFFFFFFFFFFFFFFFF)
    h = np.full(length, np.uint64(seed) & mask, np.uint64)
    for c in columns:
        _update(c, h, algorithm)
    if algorithm == "murmur3":
        return (h & _M32).astype(np.uint32).view(np.int32)
    return h.view(np.int64)


def _columns(args: list[Value]) -> list[pa.Array]:
    length = length_of(args) if any(isinstance(a, pa.Array) for a in args) else 1
    return [a if isinstance(a, pa.Array) else (pa.nulls(length, a.type) if not a.is_valid else pa.repeat(a, length))
            for a in args]


@kernel("hash", data="all")
def hash_(args: list[Value], rt: T.DataType) -> Value:
    """Murmur3 x86_32 with seed 42, argument by argument, as Spark's hash()."""
    return pa.array(spark_hash(_columns(args), "murmur3"), pa.int32())


@kernel("xxhash64", data="all")
def xxhash64(args: list[Value], rt: T.DataType) -> Value:
    """XXH64 with seed 42, argument by argument, as Spark's xxhash64()."""
    return pa.array(spark_hash(_columns(args), "xxhash64"), pa.int64())


@kernel("crc32")
def crc32(args: list[Value], rt: T.DataType) -> Value:
    """CRC-32 of the bytes as an unsigned bigint; null for null."""
    arr = args[0]
    offsets, data = binary_buffers(arr)
    out = np.empty(len(arr), np.uint64)
    _crc32(offsets, data, _CRC_TABLE, out)
    return pa.array(out.astype(np.int64), pa.int64(), mask=arr.is_null().to_numpy(zero_copy_only=False))


# ---------------------------------------------------------------- digests

def _digest(name: str, data: pa.Array) -> pa.Array:
    # Arrow has no digest kernels: hashlib per row (C code, but a Python loop)
    binary = data.cast(pa.binary())
    return pa.array([None if b is None else hashlib.new(name, b).hexdigest() for b in binary.to_pylist()], pa.string())


@kernel("md5")
def md5(args: list[Value], rt: T.DataType) -> Value:
    return _digest("md5", args[0])


@kernel("sha1", "sha")
def sha1(args: list[Value], rt: T.DataType) -> Value:
    return _digest("sha1", args[0])


@kernel("sha2")
def sha2(args: list[Value], rt: T.DataType) -> Value:
    """SHA-2 hex digest; bit length 224/256/384/512 (0 means 256), anything else gives null."""
    def apply(d: list[pa.Array], consts: list[Any]) -> pa.Array:
        bits = 256 if consts[0] == 0 else consts[0]
        if bits not in (224, 256, 384, 512):
            return all_null(len(d[0]), T.StringType())
        return _digest(f"sha{bits}", d[0])
    return per_constant([args[0]], [args[1]], apply, pa.string())


__all__ = ["spark_hash"]
