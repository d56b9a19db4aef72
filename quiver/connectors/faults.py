"""Fault points: where a test may kill the process in the middle of a commit.

Every step of the commit protocol (`connectors.commit`) that changes storage first calls
`fault_point(step)`. Normally that is one dictionary lookup. With `QUIVER_FAULT_AT=N` in the
environment the process dies (`os._exit`, no cleanup, no `finally`) at its Nth fault point, as a
driver killed by the OOM killer or a lost node would; with `QUIVER_FAULT_LOG=file` each point is
appended to the file as `N step`, so a test can count a write's points before killing it at each.
"""
from __future__ import annotations

import os
import threading

FAULT_AT_ENV = "QUIVER_FAULT_AT"
FAULT_LOG_ENV = "QUIVER_FAULT_LOG"
FAULT_EXIT_CODE = 87

_lock = threading.Lock()
_calls = 0


def fault_point(step: str) -> None:
    """Count one storage-changing step; die here if `QUIVER_FAULT_AT` names this count."""
    global _calls
    at, log = os.environ.get(FAULT_AT_ENV), os.environ.get(FAULT_LOG_ENV)
    if not at and not log:
        return
    with _lock:
        _calls += 1
        n = _calls
        if log:
            with open(log, "a") as f:
                f.write(f"{n} {step}\n")
        if at and n == int(at):
            os._exit(FAULT_EXIT_CODE)
