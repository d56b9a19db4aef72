"""Python worker processes for user code: UDFs and the functions of mapInPandas / mapInArrow.

As PySpark runs Python UDFs in python workers beside the JVM, Quiver runs them in worker processes
beside the engine's threads, so user code that hangs, crashes or eats memory is stopped without the
engine: a cancelled task's worker is killed (SIGKILL), a worker that dies (a segfault) fails its
task with an error naming the function, and `quiver.python.worker.memory` bounds each worker's
address space (`RLIMIT_AS`), so an allocation past it fails with an error naming the limit.

Workers are reused across batches, tasks and jobs: one runs one call at a time, and goes back to
the pool when the call ends; a killed or crashed worker is replaced by a fresh one when next needed.
Each runs `python -m quiver.executors.cpu.python_worker`, talking over a socket pair: small headers
pickled, batches as Arrow IPC streams, the function cloudpickled once per worker. The numba UDF path
and `quiver.python.udf.inProcess=true` run user code on the task's own thread instead.
"""
from __future__ import annotations

import atexit
import hashlib
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

import pyarrow as pa

from quiver.engine.core.errors import PythonException
from quiver.executors.cancellation import TaskCancelled, current_cancellation

try:
    import cloudpickle
except ImportError:  # numba, a dependency, ships a copy
    from numba import cloudpickle  # type: ignore[no-redef]

WORKER_MODULE = "quiver.executors.cpu.python_worker"
MEMORY_KEY = "quiver.python.worker.memory"
MEMORY_ALIAS = "spark.executor.pyspark.memory"
# The folder holding the `quiver` package, so a worker imports the same Quiver as this process.
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@dataclass(frozen=True)
class WorkerSettings:
    """How workers are started: `memory` is the bytes a worker's address space may grow by past what it
    holds once started (its imports), or -1 for no bound."""

    memory: int = -1


class WorkerTraceback(Exception):
    """The traceback of an error raised in a worker process, as text (the error itself could not be pickled)."""


# ---------------------------------------------------------------- frames


def send_frame(conn: Connection, header: tuple, batches: tuple[pa.RecordBatch, ...] = ()) -> None:
    """A pickled header naming how many Arrow IPC frames follow, then the frames."""
    conn.send_bytes(pickle.dumps((header, len(batches)), protocol=pickle.HIGHEST_PROTOCOL))
    for batch in batches:
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, batch.schema) as writer:
            writer.write_batch(batch)
        conn.send_bytes(sink.getvalue())


def recv_frame(conn: Connection) -> tuple[tuple, list[pa.RecordBatch]]:
    header, count = pickle.loads(conn.recv_bytes())
    batches = []
    for _ in range(count):
        with pa.ipc.open_stream(pa.py_buffer(conn.recv_bytes())) as reader:
            batches.append(reader.read_next_batch())
    return header, batches


def error_frame(exc: BaseException, traceback_text: str) -> tuple:
    """The header reporting `exc` raised in a worker: its kind, message, the exception pickled where it
    can be (with its cause), and whether memory ran out."""
    cause = exc.__cause__ if isinstance(exc, PythonException) else exc
    try:
        pickled = cloudpickle.dumps(cause) if cause is not None else None
        if pickled is not None:
            pickle.loads(pickled)
    except Exception:  # noqa: BLE001 — an exception that cannot travel goes as its text
        pickled = None
    memory = isinstance(exc, MemoryError) or isinstance(cause, MemoryError)
    return ("error", type(exc).__name__, str(exc), pickled, traceback_text, memory)


# ---------------------------------------------------------------- one worker


class _Worker:
    """One worker process and the socket to it."""

    def __init__(self, settings: WorkerSettings):
        self.settings = settings
        ours, theirs = socket.socketpair()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_ROOT, env.get("PYTHONPATH", "")) if p)
        if settings.memory >= 0:
            # Arrow's mimalloc reserves address space in large arenas: the system allocator keeps the
            # address space close to what is used, so the bound measures the UDF's allocations.
            env["ARROW_DEFAULT_MEMORY_POOL"] = "system"
            env["MALLOC_ARENA_MAX"] = "2"
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", WORKER_MODULE, str(theirs.fileno())], pass_fds=(theirs.fileno(),),
                env=env, stdin=subprocess.DEVNULL, start_new_session=True)
        finally:
            theirs.close()
        self.conn = Connection(ours.detach())
        # The functions this worker holds, oldest first; it forgets them in the same order (`remember`).
        self.functions: dict[str, None] = {}
        self.killed = False
        send_frame(self.conn, ("init", list(sys.path), settings.memory, os.getpid()))

    def alive(self) -> bool:
        return not self.killed and self.proc.poll() is None

    def kill(self) -> None:
        """Stop the worker at once, whatever it runs (a cancelled task, an abandoned call)."""
        self.killed = True
        try:
            self.proc.kill()
        except OSError:
            pass

    def close(self) -> None:
        self.kill()
        try:
            self.conn.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass

    def exit_status(self) -> str:
        """How the process ended, in words: 'killed by SIGSEGV', 'exit code 1'."""
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "unresponsive"
        if code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exit code {code}"


# ---------------------------------------------------------------- the pool


class PythonWorkerPool:
    """Reusable worker processes; `enabled` says whether user code runs in them or in-process."""

    def __init__(self) -> None:
        self.enabled = False
        self.settings = WorkerSettings()
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()
        self._lock = threading.Lock()
        # Pickled functions by the identity of the plan node that holds them (kept alive here, so an id
        # is never reused while cached): a function is pickled once, not once per batch.
        self._pickled: dict[int, tuple[Any, str, bytes]] = {}
        self.started = 0

    def configure(self, enabled: bool, settings: WorkerSettings) -> None:
        """Run user code in workers or not, and start workers with `settings` (idle ones started
        otherwise are stopped)."""
        with self._lock:
            self.enabled = enabled
            if settings == self.settings and enabled:
                return
            self.settings = settings
            stale, self._idle = self._idle, []
        for worker in stale:
            worker.close()

    def shutdown(self) -> None:
        """Stop every worker, idle or busy."""
        with self._lock:
            self.enabled = False
            doomed = [*self._idle, *self._busy]
            self._idle = []
            self._pickled.clear()
        for worker in doomed:
            worker.close()

    def workers(self) -> int:
        """How many worker processes are running now."""
        with self._lock:
            return sum(1 for w in [*self._idle, *self._busy] if w.alive())

    def _acquire(self) -> tuple[_Worker, bool]:
        """A worker for one call, and whether it is fresh."""
        with self._lock:
            while self._idle:
                worker = self._idle.pop()
                if worker.alive() and worker.settings == self.settings:
                    self._busy.add(worker)
                    return worker, False
                worker.close()
            settings = self.settings
        worker = _Worker(settings)
        with self._lock:
            self.started += 1
            self._busy.add(worker)
        return worker, True

    def _release(self, worker: _Worker, reusable: bool) -> None:
        """Back to the pool after a clean call; else stopped, and a replacement started at once (its
        imports take a while), so the next call finds it ready."""
        with self._lock:
            self._busy.discard(worker)
            keep = reusable and worker.alive() and self.enabled and worker.settings == self.settings
            if keep:
                self._idle.append(worker)
            settings, replace = self.settings, self.enabled and not keep
        if keep:
            return
        worker.close()
        if replace:
            fresh = _Worker(settings)
            with self._lock:
                self.started += 1
                self._idle.append(fresh)

    def _function(self, owner: Any, make: Callable[[], Any]) -> tuple[str, bytes]:
        cached = self._pickled.get(id(owner))
        if cached is not None and cached[0] is owner:
            return cached[1], cached[2]
        pickled = cloudpickle.dumps(make(), protocol=pickle.HIGHEST_PROTOCOL)
        key = hashlib.sha1(pickled).hexdigest()
        with self._lock:
            if len(self._pickled) > 256:
                self._pickled.pop(next(iter(self._pickled)))
            self._pickled[id(owner)] = (owner, key, pickled)
        return key, pickled

    # ---------------------------------------------------------- calls

    def call(self, handler: str, owner: Any, make: Callable[[], Any], what: str, meta: tuple,
             batches: tuple[pa.RecordBatch, ...] = ()) -> tuple[tuple, list[pa.RecordBatch]]:
        """Run `handler` in a worker on the function `make()` builds (cached by `owner`, the plan node
        holding it), with `meta` and `batches`; its reply. `what` names the function in errors."""
        key, pickled = self._function(owner, make)
        with self._session(what) as session:
            session.start(("call", handler, key, pickled, meta), batches, key)
            header, out = session.recv()
            if header[0] != "ok":
                session.raise_error(header)
            session.reusable = True
            return header, out

    def stream(self, handler: str, owner: Any, make: Callable[[], Any], what: str,
               inputs: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """Run `handler` in a worker over `inputs`, yielding the batches it produces. The worker asks for
        each input batch when its function wants one; an error of `inputs` is raised as it is."""
        key, pickled = self._function(owner, make)
        with self._session(what) as session:
            session.start(("stream", handler, key, pickled, ()), (), key)
            while True:
                header, out = session.recv()
                tag = header[0]
                if tag == "need":
                    batch = next(inputs, None)
                    session.send(("batch",) if batch is not None else ("end",), (batch,) if batch is not None else ())
                elif tag == "out":
                    yield from out
                elif tag == "done":
                    session.reusable = True
                    return
                else:
                    session.raise_error(header)

    def _session(self, what: str) -> _Session:
        return _Session(self, what)


class _Session:
    """One call on one worker: kills the worker when the task is cancelled or the caller gives up (an
    interrupt, an error of the inputs, a consumer that stops early), and returns it to the pool only
    after a clean end."""

    def __init__(self, pool: PythonWorkerPool, what: str):
        self.pool = pool
        self.what = what
        self.reusable = False
        self.token = current_cancellation()
        self.handle = -1
        self.worker: _Worker | None = None
        self.fresh = False

    def __enter__(self) -> _Session:
        if self.token is not None:
            self.token.check()
        self.worker, self.fresh = self.pool._acquire()
        if self.token is not None:
            self.handle = self.token.on_cancel(self.worker.kill)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.token is not None:
            self.token.remove(self.handle)
        assert self.worker is not None
        self.pool._release(self.worker, self.reusable)

    def start(self, header: tuple, batches: tuple, key: str) -> None:
        """Send the first request, with the function unless the worker has it. An idle worker that died
        since its last call (killed from outside) is replaced once."""
        for _ in range(2):
            worker = self.worker
            assert worker is not None
            request = header if key not in worker.functions else (*header[:3], None, *header[4:])
            try:
                send_frame(worker.conn, request, batches)
            except OSError:
                if self.fresh:
                    self._died()
                self._swap()
                continue
            if request[3] is not None:
                remember(worker.functions, key)
            return
        self._died()

    def _swap(self) -> None:
        assert self.worker is not None
        self.pool._release(self.worker, False)
        if self.token is not None:
            self.token.remove(self.handle)
        self.worker, self.fresh = self.pool._acquire()
        if self.token is not None:
            self.handle = self.token.on_cancel(self.worker.kill)

    def send(self, header: tuple, batches: tuple = ()) -> None:
        assert self.worker is not None
        try:
            send_frame(self.worker.conn, header, batches)
        except OSError:
            self._died()

    def recv(self) -> tuple[tuple, list[pa.RecordBatch]]:
        assert self.worker is not None
        try:
            return recv_frame(self.worker.conn)
        except (EOFError, OSError):
            self._died()

    def _died(self) -> Any:
        """Raise why the worker's socket closed: a cancelled task, or a worker that crashed."""
        assert self.worker is not None
        if self.token is not None and self.token.cancelled:
            raise TaskCancelled(f"task cancelled: {self.token.reason}; its Python worker was killed")
        status = self.worker.exit_status()
        limit = self.pool.settings.memory
        bound = (f"; its worker's memory is bounded to {_size(limit)} by {MEMORY_KEY} ({MEMORY_ALIAS}), which an "
                 "allocation past it can also end this way" if limit >= 0 else "")
        raise PythonException(f"{self.what} crashed its Python worker ({status}): Python worker exited "
                              f"unexpectedly (crashed){bound}")

    def raise_error(self, header: tuple) -> Any:
        """Raise the error a worker reported, as in-process evaluation would have raised it."""
        _, kind, message, pickled, traceback_text, memory = header
        self.reusable = True  # the worker caught the error itself and is ready for the next call
        cause: BaseException | None = None
        if pickled is not None:
            try:
                cause = pickle.loads(pickled)
            except Exception:  # noqa: BLE001
                cause = None
        if cause is None:
            cause = WorkerTraceback(traceback_text)
        limit = self.pool.settings.memory
        if memory and limit >= 0:
            raise PythonException(
                f"{self.what} ran out of memory: its Python worker may allocate {_size(limit)} "
                f"({MEMORY_KEY}, Spark's {MEMORY_ALIAS}); raise the limit or process less per call. "
                f"{message}") from cause
        if kind == "PythonException":
            raise PythonException(message) from cause
        raise cause


# Functions a worker keeps unpickled; both sides forget the oldest first, so they agree on what it holds.
FUNCTIONS_KEPT = 128


def remember(functions: dict[str, Any], key: str, value: Any = None) -> None:
    """Add `key` to a worker's functions, forgetting the oldest past FUNCTIONS_KEPT."""
    functions[key] = value
    while len(functions) > FUNCTIONS_KEPT:
        functions.pop(next(iter(functions)))


def _size(n: int) -> str:
    for unit, shift in (("g", 30), ("m", 20), ("k", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return f"{n} bytes"


# The process's pool: the session configures it for each job (engine/execution/context.py).
WORKERS = PythonWorkerPool()
atexit.register(WORKERS.shutdown)

__all__ = ["FUNCTIONS_KEPT", "MEMORY_ALIAS", "MEMORY_KEY", "WORKERS", "PythonWorkerPool", "WorkerSettings",
           "WorkerTraceback", "error_frame", "recv_frame", "remember", "send_frame"]
