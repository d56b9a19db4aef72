"""Quiver's TPC-H times at several commits, to say what each change bought.

    python -m benchmarks.tpch.by_commit --sf 1 e3c150c ea11180 HEAD

Each commit is checked out as a git worktree under benchmarks/.data/commits/ and imported
from there in a child process of its own (the worktree's files laid out as the `quiver`
package, ahead of this checkout's editable install), then timed on the 22 SQL queries with
the same measure as `python -m benchmarks.tpch`: `local[2]`, 4 shuffle partitions, one
warm-up and the median of 3 runs, views re-registered every run. Prints one line per commit.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WORK = REPO / "benchmarks" / ".data" / "commits"
PACKAGES = ("engine", "planners", "executors", "connectors")

_TIMER = """
import math, statistics, sys, time
layout, sf = sys.argv[1], float(sys.argv[2])
sys.path[:0] = [layout, {repo!r}]
import quiver
assert quiver.__file__.startswith(layout), quiver.__file__
from benchmarks.tpch.datagen import ensure_tables
from benchmarks.tpch.queries import QUERY_NUMBERS, sql_text
paths = ensure_tables(sf)
spark = quiver.Session.builder.master("local[2]").config("spark.sql.shuffle.partitions", "4").getOrCreate()
times = {{}}
for n in QUERY_NUMBERS:
    runs = []
    for i in range(4):
        started = time.perf_counter()
        for name, path in paths.items():
            spark.read.parquet(str(path)).createOrReplaceTempView(name)
        spark.sql(sql_text(n)).toArrow()
        if i:
            runs.append(time.perf_counter() - started)
    times[n] = statistics.median(runs)
geomean = math.exp(sum(math.log(t) for t in times.values()) / len(times))
print(f"geomean {{geomean:.3f}} " + " ".join(f"q{{n}}={{t:.3f}}" for n, t in times.items()))
"""


def _layout(commit: str) -> Path:
    """A folder holding the commit's files as the `quiver` package (its worktree, linked)."""
    sha = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", commit],
                         check=True, capture_output=True, text=True).stdout.strip()
    tree = WORK / f"tree-{sha}"
    if not tree.exists():
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", str(tree), sha], check=True)
    layout = WORK / f"layout-{sha}"
    shutil.rmtree(layout, ignore_errors=True)
    shutil.copytree(tree / "quiver", layout / "quiver")
    for package in PACKAGES:
        (layout / "quiver" / package).symlink_to(tree / package, target_is_directory=True)
    return layout


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("commits", nargs="+", help="commits to time, oldest first")
    parser.add_argument("--sf", type=float, default=1.0, help="TPC-H scale factor (default 1)")
    args = parser.parse_args(argv)
    timer = _TIMER.format(repo=str(REPO))
    for commit in args.commits:
        layout = _layout(commit)
        subject = subprocess.run(["git", "-C", str(REPO), "log", "-1", "--format=%h %s", commit],
                                 check=True, capture_output=True, text=True).stdout.strip()
        result = subprocess.run([sys.executable, "-c", timer, str(layout), str(args.sf)],
                                capture_output=True, text=True)
        line = result.stdout.strip().splitlines()[-1] if result.returncode == 0 else f"failed: {result.stderr[-300:]}"
        print(f"{subject[:90]}\n    {line}", flush=True)


if __name__ == "__main__":
    main()
