"""`ExecutionContext`: what runs a session's queries — its runtime, scheduler, devices and cache.

A `Session` (engine/api) is the user's entry point and owns the names (conf, catalog); it builds one
`ExecutionContext` for the work, as a SparkSession sits on a SparkContext: the runtime its master
names (threads in this process, or Ray workers) with their block store, the DAG scheduler, the
devices `quiver.devices` lists with their cost profiles and the placement of each stage on them, and
the cache of the plans users persisted. A `QueryExecution` runs one query in this context.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import logging
import os
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa

from quiver.engine.core.conf import RuntimeConfig, parse_size
from quiver.engine.core.errors import ConfigurationError, SessionStoppedError
from quiver.engine.execution.devices import DeviceSet
from quiver.engine.execution.memory import release_compiler_pages
from quiver.engine.execution.query_execution import CacheManager
from quiver.engine.execution.runtime.base import Runtime
from quiver.engine.execution.runtime.local import LocalRuntime, parse_local_master
from quiver.engine.execution.runtime.ray import RayRuntime, parse_ray_master
from quiver.engine.execution.scheduler import DAGScheduler, JobMetrics
from quiver.executors.base import Executor
from quiver.executors.blocks import BlockStore, InProcessBlockStore
from quiver.executors.cpu.executor import CpuExecutor
from quiver.executors.cpu.jit import after_first_kernel_call
from quiver.executors.cpu.worker_pool import WORKERS, WorkerSettings
from quiver.executors.memory import MemorySettings, process_memory
from quiver.executors.native.executor import DuckDBExecutor, native_fragments
from quiver.executors.spill import process_spill_folder, sweep_spill_folders
from quiver.planners.adaptive import AdaptiveSettings
from quiver.planners.physical.nodes import PhysicalPlan
from quiver.planners.placement import Candidate, StagePlacement, device_paths, place_stage
from quiver.planners.stages import Stage, StageGraph

log = logging.getLogger("quiver.placement")


VALID_MASTERS = ("local, local[N], local[*] (threads in this process), ray (join the Ray instance running on this "
                 "machine, or start one), ray://host:port (a Ray cluster through Ray Client) and ray:ADDRESS (an "
                 "address as ray.init takes it, e.g. ray:auto, ray:10.0.0.5:6379)")


def check_master(master: str) -> str:
    """`master` as given if it names a runtime (a local or a ray master); else a ConfigurationError naming the
    valid ones, so a command line can refuse it before anything starts."""
    if parse_local_master(master, 1) is None and parse_ray_master(master) is None:
        raise _unknown_master(master)
    return master


def _unknown_master(master: str) -> ConfigurationError:
    return ConfigurationError(f"master {master!r} is not a master; valid masters are {VALID_MASTERS}")


def open_runtime(master: str, conf: RuntimeConfig) -> Runtime:
    """The runtime a master names: threads for local masters, Ray workers for ray masters."""
    threads = parse_local_master(master, os.cpu_count() or 1)
    if threads is not None:
        return LocalRuntime(threads)
    address = parse_ray_master(master)
    if address is None:
        raise _unknown_master(master)
    return RayRuntime.connect(address, conf)


class ExecutionContext:
    """The runtime, block store, scheduler, devices and cache that one session's queries run with.

    `job_record` is the class each job's metrics are kept in (the session passes the UI's `ReportedJob`,
    which can draw itself, so this layer does not import the UI).
    """

    def __init__(self, conf: RuntimeConfig, runtime: Runtime, job_record: type[JobMetrics] = JobMetrics):
        self.conf = conf
        self.runtime = runtime
        cpu = CpuExecutor()
        self.devices = DeviceSet(cpu)
        self.scheduler = DAGScheduler(runtime, cpu, conf.max_failures(), self._place, job_record=job_record)
        # The placement of each stage the scheduler placed off the CPU in the last jobs, by stage id.
        self.last_placements: dict[int, StagePlacement] = {}
        self.cache = CacheManager(self)
        self._native: DuckDBExecutor | None = None
        # Set by `shutdown`: a stopped session's runtime is gone, so its queries raise instead of half-running.
        self.stopped = False
        # Open the configured devices now, so a wrong quiver.devices fails when the session starts.
        self.devices.candidates(conf.get("quiver.devices"), self._profile_names())
        # Spill folders of sessions that died (killed, crashed) under the same local dir go now.
        swept = sweep_spill_folders(self.memory_settings().spill_root or tempfile.gettempdir())
        if swept:
            log.info("removed %d spill folder(s) that processes which ended left behind", len(swept))
        self.attach_store_memory()
        after_first_kernel_call(release_compiler_pages)

    def memory_settings(self) -> MemorySettings:
        """The memory budget and spill root the conf names now (`quiver.memory.*`, `quiver.local.dir`)."""
        conf = self.conf
        return MemorySettings(conf.memory_limit(), conf.memory_fraction(), conf.local_dir(),
                              available=conf.driver_memory(), worker_available=conf.executor_memory())

    def attach_store_memory(self) -> None:
        """Hold an in-process block store under this process's budget, spilling into its spill folder."""
        store = self.runtime.store
        if isinstance(store, InProcessBlockStore):
            settings = self.memory_settings()
            store.attach_memory(process_memory(settings), process_spill_folder(settings.spill_root).space("blocks"))

    @property
    def store(self) -> BlockStore:
        """The runtime's block store: shuffle, broadcast and cache blocks."""
        return self.runtime.store

    @property
    def parallelism(self) -> int:
        """How many tasks run at once: the local threads, or the Ray cluster's CPUs."""
        return self.runtime.parallelism

    def run_job(self, graph: StageGraph, result_task: Callable[[int, Iterator[pa.RecordBatch]], Any],
                ansi: bool = False) -> list[Any]:
        """Run one job on the scheduler, with user Python code where `quiver.python.*` says, in the query's
        ANSI mode."""
        if self.stopped:
            raise SessionStoppedError("this session was stopped (spark.stop()), so it runs no more jobs; "
                                      "start another with Session.builder.getOrCreate()")
        self.configure_python_workers()
        self.attach_store_memory()
        return self.scheduler.run_job(graph, result_task, ansi=ansi, memory=self.memory_settings(),
                                      adaptive=AdaptiveSettings.from_conf(self.conf, self.parallelism,
                                                                          self.memory_settings().budget()))

    def configure_python_workers(self) -> None:
        """User Python code runs in worker processes (local masters), unless `quiver.python.udf.inProcess`;
        on Ray it runs in the Ray worker, already a process of its own."""
        in_workers = isinstance(self.runtime, LocalRuntime) and not self.conf.python_udf_in_process()
        WORKERS.configure(in_workers, WorkerSettings(self.conf.python_worker_memory()))

    def shutdown(self) -> None:
        """Cancel running jobs, free the cache, stop the runtime and the Python workers."""
        self.stopped = True
        self.scheduler.jobs.cancel_all("because SparkContext was shut down")
        self.cache.clear()
        self.runtime.shutdown()
        WORKERS.shutdown()

    # ---------------------------------------------------------- devices and placement

    def _profile_names(self) -> dict[str, str]:
        return {kind: str(self.conf.get(f"quiver.profile.{kind}")) for kind in ("cpu", "gpu", "npu")}

    def placement_candidates(self) -> list[Candidate]:
        """The devices `quiver.devices` names (the CPU first), with their executors and cost profiles."""
        candidates = self.devices.candidates(self.conf.get("quiver.devices"), self._profile_names())
        if isinstance(self.runtime, LocalRuntime):
            return candidates
        # On Ray, each candidate spreads over the cluster's units of its kind (CPUs, GPUs, NPUs) as Ray
        # reports them; an emulated device the cluster has none of keeps its profile's.
        inventory = self.runtime.inventory()
        return [dataclasses.replace(c, units=int(inventory.get(c.device.kind.upper(), 0)))
                if inventory.get(c.device.kind.upper(), 0) >= 1 else c for c in candidates]

    def place(self, stage_id: int, root: PhysicalPlan,
              actual_sizes: dict[int, tuple[int, int]] | None = None, mode: str | None = None) -> StagePlacement:
        """The device of every operator of one stage under `quiver.placement` (explain shows this), or under
        `mode` where given."""
        return place_stage(stage_id, root, self.placement_candidates(), mode or str(self.conf.get("quiver.placement")),
                           actual_sizes, concurrent_tasks=self.parallelism)

    def _place(self, stage: Stage, actual_sizes: dict[int, tuple[int, int]], mode: str | None = None) -> dict[int, Any]:
        """The scheduler's hook (a `StagePlacer`): executors for the operators of `stage` placed off the CPU,
        with the finished stages' actual sizes in place of estimates. `mode` (a skewed task's other device)
        is taken where `quiver.placement` is `cost` or `mode` is the CPU; a user's `cpu`, `gpu` or `npu` stands."""
        candidates = self.placement_candidates()
        configured = str(self.conf.get("quiver.placement"))
        if mode is not None and configured != "cost" and mode != "cpu":
            mode = configured
        placed: dict[int, Any] = {}
        if len(candidates) > 1:
            placement = self.place(stage.id, stage.root, actual_sizes, mode)
            if mode is None:
                self.last_placements[stage.id] = placement
                log.info("%s", placement.describe())
            by_label = {c.label: c.executor for c in candidates}
            placed = {id(node): by_label[str(device)] for node, device in device_paths(stage.root, placement)
                      if device.kind != "cpu"}
        native = self.native_executor()
        if native is not None:
            for node in native_fragments(stage.root, set(placed), native):
                placed[id(node)] = native
        return placed

    def native_executor(self) -> DuckDBExecutor | None:
        """The executor `quiver.native.engine` runs the stage fragments it translates on, or None (`none`)."""
        if self.conf.get("quiver.native.engine") == "none":
            return None
        share = float(self.conf.get("quiver.native.maxOutputShare"))
        least = parse_size("quiver.native.minScanBytes", self.conf.get("quiver.native.minScanBytes"))
        if self._native is None or (self._native.max_output_share, self._native.min_scan_bytes) != (share, least):
            if importlib.util.find_spec("duckdb") is None:  # found, not imported: a fragment imports it
                raise ConfigurationError("quiver.native.engine is duckdb, which needs the duckdb package: "
                                         "pip install duckdb (or set quiver.native.engine to none)")
            self._native = DuckDBExecutor(share, least)
        return self._native

    def cache_device(self) -> Executor | None:
        """The executor `quiver.cache.device` keeps copies of cached partitions on, or None."""
        kind = str(self.conf.get("quiver.cache.device"))
        if kind == "none":
            return None
        for c in self.placement_candidates():
            if c.device.kind == kind:
                return c.executor
        raise ConfigurationError(
            f"quiver.cache.device is {kind}, but quiver.devices ({self.conf.get('quiver.devices')}) lists no {kind}")

    def drop_device_cache(self, cache_key: int) -> None:
        """Free the device copies of one cached relation, wherever they were kept."""
        for candidates in self.devices.opened():
            for c in candidates:
                if hasattr(c.executor, "cache_drop"):
                    c.executor.cache_drop(cache_key)


__all__ = ["VALID_MASTERS", "ExecutionContext", "check_master", "open_runtime"]
