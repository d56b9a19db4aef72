"""The file `Sink`: each task writes into a staging folder beside the destination, and the
driver's commit publishes them through `connectors.commit`, whose manifest makes the new output
visible at one instant, so readers see the old output or the new, whole, never a mix.

On local disk tasks write straight into the staging folder; on an object store each task writes
a local file and uploads it under the staging prefix, and the commit copies it to its final key.
A first write of a local path renames the whole staging folder into place, manifest included. A
failed job deletes its staging; a killed one leaves it, and the next writer of the path sweeps it
(`connectors.commit.sweep`)."""
from __future__ import annotations

import contextlib
import errno
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from quiver.connectors.base import ReadOptions
from quiver.connectors.commit import (
    JOB_RECORD,
    MANIFEST,
    SUCCESS,
    Manifest,
    job_ended,
    output_folder,
    publish,
    snapshot,
    staging_path,
    success_body,
    sweep,
    write_job_record,
)
from quiver.connectors.faults import fault_point
from quiver.connectors.files import FileFormat, FileWriter
from quiver.connectors.object_store import (
    ObjectStoreError,
    binding_for,
    delete_prefix,
    is_object_path,
    normalize_path,
    require_bucket,
    split_uri,
    upload,
)
from quiver.connectors.options import option_choice, read_options
from quiver.connectors.paths import escape_partition_value, escape_path_name, file_uri
from quiver.connectors.text_values import format_text_array
from quiver.engine.core.errors import AnalysisException, StorageFullError, unknown_column

SAVE_MODES = ("append", "overwrite", "error", "errorifexists", "ignore")


def is_storage_full(error: BaseException) -> bool:
    """Whether `error` says the file system is out of space or over its quota."""
    return isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT)


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
        self.staging = staging_path(self.path, self.job_id)
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

    def setup(self) -> bool:
        """Sweep what dead jobs left at the path, then apply the save mode; False means 'ignore' found
        data and the job should not run."""
        if self.remote:
            require_bucket(self.path)
        elif os.path.isfile(self.path):
            self._replace_plain_file()
        folder = output_folder(self.path)
        sweep(folder, self.job_id)
        live = snapshot(folder).committed()
        if self.mode == "ignore" and live is not None:
            return False
        if self.mode in ("error", "errorifexists") and live:
            raise AnalysisException(
                f"[PATH_ALREADY_EXISTS] Path {file_uri(self.path)} already exists. "
                "Set mode as \"overwrite\" to overwrite the existing path (or 'append' or 'ignore')."
            )
        write_job_record(folder, self.staging, self.job_id)
        return True

    def _replace_plain_file(self) -> None:
        """A file where the output folder goes: error and ignore treat it as data; other modes delete it
        (Spark's overwrite does the same), which no reader of a folder can observe half-done."""
        if self.mode in ("error", "errorifexists"):
            raise AnalysisException(
                f"[PATH_ALREADY_EXISTS] Path {file_uri(self.path)} already exists. "
                "Set mode as \"overwrite\" to overwrite the existing path (or 'append' or 'ignore')."
            )
        if self.mode != "ignore":
            os.remove(self.path)

    def write_task(self, partition: int, batches: Iterator[pa.RecordBatch]) -> TaskOutput:
        """Write one task's batches as `part-<partition>-<uuid>` files (one per Hive folder); for an
        object store they are written to a local folder, then uploaded under the staging prefix."""
        if not self.remote:
            return self._write_files(self.staging, partition, batches)
        local = tempfile.mkdtemp(prefix="quiver-upload-")
        try:
            output = self._write_files(local, partition, batches)
            for relative in output.files:
                fault_point("task.upload")
                upload(os.path.join(local, relative), f"{self.staging}/{relative}")
            return output
        finally:
            shutil.rmtree(local, ignore_errors=True)

    def _write_files(self, root: str, partition: int, batches: Iterator[pa.RecordBatch]) -> TaskOutput:
        """Write the batches under `root`; a failed attempt removes what it wrote, so a retry (or the
        rest of the job) has the space back, and a full disk fails naming the output (`StorageFullError`)."""
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
            for writer in writers.values():
                writer.close()
        except BaseException as error:
            for relative, writer in writers.items():
                with contextlib.suppress(Exception):
                    writer.close()
                with contextlib.suppress(FileNotFoundError):
                    os.remove(os.path.join(root, relative))
            if is_storage_full(error):
                raise self.storage_full(root, error) from error
            raise
        return TaskOutput(tuple(writers), num_rows, schema)

    def storage_full(self, where: str, error: BaseException) -> StorageFullError:
        """The error for a write to `where` (the staging folder, or the local folder of an upload) that
        found its file system full."""
        try:
            free = f"{shutil.disk_usage(where).free:,} bytes free"
        except OSError:
            free = "free space unknown"
        if self.remote:
            place = f"; a task writes its files to local disk ({free} in {where}) before uploading them"
            remedy = "free space there or point TMPDIR at a larger disk"
        else:
            place, remedy = f" ({free} on its file system)", "free space there or write elsewhere"
        return StorageFullError(
            f"No space left on the device writing {file_uri(self.path)}{place}: {error}. Nothing of this write "
            f"was committed, so the path holds what it held before; {remedy}.")

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
        """Keep only the files successful tasks reported and publish them (`connectors.commit`); a commit
        that finds the disk full has been rolled back by the protocol and fails naming the output."""
        try:
            self._commit(task_results)
        except OSError as error:
            if is_storage_full(error):
                where = tempfile.gettempdir() if self.remote else os.path.dirname(self.staging)
                raise self.storage_full(where, error) from error
            raise
        job_ended(self.job_id)

    def _commit(self, task_results: list[TaskOutput]) -> None:
        kept = {f for result in task_results if result for f in result.files}
        if self.remote:
            self._commit_objects(kept, task_results)
            return
        self._drop_unreported(kept)
        if not kept and not self.partition_by:
            name = self._write_empty(task_results, self.staging)
            kept = {name} if name is not None else kept
        if not os.path.exists(self.path) and self._rename_into_place(kept):
            return
        staged = {f.replace(os.sep, "/"): os.path.join(self.staging, f) for f in kept}
        publish(output_folder(self.path), staged, self.job_id, append=self.mode == "append",
                refuse_existing=self.mode in ("error", "errorifexists"))
        fault_point("commit.cleanup")
        shutil.rmtree(self.staging, ignore_errors=True)

    def _rename_into_place(self, kept: set[str]) -> bool:
        """A first write of a local path: the staging folder, manifest and `_SUCCESS` added, becomes the
        output in one rename, for Spark's readers as for ours. False if the path appeared meanwhile."""
        files = tuple(sorted(f.replace(os.sep, "/") for f in kept))
        with open(os.path.join(self.staging, SUCCESS), "wb") as f:
            f.write(success_body(self.job_id))
        with open(os.path.join(self.staging, MANIFEST), "wb") as f:
            f.write(Manifest(self.job_id, files).to_bytes())
        fault_point("commit.rename")
        try:
            os.rename(self.staging, self.path)
        except OSError:
            for name in (SUCCESS, MANIFEST):
                os.remove(os.path.join(self.staging, name))
            return False
        fault_point("commit.cleanup")
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.path.join(self.path, JOB_RECORD))
        return True

    def _drop_unreported(self, kept: set[str]) -> None:
        """Files of failed attempts of a task that later succeeded are not part of the output."""
        for folder, _, names in os.walk(self.staging):
            for name in names:
                path = os.path.join(folder, name)
                if os.path.relpath(path, self.staging) not in kept and name != JOB_RECORD:
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
        """Publish the reported staged objects (copied to their final keys), then drop the staging prefix."""
        if not kept and not self.partition_by:
            with tempfile.TemporaryDirectory(prefix="quiver-upload-") as local:
                name = self._write_empty(task_results, local)
                if name is not None:
                    fault_point("commit.upload")
                    upload(os.path.join(local, name), f"{self.staging}/{name}")
                    kept = {name}
        staged = {relative: f"{self.staging}/{relative}" for relative in kept}
        publish(output_folder(self.path), staged, self.job_id, append=self.mode == "append",
                refuse_existing=self.mode in ("error", "errorifexists"))
        fault_point("commit.cleanup")
        delete_prefix(self.staging)

    def abort(self) -> None:
        """Delete the staging folder; a failed commit has already undone what it moved in. What cannot be
        deleted now (the store failing) the next writer of the path sweeps."""
        try:
            if not self.remote:
                shutil.rmtree(self.staging, ignore_errors=True)
                return
            # Best effort, as rmtree's ignore_errors: the job's own error is the one to report.
            with contextlib.suppress(ObjectStoreError, AnalysisException):
                delete_prefix(self.staging)
        finally:
            job_ended(self.job_id)
