"""Quiver's TPC-H times at several commits, to say what each change bought.

    python -m benchmarks.tpch.by_commit --sf 1 e3c150c ea11180 HEAD
    python -m benchmarks.tpch.by_commit --interleave e3c150c HEAD

Each commit is checked out as a git worktree under benchmarks/.data/commits/ and imported
from there in a child process of its own (the worktree's files laid out as the `quiver`
package, ahead of this checkout's editable install), then timed on the 22 SQL queries with
the same measure as `python -m benchmarks.tpch`: `local[2]`, 4 shuffle partitions, one
warm-up and the median of 3 runs, views re-registered every run. Prints one line per commit.
With `--interleave` every commit gets a long-lived child and they take turns query by query (the
median of `--repeat` runs after a warm-up), so the VM's drift between passes cancels out; each
query's time is also given as a ratio to the first commit's.
"""
from __future__ import annotations

import argparse
import math
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WORK = REPO / "benchmarks" / ".data" / "commits"
PACKAGES = ("engine", "planners", "executors", "connectors")

# The child's start: the commit's `quiver` first on the path, the TPC-H tables, a local[2] session
# and `timed(n)`, one run of query n with its views registered anew, in seconds.
_PRELUDE = """
import math, statistics, sys, time
layout, sf = sys.argv[1], float(sys.argv[2])
sys.path[:0] = [layout, {repo!r}]
import quiver
assert quiver.__file__.startswith(layout), quiver.__file__
from benchmarks.tpch.datagen import ensure_tables
from benchmarks.tpch.queries import QUERY_NUMBERS, sql_text
paths = ensure_tables(sf)
spark = (quiver.Session.builder.master("local[2]").config("spark.sql.shuffle.partitions", "4")
         .config("quiver.ui.progress", "false").getOrCreate())  # stdout carries the answers

def timed(n):
    started = time.perf_counter()
    for name, path in paths.items():
        spark.read.parquet(str(path)).createOrReplaceTempView(name)
    spark.sql(sql_text(n)).toArrow()
    return time.perf_counter() - started
"""

_TIMER = _PRELUDE + """
times = {{n: statistics.median([timed(n) for i in range(4)][1:]) for n in QUERY_NUMBERS}}
geomean = math.exp(sum(math.log(t) for t in times.values()) / len(times))
print(f"geomean {{geomean:.3f}} " + " ".join(f"q{{n}}={{t:.3f}}" for n, t in times.items()))
"""

# One long-lived child per commit for --interleave: reads a query number per line, answers its seconds.
_SERVER = _PRELUDE + """
print("ready", flush=True)
for line in sys.stdin:
    print(f"@seconds {{timed(int(line))}}", flush=True)
"""


def interleaved(commits: list[str], sf: float, repeat: int) -> dict[str, dict[int, float]]:
    """Each query's median seconds per commit, the commits taking turns query by query.

    A pass per commit lets the VM's drift (±20% over minutes) land on one commit and not another;
    here every commit runs each query within the same second or two, in a rotating order.
    """
    from benchmarks.tpch.queries import QUERY_NUMBERS

    server = _SERVER.format(repo=str(REPO))
    children = {}
    for commit in commits:
        child = subprocess.Popen([sys.executable, "-c", server, str(_layout(commit)), str(sf)],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if child.stdout.readline().strip() != "ready":
            raise RuntimeError(f"the child for {commit} did not start")
        children[commit] = child
    times: dict[str, dict[int, list[float]]] = {c: {} for c in commits}
    try:
        for n in QUERY_NUMBERS:
            for rep in range(repeat + 1):
                turn = rep % len(commits)
                for commit in commits[turn:] + commits[:turn]:
                    child = children[commit]
                    child.stdin.write(f"{n}\n")
                    child.stdin.flush()
                    seconds = _answer(child)
                    if rep:
                        times[commit].setdefault(n, []).append(seconds)
    finally:
        for child in children.values():
            child.stdin.close()
            child.wait()
    return {c: {n: statistics.median(ts) for n, ts in by_query.items()} for c, by_query in times.items()}


def _answer(child: subprocess.Popen) -> float:
    """The seconds a server child answers, past whatever else the engine at that commit printed (an older
    commit's DuckDB fragments drew DuckDB's progress bar on stdout)."""
    while True:
        line = child.stdout.readline()
        if not line:
            raise RuntimeError("a timing child ended without answering")
        if "@seconds " in line:
            return float(line.rsplit("@seconds ", 1)[1])


def _layout(commit: str) -> Path:
    """A folder holding the commit's files as the `quiver` package: its worktree, or for a commit from before
    the package's folders moved under quiver/, a copy of quiver/ with engine/, planners/, ... linked in."""
    sha = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", commit],
                         check=True, capture_output=True, text=True).stdout.strip()
    tree = WORK / f"tree-{sha}"
    if not tree.exists():
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", str(tree), sha], check=True)
    if not (tree / "engine").is_dir():
        return tree  # the package's folders already lie under quiver/
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
    parser.add_argument("--interleave", action="store_true",
                        help="run the commits side by side, taking turns on every query (one child each)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per query with --interleave (default 5)")
    args = parser.parse_args(argv)
    if args.interleave:
        _print_interleaved(args.commits, interleaved(args.commits, args.sf, args.repeat))
        return
    timer = _TIMER.format(repo=str(REPO))
    for commit in args.commits:
        layout = _layout(commit)
        subject = _subject(commit)
        result = subprocess.run([sys.executable, "-c", timer, str(layout), str(args.sf)],
                                capture_output=True, text=True)
        line = result.stdout.strip().splitlines()[-1] if result.returncode == 0 else f"failed: {result.stderr[-300:]}"
        print(f"{subject[:90]}\n    {line}", flush=True)


def _subject(commit: str) -> str:
    """The commit's short hash and subject line."""
    return subprocess.run(["git", "-C", str(REPO), "log", "-1", "--format=%h %s", commit],
                          check=True, capture_output=True, text=True).stdout.strip()


def _print_interleaved(commits: list[str], medians: dict[str, dict[int, float]]) -> None:
    base = medians[commits[0]]
    for commit in commits:
        subject = _subject(commit)
        times = medians[commit]
        geomean = math.exp(sum(math.log(t) for t in times.values()) / len(times))
        moved = " ".join(f"q{n}={t:.3f}" + (f"({t / base[n]:.2f}x)" if commit != commits[0] else "")
                         for n, t in times.items())
        print(f"{subject[:90]}\n    geomean {geomean:.3f} {moved}", flush=True)


if __name__ == "__main__":
    main()
