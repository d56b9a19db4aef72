"""TPC-H under hard memory caps: every query in a fresh process that the kernel holds to the cap.

    python -m benchmarks.memory --sf 10 --caps 2g,3g [--engines quiver,duckdb,pyspark] [--queries 1-22]
                                [--timeout 900] [--out benchmarks/RESULTS.md | -]

Each (cap, engine, query) gets a child process of its own (`benchmarks.tpch.child`, one run of one query),
put into a cgroup v1 memory group of its own before the engine starts, with `memory.limit_in_bytes` (and
`memory.memsw.limit_in_bytes`, so swap is no way out) set to the cap. Past the cap the kernel's OOM killer
ends the process: that is "killed". The engines are told the cap: DuckDB's `memory_limit` is 70% of it,
PySpark's driver heap 60%; Quiver is told nothing, since it reads the cgroup's limit itself and budgets
`quiver.memory.fraction` of it. Answers are checked against the first engine in DuckDB, PySpark, Quiver
that answered the query under the same cap. Needs root (to make cgroups) and a cgroup v1 memory hierarchy.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import shlex
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.core import machine, write_section
from benchmarks.tpch.__main__ import _engine_list, _query_list
from benchmarks.tpch.datagen import ensure_tables, scale_name
from benchmarks.tpch.run import (
    REL_TOL,
    RUNS_ROOT,
    EngineRun,
    absorb,
    check_agreement,
    geomean,
    run_child,
)

CGROUP_MEMORY = Path("/sys/fs/cgroup/memory")
DEFAULT_OUT = Path(__file__).resolve().parent / "RESULTS.md"
DEFAULT_ENGINES = ["quiver", "duckdb", "pyspark"]
SIZE_SUFFIXES = {"k": 2**10, "m": 2**20, "g": 2**30}


def parse_cap(text: str) -> int:
    """'2g', '512m' or a byte count as bytes."""
    text = text.strip().lower().removesuffix("b")
    try:
        if text and text[-1] in SIZE_SUFFIXES:
            return int(float(text[:-1]) * SIZE_SUFFIXES[text[-1]])
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a memory cap is a size such as 2g or 512m, not {text!r}") from None


def cap_name(cap: int) -> str:
    """A cap as people write it: 2 GB, 512 MB."""
    return f"{cap / 2**30:g} GB" if cap % 2**30 == 0 else f"{cap / 2**20:g} MB"


# --- the cap: a cgroup v1 memory group per child ------------------------------------------------------


@dataclass
class CapOutcome:
    """What the kernel saw of one capped child: its group's peak charge and whether the OOM killer struck."""

    peak_charged: int
    oom_kills: int


class MemoryCap:
    """A cgroup v1 memory group limited to `cap` bytes; `enter` (run in the child before exec) joins it."""

    def __init__(self, cap: int, name: str):
        if not (CGROUP_MEMORY / "memory.limit_in_bytes").exists():
            raise SystemExit(f"benchmarks.memory needs a cgroup v1 memory hierarchy at {CGROUP_MEMORY}")
        self.cap = cap
        self.path = CGROUP_MEMORY / "quiver-bench" / name

    def __enter__(self) -> MemoryCap:
        self.path.mkdir(parents=True, exist_ok=True)
        (self.path / "memory.limit_in_bytes").write_text(str(self.cap))
        memsw = self.path / "memory.memsw.limit_in_bytes"
        if memsw.exists():
            memsw.write_text(str(self.cap))
        return self

    def enter(self) -> None:
        """Put the calling process into the group (the child, between fork and exec)."""
        with open(self.path / "cgroup.procs", "w") as f:
            f.write(str(os.getpid()))

    def outcome(self) -> CapOutcome:
        peak = int((self.path / "memory.max_usage_in_bytes").read_text())
        kills = 0
        for line in (self.path / "memory.oom_control").read_text().splitlines():
            if line.startswith("oom_kill "):
                kills = int(line.split()[1])
        return CapOutcome(peak, kills)

    def __exit__(self, *exc: object) -> None:
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except OSError:  # processes still leaving the group
                time.sleep(0.1)


# --- one query in one capped child ---------------------------------------------------------------------


@dataclass
class QueryRun:
    """One query on one engine under one cap."""

    status: str  # finished | killed | failed | timed out
    seconds: float | None = None
    peak_rss: int = 0
    peak_charged: int = 0
    spilled: int | None = None
    error: str | None = None


def run_capped(engine: str, n: int, cap: int | None, args: argparse.Namespace, data: Path, work: Path,
               record: EngineRun) -> QueryRun:
    """Query n on `engine` in a fresh child held to `cap` (None: no cap); its answer is saved under `work`."""
    single = EngineRun(engine, log=record.log)
    name = f"{os.getpid()}-{engine}-q{n:02d}"

    def launch(memory: MemoryCap | None) -> tuple:
        ended = run_child(engine, [n], args, data, work, single, memory_cap=cap,
                          preexec_fn=memory.enter if memory else None)
        return ended, memory.outcome() if memory else None

    if cap is None:
        ended, kernel = launch(None)
    else:
        with MemoryCap(cap, name) as memory:
            ended, kernel = launch(memory)
    absorb(single, ended.events)
    record.queries.update(single.queries)
    record.version, record.settings = record.version or single.version, record.settings or single.settings
    event = single.queries.get(n, {})
    peak = max(single.hwm_total, single.sampled_peak)
    charged = kernel.peak_charged if kernel else 0
    if "median" in event:
        return QueryRun("finished", event["median"], peak, charged, event.get("spilled"))
    if kernel and kernel.oom_kills:
        record.queries[n] = {"query": n, "error": "killed by the kernel's OOM killer"}
        return QueryRun("killed", None, peak, charged, error="OOM kill")
    if ended.killed:
        record.queries[n] = {"query": n, "error": f"timed out after {args.timeout:.0f}s"}
        return QueryRun("timed out", None, peak, charged, error=f"over {args.timeout:.0f}s")
    error = event.get("error") or next((ev["error"] for ev in ended.events if ev["event"] == "fatal"),
                                       f"exit code {ended.returncode}")
    record.queries[n] = {"query": n, "error": error}
    return QueryRun("failed", None, peak, charged, error=error)


# --- the report ----------------------------------------------------------------------------------------


def _gib(n: int) -> str:
    return f"{n / 2**30:.2f}" if n else "—"


def _cell(q: QueryRun, wrong: bool) -> str:
    if q.status == "finished":
        return f"{q.seconds:.2f}" + (" ✗" if wrong else "")
    return q.status if q.status != "failed" else f"failed: `{q.error}`"


def _cap_table(cap: int | None, results: dict[str, dict[int, QueryRun]], queries: list[int],
               problems: dict) -> list[str]:
    engines = list(results)
    header = ["query"]
    for e in engines:
        header += [f"{e} s", f"{e} peak RSS GiB"] + ([f"{e} spilled GiB"] if e == "quiver" else [])
    if "quiver" in engines and "duckdb" in engines:
        header.append("quiver/duckdb")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for n in queries:
        row = [f"Q{n:02d}"]
        for e in engines:
            q = results[e][n]
            row += [_cell(q, (n, e) in problems), _gib(q.peak_rss)]
            if e == "quiver":
                row.append(f"{(q.spilled or 0) / 2**30:.2f}" if q.status == "finished" else "—")
        if "quiver" in engines and "duckdb" in engines:
            a, b = results["quiver"][n].seconds, results["duckdb"][n].seconds
            row.append(f"{a / b:.2f}" if a and b else "—")
        lines.append("| " + " | ".join(row) + " |")
    return lines


def _summary(cap: int | None, results: dict[str, dict[int, QueryRun]], queries: list[int],
             problems: dict) -> list[str]:
    """Per engine: queries finished with the right answer, the largest peak, the geometric mean."""
    common = [n for n in queries if all(results[e][n].status == "finished" for e in results)]
    lines = []
    means = {e: geomean([results[e][n].seconds or 0 for n in common]) for e in results}
    for e, per in results.items():
        done = [n for n in queries if per[n].status == "finished"]
        wrong = [n for n in done if (n, e) in problems]
        killed = [f"Q{n:02d}" for n in queries if per[n].status == "killed"]
        other = [f"Q{n:02d} {per[n].status}" for n in queries if per[n].status in ("failed", "timed out")]
        peak = max((q.peak_rss for q in per.values()), default=0)
        text = (f"- **{e}**: {len(done) - len(wrong)} of {len(queries)} finished with the reference's answer"
                + (f" ({len(wrong)} wrong)" if wrong else "")
                + (f"; killed: {', '.join(killed)}" if killed else "")
                + (f"; {', '.join(other)}" if other else "")
                + f"; largest peak RSS {_gib(peak)} GiB")
        if means[e]:
            text += f"; geometric mean {means[e]:.2f} s over the {len(common)} queries every engine finished"
        if e == "quiver":
            spilled = sum(q.spilled or 0 for q in per.values())
            text += f"; {spilled / 2**30:.2f} GiB spilled in all"
        lines.append(text + ".")
    if means.get("quiver") and means.get("duckdb"):
        lines.append(f"- Quiver's geometric mean over DuckDB's: **{means['quiver'] / means['duckdb']:.2f}×**.")
    return lines


def section_key(sf: float, caps: list[int | None]) -> str:
    """The marker of one run's section: its scale factor and caps, so capped and uncapped runs stand apart."""
    names = ["none" if c is None else (f"{c / 2**30:g}g" if c % 2**30 == 0 else f"{c / 2**20:g}m") for c in caps]
    return f"benchmarks.memory.{scale_name(sf)}.{'-'.join(names)}"


def render(sf: float, caps: list[int | None], all_results: dict, all_problems: dict, queries: list[int],
           command: str, data_mib: float) -> str:
    key = section_key(sf, caps)
    m = machine()
    lines = [
        f"<!-- {key}:begin -->",
        f"## TPC-H SF{sf:g} under memory caps" if any(c is not None for c in caps)
        else f"## TPC-H SF{sf:g}, each query in a fresh process, no memory cap",
        "",
        f"Generated by `{command}` on {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M UTC}. Each query runs "
        "once in a fresh process that the kernel holds to the cap: a cgroup v1 memory group per process "
        "(`memory.limit_in_bytes` and `memory.memsw.limit_in_bytes` at the cap), entered before the engine "
        "starts, so the JVM PySpark launches is held too. *killed* is the kernel's OOM killer ending it. "
        "DuckDB gets `memory_limit` at 70% of the cap and PySpark a driver heap of 60%; Quiver is told "
        "nothing and budgets `quiver.memory.fraction` (0.6) of the cgroup's limit less 300 MiB, which it reads itself. "
        "*Peak RSS* is the larger of the process tree's sampled RSS and its summed high-water marks (the "
        "cgroup's own peak also charges the page cache of the Parquet files read, so it is not used). "
        "Seconds include registering the tables and collecting the answer as Arrow, not the engine's start. "
        "✗ marks an answer that differs from the reference's (DuckDB's under the same cap where it finished).",
        "",
    ]
    for cap in caps:
        results, problems = all_results[cap], all_problems[cap]
        lines += [f"### {'no cap' if cap is None else 'cap ' + cap_name(cap)}", ""]
        lines += _cap_table(cap, results, queries, problems) + [""]
        lines += _summary(cap, results, queries, problems) + [""]
        if problems:
            lines += [f"- ✗ {e} / Q{n:02d}: {why}" for (n, e), why in sorted(problems.items())] + [""]
    lines += [
        f"- **Data:** TPC-H SF{sf:g} from `tpchgen-cli`, one Parquet file per table ({data_mib:.0f} MiB).",
        f"- **Machine:** {m['cpu']}, {m['cores']} cores, {m['ram']} RAM, {m['os']}, Python {m['python']}.",
        f"- Answers compared to {REL_TOL:g} relative, in order where the query orders its rows.",
        "",
        f"<!-- {key}:end -->",
    ]
    return "\n".join(lines)


# --- entry point ---------------------------------------------------------------------------------------


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory", description=__doc__.splitlines()[0])
    parser.add_argument("--sf", type=float, default=10.0, help="TPC-H scale factor (default 10)")
    parser.add_argument("--caps", default="2g,3g",
                        help="comma-separated memory caps, e.g. 2g,3g; 'none' runs uncapped (default 2g,3g)")
    parser.add_argument("--engines", type=_engine_list, default=DEFAULT_ENGINES, help="comma-separated")
    parser.add_argument("--queries", type=_query_list, default=list(range(1, 23)), help="e.g. 1,3,5 or 1-10")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds one query may take")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="markdown file to update, or '-' to only print")
    parser.add_argument("--sample-s", type=float, default=0.2, help="RSS sampling interval, seconds")
    args = parser.parse_args(argv)
    args.cap_list = [None if c.strip() == "none" else parse_cap(c) for c in args.caps.split(",") if c.strip()]
    # What benchmarks.tpch's child needs: one run of the one query, timed.
    args.repeat, args.slow_s, args.form = 0, 0.0, "sql"
    return args


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if os.geteuid() != 0 and any(c is not None for c in args.cap_list):
        raise SystemExit("benchmarks.memory makes cgroups, which needs root")
    data = ensure_tables(args.sf)
    data_dir = data["lineitem"].parent
    all_results: dict = {}
    all_problems: dict = {}
    root = RUNS_ROOT / f"memory-{scale_name(args.sf)}"
    shutil.rmtree(root, ignore_errors=True)
    for cap in args.cap_list:
        work = root / ("none" if cap is None else str(cap))
        work.mkdir(parents=True)
        results: dict[str, dict[int, QueryRun]] = {}
        records: dict[str, EngineRun] = {}
        for engine in args.engines:
            record = records[engine] = EngineRun(engine, log=work / f"{engine}.log")
            results[engine] = {}
            for n in args.queries:
                print(f"\n=== {'no cap' if cap is None else cap_name(cap)} / {engine} / Q{n:02d} ===", flush=True)
                q = results[engine][n] = run_capped(engine, n, cap, args, data_dir, work, record)
                print(f"--> {q.status} {q.seconds or 0:.2f}s peak {_gib(q.peak_rss)} GiB "
                      f"spilled {q.spilled}", flush=True)
        all_problems[cap], _ = check_agreement(records, args.queries, work)
        all_results[cap] = results
    command = "python -m benchmarks.memory " + shlex.join(argv)
    data_mib = sum(p.stat().st_size for p in data.values()) / 2**20
    section = render(args.sf, args.cap_list, all_results, all_problems, args.queries, command, data_mib)
    print("\n" + section)
    if args.out != "-":
        write_section(Path(args.out), section, section_key(args.sf, args.cap_list))
    return 1 if any(all_problems.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
