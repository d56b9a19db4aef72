"""The file `Source` and `Sink` shared by every file format.

`FileSource` lists files once (`connectors.paths`), asks its `FileFormat` for the schema,
cuts the files into splits and appends Hive partition columns to what the format reads.
`FileSink` writes each task's batches into a staging folder beside the destination and
makes them visible in one rename on commit, so a failed job leaves nothing behind.
"""
from __future__ import annotations

import os
import shutil
import uuid
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Protocol, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.fs as pafs

from quiver.connectors.base import ReadOptions, SourceStatistics
from quiver.connectors.paths import DataFile, FileListing, escape_partition_value, file_uri, list_files
from quiver.connectors.text_values import format_text_array
from quiver.engine.errors import AnalysisException, ConfigurationError, QuiverError, unknown_column
from quiver.engine.types import StructType, from_arrow, parse_schema

OPEN_COST_BYTES = 4 * 1024 * 1024
SAVE_MODES = ("append", "overwrite", "error", "errorifexists", "ignore")
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

    def extension(self, options: ReadOptions) -> str:
        """File name suffix, e.g. `.snappy.parquet`."""

    def open_writer(self, path: str, schema: pa.Schema, options: ReadOptions) -> FileWriter:
        """A writer for one output file."""


def read_options(options: Mapping[str, Any] | ReadOptions | None) -> ReadOptions:
    """Options with lower-cased keys and Spark's string values (`True` -> `'true'`); None dropped."""
    if isinstance(options, ReadOptions):
        return options
    values = {}
    for key, value in (options or {}).items():
        if value is None:
            continue
        values[key.lower()] = str(value).lower() if isinstance(value, bool) else value
    return ReadOptions(values)


def option_bool(options: ReadOptions, key: str, default: bool) -> bool:
    """A true/false option; anything else is a `ConfigurationError` naming the option."""
    value = options.get(key)
    if value is None:
        return default
    text = str(value).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    raise ConfigurationError(f"option '{key}' must be 'true' or 'false', got {value!r}")


def option_choice(options: ReadOptions, key: str, choices: Sequence[str], default: str) -> str:
    """A case-insensitive option among `choices`, returned in the spelling of `choices`."""
    value = options.get(key)
    if value is None:
        return default
    for choice in choices:
        if str(value).lower() == choice.lower():
            return choice
    raise ConfigurationError(f"option '{key}' has invalid value {value!r}; valid values are {', '.join(choices)}")


def option_char(options: ReadOptions, key: str, default: str) -> str:
    """A one-character option such as `sep` or `quote`; '' is allowed (turns the feature off)."""
    value = options.get(key)
    if value is None:
        return default
    value = str(value)
    if value == "\\t":
        value = "\t"
    if len(value) > 1:
        raise ConfigurationError(f"option '{key}' must be a single character, got {value!r}")
    return value


def reject_options(options: ReadOptions, fmt: str, unsupported: Mapping[str, Sequence[str]]) -> None:
    """Raise for options Spark has but Quiver does not support yet, unless set to an accepted value."""
    for key, accepted in unsupported.items():
        value = options.get(key.lower())
        if value is not None and str(value).lower() not in accepted:
            allowed = f" (accepted: {', '.join(accepted)})" if accepted else ""
            raise ConfigurationError(f"{fmt} option '{key}'={value!r} is not supported yet{allowed}")


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


def conform_batch(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """`batch` cast to `schema` (same column names); timestamps may lose sub-microsecond digits."""
    if batch.schema.equals(schema):
        return batch
    arrays = []
    for array, target in zip(batch.columns, schema):
        if not array.type.equals(target.type):
            unsafe = pa.types.is_timestamp(array.type) or pa.types.is_nested(array.type)
            array = pc.cast(array, target.type, safe=not unsafe)
        arrays.append(array)
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


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
        self._schema: pa.Schema | None = None
        self._num_rows: int | None = None

    def describe(self) -> str:
        """`parquet [/data/sales] 3 files, partitioned by [year]`."""
        roots = list(self.listing.roots)
        shown = ", ".join(roots[:3]) + (f", ... {len(roots) - 3} more" if len(roots) > 3 else "")
        n = len(self.listing.files)
        text = f"{self.format.name} [{shown}] {n} file{'' if n == 1 else 's'}"
        if len(self.listing.partition_schema):
            text += f", partitioned by [{', '.join(self.listing.partition_schema.names)}]"
        return text

    @property
    def file_schema(self) -> pa.Schema:
        """Columns stored in the files (user schema or inferred), without partition columns."""
        return pa.schema([f for f in self.schema() if f.name not in self.listing.partition_schema.names])

    def schema(self) -> pa.Schema:
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
        if self._num_rows is None and self.listing.files:
            self._num_rows = self.format.count_rows(self.listing.files)
        num_rows = 0 if not self.listing.files else self._num_rows
        return SourceStatistics(num_rows=num_rows, size_bytes=self.listing.total_bytes)

    def splits(self, target: int) -> Sequence[FileSplit]:
        """Files (large ones cut where the format can) packed in path order into about `target` splits."""
        target = max(1, int(target))
        files = self.listing.files
        total = sum(f.size + OPEN_COST_BYTES for f in files)
        goal = max(1, -(-total // target))
        pieces = [p for f in files for p in self.format.pieces(f, goal)]
        splits: list[list[FilePiece]] = [[]]
        filled = 0
        for piece in pieces:
            if splits[-1] and filled + piece.size + OPEN_COST_BYTES > goal:
                splits.append([])
                filled = 0
            splits[-1].append(piece)
            filled += piece.size + OPEN_COST_BYTES
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
            for batch in self.format.read_piece(piece, schema, columns, predicate, self.options, partition):
                yield conform_batch(batch, out_schema)

    @staticmethod
    def _usable(predicate: pc.Expression | None, schema: pa.Schema) -> pc.Expression | None:
        """The predicate if it binds to `schema`; a hint that does not bind is dropped, not an error."""
        if predicate is None:
            return None
        try:
            schema.empty_table().filter(predicate)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, TypeError):
            return None
        return predicate

    @staticmethod
    def _pruned(piece: FilePiece, partition: dict[str, pa.Scalar], predicate: pc.Expression, schema: pa.Schema) -> bool:
        """True when the file's partition values alone rule the predicate out."""
        fragment = ds.IpcFileFormat().make_fragment(piece.file.path, _LOCAL, partition_expression=partition_expression(partition))
        dataset = ds.FileSystemDataset([fragment], schema, ds.IpcFileFormat(), _LOCAL)
        return not list(dataset.get_fragments(filter=predicate))


def project_file_batch(
    batch: pa.RecordBatch, schema: pa.Schema, columns: list[str], partition: dict[str, pa.Scalar]
) -> pa.RecordBatch:
    """A batch read from a file as `columns` of `schema`: partition constants added, columns
    the file lacks filled with nulls, each cast to its schema type."""
    if not columns:
        return batch.select([])
    present = set(batch.schema.names)
    arrays = []
    for name in columns:
        target = schema.field(name).type
        if name in partition:
            arrays.append(constant_column(partition[name], batch.num_rows))
        elif name in present:
            array = batch.column(name)
            if not array.type.equals(target):
                unsafe = pa.types.is_timestamp(array.type) or pa.types.is_nested(array.type)
                array = pc.cast(array, target, safe=not unsafe)
            arrays.append(array)
        else:
            arrays.append(pa.nulls(batch.num_rows, target))
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema([schema.field(c) for c in columns]))


@dataclass(frozen=True)
class TaskOutput:
    """What one successful `write_task` made: files relative to the staging folder, rows, schema."""

    files: tuple[str, ...]
    num_rows: int
    schema: pa.Schema | None = None


@dataclass
class FileSink:
    """A `Sink` writing files of one format under `path`, committed atomically."""

    path: str
    format: FileFormat
    mode: str = "errorifexists"
    partition_by: Sequence[str] = ()
    options: Mapping[str, Any] | ReadOptions | None = None
    schema: pa.Schema | None = None
    staging: str = field(init=False)

    def __post_init__(self) -> None:
        self.path = os.path.abspath(os.fspath(self.path))
        self.mode = option_choice(ReadOptions({"mode": self.mode or "errorifexists"}), "mode", SAVE_MODES, "errorifexists")
        self.partition_by = tuple(self.partition_by or ())
        self.options = read_options(self.options)
        self.job_id = uuid.uuid4().hex
        parent, name = os.path.split(self.path)
        self.staging = os.path.join(parent, f".{name}.quiver-staging-{self.job_id}")
        if self.schema is not None:
            self._check_schema(self.schema)

    def _check_schema(self, schema: pa.Schema) -> None:
        for name in self.partition_by:
            if name not in schema.names:
                raise unknown_column(name, schema.names, what="partition column")
        data = self.data_schema(schema)
        if len(schema) and not len(data):
            raise AnalysisException(f"Cannot use all columns ({', '.join(schema.names)}) for partition columns")
        self.format.check_writable(data)

    def data_schema(self, schema: pa.Schema) -> pa.Schema:
        """The columns written into files: everything except the partition columns."""
        return pa.schema([f for f in schema if f.name not in self.partition_by])

    def _exists(self) -> bool:
        return os.path.isfile(self.path) or (os.path.isdir(self.path) and bool(os.listdir(self.path)))

    def setup(self) -> bool:
        """Apply the save mode; False means 'ignore' found data and the job should not run."""
        if self.mode == "ignore" and os.path.exists(self.path):
            return False
        if self.mode in ("error", "errorifexists") and self._exists():
            raise AnalysisException(
                f"[PATH_ALREADY_EXISTS] Path {file_uri(self.path)} already exists. "
                "Set mode as \"overwrite\" to overwrite the existing path (or 'append' or 'ignore')."
            )
        os.makedirs(self.staging)
        return True

    def write_task(self, partition: int, batches: Iterator[pa.RecordBatch]) -> TaskOutput:
        """Write one task's batches as `part-<partition>-<uuid>` files (one per Hive folder)."""
        attempt = uuid.uuid4().hex
        writers: dict[str, FileWriter] = {}
        num_rows = 0
        schema = None
        try:
            for batch in batches:
                if schema is None:
                    schema = batch.schema
                    self._check_schema(schema)
                if batch.num_rows == 0:
                    continue
                num_rows += batch.num_rows
                for folder, part in self._by_folder(batch):
                    relative = os.path.join(folder, f"part-{partition:05d}-{attempt}.c000{self.format.extension(self.options)}")
                    if relative not in writers:
                        os.makedirs(os.path.join(self.staging, folder), exist_ok=True)
                        writers[relative] = self.format.open_writer(
                            os.path.join(self.staging, relative), part.schema, self.options)
                    writers[relative].write(part)
        finally:
            for writer in writers.values():
                writer.close()
        return TaskOutput(tuple(writers), num_rows, schema)

    def _by_folder(self, batch: pa.RecordBatch) -> Iterator[tuple[str, pa.RecordBatch]]:
        if not self.partition_by:
            yield "", batch
            return
        data_columns = [n for n in batch.schema.names if n not in self.partition_by]
        table = pa.Table.from_batches([batch]).append_column("__row", pa.array(range(batch.num_rows), pa.int64()))
        groups = table.group_by(list(self.partition_by), use_threads=False).aggregate([("__row", "list")])
        texts = {name: format_text_array(groups.column(name), timestamp_sep=" ").to_pylist() for name in self.partition_by}
        for i, rows in enumerate(groups.column("__row_list").to_pylist()):
            folder = os.path.join(*(f"{escape_partition_value(name)}={escape_partition_value(texts[name][i])}"
                                    for name in self.partition_by))
            yield folder, batch.select(data_columns).take(pa.array(rows, pa.int64()))

    def commit(self, task_results: list[TaskOutput]) -> None:
        """Keep only the files successful tasks reported, add `_SUCCESS` and move it all into place."""
        kept = {f for result in task_results if result for f in result.files}
        self._drop_unreported(kept)
        if not kept and not self.partition_by:
            self._write_empty(task_results)
        open(os.path.join(self.staging, "_SUCCESS"), "wb").close()
        if self.mode == "append" and os.path.isdir(self.path):
            self._move_files_in()
        else:
            self._swap_in()

    def _drop_unreported(self, kept: set[str]) -> None:
        """Files of failed attempts of a task that later succeeded are not part of the output."""
        for folder, _, names in os.walk(self.staging):
            for name in names:
                path = os.path.join(folder, name)
                if os.path.relpath(path, self.staging) not in kept:
                    os.remove(path)

    def _write_empty(self, task_results: list[TaskOutput]) -> None:
        """An empty result still gets one file, so reading it back gives the schema (as Spark does)."""
        schema = self.schema or next((r.schema for r in task_results if r and r.schema is not None), None)
        if schema is None:
            return
        path = os.path.join(self.staging, f"part-00000-{self.job_id}.c000{self.format.extension(self.options)}")
        self.format.open_writer(path, self.data_schema(schema), self.options).close()

    def _swap_in(self) -> None:
        if not os.path.exists(self.path):
            os.rename(self.staging, self.path)
            return
        if self.mode in ("error", "errorifexists") and self._exists():
            raise AnalysisException(f"[PATH_ALREADY_EXISTS] Path {file_uri(self.path)} appeared while the job ran.")
        parent, name = os.path.split(self.path)
        old = os.path.join(parent, f".{name}.quiver-old-{self.job_id}")
        os.rename(self.path, old)
        try:
            os.rename(self.staging, self.path)
        except OSError:
            os.rename(old, self.path)
            raise
        if os.path.isdir(old):
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.remove(old)

    def _move_files_in(self) -> None:
        for folder, _, names in os.walk(self.staging):
            target = os.path.join(self.path, os.path.relpath(folder, self.staging))
            os.makedirs(target, exist_ok=True)
            for name in names:
                os.replace(os.path.join(folder, name), os.path.join(target, name))
        shutil.rmtree(self.staging, ignore_errors=True)

    def abort(self) -> None:
        """Delete the staging folder; the destination was never touched before commit."""
        shutil.rmtree(self.staging, ignore_errors=True)
