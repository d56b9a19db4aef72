"""The device data model (flat arrays of any array-API namespace) and the Arrow edge it is built at.

A kernel sees a `DeviceColumn`: one 1-D array of values in the column's storage type, a boolean
validity array and, for strings, a host-side dictionary the values index. Everything that reads
Arrow buffers or builds host tables for the kernels lives here, so the kernels themselves use the
array API alone and run unchanged on numpy, CuPy or torch.

Decimals of every precision travel as int64 unscaled values. Up to precision 18 every value fits;
wider ones (Spark widens a decimal(15,2) sum to decimal(25,2), a product of two to decimal(31,4))
nearly always do, so a column is moved while its values fit and raises `DeviceFallback` when one
does not: the task then reruns on the CPU, which computes in 128 bits.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import array_api_compat
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from quiver.executors.base import DeviceFallback

_NUMERIC_STORAGE = {
    pa.int8(): "int8", pa.int16(): "int16", pa.int32(): "int32", pa.int64(): "int64",
    pa.uint8(): "uint8", pa.uint16(): "uint16", pa.uint32(): "uint32", pa.uint64(): "uint64",
    pa.float32(): "float32", pa.float64(): "float64",
}
# Every decimal up to this precision fits int64; wider ones are checked as they move to the device.
DECIMAL_INT64_PRECISION = 18
INT64_MAX = 2**63 - 1


@dataclass(frozen=True)
class DeviceColumn:
    """One column on a device: values in storage type (strings: int32 codes into `dictionary`).

    `valid` is None when no slot is null; a null slot's value is arbitrary but harmless (finite, in range).
    """

    values: Any
    valid: Any | None
    arrow_type: pa.DataType
    dictionary: pa.Array | None = None

    @property
    def length(self) -> int:
        return int(self.values.shape[0])


@dataclass(frozen=True)
class DeviceBatch:
    """A record batch whose columns live on one device."""

    names: tuple[str, ...]
    columns: tuple[DeviceColumn, ...]
    num_rows: int

    def column(self, name: str) -> DeviceColumn:
        """The column called `name`; a KeyError names it and the columns present."""
        try:
            return self.columns[self.names.index(name)]
        except ValueError:
            raise KeyError(f"column {name!r} is not in the device batch; "
                           f"columns: {', '.join(self.names) or '(none)'}") from None


def _is_string(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def is_string_type(t: pa.DataType) -> bool:
    """Whether a device column of Arrow type `t` holds dictionary codes of strings."""
    return _is_string(t) or (pa.types.is_dictionary(t) and _is_string(t.value_type))


def device_type_supported(t: pa.DataType) -> bool:
    """Whether a column of Arrow type `t` has a device representation (see `to_device`)."""
    if t in _NUMERIC_STORAGE or pa.types.is_boolean(t) or pa.types.is_date32(t) or is_string_type(t):
        return True
    if pa.types.is_timestamp(t):
        return t.unit == "us"
    return pa.types.is_decimal128(t)


def storage_dtype(t: pa.DataType, xp: Any) -> Any:
    """The namespace dtype a device column of Arrow type `t` stores its values in."""
    if is_string_type(t) or pa.types.is_date32(t):
        return xp.int32
    if pa.types.is_timestamp(t) or pa.types.is_decimal(t):
        return xp.int64
    if pa.types.is_boolean(t):
        return xp.bool
    if t in _NUMERIC_STORAGE:
        return getattr(xp, _NUMERIC_STORAGE[t])
    raise TypeError(f"Arrow type {t} has no device representation")


def to_host(x: Any) -> np.ndarray:
    """A device array as a numpy array (zero-copy where it already lives in host memory)."""
    if array_api_compat.is_cupy_array(x) or array_api_compat.is_torch_array(x):
        x = array_api_compat.to_device(x, "cpu")
    return np.from_dlpack(x) if not isinstance(x, np.ndarray) else x


def _move(host: np.ndarray, xp: Any, device: Any) -> Any:
    return xp.asarray(host) if device is None else xp.asarray(host, device=device)


def column_to_device(arr: pa.Array | pa.ChunkedArray, xp: Any, device: Any = None,
                     name: str | None = None) -> DeviceColumn:
    """One Arrow array as a device column; TypeError when its type has no device representation,
    DeviceFallback (naming column `name`) when a decimal holds a value beyond 64 bits."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    t = arr.type
    if not device_type_supported(t):
        raise TypeError(f"Arrow type {t} has no device representation")
    dictionary = None
    if is_string_type(t):
        encoded = _dictionary_encoded(arr)
        dictionary = encoded.dictionary
        arr = encoded.indices.cast(pa.int32())
    valid = np.asarray(arr.is_valid()) if arr.null_count else None
    if pa.types.is_decimal(t):
        values = _unscaled(arr, valid, name)
    else:
        storage = (arr.view(pa.int32()) if pa.types.is_date32(t)
                   else arr.view(pa.int64()) if pa.types.is_timestamp(t) else arr)
        filler = False if pa.types.is_boolean(t) else 0
        values = (storage.fill_null(filler) if valid is not None else storage).to_numpy(zero_copy_only=False)
    return DeviceColumn(_move(values, xp, device), None if valid is None else _move(valid, xp, device), t, dictionary)


def _dictionary_encoded(arr: pa.Array) -> pa.DictionaryArray:
    """`arr` as a dictionary array whose dictionary holds distinct non-null strings, so codes compare as values."""
    if pa.types.is_dictionary(arr.type):
        d = arr.dictionary
        if d.null_count == 0 and pc.count_distinct(d).as_py() == len(d):
            return arr
        arr = arr.dictionary_decode()
    return pc.dictionary_encode(arr)


def _unscaled(arr: pa.Array, valid: np.ndarray | None, name: str | None) -> np.ndarray:
    """The unscaled int64 values of a decimal128 array: the low word of each slot; nulls read as 0.

    Above precision 18 each valid slot's high word must be the sign extension of its low word (the
    value fits 64 bits), else DeviceFallback names the column and the first value that does not.
    """
    if len(arr) == 0:
        return np.zeros(0, np.int64)
    words = np.frombuffer(arr.buffers()[1], dtype=np.int64, count=2 * (arr.offset + len(arr)))
    low = words[2 * arr.offset::2]
    if arr.type.precision > DECIMAL_INT64_PRECISION:
        beyond = words[2 * arr.offset + 1::2] != (low >> 63)
        if valid is not None:
            beyond &= valid
        if beyond.any():
            row = int(np.argmax(beyond))
            column = f"column {name!r}" if name is not None else "a column"
            raise DeviceFallback(
                f"{column} of type {arr.type} holds {arr[row].as_py()} (row {row}), beyond the 64 bits a "
                f"device holds a decimal in ({int(beyond.sum())} of its {len(arr)} values do not fit)")
    return np.where(valid, low, 0) if valid is not None else np.ascontiguousarray(low)


def column_to_arrow(col: DeviceColumn) -> pa.Array:
    """A device column back as an Arrow array of its `arrow_type`."""
    values = to_host(col.values)
    valid = None if col.valid is None else to_host(col.valid).astype(np.bool_, copy=False)
    mask = None if valid is None or valid.all() else ~valid
    t = col.arrow_type
    n = len(values)
    if col.dictionary is not None:
        indices = pa.array(values.astype(np.int32, copy=False), pa.int32(), mask=mask)
        if pa.types.is_dictionary(t):
            return pa.DictionaryArray.from_arrays(indices.cast(t.index_type), col.dictionary.cast(t.value_type))
        if len(col.dictionary) == 0:
            return pa.nulls(n, t)
        return col.dictionary.take(indices).cast(t)
    if pa.types.is_decimal(t):
        words = np.empty((n, 2), dtype=np.int64)
        words[:, 0] = values
        np.right_shift(words[:, 0], 63, out=words[:, 1])
        validity = None if mask is None else pa.array(~mask).buffers()[1]
        null_count = 0 if mask is None else int(mask.sum())
        return pa.Array.from_buffers(t, n, [validity, pa.py_buffer(words)], null_count=null_count)
    if pa.types.is_date32(t) or pa.types.is_timestamp(t):
        storage = pa.int32() if pa.types.is_date32(t) else pa.int64()
        return pa.array(values, storage, mask=mask).view(t)
    return pa.array(values, t, mask=mask)


def to_device(batch: pa.RecordBatch, xp: Any, device: Any = None, labels: Sequence[str] | None = None) -> DeviceBatch:
    """Move a record batch onto the device of namespace `xp`; TypeError names a column without a device type,
    DeviceFallback one holding a decimal beyond 64 bits (by its `labels` entry: the user's name of the column)."""
    columns = []
    for i, (name, arr) in enumerate(zip(batch.schema.names, batch.columns)):
        label = labels[i] if labels is not None else name
        if not device_type_supported(arr.type):
            raise TypeError(
                f"column {label!r} has type {arr.type}, which has no device representation; devices hold "
                "integers, float32/64, bool, date32, timestamp[us], decimal128 and strings"
            )
        columns.append(column_to_device(arr, xp, device, label))
    return DeviceBatch(tuple(batch.schema.names), tuple(columns), batch.num_rows)


def to_arrow(batch: DeviceBatch) -> pa.RecordBatch:
    """A device batch back as an Arrow record batch: the inverse of `to_device`."""
    arrays = [column_to_arrow(c) for c in batch.columns]
    if not arrays:  # Arrow keeps the row count of a batch without columns only through an empty struct
        return pa.RecordBatch.from_struct_array(pa.array([{}] * batch.num_rows, pa.struct([])))
    return pa.RecordBatch.from_arrays(arrays, names=list(batch.names))


def _nbytes(x: Any) -> int:
    xp = array_api_compat.array_namespace(x)
    if x.dtype == xp.bool:
        width = 1
    elif xp.isdtype(x.dtype, "integral"):
        width = xp.iinfo(x.dtype).bits // 8
    else:
        width = xp.finfo(x.dtype).bits // 8
    return int(x.shape[0]) * width


def device_nbytes(batch: DeviceBatch) -> int:
    """Bytes the batch takes on the device (values and validity; string dictionaries stay on the host)."""
    return sum(_nbytes(c.values) + (0 if c.valid is None else _nbytes(c.valid)) for c in batch.columns)


def gather_from_host(table: pa.Array, codes: Any, xp: Any) -> Any:
    """`table[codes]` on the device of `codes`, for a small null-free host table indexed by dictionary code.

    The table is padded with one zero entry so that the code 0 of a null slot is in range even when
    the table (an all-null column's dictionary) is empty.
    """
    host = table.to_numpy(zero_copy_only=False)
    host = np.concatenate([host, np.zeros(1, dtype=host.dtype)])
    return xp.take(xp.asarray(host, device=array_api_compat.device(codes)), codes)


def unify_dictionaries(columns: list[DeviceColumn], xp: Any) -> list[DeviceColumn]:
    """String columns re-coded into one shared dictionary, so equal strings have equal codes in all of them.

    The first column's dictionary leads the shared one, so its codes stay as they are; the other
    columns' codes are remapped through a host-built table.
    """
    base = columns[0].dictionary
    if all(c.dictionary is base or c.dictionary.equals(base) for c in columns[1:]):
        return list(columns)
    shared = base
    for c in columns[1:]:
        d = c.dictionary.cast(base.type)
        missing = d.filter(pc.invert(pc.is_in(d, value_set=shared)))
        if len(missing):
            shared = pa.concat_arrays([shared, missing])
    out = [replace(columns[0], dictionary=shared)]
    for c in columns[1:]:
        mapping = pc.index_in(c.dictionary.cast(base.type), value_set=shared).cast(pa.int32())
        out.append(replace(c, values=gather_from_host(mapping, c.values, xp), dictionary=shared))
    return out


def dictionary_ranks(dictionary: pa.Array) -> pa.Array:
    """Each dictionary entry's 0-based position in byte order (Spark's string order), as int64."""
    if len(dictionary) == 0:
        return pa.array([], pa.int64())
    return pc.subtract(pc.rank(dictionary, sort_keys="ascending"), 1).cast(pa.int64())


def largest_magnitude(values: Any, valid: Any | None, xp: Any) -> int:
    """max |v| over the valid slots of int64 `values`, as a Python int (0 when there are none).

    From the max and the min, since abs(-2**63) wraps back to itself in int64.
    """
    if int(values.shape[0]) == 0:
        return 0
    if valid is not None:
        values = xp.where(valid, values, xp.zeros_like(values))
    return max(int(xp.max(values)), -int(xp.min(values)))


def storage_scalar(value: Any, t: pa.DataType) -> Any:
    """A non-null constant of Arrow type `t` as the Python number its device column stores."""
    col = column_to_device(pa.array([value], t), array_api_compat.numpy)
    return col.values.tolist()[0]
