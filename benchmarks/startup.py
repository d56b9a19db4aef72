"""How long a new process takes to import each engine, start it, and answer a first small query.

    .venv/bin/python -m benchmarks.startup                     # Quiver, Polars, DuckDB, PySpark; 7 processes each
    .venv/bin/python -m benchmarks.startup --python /tmp/core/bin/python --label "core install"
    .venv/bin/python -m benchmarks.startup --write             # and put the table into benchmarks/RESULTS.md

Every measurement is a fresh interpreter (`python -c`), as a user's script or notebook kernel is: the
import, the engine's start (a session, a connection; nothing for Polars), the first query over a
three-row table (a group-by count, collected to Python), and the same query again. Each phase is timed
inside the child with `time.perf_counter`; the table gives the median over the processes. `--python`
runs Quiver's children with another interpreter, such as a venv of the plain `pip install` (no pandas:
pyarrow imports pandas at the first `pa.array` of Python values wherever pandas is installed).
The engines' children run one at a time, interleaved round by round, so drift of the machine's speed
falls on all of them alike.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.core import run_meta, write_section

SECTION = "startup"
RESULTS = Path(__file__).with_name("RESULTS.md")
PHASES = ("import", "start", "first query", "again")

_TIMER = """
import json, time
t0 = time.perf_counter()
{imports}
t1 = time.perf_counter()
{start}
t2 = time.perf_counter()
rows = {query}
t3 = time.perf_counter()
rows = {query}
t4 = time.perf_counter()
assert sorted(map(tuple, rows)) == [("a", 2), ("b", 1)], rows
{stop}
print("@startup " + json.dumps([t1 - t0, t2 - t1, t3 - t2, t4 - t3]))
"""

ENGINES = {
    "quiver": {
        "imports": "import quiver",
        "start": "spark = quiver.Session.builder.master('local[*]').getOrCreate()",
        "query": "[tuple(r) for r in spark.createDataFrame([('a', 1), ('b', 2), ('a', 3)], ['k', 'v'])"
              ".groupBy('k').count().collect()]",
        "stop": "spark.stop()"},
    "polars": {
        "imports": "import polars as pl",
        "start": "pass",
        "query": "pl.DataFrame({'k': ['a', 'b', 'a'], 'v': [1, 2, 3]}).group_by('k').len().rows()",
        "stop": "pass"},
    "duckdb": {
        "imports": "import duckdb",
        "start": "con = duckdb.connect()",
        "query": "con.sql(\"SELECT k, count(*) FROM (VALUES ('a', 1), ('b', 2), ('a', 3)) t(k, v) GROUP BY k\")"
              ".fetchall()",
        "stop": "con.close()"},
    "pyspark": {
        "imports": "from pyspark.sql import SparkSession",
        "start": "spark = SparkSession.builder.master('local[*]').config('spark.ui.enabled', 'false')"
              ".config('spark.ui.showConsoleProgress', 'false').getOrCreate()",
        "query": "[tuple(r) for r in spark.createDataFrame([('a', 1), ('b', 2), ('a', 3)], ['k', 'v'])"
              ".groupBy('k').count().collect()]",
        "stop": "spark.stop()"},
}


def measure(engine: str, python: str) -> list[float]:
    """One fresh process's seconds per phase."""
    code = _TIMER.format(**ENGINES[engine])
    # as a user's process starts: without the allocator tuning the benchmarks' own processes ask for
    env = {k: v for k, v in os.environ.items() if k != "QUIVER_TUNE_ALLOCATOR"}
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=600, check=False, env=env,
                         cwd=tempfile.gettempdir())
    for line in out.stdout.splitlines():
        if line.startswith("@startup "):
            return json.loads(line[len("@startup "):])
    raise RuntimeError(f"{engine} failed to start: {out.stderr.strip()[-2000:]}")


def render(timings: dict[str, list[list[float]]], meta: dict, label: str) -> str:
    """The markdown section: median seconds per phase and engine."""
    def cell(xs: list[float]) -> str:
        return f"{statistics.median(xs) * 1000:.0f} ms"

    lines = [f"<!-- {SECTION}:begin -->", "## Startup: import, start, first small query", "",
             f"`{meta['command']}` at {meta['date']}; {meta['machine']['cpu']}, {meta['machine']['usable_cores']} "
             f"cores, load {meta['load']}. Median of fresh processes per engine ({label}); the query is a "
             "group-by count over three rows, collected.", "",
             "| engine | processes | " + " | ".join(PHASES) + " | import to first row |",
             "| --- | --- | " + " | ".join("---" for _ in PHASES) + " | --- |"]
    for engine, runs in timings.items():
        phases = [cell([r[i] for r in runs]) for i in range(len(PHASES))]
        total = cell([r[0] + r[1] + r[2] for r in runs])
        lines.append(f"| {engine} | {len(runs)} | " + " | ".join(phases) + f" | {total} |")
    lines.append(f"<!-- {SECTION}:end -->")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="quiver,polars,duckdb,pyspark",
                        help=f"comma-separated, of {', '.join(ENGINES)}")
    parser.add_argument("--processes", type=int, default=7, help="fresh processes per engine (PySpark: at most 3)")
    parser.add_argument("--python", default=sys.executable, help="the interpreter Quiver's processes run with")
    parser.add_argument("--label", default="the dev venv", help="what --python is, for the table")
    parser.add_argument("--write", action="store_true", help=f"put the table into {RESULTS.name}")
    parser.add_argument("--out", type=Path, default=RESULTS, help="the results file --write writes")
    args = parser.parse_args(argv)
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    unknown = [e for e in engines if e not in ENGINES]
    if unknown:
        parser.error(f"unknown engine(s) {', '.join(unknown)}; choose from {', '.join(ENGINES)}")
    timings: dict[str, list[list[float]]] = {e: [] for e in engines}
    for round_ in range(args.processes):
        for engine in engines:
            if engine == "pyspark" and round_ >= 3:
                continue  # seconds per process; three medians well enough
            python = args.python if engine == "quiver" else sys.executable
            timings[engine].append(measure(engine, python))
            print(f"round {round_ + 1} {engine}: " + ", ".join(f"{x * 1000:.0f} ms" for x in timings[engine][-1]),
                  file=sys.stderr)
    section = render(timings, run_meta("benchmarks.startup", argv), args.label)
    print(section)
    if args.write:
        write_section(args.out, section, SECTION)
    return 0


if __name__ == "__main__":
    sys.exit(main())
