"""Side by side: Quiver, pandas, DuckDB, Polars and PySpark on five core workloads.

    python -m benchmarks.core --rows 10000000 [--engines quiver,pandas,duckdb,polars,pyspark]
                              [--repeat 3] [--out benchmarks/RESULTS.md]

Each engine runs in its own child process, one after another, so their memory never
mixes; the parent times nothing itself but samples each child's process tree for memory,
checks that the engines agree, and writes a markdown section into ``--out``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import proctree
from benchmarks.core_engines import ENGINES, WORKLOADS
from benchmarks.datagen import DEFAULT_CACHE, DataSpec, ensure_dataset

SECTION = "benchmarks.core"
TITLE = "Core workloads: Quiver vs pandas, DuckDB, Polars, PySpark"
REPO = Path(__file__).resolve().parent.parent
# When several peers agree, the first one here that succeeded is the reference.
REFERENCE_ORDER = ["duckdb", "polars", "pandas", "pyspark", "quiver"]
REL_TOL = 1e-6


@dataclass
class EngineRun:
    """What one child reported, plus what the parent saw of it."""

    name: str
    status: str = "not run"  # ok | partial | failed | timed out
    error: str | None = None
    version: str | None = None
    startup_s: float | None = None
    wall_s: float | None = None
    workloads: dict[str, dict] = field(default_factory=dict)
    processes: list[dict] = field(default_factory=list)
    sampled_peak: int = 0
    load_after: float | None = None
    log: Path | None = None

    @property
    def hwm_total(self) -> int:
        return sum(p["peak_rss"] for p in self.processes)

    def seconds(self, workload: str) -> float | None:
        return self.workloads.get(workload, {}).get("median")


# --- running the children ------------------------------------------------------------


def run_engine(name: str, ds, args, log_dir: Path) -> EngineRun:
    events = log_dir / f"core-{name}.events.jsonl"
    for stale in log_dir.glob(f"{name}-*.parquet"):
        stale.unlink()
    cmd = [
        sys.executable, "-m", "benchmarks.core_engines",
        "--engine", name, "--fact", str(ds.fact), "--dim", str(ds.dim),
        "--repeat", str(args.repeat), "--slow-s", str(args.slow_s),
        "--events", str(events), "--workloads", ",".join(args.workloads),
        "--dump-dir", str(log_dir),
    ]
    return spawn(EngineRun(name), cmd, log_dir / f"core-{name}.log", events,
                 args.timeout, args.sample_s, len(args.workloads))


def spawn(run: EngineRun, cmd: list[str], log_path: Path, events: Path, timeout: float,
          sample_s: float, n_workloads: int) -> EngineRun:
    """Run one engine's child ``cmd``, echoing and logging its output, sampling its process
    tree's memory and killing it after ``timeout`` seconds; fill ``run`` from its events.

    Shared with the other benchmarks whose children speak ``core_engines``' events.
    """
    name = run.name
    run.log = log_path
    events.unlink(missing_ok=True)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    print(f"\n=== {name} ===", flush=True)
    t0 = time.perf_counter()
    with run.log.open("w") as log:
        # A session of its own, so a timeout can end the child and everything it
        # started (a JVM) by process group, and nothing else.
        child = subprocess.Popen(
            cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=log, text=True,
            start_new_session=True,
        )
        timed_out = threading.Event()

        def kill_on_timeout() -> None:
            timed_out.set()
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, kill_on_timeout)
        timer.start()
        with proctree.RssSampler(child.pid, sample_s) as sampler:
            for line in child.stdout:
                print(line, end="", flush=True)
                log.write(line)
            child.wait()
        timer.cancel()
    run.wall_s = time.perf_counter() - t0
    run.load_after = os.getloadavg()[0]
    run.sampled_peak = sampler.peak
    _read_events(run, events)
    if timed_out.is_set():
        run.status, run.error = "timed out", f"killed after {timeout:.0f}s"
    elif run.status == "not run":
        run.status = "failed"
        run.error = run.error or f"child exited with code {child.returncode} (see {_rel(run.log)})"
    elif run.status == "ok" and len(run.workloads) < n_workloads:
        run.status = "partial"
    if run.status != "ok":
        print(f"[{name}] {run.status.upper()}: {run.error or 'some workloads failed'}", flush=True)
    return run


def _read_events(run: EngineRun, events: Path) -> None:
    if not events.exists():
        return
    for line in events.read_text().splitlines():
        ev = json.loads(line)
        if ev["event"] == "fatal":
            run.status, run.error = "failed", ev["error"]
        elif ev["event"] == "startup":
            run.status, run.startup_s, run.version = "ok", ev["seconds"], ev["version"]
        elif ev["event"] == "workload":
            run.workloads[ev["name"]] = ev
            if "error" in ev:
                run.status = "partial"
        elif ev["event"] == "memory":
            run.processes = ev["processes"]


# --- checking that engines agree -----------------------------------------------------


def _close(a, b) -> bool:
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, float) and math.isnan(a) or isinstance(b, float) and math.isnan(b):
            return isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-9)
    return a == b


def compare(ref: dict, other: dict) -> str | None:
    """Why two result summaries differ, or None when they agree."""
    if ref["rows"] != other["rows"]:
        return f"{other['rows']} rows, reference has {ref['rows']}"
    if sorted(ref["columns"]) != sorted(other["columns"]):
        return f"columns {other['columns']}, reference has {ref['columns']}"
    for name, value in ref["sums"].items():
        if name not in other["sums"]:
            return f"no numeric column {name!r}"
        if not _close(value, other["sums"][name]):
            return f"sum({name}) = {other['sums'][name]!r}, reference has {value!r}"
    if "sample" in ref and "sample" in other:
        # Align columns by name: engines may order them differently.
        order = [other["columns"].index(c) for c in ref["columns"]]
        for i, (r, o) in enumerate(zip(ref["sample"], other["sample"])):
            o = [o[j] for j in order]
            if not all(_close(x, y) for x, y in zip(r, o)):
                return f"row {i} is {o}, reference has {r}"
    if "file" in ref and "file" in other:
        return compare_tables(Path(ref["file"]), Path(other["file"]), ref["key_columns"])
    return None


def compare_tables(ref_path: Path, other_path: Path, keys: list[str]) -> str | None:
    """Compare two results row by row, both sorted by ``keys``."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    def numeric(t) -> bool:
        return pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)

    ref = pq.read_table(ref_path)
    other = pq.read_table(other_path).select(ref.column_names)
    if keys:
        ref = ref.sort_by([(k, "ascending") for k in keys])
        other = other.sort_by([(k, "ascending") for k in keys])
    for name in ref.column_names:
        a, b = ref[name], other[name]
        if numeric(a.type) and numeric(b.type):
            x = a.cast(pa.float64()).to_numpy()
            y = b.cast(pa.float64()).to_numpy()
            bad = ~np.isclose(x, y, rtol=REL_TOL, atol=1e-9, equal_nan=True)
        else:
            x, y = a.to_pylist(), b.to_pylist()
            bad = np.array([u != v for u, v in zip(x, y)], dtype=bool)
        if bad.any():
            i = int(np.argmax(bad))
            got, want = (v.item() if hasattr(v, "item") else v for v in (y[i], x[i]))
            return f"column {name!r}, row {i} sorted by {keys}: {got!r}, reference has {want!r}"
    return None


def check_agreement(runs: dict[str, EngineRun], workloads: list[str],
                    reference_order: list[str] = REFERENCE_ORDER) -> dict[tuple[str, str], str]:
    """Map (workload, engine) -> how its result differs from the reference engine's
    (the first of ``reference_order`` that finished the workload, else any that did)."""
    problems: dict[tuple[str, str], str] = {}
    for w in workloads:
        done = {n: r.workloads[w]["summary"] for n, r in runs.items()
                if w in r.workloads and "summary" in r.workloads[w]}
        ref_name = next((n for n in [*reference_order, *done] if n in done), None)
        for n, summary in done.items():
            if n != ref_name and (why := compare(done[ref_name], summary)):
                problems[(w, n)] = f"{why} ({ref_name} is the reference)"
    return problems


# --- the report ----------------------------------------------------------------------


def _gib(n: int) -> str:
    return f"{n / 2**30:.2f} GiB" if n else "—"


def _geomean(xs: list[float]) -> float | None:
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def _rel(p: Path | None) -> str:
    if p is None:
        return "—"
    try:
        return str(p.relative_to(REPO))
    except ValueError:
        return str(p)


def machine() -> dict[str, str]:
    info = {"cores": str(os.cpu_count()), "cpu": platform.processor() or "unknown", "ram": "unknown"}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                info["ram"] = f"{int(line.split()[1]) / 2**20:.1f} GiB"
                break
    except OSError:
        pass
    info["usable_cores"] = str(len(os.sched_getaffinity(0))) if hasattr(os, "sched_getaffinity") else info["cores"]
    info["os"] = f"{platform.system()} {platform.release()}"
    info["python"] = platform.python_version()
    return info


def render(runs: dict[str, EngineRun], problems, args, ds, meta: dict) -> str:
    engines = list(runs)
    peers = [e for e in engines if e != "quiver"]
    has_quiver = "quiver" in runs
    lines = [
        f"<!-- {SECTION}:begin -->",
        f"## {TITLE}",
        "",
        f"Generated by `{meta['command']}` on {meta['date']}. Seconds per workload, the "
        f"median of {args.repeat} runs after one warm-up; every run reads Parquet and "
        "materializes the whole result in the client (Arrow table for Quiver, PySpark and "
        "DuckDB; polars / pandas DataFrame). "
        + ("`quiver/X` is Quiver's time over X's: above 1 means Quiver is slower. " if has_quiver else "")
        + "✗ marks a result that disagrees with the reference engine.",
        "",
    ]
    header = ["workload", *engines, "fastest"]
    ratio_cols = [f"quiver/{p}" for p in peers] if has_quiver else []
    header += ratio_cols
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    footnotes: list[str] = []

    for w in args.workloads:
        row = [w] + [result_cell(runs[e], w, args.repeat, (w, e) in problems, footnotes, "{:.3f}".format)
                     for e in engines]
        timed = {e: runs[e].seconds(w) for e in engines if runs[e].seconds(w) is not None}
        row.append(min(timed, key=timed.get) if timed else "—")
        q = runs["quiver"].seconds(w) if has_quiver else None
        for p in peers if has_quiver else []:
            s = runs[p].seconds(w)
            row.append(f"{q / s:.2f}" if q is not None and s else "—")
        lines.append("| " + " | ".join(row) + " |")

    # Geometric means: per engine over the workloads it finished; ratios over the
    # workloads both Quiver and the peer finished.
    geo = ["**geomean**"]
    for e in engines:
        xs = [runs[e].seconds(w) for w in args.workloads if runs[e].seconds(w) is not None]
        g = _geomean(xs)
        mark = "" if len(xs) == len(args.workloads) else f" ({len(xs)}/{len(args.workloads)})"
        geo.append(f"{g:.3f}{mark}" if g else "—")
    geo.append("")
    for p in peers if has_quiver else []:
        pairs = [(runs["quiver"].seconds(w), runs[p].seconds(w)) for w in args.workloads]
        g = _geomean([q / s for q, s in pairs if q is not None and s])
        geo.append(f"{g:.2f}" if g else "—")
    lines.append("| " + " | ".join(geo) + " |")
    lines.append("")

    lines += ["| engine | version | status | start-up s | peak RSS (tree, sampled) "
              "| peak RSS (sum of per-process peaks) | processes | wall s | load after |",
              "|---|---|---|---|---|---|---|---|---|"]
    for e, r in runs.items():
        procs = ", ".join(sorted({p["name"] for p in r.processes})) or "—"
        status = r.status if not r.error else f"{r.status}: `{r.error}`"
        lines.append(
            f"| {e} | {r.version or '—'} | {status} | "
            f"{f'{r.startup_s:.2f}' if r.startup_s is not None else '—'} | "
            f"{_gib(r.sampled_peak) if r.startup_s is not None else '—'} | {_gib(r.hwm_total)} | {procs} | "
            f"{r.wall_s:.1f} | {r.load_after:.2f} |"
        )
    lines.append("")

    if problems:
        lines.append("**Results that disagree:**")
        lines.append("")
        lines += [f"- ✗ {e} / {w}: {why}" for (w, e), why in sorted(problems.items())]
    else:
        checked = sum(1 for r in runs.values() for ev in r.workloads.values() if "summary" in ev)
        lines.append(f"All {checked} finished results agree with the reference engine's "
                     f"(row counts, column sums, key-weighted sums, and every row sorted by key; "
                     f"floats to {REL_TOL:g} relative).")
    lines.append("")
    if footnotes:
        lines += [f"[^{i}]: {t}" for i, t in enumerate(footnotes, 1)] + [""]

    m = meta["machine"]
    lines += [
        "Workloads (the same on every engine: PySpark DataFrame code shared by Quiver and "
        "PySpark, SQL for DuckDB, lazy polars, pandas reading only the columns it needs):",
        "",
        *[f"- `{w}`: {WORKLOADS[w][0]}" for w in args.workloads],
        "",
        f"- **Data:** fact {ds.spec.rows:,} rows in {ds.spec.files} Parquet files "
        f"({meta['fact_mib']:.0f} MiB, snappy), dim {ds.spec.keys:,} rows "
        f"({meta['dim_mib']:.0f} MiB); `benchmarks/datagen.py`, seed {ds.spec.seed}.",
        f"- **Machine:** {m['cpu']}, {m['cores']} cores ({m['usable_cores']} usable), "
        f"{m['ram']} RAM, {m['os']}, Python {m['python']}, pyarrow {meta['pyarrow']}. "
        f"Load average (1/5/15 min) when the run started: {meta['load']}; *load after* "
        "is the 1-minute load average as each engine finished (the machine has "
        f"{m['cores']} cores, so load above that means the run shared them).",
        "- **Settings:** Quiver and PySpark `local[2]` with `spark.sql.shuffle.partitions=4`; "
        "PySpark driver memory 6g, UI off, Arrow transfer on; DuckDB threads=2; polars and "
        "pandas at their defaults. Start-up is engine import plus session creation "
        "(JVM launch for PySpark), timed in the child after pyarrow is loaded.",
        "- **Memory:** *sampled* is the largest total RSS of the child's process tree "
        f"seen every {args.sample_s}s; *sum of per-process peaks* adds each process's "
        "kernel high-water mark (VmHWM), an upper bound (the peaks need not coincide).",
        "",
        f"<!-- {SECTION}:end -->",
    ]
    return "\n".join(lines)


def write_section(out: Path, section: str, name: str = SECTION) -> None:
    """Put ``section`` into ``out``, replacing only the previous section between ``name``'s markers.

    ``name`` defaults to this benchmark's own; other benchmarks (TPC-H) pass theirs.
    """
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    text = out.read_text() if out.exists() else (
        "# Benchmark results\n\nEach section is written by its benchmark script; "
        "rerunning a benchmark replaces only its own section.\n\n"
    )
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        tail = rest.split(end, 1)[1]
        text = head + section + tail
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(text)
    tmp.replace(out)


# --- entry point ---------------------------------------------------------------------


def result_cell(run: EngineRun, workload: str, repeat: int, disagrees: bool, footnotes: list[str],
                show: Callable[[float], str]) -> str:
    """One engine's table cell for one workload: `show(median seconds)`, or why there is none (an error
    goes to `footnotes`); marked when it had one run only or disagrees with the reference."""
    ev = run.workloads.get(workload)
    if ev is None:
        return run.status if run.status in ("failed", "timed out") else "—"
    if "error" in ev:
        footnotes.append(f"{run.name} / {workload}: `{ev['error']}`")
        return f"failed[^{len(footnotes)}]"
    txt = show(ev["median"])
    if len(ev["times"]) < repeat:
        txt += " (1 run)"
    if disagrees:
        txt += " ✗"
    return txt


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """The options every side-by-side benchmark takes: where results go, data cache, timeouts, sampling."""
    parser.add_argument("--out", default=str(Path(__file__).parent / "RESULTS.md"),
                        help="markdown file to update, or '-' to only print")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per engine")
    parser.add_argument("--slow-s", type=float, default=300.0,
                        help="a warm-up slower than this gets one timed run, not --repeat")
    parser.add_argument("--sample-s", type=float, default=0.2, help="RSS sampling interval")


def parse_run_arguments(parser: argparse.ArgumentParser, argv: list[str], engines: list[str],
                        workloads: list[str]) -> argparse.Namespace:
    """Parse `argv`; --engines and --workloads become lists, each name checked against the known ones."""
    args = parser.parse_args(argv)
    args.engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    args.workloads = [w.strip() for w in args.workloads.split(",") if w.strip()]
    unknown = [e for e in args.engines if e not in engines] + [w for w in args.workloads if w not in workloads]
    if unknown:
        parser.error(f"unknown engine or workload {unknown}; engines: {engines}, workloads: {workloads}")
    return args


def run_meta(module: str, argv: list[str]) -> dict:
    """What a results section records about its run: the exact command, when, the machine and its load."""
    import pyarrow

    return {
        "command": f"python -m {module} " + shlex.join(argv),
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "pyarrow": pyarrow.__version__,
        "load": " / ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--keys", type=int, default=1_000_000, help="distinct keys = dim rows")
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--repeat", type=int, default=3)
    add_run_arguments(parser)
    args = parse_run_arguments(parser, argv, ENGINES, list(WORKLOADS))
    meta = run_meta("benchmarks.core", argv)
    ds = ensure_dataset(DataSpec(rows=args.rows, keys=args.keys), args.cache)
    meta["fact_mib"] = sum(p.stat().st_size for p in ds.fact.glob("*.parquet")) / 2**20
    meta["dim_mib"] = sum(p.stat().st_size for p in ds.dim.glob("*.parquet")) / 2**20
    log_dir = args.cache / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)

    runs = {e: run_engine(e, ds, args, log_dir) for e in args.engines}
    problems = check_agreement(runs, args.workloads)
    for (w, e), why in sorted(problems.items()):
        bar = "!" * 78
        print(f"\n{bar}\n!!! RESULT MISMATCH: {e} on {w}: {why}\n{bar}", file=sys.stderr, flush=True)

    section = render(runs, problems, args, ds, meta)
    print("\n" + section)
    if args.out != "-":
        write_section(Path(args.out), section)
        print(f"\nwrote section '{TITLE}' to {args.out}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
