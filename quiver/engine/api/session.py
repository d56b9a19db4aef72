"""`Session`: the entry point, shaped like `pyspark.sql.SparkSession`.

`Session.builder.master("local[4]").appName("x").config(k, v).getOrCreate()` returns the
active session (one per process, as in PySpark); it owns the runtime, the block store,
the scheduler, the temp views and the cache.
"""
from __future__ import annotations

import dataclasses
import logging
import os
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import pyarrow as pa

from quiver.engine.analysis.analyzer import analyze
from quiver.engine.api.local_data import declared_types, to_arrow_table
from quiver.engine.core import plan as L
from quiver.engine.core import types as T
from quiver.engine.core.conf import RuntimeConfig
from quiver.engine.core.errors import AnalysisException, ConfigurationError, QuiverError
from quiver.engine.core.expressions import AttributeRef, new_expr_id
from quiver.engine.execution.devices import DeviceSet
from quiver.engine.execution.query_execution import CacheManager
from quiver.engine.execution.runtime.local import LocalRuntime, parse_local_master
from quiver.engine.execution.runtime.ray import RayRuntime, parse_ray_master
from quiver.engine.execution.scheduler import DAGScheduler
from quiver.engine.ui.job_report import ReportedJob
from quiver.engine.ui.progress import ProgressListener
from quiver.executors.cpu.executor import CpuExecutor
from quiver.planners.placement import Candidate, StagePlacement, device_paths, place_stage

log = logging.getLogger("quiver.placement")

_lock = threading.RLock()


class _Builder:
    """`Session.builder`: collects master, app name and conf, then returns the session."""

    def __init__(self) -> None:
        self._options: dict[str, Any] = {}

    def master(self, master: str) -> _Builder:
        self._options["quiver.master"] = master
        return self

    def appName(self, name: str) -> _Builder:
        self._options["quiver.app.name"] = name
        return self

    def config(self, key: str | None = None, value: Any = None, conf: Any = None, map: dict | None = None) -> _Builder:
        if key is not None:
            self._options[key] = value
        for k, v in (map or {}).items():
            self._options[k] = v
        if conf is not None:
            for k, v in conf.getAll() if hasattr(conf, "getAll") else dict(conf).items():
                self._options[k] = v
        return self

    def enableHiveSupport(self) -> _Builder:
        return self

    def getOrCreate(self) -> Session:
        with _lock:
            active = Session._active
            if active is not None and not active._stopped:
                for k, v in self._options.items():
                    if k not in ("quiver.master", "spark.master"):
                        active.conf.set(k, v)
                return active
            session = Session(self._options)
            Session._active = session
            return session

    create = getOrCreate


class _BuilderDescriptor:
    def __get__(self, obj: Any, owner: type) -> _Builder:
        return _Builder()


class SparkContextShim:
    """The few `spark.sparkContext` members PySpark programs touch on a local session."""

    def __init__(self, session: Session):
        self._session = session

    def setLogLevel(self, level: str) -> None:
        import logging

        logging.getLogger("quiver").setLevel(getattr(logging, level.upper(), logging.WARNING))

    @property
    def defaultParallelism(self) -> int:
        return self._session._runtime.parallelism

    @property
    def master(self) -> str:
        return self._session.master

    @property
    def appName(self) -> str:
        return self._session.app_name

    def stop(self) -> None:
        self._session.stop()


# What `quiver-submit` was given (--master, --conf): the defaults of the session the application
# builds; what the application sets itself wins, as with spark-submit.
_submit_master: str | None = None
_submit_conf: dict[str, Any] = {}


def set_submit_defaults(master: str | None, conf: dict[str, Any]) -> None:
    """Make `master` and `conf` the defaults of sessions created from now on in this process."""
    global _submit_master, _submit_conf
    _submit_master, _submit_conf = master, dict(conf)


def _open_runtime(master: str, conf: RuntimeConfig):
    """The runtime a master names: threads for local masters, Ray workers for ray masters."""
    threads = parse_local_master(master, os.cpu_count() or 1)
    if threads is not None:
        return LocalRuntime(threads)
    address = parse_ray_master(master)
    if address is None:
        raise ConfigurationError(
            f"master {master!r} is not a master; valid masters are local, local[N], local[*] (threads in this "
            "process), ray (join the Ray instance running on this machine, or start one), ray://host:port "
            "(a Ray cluster through Ray Client) and ray:ADDRESS (an address as ray.init takes it, e.g. ray:auto, "
            "ray:10.0.0.5:6379)")
    return RayRuntime.connect(address, conf)


class Session:
    """A Quiver session; use `Session.builder...getOrCreate()`."""

    builder = _BuilderDescriptor()
    _active: Session | None = None

    def __init__(self, options: dict[str, Any] | None = None):
        options = {**_submit_conf, **dict(options or {})}
        self.conf = RuntimeConfig(options)
        default_master = _submit_master or os.environ.get("QUIVER_MASTER", "local[*]")
        self.master = str(self.conf.get("quiver.master", default_master))
        self.app_name = str(self.conf.get("quiver.app.name", "quiver"))
        self._runtime = _open_runtime(self.master, self.conf)
        cpu = CpuExecutor()
        self._devices = DeviceSet(cpu)
        self._threads = self._runtime.parallelism
        self._scheduler = DAGScheduler(self._runtime, cpu, self.conf.max_failures(), self._place,
                                       job_record=ReportedJob)
        self._scheduler.listeners.append(ProgressListener(self.conf))
        self.last_placements: dict[int, StagePlacement] = {}
        self._devices.candidates(self.conf.get("quiver.devices"), self._profile_names())
        self._views: dict[str, L.LogicalPlan] = {}
        self._cache = CacheManager(self)
        self._stopped = False

    @property
    def _store(self):
        """The runtime's block store: shuffle, broadcast and cache blocks."""
        return self._runtime.store

    # ---------------------------------------------------------- devices

    def _profile_names(self) -> dict[str, str]:
        return {kind: str(self.conf.get(f"quiver.profile.{kind}")) for kind in ("cpu", "gpu", "npu")}

    def placement_candidates(self) -> list[Candidate]:
        """The devices `quiver.devices` names (the CPU first), with their executors and cost profiles."""
        candidates = self._devices.candidates(self.conf.get("quiver.devices"), self._profile_names())
        return self._with_runtime_units(candidates)

    def _with_runtime_units(self, candidates: list[Candidate]) -> list[Candidate]:
        """On Ray, each candidate spreads over the cluster's units of its kind (CPUs, GPUs, NPUs) as Ray
        reports them; an emulated device the cluster has none of keeps its profile's."""
        if isinstance(self._runtime, LocalRuntime):
            return candidates
        inventory = self._runtime.inventory()
        return [dataclasses.replace(c, units=int(inventory.get(c.device.kind.upper(), 0)))
                if inventory.get(c.device.kind.upper(), 0) >= 1 else c for c in candidates]

    def place(self, stage_id: int, root, actual_sizes: dict[int, tuple[int, int]] | None = None) -> StagePlacement:
        """The device of every operator of one stage under `quiver.placement` (explain shows this)."""
        return place_stage(stage_id, root, self.placement_candidates(), str(self.conf.get("quiver.placement")),
                           actual_sizes, concurrent_tasks=self._threads)

    def cache_device(self):
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
        for candidates in self._devices.opened():
            for c in candidates:
                if hasattr(c.executor, "cache_drop"):
                    c.executor.cache_drop(cache_key)

    def _place(self, stage, actual_sizes: dict[int, tuple[int, int]]) -> dict[int, object]:
        """The scheduler's hook: executors for the operators of `stage` placed off the CPU, with the
        finished stages' actual sizes in place of estimates."""
        candidates = self.placement_candidates()
        if len(candidates) == 1:
            return {}
        placement = self.place(stage.id, stage.root, actual_sizes)
        self.last_placements[stage.id] = placement
        log.info("%s", placement.describe())
        by_label = {c.label: c.executor for c in candidates}
        return {id(node): by_label[str(device)] for node, device in device_paths(stage.root, placement)
                if device.kind != "cpu"}

    # ---------------------------------------------------------- life cycle

    @classmethod
    def getActiveSession(cls) -> Session | None:
        return cls._active if cls._active is not None and not cls._active._stopped else None

    @property
    def udf(self) -> Any:
        """`spark.udf`: register Python functions for SQL."""
        from quiver.engine.api.udf import UDFRegistration

        return UDFRegistration(self)

    @property
    def sparkContext(self) -> SparkContextShim:
        return SparkContextShim(self)

    @property
    def version(self) -> str:
        from importlib.metadata import version

        return version("quiver")

    def lastJob(self) -> ReportedJob:
        """The last job this session ran: its stages, task attempts (worker, device, times, rows, bytes) and
        bytes shuffled; `.report("job.html")` writes its timeline as a self-contained HTML page."""
        job = self._scheduler.last_job
        if job is None:
            raise QuiverError("no job has run in this session yet; run an action such as collect() or count() first")
        assert isinstance(job, ReportedJob), "this session's scheduler records its jobs as ReportedJob"
        return job

    def newSession(self) -> Session:
        return self

    def stop(self) -> None:
        with _lock:
            if self._stopped:
                return
            self._stopped = True
            self._cache.clear()
            self._runtime.shutdown()
            if Session._active is self:
                Session._active = None

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # ---------------------------------------------------------- data

    def createDataFrame(self, data: Any, schema: Any = None, samplingRatio: float | None = None,
                        verifySchema: bool = True) -> DataFrame:
        """A DataFrame from pandas, an Arrow table, or a list of tuples / dicts / Rows."""
        table = to_arrow_table(data, schema)
        types = declared_types(schema, table.num_columns) or [T.from_arrow(f.type) for f in table.schema]
        attrs = tuple(
            AttributeRef(f.name, dtype, True, new_expr_id()) for f, dtype in zip(table.schema, types)
        )
        return self._df(L.LocalRelation(table, attrs))

    def range(self, start: int, end: int | None = None, step: int = 1, numPartitions: int | None = None) -> DataFrame:
        """A single bigint column `id` from `start` (inclusive) to `end` (exclusive)."""
        if end is None:
            start, end = 0, start
        if step == 0:
            raise ConfigurationError("range() step must not be 0")
        attr = AttributeRef("id", T.LongType(), False, new_expr_id())
        return self._df(L.RangeRelation(int(start), int(end), int(step), numPartitions, attr))

    @property
    def read(self) -> Any:
        from quiver.engine.api.readwriter import DataFrameReader

        return DataFrameReader(self)

    def table(self, name: str) -> DataFrame:
        key = name.lower()
        if key not in self._views:
            raise AnalysisException(
                f"table or view '{name}' not found. Registered temp views: {', '.join(sorted(self._views)) or '(none)'}"
            )
        return self._df(L.SubqueryAlias(self._views[key], name))

    def sql(self, query: str, args: dict | None = None, **kwargs: Any) -> DataFrame:
        from quiver.engine.sql.statements import sql_to_plan

        with self._type_coercion():
            plan = sql_to_plan(self, query)
        return self._df(plan)

    @property
    def catalog(self) -> Catalog:
        return Catalog(self)

    def _register_view(self, name: str, plan: L.LogicalPlan, replace: bool) -> None:
        key = name.lower()
        if key in self._views and not replace:
            raise AnalysisException(f"temp view '{name}' already exists; use createOrReplaceTempView to replace it")
        self._views[key] = plan

    def _df(self, plan: L.LogicalPlan) -> DataFrame:
        from quiver.engine.api.dataframe import DataFrame

        with self._type_coercion():
            return DataFrame(self, analyze(plan))

    @contextmanager
    def _type_coercion(self) -> Iterator[None]:
        """Analyze inside this block with the session's type coercion rules (ANSI or not, `spark.sql.ansi.enabled`)."""
        token = T.ANSI_TYPE_COERCION.set(self.conf.ansi_enabled())
        try:
            yield
        finally:
            T.ANSI_TYPE_COERCION.reset(token)

    def _dataframe_from_source(self, source: Any) -> DataFrame:
        """A DataFrame scanning a connector `Source` (used by `spark.read`)."""
        schema = T.schema_from_arrow(source.schema())
        attrs = tuple(AttributeRef(f.name, f.dataType, True, new_expr_id()) for f in schema.fields)
        return self._df(L.SourceScan(source, attrs))

    def _execute_write(self, df: DataFrame, sink: Any) -> None:
        """Run `df` with each result task writing its partition into `sink`; commit once, or abort."""
        if sink.setup() is False:
            return
        qe = df._execution()
        output = df._plan.output
        schema = pa.schema([pa.field(a.name, a.dtype.to_arrow()) for a in output])

        def write(p: int, batches: Iterable[pa.RecordBatch]) -> Any:
            renamed = (pa.RecordBatch.from_arrays([b.column(a.internal_name) for a in output], schema=schema)
                       for b in batches)
            return sink.write_task(p, renamed)

        try:
            results = qe.run(write)
        except BaseException:
            sink.abort()
            raise
        try:
            sink.commit(results)
        except BaseException:
            sink.abort()
            raise


class Catalog:
    """`spark.catalog`: temp views and cache status."""

    def __init__(self, session: Session):
        self._session = session

    def listTables(self) -> list[str]:
        return sorted(self._session._views)

    def dropTempView(self, name: str) -> bool:
        return self._session._views.pop(name.lower(), None) is not None

    def tableExists(self, name: str) -> bool:
        return name.lower() in self._session._views

    def isCached(self, name: str) -> bool:
        return self._session._cache.is_cached(self._session._views[name.lower()])

    def clearCache(self) -> None:
        self._session._cache.clear()


from quiver.engine.api.dataframe import DataFrame  # noqa: E402  (circular: DataFrame needs Session at runtime)
