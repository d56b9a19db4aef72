"""PostgreSQL types against Quiver's: how each column of a result is selected and which Quiver
type it arrives as (Spark's PostgreSQL mapping), and the column type a Quiver type is written as."""
from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from quiver.connectors.postgres_connection import JdbcError, quote_identifier
from quiver.engine.core import types as T
from quiver.engine.core.errors import AnalysisException

_TYPE_KEY = b"POSTGRESQL:type"
_TYPMOD_KEY = b"POSTGRESQL:typmod"
MAX_PRECISION = 38
# Spark reads a numeric without precision (and one wider than 38 digits) as decimal(38, 18).
DEFAULT_SCALE = 18

_KINDS = {
    "int2": "integral", "int4": "integral", "int8": "integral",
    "float4": "fractional", "float8": "fractional",
    "bool": "boolean", "text": "string", "varchar": "string", "bytea": "binary",
    "date": "date", "timestamp": "timestamp", "timestamptz": "timestamptz",
}
# Array element types read as Arrow lists; other arrays arrive as their text form.
_ARRAY_ELEMENTS = ("_int2", "_int4", "_int8", "_float4", "_float8", "_bool", "_text", "_varchar", "_date",
                   "_timestamp")
# Read as the driver returns them (char(n) keeps its padding, as in Spark), but not filtered in SQL,
# whose comparisons ignore that padding.
_PADDED = ("bpchar", "name")


@dataclass(frozen=True)
class ColumnRead:
    """How one column of a table or query is read.

    `select` is the SQL that produces it (the quoted name, or a cast where Quiver's type differs
    from what the driver returns); `kind` says what the stored column is, and decides whether a
    filter or a partition bound on it can be written in SQL ('other' for anything read as text).
    """

    name: str
    pg_type: str
    select: str
    arrow_type: pa.DataType
    kind: str

    @property
    def filterable(self) -> bool:
        """Whether the stored value is the value Quiver sees, so SQL comparisons on it agree."""
        return self.kind in _KINDS.values() or self.kind == "decimal"


def column_reads(schema: pa.Schema) -> list[ColumnRead]:
    """How to read each column of a result whose (empty) Arrow schema the driver returned."""
    seen: set[str] = set()
    reads = []
    for field in schema:
        if field.name in seen:
            raise AnalysisException(f"the JDBC query returns column {field.name!r} more than once; "
                                    "give the columns distinct names (AS ...)")
        seen.add(field.name)
        reads.append(_column_read(field))
    return reads


def _column_read(field: pa.Field) -> ColumnRead:
    meta = field.metadata or {}
    pg_type = meta.get(_TYPE_KEY, b"").decode()
    column = quote_identifier(field.name)
    if pg_type in _KINDS:
        return ColumnRead(field.name, pg_type, column, T.from_arrow(_storage(field.type)).to_arrow(), _KINDS[pg_type])
    if pg_type == "numeric":
        return _numeric_read(field, column, int(meta.get(_TYPMOD_KEY, b"-1")))
    if pg_type == "time":
        # Spark reads TIME as a timestamp on 1970-01-01.
        return ColumnRead(field.name, pg_type, f"(DATE '1970-01-01' + {column})", pa.timestamp("us"), "other")
    if pg_type in _ARRAY_ELEMENTS and pa.types.is_list(field.type):
        return ColumnRead(field.name, pg_type, column, T.from_arrow(field.type).to_arrow(), "other")
    if pg_type in _PADDED or (not pg_type and _plain(field.type)):
        return ColumnRead(field.name, pg_type, column, T.from_arrow(_storage(field.type)).to_arrow(), "other")
    # uuid, json, interval, money, enums, geometric and network types...: Spark reads them as strings.
    return ColumnRead(field.name, pg_type, f"CAST({column} AS text)", pa.string(), "other")


def _numeric_read(field: pa.Field, column: str, typmod: int) -> ColumnRead:
    """numeric(p, s) is decimal(p, s); an unconstrained or wider numeric is rounded by the server
    to decimal(38, 18) (or its own scale, at most 38), as Spark reads it."""
    if typmod >= 4:
        precision, scale = ((typmod - 4) >> 16) & 0xFFFF, (typmod - 4) & 0xFFFF
        if 0 < precision <= MAX_PRECISION and scale <= precision:
            return ColumnRead(field.name, "numeric", column, pa.decimal128(precision, scale), "decimal")
        scale = min(scale, MAX_PRECISION) if scale <= 1000 else DEFAULT_SCALE
    else:
        scale = DEFAULT_SCALE
    select = f"CAST({column} AS numeric({MAX_PRECISION}, {scale}))"
    return ColumnRead(field.name, "numeric", select, pa.decimal128(MAX_PRECISION, scale), "other")


def _storage(t: pa.DataType) -> pa.DataType:
    return t.storage_type if isinstance(t, pa.ExtensionType) else t


def _plain(t: pa.DataType) -> bool:
    if isinstance(t, pa.ExtensionType) or pa.types.is_interval(t):
        return False
    try:
        T.from_arrow(t)
    except TypeError:
        return False
    return True


def arrow_schema(reads: list[ColumnRead]) -> pa.Schema:
    """The Arrow schema, in Quiver's types, of the columns `reads` produce."""
    return pa.schema([pa.field(r.name, r.arrow_type) for r in reads])


def conform_batch(batch: pa.RecordBatch, reads: list[ColumnRead]) -> pa.RecordBatch:
    """A batch from the driver in Quiver's types: numeric text to decimals, timestamptz to UTC
    timestamps, extension types to their storage."""
    arrays = []
    for read, array in zip(reads, batch.columns):
        if isinstance(array.type, pa.ExtensionType):
            array = array.storage
        if array.type != read.arrow_type:
            try:
                array = array.cast(read.arrow_type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                raise JdbcError(f"column {read.name!r} ({read.pg_type}) holds a value that is no "
                                f"{T.from_arrow(read.arrow_type).simpleString()}: {e}") from e
        arrays.append(array)
    return pa.RecordBatch.from_arrays(arrays, schema=arrow_schema(reads))


def column_type(dtype: T.DataType, column: str) -> str:
    """The PostgreSQL type a column of Quiver type `dtype` is created with (Spark's mapping)."""
    if isinstance(dtype, T.ArrayType) and not isinstance(dtype.elementType, (T.ArrayType, T.MapType, T.StructType)):
        return column_type(dtype.elementType, column) + "[]"
    if isinstance(dtype, T.DecimalType):
        return f"NUMERIC({dtype.precision},{dtype.scale})"
    for kind, name in _COLUMN_TYPES:
        if type(dtype) is kind:
            return name
    raise AnalysisException(f"Can't get JDBC type for {dtype.simpleString()} (column {column!r}); "
                            "PostgreSQL columns take numbers, strings, binary, booleans, dates, timestamps "
                            "and arrays of them")


_COLUMN_TYPES: tuple[tuple[type, str], ...] = (
    (T.StringType, "TEXT"), (T.BinaryType, "BYTEA"), (T.BooleanType, "BOOLEAN"),
    (T.FloatType, "FLOAT4"), (T.DoubleType, "FLOAT8"), (T.ByteType, "SMALLINT"), (T.ShortType, "SMALLINT"),
    (T.IntegerType, "INTEGER"), (T.LongType, "BIGINT"), (T.DateType, "DATE"),
    (T.TimestampType, "TIMESTAMP WITH TIME ZONE"), (T.TimestampNTZType, "TIMESTAMP"),
)
