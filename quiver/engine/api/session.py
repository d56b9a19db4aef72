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
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from quiver.engine.analysis import builder
from quiver.engine.analysis.analyzer import analyze
from quiver.engine.analysis.catalog import SessionCatalog, analyzing_with
from quiver.engine.analysis.time_zones import analyzing_in_zone
from quiver.engine.api.dataframe import DataFrame
from quiver.engine.api.local_data import declared_types, to_arrow_table
from quiver.engine.api.readwriter import DataFrameReader
from quiver.engine.api.udf import UDFRegistration
from quiver.engine.api.unsupported import PySparkMembers
from quiver.engine.core import plan as L
from quiver.engine.core import types as T
from quiver.engine.core.conf import RuntimeConfig, canonical_key
from quiver.engine.core.errors import QuiverError
from quiver.engine.core.expressions import AttributeRef, new_expr_id
from quiver.engine.core.storage_level import StorageLevel
from quiver.engine.execution.jobs import JobGroups, check_tag

if TYPE_CHECKING:
    from quiver.engine.ui.job_report import ReportedJob
    from quiver.planners.physical.nodes import PhysicalPlan
    from quiver.planners.placement import Candidate, StagePlacement

_lock = threading.RLock()


class _Builder:
    """`Session.builder`: collects master, app name and conf, then returns the session.

    >>> quiver.Session.builder.getOrCreate() is spark
    True
    """

    def __init__(self) -> None:
        self._options: dict[str, Any] = {}

    def master(self, master: str) -> _Builder:
        """The master the session runs on: `local`, `local[N]`, `local[*]`, `ray`, `ray:ADDRESS` or `ray://host:port`
        (see the README's Masters). Only a new session takes it: `getOrCreate()` on a running one warns and keeps its
        master.

        >>> quiver.Session.builder.master("local[2]").getOrCreate().master
        'local[2]'
        """
        self._options["quiver.master"] = master
        return self

    def appName(self, name: str) -> _Builder:
        """The application's name (`spark.app.name`).

        >>> quiver.Session.builder.appName("docs").getOrCreate().conf.get("spark.app.name")
        'docs'
        """
        self._options["quiver.app.name"] = name
        return self

    def config(self, key: str | None = None, value: Any = None, conf: Any = None, map: dict | None = None) -> _Builder:
        """Set conf keys: one `key` and `value`, a dict `map`, or a `conf` (a SparkConf-like object with `getAll()`
        or a dict). On a running session `getOrCreate()` sets them there.

        >>> quiver.Session.builder.config("spark.sql.shuffle.partitions", 4).getOrCreate().conf.get(
        ...     "spark.sql.shuffle.partitions")
        '4'
        >>> spark.conf.unset("spark.sql.shuffle.partitions")
        """
        if key is not None:
            self._options[key] = value
        for k, v in (map or {}).items():
            self._options[k] = v
        if conf is not None:
            for k, v in conf.getAll() if hasattr(conf, "getAll") else dict(conf).items():
                self._options[k] = v
        return self

    def enableHiveSupport(self) -> _Builder:
        """Accepted for PySpark programs and ignored: Quiver has no Hive metastore (views live in the session).

        >>> quiver.Session.builder.enableHiveSupport().getOrCreate() is spark
        True
        """
        return self

    def getOrCreate(self) -> Session:
        """The active session, with this builder's conf set on it, or a new one (`create` is the same). As in PySpark,
        an active session keeps its master: asking for another warns and returns it (`stop()` it first to change).

        >>> quiver.Session.builder.getOrCreate() is spark
        True
        """
        with _lock:
            active = Session._active
            if active is not None and not active._stopped:
                for k, v in self._options.items():
                    if canonical_key(k) != "quiver.master":
                        active.conf.set(k, v)
                    elif str(v) != active.master:
                        warnings.warn(f"the active session runs on master {active.master!r}, so getOrCreate() "
                                      f"returns it and ignores master {str(v)!r}; call spark.stop() first to "
                                      "start a session on another master", UserWarning, stacklevel=2)
                return active
            session = Session(self._options)
            Session._active = session
            return session

    create = getOrCreate


class _BuilderDescriptor:
    def __get__(self, obj: Any, owner: type) -> _Builder:
        return _Builder()


class SparkContextShim(PySparkMembers):
    """The few `spark.sparkContext` members PySpark programs touch on a local session.

    >>> spark.sparkContext.master
    'local[2]'
    """

    _pyspark_name = "SparkContext"

    def __init__(self, session: Session):
        self._session = session

    def setLogLevel(self, level: str) -> None:
        """The level of Quiver's loggers ("DEBUG", "INFO", "WARN", "ERROR", ...); unknown names mean WARNING.

        >>> spark.sparkContext.setLogLevel("WARN")
        """

        logging.getLogger("quiver").setLevel(getattr(logging, level.upper(), logging.WARNING))

    @property
    def defaultParallelism(self) -> int:
        """How many tasks run at once: the master's thread count, or the Ray cluster's CPUs.

        >>> spark.sparkContext.defaultParallelism
        2
        """
        return self._session._context.parallelism

    @property
    def master(self) -> str:
        """The session's master.

        >>> spark.sparkContext.master
        'local[2]'
        """
        return self._session.master

    @property
    def appName(self) -> str:
        """The application's name (`spark.app.name`).

        >>> spark.sparkContext.appName == spark.conf.get("spark.app.name")
        True
        """
        return self._session.app_name

    def stop(self) -> None:
        """Stop the session, as `spark.stop()`.

        >>> spark.sparkContext.stop  # doctest: +ELLIPSIS
        <bound method SparkContextShim.stop of ...>
        """
        self._session.stop()

    # ---------------------------------------------------------- job groups and cancellation

    @property
    def _jobs(self) -> JobGroups:
        return self._session._context.scheduler.jobs

    def setJobGroup(self, groupId: str, description: str, interruptOnCancel: bool = False) -> None:
        """Give every job this thread starts the group `groupId` (until set again or cleared), so
        `cancelJobGroup(groupId)` can cancel them. Cancelling always stops a job's Python UDFs (their worker
        processes are killed), whatever `interruptOnCancel` says.

        >>> sc = spark.sparkContext
        >>> sc.setJobGroup("nightly", "the nightly load"); sc.getLocalProperty("spark.jobGroup.id")
        'nightly'
        >>> sc.clearJobGroup()
        """
        self._jobs.set_group(groupId, description, interruptOnCancel)

    def clearJobGroup(self) -> None:
        """Jobs this thread starts from now on have no job group.

        >>> sc = spark.sparkContext
        >>> sc.setJobGroup("g", "a group"); sc.clearJobGroup(); sc.getLocalProperty("spark.jobGroup.id") is None
        True
        """
        self._jobs.set_group(None, None)

    def setJobDescription(self, value: str | None) -> None:
        """The description of the jobs this thread starts from now on (None clears it).

        >>> sc = spark.sparkContext
        >>> sc.setJobDescription("load"); sc.getLocalProperty("spark.job.description")
        'load'
        >>> sc.setJobDescription(None)
        """
        self._jobs.local.description = value

    def setInterruptOnCancel(self, interruptOnCancel: bool) -> None:
        """Recorded for `getLocalProperty("spark.job.interruptOnCancel")`; Quiver always stops a cancelled job's Python
        workers.

        >>> sc = spark.sparkContext
        >>> sc.setInterruptOnCancel(True); sc.getLocalProperty("spark.job.interruptOnCancel")
        'true'
        >>> sc.setInterruptOnCancel(False)
        """
        self._jobs.local.interrupt_on_cancel = bool(interruptOnCancel)

    def setLocalProperty(self, key: str, value: str | None) -> None:
        """This thread's job properties by Spark's keys: spark.jobGroup.id, spark.job.description,
        spark.job.interruptOnCancel (other keys are ignored).

        >>> sc = spark.sparkContext
        >>> sc.setLocalProperty("spark.job.description", "x"); sc.getLocalProperty("spark.job.description")
        'x'
        >>> sc.setLocalProperty("spark.job.description", None)
        """
        local = self._jobs.local
        if key == "spark.jobGroup.id":
            local.group = value
        elif key == "spark.job.description":
            local.description = value
        elif key == "spark.job.interruptOnCancel":
            local.interrupt_on_cancel = str(value).lower() == "true"

    def getLocalProperty(self, key: str) -> str | None:
        """This thread's job property `key` (spark.jobGroup.id, spark.job.description, spark.job.interruptOnCancel), or
        None.

        >>> spark.sparkContext.getLocalProperty("spark.jobGroup.id") is None
        True
        """
        local = self._jobs.local
        return {"spark.jobGroup.id": local.group, "spark.job.description": local.description,
                "spark.job.interruptOnCancel": str(local.interrupt_on_cancel).lower()}.get(key)

    def cancelJobGroup(self, groupId: str) -> None:
        """Cancel the running jobs of group `groupId`: each raises `JobCancelledError` in its thread.

        >>> spark.sparkContext.cancelJobGroup("no-such-group")
        """
        self._jobs.cancel_group(groupId)

    def cancelAllJobs(self) -> None:
        """Cancel every running job of this session.

        >>> spark.sparkContext.cancelAllJobs()
        """
        self._jobs.cancel_all()

    def addJobTag(self, tag: str) -> None:
        """Tag every job this thread starts with `tag`, for `cancelJobsWithTag`.

        >>> sc = spark.sparkContext
        >>> sc.addJobTag("etl"); sc.getJobTags()
        {'etl'}
        >>> sc.removeJobTag("etl")
        """
        self._jobs.local.job_tags.add(check_tag(tag, "Spark job tag"))

    def removeJobTag(self, tag: str) -> None:
        """Stop tagging this thread's jobs with `tag`.

        >>> sc = spark.sparkContext
        >>> sc.addJobTag("etl"); sc.removeJobTag("etl"); sc.getJobTags()
        set()
        """
        self._jobs.local.job_tags.discard(check_tag(tag, "Spark job tag"))

    def getJobTags(self) -> set[str]:
        """The tags this thread's jobs get.

        >>> spark.sparkContext.getJobTags()
        set()
        """
        return set(self._jobs.local.job_tags)

    def clearJobTags(self) -> None:
        """Remove every job tag of this thread.

        >>> sc = spark.sparkContext
        >>> sc.addJobTag("a"); sc.clearJobTags(); sc.getJobTags()
        set()
        """
        self._jobs.local.job_tags.clear()

    def cancelJobsWithTag(self, tag: str) -> None:
        """Cancel the running jobs tagged `tag` by `addJobTag`.

        >>> spark.sparkContext.cancelJobsWithTag("etl")
        """
        self._jobs.cancel_job_tag(check_tag(tag, "Spark job tag"))


# What `quiver-submit` was given (--master, --conf): the defaults of the session the application
# builds; what the application sets itself wins, as with spark-submit.
_submit_master: str | None = None
_submit_conf: dict[str, Any] = {}


def set_submit_defaults(master: str | None, conf: dict[str, Any]) -> None:
    """Make `master` and `conf` the defaults of sessions created from now on in this process."""
    global _submit_master, _submit_conf
    _submit_master, _submit_conf = master, dict(conf)


class Session(PySparkMembers):
    """A Quiver session; use `Session.builder...getOrCreate()`.

    >>> spark.range(3).count()
    3
    """

    builder = _BuilderDescriptor()
    _active: Session | None = None

    _pyspark_name = "SparkSession"

    def __init__(self, options: dict[str, Any] | None = None):
        options = {**_submit_conf, **dict(options or {})}
        self.conf = RuntimeConfig(options)
        default_master = _submit_master or os.environ.get("QUIVER_MASTER", "local[*]")
        self.master = str(self.conf.get("quiver.master", default_master))
        # Read back as Spark answers it: spark.conf.get("spark.master") is the master the session runs on.
        self.conf.set("quiver.master", self.master)
        # The engine's layers load with the first session, not with `import quiver`.
        from quiver.engine.execution.context import ExecutionContext, open_runtime
        from quiver.engine.execution.memory import tune_allocator
        from quiver.engine.ui.job_report import ReportedJob
        from quiver.engine.ui.progress import ProgressListener

        if self.conf.flag("quiver.memory.tuneAllocator"):
            tune_allocator()
        self._context = ExecutionContext(self.conf, open_runtime(self.master, self.conf), job_record=ReportedJob)
        self._context.scheduler.listeners.append(ProgressListener(self.conf))
        self._catalog = SessionCatalog(self._context.cache)
        self._stopped = False

    @property
    def app_name(self) -> str:
        """The application's name: `spark.app.name`, as the builder or `spark.conf` last set it.

        >>> spark.app_name == spark.conf.get("spark.app.name")
        True
        """
        return str(self.conf.get("quiver.app.name"))

    # ---------------------------------------------------------- devices

    @property
    def last_placements(self) -> dict[int, StagePlacement]:
        """The placement of each stage the last jobs placed off the CPU, by stage id (empty on a CPU-only session).

        >>> spark.range(3).count(); all(p.stage_id == s for s, p in spark.last_placements.items())
        3
        True
        """
        return self._context.last_placements

    def placement_candidates(self) -> list[Candidate]:
        """The devices `quiver.devices` names (the CPU first), with their executors and cost profiles.

        >>> [c.device.kind for c in spark.placement_candidates()]
        ['cpu']
        """
        return self._context.placement_candidates()

    def place(self, stage_id: int, root: PhysicalPlan,
              actual_sizes: dict[int, tuple[int, int]] | None = None) -> StagePlacement:
        """The device of every operator of one stage under `quiver.placement`, as `explain()` shows it; a tool for
        studying placement.

        >>> spark.place  # doctest: +ELLIPSIS
        <bound method Session.place of ...>
        """
        return self._context.place(stage_id, root, actual_sizes)

    # ---------------------------------------------------------- life cycle

    @classmethod
    def getActiveSession(cls) -> Session | None:
        """The running session of this process, or None.

        >>> quiver.Session.getActiveSession() is spark
        True
        """
        return cls._active if cls._active is not None and not cls._active._stopped else None

    @property
    def udf(self) -> UDFRegistration:
        """`spark.udf`: register Python functions for SQL.

        >>> _ = spark.udf.register("plus_one", lambda x: x + 1, "int")
        >>> spark.sql("SELECT plus_one(41) AS x").collect()
        [Row(x=42)]
        """
        return UDFRegistration(self._catalog)

    @property
    def sparkContext(self) -> SparkContextShim:
        """The few SparkContext members PySpark programs use on a local session: log level, parallelism, job groups,
        tags and cancellation. Quiver has no SparkContext (and no RDDs).

        >>> spark.sparkContext.master == spark.master
        True
        """
        return SparkContextShim(self)

    @property
    def version(self) -> str:
        """The release of Quiver this session runs (`quiver.__version__`), not a Spark version.

        >>> spark.version == quiver.__version__
        True
        """
        from quiver.engine.core.version import __version__

        return __version__

    def lastJob(self) -> ReportedJob:
        """The last job this session ran: its stages, task attempts (worker, device, times, rows, bytes) and bytes
        shuffled; `.report("job.html")` writes its timeline as a self-contained HTML page.

        >>> _ = df.count(); len(spark.lastJob().stages) >= 1
        True
        """
        job = self._context.scheduler.last_job
        if job is None:
            raise QuiverError("no job has run in this session yet; run an action such as collect() or count() first")
        from quiver.engine.ui.job_report import ReportedJob

        assert isinstance(job, ReportedJob), "this session's scheduler records its jobs as ReportedJob"
        return job

    def newSession(self) -> Session:
        """This session: Quiver runs one session per process, so the new session shares the conf, views and cache
        (Spark's has its own conf and views).

        >>> spark.newSession() is spark
        True
        """
        return self

    # ---------------------------------------------------------- tags and interrupting

    def addTag(self, tag: str) -> None:
        """Tag every operation this thread starts in this session with `tag`, for `interruptTag`.

        >>> spark.addTag("nightly"); spark.getTags()
        {'nightly'}
        """
        self._context.scheduler.jobs.local.tags.add(check_tag(tag))

    def removeTag(self, tag: str) -> None:
        """Stop tagging this thread's operations with `tag` (nothing if it was not added).

        >>> spark.addTag("etl")
        >>> spark.removeTag("etl")
        >>> "etl" in spark.getTags()
        False
        """
        self._context.scheduler.jobs.local.tags.discard(check_tag(tag))

    def getTags(self) -> set[str]:
        """The tags this thread's operations get.

        >>> spark.clearTags()
        >>> spark.addTag("nightly")
        >>> spark.getTags()
        {'nightly'}
        >>> spark.clearTags()
        """
        return set(self._context.scheduler.jobs.local.tags)

    def clearTags(self) -> None:
        """Clear this thread's operation tags.

        >>> spark.addTag("a")
        >>> spark.clearTags()
        >>> spark.getTags()
        set()
        """
        self._context.scheduler.jobs.local.tags.clear()

    def interruptTag(self, tag: str) -> list[str]:
        """Cancel the running operations tagged `tag`; their ids. Each raises `JobCancelledError` in the
        thread that started it; a Python UDF they were running is stopped (its worker process killed).

        >>> spark.interruptTag("nothing-runs-under-this-tag")
        []
        """
        return self._context.scheduler.jobs.cancel_tag(check_tag(tag))

    def interruptAll(self) -> list[str]:
        """Cancel every running operation of this session; their ids.

        >>> spark.interruptAll()
        []
        """
        return self._context.scheduler.jobs.cancel_all()

    def interruptOperation(self, op_id: str) -> list[str]:
        """Cancel the running operation `op_id` (a job id, as `interruptAll` returns them); a list of it,
        or empty if it is not running.

        >>> spark.interruptOperation("no-such-job")
        []
        """
        try:
            job_id = int(op_id)
        except ValueError:
            return []
        return self._context.scheduler.jobs.cancel_job(job_id, f"by interruptOperation({op_id})")

    def stop(self) -> None:
        """Stop the session: its runtime, workers and cached blocks go, and the next `getOrCreate()` starts a new
        one. Stopping twice does nothing. A `with` block stops the session at its end.

        >>> spark.stop  # doctest: +ELLIPSIS
        <bound method Session.stop of ...>
        """
        with _lock:
            if self._stopped:
                return
            self._stopped = True
            self._context.shutdown()
            if Session._active is self:
                Session._active = None

    def __enter__(self) -> Session:
        """`with Session.builder.getOrCreate() as spark:` stops the session when the block ends.

        >>> spark.__enter__() is spark
        True
        """
        return self

    def __exit__(self, *exc: Any) -> None:
        """Stop the session (the end of a `with` block).

        >>> spark.__exit__  # doctest: +ELLIPSIS
        <bound method Session.__exit__ of ...>
        """
        self.stop()

    # ---------------------------------------------------------- data

    def createDataFrame(self, data: Any, schema: Any = None, samplingRatio: float | None = None,
                        verifySchema: bool = True) -> DataFrame:
        """A DataFrame from rows (tuples, dicts, Rows), a pandas DataFrame, or tabular data of any library that exports
        the Arrow PyCapsule interface (a pyarrow Table or RecordBatchReader, a Polars DataFrame, a DuckDB relation),
        its columns taking the Spark types of their Arrow types. `schema` is a StructType, a DDL string
        (`"age int, name string"`) or a list of column names (types then inferred). `samplingRatio` and
        `verifySchema` are accepted and ignored.

        >>> spark.createDataFrame([(1, "a")], "id int, s string").dtypes
        [('id', 'int'), ('s', 'string')]
        >>> spark.createDataFrame([{"a": 1}, {"a": 2}]).collect()
        [Row(a=1), Row(a=2)]
        >>> import polars as pl
        >>> spark.createDataFrame(pl.DataFrame({"a": [1, 2]})).collect()
        [Row(a=1), Row(a=2)]
        """
        table = to_arrow_table(data, schema, self.conf.session_time_zone(), self.conf.python_time_zone())
        types = declared_types(schema, table.num_columns) or [T.from_arrow(f.type) for f in table.schema]
        attrs = tuple(
            AttributeRef(f.name, dtype, True, new_expr_id()) for f, dtype in zip(table.schema, types)
        )
        return self._df(L.LocalRelation(table, attrs))

    def range(self, start: int, end: int | None = None, step: int = 1, numPartitions: int | None = None) -> DataFrame:
        """A single bigint column `id` from `start` to `end` (exclusive) by `step`, in `numPartitions` partitions; with
        one argument, from 0 to it.

        >>> spark.range(3).collect()
        [Row(id=0), Row(id=1), Row(id=2)]
        >>> spark.range(1, 7, 2).collect()
        [Row(id=1), Row(id=3), Row(id=5)]
        """
        return self._df(builder.range_relation(start, end, step, numPartitions))

    @property
    def read(self) -> DataFrameReader:
        """`spark.read`: the `DataFrameReader` that loads files and database tables as a DataFrame.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "people")
        >>> df.write.parquet(path); spark.read.parquet(path).count()
        2
        """
        return DataFrameReader(self)

    def table(self, tableName: str) -> DataFrame:
        """The temp view `tableName` as a DataFrame.

        >>> spark.range(3).createOrReplaceTempView("t"); spark.table("t").count()
        3
        """
        return self._df(L.SubqueryAlias(self._catalog.view(tableName), tableName))

    def sql(self, sqlQuery: str, args: dict | None = None, **kwargs: Any) -> DataFrame:
        """The result of one Spark SQL statement over the session's temp views (a query is lazy, as a DataFrame; DDL
        such as CREATE TEMP VIEW or CACHE TABLE runs at once). `args` (named parameters) and keyword arguments are
        accepted but not substituted: Quiver does not support parameterized SQL yet (a `:name` marker is a parse
        error).

        >>> spark.sql("SELECT 1 AS one").collect()
        [Row(one=1)]
        """
        with self._analysis():
            from quiver.engine.sql.statements import sql_to_plan  # sqlglot, imported at the first query text

            plan = sql_to_plan(self._catalog, sqlQuery)
        return self._df(plan)

    @property
    def catalog(self) -> Catalog:
        """`spark.catalog`: the session's temp views and their caching.

        >>> df.createOrReplaceTempView("people"); "people" in spark.catalog.listTables()
        True
        """
        return Catalog(self._catalog)

    def _register_view(self, name: str, plan: L.LogicalPlan, replace: bool) -> None:
        self._catalog.register_view(name, plan, replace)

    def _df(self, plan: L.LogicalPlan) -> DataFrame:
        with self._analysis():
            return DataFrame(self, dataclasses.replace(analyze(plan), plan_id=L.new_plan_id()))

    @contextmanager
    def _analysis(self) -> Iterator[None]:
        """Analyze inside this block with the session's type coercion rules (ANSI or not,
        `spark.sql.ansi.enabled`), its registered functions and its time zone."""
        token = T.ANSI_TYPE_COERCION.set(self.conf.ansi_enabled())
        try:
            with analyzing_with(self._catalog), analyzing_in_zone(self.conf.session_time_zone()):
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
        output = df._plan.output
        schema = pa.schema([pa.field(a.name, a.dtype.to_arrow()) for a in output])

        def write(p: int, batches: Iterable[pa.RecordBatch]) -> Any:
            renamed = (pa.RecordBatch.from_arrays([b.column(a.internal_name) for a in output], schema=schema)
                       for b in batches)
            return sink.write_task(p, renamed)

        try:
            sink.commit(df._execution().run(write))
        except BaseException:
            sink.abort()
            raise


class Catalog(PySparkMembers):
    """`spark.catalog`: the session's temp views and their caching.

    >>> df.createOrReplaceTempView("people")
    >>> spark.catalog.tableExists("people")
    True
    >>> spark.catalog.dropTempView("people")
    True
    """

    _pyspark_name = "Catalog"

    def __init__(self, catalog: SessionCatalog):
        self._catalog = catalog

    def listTables(self) -> list[str]:
        """The temp views' names. Unlike Spark's, a list of names rather than of `Table` objects.

        >>> spark.range(1).createOrReplaceTempView("one"); "one" in spark.catalog.listTables()
        True
        """
        return self._catalog.view_names()

    def dropTempView(self, viewName: str) -> bool:
        """Drop (and uncache) the temp view `viewName`; whether there was one.

        >>> spark.range(1).createOrReplaceTempView("gone"); spark.catalog.dropTempView("gone")
        True
        """
        return self._catalog.drop_view(viewName)

    def tableExists(self, tableName: str) -> bool:
        """Whether a temp view `tableName` exists (`dbName` is not taken: Quiver has no databases).

        >>> spark.range(1).createOrReplaceTempView("one"); spark.catalog.tableExists("one")
        True
        """
        return self._catalog.has_view(tableName)

    def isCached(self, tableName: str) -> bool:
        """Whether the temp view `tableName` is cached.

        >>> spark.range(1).createOrReplaceTempView("one"); spark.catalog.isCached("one")
        False
        """
        return self._catalog.is_view_cached(tableName)

    def cacheTable(self, tableName: str, storageLevel: StorageLevel | None = None) -> None:
        """Cache the temp view `tableName` (filled by the first job that reads it) at `storageLevel` (default
        MEMORY_AND_DISK), as PySpark's.

        >>> spark.range(1).createOrReplaceTempView("one"); spark.catalog.cacheTable("one")
        >>> spark.catalog.isCached("one")
        True
        >>> spark.catalog.uncacheTable("one")
        """
        self._catalog.cache_view(tableName, (storageLevel or StorageLevel.MEMORY_AND_DISK).name, eager=False)

    def uncacheTable(self, tableName: str) -> None:
        """Stop caching the temp view `tableName`.

        >>> spark.range(1).createOrReplaceTempView("one"); spark.catalog.cacheTable("one")
        >>> spark.catalog.uncacheTable("one"); spark.catalog.isCached("one")
        False
        """
        self._catalog.uncache_view(tableName)

    def clearCache(self) -> None:
        """Uncache every cached DataFrame and view of the session.

        >>> spark.catalog.clearCache(); df.is_cached
        False
        """
        self._catalog.cache.clear()
