"""The Ray runtime: a stage's tasks run as Ray tasks, and blocks live in Ray's object store.

A map task's output blocks are its Ray return values (`num_returns`), so the driver owns
them and Ray's reference counting frees them once the scheduler drops its references.
A consumer task gets the blocks it reads as arguments: on one node Ray maps them from
shared memory without a copy; across nodes Ray moves them. Ray's own retries are off
(`max_retries=0`): the scheduler retries failed tasks, and when a task cannot fetch an
input because the worker or node holding it died, this runtime reports the lost blocks
(`BlocksLost`) and the scheduler recomputes them from lineage, as Spark does.

A task placed on a GPU asks Ray for `num_gpus=1`, on an NPU for the custom resource
`NPU`; a task on emulated devices asks for them only where the cluster has them.
"""
from __future__ import annotations

import functools
import logging
import os
import re
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pyarrow as pa

from quiver.engine.core.conf import parse_size
from quiver.engine.core.errors import ConfigurationError, QuiverError
from quiver.engine.execution.runtime.base import OnOutcome, OnStart, TaskOutcome
from quiver.engine.execution.tasks import BlocksLost, InputBlocks, TaskSpec
from quiver.executors.blocks import BlockId
from quiver.executors.cancellation import Cancellation, TaskCancelled

log = logging.getLogger("quiver.ray")

# How long cancelled Ray tasks get to stop on an interrupt before their workers are killed.
CANCEL_GRACE_S = 2.0

# Loopback only: a Ray this runtime starts listens on 127.0.0.1 (set before ray is imported).
_LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def parse_ray_master(master: str) -> str | None:
    """The address a ray master names: 'local' for `ray`, else what `ray.init(address=...)` takes; None if
    `master` is not a ray master."""
    m = master.strip()
    if m == "ray":
        return "local"
    if m.startswith("ray://"):
        return m
    if m.startswith("ray:") and len(m) > 4:
        return m[4:]
    return None


def _is_loopback(address: str) -> bool:
    """Whether a Ray address (host:port, ray://host:port) names this machine's loopback interface: Ray
    must then keep to loopback too, or it rewrites 127.0.0.1 to the machine's outward address."""
    host = address.split("://", 1)[-1].rpartition(":")[0]
    return host in ("127.0.0.1", "localhost", "::1")


def _keep_to_loopback() -> None:
    """Ray read its loopback switch when it was imported; if the program imported Ray before Quiver, set
    the switch where Ray reads it at connection time, so a driver of a loopback head stays on loopback."""
    try:
        from ray._private import ray_constants
    except ImportError:
        return
    if hasattr(ray_constants, "ENABLE_RAY_CLUSTER") and os.environ.get(_LOOPBACK_ENV) in (None, "0"):
        ray_constants.ENABLE_RAY_CLUSTER = False


def _running_local_address() -> str | None:
    """The address of a Ray head started on this machine with `ray start --head` (or named by RAY_ADDRESS)
    that answers, or None. Ray records a head's address in its temp folder; a stale record is ignored."""
    address = os.environ.get("RAY_ADDRESS", "").strip()
    if not address:
        record = os.path.join(os.environ.get("RAY_TMPDIR", "/tmp"), "ray", "ray_current_cluster")
        try:
            with open(record) as f:
                address = f.read().strip()
        except OSError:
            return None
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=0.5):
            return address
    except (OSError, ValueError):
        return None


def _run_in_worker(spec: TaskSpec, body: Any, input_ids: tuple[BlockId, ...], fetched: bool, *inputs: Any) -> Any:
    """A task inside a Ray worker. Its inputs arrive as arguments (mapped from the object store), or, where
    `fetched` (more than its memory budget), as one list of references read one block at a time as the task
    reaches it, so the worker never pins more of them than it is reading."""
    import ray

    context = ray.get_runtime_context()
    memory = spec.memory.for_worker(context.get_assigned_resources(), _node_cpus(context.get_node_id()))
    blocks = FetchedBlocks(dict(zip(input_ids, inputs[0]))) if fetched else InputBlocks(dict(zip(input_ids, inputs)))
    run = replace(spec, body=body, memory=memory).run(blocks)
    blocks = [[_own_buffers(b) for b in block] for block in run.blocks]
    value = run.value
    if isinstance(value, list) and all(isinstance(b, pa.RecordBatch) for b in value):
        value = [_own_buffers(b) for b in value]
    node = context.get_node_id()
    done = {"worker": f"{node[:8]} pid {os.getpid()}", "rows": run.rows, "bytes": run.bytes,
            "started": run.started, "finished": run.finished, "spills": run.spills}
    meta = (value, node, [sum(b.nbytes for b in block) for block in blocks], done)
    return (meta, *blocks) if blocks else meta


class FetchedBlocks:
    """A task's input blocks as object references, each read from the object store when the task asks for it
    (which spills and restores by itself) and let go once the task has read it."""

    def __init__(self, refs: dict[BlockId, Any]):
        self._refs = refs

    def get(self, block: BlockId) -> list[pa.RecordBatch]:
        import ray

        ref = self._refs.get(block)
        if ref is None:
            raise QuiverError(f"task read block {block}, which is not among its inputs ({len(self._refs)} blocks)")
        return ray.get(ref)


@functools.lru_cache(maxsize=8)
def _node_cpus(node_id: str) -> float:
    """The CPUs Ray gives a node: its workers split its memory by them (asked once per worker process)."""
    import ray

    for node in ray.nodes():
        if node.get("NodeID") == node_id:
            return float(node.get("Resources", {}).get("CPU", 0.0))
    return 0.0


def _own_buffers(batch: pa.RecordBatch) -> pa.RecordBatch:
    """`batch` in buffers of its own when it is a small view of larger ones: serialized, a slice carries
    its whole parent buffer (ARROW-10739), so a block would cost the object store many times its size."""
    if batch.get_total_buffer_size() <= 2 * batch.nbytes + (1 << 16):
        return batch
    return batch.take(pa.array(np.arange(batch.num_rows)))


class RayBlockStore:
    """Blocks as references into Ray's object store, keyed by block id; dropping a reference frees the block."""

    def __init__(self) -> None:
        self._refs: dict[BlockId, Any] = {}
        self._nodes: dict[BlockId, str] = {}
        self._sizes: dict[BlockId, int] = {}
        self._lock = threading.Lock()

    def put(self, block: BlockId, batches: list[pa.RecordBatch], on_disk: bool = False) -> None:
        """Put batches the driver holds (a cached partition) into the object store, which spills to disk by
        itself (`on_disk` is left to it)."""
        import ray

        ref = ray.put(batches)
        self.put_ref(block, ref, ray.get_runtime_context().get_node_id(), sum(b.nbytes for b in batches))

    def put_ref(self, block: BlockId, ref: Any, node: str, nbytes: int) -> None:
        with self._lock:
            self._refs[block] = ref
            self._nodes[block] = node
            self._sizes[block] = nbytes

    def ref(self, block: BlockId) -> Any | None:
        with self._lock:
            return self._refs.get(block)

    def get(self, block: BlockId) -> list[pa.RecordBatch]:
        import ray

        ref = self.ref(block)
        return [] if ref is None else ray.get(ref)

    def contains(self, block: BlockId) -> bool:
        with self._lock:
            return block in self._refs

    def blocks_of(self, namespace: str, stage: int) -> list[BlockId]:
        with self._lock:
            return sorted((b for b in self._refs if b.namespace == namespace and b.stage == stage),
                          key=lambda b: (b.map_partition, b.reduce_partition))

    def not_on(self, nodes: set[str]) -> list[BlockId]:
        """Blocks written on a node not among `nodes` (the live ones): lost with their node."""
        with self._lock:
            return sorted((b for b, n in self._nodes.items() if n not in nodes), key=str)

    def drop(self, blocks: Iterable[BlockId]) -> None:
        with self._lock:
            for b in blocks:
                self._refs.pop(b, None)
                self._nodes.pop(b, None)
                self._sizes.pop(b, None)

    def drop_namespace(self, namespace: str) -> None:
        with self._lock:
            doomed = [b for b in self._refs if b.namespace == namespace]
        self.drop(doomed)

    def size(self, blocks: Iterable[BlockId]) -> int:
        """The bytes of `blocks` as they were put."""
        with self._lock:
            return sum(self._sizes.get(b, 0) for b in blocks)

    def nbytes(self, namespace: str | None = None) -> int:
        with self._lock:
            return sum(v for k, v in self._sizes.items() if namespace is None or k.namespace == namespace)

    def block_of_object(self, object_hex: str) -> BlockId | None:
        with self._lock:
            for b, ref in self._refs.items():
                if ref.hex() == object_hex:
                    return b
        return None


class _StartsBySlot:
    """Tells `on_start` of Ray tasks as they are likely to start: Ray does not tell the driver when a queued
    task begins, so a task counts as started once one of the cluster's `slots` (its CPUs) is free for it, in
    the order the tasks were submitted; a task that ends before it was counted is counted as it ends."""

    def __init__(self, on_start: OnStart | None, slots: int, submitted: list[int]):
        self._on_start = on_start
        self._slots = max(1, slots)
        self._waiting = deque(submitted)
        self._running: set[int] = set()

    def ended(self, i: int) -> None:
        """Task `i` ended: told as started first if it was not yet."""
        if i in self._running:
            self._running.discard(i)
            return
        if i in self._waiting:
            self._waiting.remove(i)
        if self._on_start is not None:
            self._on_start(i)

    def fill(self) -> None:
        """Count as started the next submitted tasks that fit the free slots."""
        while self._waiting and len(self._running) < self._slots:
            i = self._waiting.popleft()
            self._running.add(i)
            if self._on_start is not None:
                self._on_start(i)


class RayRuntime:
    """Runs task specs as Ray tasks on the cluster `ray.init` connected this process to."""

    blocks_leave_process = True

    def __init__(self, owns_connection: bool):
        import ray

        self._ray = ray
        self._owns_connection = owns_connection
        self.store = RayBlockStore()
        self._remote = ray.remote(_run_in_worker)
        self._inventory: tuple[float, dict[str, float]] | None = None
        self._nodes: int | None = None
        resources = ray.cluster_resources()
        self.parallelism = max(1, int(resources.get("CPU", 1)))

    @classmethod
    def connect(cls, address: str, conf: Any) -> RayRuntime:
        """Join or start Ray for a master's address ('local': join this machine's Ray, or start one)."""
        # A failed task's unread block references hold its error; the scheduler reports the error itself.
        os.environ.setdefault("RAY_IGNORE_UNHANDLED_ERRORS", "1")
        running = _running_local_address() if address == "local" else None
        target = running or address
        loopback = target == "local" or _is_loopback(target)
        if loopback and "ray" not in sys.modules:
            os.environ.setdefault(_LOOPBACK_ENV, "0")
        try:
            import ray
        except ImportError as exc:
            raise ConfigurationError(
                "master 'ray' needs Ray, which is not installed: pip install 'quiver[ray]'") from exc
        if loopback and not ray.is_initialized():
            _keep_to_loopback()
        if ray.is_initialized():
            return cls(owns_connection=False)
        options: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
        if address == "local":
            if running is not None:
                # "auto" finds the same head (RAY_ADDRESS, then Ray's record of `ray start`), and only a head
                # found so lets Ray send this machine's auth token (~/.ray/auth_token) to it.
                ray.init(address="auto", **options)
            else:
                cpus = conf.get("quiver.ray.numCpus", None)
                store = conf.get("quiver.ray.objectStoreMemory", None)
                ray.init(address="local", include_dashboard=False, _node_ip_address="127.0.0.1",
                         num_cpus=int(cpus) if cpus is not None else None,
                         object_store_memory=parse_size("quiver.ray.objectStoreMemory", store)
                         if store is not None else None, **options)
        else:
            try:
                ray.init(address=address, **options)
            except Exception as exc:  # noqa: BLE001 — Ray raises several types for an address it cannot reach
                hint = (" Ray sends its auth token only to a head it found itself: use master 'ray' or 'ray:auto' "
                        "for this machine's head, or set RAY_AUTH_MODE=token (and RAY_AUTH_TOKEN) for an explicit "
                        "address." if "AuthToken" in str(exc) or "Authentication" in type(exc).__name__ else "")
                raise ConfigurationError(
                    f"cannot connect to the Ray cluster at {address!r}: {str(exc).splitlines()[0]}.{hint} A head "
                    "started with `ray start --head` is reached with master 'ray' or 'ray:auto'; Ray Client "
                    "addresses are ray://host:port") from exc
        return cls(owns_connection=True)

    # ---------------------------------------------------------- tasks

    def run_tasks(self, tasks: Sequence[TaskSpec], on_outcome: OnOutcome | None = None,
                  cancel: Cancellation | None = None, on_start: OnStart | None = None) -> list[TaskOutcome]:
        ray = self._ray
        bodies: dict[int, Any] = {}
        outcomes: list[TaskOutcome | None] = [None] * len(tasks)
        running: dict[Any, tuple[int, TaskSpec, list[Any]]] = {}
        available = self._device_resources()
        submitted_at = time.time()
        for i, spec in enumerate(tasks):
            if cancel is not None and cancel.cancelled:
                outcomes[i] = TaskOutcome(error=TaskCancelled(f"task cancelled: {cancel.reason}"))
                continue
            missing = tuple(b for b in spec.inputs if not self.store.contains(b))
            if missing:
                outcomes[i] = TaskOutcome(error=BlocksLost(missing, "no longer in the object store"))
                continue
            body_ref = bodies.get(id(spec.body))
            if body_ref is None:
                body_ref = bodies[id(spec.body)] = ray.put(spec.body)
            inputs = [self.store.ref(b) for b in spec.inputs]
            # Inputs as arguments, which Ray maps into the worker before the task starts (and schedules by);
            # more than the worker's budget, as references the task reads one at a time.
            fetched = self.store.size(spec.inputs) > self._worker_budget(spec)
            refs = self._remote.options(
                num_returns=1 + len(spec.outputs), max_retries=0, retry_exceptions=False,
                **self._options(spec, available),
            ).remote(replace(spec, body=None), body_ref, spec.inputs, fetched, *([inputs] if fetched else inputs))
            refs = refs if isinstance(refs, list) else [refs]
            running[refs[0]] = (i, spec, refs[1:])
        starts = _StartsBySlot(on_start, self.parallelism, [i for i, _, _ in running.values()])
        for i, outcome in enumerate(outcomes):
            if outcome is not None:
                starts.ended(i)
                if on_outcome is not None:
                    on_outcome(i, outcome)
        starts.fill()
        try:
            while running:
                # Wake up now and then to see a cancellation even while every task is still running.
                first, rest = ray.wait(list(running), num_returns=1, timeout=0.2 if cancel is not None else None)
                done = first + (ray.wait(rest, num_returns=len(rest), timeout=0)[0] if first and rest else [])
                for meta_ref in done:
                    i, spec, block_refs = running.pop(meta_ref)
                    outcomes[i] = self._outcome(spec, meta_ref, block_refs, submitted_at)
                    starts.ended(i)
                    if on_outcome is not None:
                        on_outcome(i, outcomes[i])
                starts.fill()
                if running and cancel is not None and cancel.cancelled:
                    self._stop(running)
                    for i, _, _ in running.values():
                        outcomes[i] = TaskOutcome(error=TaskCancelled(f"task cancelled: {cancel.reason}"),
                                                  started=submitted_at)
                    break
        except BaseException:
            # Ctrl-C in the driver: the job's Ray tasks are cancelled before the error goes on.
            if cancel is not None:
                cancel.cancel("because the driver was interrupted")
            self._stop(running)
            raise
        return outcomes

    def _stop(self, running: dict[Any, tuple[int, TaskSpec, list[Any]]]) -> None:
        """Cancel running Ray tasks: an interrupt in the task first (it stops a task in Python code, even
        sleeping), then, for those still running after CANCEL_GRACE_S, their worker process killed (a task
        stuck in native code)."""
        ray = self._ray
        refs = list(running)
        for ref in refs:
            try:
                ray.cancel(ref, force=False)
            except Exception:  # noqa: BLE001 — a task that just ended cannot be cancelled
                pass
        if not refs:
            return
        _, stuck = ray.wait(refs, num_returns=len(refs), timeout=CANCEL_GRACE_S)
        for ref in stuck:
            try:
                ray.cancel(ref, force=True)
            except Exception:  # noqa: BLE001
                pass

    def _outcome(self, spec: TaskSpec, meta_ref: Any, block_refs: list[Any], submitted_at: float) -> TaskOutcome:
        ray = self._ray
        try:
            value, node, sizes, done = ray.get(meta_ref)
        except ray.exceptions.RayTaskError as exc:
            cause = exc.cause if getattr(exc, "cause", None) is not None else exc
            if isinstance(cause, ray.exceptions.ObjectLostError):
                return TaskOutcome(error=self._lost(spec, cause), started=submitted_at)
            return TaskOutcome(error=cause, started=submitted_at)
        except ray.exceptions.ObjectLostError as exc:
            return TaskOutcome(error=self._lost(spec, exc), started=submitted_at)
        except ray.exceptions.RayError as exc:
            # The worker or its node died while the task ran: a failure like any other, retried.
            return TaskOutcome(error=exc, started=submitted_at)
        for block, ref, nbytes in zip(spec.outputs, block_refs, sizes):
            self.store.put_ref(block, ref, node, nbytes)
        return TaskOutcome(value, node=node, **done)

    def _lost(self, spec: TaskSpec, error: Exception) -> BlocksLost:
        """The blocks a task could not fetch: the one Ray named, and every block written on a node now dead."""
        named = self.store.block_of_object(getattr(error, "object_ref_hex", "") or _object_hex(str(error)))
        alive = {n["NodeID"] for n in self._ray.nodes() if n.get("Alive")}
        lost = ([named] if named is not None else []) + [b for b in self.store.not_on(alive) if b != named]
        return BlocksLost(tuple(lost or spec.inputs), str(error).splitlines()[0])

    def _device_resources(self) -> dict[str, float]:
        resources = self._ray.cluster_resources()
        return {"GPU": resources.get("GPU", 0.0), "NPU": resources.get("NPU", 0.0)}

    def _worker_budget(self, spec: TaskSpec) -> int:
        """The memory budget a worker will have for `spec`, as this process sees it: the task's CPUs' share of
        a node of the cluster's average size."""
        if self._nodes is None:
            self._nodes = max(1, len(self.nodes()))
        node_cpus = self.inventory().get("CPU", 1.0) / self._nodes
        return spec.memory.for_worker({"CPU": spec.resources.cpus}, node_cpus).budget()

    @staticmethod
    def _options(spec: TaskSpec, available: dict[str, float]) -> dict[str, Any]:
        """Ray resources for a task: CPUs, and the GPU or NPU its placed operators run on."""
        r = spec.resources
        options: dict[str, Any] = {"num_cpus": r.cpus}
        for kind, amount in (("GPU", r.gpus), ("NPU", r.npus)):
            if not amount:
                continue
            if available.get(kind, 0.0) < amount:
                if r.emulated:
                    continue
                raise ConfigurationError(
                    f"a task of stage {spec.stage_id} is placed on a {kind} but the Ray cluster has no {kind} "
                    f"resource ({available.get(kind, 0.0):g}); start workers with --num-gpus / "
                    "--resources='{\"NPU\": n}', or leave that device out of quiver.devices")
            if kind == "GPU":
                options["num_gpus"] = amount
            else:
                options["resources"] = {"NPU": amount}
        return options

    # ---------------------------------------------------------- cluster

    def inventory(self) -> dict[str, float]:
        """The cluster's CPUs, GPUs and NPUs; asked of Ray at most once a second (placement asks per stage)."""
        now = time.monotonic()
        if self._inventory is None or now - self._inventory[0] > 1.0:
            resources = self._ray.cluster_resources()
            self._inventory = (now, {k: float(resources.get(k, 0.0)) for k in ("CPU", "GPU", "NPU")})
        return dict(self._inventory[1])

    def nodes(self) -> list[dict[str, Any]]:
        """Per live node: its id and its CPUs, GPUs and NPUs, as Ray reports them."""
        return [{"node": n["NodeID"], **{k: float(n["Resources"].get(k, 0.0)) for k in ("CPU", "GPU", "NPU")}}
                for n in self._ray.nodes() if n.get("Alive")]

    def store_stats(self) -> dict[str, int]:
        """Bytes the job's blocks hold, and what Ray's object store holds and has spilled to disk."""
        stats = {"block_bytes": self.store.nbytes()}
        try:
            from ray._private.internal_api import memory_summary

            summary = memory_summary(stats_only=True)
        except Exception:  # noqa: BLE001 — a summary Ray cannot give leaves only our own numbers
            return stats
        used = re.search(r"Plasma memory usage (\d+) MiB, (\d+) objects", summary)
        spilled = re.search(r"Spilled (\d+) MiB, (\d+) objects", summary)
        restored = re.search(r"Restored (\d+) MiB, (\d+) objects", summary)
        stats["object_store_bytes"] = int(used.group(1)) << 20 if used else 0
        stats["spilled_bytes"] = int(spilled.group(1)) << 20 if spilled else 0
        stats["spilled_objects"] = int(spilled.group(2)) if spilled else 0
        stats["restored_bytes"] = int(restored.group(1)) << 20 if restored else 0
        return stats

    def shutdown(self) -> None:
        self.store.drop(list(self.store._refs))
        if self._owns_connection and self._ray.is_initialized():
            self._ray.shutdown()


def _object_hex(message: str) -> str:
    match = re.search(r"object ([0-9a-f]{40,})", message)
    return match.group(1) if match else ""


__all__ = ["RayBlockStore", "RayRuntime", "parse_ray_master"]
