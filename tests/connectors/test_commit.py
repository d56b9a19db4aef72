"""quiver/connectors/commit.py: what a reader takes from a manifest, when a manifest stops counting, and
what the next writer sweeps. The kills at each step are in test_commit_faults.py and tests/chaos."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from quiver.connectors import commit
from quiver.connectors.commit import JOB_RECORD, MANIFEST, SUCCESS, JobRecord, LocalFolder, live_files, sweep
from quiver.connectors.registry import file_source
from tests.connectors.fault_writer import WriteRequest, generation_rows, leftovers, rows_of, run_write


def committed(tmp_path, partition_by=()) -> str:
    path = str(tmp_path / "out")
    run_write(WriteRequest(path, 1, "overwrite", partition_by))
    return path


def stray_file(path: str, name: str) -> None:
    pq.write_table(pa.table({"id": [7], "gen": [7], "k": [0]}), os.path.join(path, name))


def test_readers_list_only_what_the_manifest_names(tmp_path):
    path = committed(tmp_path)
    stray_file(path, "part-00009-" + "a" * 32 + ".c000.snappy.parquet")
    assert rows_of(path) == generation_rows(1)
    manifest = json.loads(open(os.path.join(path, MANIFEST)).read())
    assert [os.path.basename(p) for p, _ in live_files(path)] == manifest["files"]
    assert json.loads(open(os.path.join(path, SUCCESS)).read())["job"] == manifest["job"]


def test_a_foreign_write_rewriting_success_makes_the_folder_plain_again(tmp_path):
    """Spark appending to a Quiver folder writes its own (empty) _SUCCESS: its files must be read too."""
    path = committed(tmp_path)
    stray_file(path, "part-00000-1b2c-c000.snappy.parquet")
    open(os.path.join(path, SUCCESS), "wb").close()
    assert rows_of(path) == sorted(generation_rows(1) + [(7, 7, 0)])


def test_a_folder_without_a_manifest_reads_as_before(tmp_path):
    os.makedirs(tmp_path / "spark")
    stray_file(str(tmp_path / "spark"), "part-00000-x-c000.snappy.parquet")
    open(tmp_path / "spark" / SUCCESS, "wb").close()
    assert rows_of(str(tmp_path / "spark")) == [(7, 7, 0)]


def test_a_partition_folder_is_read_through_the_manifest_of_its_output(tmp_path):
    path = committed(tmp_path, ("k",))
    stray_file(os.path.join(path, "k=1"), "part-00009-" + "b" * 32 + ".c000.snappy.parquet")
    source = file_source("parquet", os.path.join(path, "k=1"), {"basePath": path})
    names = [os.path.basename(f.path) for f in source.listing.files]
    assert len(names) == 2 and not any("b" * 32 in n for n in names)  # one per task, not the stray
    assert sorted(r for r in rows_of(path) if r[2] == 1) == [r for r in generation_rows(1) if r[2] == 1]


def test_a_manifest_naming_a_deleted_file_says_which(tmp_path):
    path = committed(tmp_path)
    gone = sorted(n for n in os.listdir(path) if n.startswith("part-"))[0]
    os.remove(os.path.join(path, gone))
    with pytest.raises(Exception, match=f"names files that are gone: {gone}"):
        rows_of(path)


def _staging(path: str, job: str, record: JobRecord | None) -> str:
    staging = commit.staging_path(path, job)
    os.makedirs(staging)
    if record is not None:
        with open(os.path.join(staging, JOB_RECORD), "wb") as f:
            f.write(record.to_bytes())
    return staging


def test_sweep_removes_staging_of_dead_jobs_only(tmp_path):
    path = committed(tmp_path)
    dead_pid = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True).stdout.strip()
    host, now = socket.gethostname(), time.time()
    dead = _staging(path, "dead", JobRecord("dead", host, int(dead_pid), "1", now))
    live = commit.staging_path(path, "live")
    commit.write_job_record(LocalFolder(path), live, "live")
    elsewhere = _staging(path, "elsewhere", JobRecord("elsewhere", "another-host", 1, "", now))
    forgotten = _staging(path, "forgotten", JobRecord("forgotten", "another-host", 1, "", now - 2 * 86400))
    unrecorded = _staging(path, "unrecorded", None)
    os.utime(unrecorded, (now - 2 * 86400,) * 2)
    stray_file(path, "part-00009-" + "c" * 32 + ".c000.snappy.parquet")
    sweep(LocalFolder(path), "own")
    assert sorted(os.path.exists(p) for p in (dead, live, elsewhere, forgotten, unrecorded)) == \
        [False, False, False, True, True]
    assert os.path.exists(live) and os.path.exists(elsewhere)
    # A job that may still be writing could own the stray file: it stays until no other job lives.
    assert any("c" * 32 in n for n in os.listdir(path))
    for staging in (live, elsewhere):
        os.remove(os.path.join(staging, JOB_RECORD))
        os.rmdir(staging)
    commit.job_ended("live")
    sweep(LocalFolder(path), "own")
    assert leftovers(path) == [] and rows_of(path) == generation_rows(1)


def test_staging_of_an_ended_job_of_this_process_is_swept(tmp_path):
    """An abort that could not delete its staging (the store failing) leaves it behind in a process that
    lives on: once the job has ended, the next writer sweeps it, as it would a dead process's."""
    path = committed(tmp_path)
    staging = commit.staging_path(path, "failed")
    commit.write_job_record(LocalFolder(path), staging, "failed")
    sweep(LocalFolder(path), "own")
    assert os.path.exists(staging), "a job still running in this process keeps its staging"
    commit.job_ended("failed")
    sweep(LocalFolder(path), "own")
    assert not os.path.exists(staging) and leftovers(path) == []


def test_the_old_protocols_half_done_swap_is_rolled_back(tmp_path):
    path = committed(tmp_path)
    os.rename(path, str(tmp_path / ".out.quiver-old-0123"))
    sweep(LocalFolder(path), "own")
    assert rows_of(path) == generation_rows(1) and os.listdir(tmp_path) == ["out"]


def test_fault_log_counts_each_step(tmp_path, monkeypatch):
    log = tmp_path / "points"
    monkeypatch.setenv("QUIVER_FAULT_LOG", str(log))
    committed(tmp_path)
    run_write(WriteRequest(str(tmp_path / "out"), 2, "overwrite"))
    steps = [line.split()[1] for line in log.read_text().splitlines()]
    assert "commit.rename" in steps and steps.count("commit.move") == 2
    assert steps.index("commit.success") < steps.index("commit.intent") < steps.index("commit.move") \
        < steps.index("commit.manifest") < steps.index("commit.replace")
