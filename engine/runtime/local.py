"""The embedded runtime: a pool of N worker threads for `local[N]`.

Arrow kernels release the GIL, so threads run partitions in parallel without copying
blocks between processes.
"""
from __future__ import annotations

from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from typing import Callable, Sequence, TypeVar

R = TypeVar("R")


class LocalRuntime:
    """Runs tasks on a thread pool of `parallelism` workers."""

    def __init__(self, parallelism: int):
        self.parallelism = max(1, parallelism)
        self._pool = ThreadPoolExecutor(max_workers=self.parallelism, thread_name_prefix="quiver-task")

    def run_all(self, tasks: Sequence[Callable[[], R]]) -> list[R]:
        if len(tasks) == 1 or self.parallelism == 1:
            return [t() for t in tasks]
        futures = [self._pool.submit(t) for t in tasks]
        done, pending = wait(futures, return_when=FIRST_EXCEPTION)
        for f in futures:
            if f in done and f.exception() is not None:
                for p in pending:
                    p.cancel()
                wait(pending)
                raise f.exception()
        return [f.result() for f in futures]

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def parse_local_master(master: str, cpu_count: int) -> int | None:
    """Threads for `local`, `local[N]`, `local[*]`; None if `master` is not a local master."""
    m = master.strip()
    if m == "local":
        return 1
    if m.startswith("local[") and m.endswith("]"):
        inner = m[6:-1].split(",")[0].strip()
        if inner == "*":
            return cpu_count
        if inner.isdigit() and int(inner) > 0:
            return int(inner)
    return None
