"""The file `Sink`: each task writes into a staging folder beside the destination, and the
driver's commit moves everything into place at once, so a failed job leaves nothing behind.

An object store has no rename: there the staging folder is a hidden prefix (which readers skip)
that each task uploads its finished files into, and the commit copies the reported objects to
their final keys, `_SUCCESS` last, then deletes what overwrite replaces and the staging prefix.
A failed commit deletes the copies it made; an abort deletes the staging prefix."""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs

from quiver.connectors.base import ReadOptions
from quiver.connectors.files import FileFormat, FileWriter
from quiver.connectors.object_store import (
    ObjectStoreError,
    binding_for,
    copy_object,
    delete_prefix,
    delete_stale,
    has_objects,
    is_object_path,
    list_objects,
    normalize_path,
    object_info,
    require_bucket,
    split_uri,
    upload,
    write_empty_object,
)
from quiver.connectors.options import option_choice, read_options
from quiver.connectors.paths import escape_partition_value, escape_path_name, file_uri
from quiver.connectors.text_values import format_text_array
from quiver.engine.core.errors import AnalysisException, unknown_column

SAVE_MODES = ("append", "overwrite", "error", "errorifexists", "ignore")


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
        self.path = normalize_path(self.path)
        self.remote = is_object_path(self.path)
        if self.remote and not split_uri(self.path)[1]:
            raise AnalysisException(f"cannot write to the root of a bucket ({self.path}); write under a prefix "
                                    f"such as {self.path}/output")
        self.storage = binding_for([self.path])
        mode = ReadOptions({"mode": self.mode or "errorifexists"})
        self.mode = option_choice(mode, "mode", SAVE_MODES, "errorifexists")
        self.partition_by = tuple(self.partition_by or ())
        self.options = read_options(self.options)
        self.format.check_write_options(self.options)
        self.extension = self.format.extension(self.options)
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
        if self.remote:
            return has_objects(self.path)
        return os.path.isfile(self.path) or (os.path.isdir(self.path) and bool(os.listdir(self.path)))

    def _present(self) -> bool:
        if self.remote:
            return object_info(self.path).type != pafs.FileType.NotFound
        return os.path.exists(self.path)

    def setup(self) -> bool:
        """Apply the save mode; False means 'ignore' found data and the job should not run."""
        if self.remote:
            require_bucket(self.path)
        if self.mode == "ignore" and self._present():
            return False
        if self.mode in ("error", "errorifexists") and self._exists():
            raise AnalysisException(
                f"[PATH_ALREADY_EXISTS] Path {file_uri(self.path)} already exists. "
                "Set mode as \"overwrite\" to overwrite the existing path (or 'append' or 'ignore')."
            )
        if not self.remote:
            os.makedirs(self.staging)
        return True

    def write_task(self, partition: int, batches: Iterator[pa.RecordBatch]) -> TaskOutput:
        """Write one task's batches as `part-<partition>-<uuid>` files (one per Hive folder); for an
        object store they are written to a local folder, then uploaded under the staging prefix."""
        if not self.remote:
            return self._write_files(self.staging, partition, batches)
        local = tempfile.mkdtemp(prefix="quiver-upload-")
        try:
            output = self._write_files(local, partition, batches)
            for relative in output.files:
                upload(os.path.join(local, relative), f"{self.staging}/{relative}")
            return output
        finally:
            shutil.rmtree(local, ignore_errors=True)

    def _write_files(self, root: str, partition: int, batches: Iterator[pa.RecordBatch]) -> TaskOutput:
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
                    relative = os.path.join(folder, f"part-{partition:05d}-{attempt}.c000{self.extension}")
                    if relative not in writers:
                        os.makedirs(os.path.join(root, folder), exist_ok=True)
                        writers[relative] = self.format.open_writer(
                            os.path.join(root, relative), part.schema, self.options)
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
        # Grouped under positional names: pyarrow reads a name such as '../x' as a nested field path.
        keys = [f"key{i}" for i in range(len(self.partition_by))]
        table = pa.table([*(batch.column(n) for n in self.partition_by), pa.array(range(batch.num_rows), pa.int64())],
                         names=[*keys, "row"])
        groups = table.group_by(keys, use_threads=False).aggregate([("row", "list")])
        texts = {name: format_text_array(groups.column(key), timestamp_sep=" ").to_pylist()
                 for name, key in zip(self.partition_by, keys)}
        for i, rows in enumerate(groups.column("row_list").to_pylist()):
            folder = os.path.join(*(f"{escape_path_name(name)}={escape_partition_value(texts[name][i])}"
                                    for name in self.partition_by))
            yield folder, batch.select(data_columns).take(pa.array(rows, pa.int64()))

    def commit(self, task_results: list[TaskOutput]) -> None:
        """Keep only the files successful tasks reported, add `_SUCCESS` and move it all into place."""
        kept = {f for result in task_results if result for f in result.files}
        if self.remote:
            self._commit_objects(kept, task_results)
            return
        self._drop_unreported(kept)
        if not kept and not self.partition_by:
            self._write_empty(task_results, self.staging)
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

    def _write_empty(self, task_results: list[TaskOutput], root: str) -> str | None:
        """An empty result still gets one file, so reading it back gives the schema (as Spark does);
        returns its name under `root`, or None when no schema is known."""
        schema = self.schema or next((r.schema for r in task_results if r and r.schema is not None), None)
        if schema is None:
            return None
        name = f"part-00000-{self.job_id}.c000{self.extension}"
        self.format.open_writer(os.path.join(root, name), self.data_schema(schema), self.options).close()
        return name

    def _commit_objects(self, kept: set[str], task_results: list[TaskOutput]) -> None:
        """Copy the reported staged objects to their final keys, `_SUCCESS` last, then delete what
        overwrite replaces and the staging prefix; a failed copy deletes the copies made so far."""
        if not kept and not self.partition_by:
            with tempfile.TemporaryDirectory(prefix="quiver-upload-") as local:
                name = self._write_empty(task_results, local)
                if name is not None:
                    upload(os.path.join(local, name), f"{self.staging}/{name}")
                    kept = {name}
        if self.mode in ("error", "errorifexists") and self._exists():
            raise AnalysisException(f"[PATH_ALREADY_EXISTS] Path {file_uri(self.path)} appeared while the job ran.")
        existing = {uri for uri, _ in list_objects(self.path)}
        copied: list[str] = []
        try:
            for relative in sorted(kept):
                copy_object(f"{self.staging}/{relative}", f"{self.path}/{relative}")
                copied.append(f"{self.path}/{relative}")
            write_empty_object(f"{self.path}/_SUCCESS")
            copied.append(f"{self.path}/_SUCCESS")
        except BaseException:
            delete_stale(self.path, [uri for uri in copied if uri not in existing], keep=existing)
            raise
        if self.mode == "overwrite":
            delete_stale(self.path, existing.difference(copied), keep=copied)
        delete_prefix(self.staging)

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
        if not self.remote:
            shutil.rmtree(self.staging, ignore_errors=True)
            return
        # Best effort, as rmtree's ignore_errors: the job's own error is the one to report.
        with contextlib.suppress(ObjectStoreError, AnalysisException):
            delete_prefix(self.staging)
