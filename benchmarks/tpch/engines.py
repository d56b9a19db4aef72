"""Each engine of the TPC-H benchmark started in this process, with one function that runs one query.

A run is the whole of what a user waits for: register the query's tables over their Parquet files (views,
or lazy scans for Polars), execute, and materialize the answer in the engine's client form (an Arrow table,
or a Polars DataFrame). Nothing is cached between runs. Turning an answer into Arrow for the cross-engine
check is kept apart, outside any timer.
"""
from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from benchmarks.tpch.queries import sql_text

ENGINES = ("quiver", "duckdb", "polars", "pyspark", "datafusion", "quiver-ray")
# The engines a run without --engines compares: DataFusion only when asked, as the measure of a fragment engine
# (its decimal division truncates, so Q01's averages differ from the others' in the last digit Spark keeps), and
# Quiver on Ray only when asked, beside `local[2]`.
DEFAULT_ENGINES = ("quiver", "duckdb", "polars", "pyspark")
FORMS = ("sql", "dataframe")
SPARK_MASTER = "local[2]"
SHUFFLE_PARTITIONS = 4
PYSPARK_DRIVER_MEMORY = "4g"
# Under a memory cap (benchmarks.memory): DuckDB's memory_limit, and PySpark's driver heap, as shares of it.
DUCKDB_LIMIT_SHARE = 0.7
PYSPARK_HEAP_SHARE = 0.6

Paths = dict[str, str]


@dataclass
class Engine:
    """A started engine: how to run query n once, how to get its answer as Arrow, how to stop it."""

    name: str
    version: str
    settings: str
    run: Callable[[int], Any]
    to_arrow: Callable[[Any], pa.Table]
    close: Callable[[], None]
    # Bytes the engine has written to spill files since it started, where it says (Quiver); else None.
    spilled_bytes: Callable[[], int | None] = lambda: None


def query_tables(n: int, paths: Paths) -> Paths:
    """The tables query n reads (the table names its SQL text mentions), with their Parquet paths."""
    text = "\n".join(line for line in sql_text(n).splitlines() if not line.lstrip().startswith("--"))
    return {t: p for t, p in paths.items() if re.search(rf"\b{t}\b", text)}


def _same(table: pa.Table) -> pa.Table:
    return table


def _dataframe_queries() -> dict[int, Callable[[Any, dict[str, Any]], Any]]:
    """The DataFrame-API queries, imported on first use so the SQL form never depends on them."""
    try:
        from benchmarks.tpch.dataframe_queries import QUERIES
    except Exception as exc:
        raise RuntimeError(f"benchmarks.tpch.dataframe_queries is not usable: {type(exc).__name__}: {exc}") from exc
    return QUERIES


def _spark_api_runner(session: Any, paths: Paths, form: str) -> Callable[[int], pa.Table]:
    """One run of query n on a session with PySpark's API (Quiver or PySpark), in SQL or DataFrame form."""

    def run_sql(n: int) -> pa.Table:
        for table, path in query_tables(n, paths).items():
            session.read.parquet(path).createOrReplaceTempView(table)
        return session.sql(sql_text(n)).toArrow()

    def run_dataframe(n: int) -> pa.Table:
        queries = _dataframe_queries()
        if n not in queries:
            raise KeyError(f"benchmarks.tpch.dataframe_queries has no Q{n}")
        tables = {table: session.read.parquet(path) for table, path in query_tables(n, paths).items()}
        return queries[n](session, tables).toArrow()

    return run_sql if form == "sql" else run_dataframe


def _quiver_version(quiver: Any) -> str:
    try:
        from importlib.metadata import version

        return getattr(quiver, "__version__", None) or version("quiver")
    except Exception:  # noqa: BLE001 - a version string is not worth failing the run over
        return "unknown"


def _spill_counter(spark: Any) -> Callable[[], int]:
    """Bytes a Quiver session's jobs and block store have spilled since this was called, from a job listener."""
    from quiver.engine.execution.scheduler import JobListener

    class SpillCounter(JobListener):
        total = 0

        def on_job_end(self, job: Any) -> None:
            SpillCounter.total += job.spilled_bytes

    scheduler = spark._context.scheduler
    scheduler.listeners.append(SpillCounter())

    def spilled() -> int:
        store = scheduler.runtime.store_stats() if hasattr(scheduler.runtime, "store_stats") else {}
        return SpillCounter.total + int(store.get("spilled_bytes", 0))

    return spilled


def start_quiver(paths: Paths, form: str, memory_cap: int | None = None) -> Engine:
    """Quiver with the session settings PySpark gets, so the two differ only in engine. Under a memory cap it
    is given no memory setting: it finds the cgroup's limit itself and budgets a fraction of it."""
    import quiver

    spark = (
        quiver.Session.builder.appName("quiver-bench-tpch")
        .master(SPARK_MASTER)
        .config("spark.sql.shuffle.partitions", str(SHUFFLE_PARTITIONS))
        .getOrCreate()
    )
    settings = f"`{SPARK_MASTER}`, shuffle partitions {SHUFFLE_PARTITIONS}, {form}"
    if memory_cap is not None:
        settings += f", memory budget {spark.conf.get('quiver.memory.fraction')} of the cgroup's limit"
    return Engine("quiver", f"quiver {_quiver_version(quiver)}", settings,
                  _spark_api_runner(spark, paths, form), _same, spark.stop, _spill_counter(spark))


def start_quiver_ray(paths: Paths, form: str, memory_cap: int | None = None) -> Engine:
    """Quiver on `master("ray")`: a local Ray cluster of this process's own (one node, as many CPUs as the
    machine has), started here and timed as start-up, with the session settings `local[2]` gets."""
    import logging

    import ray

    import quiver

    ray.init(address="local", num_cpus=os.cpu_count(), include_dashboard=False, configure_logging=True,
             logging_level=logging.WARNING)
    spark = (
        quiver.Session.builder.appName("quiver-bench-tpch-ray")
        .master("ray")
        .config("spark.sql.shuffle.partitions", str(SHUFFLE_PARTITIONS))
        .getOrCreate()
    )
    settings = f"`ray` (local cluster, {os.cpu_count()} CPUs, ray {ray.__version__}), shuffle partitions " \
               f"{SHUFFLE_PARTITIONS}, {form}"

    def close() -> None:
        spark.stop()
        ray.shutdown()

    return Engine("quiver-ray", f"quiver {_quiver_version(quiver)}", settings, _spark_api_runner(spark, paths, form),
                  _same, close, _spill_counter(spark))


def _mib(nbytes: float) -> str:
    return f"{int(nbytes / 2**20)}m"


def start_pyspark(paths: Paths, form: str, memory_cap: int | None = None) -> Engine:
    """Real PySpark in local mode, its JVM started here; Arrow transfer on, UI off. Under a memory cap the
    driver's heap is PYSPARK_HEAP_SHARE of it (the JVM's metaspace, code and direct buffers and the Python
    driver take the rest)."""
    import pyspark
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    driver_memory = PYSPARK_DRIVER_MEMORY if memory_cap is None else _mib(memory_cap * PYSPARK_HEAP_SHARE)
    spark = (
        SparkSession.builder.appName("quiver-bench-tpch")
        .master(SPARK_MASTER)
        .config("spark.sql.shuffle.partitions", str(SHUFFLE_PARTITIONS))
        .config("spark.driver.memory", driver_memory)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    java = spark.sparkContext._jvm.java.lang.System.getProperty("java.version")
    version = f"pyspark {pyspark.__version__} (Spark {spark.version}, Java {java})"
    settings = (f"`{SPARK_MASTER}`, shuffle partitions {SHUFFLE_PARTITIONS}, driver memory "
                f"{driver_memory}, AQE on (default), Arrow on, {form}")
    return Engine("pyspark", version, settings, _spark_api_runner(spark, paths, form), _same, spark.stop)


def start_duckdb(paths: Paths, form: str, memory_cap: int | None = None) -> Engine:
    """DuckDB in memory at its default thread count, views over read_parquet made anew every run. Under a
    memory cap its `memory_limit` is DUCKDB_LIMIT_SHARE of the cap (it spills to its temp directory past it)."""
    import duckdb

    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    threads = con.execute("SELECT current_setting('threads')").fetchone()[0]
    limit = ""
    if memory_cap is not None:
        con.execute(f"SET memory_limit = '{_mib(memory_cap * DUCKDB_LIMIT_SHARE)}B'")
        limit = ", memory_limit " + con.execute("SELECT current_setting('memory_limit')").fetchone()[0]

    def run(n: int) -> pa.Table:
        for table, path in query_tables(n, paths).items():
            con.execute(f"CREATE OR REPLACE VIEW {table} AS SELECT * FROM read_parquet('{path}')")
        return con.sql(sql_text(n)).to_arrow_table()

    return Engine("duckdb", f"duckdb {duckdb.__version__}", f"threads {threads} (default){limit}, SQL", run, _same,
                  con.close)


def start_polars(paths: Paths, form: str, memory_cap: int | None = None) -> Engine:
    """Polars lazy queries over scan_parquet, collected with the default engine and thread pool."""
    import polars as pl

    from benchmarks.tpch import polars_queries

    def run(n: int) -> Any:
        return polars_queries.QUERIES[n](polars_queries.scan(query_tables(n, paths))).collect()

    settings = f"threads {pl.thread_pool_size()} (default), lazy API, `collect()`"
    return Engine("polars", f"polars {pl.__version__}", settings, run, lambda df: df.to_arrow(), lambda: None)


def start_datafusion(paths: Paths, form: str, memory_cap: int | None = None) -> Engine:
    """DataFusion's SessionContext at its default target partitions (one per core), tables registered over
    their Parquet files anew every run, the SQL text collected as Arrow. It is here as the measure of a
    native vectorised engine that Quiver could run whole stage fragments on (issue 20's lever)."""
    import datafusion

    def run(n: int) -> pa.Table:
        ctx = datafusion.SessionContext()
        for table, path in query_tables(n, paths).items():
            ctx.register_parquet(table, path)
        return ctx.sql(sql_text(n)).to_arrow_table()

    settings = f"target partitions {os.cpu_count()} (default, one per core), SQL"
    return Engine("datafusion", f"datafusion {datafusion.__version__}", settings, run, _same, lambda: None)


STARTERS: dict[str, Callable[[Paths, str, int | None], Engine]] = {
    "quiver": start_quiver,
    "duckdb": start_duckdb,
    "polars": start_polars,
    "pyspark": start_pyspark,
    "datafusion": start_datafusion,
    "quiver-ray": start_quiver_ray,
}


def start(name: str, paths: Paths, form: str, memory_cap: int | None = None) -> Engine:
    """Start engine `name` over the tables at `paths`; `form` (sql or dataframe) matters to Quiver and PySpark;
    `memory_cap`: the bytes the kernel lets this process tree use (benchmarks.memory), which sizes the engine."""
    return STARTERS[name](paths, form, memory_cap)
