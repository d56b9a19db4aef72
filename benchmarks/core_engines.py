"""The core workloads on each engine, and the child process that times one engine.

Every workload reads Parquet on every run and materializes its whole result in the
engine's client form (an Arrow table for Quiver, PySpark and DuckDB, a polars or pandas
DataFrame); turning that into Arrow for the cross-engine check happens outside the timer.

    python -m benchmarks.core_engines --engine duckdb --data DIR --repeat 3 --events F

is how ``benchmarks.core`` starts a child; it is not meant to be run by hand.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

# pyarrow is the harness's own dependency (result checks), so it is loaded before any
# engine's start-up is timed.
import pyarrow as pa

from benchmarks import proctree

AMOUNT_MIN = 500.0
FILTER_CATEGORIES = ["cat_00", "cat_07", "cat_13", "cat_21", "cat_42"]
TOP_N = 100

# name -> (description, columns that identify a row of the result)
WORKLOADS: dict[str, tuple[str, list[str]]] = {
    "filter_project": ("filter amount > 500 and category in 5 values; count, sums", []),
    "groupby_few": ("group by category (50 keys): sum, avg, count", ["category"]),
    "groupby_many": ("group by key (~1M keys): sum, count", ["key"]),
    "join_groupby": ("fact ⋈ dim on key, group by region: sum", ["region"]),
    "sort_top100": ("order by amount desc, id asc; limit 100", ["id"]),
}

ENGINES = ["quiver", "pandas", "duckdb", "polars", "pyspark"]


@dataclass
class Paths:
    """Where the tables are, in the forms the engines want."""

    fact_dir: str
    dim_dir: str

    @property
    def fact_glob(self) -> str:
        return f"{self.fact_dir}/*.parquet"

    @property
    def dim_glob(self) -> str:
        return f"{self.dim_dir}/*.parquet"


# --- PySpark-shaped (Quiver and PySpark run these very functions) -------------------


def spark_workloads(F) -> dict[str, Callable[[Any, Paths], pa.Table]]:
    """The workloads as PySpark DataFrame code, for any engine with PySpark's API."""

    def filter_project(spark, p: Paths) -> pa.Table:
        fact = spark.read.parquet(p.fact_dir)
        return (
            fact.filter((F.col("amount") > AMOUNT_MIN) & F.col("category").isin(FILTER_CATEGORIES))
            .select("amount", "qty")
            .agg(
                F.count("*").alias("cnt"),
                F.sum("amount").alias("sum_amount"),
                F.sum("qty").alias("sum_qty"),
            )
            .toArrow()
        )

    def groupby_few(spark, p: Paths) -> pa.Table:
        fact = spark.read.parquet(p.fact_dir)
        return (
            fact.groupBy("category")
            .agg(
                F.sum("amount").alias("sum_amount"),
                F.avg("amount").alias("avg_amount"),
                F.count("*").alias("cnt"),
            )
            .toArrow()
        )

    def groupby_many(spark, p: Paths) -> pa.Table:
        fact = spark.read.parquet(p.fact_dir)
        return (
            fact.groupBy("key")
            .agg(F.sum("amount").alias("sum_amount"), F.count("*").alias("cnt"))
            .toArrow()
        )

    def join_groupby(spark, p: Paths) -> pa.Table:
        fact = spark.read.parquet(p.fact_dir)
        dim = spark.read.parquet(p.dim_dir)
        return (
            fact.join(dim, "key")
            .groupBy("region")
            .agg(F.sum("amount").alias("sum_amount"))
            .toArrow()
        )

    def sort_top100(spark, p: Paths) -> pa.Table:
        fact = spark.read.parquet(p.fact_dir)
        return (
            fact.select("id", "key", "category", "amount")
            .orderBy(F.col("amount").desc(), F.col("id").asc())
            .limit(TOP_N)
            .toArrow()
        )

    return {
        "filter_project": filter_project,
        "groupby_few": groupby_few,
        "groupby_many": groupby_many,
        "join_groupby": join_groupby,
        "sort_top100": sort_top100,
    }


# --- DuckDB (SQL) --------------------------------------------------------------------

DUCKDB_SQL = {
    "filter_project": """
        SELECT count(*) AS cnt, sum(amount) AS sum_amount, sum(qty) AS sum_qty
        FROM read_parquet('{fact}')
        WHERE amount > {amount_min} AND category IN ({categories})""",
    "groupby_few": """
        SELECT category, sum(amount) AS sum_amount, avg(amount) AS avg_amount, count(*) AS cnt
        FROM read_parquet('{fact}')
        GROUP BY category""",
    "groupby_many": """
        SELECT key, sum(amount) AS sum_amount, count(*) AS cnt
        FROM read_parquet('{fact}')
        GROUP BY key""",
    "join_groupby": """
        SELECT d.region, sum(f.amount) AS sum_amount
        FROM read_parquet('{fact}') AS f JOIN read_parquet('{dim}') AS d ON f.key = d.key
        GROUP BY d.region""",
    "sort_top100": """
        SELECT id, key, category, amount
        FROM read_parquet('{fact}')
        ORDER BY amount DESC, id ASC
        LIMIT {top_n}""",
}


def duckdb_workloads() -> dict[str, Callable[[Any, Paths], pa.Table]]:
    def make(sql: str):
        def run(con, p: Paths) -> pa.Table:
            query = sql.format(
                fact=p.fact_glob,
                dim=p.dim_glob,
                amount_min=AMOUNT_MIN,
                categories=", ".join(f"'{c}'" for c in FILTER_CATEGORIES),
                top_n=TOP_N,
            )
            return con.sql(query).to_arrow_table()

        return run

    return {name: make(sql) for name, sql in DUCKDB_SQL.items()}


# --- polars (lazy) -------------------------------------------------------------------


def polars_workloads(pl) -> dict[str, Callable[[Any, Paths], Any]]:
    def filter_project(_, p: Paths):
        return (
            pl.scan_parquet(p.fact_glob)
            .filter((pl.col("amount") > AMOUNT_MIN) & pl.col("category").is_in(FILTER_CATEGORIES))
            .select(
                pl.len().alias("cnt"),
                pl.col("amount").sum().alias("sum_amount"),
                pl.col("qty").sum().alias("sum_qty"),
            )
            .collect()
        )

    def groupby_few(_, p: Paths):
        return (
            pl.scan_parquet(p.fact_glob)
            .group_by("category")
            .agg(
                pl.col("amount").sum().alias("sum_amount"),
                pl.col("amount").mean().alias("avg_amount"),
                pl.len().alias("cnt"),
            )
            .collect()
        )

    def groupby_many(_, p: Paths):
        return (
            pl.scan_parquet(p.fact_glob)
            .group_by("key")
            .agg(pl.col("amount").sum().alias("sum_amount"), pl.len().alias("cnt"))
            .collect()
        )

    def join_groupby(_, p: Paths):
        fact = pl.scan_parquet(p.fact_glob)
        dim = pl.scan_parquet(p.dim_glob)
        return (
            fact.join(dim, on="key")
            .group_by("region")
            .agg(pl.col("amount").sum().alias("sum_amount"))
            .collect()
        )

    def sort_top100(_, p: Paths):
        return (
            pl.scan_parquet(p.fact_glob)
            .select("id", "key", "category", "amount")
            .sort(["amount", "id"], descending=[True, False])
            .head(TOP_N)
            .collect()
        )

    return {
        "filter_project": filter_project,
        "groupby_few": groupby_few,
        "groupby_many": groupby_many,
        "join_groupby": join_groupby,
        "sort_top100": sort_top100,
    }


# --- pandas (eager; reads only the columns it needs) ---------------------------------


def pandas_workloads(pd) -> dict[str, Callable[[Any, Paths], Any]]:
    def filter_project(_, p: Paths):
        df = pd.read_parquet(p.fact_dir, columns=["category", "amount", "qty"])
        hit = df[(df["amount"] > AMOUNT_MIN) & df["category"].isin(FILTER_CATEGORIES)]
        return pd.DataFrame(
            {"cnt": [len(hit)], "sum_amount": [hit["amount"].sum()], "sum_qty": [hit["qty"].sum()]}
        )

    def groupby_few(_, p: Paths):
        df = pd.read_parquet(p.fact_dir, columns=["category", "amount"])
        return (
            df.groupby("category")
            .agg(sum_amount=("amount", "sum"), avg_amount=("amount", "mean"), cnt=("amount", "size"))
            .reset_index()
        )

    def groupby_many(_, p: Paths):
        df = pd.read_parquet(p.fact_dir, columns=["key", "amount"])
        return (
            df.groupby("key")
            .agg(sum_amount=("amount", "sum"), cnt=("amount", "size"))
            .reset_index()
        )

    def join_groupby(_, p: Paths):
        fact = pd.read_parquet(p.fact_dir, columns=["key", "amount"])
        dim = pd.read_parquet(p.dim_dir, columns=["key", "region"])
        return (
            fact.merge(dim, on="key")
            .groupby("region")
            .agg(sum_amount=("amount", "sum"))
            .reset_index()
        )

    def sort_top100(_, p: Paths):
        df = pd.read_parquet(p.fact_dir, columns=["id", "key", "category", "amount"])
        # keep="all" keeps ties at the cut, so the id tie-break below sees them all.
        return (
            df.nlargest(TOP_N, "amount", keep="all")
            .sort_values(["amount", "id"], ascending=[False, True])
            .head(TOP_N)
        )

    return {
        "filter_project": filter_project,
        "groupby_few": groupby_few,
        "groupby_many": groupby_many,
        "join_groupby": join_groupby,
        "sort_top100": sort_top100,
    }


# --- engine start-up -----------------------------------------------------------------


@dataclass
class Engine:
    """A started engine: its client handle, workloads, and how to get Arrow back."""

    handle: Any
    version: str
    workloads: dict[str, Callable[[Any, Paths], Any]]
    to_arrow: Callable[[Any], pa.Table]
    close: Callable[[], None]
    # Seconds per step of start-up (say import, ray.init, session), when a report splits it.
    startup_parts: dict[str, float] = field(default_factory=dict)


def _spark_conf(builder, shuffle_partitions: int):
    return builder.master("local[2]").config(
        "spark.sql.shuffle.partitions", str(shuffle_partitions)
    )


def start_quiver() -> Engine:
    import quiver
    from quiver import functions as F

    spark = _spark_conf(quiver.Session.builder.appName("quiver-bench-core"), 4).getOrCreate()
    try:
        from importlib.metadata import version

        ver = getattr(quiver, "__version__", None) or version("quiver")
    except Exception:  # a version string is not worth failing the run over
        ver = "unknown"
    return Engine(spark, f"quiver {ver}", spark_workloads(F), lambda t: t, spark.stop)


def start_pyspark() -> Engine:
    import pyspark
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = (
        _spark_conf(SparkSession.builder.appName("quiver-bench-core"), 4)
        .config("spark.driver.memory", "6g")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
    )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    jvm = spark.sparkContext._jvm
    java = jvm.java.lang.System.getProperty("java.version")
    version = f"pyspark {pyspark.__version__} (Spark {spark.version}, Java {java})"
    return Engine(spark, version, spark_workloads(F), lambda t: t, spark.stop)


def start_duckdb() -> Engine:
    import duckdb

    con = duckdb.connect(config={"threads": 2})
    con.execute("SET enable_progress_bar = false")
    return Engine(con, f"duckdb {duckdb.__version__}", duckdb_workloads(), lambda t: t, con.close)


def start_polars() -> Engine:
    import polars as pl

    return Engine(None, f"polars {pl.__version__}", polars_workloads(pl), lambda df: df.to_arrow(), lambda: None)


def start_pandas() -> Engine:
    import pandas as pd

    def to_arrow(df) -> pa.Table:
        return pa.Table.from_pandas(df, preserve_index=False)

    return Engine(None, f"pandas {pd.__version__}", pandas_workloads(pd), to_arrow, lambda: None)


STARTERS: dict[str, Callable[[], Engine]] = {
    "quiver": start_quiver,
    "pyspark": start_pyspark,
    "duckdb": start_duckdb,
    "polars": start_polars,
    "pandas": start_pandas,
}


# --- result summaries (what the parent compares across engines) ----------------------


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (int, float, str)) or value is None:
        return value
    return str(value)


def _is_numeric(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)


def _is_integral(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or (pa.types.is_decimal(t) and t.scale == 0)


def _as_number(col: pa.Array) -> pa.Array:
    """int64 for integral columns (sums stay exact), float64 for the rest."""
    return col.cast(pa.int64() if _is_integral(col.type) else pa.float64())


def summarize(table: pa.Table, key_columns: list[str], dump: Path | None = None,
              max_rows: int = 200) -> dict:
    """Row count, column sums, key-weighted sums, and the rows themselves: inline when
    there are few, else written to ``dump`` as Parquet for the parent to compare."""
    import pyarrow.compute as pc

    table = table.combine_chunks()
    out: dict[str, Any] = {"rows": table.num_rows, "columns": table.column_names,
                           "key_columns": key_columns, "sums": {}}
    numeric = [n for n in table.column_names if _is_numeric(table.schema.field(n).type)]
    for name in numeric:
        out["sums"][name] = pc.sum(_as_number(table[name])).as_py()
    # A numeric key weights each other column, so rows swapped between keys show up
    # even when the plain column sums still agree.
    for key in (k for k in key_columns if k in numeric):
        for name in (n for n in numeric if n != key):
            prod = pc.multiply_checked(_as_number(table[key]), _as_number(table[name]))
            out["sums"][f"{key}*{name}"] = pc.sum(prod).as_py()
    if table.num_rows <= max_rows:
        rows = [[_plain(v) for v in row.values()] for row in table.to_pylist()]
        idx = [table.column_names.index(k) for k in key_columns if k in table.column_names]
        rows.sort(key=lambda r: tuple(r[i] for i in idx))
        out["sample"] = rows
    elif dump is not None:
        import pyarrow.parquet as pq

        pq.write_table(table, dump)
        out["file"] = str(dump)
    return out


# --- the child process ---------------------------------------------------------------


def first_line(exc: BaseException) -> str:
    """An exception's type and the first line of its message, which is what a report shows."""
    text = f"{type(exc).__name__}: {exc}".strip()
    return text.splitlines()[0] if text else type(exc).__name__


def emit(events: Path, **event: Any) -> None:
    """Append one event for the parent; each event also marks progress for its timeout watchdog."""
    with events.open("a") as fh:
        fh.write(json.dumps(event) + "\n")


def run_child(engine_name: str, paths: Paths, repeat: int, slow_s: float, events: Path,
              workloads: list[str], dump_dir: Path, *,
              starters: dict[str, Callable[[], Engine]] | None = None,
              key_columns: dict[str, list[str]] | None = None,
              warmup: bool = True, imported_s: float = 0.0) -> int:
    """Start one engine, run every workload warm-up + ``repeat`` times, emit events.

    Other benchmarks pass their own ``starters`` and result ``key_columns`` (per workload);
    ``warmup=False`` times every run, ``imported_s`` is start-up spent before this call.
    """
    starters = STARTERS if starters is None else starters
    key_columns = {w: spec[1] for w, spec in WORKLOADS.items()} if key_columns is None else key_columns
    t0 = time.perf_counter()
    try:
        engine = starters[engine_name]()
    except BaseException as exc:  # report any start-up failure, including ImportError
        traceback.print_exc()
        emit(events, event="fatal", stage="startup", error=first_line(exc))
        return 1
    startup_s = imported_s + time.perf_counter() - t0
    emit(events, event="startup", seconds=startup_s, version=engine.version,
         parts=engine.startup_parts)
    print(f"[{engine_name}] started in {startup_s:.2f}s ({engine.version})", flush=True)

    for name in workloads:
        fn = engine.workloads[name]
        times: list[float] = []
        warmup_s = None
        result = None
        try:
            runs = repeat
            if warmup:
                gc.collect()
                t = time.perf_counter()
                result = fn(engine.handle, paths)
                warmup_s = time.perf_counter() - t
                # A very slow engine gets one timed run rather than holding up the whole run.
                runs = repeat if warmup_s < slow_s else 1
            for _ in range(runs):
                result = None
                gc.collect()
                t = time.perf_counter()
                result = fn(engine.handle, paths)
                times.append(time.perf_counter() - t)
            summary = summarize(engine.to_arrow(result), key_columns[name],
                                dump_dir / f"{engine_name}-{name}.parquet")
            del result
        except BaseException as exc:
            traceback.print_exc()
            emit(events, event="workload", name=name, error=first_line(exc), times=times)
            print(f"[{engine_name}] {name}: FAILED {first_line(exc)}", flush=True)
            if isinstance(exc, KeyboardInterrupt):
                raise
            continue
        median = statistics.median(times)
        emit(events, event="workload", name=name, times=times, warmup=warmup_s,
              median=median, summary=summary)
        runs_txt = ", ".join(f"{x:.3f}" for x in times)
        warm_txt = f"warm-up {warmup_s:.3f}s; " if warmup_s is not None else "no warm-up; "
        print(f"[{engine_name}] {name}: median {median:.3f}s ({warm_txt}runs {runs_txt})",
              flush=True)

    return close_child(engine, engine_name, events)


def close_child(engine: Engine, engine_name: str, events: Path) -> int:
    """Report the child's memory high-water marks (before closing, while a JVM child is still alive),
    then close the engine; the child's exit status."""
    emit(events, event="memory", processes=proctree.tree_hwm(os.getpid()))
    try:
        engine.close()
    except Exception as exc:
        print(f"[{engine_name}] close failed: {first_line(exc)}", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="one engine of benchmarks.core (child process)")
    parser.add_argument("--engine", required=True, choices=ENGINES)
    parser.add_argument("--fact", required=True)
    parser.add_argument("--dim", required=True)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--slow-s", type=float, default=300.0)
    parser.add_argument("--events", type=Path, required=True)
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--dump-dir", type=Path, required=True,
                        help="where results too big to inline go, as Parquet")
    args = parser.parse_args(argv)
    return run_child(args.engine, Paths(args.fact, args.dim), args.repeat, args.slow_s,
                     args.events, args.workloads.split(","), args.dump_dir)


if __name__ == "__main__":
    sys.exit(main())
