"""Hash partition ids on a device, identical to the CPU executor's (`quiver/executors/cpu/partitioning.py`).

A row must land in the same partition whichever device computed its id, so this reproduces
`quiver/executors/cpu/hashing.py` bit for bit: splitmix64 of each value, `splitmix(h * 31 + next)` across
columns, one fixed hash for null. The arithmetic runs in int64, whose wrap-around has the bits of
uint64's (right shifts are masked to be logical, the final modulo corrected to be unsigned), so it
needs no unsigned 64-bit support (torch has little) and numpy never warns. Values the CPU hashes
through their bytes or text (strings, decimals, and floats, whose bits the array API cannot
reinterpret) are hashed once per distinct value on the host, with the CPU's own function, and
gathered on the device.
"""
from __future__ import annotations

from typing import Any

import pyarrow as pa

from quiver.executors.cpu.hashing import NULL_HASH, hash_array
from quiver.executors.device.kernels.columns import (
    DeviceColumn,
    column_to_arrow,
    gather_from_host,
)

_TWO_64 = 2**64


def _signed(c: int) -> int:
    """The int64 with the bits of the uint64 `c`."""
    return c - _TWO_64 if c >= 2**63 else c


_GOLDEN = _signed(0x9E3779B97F4A7C15)
_MIX1 = _signed(0xBF58476D1CE4E5B9)
_MIX2 = _signed(0x94D049BB133111EB)
_NULL = _signed(int(NULL_HASH))


def _shift_right(z: Any, k: int, xp: Any) -> Any:
    """Logical right shift of int64 bits: the arithmetic shift with the copied sign bits cleared."""
    return xp.bitwise_right_shift(z, k) & ((1 << (64 - k)) - 1)


def splitmix64(x: Any, xp: Any) -> Any:
    """splitmix64 of int64 values taken as their 64 bits, as `executors/hashing._splitmix`."""
    z = x + _GOLDEN
    z = (z ^ _shift_right(z, 30, xp)) * _MIX1
    z = (z ^ _shift_right(z, 27, xp)) * _MIX2
    return z ^ _shift_right(z, 31, xp)


def _host_hashes(arr: pa.Array, codes: Any, xp: Any) -> Any:
    """The CPU's hash of each host value in `arr`, gathered by `codes` on the device."""
    return gather_from_host(pa.array(hash_array(arr)).view(pa.int64()), codes, xp)


def column_hashes(col: DeviceColumn, xp: Any) -> Any:
    """One int64 (uint64 bits) hash per row, equal to `executors/hashing.hash_array` of the same Arrow column."""
    v = col.values
    t = col.arrow_type
    if col.dictionary is not None:
        hashed = _host_hashes(col.dictionary, v, xp)
    elif pa.types.is_decimal(t) or xp.isdtype(v.dtype, "real floating"):
        distinct, inverse = xp.unique_inverse(v)
        hashed = _host_hashes(column_to_arrow(DeviceColumn(distinct, None, t)), inverse, xp)
    else:
        hashed = splitmix64(xp.astype(v, xp.int64), xp)
    if col.valid is not None:
        hashed = xp.where(col.valid, hashed, xp.full_like(hashed, _NULL))
    return hashed


def hash_partition_ids(keys: list[DeviceColumn], num_partitions: int, xp: Any) -> Any:
    """Partition id (int64, in [0, num_partitions)) per row from the hash of its key columns."""
    if not keys:
        raise ValueError("hash_partition_ids needs at least one key column")
    h = column_hashes(keys[0], xp)
    for col in keys[1:]:
        h = splitmix64(h * 31 + column_hashes(col, xp), xp)
    # the uint64 modulo: a negative int64 stands for itself plus 2**64
    ids = xp.remainder(h, num_partitions)
    wrapped = xp.remainder(ids + _TWO_64 % num_partitions, num_partitions)
    return xp.where(h < 0, wrapped, ids)
