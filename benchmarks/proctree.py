"""Memory of a process tree read from /proc (Linux), so no psutil is needed.

``VmRSS`` is a process's resident set now; ``VmHWM`` is its high-water mark, kept by the
kernel, so it is exact even between samples. A JVM started by PySpark is a child of the
Python driver and is counted through the tree.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

PROC = Path("/proc")


def _status_kib(pid: int, field: str) -> int:
    try:
        for line in (PROC / str(pid) / "status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _parent_map() -> dict[int, int]:
    parents: dict[int, int] = {}
    for entry in os.scandir(PROC):
        if not entry.name.isdigit():
            continue
        try:
            stat = (PROC / entry.name / "stat").read_text()
        except OSError:
            continue
        # The command name is in parentheses and may hold spaces; ppid follows it.
        fields = stat[stat.rfind(")") + 2:].split()
        parents[int(entry.name)] = int(fields[1])
    return parents


def tree(pid: int) -> list[int]:
    """``pid`` and all its live descendants."""
    children: dict[int, list[int]] = {}
    for child, parent in _parent_map().items():
        children.setdefault(parent, []).append(child)
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, ()))
    return out


def tree_rss_bytes(pid: int) -> int:
    """Resident memory of ``pid`` and its descendants now."""
    return 1024 * sum(_status_kib(p, "VmRSS") for p in tree(pid))


def tree_hwm(pid: int) -> list[dict]:
    """Per-process peak resident memory (bytes) of ``pid`` and its descendants."""
    out = []
    for p in tree(pid):
        try:
            name = (PROC / str(p) / "comm").read_text().strip()
        except OSError:
            continue
        out.append({"pid": p, "name": name, "peak_rss": 1024 * _status_kib(p, "VmHWM")})
    return out


class RssSampler:
    """Samples a process tree's total RSS in a thread; ``peak`` is the largest seen."""

    def __init__(self, pid: int, interval_s: float = 0.1) -> None:
        self.pid = pid
        self.interval_s = interval_s
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, tree_rss_bytes(self.pid))
            self._stop.wait(self.interval_s)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
