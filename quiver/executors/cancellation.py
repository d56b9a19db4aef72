"""Cancelling a running task: a token the scheduler sets, which the code a task runs can watch.

A job's tasks share one `Cancellation`. The runtime makes it the task's current one (a context
variable, so any code the task calls finds it without being handed it); operators check it between
batches, and code that blocks outside Python's reach (a UDF in a worker process) registers a
callback that stops it: the UDF pool kills its worker. Once cancelled, a token stays cancelled.
"""
from __future__ import annotations

import contextvars
import itertools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from quiver.engine.core.errors import QuiverError


class TaskCancelled(QuiverError):
    """The task stopped because its job was cancelled; the scheduler does not retry it."""


class Cancellation:
    """A cancel flag with a reason and callbacks run once, when it is set."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: dict[int, Callable[[], None]] = {}
        self._ids = itertools.count()
        self.reason = ""

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self, reason: str) -> bool:
        """Set the flag and run the callbacks (in this thread); False if it was already set."""
        with self._lock:
            if self._event.is_set():
                return False
            self.reason = reason
            self._event.set()
            callbacks, self._callbacks = list(self._callbacks.values()), {}
        for callback in callbacks:
            callback()
        return True

    def on_cancel(self, callback: Callable[[], None]) -> int:
        """Run `callback` when cancelled (at once if already); a handle for `remove`."""
        with self._lock:
            if not self._event.is_set():
                handle = next(self._ids)
                self._callbacks[handle] = callback
                return handle
        callback()
        return -1

    def remove(self, handle: int) -> None:
        with self._lock:
            self._callbacks.pop(handle, None)

    def wait(self, timeout: float | None = None) -> bool:
        return self._event.wait(timeout)

    def check(self) -> None:
        """Raise `TaskCancelled` if cancelled."""
        if self._event.is_set():
            raise TaskCancelled(f"task cancelled: {self.reason}")


_current: contextvars.ContextVar[Cancellation | None] = contextvars.ContextVar("quiver_task_cancellation",
                                                                               default=None)


def current_cancellation() -> Cancellation | None:
    """The cancellation of the task running in this thread, or None outside a task."""
    return _current.get()


@contextmanager
def cancellable(token: Cancellation | None) -> Iterator[None]:
    """Make `token` the current task's cancellation inside the block."""
    reset = _current.set(token)
    try:
        yield
    finally:
        _current.reset(reset)


def check_cancelled() -> None:
    """Raise `TaskCancelled` if the current task's job was cancelled."""
    token = _current.get()
    if token is not None:
        token.check()


__all__ = ["Cancellation", "TaskCancelled", "cancellable", "check_cancelled", "current_cancellation"]
