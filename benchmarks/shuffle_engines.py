"""The shuffle workloads on each engine, and the child process that times one engine.

    python -m benchmarks.shuffle_engines --engine raydata --fact DIR --dim DIR --events F ...

is how ``benchmarks.shuffle`` starts a child; it is not meant to be run by hand. The timing
loop, the result summaries and the events are ``benchmarks.core_engines``'.
"""

from __future__ import annotations

import sys
import time

# The engine under test is imported first, as a program using it would, so Quiver's
# allocator settings (quiver/engine/execution/memory.py) apply before pyarrow loads; that import counts
# towards the engine's start-up.
_started = time.perf_counter()
if __name__ == "__main__" and "--engine" in sys.argv and sys.argv[sys.argv.index("--engine") + 1:][:1] in (
    ["quiver-local"], ["quiver-ray"]
):
    import quiver  # noqa: F401
IMPORTED_S = time.perf_counter() - _started

import argparse
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow as pa

from benchmarks.core_engines import Engine, Paths, run_child
from benchmarks.core_engines import spark_workloads as core_spark_workloads

# name -> (description, columns that identify a row of the result)
WORKLOADS: dict[str, tuple[str, list[str]]] = {
    "groupby_many": ("group the fact table by key: sum(amount), count(*)", ["key"]),
    "join": ("fact ⋈ dim on key (inner; a shuffled join, never a broadcast), then count(*), sum(amount), "
             "sum(weight) over the join output", []),
}
# The input columns each workload reads; its bytes shuffled are their in-memory Arrow size.
READS: dict[str, dict[str, list[str]]] = {
    "groupby_many": {"fact": ["key", "amount"]},
    "join": {"fact": ["key", "amount"], "dim": ["key", "weight"]},
}

ENGINES = ["quiver-ray", "quiver-local", "raydata", "pyspark"]
QUIVER_ENGINES = ["quiver-ray", "quiver-local"]


@dataclass
class Settings:
    """What the parent passes down to every engine."""

    partitions: int = 16
    object_store_gib: float = 8.0
    driver_memory: str = "8g"

    def ray_init_kwargs(self) -> dict[str, Any]:
        return {
            # A new local cluster of this process's own, never one already running here
            # (ray.init() without an address would join one found in /tmp/ray).
            "address": "local",
            "num_cpus": os.cpu_count(),
            "object_store_memory": int(self.object_store_gib * 2**30),
            "include_dashboard": False,
            "configure_logging": True,
            "logging_level": logging.WARNING,
        }


# --- PySpark-shaped (Quiver on either master and PySpark run these very functions) --


def spark_workloads(F) -> dict[str, Callable[[Any, Paths], pa.Table]]:
    # The many-key group-by is the core benchmark's own, on this benchmark's larger tables.
    groupby_many = core_spark_workloads(F)["groupby_many"]

    def join(spark, p: Paths) -> pa.Table:
        fact = spark.read.parquet(p.fact_dir)
        dim = spark.read.parquet(p.dim_dir)
        return (
            fact.join(dim, "key")
            .agg(
                F.count("*").alias("cnt"),
                F.sum("amount").alias("sum_amount"),
                F.sum("weight").alias("sum_weight"),
            )
            .toArrow()
        )

    return {"groupby_many": groupby_many, "join": join}


# --- Ray Data ------------------------------------------------------------------------


def raydata_workloads(ray, partitions: int) -> dict[str, Callable[[Any, Paths], pa.Table]]:
    from ray.data.aggregate import Count, Sum

    def collect(ds) -> pa.Table:
        tables = ray.get(ds.to_arrow_refs())
        return pa.concat_tables(tables) if tables else pa.table({})

    def groupby_many(_, p: Paths) -> pa.Table:
        fact = ray.data.read_parquet(p.fact_dir).select_columns(READS["groupby_many"]["fact"])
        out = fact.groupby("key", num_partitions=partitions).aggregate(
            Sum("amount", alias_name="sum_amount"), Count(alias_name="cnt")
        )
        return collect(out)

    def join(_, p: Paths) -> pa.Table:
        fact = ray.data.read_parquet(p.fact_dir).select_columns(READS["join"]["fact"])
        dim = ray.data.read_parquet(p.dim_dir).select_columns(READS["join"]["dim"])
        joined = fact.join(dim, join_type="inner", num_partitions=partitions, on=("key",))
        row = joined.aggregate(
            Count(alias_name="cnt"),
            Sum("amount", alias_name="sum_amount"),
            Sum("weight", alias_name="sum_weight"),
        )
        return pa.table({
            "cnt": pa.array([row["cnt"]], pa.int64()),
            "sum_amount": pa.array([row["sum_amount"]], pa.float64()),
            "sum_weight": pa.array([row["sum_weight"]], pa.float64()),
        })

    return {"groupby_many": groupby_many, "join": join}


# --- engine start-up -----------------------------------------------------------------


def _timed(parts: dict[str, float], name: str, fn: Callable[[], Any]) -> Any:
    t = time.perf_counter()
    out = fn()
    parts[name] = parts.get(name, 0.0) + time.perf_counter() - t
    return out


def _init_ray(settings: Settings, parts: dict[str, float]):
    def load():
        import ray
        import ray.data

        return ray

    ray = _timed(parts, "import", load)
    _timed(parts, "ray.init", lambda: ray.init(**settings.ray_init_kwargs()))
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.print_on_execution_start = False
    return ray


def start_quiver(master: str, settings: Settings) -> Engine:
    parts = {"import": IMPORTED_S}

    def load():
        import quiver
        from quiver import functions as F

        return quiver, F

    quiver, F = _timed(parts, "import", load)
    ray = _init_ray(settings, parts) if master == "ray" else None
    try:
        builder = (
            quiver.Session.builder.appName("quiver-bench-shuffle").master(master)
            .config("spark.sql.shuffle.partitions", str(settings.partitions))
            .config("spark.sql.autoBroadcastJoinThreshold", "-1")
        )
        spark = _timed(parts, "session", builder.getOrCreate)
    except BaseException:
        if ray is not None:
            ray.shutdown()
        raise
    try:
        from importlib.metadata import version

        ver = getattr(quiver, "__version__", None) or version("quiver")
    except Exception:  # a version string is not worth failing the run over
        ver = "unknown"
    ver = f"quiver {ver}" + (f" (ray {ray.__version__})" if ray is not None else "")

    def close() -> None:
        spark.stop()
        if ray is not None:
            ray.shutdown()

    return Engine(spark, ver, spark_workloads(F), lambda t: t, close, parts)


def start_raydata(settings: Settings) -> Engine:
    parts = {"import": IMPORTED_S}
    ray = _init_ray(settings, parts)
    strategy = ray.data.DataContext.get_current().shuffle_strategy
    return Engine(None, f"ray {ray.__version__} (Ray Data, {getattr(strategy, 'value', strategy)} shuffle)",
                  raydata_workloads(ray, settings.partitions), lambda t: t, ray.shutdown, parts)


def start_pyspark(settings: Settings) -> Engine:
    parts = {"import": IMPORTED_S}

    def load():
        import pyspark
        from pyspark.sql import SparkSession
        from pyspark.sql import functions as F

        return pyspark, SparkSession, F

    pyspark, SparkSession, F = _timed(parts, "import", load)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.appName("quiver-bench-shuffle").master(f"local[{os.cpu_count()}]")
        .config("spark.sql.shuffle.partitions", str(settings.partitions))
        .config("spark.sql.autoBroadcastJoinThreshold", "-1")
        .config("spark.driver.memory", settings.driver_memory)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
    )
    # getOrCreate launches the JVM: PySpark's JVM start-up is this part.
    spark = _timed(parts, "session", builder.getOrCreate)
    spark.sparkContext.setLogLevel("ERROR")
    java = spark.sparkContext._jvm.java.lang.System.getProperty("java.version")
    version = f"pyspark {pyspark.__version__} (Spark {spark.version}, Java {java})"
    return Engine(spark, version, spark_workloads(F), lambda t: t, spark.stop, parts)


def starters(settings: Settings) -> dict[str, Callable[[], Engine]]:
    return {
        "quiver-ray": partial(start_quiver, "ray", settings),
        "quiver-local": partial(start_quiver, f"local[{os.cpu_count()}]", settings),
        "raydata": partial(start_raydata, settings),
        "pyspark": partial(start_pyspark, settings),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="one engine of benchmarks.shuffle (child process)")
    parser.add_argument("--engine", required=True, choices=ENGINES)
    parser.add_argument("--fact", required=True)
    parser.add_argument("--dim", required=True)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--no-warmup", action="store_true")
    parser.add_argument("--slow-s", type=float, default=300.0)
    parser.add_argument("--events", type=Path, required=True)
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--dump-dir", type=Path, required=True)
    parser.add_argument("--partitions", type=int, default=Settings.partitions)
    parser.add_argument("--object-store-gib", type=float, default=Settings.object_store_gib)
    parser.add_argument("--driver-memory", default=Settings.driver_memory)
    args = parser.parse_args(argv)
    settings = Settings(args.partitions, args.object_store_gib, args.driver_memory)
    return run_child(
        args.engine, Paths(args.fact, args.dim), args.repeat, args.slow_s, args.events,
        args.workloads.split(","), args.dump_dir, starters=starters(settings),
        key_columns={w: spec[1] for w, spec in WORKLOADS.items()},
        warmup=not args.no_warmup, imported_s=IMPORTED_S,
    )


if __name__ == "__main__":
    sys.exit(main())
