"""A join on a skewed key, Quiver against PySpark, each with adaptive execution on and off.

    python -m benchmarks.skew [--rows 20000000] [--skew 0.3] [--engines quiver,pyspark]
                              [--repeat 1] [--out benchmarks/RESULTS.md|-]

The fact table has ``--rows`` rows (key int64, amount float64), ``--skew`` of them on key 0 and the
rest spread uniformly over ``--keys`` keys; the dim table has one row per key (key, weight). The
query joins them on the key and aggregates by the key's last digit, with broadcasting off so that the
join is shuffled on both engines. Each engine and setting runs in a child process of its own, one
after another: a warm-up run, then ``--repeat`` timed runs; the parent samples each child's process
tree for its peak RSS, checks that every run gives the same rows, and writes a markdown section into
``--out``.
"""
from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from benchmarks.core import machine, run_meta, write_section
from benchmarks.proctree import tree_rss_bytes

SECTION = "benchmarks.skew"
TITLE = "Skewed join: Quiver vs PySpark, adaptive execution on and off"
CACHE = Path(__file__).parent / ".data" / "skew"
ENGINES = ("quiver", "pyspark")
# The settings both engines get: Spark's own keys, with the skew threshold lowered from 256 MiB so that a
# partition of this data counts as skewed by size to both (Spark measures its shuffle files, compressed;
# Quiver Arrow bytes).
PARTITIONS = 16
SKEW_THRESHOLD = "16m"
REL_TOL = 1e-9


@dataclass(frozen=True)
class SkewSpec:
    rows: int
    skew: float
    keys: int
    seed: int = 20261207
    row_group_rows: int = 1_000_000

    @property
    def name(self) -> str:
        return f"r{self.rows}_s{self.skew:g}_k{self.keys}_seed{self.seed}"


def ensure_data(spec: SkewSpec, log=print) -> Path:
    """The fact and dim Parquet files of `spec` (generated once, then reused)."""
    root = CACHE / spec.name
    if (root / "done.json").exists():
        return root
    root.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    rng = np.random.default_rng(spec.seed)
    writer = None
    step = 2_000_000
    for lo in range(0, spec.rows, step):
        n = min(step, spec.rows - lo)
        key = np.where(rng.random(n) < spec.skew, 0, rng.integers(1, spec.keys, n)).astype(np.int64)
        amount = np.round(rng.uniform(0.0, 100.0, n), 2)
        table = pa.table({"key": key, "amount": amount})
        if writer is None:
            writer = pq.ParquetWriter(root / "fact.parquet", table.schema)
        writer.write_table(table, row_group_size=spec.row_group_rows)
    if writer is not None:
        writer.close()
    dim = pa.table({"key": np.arange(spec.keys, dtype=np.int64),
                    "weight": np.round(np.random.default_rng(spec.seed + 1).uniform(0.0, 1.0, spec.keys), 4)})
    pq.write_table(dim, root / "dim.parquet", row_group_size=spec.row_group_rows)
    (root / "done.json").write_text(json.dumps(asdict(spec)))
    log(f"generated {spec.name} in {time.perf_counter() - t0:.1f}s under {root}")
    return root


# ---------------------------------------------------------------- the child: one engine, one setting


def _conf(adaptive: bool) -> dict[str, str]:
    return {"spark.sql.shuffle.partitions": str(PARTITIONS),
            "spark.sql.autoBroadcastJoinThreshold": "-1",
            "quiver.sql.join.broadcastByCostMaxBytes": "-1",
            "spark.sql.adaptive.enabled": str(adaptive).lower(),
            "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes": SKEW_THRESHOLD}


def _query(spark, F, root: Path):
    fact = spark.read.parquet(str(root / "fact.parquet"))
    dim = spark.read.parquet(str(root / "dim.parquet"))
    return (fact.join(dim, "key").groupBy((F.col("key") % 10).alias("digit"))
            .agg(F.count("*").alias("n"), F.sum(F.col("amount") * F.col("weight")).alias("weighted"))
            .orderBy("digit"))


def child(engine: str, adaptive: bool, root: Path, repeat: int) -> dict:
    t0 = time.perf_counter()
    if engine == "quiver":
        import quiver
        from quiver import functions as F

        builder = quiver.Session.builder.master("local[2]")
        from importlib.metadata import version as package_version

        version = getattr(quiver, "__version__", None) or package_version("quiver")
    else:
        import os

        import pyspark
        from pyspark.sql import SparkSession
        from pyspark.sql import functions as F

        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        builder = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
                   .config("spark.driver.memory", "6g")
                   .config("spark.sql.execution.arrow.pyspark.enabled", "true"))
        version = pyspark.__version__
    for key, value in _conf(adaptive).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    startup = time.perf_counter() - t0
    seconds = []
    rows = None
    for i in range(repeat + 1):
        df = _query(spark, F, root)
        t = time.perf_counter()
        rows = [tuple(r) for r in df.collect()]
        if i:
            seconds.append(time.perf_counter() - t)
    split = tasks = None
    if engine == "quiver":
        job = spark.lastJob()
        split = any(": skew join:" in line for line in job.adaptive)
        tasks = max(s.tasks for s in job.stages)
    else:
        plan = df._jdf.queryExecution().executedPlan().toString()
        split = "skew=true" in plan
    spark.stop()
    return {"engine": engine, "adaptive": adaptive, "version": version, "startup_s": startup, "seconds": seconds,
            "rows": rows, "split": split, "tasks": tasks}


# ---------------------------------------------------------------- the parent


def run_child(engine: str, adaptive: bool, root: Path, repeat: int, timeout: float) -> dict:
    cmd = [sys.executable, "-m", "benchmarks.skew", "--child", engine, "--adaptive", str(adaptive).lower(),
           "--data", str(root), "--repeat", str(repeat)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = [0]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], tree_rss_bytes(proc.pid))
            stop.wait(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return {"engine": engine, "adaptive": adaptive, "error": f"timed out after {timeout:.0f} s"}
    finally:
        stop.set()
        sampler.join()
    if proc.returncode != 0:
        tail = err.strip().splitlines()[-1] if err.strip() else f"exit {proc.returncode}"
        return {"engine": engine, "adaptive": adaptive, "error": tail}
    result = json.loads(out.strip().splitlines()[-1])
    result["peak_rss"] = peak[0]
    return result


def _same(a: list, b: list) -> bool:
    if len(a) != len(b):
        return False
    for ra, rb in zip(a, b):
        for x, y in zip(ra, rb):
            if isinstance(x, float) or isinstance(y, float):
                if not math.isclose(x, y, rel_tol=REL_TOL):
                    return False
            elif x != y:
                return False
    return True


def render(results: list[dict], spec: SkewSpec, meta: dict, repeat: int) -> str:
    ok = [r for r in results if "error" not in r]
    reference = ok[0]["rows"] if ok else None
    base = next((r for r in ok if r["engine"] == "pyspark" and r["adaptive"]), None)
    lines = [f"<!-- {SECTION}:begin -->", f"## {TITLE}", "",
             f"Generated by `{meta['command']}` on {meta['date']}. Seconds are the median of {repeat} run"
             f"{'s' if repeat != 1 else ''} after a warm-up, each collecting the 10-row result; *peak RSS* is the "
             "largest RSS of the child's process tree (the JVM's too) sampled every 0.2 s. *Split* says whether the "
             "engine read the skewed partition with several tasks (Quiver: a `skew join` line in "
             "`spark.lastJob().adaptive`; PySpark: `skew=true` in the executed plan). ✗ marks rows that differ "
             "from the first run's.", "",
             "| engine | adaptive | seconds | peak RSS GiB | split | most tasks in a stage | / PySpark AQE on |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['engine']} | {'on' if r['adaptive'] else 'off'} | failed: `{r['error']}` "
                         "| — | — | — | — |")
            continue
        s = float(np.median(r["seconds"]))
        mark = "" if _same(reference, r["rows"]) else " ✗"
        ratio = f"{s / float(np.median(base['seconds'])):.2f}" if base else "—"
        lines.append(f"| {r['engine']} {r['version']} | {'on' if r['adaptive'] else 'off'} | {s:.2f}{mark} | "
                     f"{r['peak_rss'] / 2**30:.2f} | {'yes' if r['split'] else 'no'} | "
                     f"{r['tasks'] if r['tasks'] is not None else '—'} | {ratio} |")
    m = meta["machine"]
    lines += ["",
              f"- **Data:** fact {spec.rows:,} rows (key int64, amount float64), {spec.skew:.0%} of them on key 0, "
              f"the rest uniform over {spec.keys - 1:,} keys; dim {spec.keys:,} rows (key, weight), one per key. "
              f"Parquet, row groups of {spec.row_group_rows:,} rows, seed {spec.seed} (`benchmarks/skew.py`).",
              "- **Query:** `fact.join(dim, \"key\").groupBy(key % 10).agg(count(*), sum(amount * weight))`, "
              "ordered by the digit; a shuffled join (`spark.sql.autoBroadcastJoinThreshold=-1`, and Quiver's "
              "`quiver.sql.join.broadcastByCostMaxBytes=-1`).",
              f"- **Settings (both engines):** `local[2]`, `spark.sql.shuffle.partitions={PARTITIONS}`, "
              f"`spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes={SKEW_THRESHOLD}` (Spark's default "
              "256m counts no partition of this data as skewed), the other `spark.sql.adaptive.*` keys at their "
              "defaults; PySpark driver memory 6g, UI off, Arrow on.",
              f"- **Machine:** {m['cpu']}, {m['cores']} cores, {m['ram']} RAM, {m['os']}, Python {m['python']}. "
              f"Load average when the run started: {meta['load']}.",
              "", f"<!-- {SECTION}:end -->"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--skew", type=float, default=0.3, help="share of the fact's rows on key 0")
    parser.add_argument("--keys", type=int, default=1_000_000, help="distinct keys (the dim's rows)")
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=1200)
    parser.add_argument("--out", default=str(Path(__file__).parent / "RESULTS.md"))
    parser.add_argument("--child", choices=ENGINES, help=argparse.SUPPRESS)
    parser.add_argument("--adaptive", choices=("true", "false"), help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.adaptive == "true", Path(args.data), args.repeat)))
        return 0
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    unknown = sorted(set(engines) - set(ENGINES))
    if unknown:
        parser.error(f"unknown engine(s) {', '.join(unknown)}; choose from {', '.join(ENGINES)}")
    meta = run_meta("benchmarks.skew", argv)
    meta["machine"] = machine()
    spec = SkewSpec(args.rows, args.skew, args.keys)
    root = ensure_data(spec)
    results = []
    for engine in engines:
        for adaptive in (True, False):
            print(f"=== {engine}, adaptive {'on' if adaptive else 'off'} ===", flush=True)
            result = run_child(engine, adaptive, root, args.repeat, args.timeout)
            print({k: v for k, v in result.items() if k != "rows"}, flush=True)
            results.append(result)
    section = render(results, spec, meta, args.repeat)
    print("\n" + section)
    if args.out != "-":
        write_section(Path(args.out), section, SECTION)
    ok = [r for r in results if "error" not in r]
    return 0 if ok and all(_same(ok[0]["rows"], r["rows"]) for r in ok) else 1


if __name__ == "__main__":
    sys.exit(main())
