"""Scans of TPC-H lineitem on an S3 server, one engine and one workload per child process.

    python -m benchmarks.storage_cache_engines --engine duckdb --workload q6 --endpoint URL
                                               --uri s3://BUCKET/KEY --object-size N --events F ...

is how ``benchmarks.storage_cache`` starts a child; it is not meant to be run by hand. The child
starts its engine, runs the workload once **cold** (the first scan of the process, with an empty
cache), then ``--repeat`` times **warm**, and after each scan reads the S3 server's request
recording (moto's recorder) to count the object bytes that scan fetched. Events are
``benchmarks.core_engines``' (startup, workload, memory, fatal), the workload event carrying
the cold figures and the bytes besides.
"""

from __future__ import annotations

import sys
import time

# The engine under test is imported first, as a program using it would, so Quiver's
# allocator settings apply before pyarrow loads; that import counts towards start-up.
_started = time.perf_counter()
if __name__ == "__main__" and "--engine" in sys.argv and \
        sys.argv[sys.argv.index("--engine") + 1:][:1] in (["quiver-cache"], ["quiver-nocache"]):
    import quiver  # noqa: F401
IMPORTED_S = time.perf_counter() - _started

import argparse
import gc
import json
import os
import statistics
import traceback
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pyarrow as pa

from benchmarks.core_engines import Engine, close_child, emit, first_line, summarize
from benchmarks.tpch.queries import sql_text

ACCESS_KEY, SECRET_KEY, REGION = "bench-access", "bench-secret", "us-east-1"
SPARK_MASTER = "local[2]"
SHUFFLE_PARTITIONS = 4
DUCKDB_THREADS = 2

# name -> (description, SQL over the view `lineitem`, columns that identify a result row)
WORKLOADS: dict[str, tuple[str, str, list[str]]] = {
    "q6": ("TPC-H Q6: filter on l_shipdate, l_discount, l_quantity; sum(l_extendedprice * l_discount)",
           sql_text(6), []),
    "scan": ("full-column scan: count(*) and sum(l_quantity) per l_returnflag",
             "select l_returnflag, count(*) as cnt, sum(l_quantity) as sum_qty\n"
             "from lineitem\ngroup by l_returnflag", ["l_returnflag"]),
}
ENGINES = ["quiver-cache", "quiver-nocache", "duckdb", "pyspark"]


@dataclass(frozen=True)
class Store:
    """Where lineitem is: the S3 endpoint and the object's URI and size."""

    endpoint: str
    uri: str
    size: int

    @property
    def object_path(self) -> str:
        """`bucket/key`, as the object's requests name it."""
        return self.uri.split("://", 1)[1]


# --- the server's recording: what each scan fetched -----------------------------------


def recorder(endpoint: str, action: str) -> str:
    """Call moto's recorder API (`reset-recording`, `start-recording`, `stop-recording` are POSTs,
    `download-recording` a GET); the answer's text."""
    method = "GET" if action == "download-recording" else "POST"
    request = urllib.request.Request(f"{endpoint}/moto-api/recorder/{action}", method=method)
    with urllib.request.urlopen(request, timeout=60) as answer:
        return answer.read().decode()


def range_bytes(header: str | None, size: int) -> int:
    """Bytes the server sends for a GET of an object of `size` bytes with this Range header: the
    range clipped to the object, the whole object when there is none (or one the server would not
    honour, as moto answers a multi-range with the whole object)."""
    if not header or "=" not in header or "," in header:
        return size
    begin, _, end = header.split("=", 1)[1].strip().partition("-")
    try:
        first = int(begin) if begin else None
        last = int(end) if end else None
    except ValueError:
        return size
    if first is None:  # a suffix: the last `last` bytes
        return min(last or 0, size)
    last = size - 1 if last is None else min(last, size - 1)
    return max(0, last - first + 1)


def fetched(recording: str, objects: dict[str, int]) -> dict[str, int]:
    """From a recording (one JSON request per line): object GETs of `objects` (`bucket/key` ->
    size), the bytes they returned, and all requests (HEADs and listings too)."""
    out = {"bytes": 0, "gets": 0, "requests": 0}
    for line in filter(str.strip, recording.splitlines()):
        request = json.loads(line)
        out["requests"] += 1
        path = unquote(urlsplit(request["url"]).path).lstrip("/")
        if request["method"] == "GET" and path in objects:
            headers = {k.lower(): v for k, v in request["headers"].items()}
            out["gets"] += 1
            out["bytes"] += range_bytes(headers.get("range"), objects[path])
    return out


# --- the engines -------------------------------------------------------------------------


def _spark_api_run(session: Any, store: Store, sql: str, uri: str | None = None) -> pa.Table:
    """One run on a session with PySpark's API: the view over the object made anew, then the SQL."""
    session.read.parquet(uri or store.uri).createOrReplaceTempView("lineitem")
    return session.sql(sql).toArrow()


def _quiver_version(quiver: Any) -> str:
    try:
        from importlib.metadata import version

        return getattr(quiver, "__version__", None) or version("quiver")
    except Exception:  # a version string is not worth failing the run over
        return "unknown"


def start_quiver(store: Store, cache_dir: str | None) -> Engine:
    """Quiver `local[2]` reading s3:// through its storage cache (in `cache_dir`), or with the cache
    off when `cache_dir` is None."""
    import quiver

    builder = (
        quiver.Session.builder.appName("quiver-bench-storage-cache").master(SPARK_MASTER)
        .config("spark.sql.shuffle.partitions", str(SHUFFLE_PARTITIONS))
        .config("quiver.s3.endpoint", store.endpoint).config("quiver.s3.accessKey", ACCESS_KEY)
        .config("quiver.s3.secretKey", SECRET_KEY).config("quiver.s3.region", REGION)
        .config("quiver.cache.storage.enabled", "false" if cache_dir is None else "true")
    )
    if cache_dir is not None:
        builder = builder.config("quiver.cache.storage.dir", cache_dir)
    spark = builder.getOrCreate()
    cache = "storage cache off" if cache_dir is None else "storage cache on, default bounds"
    version = f"quiver {_quiver_version(quiver)} ({cache})"
    return Engine(spark, version, {w: partial(_spark_api_run, sql=spec[1]) for w, spec in WORKLOADS.items()},
                  lambda t: t, spark.stop)


def start_duckdb(store: Store) -> Engine:
    """DuckDB (2 threads) reading through an fsspec S3 file system (s3fs) registered with it, since
    its httpfs extension cannot be downloaded offline. s3fs's own read-ahead is off
    (`default_cache_type="none"`): each read DuckDB makes is one ranged GET, as with httpfs."""
    import duckdb
    import s3fs

    fs = s3fs.S3FileSystem(key=ACCESS_KEY, secret=SECRET_KEY, endpoint_url=store.endpoint,
                           client_kwargs={"region_name": REGION}, default_cache_type="none")
    con = duckdb.connect(config={"threads": DUCKDB_THREADS})
    con.execute("SET enable_progress_bar = false")
    con.register_filesystem(fs)
    file_cache = con.execute("SELECT current_setting('enable_external_file_cache')").fetchone()[0]

    def run(handle: Any, store: Store, sql: str) -> pa.Table:
        handle.execute(f"CREATE OR REPLACE VIEW lineitem AS SELECT * FROM read_parquet('{store.uri}')")
        return handle.sql(sql).to_arrow_table()

    version = (f"duckdb {duckdb.__version__} (s3fs {s3fs.__version__}, external file cache "
               f"{'on' if str(file_cache).lower() in ('true', '1') else 'off'})")
    return Engine(con, version, {w: partial(run, sql=spec[1]) for w, spec in WORKLOADS.items()},
                  lambda t: t, con.close)


def s3a_connector() -> Path | None:
    """The hadoop-aws jar PySpark needs to read s3a://, if its pip package ships one."""
    try:
        import pyspark
    except ImportError:
        return None
    return next(iter(sorted((Path(pyspark.__file__).parent / "jars").glob("hadoop-aws-*.jar"))), None)


def start_pyspark(store: Store) -> Engine:
    """PySpark `local[2]` reading s3a:// through hadoop-aws (path-style, plain HTTP, the server's
    credentials). Never run here: the pip package ships no hadoop-aws jar and Maven is out of reach."""
    if s3a_connector() is None:
        raise RuntimeError("no S3A connector available offline (pyspark/jars has no hadoop-aws jar)")
    import pyspark
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    s3a = {"endpoint": store.endpoint, "access.key": ACCESS_KEY, "secret.key": SECRET_KEY,
           "path.style.access": "true", "connection.ssl.enabled": "false",
           "impl": "org.apache.hadoop.fs.s3a.S3AFileSystem"}
    builder = (SparkSession.builder.appName("quiver-bench-storage-cache").master(SPARK_MASTER)
               .config("spark.sql.shuffle.partitions", str(SHUFFLE_PARTITIONS))
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.execution.arrow.pyspark.enabled", "true"))
    for key, value in s3a.items():
        builder = builder.config(f"spark.hadoop.fs.s3a.{key}", value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    uri = "s3a://" + store.object_path
    return Engine(spark, f"pyspark {pyspark.__version__} (Spark {spark.version})",
                  {w: partial(_spark_api_run, sql=spec[1], uri=uri) for w, spec in WORKLOADS.items()},
                  lambda t: t, spark.stop)


def starters(store: Store, cache_dir: str | None) -> dict[str, Callable[[], Engine]]:
    return {
        "quiver-cache": partial(start_quiver, store, cache_dir),
        "quiver-nocache": partial(start_quiver, store, None),
        "duckdb": partial(start_duckdb, store),
        "pyspark": partial(start_pyspark, store),
    }


# --- the child process -------------------------------------------------------------------


def cache_stats(engine_name: str) -> dict[str, int] | None:
    """Quiver's own count of what its storage cache did in this process, for the quiver engines."""
    if not engine_name.startswith("quiver"):
        return None
    from quiver.connectors.cache import storage_cache_stats

    return storage_cache_stats()


def timed_scan(fn: Callable[[], Any], store: Store) -> tuple[float, Any, dict[str, int]]:
    """One scan: (seconds, result, what it fetched from the server). The recording is reset before
    and read after, both outside the timer."""
    recorder(store.endpoint, "reset-recording")
    gc.collect()
    t = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - t
    return seconds, result, fetched(recorder(store.endpoint, "download-recording"), {store.object_path: store.size})


def measure(engine_name: str, engine: Engine, workload: str, store: Store, repeat: int, slow_s: float,
            dump_dir: Path) -> dict[str, Any]:
    """The workload event: one cold scan, then `repeat` warm ones (one when the cold scan took
    longer than `slow_s`), with their seconds, bytes fetched and the result's summary."""
    fn = partial(engine.workloads[workload], engine.handle, store)
    cold_s, result, cold_bytes = timed_scan(fn, store)
    times: list[float] = []
    warm_bytes: list[dict[str, int]] = []
    for _ in range(repeat if cold_s < slow_s else 1):
        result = None
        seconds, result, got = timed_scan(fn, store)
        times.append(seconds)
        warm_bytes.append(got)
    summary = summarize(engine.to_arrow(result), WORKLOADS[workload][2],
                        dump_dir / f"storage_cache-{engine_name}-{workload}.parquet")
    return {"name": workload, "cold": cold_s, "warmup": cold_s, "times": times,
            "median": statistics.median(times), "fetched_cold": cold_bytes, "fetched_warm": warm_bytes,
            "cache_stats": cache_stats(engine_name), "summary": summary}


def run_child(engine_name: str, workload: str, store: Store, cache_dir: str | None, repeat: int,
              slow_s: float, events: Path, dump_dir: Path) -> int:
    """Start the engine, measure the workload, emit the events; 1 when the engine cannot start."""
    t0 = time.perf_counter()
    try:
        engine = starters(store, cache_dir)[engine_name]()
    except BaseException as exc:  # report any start-up failure, including ImportError
        traceback.print_exc()
        emit(events, event="fatal", stage="startup", error=first_line(exc))
        return 1
    startup_s = IMPORTED_S + time.perf_counter() - t0
    emit(events, event="startup", seconds=startup_s, version=engine.version, parts={})
    print(f"[{engine_name}] started in {startup_s:.2f}s ({engine.version})", flush=True)
    try:
        ev = measure(engine_name, engine, workload, store, repeat, slow_s, dump_dir)
    except BaseException as exc:
        traceback.print_exc()
        emit(events, event="workload", name=workload, error=first_line(exc), times=[])
        print(f"[{engine_name}] {workload}: FAILED {first_line(exc)}", flush=True)
        if isinstance(exc, KeyboardInterrupt):
            raise
    else:
        emit(events, event="workload", **ev)
        warm = ", ".join(f"{t:.3f}s/{b['bytes']:,}B" for t, b in zip(ev["times"], ev["fetched_warm"]))
        print(f"[{engine_name}] {workload}: cold {ev['cold']:.3f}s/{ev['fetched_cold']['bytes']:,}B; "
              f"warm {warm}", flush=True)
    return close_child(engine, engine_name, events)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="one engine and workload of benchmarks.storage_cache (child)")
    parser.add_argument("--engine", required=True, choices=ENGINES)
    parser.add_argument("--workload", required=True, choices=list(WORKLOADS))
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--uri", required=True, help="s3://bucket/key of lineitem")
    parser.add_argument("--object-size", type=int, required=True)
    parser.add_argument("--cache-dir", help="Quiver's storage cache folder (quiver-cache)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--slow-s", type=float, default=300.0)
    parser.add_argument("--events", type=Path, required=True)
    parser.add_argument("--dump-dir", type=Path, required=True)
    args = parser.parse_args(argv)
    store = Store(args.endpoint, args.uri, args.object_size)
    return run_child(args.engine, args.workload, store, args.cache_dir, args.repeat, args.slow_s,
                     args.events, args.dump_dir)


if __name__ == "__main__":
    sys.exit(main())
