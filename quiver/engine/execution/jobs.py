"""Job groups, tags, cancellation and the action that names a job: Spark's `setJobGroup` / `cancelJobGroup`,
the session's tags, and the call site Spark names a job by.

A thread's job properties (its job group, description, whether to interrupt on cancel, its session
tags and job tags) are given to every job that thread starts, as Spark's local properties are. While
a job runs it is registered here with its `Cancellation` (executors/cancellation.py); cancelling a
group, a tag, one job or all of them sets the matching jobs' tokens, which stops their tasks, and the
action that started each raises `JobCancelledError` in its own thread.
"""
from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from quiver.engine.core.errors import QuiverError
from quiver.executors.cancellation import Cancellation

# The action running in this thread (or task of asyncio), which names the jobs it starts.
_ACTION: ContextVar[str | None] = ContextVar("quiver_action", default=None)


@contextmanager
def action(name: str) -> Iterator[None]:
    """Name the jobs started inside as the action `name` (collect, count, show, write.parquet), for progress
    and job reports, as Spark names a job by its call site. Also a decorator of an action method. An action
    run by another (`show` runs `toArrow`) leaves the outer one's name."""
    if _ACTION.get() is not None:
        yield
        return
    token = _ACTION.set(name)
    try:
        yield
    finally:
        _ACTION.reset(token)


def current_action() -> str:
    """The name of the action running in this thread, or "" outside one."""
    return _ACTION.get() or ""


class JobCancelledError(QuiverError):
    """A job was cancelled (by its job group, a tag, `cancelAllJobs` / `interruptAll`, or the session
    stopping); raised in the thread whose action started it. Spark's error class SPARK_JOB_CANCELLED."""

    def __init__(self, job_id: int, reason: str):
        super().__init__(f"[SPARK_JOB_CANCELLED] Job {job_id} cancelled {reason}")
        self.job_id = job_id
        self.reason = reason


class InvalidTagError(QuiverError, ValueError):
    """A tag that is empty or contains a comma, which Spark refuses."""


@dataclass
class RunningJob:
    """A job as cancellation sees it: its id, the properties its thread gave it, and its token."""

    job_id: int
    group: str | None = None
    description: str | None = None
    interrupt_on_cancel: bool = False
    tags: frozenset[str] = frozenset()
    job_tags: frozenset[str] = frozenset()
    token: Cancellation = field(default_factory=Cancellation)


class _ThreadProperties(threading.local):
    def __init__(self) -> None:
        self.group: str | None = None
        self.description: str | None = None
        self.interrupt_on_cancel = False
        self.tags: set[str] = set()
        self.job_tags: set[str] = set()


def check_tag(tag: str, what: str = "Spark session tag") -> str:
    if not isinstance(tag, str) or not tag:
        raise InvalidTagError(f"{what} cannot be an empty string, got {tag!r}")
    if "," in tag:
        raise InvalidTagError(f"{what} cannot contain ',', got {tag!r}")
    return tag


class JobGroups:
    """The calling threads' job properties, and the running jobs they started, for cancelling them."""

    def __init__(self) -> None:
        self.local = _ThreadProperties()
        self._running: dict[int, RunningJob] = {}
        self._lock = threading.Lock()

    # ---------------------------------------------------------- this thread's properties

    def set_group(self, group: str | None, description: str | None, interrupt_on_cancel: bool = False) -> None:
        self.local.group = group
        self.local.description = description
        self.local.interrupt_on_cancel = bool(interrupt_on_cancel)

    # ---------------------------------------------------------- running jobs

    def start(self, job_id: int) -> RunningJob:
        """Register a job the calling thread starts, with that thread's properties."""
        p = self.local
        job = RunningJob(job_id, p.group, p.description, p.interrupt_on_cancel, frozenset(p.tags),
                         frozenset(p.job_tags))
        with self._lock:
            self._running[job_id] = job
        return job

    def finish(self, job_id: int) -> None:
        with self._lock:
            self._running.pop(job_id, None)

    def running(self) -> list[RunningJob]:
        with self._lock:
            return list(self._running.values())

    def _cancel(self, jobs: list[RunningJob], reason: str) -> list[str]:
        return [str(job.job_id) for job in jobs if job.token.cancel(reason)]

    def cancel_group(self, group: str) -> list[str]:
        """Cancel the running jobs of job group `group`; their ids."""
        return self._cancel([j for j in self.running() if j.group == group],
                            f"part of cancelled job group {group}")

    def cancel_tag(self, tag: str) -> list[str]:
        """Cancel the running jobs started with session tag `tag` (`spark.addTag`); their ids."""
        return self._cancel([j for j in self.running() if tag in j.tags], f"part of cancelled job tags {tag}")

    def cancel_job_tag(self, tag: str) -> list[str]:
        """Cancel the running jobs started with job tag `tag` (`sparkContext.addJobTag`); their ids."""
        return self._cancel([j for j in self.running() if tag in j.job_tags], f"part of cancelled job tags {tag}")

    def cancel_job(self, job_id: int, reason: str = "") -> list[str]:
        return self._cancel([j for j in self.running() if j.job_id == job_id], reason or "by request")

    def cancel_all(self, reason: str = "as part of cancellation of all jobs") -> list[str]:
        return self._cancel(self.running(), reason)


__all__ = ["InvalidTagError", "JobCancelledError", "JobGroups", "RunningJob", "action", "check_tag", "current_action"]
