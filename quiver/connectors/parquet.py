"""Parquet files: schema and row counts from footers, splits by row groups, reads through
pyarrow.dataset fragments so column pruning and row-group skipping by statistics happen in C++."""
from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from quiver.connectors.base import ColumnStatistics, ReadOptions
from quiver.connectors.files import FilePiece, FileReadError, partition_expression, project_file_batch
from quiver.connectors.object_store import decoded_cache_for, file_version, is_object_path, object_etag, resolve
from quiver.connectors.options import option_bool, option_choice
from quiver.connectors.paths import DataFile, file_uri
from quiver.engine.core.errors import AnalysisException
from quiver.engine.core.types import (
    BinaryType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    TimestampType,
    from_arrow,
)

if TYPE_CHECKING:
    import pyarrow.dataset as ds

MAX_FOOTERS = 1000
# A row group whose columns read take more than this (uncompressed, as its footer says) is decoded a batch
# of SCAN_BATCH_ROWS rows at a time, so a scan task holds one batch of it, not the whole group decoded.
SCAN_ROW_GROUP_BYTES = 64 << 20
SCAN_BATCH_ROWS = 1 << 17
CODECS = {"none": "none", "uncompressed": "none", "snappy": "snappy", "gzip": "gzip",
          "zstd": "zstd", "lz4": "lz4", "brotli": "brotli"}
_EXTENSIONS = {"none": "", "snappy": ".snappy", "gzip": ".gz", "zstd": ".zstd", "lz4": ".lz4", "brotli": ".br"}


def _file_format() -> ds.ParquetFileFormat:
    import pyarrow.dataset as ds  # at the first read: it imports pandas, which `import quiver` need not pay

    # Spark writes INT96 timestamps by default; nanoseconds would overflow for dates past 2262.
    return ds.ParquetFileFormat(read_options=ds.ParquetReadOptions(coerce_int96_timestamp_unit="us"))


_FOOTERS: OrderedDict[tuple[str, int, int],
                      tuple[pq.FileMetaData, dict[str, list], pa.Schema, list[int]]] = OrderedDict()
_FOOTERS_LOCK = threading.Lock()
FOOTER_CACHE_ENTRIES = 512


def read_metadata(path: str) -> pq.FileMetaData:
    """The footer of one Parquet file; a corrupt file raises `FileReadError` naming it."""
    return _footer(path)[0]


def _footer(path: str) -> tuple[pq.FileMetaData, dict[str, list], pa.Schema, list[int]]:
    """A file's footer, its per-column [min, max, null count, usable] over the row groups, its Arrow
    schema and each row group's compressed bytes, parsed once per version of the file. Every query
    re-plans over the same files; the footer of a 6M-row file takes milliseconds to read and merge."""
    return _per_file_version(_FOOTERS, path, _parse_footer)


def _per_file_version(cache: OrderedDict, path: str, compute: Callable[[str], Any]) -> Any:
    """`compute(path)`, kept in `cache` (least recently used out first) under the file's path, size and
    modification time, so a rewritten file is read afresh."""
    try:
        size, mtime_ns = file_version(path)
        # An object rewritten within one second keeps its size and listed time: its ETag tells.
        etag = object_etag(path)
    except OSError as e:
        raise FileReadError(f"could not read Parquet file {file_uri(path)}: {e}") from e
    key = (path, size, mtime_ns, etag)
    with _FOOTERS_LOCK:
        if key in cache:
            cache.move_to_end(key)
            return cache[key]
    entry = compute(path)
    with _FOOTERS_LOCK:
        cache[key] = entry
        while len(cache) > FOOTER_CACHE_ENTRIES:
            cache.popitem(last=False)
    return entry


def _parse_footer(path: str) -> tuple[pq.FileMetaData, dict[str, list], pa.Schema, list[int]]:
    try:
        fs, where = resolve(path)
        meta = pq.read_metadata(where, filesystem=fs)
        schema = meta.schema.to_arrow_schema()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as e:
        raise FileReadError(f"could not read Parquet file {file_uri(path)}: {e}") from e
    sizes = [sum(g.column(c).total_compressed_size for c in range(g.num_columns))
             for g in (meta.row_group(i) for i in range(meta.num_row_groups))]
    return meta, _row_group_statistics(meta), schema, sizes


def _row_group_statistics(meta: pq.FileMetaData) -> dict[str, list]:
    """Per top-level column: [min, max, null count, True] over all row groups, or [.., False] where
    some row group has no usable statistics."""
    merged: dict[str, list] = {}
    for g in range(meta.num_row_groups):
        rg = meta.row_group(g)
        for c in range(rg.num_columns):
            column = rg.column(c)
            stats = column.statistics
            name = column.path_in_schema
            if stats is None or not stats.has_min_max or "." in name:
                merged[name] = [None, None, None, False]
                continue
            _merge(merged, name, [stats.min, stats.max, stats.null_count or 0, True])
    return merged


def _merge(merged: dict[str, list], name: str, part: list) -> None:
    """Fold one [min, max, nulls, usable] into `merged[name]`; values that do not compare make it unusable."""
    current = merged.get(name)
    if current is None:
        merged[name] = list(part)
        return
    if not (current[3] and part[3]):
        merged[name] = [None, None, None, False]
        return
    try:
        merged[name] = [min(current[0], part[0]), max(current[1], part[1]), current[2] + part[2], True]
    except TypeError:
        merged[name] = [None, None, None, False]


# Distinct counts cost a read of data, so only for tables of a few files; exact below SMALL_FILE_ROWS.
MAX_DISTINCT_FILES = 8
SMALL_FILE_ROWS = 100_000
MAX_DICTIONARY_BYTES = 64 * 1024
_DISTINCTS: OrderedDict[tuple[str, int, int], dict[str, int]] = OrderedDict()


def _string_distincts(path: str) -> dict[str, int]:
    """Distinct counts of a file's string columns where they come cheap, once per file version.

    Footers rarely carry distinct counts, and without one `o_orderstatus = 'F'` looks as selective
    as any equality (a tenth), which misorders joins (TPC-H Q21). A small file's string columns
    are counted exactly; in a larger one, a column whose first row group holds a small
    dictionary (at most 64 KiB, and entries for at most a tenth of its rows) is a
    low-cardinality column, and that dictionary's size is its distinct count. Other columns
    are left unknown.
    """
    return _per_file_version(_DISTINCTS, path, _count_string_distincts)


def _count_string_distincts(path: str) -> dict[str, int]:
    meta, _, schema, _ = _footer(path)
    strings = [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
               or pa.types.is_string_view(f.type)]
    if not strings or not meta.num_row_groups:
        return {}
    try:
        if meta.num_rows <= SMALL_FILE_ROWS:
            fs, where = resolve(path)
            table = pq.read_table(where, columns=strings, use_threads=False, filesystem=fs)
            return {n: pc.count_distinct(table.column(n).cast(pa.large_string()), mode="only_valid").as_py()
                    for n in strings}
        first = meta.row_group(0)
        chunks = {first.column(i).path_in_schema: first.column(i) for i in range(first.num_columns)}
        small = [n for n in _dictionary_strings(meta, schema, strings)
                 if chunks[n].data_page_offset - chunks[n].dictionary_page_offset <= MAX_DICTIONARY_BYTES]
        if not small:
            return {}
        fs, where = resolve(path)
        group = pq.ParquetFile(where, metadata=meta, read_dictionary=small, pre_buffer=False, filesystem=fs) \
            .read_row_group(0, columns=small, use_threads=False)
    except (pa.ArrowInvalid, OSError) as e:
        raise FileReadError(f"could not read Parquet file {file_uri(path)}: {e}") from e
    sizes = {n: max((len(c.dictionary) for c in group.column(n).chunks), default=0) for n in small}
    return {n: size for n, size in sizes.items() if size * 10 <= first.num_rows}


def read_schema(path: str) -> pa.Schema:
    """Arrow schema of one Parquet file, from its cached footer."""
    return _footer(path)[2]


class ParquetFormat:
    """The `FileFormat` for Parquet."""

    name = "parquet"

    def check_options(self, options: ReadOptions) -> None:
        option_bool(options, "mergeSchema", False)

    def infer_schema(self, files: Sequence[DataFile], options: ReadOptions) -> pa.Schema:
        """The first file's schema, or all files' schemas merged with `mergeSchema=true`."""
        if not option_bool(options, "mergeSchema", False):
            return read_schema(files[0].path)
        schemas = [read_schema(f.path) for f in files]
        try:
            return pa.unify_schemas(schemas, promote_options="permissive")
        except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
            raise FileReadError(f"Failed merging schemas of {len(files)} Parquet files: {e}") from e

    def pieces(self, file: DataFile, target_bytes: int) -> list[FilePiece]:
        """Files over 1.5x the target are cut into runs of row groups of about the target size."""
        if file.size <= target_bytes * 3 // 2:
            return [FilePiece(file, None, file.size)]
        pieces, group, size = [], [], 0
        for i, rg_size in enumerate(_footer(file.path)[3]):
            if group and size + rg_size > target_bytes:
                pieces.append(FilePiece(file, tuple(group), size))
                group, size = [], 0
            group.append(i)
            size += rg_size
        if group or not pieces:
            pieces.append(FilePiece(file, tuple(group), size))
        return pieces

    def count_rows(self, files: Sequence[DataFile]) -> int | None:
        """Rows from the footers; None past `MAX_FOOTERS` files, where reading them stops being cheap."""
        if len(files) > MAX_FOOTERS:
            return None
        return sum(read_metadata(f.path).num_rows for f in files)

    def column_statistics(self, files: Sequence[DataFile]) -> dict[str, ColumnStatistics]:
        """Each top-level column's min, max and null count over every row group's footer statistics,
        and the distinct count of string columns where a file's dictionary tells it (see `_string_distincts`)."""
        if len(files) > MAX_FOOTERS:
            return {}
        merged: dict[str, list] = {}
        for f in files:
            for name, part in _footer(f.path)[1].items():
                _merge(merged, name, part)
        stats = {n: ColumnStatistics(lo, hi, nulls) for n, (lo, hi, nulls, ok) in merged.items() if ok}
        if len(files) <= MAX_DISTINCT_FILES:
            distinct: dict[str, int] = {}
            for f in files:
                for name, count in _string_distincts(f.path).items():
                    distinct[name] = max(count, distinct.get(name, 0))
            for name, count in distinct.items():
                stats[name] = dataclasses.replace(stats.get(name, ColumnStatistics()), distinct_count=count)
        return stats

    def read_piece(
        self, piece: FilePiece, schema: pa.Schema, columns: list[str], predicate: pc.Expression | None,
        options: ReadOptions, partition: dict[str, pa.Scalar],
    ) -> Iterator[pa.RecordBatch]:
        path = piece.file.path
        try:
            meta, _, physical, _ = _footer(path)
            stored = [c for c in columns if c in physical.names and c not in partition]
            # Pre-buffering coalesces reads on a background I/O thread: it pays for objects (fewer
            # requests); for local files it would only add a copy and a thread hand-off per row group.
            fs, where = resolve(path)
            dictionary = _dictionary_strings(meta, physical, stored)
            reader = pq.ParquetFile(where, metadata=meta, coerce_int96_timestamp_unit="us", filesystem=fs,
                                    pre_buffer=is_object_path(path), read_dictionary=dictionary)
            decoded = decoded_cache_for(path)
        except (pa.ArrowInvalid, OSError) as e:
            raise FileReadError(f"could not read Parquet file {file_uri(path)}: {e}") from e
        for name in stored:
            _check_readable(path, meta, name, physical.field(name).type, schema.field(name).type)
        row_groups = piece.row_groups if piece.row_groups is not None else range(meta.num_row_groups)
        if predicate is not None:
            fragment = _file_format().make_fragment(where, fs, partition_expression=partition_expression(partition))
            # Prune with the file's own types (tz-aware, ns, ...); FileSource casts to the Spark types.
            scan_schema = pa.schema([physical.field(f.name) if f.name in physical.names else f for f in schema])
            row_groups = _matching_row_groups(fragment, row_groups, predicate, scan_schema)
        for i in row_groups:
            if decoded is None and stored and _uncompressed_bytes(meta, i, stored) > SCAN_ROW_GROUP_BYTES:
                yield from (project_file_batch(b, schema, columns, partition)
                            for b in _row_group_in_batches(reader, path, i, stored))
                continue
            key = (path, decoded[1], i, tuple(stored), tuple(dictionary)) if decoded is not None else None
            table = decoded[0].get(key) if decoded is not None else None
            if table is None:
                try:
                    table = reader.read_row_group(i, columns=stored, use_threads=False)
                except (pa.ArrowInvalid, OSError) as e:
                    raise FileReadError(f"could not read Parquet file {file_uri(path)}: {e}") from e
                if decoded is not None:
                    decoded[0].put(key, table)
            for batch in table.to_batches():
                yield project_file_batch(batch, schema, columns, partition)

    def check_writable(self, schema: pa.Schema) -> None:
        return None

    def check_write_options(self, options: ReadOptions) -> None:
        self.codec(options)

    def codec(self, options: ReadOptions) -> str:
        """The compression codec from the `compression` option, Spark's names accepted."""
        return CODECS[option_choice(options, "compression", list(CODECS), "snappy")]

    def extension(self, options: ReadOptions) -> str:
        return _EXTENSIONS[self.codec(options)] + ".parquet"

    def open_writer(self, path: str, schema: pa.Schema, options: ReadOptions) -> ParquetFileWriter:
        return ParquetFileWriter(path, schema, self.codec(options))


def _uncompressed_bytes(meta: pq.FileMetaData, row_group: int, columns: list[str]) -> int:
    """What the footer says `columns` of one row group take uncompressed (their decoded size, roughly)."""
    group = meta.row_group(row_group)
    wanted = set(columns)
    return sum(group.column(c).total_uncompressed_size for c in range(group.num_columns)
               if group.column(c).path_in_schema.split(".")[0] in wanted)


def _row_group_in_batches(reader: pq.ParquetFile, path: str, row_group: int,
                          columns: list[str]) -> Iterator[pa.RecordBatch]:
    """One row group decoded SCAN_BATCH_ROWS rows at a time."""
    try:
        yield from reader.iter_batches(batch_size=SCAN_BATCH_ROWS, row_groups=[row_group], columns=columns,
                                       use_threads=False)
    except (pa.ArrowInvalid, OSError) as e:
        raise FileReadError(f"could not read Parquet file {file_uri(path)}: {e}") from e


_INT32_KINDS = (ByteType, ShortType, IntegerType)


def _readable_as(stored: DataType, wanted: DataType) -> bool:
    """Whether Spark 4's Parquet reader reads a column holding `stored` as `wanted`: the same type, or a
    widening that keeps every value (byte/short/int to a wider integer or double, int32-backed integers to
    one another, long to a decimal with 20 integer digits, int to one with 10, float to double, a decimal to
    one with no fewer integer or fraction digits, string and binary either way, date or timestamp to a
    timestamp). Spark also reinterprets some stored bits as another type (a date as its day number, a
    decimal's unscaled value as an integer); those give other values than a cast would, so they are refused."""
    if stored == wanted:
        return True
    if isinstance(stored, _INT32_KINDS):
        if isinstance(wanted, (*_INT32_KINDS, LongType, DoubleType)):
            return True
        return isinstance(wanted, DecimalType) and wanted.precision - wanted.scale >= 10
    if isinstance(stored, LongType):
        return isinstance(wanted, DecimalType) and wanted.precision - wanted.scale >= 20
    if isinstance(stored, FloatType):
        return isinstance(wanted, DoubleType)
    if isinstance(stored, DecimalType) and isinstance(wanted, DecimalType):
        return wanted.scale >= stored.scale and wanted.precision - wanted.scale >= stored.precision - stored.scale
    if isinstance(stored, (StringType, BinaryType)):
        return isinstance(wanted, (StringType, BinaryType))
    if isinstance(stored, (DateType, TimestampType)):
        # Arrow holds timestamp and timestamp_ntz alike; Spark reads a date as timestamp_ntz only.
        return isinstance(wanted, TimestampType)
    return False


def _check_readable(path: str, meta: pq.FileMetaData, name: str, stored: pa.DataType, wanted: pa.DataType) -> None:
    """Refuse, as Spark does, to read column `name` of a file as a type its values do not widen to,
    rather than cast them silently. Nested columns are left to the reader."""
    if pa.types.is_dictionary(stored):
        stored = stored.value_type
    if pa.types.is_null(stored) or pa.types.is_nested(stored) or pa.types.is_nested(wanted):
        return
    try:
        stored_type, wanted_type = from_arrow(stored), from_arrow(wanted)
    except TypeError:
        return
    if _readable_as(stored_type, wanted_type):
        return
    leaves = [meta.schema.column(i) for i in range(len(meta.schema))]
    physical = next((c.physical_type for c in leaves if c.path == name), str(stored).upper())
    raise AnalysisException(
        f"[FAILED_READ_FILE.PARQUET_COLUMN_DATA_TYPE_MISMATCH] Encountered error while reading file "
        f"{file_uri(path)}. Data type mismatches when reading Parquet column [{name}]. Expected Spark type "
        f"{wanted_type.simpleString()}, actual Parquet type {physical} ({stored_type.simpleString()}). Give column "
        f"{name!r} the type {stored_type.simpleString()} (or one Spark widens it to) in the schema, and cast it "
        "after reading if another type is wanted.")


class ParquetFileWriter:
    """One output Parquet file; timestamps are stored UTC-adjusted so Spark reads them as `timestamp`."""

    def __init__(self, path: str, schema: pa.Schema, codec: str):
        self.schema = pa.schema([_stored_field(f) for f in schema])
        self.writer = pq.ParquetWriter(path, self.schema, compression=codec)

    def write(self, batch: pa.RecordBatch) -> None:
        if not batch.schema.equals(self.schema):
            batch = batch.cast(self.schema)
        self.writer.write_batch(batch)

    def close(self) -> None:
        self.writer.close()


def _stored_field(f: pa.Field) -> pa.Field:
    if pa.types.is_timestamp(f.type) and f.type.tz is None:
        return pa.field(f.name, pa.timestamp(f.type.unit, "UTC"), f.nullable)
    return f


def _dictionary_strings(meta: pq.FileMetaData, schema: pa.Schema, columns: list[str]) -> list[str]:
    """The string columns stored with a small dictionary, which decode faster as dictionary indices.

    Decoding such a column to a dictionary array and then to plain strings is about twice as fast
    as decoding it to strings directly (TPC-H's l_shipmode); a column with many distinct values
    (l_comment) is the other way round. The first row group's
    dictionary page size, against the column chunk's size, tells the two apart.
    """
    if meta.num_row_groups == 0:
        return []
    group = meta.row_group(0)
    chunks = {group.column(i).path_in_schema: group.column(i) for i in range(group.num_columns)}
    chosen = []
    for name in columns:
        kind = schema.field(name).type
        chunk = chunks.get(name)
        if chunk is None or not (pa.types.is_string(kind) or pa.types.is_large_string(kind)
                                 or pa.types.is_string_view(kind)):
            continue
        if chunk.has_dictionary_page and chunk.dictionary_page_offset is not None:
            dictionary_bytes = chunk.data_page_offset - chunk.dictionary_page_offset
            if 0 < dictionary_bytes * 16 < chunk.total_uncompressed_size:
                chosen.append(name)
    return chosen


def _matching_row_groups(
    fragment: ds.ParquetFileFragment, row_groups: Sequence[int], predicate: pc.Expression | None, schema: pa.Schema,
) -> list[int]:
    """The row groups whose footer statistics do not rule out `predicate`.

    The predicate only prunes whole row groups: rows are filtered once, by the plan's Filter
    above the scan, not a second time inside the reader. A predicate that cannot be checked
    against this file's types is a hint dropped, not an error.
    """
    if predicate is None:
        return list(row_groups)
    try:
        kept = {rg.id for rg in fragment.subset(filter=predicate, schema=schema).row_groups}
    except (pa.ArrowNotImplementedError, pa.ArrowTypeError, pa.ArrowInvalid):
        return list(row_groups)
    return [i for i in row_groups if i in kept]

