"""Run the TPC-H queries on each engine in a child process of its own, check the answers agree, report.

The parent (``run_benchmark``) starts one child per engine, one after another, so their memory never
mixes; it samples each child's process tree for memory, kills a child whose run of a query outlives
``--timeout`` (then starts a fresh one for the queries left), compares every answer with the reference
engine's, and renders a markdown section. The child (``python -m benchmarks.tpch.child``, started by the
parent, not by hand) times start-up and every query, and writes its answers as Arrow IPC files.
"""
from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import math
import os
import shlex
import signal
import statistics
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

# pyarrow is the harness's own dependency (answers, checks), loaded before any start-up is timed.
import pyarrow as pa

from benchmarks import proctree
from benchmarks.core_engines import emit, first_line
from benchmarks.tpch.answers import answer_difference
from benchmarks.tpch.datagen import TABLES, ensure_tables, scale_name
from benchmarks.tpch.queries import has_order_by

REPO = Path(__file__).resolve().parents[2]
RUNS_ROOT = REPO / "benchmarks" / ".data" / "runs"
# The first of these that answered a query is the reference its other answers are checked against.
REFERENCE_ORDER = ("duckdb", "polars", "pyspark", "quiver")
REL_TOL = 1e-6
DISPLAY = {"quiver": "Quiver", "duckdb": "DuckDB", "polars": "Polars", "pyspark": "PySpark", "datafusion": "DataFusion",
           "quiver-ray": "Quiver on Ray"}


# --- the child: one engine, timed -----------------------------------------------------------------


def answer_path(answers: Path, engine: str, n: int) -> Path:
    """Where an engine's answer to query n is kept for the parent's comparison."""
    return answers / f"{engine}-q{n:02d}.arrow"


def _save(table: pa.Table, path: Path) -> None:
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


def _time_query(engine: Any, n: int, repeat: int, slow_s: float, events: Path) -> tuple[Any, float, list[float]]:
    """A warm-up run of query n, then `repeat` timed runs (one if the warm-up was slower than `slow_s`);
    `repeat` 0 times the first run alone (benchmarks.memory, where a fresh process runs each query once)."""
    gc.collect()
    emit(events, event="run", query=n, index=0)
    t0 = time.perf_counter()
    result = engine.run(n)
    warmup = time.perf_counter() - t0
    if repeat == 0:
        return result, warmup, [warmup]
    times: list[float] = []
    for index in range(1, (repeat if warmup < slow_s else 1) + 1):
        del result
        gc.collect()
        emit(events, event="run", query=n, index=index)
        t0 = time.perf_counter()
        result = engine.run(n)
        times.append(time.perf_counter() - t0)
    return result, warmup, times


def _run_query(engine: Any, n: int, args: argparse.Namespace) -> None:
    """Time query n and save its answer, reporting a failure as an event rather than raising."""
    try:
        spilled_before = engine.spilled_bytes()
        result, warmup, times = _time_query(engine, n, args.repeat, args.slow_s, args.events)
        spilled_after = engine.spilled_bytes()
        table = engine.to_arrow(result)
        del result
        _save(table, answer_path(args.answers, engine.name, n))
    except Exception as exc:  # noqa: BLE001 - any failure of a query is reported, not fatal
        traceback.print_exc()
        emit(args.events, event="query", query=n, error=first_line(exc))
        print(f"[{engine.name}] Q{n:02d}: FAILED {first_line(exc)}", flush=True)
        return
    median = statistics.median(times)
    spilled = None if spilled_after is None else spilled_after - (spilled_before or 0)
    emit(args.events, event="query", query=n, times=times, warmup=warmup, median=median, rows=table.num_rows,
         spilled=spilled)
    runs = ", ".join(f"{x:.3f}" for x in times)
    print(f"[{engine.name}] Q{n:02d}: median {median:.3f}s (warm-up {warmup:.3f}s; runs {runs}; "
          f"{table.num_rows} rows)", flush=True)


def child_main(argv: list[str] | None = None, imported_s: float = 0.0) -> int:
    """Start one engine, time it on each query, emit events; the parent's side of this is `_run_child`.

    `imported_s` is the time `benchmarks.tpch.child` spent importing the engine before calling this.
    """
    from benchmarks.tpch import engines

    parser = argparse.ArgumentParser(description="one engine of benchmarks.tpch (child process)")
    parser.add_argument("--engine", required=True, choices=engines.ENGINES)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--queries", required=True)
    parser.add_argument("--repeat", type=int, required=True)
    parser.add_argument("--slow-s", type=float, required=True)
    parser.add_argument("--form", choices=engines.FORMS, required=True)
    parser.add_argument("--events", type=Path, required=True)
    parser.add_argument("--answers", type=Path, required=True)
    parser.add_argument("--memory-cap", type=int, default=None,
                        help="bytes the kernel holds this process tree to (benchmarks.memory), to size the engine")
    args = parser.parse_args(argv)
    paths = {t: str(args.data / f"{t}.parquet") for t in TABLES}
    t0 = time.perf_counter()
    try:
        engine = engines.start(args.engine, paths, args.form, args.memory_cap)
    except Exception as exc:  # noqa: BLE001 - report any start-up failure, ImportError included
        traceback.print_exc()
        emit(args.events, event="fatal", error=first_line(exc))
        return 1
    startup = time.perf_counter() - t0 + imported_s
    emit(args.events, event="startup", seconds=startup, version=engine.version, settings=engine.settings)
    print(f"[{engine.name}] started in {startup:.2f}s ({engine.version})", flush=True)
    for n in (int(q) for q in args.queries.split(",")):
        _run_query(engine, n, args)
    # High-water marks are read before closing, while a JVM child is still alive.
    emit(args.events, event="memory", processes=proctree.tree_hwm(os.getpid()))
    try:
        engine.close()
    except Exception as exc:  # noqa: BLE001 - the timings are in; a failed close is only noted
        print(f"[{engine.name}] close failed: {first_line(exc)}", flush=True)
    return 0


# --- the parent: children, watchdog, memory --------------------------------------------------------


@dataclass
class EngineRun:
    """What an engine's children reported, plus what the parent saw of them."""

    name: str
    status: str = "not run"  # ok | partial | failed
    error: str | None = None
    version: str | None = None
    settings: str | None = None
    startup_s: float | None = None
    starts: int = 0
    rounds: int = 1
    queries: dict[int, dict] = field(default_factory=dict)
    hwm_total: int = 0
    sampled_peak: int = 0
    wall_s: float = 0.0
    load_after: float = 0.0
    processes: set[str] = field(default_factory=set)
    log: Path | None = None

    def seconds(self, n: int) -> float | None:
        """The median time of query n, or None when it did not finish."""
        return self.queries.get(n, {}).get("median")


@dataclass
class ChildExit:
    """How one child ended: its exit code, whether the watchdog killed it, its events."""

    returncode: int
    killed: bool
    events: list[dict]


def _child_command(name: str, queries: list[int], args: argparse.Namespace, data: Path, work: Path,
                   memory_cap: int | None) -> list[str]:
    return [
        sys.executable, "-m", "benchmarks.tpch.child",
        "--engine", name, "--data", str(data), "--queries", ",".join(map(str, queries)),
        "--repeat", str(args.repeat), "--slow-s", str(args.slow_s), "--form", args.form,
        "--events", str(work / f"{name}.events.jsonl"), "--answers", str(work),
        *([] if memory_cap is None else ["--memory-cap", str(memory_cap)]),
    ]


class _Watchdog:
    """Kills a child's process group when no event (start-up, a run begun) has come for `timeout` seconds.

    Before killing, it reads the tree's high-water marks, which die with the processes.
    """

    def __init__(self, child: subprocess.Popen, events: Path, timeout: float) -> None:
        self.child, self.events, self.timeout = child, events, timeout
        self.killed = False
        self.processes: list[dict] = []
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        start = time.time()
        while self.child.poll() is None:
            last = max(start, self.events.stat().st_mtime if self.events.exists() else start)
            if time.time() - last > self.timeout:
                self.processes = proctree.tree_hwm(self.child.pid)
                self.killed = True
                try:
                    os.killpg(self.child.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                return
            time.sleep(0.25)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._thread.join()


def _end_group(child: subprocess.Popen) -> None:
    """Kill what is left of the child's process group: a JVM it started, or the child itself on Ctrl-C."""
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_child(name: str, queries: list[int], args: argparse.Namespace, data: Path, work: Path,
              run: EngineRun, memory_cap: int | None = None,
              preexec_fn: Callable[[], None] | None = None) -> ChildExit:
    """One child over `queries`: stream its output, sample its memory, enforce the per-run timeout.
    `memory_cap` tells the engine the bytes it is held to; `preexec_fn` runs in the child before the engine
    starts (benchmarks.memory puts the child in its cgroup there)."""
    events = work / f"{name}.events.jsonl"
    events.unlink(missing_ok=True)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    with run.log.open("a") as log:
        # A session of its own, so a timeout ends the child and all it started (a JVM) by process group.
        child = subprocess.Popen(_child_command(name, queries, args, data, work, memory_cap), cwd=REPO, env=env,
                                 stdout=subprocess.PIPE, stderr=log, text=True, start_new_session=True,
                                 preexec_fn=preexec_fn)
        try:
            with _Watchdog(child, events, args.timeout) as watchdog, \
                    proctree.RssSampler(child.pid, args.sample_s) as sampler:
                for line in child.stdout:
                    print(line, end="", flush=True)
                    log.write(line)
                child.wait()
        finally:
            _end_group(child)
    run.sampled_peak = max(run.sampled_peak, sampler.peak)
    found = [json.loads(line) for line in events.read_text().splitlines()] if events.exists() else []
    if watchdog.killed:
        found.append({"event": "memory", "processes": watchdog.processes})
    return ChildExit(child.returncode, watchdog.killed, found)


def absorb(run: EngineRun, events: list[dict]) -> None:
    """Fold one child's events into the engine's record."""
    for ev in events:
        if ev["event"] == "fatal":
            run.status, run.error = "failed", ev["error"]
        elif ev["event"] == "startup":
            run.starts += 1
            if run.startup_s is None:
                run.startup_s, run.version, run.settings = ev["seconds"], ev["version"], ev["settings"]
        elif ev["event"] == "query":
            run.queries[ev["query"]] = ev
        elif ev["event"] == "memory":
            run.hwm_total = max(run.hwm_total, sum(p["peak_rss"] for p in ev["processes"]))
            run.processes |= {p["name"] for p in ev["processes"]}


def _in_flight(events: list[dict], done: dict[int, dict]) -> int | None:
    """The query a child was running when it ended early, if any."""
    runs = [ev["query"] for ev in events if ev["event"] == "run"]
    return runs[-1] if runs and runs[-1] not in done else None


def run_engine(name: str, args: argparse.Namespace, data: Path, work: Path) -> EngineRun:
    """Run every query on one engine, restarting its child after a query that timed out or crashed it."""
    run = EngineRun(name, log=work / f"{name}.log")
    run.log.unlink(missing_ok=True)
    for stale in work.glob(f"{name}-q*.arrow"):
        stale.unlink()
    print(f"\n=== {name} ===", flush=True)
    t0 = time.perf_counter()
    pending = list(args.queries)
    while pending:
        ended = run_child(name, pending, args, data, work, run)
        absorb(run, ended.events)
        if run.status == "failed" or not any(ev["event"] == "startup" for ev in ended.events):
            run.status = "failed"
            run.error = run.error or (f"start-up took over {args.timeout:.0f}s" if ended.killed
                                      else f"child exited with code {ended.returncode} (see {_rel(run.log)})")
            break
        pending = [n for n in pending if n not in run.queries]
        stuck = _in_flight(ended.events, run.queries)
        if not pending or stuck is None:
            break
        why = (f"timed out: a run took over {args.timeout:.0f}s" if ended.killed
               else f"the engine's process died (exit code {ended.returncode})")
        run.queries[stuck] = {"query": stuck, "error": why}
        print(f"[{name}] Q{stuck:02d}: {why}; restarting {name} for the queries left", flush=True)
        pending = [n for n in pending if n != stuck]
    run.wall_s = time.perf_counter() - t0
    run.load_after = os.getloadavg()[0]
    if run.status != "failed":
        run.status = "ok" if all(run.seconds(n) is not None for n in args.queries) else "partial"
    if run.status != "ok":
        print(f"[{name}] {run.status.upper()}: {run.error or 'some queries failed'}", flush=True)
    return run


def merge_rounds(earlier: EngineRun | None, later: EngineRun) -> EngineRun:
    """One engine's record over several rounds: each query's timed runs pooled (its median taken
    over all of them), a failure in any round kept, memory and start-up at their worst."""
    if earlier is None:
        return later
    for n, ev in later.queries.items():
        before = earlier.queries.get(n)
        if before is None or "error" in ev or "error" in before:
            earlier.queries[n] = ev if before is None or "error" in ev else before
            continue
        times = before["times"] + ev["times"]
        earlier.queries[n] = {**ev, "times": times, "median": statistics.median(times)}
    if later.status != "ok":
        earlier.status, earlier.error = later.status, later.error or earlier.error
    earlier.starts += later.starts
    earlier.rounds += later.rounds
    earlier.startup_s = max(earlier.startup_s or 0.0, later.startup_s or 0.0) or None
    earlier.hwm_total = max(earlier.hwm_total, later.hwm_total)
    earlier.sampled_peak = max(earlier.sampled_peak, later.sampled_peak)
    earlier.wall_s += later.wall_s
    earlier.load_after = later.load_after
    earlier.processes |= later.processes
    return earlier


# --- agreement --------------------------------------------------------------------------------------


def _read_answer(path: Path) -> pa.Table:
    with pa.OSFile(str(path), "rb") as source:
        return pa.ipc.open_file(source).read_all()


def _compare(ref: Path, other: Path, n: int) -> str | None:
    try:
        return answer_difference(_read_answer(ref), _read_answer(other), ordered=has_order_by(n), rel_tol=REL_TOL)
    except Exception as exc:  # noqa: BLE001 - an answer that cannot be compared is a disagreement
        return f"could not compare: {first_line(exc)}"


def check_agreement(runs: dict[str, EngineRun], queries: list[int], work: Path
                    ) -> tuple[dict[tuple[int, str], str], dict[int, str]]:
    """How each answer differs from its query's reference answer, keyed (query, engine); and each reference."""
    problems: dict[tuple[int, str], str] = {}
    references: dict[int, str] = {}
    for n in queries:
        answered = [e for e in REFERENCE_ORDER if e in runs and runs[e].seconds(n) is not None]
        if not answered:
            continue
        ref = references[n] = answered[0]
        for engine in answered[1:]:
            why = _compare(answer_path(work, ref, n), answer_path(work, engine, n), n)
            if why:
                problems[(n, engine)] = f"{why} ({ref} is the reference)"
    return problems, references


# --- the report -------------------------------------------------------------------------------------


def _rel(path: Path | None) -> str:
    if path is None:
        return "—"
    try:
        return str(path.relative_to(REPO))
    except ValueError:
        return str(path)


def _gib(n: int) -> str:
    return f"{n / 2**30:.2f} GiB" if n else "—"


def geomean(xs: list[float]) -> float | None:
    xs = [x for x in xs if x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def section_key(sf: float, form: str) -> str:
    """The marker name of one scale factor's section (and form's), so SF1 and SF10 results live side by side."""
    return f"benchmarks.tpch.{scale_name(sf)}" + ("" if form == "sql" else f".{form}")


class _Footnotes:
    """Numbered footnotes for failed cells; the same error text shares one number."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def ref(self, text: str) -> str:
        if text not in self.texts:
            self.texts.append(text)
        return f"[^{self.texts.index(text) + 1}]"

    def lines(self) -> list[str]:
        return [f"[^{i}]: {t}" for i, t in enumerate(self.texts, 1)]


def _cell(run: EngineRun, n: int, repeat: int, problems: dict, notes: _Footnotes) -> str:
    ev = run.queries.get(n)
    if ev is None:
        return run.status if run.status == "failed" else "—"
    if "error" in ev:
        label = "timed out" if ev["error"].startswith("timed out") else "failed"
        return label + notes.ref(f"{run.name}: `{ev['error']}`")
    text = f"{ev['median']:.3f}"
    if len(ev["times"]) < repeat:
        text += " (1 run)"
    return text + (" ✗" if (n, run.name) in problems else "")


def _time_table(runs: dict[str, EngineRun], args: argparse.Namespace, problems: dict, notes: _Footnotes) -> list[str]:
    """Per-query medians per engine, the fastest, Quiver's ratios, and the geometric means."""
    engines = list(runs)
    peers = [e for e in engines if e != "quiver"] if "quiver" in runs else []
    header = ["query", *engines, "fastest", *[f"quiver/{p}" for p in peers]]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for n in args.queries:
        row = [f"Q{n:02d}"] + [_cell(runs[e], n, args.repeat, problems, notes) for e in engines]
        timed = {e: runs[e].seconds(n) for e in engines if runs[e].seconds(n) is not None}
        row.append(min(timed, key=timed.get) if timed else "—")
        q = runs["quiver"].seconds(n) if peers else None
        row += [f"{q / runs[p].seconds(n):.2f}" if q and runs[p].seconds(n) else "—" for p in peers]
        lines.append("| " + " | ".join(row) + " |")
    common = [n for n in args.queries if all(r.seconds(n) is not None for r in runs.values())]
    geo = [f"**geomean** ({len(common)} of {len(args.queries)})"]
    means = {e: geomean([runs[e].seconds(n) for n in common]) for e in engines}
    geo += [f"{means[e]:.3f}" if means[e] else "—" for e in engines] + [""]
    geo += [f"{means['quiver'] / means[p]:.2f}" if means.get("quiver") and means[p] else "—" for p in peers]
    return lines + ["| " + " | ".join(geo) + " |"]


def _engine_table(runs: dict[str, EngineRun]) -> list[str]:
    """Version, settings, status, start-up, memory, wall time and load per engine."""
    lines = [("| engine | version | settings | status | start-up s | peak RSS (tree, sampled) "
              "| peak RSS (sum of per-process peaks) | processes | wall s | load after |"),
             "|---|---|---|---|---|---|---|---|---|---|"]
    for e, r in runs.items():
        status = r.status if not r.error else f"{r.status}: `{r.error}`"
        if r.starts > r.rounds:  # restarted after a query that hung or crashed it
            status += f" ({r.starts} starts)"
        startup = f"{r.startup_s:.2f}" if r.startup_s is not None else "—"
        lines.append(f"| {e} | {r.version or '—'} | {r.settings or '—'} | {status} | {startup} | "
                     f"{_gib(r.sampled_peak)} | {_gib(r.hwm_total)} | {', '.join(sorted(r.processes)) or '—'} | "
                     f"{r.wall_s:.1f} | {r.load_after:.2f} |")
    return lines


def _agreement_lines(runs: dict[str, EngineRun], problems: dict, references: dict[int, str]) -> list[str]:
    if problems:
        return ["**Answers that disagree:**", ""] + [
            f"- ✗ {e} / Q{n:02d}: {why}" for (n, e), why in sorted(problems.items())]
    checked = sum(1 for n, ref in references.items() for e, r in runs.items() if e != ref and r.seconds(n) is not None)
    refs = sorted(set(references.values()))
    return [(f"All {checked} answers checked agree with the reference's ({', '.join(refs) or 'none'}): every "
             f"row, in order where the query orders its rows, floats and decimals to {REL_TOL:g} relative.")]


def _what_runs(engines: list[str], form: str) -> str:
    """A sentence on which code each engine of this run runs."""
    spark_api = "the SQL text" if form == "sql" else "the DataFrame API of `dataframe_queries.py`"
    code = {"duckdb": "the SQL text", "datafusion": "the SQL text", "polars": "the lazy queries of `polars_queries.py`"}
    runs = "; ".join(f"{DISPLAY[e]} runs {code.get(e, spark_api)}" for e in engines)
    return f"{runs} (the SQL text is `queries/qNN.sql`)."


def _method(args: argparse.Namespace) -> str:
    """The method bullet: children, start-up, timeouts, memory."""
    return (
        "- **Method:** each engine runs in a child process of its own, one after another. Start-up is the "
        "engine's import plus session creation (the JVM's launch for PySpark), timed apart from the queries. "
        f"A run slower than {args.timeout:.0f}s is killed and the engine restarted for the queries left; a "
        f"warm-up slower than {args.slow_s:.0f}s gets one timed run. *Sampled* memory is the largest total "
        f"RSS of the child's process tree seen every {args.sample_s}s; *sum of per-process peaks* adds each "
        "process's kernel high-water mark (VmHWM), an upper bound."
    )


def render(runs: dict[str, EngineRun], problems: dict, references: dict[int, str],
           args: argparse.Namespace, meta: dict) -> str:
    """The markdown section: method, times and ratios, engines, agreement, machine."""
    key, m = section_key(args.sf, args.form), meta["machine"]
    peers = ", ".join(DISPLAY.get(e, e) for e in runs if e != "quiver")
    title = f"TPC-H SF{args.sf:g}: " + (f"Quiver vs {peers}" if "quiver" in runs else peers)
    notes = _Footnotes()
    lines = [
        f"<!-- {key}:begin -->",
        f"## {title}" + (" (DataFrame API)" if args.form == "dataframe" else ""),
        "",
        f"Generated by `{meta['command']}` on {meta['date']}. Seconds per query, the median of {args.repeat} "
        + ("runs after one warm-up. " if args.rounds == 1 else
           f"runs after one warm-up in each of {args.rounds} rounds ({args.rounds * args.repeat} runs pooled; "
           "the engines take turns round by round, so a slow spell of the machine does not fall on one engine "
           "alone). ")
        + "Every run registers the query's tables over their Parquet files anew "
        "(views, or lazy scans for Polars), executes, and materializes the whole answer in the client (an "
        f"Arrow table; a DataFrame for Polars). {_what_runs(list(runs), args.form)} "
        + ("`quiver/X` is Quiver's time over X's: above 1 means Quiver is slower. " if "quiver" in runs else "")
        + "✗ marks an answer that disagrees with the reference engine's.",
        "",
        *_time_table(runs, args, problems, notes),
        "",
        "The geometric means are over the queries every engine finished.",
        "",
        *_engine_table(runs),
        "",
        *_agreement_lines(runs, problems, references),
        "",
    ]
    if notes.texts:
        lines += notes.lines() + [""]
    lines += [
        (f"- **Data:** TPC-H scale factor {args.sf:g} from `tpchgen-cli`, one Parquet file per table "
         f"({meta['data_mib']:.0f} MiB in all, lineitem {meta['lineitem_rows']:,} rows); "
         "`benchmarks/tpch/datagen.py`."),
        (f"- **Machine:** {m['cpu']}, {m['cores']} cores ({m['usable_cores']} usable), {m['ram']} RAM, "
         f"{m['os']}, Python {m['python']}, pyarrow {meta['pyarrow']}. Load average (1/5/15 min) at the "
         f"start: {meta['load']}; *load after* is the 1-minute load average as each engine finished "
         f"(above {m['usable_cores']} means the run shared the cores)."),
        _method(args),
        "",
        f"<!-- {key}:end -->",
    ]
    return "\n".join(lines)


# --- entry point ------------------------------------------------------------------------------------


def _meta(argv: list[str], data: dict[str, Path]) -> dict:
    import pyarrow.parquet as pq

    from benchmarks.core import machine

    return {
        "command": "python -m benchmarks.tpch " + shlex.join(argv),
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "pyarrow": pa.__version__,
        "load": " / ".join(f"{x:.2f}" for x in os.getloadavg()),
        "data_mib": sum(p.stat().st_size for p in data.values()) / 2**20,
        "lineitem_rows": pq.ParquetFile(data["lineitem"]).metadata.num_rows,
    }


def _shout(problems: dict[tuple[int, str], str]) -> None:
    bar = "!" * 78
    for (n, e), why in sorted(problems.items()):
        print(f"\n{bar}\n!!! ANSWERS DISAGREE: {e} on Q{n:02d}: {why}\n{bar}", file=sys.stderr, flush=True)


def run_benchmark(args: argparse.Namespace, argv: list[str]) -> int:
    """The whole benchmark for parsed CLI `args`; 1 when some engine's answer disagrees, else 0."""
    data = ensure_tables(args.sf)
    meta = _meta(argv, data)
    work = RUNS_ROOT / f"tpch-{scale_name(args.sf)}-{args.form}"
    work.mkdir(parents=True, exist_ok=True)
    data_dir = data["lineitem"].parent
    runs: dict[str, EngineRun] = {}
    for _ in range(args.rounds):
        for e in args.engines:
            runs[e] = merge_rounds(runs.get(e), run_engine(e, args, data_dir, work))
    problems, references = check_agreement(runs, args.queries, work)
    _shout(problems)
    section = render(runs, problems, references, args, meta)
    print("\n" + section)
    if args.out != "-":
        from benchmarks.core import write_section

        write_section(Path(args.out), section, section_key(args.sf, args.form))
        print(f"\nwrote section {section_key(args.sf, args.form)!r} to {args.out}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(child_main())
