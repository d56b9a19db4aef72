"""Instants and wall-clock times: a Spark TIMESTAMP is an instant, kept as microseconds since the epoch in UTC
(Arrow's naive `timestamp[us]`); its wall-clock time in a zone is a TIMESTAMP_NTZ of the same layout.

`utc_to_local` and `local_to_utc` convert between the two as Java's `java.time` does for Spark:

- a wall-clock time that occurs twice (the hour clocks go back) is the earlier instant, under the offset in
  force before the change;
- a wall-clock time that never occurs (the hour clocks skip) moves forward by the length of the gap
  (02:30 on a spring-forward night in Los Angeles is 03:30 PDT), the offset before the change applied.

Zones are named as `conf.normalize_time_zone` gives them (`UTC`, `+05:30`, `Europe/Oslo`); Arrow's tz
database resolves region IDs.
"""
from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

from quiver.engine.core import types as T

MICROS = pa.timestamp("us")
_DAY_MICROS = 86_400_000_000


def zone_info(zone: str) -> datetime.tzinfo:
    """Python's tzinfo for a zone named as `conf.normalize_time_zone` names it (an offset, a region ID, UTC)."""
    if zone == "UTC":
        return datetime.timezone.utc
    if zone.startswith(("+", "-")):
        sign = 1 if zone[0] == "+" else -1
        return datetime.timezone(sign * datetime.timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])))
    import zoneinfo

    return zoneinfo.ZoneInfo(zone)


def _local_micros(instants: np.ndarray, zone: str) -> np.ndarray:
    """The wall-clock microseconds in `zone` of UTC instants (int64 microseconds)."""
    import pyarrow.compute as pc  # not at `import quiver`, which binds zones without converting any

    aware: Any = pa.array(instants, pa.int64()).cast(pa.timestamp("us", "UTC")).cast(pa.timestamp("us", zone))
    return pc.local_timestamp(aware).cast(pa.int64()).to_numpy()


def _micros(stamps: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray | None]:
    """`stamps`' int64 microseconds with nulls as 0, and the null mask (None without nulls)."""
    if isinstance(stamps, pa.ChunkedArray):
        stamps = stamps.combine_chunks()
    if stamps.type != MICROS:
        stamps = stamps.cast(pa.timestamp(stamps.type.unit)).cast(MICROS) if pa.types.is_timestamp(stamps.type) \
            else stamps.cast(MICROS)
    values = stamps.view(pa.int64())
    mask = values.is_null().to_numpy(zero_copy_only=False) if values.null_count else None
    return values.fill_null(0).to_numpy(zero_copy_only=False), mask


def _timestamps(micros: np.ndarray, mask: np.ndarray | None) -> pa.Array:
    return pa.array(micros, pa.int64(), mask=mask).view(MICROS)


def utc_to_local(stamps: Any, zone: str) -> Any:
    """The wall-clock time in `zone` of each instant (both as naive `timestamp[us]`)."""
    if zone == "UTC":
        return stamps
    micros, mask = _micros(stamps)
    return _timestamps(_local_micros(micros, zone), mask)


def local_to_utc_micros(local: np.ndarray, zone: str) -> np.ndarray:
    """The instant (UTC microseconds) of each wall-clock time `local` (microseconds) in `zone`, by Java's rules
    for the times a change of offset repeats or skips (see the module's docstring)."""
    if zone == "UTC" or len(local) == 0:
        return local
    # The offsets in force a day either side: the true instant lies within 18 hours of the wall-clock time,
    # so these are the offsets before and after any change near it (equal where there is none).
    before = _local_micros(local - _DAY_MICROS, zone) - (local - _DAY_MICROS)
    after = _local_micros(local + _DAY_MICROS, zone) - (local + _DAY_MICROS)
    under_before, under_after = local - before, local - after
    before_holds = _local_micros(under_before, zone) - under_before == before
    after_holds = _local_micros(under_after, zone) - under_after == after
    return np.where(before_holds | ~after_holds, under_before, under_after)


def local_to_utc(stamps: Any, zone: str) -> Any:
    """The instant of each wall-clock time in `zone` (both as naive `timestamp[us]`)."""
    if zone == "UTC":
        return stamps
    micros, mask = _micros(stamps)
    return _timestamps(local_to_utc_micros(micros, zone), mask)


def _convert_values(values: Any, dtype: T.DataType, convert: Callable[[pa.Array], pa.Array]) -> Any:
    """`values` with `convert` applied to every instant (TIMESTAMP) in it, inside structs, arrays and maps too."""
    if isinstance(values, pa.ChunkedArray):
        return pa.chunked_array([_convert_values(c, dtype, convert) for c in values.chunks], values.type)
    if isinstance(dtype, T.TimestampType):
        return convert(values).cast(values.type)
    if isinstance(dtype, T.StructType) and any(has_instant(f.dataType) for f in dtype.fields):
        fields = [_convert_values(values.field(i), f.dataType, convert) for i, f in enumerate(dtype.fields)]
        return pa.StructArray.from_arrays(fields, fields=list(values.type), mask=values.is_null())
    if isinstance(dtype, T.ArrayType) and has_instant(dtype.elementType):
        inner = _convert_values(values.values, dtype.elementType, convert)
        return type(values).from_arrays(values.offsets, inner, type=values.type, mask=values.is_null())
    if isinstance(dtype, T.MapType) and (has_instant(dtype.keyType) or has_instant(dtype.valueType)):
        keys = _convert_values(values.keys, dtype.keyType, convert)
        items = _convert_values(values.items, dtype.valueType, convert)
        return pa.MapArray.from_arrays(values.offsets, keys, items, type=values.type, mask=values.is_null())
    return values


def has_instant(dtype: T.DataType) -> bool:
    if isinstance(dtype, T.TimestampType):
        return True
    if isinstance(dtype, T.StructType):
        return any(has_instant(f.dataType) for f in dtype.fields)
    if isinstance(dtype, T.ArrayType):
        return has_instant(dtype.elementType)
    if isinstance(dtype, T.MapType):
        return has_instant(dtype.keyType) or has_instant(dtype.valueType)
    return False


def table_in_zone(table: pa.Table, schema: T.StructType, zone: str) -> pa.Table:
    """A result table with each instant as its wall-clock time in `zone`: what `collect()`, `toPandas()` and
    `show()` give (PySpark's Python datetimes are the session's local times)."""
    if zone == "UTC" or not any(has_instant(f.dataType) for f in schema.fields):
        return table
    columns = [_convert_values(table.column(i), f.dataType, lambda a: utc_to_local(a, zone))
               for i, f in enumerate(schema.fields)]
    return pa.Table.from_arrays(columns, schema=table.schema)


__all__ = ["utc_to_local", "local_to_utc", "local_to_utc_micros", "table_in_zone", "has_instant",
           "zone_info", "MICROS"]
