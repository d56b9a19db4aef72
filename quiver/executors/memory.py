"""The memory budget of one process: what operators' state and held blocks may take before they spill.

One `MemoryManager` per process (per budget) is shared by every task running in it, as Spark's
`UnifiedMemoryManager` is shared by an executor's tasks. Holders of memory reserve it in measured Arrow
bytes (`RecordBatch.nbytes`) through a `Reservation`. A reservation that does not fit first asks the
other spillable holders, largest first, to give memory back by writing their state to disk (Spark's
`TaskMemoryManager` asks its consumers the same way); if that frees too little, the reservation is
refused and the asking operator spills its own state.

The budget is `quiver.memory.limit` where set, else `quiver.memory.fraction` (0.6, Spark's
`spark.memory.fraction`) of what the process may use less 300 MiB (Spark's reserved memory): its cgroup's
memory limit where one is set (v1 or v2), else the machine's physical memory. A Ray worker builds its
own manager from the same settings, so each worker has its own budget.
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass, replace
from typing import Protocol

CGROUP_LIMIT_FILES = (
    "/sys/fs/cgroup/memory.max",                      # cgroup v2
    "/sys/fs/cgroup/memory/memory.limit_in_bytes",    # cgroup v1
)
# cgroup v1 writes "no limit" as a page-aligned huge number.
_UNLIMITED = 1 << 60
# What the budget leaves out of the process's memory before taking its fraction, for the interpreter, the
# libraries and the memory no reservation counts (a scan's batches in flight, Python objects): Spark's
# RESERVED_SYSTEM_MEMORY_BYTES. A process with less than twice this reserves half of what it has.
RESERVED_BYTES = 300 << 20


def _own_cgroup_files() -> list[str]:
    """The memory limit files of this process's own cgroups (a process moved into a cgroup reads its limit
    there, not at the hierarchy's root)."""
    out: list[str] = []
    try:
        with open("/proc/self/cgroup") as f:
            lines = f.read().splitlines()
    except OSError:
        return out
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            out.append(f"/sys/fs/cgroup{path}/memory.max")
        elif "memory" in controllers.split(","):
            out.append(f"/sys/fs/cgroup/memory{path}/memory.limit_in_bytes")
    return out


def cgroup_memory_limit() -> int | None:
    """The smallest memory limit of the cgroups this process is in, or None where none is set."""
    limits = []
    for path in _own_cgroup_files() + list(CGROUP_LIMIT_FILES):
        try:
            with open(path) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < _UNLIMITED:
            limits.append(int(text))
    return min(limits) if limits else None


def physical_memory() -> int:
    """The machine's physical memory in bytes."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def available_memory() -> int:
    """What this process may use: its cgroup's limit where one is set and smaller, else physical memory."""
    physical = physical_memory()
    limit = cgroup_memory_limit()
    return min(physical, limit) if limit is not None else physical


@dataclass(frozen=True)
class MemorySettings:
    """A process's budget as a task carries it: an explicit limit, or a fraction of what the process may use
    (worked out where the task runs, so a Ray worker on another node sizes its own), and where spills go."""

    limit: int | None = None
    fraction: float = 0.6
    spill_root: str = ""
    # The share of the machine's memory this process stands for: 1 for a session's own process, a Ray
    # worker's CPUs over its node's (the node's memory is split among the workers running there).
    share: float = 1.0
    # What the process may use where the user said (`spark.driver.memory` for the session's process), in
    # place of its cgroup's limit or physical memory; and what each Ray worker may use (`spark.executor.memory`).
    available: int | None = None
    worker_available: int | None = None

    def budget(self) -> int:
        """The budget in bytes: the limit, else the fraction of this process's share of what it may use past
        `RESERVED_BYTES` (Spark's unified memory: (heap - 300 MiB) * spark.memory.fraction)."""
        if self.limit is not None:
            return self.limit
        available = int((self.available if self.available is not None else available_memory()) * self.share)
        return max(1, int(max(available - RESERVED_BYTES, available // 2) * self.fraction))

    def for_worker(self, assigned: dict[str, float], node_cpus: float) -> MemorySettings:
        """These settings in a Ray worker running a task that holds `assigned` resources on a node of
        `node_cpus` CPUs: the `memory` resource Ray gave the task where it asked for one (that is what Ray
        keeps free for it), else the task's CPUs' share of the node's memory. An explicit limit stays, and
        `spark.executor.memory` is what each worker may use."""
        if self.limit is not None:
            return self
        if self.worker_available is not None:
            return replace(self, available=self.worker_available, share=1.0)
        if assigned.get("memory"):
            return replace(self, limit=max(1, int(assigned["memory"] * self.fraction)))
        cpus = assigned.get("CPU", 0.0) or 1.0
        return replace(self, share=min(1.0, cpus / node_cpus) if node_cpus > 0 else 1.0)


class Spillable(Protocol):
    """A holder of memory that can give some back by writing it to disk."""

    name: str

    def spill(self, nbytes: int) -> int:
        """Write at least `nbytes` of held state to disk where it can; returns the bytes freed."""
        ...


class MemoryManager:
    """The budget of one process, shared by its tasks' reservations."""

    def __init__(self, budget: int):
        if budget <= 0:
            raise ValueError(f"a memory budget must be positive, got {budget}")
        self.budget = budget
        self._held: dict[int, int] = {}
        self._spillers: dict[int, Spillable] = {}
        self._lock = threading.RLock()
        self.spilled_bytes = 0
        self.spill_count = 0

    @property
    def used(self) -> int:
        with self._lock:
            return sum(self._held.values())

    def reservation(self, name: str, spiller: Spillable | None = None) -> Reservation:
        """A new, empty reservation for a holder named `name` (an operator, the block store); `spiller`
        is asked to spill when another reservation needs the memory."""
        return Reservation(self, name, spiller)

    def _grow(self, owner: Reservation, nbytes: int) -> bool:
        with self._lock:
            if self.used + nbytes <= self.budget:
                self._held[id(owner)] = self._held.get(id(owner), 0) + nbytes
                return True
            others = sorted(((held, key) for key, held in self._held.items()
                             if key != id(owner) and key in self._spillers and held > 0), reverse=True)
        # Spill outside the lock: a spiller writes files, and may itself release through the manager.
        for _, key in others:
            with self._lock:
                spiller = self._spillers.get(key)
                missing = self.used + nbytes - self.budget
            if spiller is None:
                continue
            if missing <= 0:
                break
            spiller.spill(missing)
        with self._lock:
            if self.used + nbytes <= self.budget:
                self._held[id(owner)] = self._held.get(id(owner), 0) + nbytes
                return True
            return False

    def _shrink(self, owner: Reservation, nbytes: int) -> None:
        with self._lock:
            left = self._held.get(id(owner), 0) - nbytes
            if left > 0:
                self._held[id(owner)] = left
            else:
                self._held.pop(id(owner), None)

    def _register(self, owner: Reservation, spiller: Spillable) -> None:
        with self._lock:
            self._spillers[id(owner)] = spiller

    def _close(self, owner: Reservation) -> None:
        with self._lock:
            self._held.pop(id(owner), None)
            self._spillers.pop(id(owner), None)

    def record_spill(self, nbytes: int) -> None:
        """Count `nbytes` written to spill files (for the process's totals)."""
        with self._lock:
            self.spilled_bytes += nbytes
            self.spill_count += 1


class Reservation:
    """Memory held by one holder. `try_grow` asks for more (spilling other holders if need be) and says
    whether it got it; `shrink` and `free` give it back; `close` gives all of it back for good."""

    def __init__(self, manager: MemoryManager, name: str, spiller: Spillable | None = None):
        self.manager = manager
        self.name = name
        self.held = 0
        if spiller is not None:
            manager._register(self, spiller)

    def try_grow(self, nbytes: int) -> bool:
        """Reserve `nbytes` more; False (nothing reserved) when the budget cannot make room for them."""
        if nbytes <= 0:
            return True
        if self.manager._grow(self, nbytes):
            self.held += nbytes
            return True
        return False

    def grow(self, nbytes: int) -> None:
        """Reserve `nbytes` more whatever the budget says: for memory already taken that cannot be spilled
        (it is counted, so other holders spill to make room)."""
        if not self.try_grow(nbytes):
            with self.manager._lock:
                self.manager._held[id(self)] = self.manager._held.get(id(self), 0) + nbytes
            self.held += nbytes

    def shrink(self, nbytes: int) -> None:
        nbytes = min(nbytes, self.held)
        self.manager._shrink(self, nbytes)
        self.held -= nbytes

    def free(self) -> None:
        """Give back everything held, keeping the reservation for later use."""
        self.shrink(self.held)

    def close(self) -> None:
        self.manager._close(self)
        self.held = 0

    def __enter__(self) -> Reservation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_MANAGERS: dict[int, MemoryManager] = {}
_MANAGERS_LOCK = threading.Lock()


def process_memory(settings: MemorySettings) -> MemoryManager:
    """This process's manager for a budget: tasks of one session share it, as do the tasks of a Ray worker."""
    budget = settings.budget()
    with _MANAGERS_LOCK:
        manager = _MANAGERS.get(budget)
        if manager is None:
            manager = _MANAGERS[budget] = MemoryManager(budget)
        return manager


__all__ = ["MemoryManager", "MemorySettings", "Reservation", "Spillable", "available_memory", "cgroup_memory_limit",
           "physical_memory", "process_memory"]
