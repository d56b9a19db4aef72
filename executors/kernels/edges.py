"""The host <-> device edge for the executors: the kernels' layout, plus decimals wider than 18 digits.

Spark widens decimal sums to 10 more digits than their input (a decimal(15,2) column sums to a
decimal(25,2)), although the values nearly always fit 64 bits. Such a column travels as int64
unscaled values when every value fits, and a value that does not is an error naming the column,
since the device has no wider integer.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
from quiver.engine.errors import QuiverError
from quiver.executors.decimal_kernels import FixedPoint, decimal_array, unscaled_int64
from quiver.executors.kernels.columns import (
    DeviceBatch,
    DeviceColumn,
    device_type_supported,
)
from quiver.executors.kernels.columns import to_arrow as _kernel_to_arrow
from quiver.executors.kernels.columns import to_device as _kernel_to_device


def layout_supported(t: pa.DataType) -> bool:
    """Whether a column of Arrow type `t` can live on a device (wide decimals while their values fit)."""
    return device_type_supported(t) or _wide_decimal(t)


def to_device(batch: pa.RecordBatch, xp: Any) -> DeviceBatch:
    """`batch` on the device of namespace `xp`."""
    wide = [i for i, f in enumerate(batch.schema) if _wide_decimal(f.type)]
    if not wide:
        return _kernel_to_device(batch, xp)
    narrow = [i for i in range(batch.num_columns) if i not in wide]
    moved = _kernel_to_device(batch.select(narrow), xp) if narrow else None
    columns: list[DeviceColumn | None] = [None] * batch.num_columns
    for j, i in enumerate(narrow):
        columns[i] = moved.columns[j]
    for i in wide:
        column = batch.column(i)
        unscaled = unscaled_int64(column)
        if unscaled is None:
            raise QuiverError(
                f"column {batch.schema.field(i).name} ({column.type}) holds a value beyond 18 digits, which a device "
                "cannot hold; run this query with quiver.placement=cpu")
        valid = np.asarray(column.is_valid()) if column.null_count else None
        columns[i] = DeviceColumn(xp.asarray(unscaled[0]), xp.asarray(valid) if valid is not None else None, column.type)
    return DeviceBatch(tuple(batch.schema.names), tuple(columns), batch.num_rows)


def to_arrow(batch: DeviceBatch) -> pa.RecordBatch:
    """`batch` back on the host as Arrow."""
    wide = [i for i, c in enumerate(batch.columns) if _wide_decimal(c.arrow_type)]
    if not wide:
        return _kernel_to_arrow(batch)
    narrow = [i for i in range(len(batch.columns)) if i not in wide]
    host = _kernel_to_arrow(DeviceBatch(tuple(batch.names[i] for i in narrow),
                                        tuple(batch.columns[i] for i in narrow), batch.num_rows)) if narrow else None
    arrays: list[pa.Array | None] = [None] * len(batch.columns)
    for j, i in enumerate(narrow):
        arrays[i] = host.column(j)
    for i in wide:
        column = batch.columns[i]
        values = np.asarray(_to_numpy(column.values), dtype=np.int64)
        valid = np.asarray(_to_numpy(column.valid), dtype=bool) if column.valid is not None else None
        arrays[i] = decimal_array(FixedPoint(values, column.arrow_type.scale, 0, valid), batch.num_rows, column.arrow_type)
    return pa.RecordBatch.from_arrays(arrays, names=list(batch.names))


def _wide_decimal(t: pa.DataType) -> bool:
    return pa.types.is_decimal128(t) and t.precision > 18


def _to_numpy(values: Any) -> np.ndarray:
    if hasattr(values, "get"):  # CuPy
        return values.get()
    if hasattr(values, "cpu") and hasattr(values, "numpy"):  # torch
        return values.cpu().numpy()
    return np.asarray(values)


__all__ = ["layout_supported", "to_arrow", "to_device"]
