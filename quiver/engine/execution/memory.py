"""Which allocator holds Arrow's buffers, and how long freed memory is kept for reuse before the OS gets it back.

Arrow's buffers come from glibc's malloc (Arrow's "system" pool) unless `ARROW_DEFAULT_MEMORY_POOL`
names another (mimalloc, jemalloc). With glibc tuned as below, TPC-H SF1 ran as fast as on mimalloc
(0.283 s against 0.280 s geomean, three alternating runs each) at 0.50-0.53 GiB peak RSS for the 22
queries against mimalloc's 0.59-0.61 (`benchmarks/RESULTS.md`, with the command): mimalloc keeps a page
per size class and thread, and a freed page waits out its purge delay before the OS gets it, so a
process's resident memory stays above what Arrow holds.

A query allocates and frees column buffers of the same sizes batch after batch. By default Arrow's
mimalloc returns freed pages to the OS within milliseconds and glibc unmaps every block over 128 KiB
(numpy's temporaries), so each batch faults its pages in afresh. On a virtual machine a fault costs
microseconds: TPC-H SF1 on this project's 2-core VM took 552k faults and 7.3 s of system time over
88 query runs, against 72k faults and 3.8 s when freed memory was never returned (`benchmarks/RESULTS.md`).

Never returning it has its own cost: a process's resident memory stays at the high-water mark of every
size class and thread it ever used, well above what Arrow holds live, which under a cgroup's limit is
memory the kernel cannot reclaim (`python -m benchmarks.memory` shows the peaks under a cap). So freed
pages are kept for `PURGE_DELAY_MS` (a second: the next batches and stages of a query reuse them), or
only `CAPPED_PURGE_DELAY_MS` in a process under a cgroup memory limit, where every retained page
counts against the limit; glibc trims its heap once more than `GLIBC_TRIM_THRESHOLD` is free at its top.
At TPC-H SF1 a second's retention ran the 22 queries 6.5% faster than 100 ms (0.247 → 0.231 s geomean)
for 0.02 GiB more at the largest peak (`benchmarks/RESULTS.md`).

A library should not change its host's allocator, so none of this happens unless asked:
`quiver.memory.tuneAllocator=true` applies it when a session starts (Arrow's pool is switched for new
buffers, glibc's options are set), and `QUIVER_TUNE_ALLOCATOR=1` in the environment applies it at
`import quiver`, before Arrow loads, which mimalloc's options need. `quiver-submit` and the benchmarks,
whose processes are Quiver's own, ask for it.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

from quiver.executors.memory import cgroup_memory_limit, physical_memory

ARROW_POOL_VARIABLE = "ARROW_DEFAULT_MEMORY_POOL"
ARROW_POOL = "system"
PURGE_DELAY_MS = 1000
CAPPED_PURGE_DELAY_MS = 100
MIMALLOC_OPTIONS = {
    # Decommit freed pages only after this long unused (purge_delay_ms() picks it): the next batch reuses
    # them without faulting.
    "MIMALLOC_PURGE_DELAY": str(PURGE_DELAY_MS),
    # Back arenas with transparent huge pages (madvise mode): one fault per 2 MiB, not per 4 KiB.
    "MIMALLOC_ALLOW_LARGE_OS_PAGES": "1",
}


def purge_delay_ms() -> int:
    """How long mimalloc keeps freed pages in this process: shorter under a cgroup memory limit below the
    machine's memory, where retained pages count against the limit."""
    limit = cgroup_memory_limit()
    return CAPPED_PURGE_DELAY_MS if limit is not None and limit < physical_memory() else PURGE_DELAY_MS

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
# Blocks up to this size come from the heap and are reused; above it glibc still maps them itself.
GLIBC_MMAP_THRESHOLD = 32 << 20  # glibc's largest allowed value on 64-bit
GLIBC_TRIM_THRESHOLD = 64 << 20


def tune_allocator() -> list[str]:
    """Apply the settings that can still take effect in this process; returns which were applied."""
    applied = []
    if ARROW_POOL_VARIABLE not in os.environ:
        os.environ[ARROW_POOL_VARIABLE] = ARROW_POOL
        applied.append(ARROW_POOL_VARIABLE)
        if "pyarrow.lib" in sys.modules:
            import pyarrow as pa

            pa.set_memory_pool(pa.system_memory_pool())
    if "pyarrow.lib" not in sys.modules:
        options = {**MIMALLOC_OPTIONS, "MIMALLOC_PURGE_DELAY": str(purge_delay_ms())}
        for name, value in options.items():
            if name not in os.environ:
                os.environ[name] = value
                applied.append(name)
    if sys.platform.startswith("linux") and _glibc_mallopt():
        applied.append("glibc")
    return applied


def _libc() -> ctypes.CDLL | None:
    """The C library, or None where it cannot be loaded."""
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None


def _glibc_mallopt() -> bool:
    mallopt = getattr(_libc(), "mallopt", None)
    if mallopt is None:
        return False
    return (bool(mallopt(_M_MMAP_THRESHOLD, GLIBC_MMAP_THRESHOLD))
            and bool(mallopt(_M_TRIM_THRESHOLD, GLIBC_TRIM_THRESHOLD)))


# madvise(2) advice that reclaims a range's pages now (Linux 5.4 and later): clean file pages leave the
# process and are read back from the file on their next touch, so nothing is lost.
MADV_PAGEOUT = 21
# The shared library of numba's compiler, LLVM (llvmlite's build of it, about 170 MiB).
COMPILER_LIBRARY = "libllvmlite"


def release_compiler_pages() -> int:
    """Hand back to the OS the pages of LLVM's library that numba's import made resident; returns the bytes
    of mappings advised (0 where the OS has no such advice).

    Loading libllvmlite runs LLVM's static constructors, which are spread over the whole library, so tens of
    MiB of its code are resident in every process that imports numba (the test measures them).
    Only compiling or loading a kernel runs that code again; a kernel once loaded is machine code of its
    own. So once the engine has loaded the kernels every shuffle uses, the library's pages are paged out
    (clean file pages, read back from the file if a later kernel load touches them) and the process's
    resident size says what the engine really holds.
    """
    madvise = getattr(_libc(), "madvise", None) if sys.platform.startswith("linux") else None
    if madvise is None:
        return 0
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    advised = 0
    for start, end in _mappings_of(COMPILER_LIBRARY):
        if madvise(start, end - start, MADV_PAGEOUT) == 0:
            advised += end - start
    return advised


def _mappings_of(library: str) -> list[tuple[int, int]]:
    """The address ranges this process maps from the file whose name contains `library`."""
    ranges = []
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split()
                if len(fields) > 5 and library in fields[5].rsplit("/", 1)[-1]:
                    start, end = fields[0].split("-")
                    ranges.append((int(start, 16), int(end, 16)))
    except OSError:
        return []
    return ranges
