"""Spill files: private folders, Arrow IPC round trips, removal when a task ends, sweeping after a crash."""
from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys

import pyarrow as pa
import pytest

from quiver.engine.core.errors import StorageFullError
from quiver.executors import spill
from quiver.executors.spill import SPILL_PREFIX, SpillFolder, sweep_spill_folders


def batch(n: int, offset: int = 0) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict({"k": list(range(offset, offset + n)), "s": [f"v{i}" for i in range(n)]})


def test_a_spill_folder_is_private_and_its_files_round_trip_compressed(tmp_path):
    folder = SpillFolder(str(tmp_path))
    assert stat.S_IMODE(os.stat(folder.path).st_mode) == 0o700
    space = folder.space("stage1-task0-attempt0")
    written = space.write(batch(3).schema, [batch(3), batch(2, 10)])
    assert written.rows == 5 and written.disk_bytes > 0
    assert pa.Table.from_batches(written.read_all()).to_pydict() == pa.Table.from_batches(
        [batch(3), batch(2, 10)]).to_pydict()
    with pa.OSFile(written.path, "rb") as f:
        assert pa.ipc.open_stream(f).read_all().num_rows == 5
    space.close()
    assert not os.path.exists(written.path) and not os.path.exists(space.path)
    folder.remove()


def test_sweeping_removes_the_folders_of_processes_that_died_and_keeps_live_ones(tmp_path):
    code = (f"import sys, os; sys.path.insert(0, {os.getcwd()!r}); from quiver.executors.spill import SpillFolder; "
            f"f = SpillFolder({str(tmp_path)!r}); s = f.space('t'); "
            "s.write(__import__('pyarrow').schema([('a', 'int64')]), []); print(f.path); os._exit(0)")
    dead = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert os.path.isdir(dead)
    alive = SpillFolder(str(tmp_path))
    other = tmp_path / "not-ours"
    other.mkdir()
    assert sweep_spill_folders(str(tmp_path)) == [dead]
    assert not os.path.exists(dead) and os.path.isdir(alive.path) and other.is_dir()
    alive.remove()


class FullDisk:
    """An IPC writer whose every write meets a full disk."""

    def write_batch(self, batch: pa.RecordBatch) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    def close(self) -> None:
        pass


def test_a_full_disk_while_spilling_names_the_file_and_the_keys_to_change(tmp_path):
    writer = SpillFolder(str(tmp_path)).space("t").writer(batch(1).schema)
    writer._writer = FullDisk()
    with pytest.raises(StorageFullError, match=r"no space left to spill to .*quiver.local.dir"):
        writer.write(batch(1))


def test_spill_folder_names_carry_the_prefix_the_sweep_looks_for(tmp_path):
    folder = SpillFolder(str(tmp_path))
    assert os.path.basename(folder.path).startswith(f"{SPILL_PREFIX}{os.getpid()}-")
    assert spill.process_spill_folder(str(tmp_path)) is spill.process_spill_folder(str(tmp_path))
    folder.remove()
