"""File formats by name: the one table the reader and writer look formats up in."""
from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pyarrow as pa

from quiver.connectors.base import ReadOptions
from quiver.connectors.csv import CsvFormat
from quiver.connectors.files import FileFormat, FileSource
from quiver.connectors.ipc import IpcFormat
from quiver.connectors.jdbc import jdbc_sink, jdbc_source
from quiver.connectors.json import JsonFormat
from quiver.connectors.parquet import ParquetFormat
from quiver.connectors.sink import FileSink
from quiver.engine.core.errors import ConfigurationError
from quiver.engine.core.types import StructType

FILE_FORMATS: dict[str, Callable[[], FileFormat]] = {
    "parquet": ParquetFormat,
    "csv": CsvFormat,
    "json": JsonFormat,
    "arrow": IpcFormat,
    "ipc": IpcFormat,
    "feather": IpcFormat,
}


# Formats that name a database table through options instead of files through a path.
TABLE_SOURCES: dict[str, Callable[..., Any]] = {"jdbc": jdbc_source}
TABLE_SINKS: dict[str, Callable[..., Any]] = {"jdbc": jdbc_sink}


def is_table_format(name: str) -> bool:
    """Whether `name` reads and writes database tables (options, no path)."""
    return str(name).lower() in TABLE_SOURCES


def table_source(format: str, options: Mapping[str, Any], predicates: Sequence[str] | None = None) -> Any:
    """A `Source` over the table or query `options` name; jdbc reads one partition per predicate if given."""
    return TABLE_SOURCES[str(format).lower()](options, predicates)


def table_sink(format: str, mode: str | None, options: Mapping[str, Any], schema: StructType) -> Any:
    """A `Sink` writing a DataFrame of `schema` into the table `options` name with save `mode`."""
    return TABLE_SINKS[str(format).lower()](mode, options, schema)


def file_format(name: str) -> FileFormat:
    """The format registered as `name` (case-insensitive); unknown names list the known ones."""
    factory = FILE_FORMATS.get(str(name).lower())
    if factory is None:
        raise ConfigurationError(
            f"unknown data source format {name!r}; valid formats are {', '.join([*FILE_FORMATS, *TABLE_SOURCES])}")
    return factory()


def file_source(
    format: str,
    paths: str | os.PathLike | Sequence[str | os.PathLike],
    options: Mapping[str, Any] | ReadOptions | None = None,
    schema: StructType | pa.Schema | str | None = None,
) -> FileSource:
    """A `Source` reading `paths` as `format` with Spark-style `options` and an optional user schema."""
    return FileSource(file_format(format), paths, options, schema)


def file_sink(
    format: str,
    path: str | os.PathLike,
    mode: str | None = None,
    partition_by: Sequence[str] = (),
    options: Mapping[str, Any] | ReadOptions | None = None,
    schema: pa.Schema | None = None,
) -> FileSink:
    """A `Sink` writing `format` files under `path` with save `mode` and Hive `partition_by` folders."""
    return FileSink(os.fspath(path), file_format(format), mode or "errorifexists", tuple(partition_by), options, schema)
