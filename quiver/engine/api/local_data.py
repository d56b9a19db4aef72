"""Turning what users pass to `createDataFrame` (rows, dicts, tuples, pandas, Arrow) into one Arrow table.

Type inference follows PySpark: Python int -> bigint, float -> double, str -> string,
datetime -> timestamp, Decimal -> decimal(38,18), list -> array, dict -> map, Row -> struct.
"""
from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from quiver.engine.core import types as T
from quiver.engine.core.errors import AnalysisException
from quiver.engine.core.imports import loaded_module
from quiver.engine.core.row import Row
from quiver.engine.core.time_zones import has_instant, local_to_utc, zone_info


def to_arrow_table(data: Any, schema: Any = None, time_zone: str = "UTC", python_zone: str = "UTC") -> pa.Table:
    """An Arrow table whose column types are the canonical layouts of Spark types.

    pandas' naive timestamps are wall-clock times in `time_zone` (the session's), Python's naive datetimes in
    `python_zone` (the machine's), as PySpark takes them; each is held as the instant it is there. Aware ones,
    and Arrow data, are instants already.
    """
    struct = _schema_arg(schema)
    names = schema if isinstance(schema, (list, tuple)) and all(isinstance(s, str) for s in schema) else None
    table = _from_frame(data)
    if table is not None:
        local = _is_pandas(data)
        naive = [local and pa.types.is_timestamp(t) and t.tz is None for t in table.schema.types]
        table = normalize_table(table)
        if any(naive):
            table = pa.Table.from_arrays(
                [local_to_utc(c, time_zone) if n else c for c, n in zip(table.columns, naive)], schema=table.schema)
        if names is not None:
            if len(names) != table.num_columns:
                raise AnalysisException(f"schema names {list(names)} do not match the {table.num_columns} columns of "
                                        "the data")
            table = table.rename_columns(list(names))
        if struct is not None:
            table = _apply_schema(table, struct)
        return table
    rows = list(data)
    if isinstance(struct, T.DataType) and not isinstance(struct, T.StructType):
        struct = T.StructType([T.StructField("value", struct)])
        rows = [(r,) for r in rows]
    if struct is not None:
        columns = _columns(rows, struct.names)
        arrays = [_array(col, f.dataType, f.name, python_zone) for col, f in zip(columns, struct.fields)]
        return pa.Table.from_arrays(arrays, schema=_arrow_schema(struct))
    column_names = list(names) if names is not None else _infer_names(rows)
    columns = _columns(rows, column_names)
    fields = []
    for name, col in zip(column_names, columns):
        fields.append(T.StructField(name, infer_type(col, name), True))
    inferred = T.StructType(fields)
    arrays = [_array(col, f.dataType, f.name, python_zone) for col, f in zip(columns, inferred.fields)]
    return pa.Table.from_arrays(arrays, schema=_arrow_schema(inferred))


def _is_pandas(data: Any) -> bool:
    pd = loaded_module("pandas")
    return pd is not None and isinstance(data, pd.DataFrame)


def _in_zone(v: Any, dtype: T.DataType, zone: Any) -> Any:
    """`v` with each naive datetime where `dtype` holds an instant given `zone` (a ZoneInfo), so Arrow stores the
    instant it is there. Python's rule for a repeated or skipped time (fold=0) is Java's: the offset before."""
    if v is None:
        return None
    if isinstance(dtype, T.TimestampType):
        return v.replace(tzinfo=zone) if isinstance(v, dt.datetime) and v.tzinfo is None else v
    if isinstance(dtype, T.ArrayType) and isinstance(v, (list, tuple)):
        return [_in_zone(x, dtype.elementType, zone) for x in v]
    if isinstance(dtype, T.MapType) and isinstance(v, dict):
        return {_in_zone(k, dtype.keyType, zone): _in_zone(x, dtype.valueType, zone) for k, x in v.items()}
    if isinstance(dtype, T.StructType):
        if isinstance(v, Row):
            v = v.asDict()
        if isinstance(v, dict):
            return {f.name: _in_zone(v.get(f.name), f.dataType, zone) for f in dtype.fields}
        if isinstance(v, (list, tuple)):
            return tuple(_in_zone(x, f.dataType, zone) for x, f in zip(v, dtype.fields))
    return v



def _arrow_schema(struct: T.StructType) -> pa.Schema:
    return pa.schema([pa.field(f.name, f.dataType.to_arrow(), True) for f in struct.fields])


def declared_types(schema: Any, width: int) -> list[T.DataType] | None:
    """The column types a schema argument declares, or None when it declares none. They are the
    columns' types as given: `timestamp_ntz` has the same Arrow layout as `timestamp`, so the
    table alone cannot tell them apart."""
    struct = _schema_arg(schema)
    if isinstance(struct, T.StructType):
        return [f.dataType for f in struct.fields] if len(struct.fields) == width else None
    return [struct] if struct is not None and width == 1 else None


def _schema_arg(schema: Any) -> T.DataType | None:
    if schema is None or (isinstance(schema, (list, tuple)) and all(isinstance(s, str) for s in schema)):
        return None
    if isinstance(schema, str):
        return T.parse_data_type(schema)
    if isinstance(schema, T.DataType):
        return schema
    raise AnalysisException(
        f"schema must be a DDL string, a StructType, a DataType or a list of column names, got {type(schema).__name__}"
    )


def _from_frame(data: Any) -> pa.Table | None:
    """`data` as an Arrow table where it is tabular: Arrow itself, a pandas DataFrame (without its index),
    or anything exporting the Arrow PyCapsule interface (a Polars DataFrame, a DuckDB relation, a
    RecordBatchReader, another engine's table); None for rows."""
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    # A pandas DataFrame exists only once pandas is imported: rows need no pandas import (a first query's time).
    pd = loaded_module("pandas")
    if pd is not None and isinstance(data, pd.DataFrame):
        return pa.Table.from_pandas(data, preserve_index=False)
    if hasattr(data, "__arrow_c_stream__"):
        return pa.table(data)
    if hasattr(data, "__arrow_c_array__"):
        return pa.Table.from_batches([pa.record_batch(data)])
    return None


def normalize_table(table: pa.Table) -> pa.Table:
    """Cast every column to the Arrow layout of its Spark type (e.g. large_string -> string)."""
    fields, arrays = [], []
    for f, col in zip(table.schema, table.columns):
        target = T.from_arrow(f.type).to_arrow()
        if col.type != target:
            if pa.types.is_dictionary(col.type):
                # Decoded by the values in their Spark layout (Arrow takes from no string view, Polars' strings).
                chunks: list[Any] = list(col.chunks)
                decoded = [c.dictionary.cast(target).take(c.indices) for c in chunks]
                col = pa.chunked_array(decoded or [pa.array([], target)])
            col = col.cast(target)
        arrays.append(col)
        fields.append(pa.field(f.name, target, True))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def _apply_schema(table: pa.Table, struct: T.DataType) -> pa.Table:
    if not isinstance(struct, T.StructType):
        raise AnalysisException("a schema for tabular data must be a StructType or a DDL string of columns")
    if len(struct.fields) != table.num_columns:
        raise AnalysisException(
            f"schema has {len(struct.fields)} columns ({', '.join(struct.names)}) but the data has "
            f"{table.num_columns} ({', '.join(table.column_names)})"
        )
    arrays = []
    for f, col in zip(struct.fields, table.columns):
        try:
            arrays.append(col.cast(f.dataType.to_arrow()))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise AnalysisException(f"column '{f.name}' of type {col.type} cannot be read as "
                                    f"{f.dataType.simpleString()}") from exc
    return pa.Table.from_arrays(arrays, schema=_arrow_schema(struct))


def _infer_names(rows: list) -> list[str]:
    if not rows:
        raise AnalysisException("cannot infer a schema from an empty list; pass a schema")
    first = rows[0]
    if isinstance(first, Row) and first.__fields__:
        return list(first.__fields__)
    if isinstance(first, dict):
        return sorted(first.keys())  # PySpark infers dict rows with their keys sorted
    if isinstance(first, (tuple, list)):
        return [f"_{i + 1}" for i in range(len(first))]
    if hasattr(first, "__dict__") and not isinstance(first, (str, bytes)):
        return list(vars(first).keys())
    raise AnalysisException(
        f"cannot infer a schema from rows of type {type(first).__name__}; pass tuples, dicts or Rows, or give a schema"
    )


def _columns(rows: list, names: Sequence[str]) -> list[list]:
    cols: list[list] = [[] for _ in names]
    for i, r in enumerate(rows):
        if isinstance(r, dict):
            values = [r.get(n) for n in names]
        elif isinstance(r, Row) and r.__fields__:
            d = dict(zip(r.__fields__, r))
            values = [d.get(n) for n in names] if set(names) <= set(d) else list(r)
        elif isinstance(r, (tuple, list)):
            values = list(r)
        elif hasattr(r, "__dict__"):
            values = [getattr(r, n, None) for n in names]
        else:
            values = [r]
        if len(values) != len(names):
            raise AnalysisException(
                f"row {i} has {len(values)} values but the schema has {len(names)} columns ({', '.join(names)}): {r!r}"
            )
        for c, v in zip(cols, values):
            c.append(v)
    return cols


def infer_type(values: list, name: str) -> T.DataType:
    """The Spark type of a column of Python values, merging across rows as PySpark does."""
    out: T.DataType = T.NullType()
    for v in values:
        if v is None:
            continue
        t = _python_type(v, name)
        out = _merge(out, t, name)
    if isinstance(out, T.NullType):
        raise AnalysisException(f"cannot determine the type of column '{name}': every value is None; pass a schema")
    return out


def _python_type(v: Any, name: str) -> T.DataType:
    if isinstance(v, bool):
        return T.BooleanType()
    if isinstance(v, int):
        return T.LongType()
    if isinstance(v, float):
        return T.DoubleType()
    if isinstance(v, str):
        return T.StringType()
    if isinstance(v, dt.datetime):
        return T.TimestampType()
    if isinstance(v, dt.date):
        return T.DateType()
    if isinstance(v, decimal.Decimal):
        return T.DecimalType(38, 18)
    if isinstance(v, (bytes, bytearray)):
        return T.BinaryType()
    if isinstance(v, Row) and v.__fields__:
        return T.StructType([T.StructField(k, _python_type(x, k) if x is not None else T.NullType())
                             for k, x in zip(v.__fields__, v)])
    if isinstance(v, tuple):
        return T.StructType([T.StructField(f"_{i + 1}", _python_type(x, name) if x is not None else T.NullType())
                             for i, x in enumerate(v)])
    if isinstance(v, list):
        elem: T.DataType = T.NullType()
        for x in v:
            if x is not None:
                elem = _merge(elem, _python_type(x, name), name)
        return T.ArrayType(elem)
    if isinstance(v, dict):
        kt: T.DataType = T.NullType()
        vt: T.DataType = T.NullType()
        for k, x in v.items():
            kt = _merge(kt, _python_type(k, name), name)
            if x is not None:
                vt = _merge(vt, _python_type(x, name), name)
        return T.MapType(kt, vt)
    raise AnalysisException(f"column '{name}' holds a value of unsupported type {type(v).__name__}: {v!r}")


def _merge(a: T.DataType, b: T.DataType, name: str) -> T.DataType:
    """The type that holds values of types `a` and `b`; None (void) gives way to any type, also when nested."""
    if isinstance(a, T.NullType):
        return b
    if isinstance(b, T.NullType) or a == b:
        return a
    if isinstance(a, T.ArrayType) and isinstance(b, T.ArrayType):
        return T.ArrayType(_merge(a.elementType, b.elementType, name))
    if isinstance(a, T.MapType) and isinstance(b, T.MapType):
        return T.MapType(_merge(a.keyType, b.keyType, name), _merge(a.valueType, b.valueType, name))
    if isinstance(a, T.StructType) and isinstance(b, T.StructType) and a.names == b.names:
        return T.StructType([T.StructField(x.name, _merge(x.dataType, y.dataType, name))
                             for x, y in zip(a.fields, b.fields)])
    raise AnalysisException(
        f"column '{name}' mixes values of type {a.simpleString()} and {b.simpleString()}; "
        "make them one type or pass a schema"
    )


def _array(values: list, dtype: T.DataType, name: str, time_zone: str = "UTC") -> pa.Array:
    arrow_type = dtype.to_arrow()
    if time_zone != "UTC" and has_instant(dtype):
        zone = zone_info(time_zone)
        values = [_in_zone(v, dtype, zone) for v in values]
    if isinstance(dtype, T.StructType):
        values = [v.asDict() if isinstance(v, Row) else v for v in values]
    if isinstance(dtype, T.MapType):
        values = [list(v.items()) if isinstance(v, dict) else v for v in values]
    try:
        return pa.array(values, type=arrow_type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError) as exc:
        bad = next((v for v in values if v is not None and not _fits(v, arrow_type)), None)
        raise AnalysisException(
            f"column '{name}' of type {dtype.simpleString()} cannot hold the value {bad!r}"
            f"{' of type ' + type(bad).__name__ if bad is not None else ''}: {exc}"
        ) from exc


def _fits(v: Any, arrow_type: pa.DataType) -> bool:
    try:
        pa.array([v], type=arrow_type)
        return True
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
        return False
