"""Writes that die mid-commit, for the fault-injection and chaos tests.

`python -m tests.connectors.fault_writer` imports Quiver once, then for each JSON request on stdin
forks a child that runs one write through the sink protocol (setup, a task per slice, commit, abort
on error) with `QUIVER_FAULT_AT` set, and answers the child's exit status. The child is a real
process killed by `os._exit` at its Nth fault point: no `finally`, no `atexit`, as a killed
driver. The server itself never touches storage, so each child reaches S3 with fresh clients.

`FaultWriter` (the test side) starts the server and sends it requests; `generation_rows`, `rows_of`
and `leftovers` say what a write should have produced and what a reader and the folder show.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import traceback
from dataclasses import asdict, dataclass, field

import pyarrow as pa

from quiver.connectors.commit import MANIFEST, STAGING_MARK, SUCCESS, is_hidden, output_folder, snapshot
from quiver.connectors.faults import FAULT_AT_ENV, FAULT_EXIT_CODE, FAULT_LOG_ENV
from quiver.connectors.object_store import is_object_path, list_children
from quiver.connectors.registry import file_sink, file_source

ROWS = 24


@dataclass(frozen=True)
class WriteRequest:
    """One write: `generation` tags its rows; `tasks` slices write one task each."""

    path: str
    generation: int
    mode: str
    partition_by: tuple[str, ...] = ()
    tasks: int = 2
    fault_at: int | None = None
    fault_log: str | None = None
    env: dict[str, str] = field(default_factory=dict)


def generation_rows(generation: int) -> list[tuple[int, int, int]]:
    """The rows (id, gen, k) a write of `generation` adds."""
    return [(generation * 1000 + i, generation, i % 3) for i in range(ROWS)]


def _table(generation: int) -> pa.Table:
    ids, gens, ks = zip(*generation_rows(generation))
    return pa.table({"id": pa.array(ids, pa.int64()), "gen": pa.array(gens, pa.int64()),
                     "k": pa.array(ks, pa.int64())})


def run_write(request: WriteRequest) -> None:
    """What a driver does, in this process."""
    table = _table(request.generation)
    sink = file_sink("parquet", request.path, request.mode, request.partition_by)
    if not sink.setup():
        return
    step = -(-table.num_rows // request.tasks)
    try:
        results = [sink.write_task(p, iter(table.slice(p * step, step).to_batches()))
                   for p in range(request.tasks)]
        sink.commit(results)
    except BaseException:
        sink.abort()
        raise


def rows_of(path: str) -> list[tuple[int, int, int]]:
    """What a fresh reader of `path` sees, sorted; [] when the path holds no output."""
    try:
        source = file_source("parquet", path)
    except Exception as e:
        if "PATH_NOT_FOUND" in str(e):
            return []
        raise
    batches = [b for s in source.splits(3) for b in source.read(s, ["id", "gen", "k"], None)]
    table = pa.Table.from_batches(batches, schema=pa.schema([source.schema().field(c) for c in ("id", "gen", "k")]))
    return sorted(zip(*(table.column(c).to_pylist() for c in ("id", "gen", "k"))))


def leftovers(path: str) -> list[str]:
    """What a finished, swept write must not leave: staging folders beside `path`, files in it that its
    manifest does not name, stray temporary markers."""
    folder = output_folder(path)
    look = snapshot(folder)
    named = set(look.manifest.files or ()) if look.manifest else set(look.visible or ())
    found = [f for f in look.visible or () if f not in named]
    parent, name = path.rsplit("/", 1)
    if is_object_path(path):
        siblings = [uri.rsplit("/", 1)[-1] for uri, _ in list_children(parent)]
    else:
        siblings = os.listdir(parent)
        if os.path.isdir(path):
            found += [n for n in os.listdir(path) if is_hidden(n) and n not in (MANIFEST, SUCCESS)]
            found += [os.path.relpath(d, path) for d, dirs, files in os.walk(path) if not dirs and not files]
    found += [s for s in siblings if s.startswith(f".{name}{STAGING_MARK}") or s.startswith(f".{name}.quiver-old")]
    return sorted(found)


class FaultWriter:
    """The test side: a server process that forks one killed-or-not write per request."""

    def __init__(self) -> None:
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
        env.pop(FAULT_AT_ENV, None)
        self.process = subprocess.Popen([sys.executable, "-m", "tests.connectors.fault_writer"], cwd=root,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)

    def write(self, request: WriteRequest) -> int:
        """Run the write in a child; its exit status (`FAULT_EXIT_CODE`: killed at the fault point)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(asdict(request)) + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            raise RuntimeError("the fault writer server died")
        return int(json.loads(answer)["rc"])

    def count_points(self, request: WriteRequest, log: str) -> list[str]:
        """The fault points an unkilled run of `request` passes, in order (it does write)."""
        if os.path.exists(log):
            os.remove(log)
        assert self.write(WriteRequest(**{**asdict(request), "fault_at": None, "fault_log": log})) == 0
        with open(log) as f:
            return [line.split()[1] for line in f]

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=30)


def _child(request: WriteRequest) -> None:
    os.environ.update(request.env)
    if request.fault_at is not None:
        os.environ[FAULT_AT_ENV] = str(request.fault_at)
    if request.fault_log is not None:
        os.environ[FAULT_LOG_ENV] = request.fault_log
    try:
        run_write(request)
    except BaseException:
        traceback.print_exc()
        os._exit(1)
    os._exit(0)


def main() -> None:
    for line in sys.stdin:
        value = json.loads(line)
        request = WriteRequest(**{**value, "partition_by": tuple(value["partition_by"])})
        pid = os.fork()
        if pid == 0:
            _child(request)
        _, status = os.waitpid(pid, 0)
        rc = os.waitstatus_to_exitcode(status)
        sys.stdout.write(json.dumps({"rc": rc, "killed": rc == FAULT_EXIT_CODE}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
