"""Turn the paths a user gives into data files and Hive-style partition columns, as Spark does.

A path may be a file, a folder (walked recursively) or a glob, on the local disk or in an
object store (`s3://bucket/prefix`, a prefix being a folder; see `connectors.object_store`).
Names starting with `_` or `.` (`_SUCCESS`, `.crc`, staging folders) are skipped unless they
are `key=value` folders; a folder Quiver committed lists only the files its manifest names
(`connectors.commit`), so a reader never sees a write half done.
Folders named `key=value` below a given folder become partition columns whose type is
inferred from all their values: int, bigint, decimal, double, date, timestamp, else string.
"""
from __future__ import annotations

import fnmatch
import glob
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.fs as pafs

from quiver.connectors.commit import live_files
from quiver.connectors.object_store import (
    glob_objects,
    is_object_path,
    missing_path_error,
    normalize_path,
    object_info,
)
from quiver.connectors.text_values import infer_text_type, parse_text_scalar
from quiver.engine.core.errors import AnalysisException

NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
_GLOB_CHARS = frozenset("*?[{")


@dataclass(frozen=True)
class DataFile:
    """One data file: absolute path, size in bytes and its raw `key=value` partition strings."""

    path: str
    size: int
    partition: tuple[tuple[str, str | None], ...] = ()


@dataclass(frozen=True)
class FileListing:
    """The files behind a read, in path order, and the typed partition columns they share."""

    roots: tuple[str, ...]
    files: tuple[DataFile, ...]
    partition_schema: pa.Schema

    def partition_scalars(self, file: DataFile) -> dict[str, pa.Scalar]:
        """Typed partition values of `file`, keyed by column name."""
        raw = dict(file.partition)
        return {f.name: parse_text_scalar(raw.get(f.name), f.type) for f in self.partition_schema}

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)


def file_uri(path: str) -> str:
    """Spark's way of naming a path in messages: `file:/abs/path`, or the object URI."""
    if is_object_path(path):
        return normalize_path(path)
    return "file:" + os.path.abspath(path)


def list_files(
    paths: str | os.PathLike | Sequence[str | os.PathLike],
    *,
    base_path: str | None = None,
    recursive_lookup: bool = False,
    name_filter: str | None = None,
    partition_types: dict[str, pa.DataType] | None = None,
) -> FileListing:
    """Expand paths, folders and globs into data files and infer their partition columns.

    `base_path` is Spark's `basePath` option (partition folders are read from there down),
    `recursive_lookup` turns partition inference off, `name_filter` is `pathGlobFilter`
    and `partition_types` pins the type of partition columns a user schema names.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    if not paths:
        raise AnalysisException("no path given to read; pass a file, a folder or a glob")
    roots = [normalize_path(p) for p in paths]
    found: list[tuple[str, str, int]] = []
    for root in roots:
        for expanded in _expand_glob(root):
            found.extend(_walk(expanded, recursive_lookup))
    if name_filter:
        found = [f for f in found if fnmatch.fnmatchcase(os.path.basename(f[1]), name_filter)]
    found = sorted(dict.fromkeys(found), key=lambda f: f[1])
    if base_path is not None:
        base = normalize_path(base_path)
        found = [(base, path, size) for _, path, size in found]
    files = []
    for base, path, size in found:
        partition = () if recursive_lookup else _partition_of(base, path)
        files.append(DataFile(path, size, partition))
    schema = _partition_schema(files, partition_types or {})
    return FileListing(tuple(roots), tuple(files), schema)


def _expand_glob(root: str) -> list[str]:
    if is_object_path(root):
        if _GLOB_CHARS.intersection(root):
            return glob_objects(root)
        if object_info(root).type == pafs.FileType.NotFound:
            raise missing_path_error(root)
        return [root]
    if not _GLOB_CHARS.intersection(root):
        if not os.path.exists(root):
            raise AnalysisException(f"[PATH_NOT_FOUND] Path does not exist: {file_uri(root)}.")
        return [root]
    matches = sorted(glob.glob(root))
    if not matches:
        raise AnalysisException(f"[PATH_NOT_FOUND] Path does not exist: {file_uri(root)}.")
    return matches


def _walk(root: str, recursive_lookup: bool) -> Iterable[tuple[str, str, int]]:
    """(base folder, file, size) under `root`; the base is where partition folders start. A folder is
    read through its commit manifest (`connectors.commit`): only the files of its last commit."""
    if is_object_path(root):
        if object_info(root).type == pafs.FileType.File:
            yield os.path.dirname(root), root, object_info(root).size
            return
    elif os.path.isfile(root):
        yield os.path.dirname(root), root, os.path.getsize(root)
        return
    files = live_files(root)
    if files is None:
        raise AnalysisException(f"[PATH_NOT_FOUND] Path does not exist: {file_uri(root)} (it holds no committed "
                                "output yet: a first write to it is running or died before its commit).")
    for path, size in files:
        yield root, path, size


def _partition_of(base: str, path: str) -> tuple[tuple[str, str | None], ...]:
    """`key=value` folders between `base` and the file, read from the file upward as Spark does."""
    parts = os.path.relpath(os.path.dirname(path), base).split(os.sep)
    pairs: list[tuple[str, str | None]] = []
    for part in reversed(parts):
        if part in (".", ""):
            break
        key, eq, value = part.partition("=")
        if not eq or not key:
            break
        value = unquote(value)
        pairs.append((unquote(key), None if value in (NULL_PARTITION, "") else value))
    return tuple(reversed(pairs))


def _partition_schema(files: list[DataFile], pinned: dict[str, pa.DataType]) -> pa.Schema:
    if not files:
        return pa.schema([])
    layouts: dict[tuple[str, ...], str] = {}
    for f in files:
        layouts.setdefault(tuple(k for k, _ in f.partition), f.path)
    if len(layouts) > 1:
        listing = "\n".join(f"  {list(cols) or '(no partition folders)'}: {file_uri(path)}"
                            for cols, path in layouts.items())
        raise AnalysisException(
            "Conflicting directory structures detected: files sit under different partition "
            f"folders. Read each layout separately or set basePath.\n{listing}"
        )
    names = next(iter(layouts))
    fields = []
    for i, name in enumerate(names):
        values = [f.partition[i][1] for f in files]
        fields.append(pa.field(name, pinned.get(name) or infer_text_type(values, partition=True)))
    return pa.schema(fields)


# Spark's ExternalCatalogUtils.charToEscape (as on Linux): control characters, the path, glob and
# partition-syntax characters, quotes and brackets. NUL, which no path can hold, is escaped too.
_ESCAPED = frozenset(map(chr, range(0x20))) | frozenset('"#%\'*/:=?\\\x7f{[]^')


def escape_path_name(text: str) -> str:
    """A partition column's name or value as one folder-name part, escaped as Spark's escapePathName
    does (`/` as `%2F`, `=` as `%3D`, ...; other characters, non-ASCII ones too, as they are), so no
    name or value can reach outside the folder it is written under."""
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in text)


def escape_partition_value(value: str | None) -> str:
    """A partition value as a folder name: Spark's escaping, null and '' as the Hive default."""
    if value is None or value == "":
        return NULL_PARTITION
    return escape_path_name(value)
