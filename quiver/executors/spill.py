"""Spill files: operator state and blocks written to local disk as Arrow IPC streams, LZ4-compressed.

Each process that spills has one private folder (0700) under `quiver.local.dir` (`spark.local.dir`, else
the temp dir), named with its pid and start time; each task attempt works in a subfolder of it that is
removed when the attempt ends, whether it succeeded or failed, and the process's folder is removed when
the process exits. A folder whose process died (killed, crashed) is swept by the next session that
starts with the same `quiver.local.dir`.

Files are written and read back a batch at a time, so spilling holds one batch in memory, not the state.
"""
from __future__ import annotations

import atexit
import errno
import itertools
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.ipc as ipc

from quiver.engine.core.errors import StorageFullError

SPILL_PREFIX = "quiver-spill-"
OWNER_FILE = "owner"
COMPRESSION = "lz4"
_OPTIONS = ipc.IpcWriteOptions(compression=COMPRESSION)


def _start_time(pid: int) -> str | None:
    """A process's start time in clock ticks since boot (field 22 of /proc/PID/stat): with the pid, it names
    one process even after the pid is reused."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def _owner_alive(folder: str) -> bool:
    try:
        with open(os.path.join(folder, OWNER_FILE)) as f:
            pid_text, started = f.read().split()
    except (OSError, ValueError):
        # No owner written: a folder being created right now, or one left half made; young ones are kept.
        try:
            return os.stat(folder).st_mtime > time.time() - 60
        except OSError:
            return False
    return _start_time(int(pid_text)) == started


def sweep_spill_folders(root: str) -> list[str]:
    """Remove the spill folders under `root` whose process is gone; returns what was removed."""
    removed = []
    try:
        names = os.listdir(root)
    except OSError:
        return removed
    for name in names:
        folder = os.path.join(root, name)
        if not name.startswith(SPILL_PREFIX) or not os.path.isdir(folder) or os.path.islink(folder):
            continue
        try:
            if os.stat(folder).st_uid != os.getuid() or _owner_alive(folder):
                continue
        except OSError:
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


class SpillFolder:
    """This process's private spill folder under one root."""

    def __init__(self, root: str):
        self.root = root or tempfile.gettempdir()
        os.makedirs(self.root, exist_ok=True)
        self.path = tempfile.mkdtemp(prefix=f"{SPILL_PREFIX}{os.getpid()}-", dir=self.root)
        os.chmod(self.path, 0o700)
        with open(os.path.join(self.path, OWNER_FILE), "w") as f:
            f.write(f"{os.getpid()} {_start_time(os.getpid())}")
        self._ids = itertools.count()
        self._lock = threading.Lock()

    def space(self, label: str) -> SpillSpace:
        """A fresh subfolder for one task attempt (`label` says which, for a person looking at the disk)."""
        with self._lock:
            n = next(self._ids)
        return SpillSpace(os.path.join(self.path, f"{label}-{n}"))

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


_FOLDERS: dict[str, SpillFolder] = {}
_FOLDERS_LOCK = threading.Lock()


def process_spill_folder(root: str) -> SpillFolder:
    """This process's spill folder under `root` (made on first use, removed when the process exits)."""
    key = root or tempfile.gettempdir()
    with _FOLDERS_LOCK:
        folder = _FOLDERS.get(key)
        if folder is None or os.getpid() != _owner_pid(folder):
            folder = _FOLDERS[key] = SpillFolder(key)
            atexit.register(folder.remove)
        return folder


def _owner_pid(folder: SpillFolder) -> int:
    return int(os.path.basename(folder.path)[len(SPILL_PREFIX):].split("-", 1)[0])


class SpillSpace:
    """The spill files of one task attempt, in one folder made on the first spill and removed by `close`."""

    def __init__(self, path: str):
        self.path = path
        self._ids = itertools.count()
        self._lock = threading.Lock()
        self.files = 0
        self.bytes = 0

    def writer(self, schema: pa.Schema, label: str = "spill") -> SpillWriter:
        """A new spill file of `schema`'s batches."""
        with self._lock:
            if self.files == 0:
                os.makedirs(self.path, mode=0o700, exist_ok=True)
            n = next(self._ids)
            self.files += 1
        return SpillWriter(os.path.join(self.path, f"{label}-{n}.arrow"), schema, self)

    def write(self, schema: pa.Schema, batches: Iterable[pa.RecordBatch], label: str = "spill") -> SpillFile:
        """`batches` written to a new spill file."""
        with self.writer(schema, label) as w:
            for b in batches:
                w.write(b)
        return w.file()

    def close(self) -> None:
        """Remove every file of this space."""
        shutil.rmtree(self.path, ignore_errors=True)


@dataclass(frozen=True)
class SpillFile:
    """A finished spill file: its path, rows, the Arrow bytes written into it and its size on disk."""

    path: str
    schema: pa.Schema
    rows: int
    nbytes: int
    disk_bytes: int

    def read(self) -> Iterator[pa.RecordBatch]:
        """The batches, one at a time."""
        with pa.OSFile(self.path, "rb") as f:
            reader = ipc.open_stream(f)
            yield from reader

    def read_all(self) -> list[pa.RecordBatch]:
        return list(self.read())

    def delete(self) -> None:
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


class SpillWriter:
    """Writes one spill file a batch at a time."""

    def __init__(self, path: str, schema: pa.Schema, space: SpillSpace):
        self.path, self.schema, self.space = path, schema, space
        self.rows = self.nbytes = 0
        self._sink = pa.OSFile(path, "wb")
        self._writer = ipc.new_stream(self._sink, schema, options=_OPTIONS)
        self._file: SpillFile | None = None

    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        try:
            self._writer.write_batch(batch)
        except OSError as e:
            raise _full(e, self.path) from e
        self.rows += batch.num_rows
        self.nbytes += batch.nbytes

    def close(self) -> SpillFile:
        if self._file is None:
            try:
                self._writer.close()
                self._sink.close()
            except OSError as e:
                raise _full(e, self.path) from e
            size = os.path.getsize(self.path)
            self.space.bytes += size
            self._file = SpillFile(self.path, self.schema, self.rows, self.nbytes, size)
        return self._file

    def file(self) -> SpillFile:
        return self.close()

    def __enter__(self) -> SpillWriter:
        return self

    def __exit__(self, kind: object, *rest: object) -> None:
        self.close()


def _full(error: OSError, path: str) -> Exception:
    """ENOSPC while spilling, as StorageFullError naming the spill folder and the remedy."""
    if getattr(error, "errno", None) in (errno.ENOSPC, errno.EDQUOT) or "No space left" in str(error):
        folder = os.path.dirname(os.path.dirname(path))
        free = shutil.disk_usage(folder).free if os.path.exists(folder) else 0
        return StorageFullError(f"no space left to spill to {path} ({free} bytes free in {folder}); set "
                                f"quiver.local.dir (spark.local.dir) to a folder with more space, or raise "
                                f"quiver.memory.limit")
    return error


__all__ = ["SpillFile", "SpillFolder", "SpillSpace", "SpillWriter", "process_spill_folder", "sweep_spill_folders"]
