"""quiver/engine/execution/memory.py: asked to (QUIVER_TUNE_ALLOCATOR=1, or quiver.memory.tuneAllocator when a
session starts), Quiver puts Arrow's buffers on glibc's malloc (before or after pyarrow loads) and sets
mimalloc's options when Arrow has not loaded yet, never overrides a user's own, and sets glibc's; a plain
`import quiver` changes nothing; LLVM's pages leave the process once the kernels have loaded."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pyarrow as pa
import pytest

from quiver.engine.execution.memory import CAPPED_PURGE_DELAY_MS, PURGE_DELAY_MS, purge_delay_ms

PROBE = """
import json, os, sys
{first}
import pyarrow
from quiver.engine.execution.memory import tune_allocator
print(json.dumps({{"env": {{k: v for k, v in os.environ.items() if k.startswith("MIMALLOC_")}},
                   "pool": pyarrow.default_memory_pool().backend_name,
                   "again": tune_allocator()}}))
"""


def _probe(first: str, **env: str) -> dict:
    environment = {k: v for k, v in os.environ.items()
                   if not k.startswith(("MIMALLOC_", "QUIVER_TUNE", "ARROW_DEFAULT_MEMORY_POOL"))}
    environment.update(env)
    out = subprocess.run([sys.executable, "-c", PROBE.format(first=first)], env=environment,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_quiver_first_sets_mimalloc_options_before_arrow_loads():
    seen = _probe("import quiver", QUIVER_TUNE_ALLOCATOR="1")
    assert seen["env"] == {"MIMALLOC_PURGE_DELAY": str(purge_delay_ms()), "MIMALLOC_ALLOW_LARGE_OS_PAGES": "1"}
    assert seen["again"] == ["glibc"]  # Arrow is loaded now: only glibc's settings can still apply


def test_a_users_own_setting_wins():
    seen = _probe("import quiver", MIMALLOC_PURGE_DELAY="250", ARROW_DEFAULT_MEMORY_POOL="mimalloc",
                  QUIVER_TUNE_ALLOCATOR="1")
    assert seen["env"]["MIMALLOC_PURGE_DELAY"] == "250"
    assert seen["pool"] == "mimalloc"


def test_arrow_allocates_with_glibc_whether_quiver_or_pyarrow_loads_first():
    assert _probe("import quiver", QUIVER_TUNE_ALLOCATOR="1")["pool"] == "system"
    after = _probe("import pyarrow\nimport quiver", QUIVER_TUNE_ALLOCATOR="1")
    assert after["pool"] == "system"
    assert after["env"] == {}  # too late for mimalloc's options; glibc's still apply


SESSION = """
import json, os, pyarrow, quiver
before = pyarrow.default_memory_pool().backend_name
spark = quiver.Session.builder.master("local[1]").config("quiver.memory.tuneAllocator", "{tune}").getOrCreate()
print(json.dumps({{"before": before, "after": pyarrow.default_memory_pool().backend_name,
                   "env": {{k: v for k, v in os.environ.items() if k.startswith(("MIMALLOC_", "ARROW_DEFAULT"))}}}}))
"""


def _session_probe(tune: str) -> dict:
    environment = {k: v for k, v in os.environ.items()
                   if not k.startswith(("MIMALLOC_", "QUIVER_TUNE", "ARROW_DEFAULT_MEMORY_POOL"))}
    out = subprocess.run([sys.executable, "-c", SESSION.format(tune=tune)], env=environment,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_library_import_and_a_plain_session_leave_the_allocators_alone():
    seen = _probe("import quiver")
    assert seen["env"] == {} and seen["pool"] == "mimalloc"
    assert _session_probe("false") == {"before": "mimalloc", "after": "mimalloc", "env": {}}


def test_a_session_asked_to_tune_switches_arrows_pool():
    seen = _session_probe("true")
    assert seen["before"] == "mimalloc" and seen["after"] == "system"


def test_freed_pages_are_kept_a_second_unless_a_cgroup_limit_counts_them(monkeypatch):
    from quiver.engine.execution import memory

    monkeypatch.setattr(memory, "cgroup_memory_limit", lambda: None)
    assert memory.purge_delay_ms() == PURGE_DELAY_MS == 1000
    monkeypatch.setattr(memory, "cgroup_memory_limit", lambda: 2 << 30)
    assert memory.purge_delay_ms() == CAPPED_PURGE_DELAY_MS == 100
    monkeypatch.setattr(memory, "cgroup_memory_limit", lambda: memory.physical_memory() * 2)
    assert memory.purge_delay_ms() == PURGE_DELAY_MS


RESIDENT_COMPILER = """
import json, sys
import numba
import numpy as np
from quiver.engine.execution.memory import COMPILER_LIBRARY, release_compiler_pages
from quiver.executors.cpu.hashing import SMALL_BATCH_ROWS, hash_array
import pyarrow as pa

def resident_kib():
    total, inside = 0, False
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            head = line.split()
            if "-" in head[0] and len(head) >= 5 and ":" in head[3]:
                inside = len(head) > 5 and COMPILER_LIBRARY in head[5]
            elif inside and line.startswith("Rss:"):
                total += int(head[1])
    return total

hash_array(pa.array(range(SMALL_BATCH_ROWS + 1), pa.int64()))  # a batch large enough for the kernel
before = resident_kib()
advised = release_compiler_pages()
after = resident_kib()
hashed = hash_array(pa.array([1, 2, 3], pa.int64())).tolist()
double = numba.njit(lambda xs: xs * 2)(np.arange(3)).tolist()
print(json.dumps({"before": before, "advised": advised, "after": after, "hashed": hashed, "double": double}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="madvise(MADV_PAGEOUT) is Linux's")
def test_llvms_pages_leave_the_process_after_the_kernels_load_and_compiling_still_works():
    from quiver.engine.execution.memory import release_compiler_pages
    from quiver.executors.cpu.hashing import hash_array

    # Only pages no other process maps leave: this test's own process may have loaded numba's kernels too.
    release_compiler_pages()
    out = subprocess.run([sys.executable, "-c", RESIDENT_COMPILER], capture_output=True, text=True, check=True)
    seen = json.loads(out.stdout)
    if seen["advised"] == 0:
        pytest.skip("this kernel has no MADV_PAGEOUT")
    assert seen["before"] > 32 << 10, "numba's import should have paged in tens of MiB of LLVM"
    assert seen["after"] < seen["before"] * 0.8
    assert seen["hashed"] == hash_array(pa.array([1, 2, 3], pa.int64())).tolist()
    assert seen["double"] == [0, 2, 4]
