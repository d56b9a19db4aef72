"""The file `Source` shared by every file format, and the `FileFormat` protocol formats implement.

`FileSource` lists files once (`connectors.paths`), asks its `FileFormat` for the schema,
cuts the files into splits and appends Hive partition columns to what the format reads. Files
may be local or objects (`connectors.object_store`); formats open them through that module.
"""
from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs

from quiver.connectors.base import ColumnStatistics, ReadOptions, SourceStatistics
from quiver.connectors.object_store import binding_for
from quiver.connectors.options import option_bool, read_options
from quiver.connectors.paths import DataFile, FileListing, file_uri, list_files
from quiver.engine.core.errors import AnalysisException, QuiverError, unknown_column
from quiver.engine.core.types import StructType, from_arrow, parse_schema

OPEN_COST_BYTES = 4 * 1024 * 1024
MIN_PIECE_BYTES = 1024 * 1024
_LOCAL = pafs.LocalFileSystem()


class FileReadError(QuiverError):
    """A data file could not be read (corrupt, truncated, malformed); names the file and where."""


@dataclass(frozen=True)
class FilePiece:
    """Part of one file read by one task: row groups (Parquet) or record batches (IPC), or all of it."""

    file: DataFile
    row_groups: tuple[int, ...] | None = None
    size: int = 0


@dataclass(frozen=True)
class FileSplit:
    """The pieces one task reads, in order."""

    index: int
    pieces: tuple[FilePiece, ...]

    def __repr__(self) -> str:
        return f"FileSplit({self.index}, {len(self.pieces)} pieces, {sum(p.size for p in self.pieces)} bytes)"


class FileWriter(Protocol):
    """An open output file that takes batches of one schema."""

    def write(self, batch: pa.RecordBatch) -> None: ...

    def close(self) -> None: ...


class FileFormat(Protocol):
    """What a file format plugs into `FileSource` and `FileSink`."""

    name: str

    def check_options(self, options: ReadOptions) -> None:
        """Raise `ConfigurationError` for an option value the format does not accept."""

    def infer_schema(self, files: Sequence[DataFile], options: ReadOptions) -> pa.Schema:
        """Arrow schema of the columns stored in the files (partition columns excluded)."""

    def pieces(self, file: DataFile, target_bytes: int) -> list[FilePiece]:
        """`file` cut into pieces of about `target_bytes` where the format allows it."""

    def count_rows(self, files: Sequence[DataFile]) -> int | None:
        """Total rows if the files' metadata says so cheaply, else None."""

    def read_piece(
        self, piece: FilePiece, schema: pa.Schema, columns: list[str], predicate: pc.Expression | None,
        options: ReadOptions, partition: dict[str, pa.Scalar],
    ) -> Iterator[pa.RecordBatch]:
        """Batches of `piece` with exactly `columns` of `schema` (file and partition columns)."""

    def check_writable(self, schema: pa.Schema) -> None:
        """Raise `AnalysisException` naming a column whose type the format cannot store."""

    def check_write_options(self, options: ReadOptions) -> None:
        """Raise `ConfigurationError` for a write option value the format does not accept."""

    def extension(self, options: ReadOptions) -> str:
        """File name suffix, e.g. `.snappy.parquet`."""

    def open_writer(self, path: str, schema: pa.Schema, options: ReadOptions) -> FileWriter:
        """A writer for one output file."""


def spark_arrow_type(t: pa.DataType) -> pa.DataType:
    """The Arrow type Quiver uses for data of type `t`: that of its Spark type (us timestamps, no tz)."""
    return from_arrow(t).to_arrow()


def spark_arrow_schema(schema: pa.Schema) -> pa.Schema:
    """`schema` with Quiver's Arrow types, every field nullable (as Spark reads files) and no metadata."""
    return pa.schema([pa.field(f.name, spark_arrow_type(f.type), True) for f in schema])


def as_arrow_schema(schema: StructType | pa.Schema | str | None) -> pa.Schema | None:
    """A user schema (DDL string, StructType or Arrow schema) as an Arrow schema."""
    if schema is None:
        return None
    if isinstance(schema, str):
        schema = parse_schema(schema)
    if isinstance(schema, StructType):
        return schema.to_arrow_schema()
    if isinstance(schema, pa.Schema):
        return schema
    raise TypeError(f"schema must be a DDL string, a StructType or a pyarrow.Schema, not {type(schema).__name__}")


def cast_column(array: pa.Array, target: pa.DataType) -> pa.Array:
    """`array` as `target`; timestamps (and nested values holding them) may lose sub-microsecond digits."""
    if array.type.equals(target):
        return array
    unsafe = pa.types.is_timestamp(array.type) or pa.types.is_nested(array.type)
    return pc.cast(array, target, safe=not unsafe)


def conform_batch(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """`batch` with the types and nullability of `schema` (same column names); a string column may
    stay dictionary-encoded over its type."""
    if batch.schema.equals(schema):
        return batch
    arrays = [_encoded_or_cast(a, f.type) for a, f in zip(batch.columns, schema)]
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema([f.with_type(a.type) for a, f in zip(arrays, schema)]))


def constant_column(value: pa.Scalar, length: int) -> pa.Array:
    """A partition column for one file: the same value `length` times."""
    if not value.is_valid:
        return pa.nulls(length, value.type)
    return pa.repeat(value, length)


def partition_expression(values: dict[str, pa.Scalar]) -> pc.Expression | None:
    """`k1 == v1 and k2 is null ...`: what every row of a file is known to satisfy."""
    expr = None
    for name, value in values.items():
        term = pc.field(name).is_null() if not value.is_valid else pc.field(name) == value
        expr = term if expr is None else expr & term
    return expr


class WholeFileReads:
    """For text formats that cannot be cut inside a file: one piece per file, row counts unknown up front."""

    def pieces(self, file: DataFile, target_bytes: int) -> list[FilePiece]:
        return [FilePiece(file, None, file.size)]

    def count_rows(self, files: Sequence[DataFile]) -> int | None:
        return None


class FileSource:
    """A `Source` over files of one format: lists files now, infers the schema on first use."""

    def __init__(
        self,
        format: FileFormat,
        paths: str | os.PathLike | Sequence[str | os.PathLike],
        options: Mapping[str, Any] | ReadOptions | None = None,
        schema: StructType | pa.Schema | str | None = None,
    ):
        self.format = format
        self.options = read_options(options)
        format.check_options(self.options)
        self.user_schema = as_arrow_schema(schema)
        pinned = {f.name: spark_arrow_type(f.type) for f in self.user_schema} if self.user_schema else {}
        self.listing: FileListing = list_files(
            paths,
            base_path=self.options.get("basepath"),
            recursive_lookup=option_bool(self.options, "recursiveFileLookup", False),
            name_filter=self.options.get("pathglobfilter"),
            partition_types=pinned,
        )
        # Carried with the source, so a task on a Ray worker reaches the same object store.
        self.storage = binding_for(self.listing.roots)
        self._schema: pa.Schema | None = None
        self._num_rows: int | None = None
        self._columns: dict[str, ColumnStatistics] | None = None

    def describe(self) -> str:
        """`parquet [/data/sales] 3 files, partitioned by [year]`."""
        roots = list(self.listing.roots)
        shown = ", ".join(roots[:3]) + (f", ... {len(roots) - 3} more" if len(roots) > 3 else "")
        n = len(self.listing.files)
        text = f"{self.format.name} [{shown}] {n} file{'' if n == 1 else 's'}"
        if len(self.listing.partition_schema):
            text += f", partitioned by [{', '.join(self.listing.partition_schema.names)}]"
        return text

    def schema(self) -> pa.Schema:
        """File columns (the user schema, or inferred by the format) then partition columns."""
        if self._schema is None:
            parts = self.listing.partition_schema
            if self.user_schema is not None:
                stored = pa.schema([f for f in self.user_schema if f.name not in parts.names])
            elif not self.listing.files:
                raise AnalysisException(
                    f"[UNABLE_TO_INFER_SCHEMA] Unable to infer schema for {self.format.name.capitalize()} "
                    f"at {', '.join(file_uri(r) for r in self.listing.roots)}: there are no data files. "
                    "It must be specified manually with .schema(...)."
                )
            else:
                stored = self.format.infer_schema(self.listing.files, self.options)
                stored = pa.schema([f for f in stored if f.name not in parts.names])
            self._schema = spark_arrow_schema(pa.schema(list(stored) + list(parts)))
        return self._schema

    def statistics(self) -> SourceStatistics:
        """Bytes from file sizes; rows where the format's metadata gives them cheaply (Parquet, IPC)."""
        if self._num_rows is None and self.listing.files:
            self._num_rows = self.format.count_rows(self.listing.files)
        num_rows = 0 if not self.listing.files else self._num_rows
        if self._columns is None:
            read = getattr(self.format, "column_statistics", None)
            self._columns = read(self.listing.files) if read is not None and self.listing.files else {}
        return SourceStatistics(num_rows=num_rows, size_bytes=self.listing.total_bytes, columns=self._columns)

    def splits(self, target: int) -> Sequence[FileSplit]:
        """Files (large ones cut where the format can) packed in path order into about `target` splits."""
        target = max(1, int(target))
        files = self.listing.files
        # Cutting aims at the data alone, so one big file still yields about `target` pieces;
        # packing weighs each piece with Spark's open cost, so many small files balance too.
        piece_goal = max(MIN_PIECE_BYTES, -(-sum(f.size for f in files) // target))
        pieces = [p for f in files for p in self.format.pieces(f, piece_goal)]
        costs = [p.size + OPEN_COST_BYTES for p in pieces]
        goal = max(1, sum(costs)) / target
        groups: dict[int, list[FilePiece]] = {}
        filled = 0
        for piece, cost in zip(pieces, costs):
            # Each piece goes to the split its cost midpoint falls in: contiguous, balanced, <= target.
            groups.setdefault(min(target - 1, int((filled + cost / 2) // goal)), []).append(piece)
            filled += cost
        splits = [groups[k] for k in sorted(groups)] or [[]]
        return [FileSplit(i, tuple(s)) for i, s in enumerate(splits)]

    def read(
        self, split: FileSplit, columns: Sequence[str] | None, predicate: pc.Expression | None
    ) -> Iterator[pa.RecordBatch]:
        """Batches of `split` with `columns` in the order given (all columns when None)."""
        schema = self.schema()
        columns = list(schema.names) if columns is None else list(columns)
        for name in columns:
            if name not in schema.names:
                raise unknown_column(name, schema.names)
        out_schema = pa.schema([schema.field(c) for c in columns])
        predicate = self._usable(predicate, schema)
        for piece in split.pieces:
            partition = self.listing.partition_scalars(piece.file)
            if predicate is not None and partition and self._pruned(piece, partition, predicate, schema):
                continue
            try:
                for batch in self.format.read_piece(piece, schema, columns, predicate, self.options, partition):
                    yield conform_batch(batch, out_schema)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                raise FileReadError(
                    f"{file_uri(piece.file.path)} does not convert to the schema being read "
                    f"({', '.join(f'{f.name} {f.type}' for f in out_schema)}): {e}") from e

    @staticmethod
    def _usable(predicate: pc.Expression | None, schema: pa.Schema) -> pc.Expression | None:
        """The predicate if it binds to `schema`; a hint that does not bind is dropped, not an error.

        A scanner binds its filter when made, without the plan `Table.filter` runs (a millisecond
        per task); predicates come from boolean filter conditions, so the type needs no check.
        """
        if predicate is None:
            return None
        import pyarrow.dataset as ds

        try:
            ds.dataset(schema.empty_table()).scanner(filter=predicate)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, TypeError):
            return None
        return predicate

    @staticmethod
    def _pruned(piece: FilePiece, partition: dict[str, pa.Scalar], predicate: pc.Expression, schema: pa.Schema) -> bool:
        """True when the file's partition values alone rule the predicate out."""
        import pyarrow.dataset as ds

        # A fragment of any format works: it is never opened, only its partition expression is used.
        fmt = ds.IpcFileFormat()
        fragment = fmt.make_fragment(piece.file.path, _LOCAL, partition_expression=partition_expression(partition))
        dataset = ds.FileSystemDataset([fragment], schema, fmt, _LOCAL)
        return not list(dataset.get_fragments(filter=predicate))


def project_file_batch(
    batch: pa.RecordBatch, schema: pa.Schema, columns: list[str], partition: dict[str, pa.Scalar]
) -> pa.RecordBatch:
    """A batch read from a file as `columns` of `schema`: partition constants added, columns
    the file lacks filled with nulls, each cast to its schema type (strings the file stores with a
    small dictionary may stay dictionary-encoded over that type)."""
    if not columns:
        return batch.select([])
    present = set(batch.schema.names)
    arrays = []
    for name in columns:
        target = schema.field(name).type
        if name in partition:
            arrays.append(constant_column(partition[name], batch.num_rows))
        elif name in present:
            arrays.append(_encoded_or_cast(batch.column(name), target))
        else:
            arrays.append(pa.nulls(batch.num_rows, target))
    fields = [schema.field(c).with_type(a.type) for c, a in zip(columns, arrays)]
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))


def _encoded_or_cast(array: pa.Array, target: pa.DataType) -> pa.Array:
    """`array` as `target`; a dictionary-encoded string column stays encoded, only its dictionary cast,
    so the executor can filter it per distinct value and decode just the rows that survive."""
    if pa.types.is_dictionary(array.type) and (pa.types.is_string(target) or pa.types.is_large_string(target)):
        if array.dictionary.type.equals(target):
            return array
        # The indices stay as they were, valid for a dictionary of the same length: no need to check them again.
        return pa.DictionaryArray.from_arrays(array.indices, cast_column(array.dictionary, target), safe=False)
    return cast_column(array, target)
