"""Entry point of a benchmark child process: the engine under test is imported first, as a program
using it would, so Quiver's allocator settings (`quiver/engine/execution/memory.py`) apply before pyarrow loads.

The time that import takes counts towards the engine's start-up, as it did when `child_main`
imported the engine itself.
"""
from __future__ import annotations

import sys
import time

if __name__ == "__main__":
    started = time.perf_counter()
    if sys.argv[sys.argv.index("--engine") + 1:][:1] == ["quiver"]:
        import quiver  # noqa: F401
    imported_s = time.perf_counter() - started
    from benchmarks.tpch.run import child_main

    sys.exit(child_main(imported_s=imported_s))
