"""Cold and warm scans of TPC-H lineitem on an S3 server: Quiver with and without its storage cache, DuckDB, PySpark.

    python -m benchmarks.storage_cache --sf 1 [--engines quiver-cache,quiver-nocache,duckdb,pyspark]
                                       [--repeat 3] [--out benchmarks/RESULTS.md|-]

A moto S3 server on loopback, recording every request, holds lineitem's Parquet file. Each
engine runs each workload in a child process of its own (``benchmarks.storage_cache_engines``):
one cold scan, then ``--repeat`` warm ones, counting from the server's recording the object
bytes each scan fetched. As in ``benchmarks.core`` (whose child runner, checks and section
writer this reuses) the parent samples each child's memory, checks that the engines agree and
writes a markdown section into ``--out``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from benchmarks.core import (
    REL_TOL,
    EngineRun,
    _gib,
    add_run_arguments,
    check_agreement,
    parse_run_arguments,
    result_cell,
    run_meta,
    spawn,
    write_section,
)
from benchmarks.storage_cache_engines import (
    ACCESS_KEY,
    ENGINES,
    REGION,
    SECRET_KEY,
    WORKLOADS,
    Store,
    recorder,
    s3a_connector,
)
from benchmarks.tpch.datagen import ensure_tables, scale_name

SECTION = "benchmarks.storage_cache"
TITLE = "Storage cache: cold and warm scans of TPC-H lineitem on S3"
# When several engines agree, the first one here that finished is the reference.
REFERENCE_ORDER = ["duckdb", "quiver-nocache", "quiver-cache", "pyspark"]
BUCKET = "quiver-bench"
# DuckDB's external file cache does not keep a file modified less than ~10 s before it is read
# (seen here: read at 8 s, every scan fetched it again; at 12 s, only the first did), so the
# engines start only once the object is this old.
SETTLE_S = 15.0
NO_S3A = "not run: no S3A connector available offline (pyspark/jars has no hadoop-aws jar)"

# --- the S3 server -------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_until_up(endpoint: str, server: subprocess.Popen, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1).close()
            return
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the moto S3 server did not start on {endpoint}") from None
            time.sleep(0.1)


@contextlib.contextmanager
def moto_server(workdir: Path, log: Path) -> Iterator[str]:
    """A moto S3 server on a loopback port, recording requests into `workdir`, for the block; yields
    its endpoint URL and ends the server (and only it) after."""
    port = _free_port()
    endpoint = f"http://127.0.0.1:{port}"
    env = dict(os.environ, MOTO_ENABLE_RECORDING="true",
               MOTO_RECORDER_FILEPATH=str(workdir / "recording.jsonl"))
    with log.open("w") as out:
        server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                                  cwd=workdir, env=env, stdout=out, stderr=subprocess.STDOUT,
                                  start_new_session=True)
    try:
        _wait_until_up(endpoint, server)
        yield endpoint
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def upload_lineitem(endpoint: str, sf: float) -> Store:
    """Put lineitem's Parquet file into the bucket, with recording stopped (moto would record the
    upload's body); the Store the children read, returned once the object is `SETTLE_S` old."""
    import boto3

    recorder(endpoint, "stop-recording")
    client = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=ACCESS_KEY,
                          aws_secret_access_key=SECRET_KEY, region_name=REGION)
    client.create_bucket(Bucket=BUCKET)
    key = f"tpch/{scale_name(sf)}/lineitem.parquet"
    t0 = time.perf_counter()
    client.upload_file(str(ensure_tables(sf)["lineitem"]), BUCKET, key)
    size = client.head_object(Bucket=BUCKET, Key=key)["ContentLength"]
    uploaded = time.perf_counter()
    print(f"uploaded s3://{BUCKET}/{key} ({size / 2**20:.1f} MiB) in {uploaded - t0:.1f}s; "
          f"waiting until it is {SETTLE_S:g}s old", flush=True)
    time.sleep(max(0.0, SETTLE_S - (time.perf_counter() - uploaded)))
    recorder(endpoint, "reset-recording")
    recorder(endpoint, "start-recording")
    return Store(endpoint, f"s3://{BUCKET}/{key}", size)


# --- running the children ------------------------------------------------------------------


def run_workload(name: str, workload: str, store: Store, args, log_dir: Path) -> EngineRun:
    """One child: engine `name` on `workload`, cold then warm; quiver-cache gets a new, empty cache folder."""
    stem = f"storage_cache-{name}-{workload}"
    events = log_dir / f"{stem}.events.jsonl"
    cache_dir = tempfile.mkdtemp(prefix="quiver-bench-storage-cache-") if name == "quiver-cache" else None
    cmd = [
        sys.executable, "-m", "benchmarks.storage_cache_engines", "--engine", name, "--workload", workload,
        "--endpoint", store.endpoint, "--uri", store.uri, "--object-size", str(store.size),
        "--repeat", str(args.repeat), "--slow-s", str(args.slow_s), "--events", str(events),
        "--dump-dir", str(log_dir),
    ] + (["--cache-dir", cache_dir] if cache_dir else [])
    try:
        return spawn(EngineRun(name), cmd, log_dir / f"{stem}.log", events, args.timeout, args.sample_s, 1)
    finally:
        if cache_dir:
            shutil.rmtree(cache_dir, ignore_errors=True)


def merge(name: str, parts: list[EngineRun]) -> EngineRun:
    """One engine's children as one run: every workload, the worst status, the largest memory."""
    run = EngineRun(name, status="ok")
    for part in parts:
        run.workloads.update(part.workloads)
        if part.status != "ok" and run.status == "ok":
            run.status, run.error = part.status, part.error
        run.version = run.version or part.version
        run.sampled_peak = max(run.sampled_peak, part.sampled_peak)
        if part.hwm_total > run.hwm_total:
            run.processes = part.processes
        run.load_after = part.load_after
    started = [p.startup_s for p in parts if p.startup_s is not None]
    run.startup_s = statistics.median(started) if started else None
    run.wall_s = sum(p.wall_s or 0.0 for p in parts)
    return run


def run_engine(name: str, store: Store, args, log_dir: Path) -> EngineRun:
    """Every workload of engine `name`, each in its own child; PySpark is skipped without hadoop-aws."""
    if name == "pyspark" and s3a_connector() is None:
        print(f"\n=== {name} ===\n[{name}] {NO_S3A}", flush=True)
        return EngineRun(name, status="not run", error=NO_S3A.removeprefix("not run: "))
    return merge(name, [run_workload(name, w, store, args, log_dir) for w in args.workloads])


# --- the report ----------------------------------------------------------------------------


def _size(n: float | None) -> str:
    if n is None:
        return "—"
    if n < 2**10:
        return f"{n:.0f} B"
    return f"{n / 2**10:.0f} KiB" if n < 2**20 else f"{n / 2**20:.1f} MiB"


def _per_warm(ev: dict, field: str, show) -> str:
    """`field` (bytes, gets) of each warm scan of one workload event: one figure when they are all
    equal, else each in order."""
    values = [w[field] for w in ev.get("fetched_warm") or []]
    if not values:
        return "—"
    return show(values[0]) if len(set(values)) == 1 else ", ".join(map(show, values))


def _ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}" if a is not None and b else "—"


def _seconds(runs: dict[str, EngineRun], engine: str, workload: str, phase: str) -> float | None:
    ev = runs[engine].workloads.get(workload, {}) if engine in runs else {}
    return ev.get("cold" if phase == "cold" else "median")


def result_rows(runs: dict[str, EngineRun], problems, args, footnotes: list[str]) -> list[str]:
    """The main table: one row per workload and engine."""
    header = ["workload", "engine", "cold s", f"warm s (median of {args.repeat})", "cold / warm",
              "fetched cold", "fetched per warm scan", "GETs cold", "GETs per warm scan"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for w in args.workloads:
        for e, r in runs.items():
            ev = r.workloads.get(w)
            if ev is None or "error" in ev:
                cell = result_cell(r, w, args.repeat, False, footnotes, str)
                cell = r.error if r.status == "not run" else cell
                lines.append(f"| {w} | {e} | {cell} |" + " — |" * (len(header) - 3))
                continue
            warm = result_cell(r, w, args.repeat, (w, e) in problems, footnotes, "{:.3f}".format)
            lines.append(
                f"| {w} | {e} | {ev['cold']:.3f} | {warm} | {_ratio(ev['cold'], ev['median'])} | "
                f"{_size(ev['fetched_cold']['bytes'])} | {_per_warm(ev, 'bytes', _size)} | "
                f"{ev['fetched_cold']['gets']} | {_per_warm(ev, 'gets', str)} |")
    return lines


RATIOS = [
    ("quiver-cache warm / duckdb warm", ("quiver-cache", "warm"), ("duckdb", "warm")),
    ("quiver-cache warm / quiver-nocache warm", ("quiver-cache", "warm"), ("quiver-nocache", "warm")),
    ("quiver-cache cold / quiver-nocache cold", ("quiver-cache", "cold"), ("quiver-nocache", "cold")),
    ("quiver-cache cold / duckdb cold", ("quiver-cache", "cold"), ("duckdb", "cold")),
]


def ratio_rows(runs: dict[str, EngineRun], workloads: list[str]) -> list[str]:
    """Seconds over seconds, per workload: above 1 means the first is slower."""
    lines = ["| ratio | " + " | ".join(workloads) + " |", "|---|" + "---|" * len(workloads)]
    for label, (a, pa_), (b, pb) in RATIOS:
        if a in runs and b in runs:
            cells = [_ratio(_seconds(runs, a, w, pa_), _seconds(runs, b, w, pb)) for w in workloads]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def cache_check(runs: dict[str, EngineRun]) -> str | None:
    """Whether Quiver's own count of bytes read from the store (storage_cache_stats) equals the
    server's count over the same scans, for each quiver-cache workload."""
    run = runs.get("quiver-cache")
    if run is None or not run.workloads:
        return None
    notes = []
    for w, ev in run.workloads.items():
        stats = ev.get("cache_stats")
        if not stats or "fetched_cold" not in ev:
            continue
        server = ev["fetched_cold"]["bytes"] + sum(f["bytes"] for f in ev["fetched_warm"])
        mine = stats.get("bytes_from_store", 0)
        notes.append(f"{w}: {'equal' if mine == server else 'DIFFERENT'} ({mine:,} B by the cache, "
                     f"{server:,} B by the server; {stats.get('hits', 0):,} block hits, "
                     f"{stats.get('misses', 0):,} misses)")
    return "; ".join(notes) if notes else None


def engine_rows(runs: dict[str, EngineRun]) -> list[str]:
    lines = ["| engine | version | status | start-up s (median of its children) | peak RSS (tree, sampled) "
             "| wall s (all its children) | load after |", "|---|---|---|---|---|---|---|"]
    for e, r in runs.items():
        status = r.status if not r.error else f"{r.status}: `{r.error}`"
        lines.append(
            f"| {e} | {r.version or '—'} | {status} | "
            f"{f'{r.startup_s:.2f}' if r.startup_s is not None else '—'} | "
            f"{_gib(r.sampled_peak) if r.startup_s is not None else '—'} | "
            f"{f'{r.wall_s:.1f}' if r.wall_s is not None else '—'} | "
            f"{f'{r.load_after:.2f}' if r.load_after is not None else '—'} |")
    return lines


def render(runs: dict[str, EngineRun], problems, args, store: Store, meta: dict) -> str:
    footnotes: list[str] = []
    m = meta["machine"]
    lines = [
        f"<!-- {SECTION}:begin -->",
        f"## {TITLE}",
        "",
        f"Generated by `{meta['command']}` on {meta['date']}. Each engine runs each workload in a fresh "
        "child process of its own: **cold** is that process's first scan, with every cache empty (for "
        "quiver-cache a new, empty `quiver.cache.storage.dir`); **warm** is the median of the "
        f"{args.repeat} scans after it in the same process. A scan registers a view over "
        f"`{store.uri}` anew, runs the SQL and materializes the result as an Arrow table. "
        "**Fetched** is the object bytes the S3 server sent, counted from its request recording "
        "(moto's recorder): every GET of the lineitem object, its `Range` header's length clipped to "
        "the object (the whole object for a GET without one); HEADs and listings fetch no object "
        "bytes and are not counted. *Per warm scan* is one figure when every warm scan fetched the "
        "same, else each scan's in order. ✗ marks a "
        "result that disagrees with the reference engine's.",
        "",
        *result_rows(runs, problems, args, footnotes),
        "",
        "Seconds over seconds (above 1: the first is slower):",
        "",
        *ratio_rows(runs, args.workloads),
        "",
        *engine_rows(runs),
        "",
    ]
    if problems:
        lines += ["**Results that disagree:**", ""]
        lines += [f"- ✗ {e} / {w}: {why}" for (w, e), why in sorted(problems.items())]
    else:
        checked = sum(1 for r in runs.values() for ev in r.workloads.values() if "summary" in ev)
        lines.append(f"All {checked} finished results agree with the reference engine's (first of "
                     f"{', '.join(REFERENCE_ORDER)} to finish; floats and decimals to {REL_TOL:g} relative).")
    if (check := cache_check(runs)) is not None:
        lines += ["", "Quiver's own count, `storage_cache_stats()['bytes_from_store']` over the cold and "
                      f"warm scans of a child, against the server's: {check}."]
    lines.append("")
    if footnotes:
        lines += [f"[^{i}]: {t}" for i, t in enumerate(footnotes, 1)] + [""]
    lines += [
        "Workloads (the same SQL text on every engine, over the view `lineitem`):",
        "",
        *[f"- `{w}`: {WORKLOADS[w][0]}." for w in args.workloads],
        "",
        f"- **Data:** TPC-H SF{args.sf:g} lineitem, {meta['rows']:,} rows in one Parquet file of "
        f"{store.size / 2**20:.1f} MiB ({meta['row_groups']} row group(s)) made by `tpchgen-cli` "
        "(`benchmarks/tpch/datagen.py`), uploaded as one object.",
        f"- **Server:** moto {meta['moto']} (`python -m moto.server`) on 127.0.0.1, recording on. It "
        "serves a ranged GET by reading the whole object and slicing it, so on this "
        f"{store.size / 2**20:.0f} MiB object each GET costs about the same whatever its length: "
        "the cold and uncached times measure the number of GETs more than the bytes. A real store "
        "would be slower per byte and faster per request.",
        "- **Engines:** `quiver-cache`: Quiver `local[2]`, `spark.sql.shuffle.partitions=4`, the "
        "storage cache at its defaults (1 MiB blocks, 512 MiB memory, 4 GiB disk); `quiver-nocache`: the "
        "same with `quiver.cache.storage.enabled=false`; `duckdb`: 2 threads, reading through an fsspec "
        "S3 file system (s3fs) registered with `register_filesystem` (its httpfs extension cannot be "
        "downloaded offline), s3fs's read-ahead off (`default_cache_type='none'`, else each read pulls "
        "a 50 MB block) so each DuckDB read is one ranged GET; DuckDB's own external file cache "
        "(`enable_external_file_cache`, on by default) keeps what it read in memory, but not for a file "
        "modified less than about 10 s before (then every scan fetched it again), so the engines start "
        f"once the object is {SETTLE_S:g} s old; `pyspark`: needs "
        "the hadoop-aws jar for s3a://, which the pip package does not ship"
        + (" and which cannot be fetched offline, so it is not run." if s3a_connector() is None else "."),
        f"- **Machine:** {m['cpu']}, {m['cores']} cores ({m['usable_cores']} usable), {m['ram']} RAM, "
        f"{m['os']}, Python {m['python']}, pyarrow {meta['pyarrow']}. Load average (1/5/15 min) when "
        f"the run started: {meta['load']}; *load after* is the 1-minute load average as each engine's "
        "last child finished (above the core count, the run shared the machine and its times are noisy).",
        "",
        f"<!-- {SECTION}:end -->",
    ]
    return "\n".join(lines)


# --- entry point ---------------------------------------------------------------------------


def data_meta(sf: float) -> dict:
    """Rows and row groups of lineitem's Parquet file."""
    import pyarrow.parquet as pq

    md = pq.ParquetFile(ensure_tables(sf)["lineitem"]).metadata
    return {"rows": md.num_rows, "row_groups": md.num_row_groups}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sf", type=float, default=1.0, help="TPC-H scale factor")
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--repeat", type=int, default=3, help="warm scans after the cold one")
    add_run_arguments(parser)
    args = parse_run_arguments(parser, argv, ENGINES, list(WORKLOADS))
    import moto

    meta = run_meta("benchmarks.storage_cache", argv) | data_meta(args.sf) | {"moto": moto.__version__}
    log_dir = args.cache / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)

    with tempfile.TemporaryDirectory(prefix="quiver-bench-moto-") as workdir, \
            moto_server(Path(workdir), log_dir / "storage_cache-moto.log") as endpoint:
        store = upload_lineitem(endpoint, args.sf)
        runs = {e: run_engine(e, store, args, log_dir) for e in args.engines}
    problems = check_agreement(runs, args.workloads, REFERENCE_ORDER)
    for (w, e), why in sorted(problems.items()):
        bar = "!" * 78
        print(f"\n{bar}\n!!! RESULT MISMATCH: {e} on {w}: {why}\n{bar}", file=sys.stderr, flush=True)

    section = render(runs, problems, args, store, meta)
    print("\n" + section)
    if args.out != "-":
        write_section(Path(args.out), section, SECTION)
        print(f"\nwrote section '{TITLE}' to {args.out}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
