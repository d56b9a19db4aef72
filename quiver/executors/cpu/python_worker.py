"""The main loop of a Python worker process (`python -m quiver.executors.cpu.python_worker FD`).

The engine (worker_pool.py) sends calls over the socket FD: a UDF over one batch ("udf"), or the
function of mapInPandas / mapInArrow over a stream of batches it asks for one at a time ("map"). The
worker runs them with the same in-process evaluation a task thread would use and sends back the
result, or the error the user's code raised. It ignores Ctrl-C (the engine decides when a call is
cancelled, and kills the worker) and exits when the engine's process goes away.
"""
from __future__ import annotations

import os
import resource
import signal
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from multiprocessing.connection import Connection
from typing import Any

import pyarrow as pa

from quiver.executors.cpu.map_batches import map_in_process
from quiver.executors.cpu.python_udf import evaluate_in_process
from quiver.executors.cpu.worker_pool import cloudpickle, error_frame, recv_frame, remember, send_frame


def _udf(call: Any, meta: tuple, batches: list[pa.RecordBatch]) -> pa.RecordBatch:
    (num_rows,) = meta
    args = list(batches[0].columns) if batches else []
    return pa.RecordBatch.from_arrays([evaluate_in_process(call, args, num_rows)], names=["0"])


def _map(conn: Connection, spec: Any) -> None:
    def inputs() -> Iterator[pa.RecordBatch]:
        while True:
            send_frame(conn, ("need",))
            header, batches = recv_frame(conn)
            if header[0] == "end":
                return
            yield from batches

    for batch in map_in_process(spec, inputs()):
        send_frame(conn, ("out",), (batch,))
    send_frame(conn, ("done",))


def _watch_parent(parent: int) -> None:
    """Exit once the engine's process is gone, even in the middle of a hung UDF."""
    while True:
        if os.getppid() != parent:
            os._exit(1)
        time.sleep(0.5)


def _bound_memory(extra: int) -> None:
    """Let the address space grow by `extra` bytes past what the worker holds now (its imports)."""
    with open("/proc/self/statm") as f:
        held = int(f.read().split()[0]) * resource.getpagesize()
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = held + extra
    resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))


def main(fd: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    conn = Connection(fd)
    (_, path, memory, parent), _ = recv_frame(conn)
    sys.path[:] = list(dict.fromkeys([*path, *sys.path]))
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True, name="quiver-parent-watch").start()
    if memory >= 0:
        pa.set_cpu_count(1)
        pa.set_io_thread_count(1)
        _bound_memory(memory)
    functions: dict[str, Any] = {}
    while True:
        try:
            header, batches = recv_frame(conn)
        except (EOFError, OSError):
            return
        tag, handler, key, pickled, meta = header
        try:
            if pickled is not None:
                remember(functions, key, cloudpickle.loads(pickled))
            function = functions[key]
            if handler == "udf":
                send_frame(conn, ("ok",), (_udf(function, meta, batches),))
            else:
                _map(conn, function)
        except (EOFError, OSError):
            return
        except BaseException as exc:  # noqa: BLE001 — every error of user code goes back to the engine
            try:
                send_frame(conn, error_frame(exc, traceback.format_exc()))
            except (EOFError, OSError):
                return


if __name__ == "__main__":
    main(int(sys.argv[1]))
