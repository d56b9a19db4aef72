"""The runtime seam: where a stage's tasks run (threads in this process, or Ray workers)."""
from __future__ import annotations

from typing import Callable, Protocol, Sequence, TypeVar

R = TypeVar("R")


class Runtime(Protocol):
    """Runs independent task closures concurrently and returns their results in order."""

    parallelism: int

    def run_all(self, tasks: Sequence[Callable[[], R]]) -> list[R]:
        """Run every task; raise the first failure (after the others finish or are cancelled)."""

    def shutdown(self) -> None:
        """Release workers."""
