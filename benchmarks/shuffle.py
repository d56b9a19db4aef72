"""Shuffle-heavy jobs side by side: Quiver (local and Ray runtimes), Ray Data, PySpark.

    python -m benchmarks.shuffle --gb 2 [--engines quiver-ray,quiver-local,raydata,pyspark]
                                 [--repeat 1] [--out benchmarks/RESULTS.md|-]

A group-by over millions of keys and a join of two large tables, on ``--gb`` GB (10^9
bytes) of Arrow data. As in ``benchmarks.core`` (whose child runner, checks and section
writer this reuses), each engine runs in its own child process, one after another; the
parent samples each child's process tree for memory, checks that the engines agree, and
writes a markdown section into ``--out``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import shutil
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

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
from benchmarks.datagen import DataSet, _manifest_matches, _write
from benchmarks.shuffle_engines import (
    ENGINES,
    QUIVER_ENGINES,
    READS,
    WORKLOADS,
    Settings,
)

SECTION = "benchmarks.shuffle"
TITLE = "Shuffle: Quiver (local and Ray) vs Ray Data and PySpark"
# When several engines agree, the first one here that finished is the reference.
REFERENCE_ORDER = ["pyspark", "raydata", "quiver-local", "quiver-ray"]
GB = 10**9

# --- data ----------------------------------------------------------------------------

# Bump when the generated values or file layout change, so stale caches are not reused.
LAYOUT_VERSION = 1
ROW_BYTES = 16  # an int64 key and a float64 value, in both tables


@dataclass(frozen=True)
class ShuffleSpec:
    """What a data set is made of; equal specs give identical files.

    ``gb`` GB of Arrow data in all: ``dim_share`` of it is the dim table (key, weight), the
    rest the fact table (key, amount). The dim's keys are a permutation of 0..dim_rows-1;
    the fact's keys are ``keys`` of them, evenly spread (every ``stride``-th), so every fact
    row joins with exactly one dim row while most dim rows join with none.
    """

    gb: float
    keys: int = 5_000_000
    dim_share: float = 0.2
    file_bytes: int = 128 * 2**20  # in-memory Arrow bytes per Parquet file
    row_group_rows: int = 1_000_000
    seed: int = 20240601
    version: int = LAYOUT_VERSION

    @property
    def fact_rows(self) -> int:
        return math.ceil(self.gb * GB * (1 - self.dim_share) / ROW_BYTES)

    @property
    def dim_rows(self) -> int:
        return math.ceil(self.gb * GB * self.dim_share / ROW_BYTES)

    @property
    def distinct_keys(self) -> int:
        return min(self.keys, self.dim_rows)

    @property
    def stride(self) -> int:
        return self.dim_rows // self.distinct_keys

    @property
    def name(self) -> str:
        return f"gb{self.gb:g}_k{self.keys}_d{self.dim_share:g}_s{self.seed}_v{self.version}"


@dataclass(frozen=True)
class ShuffleData(DataSet):
    """The fact and dim folders of one `ShuffleSpec`, laid out as the core benchmark's data sets."""

    spec: ShuffleSpec

    @property
    def manifest(self) -> dict:
        return json.loads((self.root / "manifest.json").read_text())

    def bytes_read(self, workload: str) -> int:
        """In-memory Arrow bytes of the input columns ``workload`` reads."""
        columns = self.manifest["arrow_bytes"]
        return sum(columns[t][c] for t, cs in READS[workload].items() for c in cs)


def _bounds(rows: int, file_bytes: int) -> np.ndarray:
    files = max(1, math.ceil(rows * ROW_BYTES / file_bytes))
    return np.linspace(0, rows, files + 1).astype(np.int64)


def ensure_data(spec: ShuffleSpec, cache: Path, log=print) -> ShuffleData:
    """The data set for ``spec``, generated first unless already cached."""
    root = cache / spec.name
    if _manifest_matches(root, spec):
        return ShuffleData(spec, root)
    cache.mkdir(parents=True, exist_ok=True)
    tmp = cache / f".tmp-{spec.name}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    t0 = time.perf_counter()
    arrow_bytes: dict[str, dict[str, int]] = {"fact": {}, "dim": {}}

    def write(table_name: str, i: int, table: pa.Table) -> None:
        (tmp / table_name).mkdir(parents=True, exist_ok=True)
        _write(table, tmp / table_name / f"part-{i:05d}.parquet", spec.row_group_rows)
        for c in table.column_names:
            arrow_bytes[table_name][c] = arrow_bytes[table_name].get(c, 0) + table[c].nbytes

    # One generator per file, seeded by (seed, table, file): regenerating one file gives
    # the same bytes whatever came before it.
    bounds = _bounds(spec.fact_rows, spec.file_bytes)
    for i, (lo, hi) in enumerate(itertools.pairwise(bounds)):
        rng = np.random.default_rng([spec.seed, 0, i])
        n = int(hi - lo)
        key = rng.integers(0, spec.distinct_keys, n, dtype=np.int64) * spec.stride
        amount = np.round(rng.uniform(0.0, 1000.0, n), 2)  # cents
        write("fact", i, pa.table({"key": key, "amount": amount}))
    dim_keys = np.random.default_rng([spec.seed, 1, 0]).permutation(spec.dim_rows).astype(np.int64)
    bounds = _bounds(spec.dim_rows, spec.file_bytes)
    for i, (lo, hi) in enumerate(itertools.pairwise(bounds)):
        rng = np.random.default_rng([spec.seed, 2, i])
        weight = np.round(rng.uniform(0.0, 1.0, int(hi - lo)), 4)
        write("dim", i, pa.table({"key": dim_keys[lo:hi], "weight": weight}))
    manifest = {
        "spec": asdict(spec), "generated_s": time.perf_counter() - t0,
        "rows": {"fact": spec.fact_rows, "dim": spec.dim_rows}, "arrow_bytes": arrow_bytes,
    }
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2))
    # Commit by rename so an interrupted run never leaves a half-written set behind.
    shutil.rmtree(root, ignore_errors=True)
    tmp.rename(root)
    log(f"generated {spec.name} in {time.perf_counter() - t0:.1f}s under {root}")
    return ShuffleData(spec, root)


# --- running the children ------------------------------------------------------------


def run_engine(name: str, data: ShuffleData, args, log_dir: Path) -> EngineRun:
    events = log_dir / f"shuffle-{name}.events.jsonl"
    dump_dir = log_dir / "shuffle"
    dump_dir.mkdir(exist_ok=True)
    for stale in dump_dir.glob(f"{name}-*.parquet"):
        stale.unlink()
    cmd = [
        sys.executable, "-m", "benchmarks.shuffle_engines",
        "--engine", name, "--fact", str(data.fact), "--dim", str(data.dim),
        "--repeat", str(args.repeat), "--slow-s", str(args.slow_s),
        "--events", str(events), "--workloads", ",".join(args.workloads),
        "--dump-dir", str(dump_dir), "--partitions", str(args.partitions),
        "--object-store-gib", str(args.object_store_gib), "--driver-memory", args.driver_memory,
    ] + (["--no-warmup"] if args.no_warmup else [])
    run = spawn(EngineRun(name), cmd, log_dir / f"shuffle-{name}.log", events,
                args.timeout, args.sample_s, len(args.workloads))
    # spawn keeps the total start-up; the parts (import, ray.init, session) come from the
    # same event.
    run.startup_parts = {}
    if events.exists():
        for line in events.read_text().splitlines():
            ev = json.loads(line)
            if ev["event"] == "startup":
                run.startup_parts = ev.get("parts", {})
    return run


# --- the report ----------------------------------------------------------------------


def render(runs: dict[str, EngineRun], problems, args, data: ShuffleData, meta: dict) -> str:
    engines = list(runs)
    quivers = [e for e in engines if e in QUIVER_ENGINES]
    peers = [e for e in engines if e not in QUIVER_ENGINES]
    pairs = [(q, p) for q in quivers for p in peers]
    if set(QUIVER_ENGINES) <= set(engines):
        pairs.append(("quiver-ray", "quiver-local"))
    spec = data.spec
    warm = "after one warm-up" if not args.no_warmup else "with no warm-up"
    lines = [
        f"<!-- {SECTION}:begin -->",
        f"## {TITLE}",
        "",
        f"Generated by `{meta['command']}` on {meta['date']}. Per engine: seconds, the median "
        f"of {args.repeat} run{'s' if args.repeat != 1 else ''} {warm}, and the throughput in GB/s "
        "shuffled. **Bytes shuffled** is the in-memory Arrow size (`pa.Table.nbytes`, "
        "GB = 10⁹ bytes) of the input columns the workload reads, the same figure for every "
        "engine whatever its shuffle actually moves (partial aggregation, compression, "
        "spilling). Every run reads Parquet and materializes the whole result in the "
        "client as an Arrow table. `A/B` is A's time over B's: above 1 means A is slower. "
        "✗ marks a result that disagrees with the reference engine. Start-up "
        "(`ray.init`, the JVM) is not in these times; it is in the second table.",
        "",
    ]
    header = ["workload", "GB shuffled", *engines, "fastest", *[f"{a}/{b}" for a, b in pairs]]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    footnotes: list[str] = []

    for w in args.workloads:
        gb = data.bytes_read(w) / GB
        row = [w, f"{gb:.2f}"] + [
            result_cell(runs[e], w, args.repeat, (w, e) in problems, footnotes,
                        lambda s, gb=gb: f"{s:.2f} s · {gb / s:.3f} GB/s")
            for e in engines]
        timed = {e: runs[e].seconds(w) for e in engines if runs[e].seconds(w) is not None}
        row.append(min(timed, key=timed.get) if timed else "—")
        for a, b in pairs:
            sa, sb = runs[a].seconds(w), runs[b].seconds(w)
            row.append(f"{sa / sb:.2f}" if sa is not None and sb else "—")
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")

    lines += ["| engine | version | status | import s | ray.init s | session s | start-up s "
              "| peak RSS (tree, sampled) | peak RSS (sum of per-process peaks) | processes "
              "| wall s | load after |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]

    def part(r: EngineRun, name: str) -> str:
        v = getattr(r, "startup_parts", {}).get(name)
        return f"{v:.2f}" if v is not None else "—"

    for e, r in runs.items():
        procs = ", ".join(sorted({p["name"] for p in r.processes})) or "—"
        status = r.status if not r.error else f"{r.status}: `{r.error}`"
        lines.append(
            f"| {e} | {r.version or '—'} | {status} | {part(r, 'import')} | "
            f"{part(r, 'ray.init')} | {part(r, 'session')} | "
            f"{f'{r.startup_s:.2f}' if r.startup_s is not None else '—'} | "
            f"{_gib(r.sampled_peak) if r.startup_s is not None else '—'} | {_gib(r.hwm_total)} | "
            f"{procs} | {r.wall_s:.1f} | {r.load_after:.2f} |"
        )
    lines.append("")

    if problems:
        lines += ["**Results that disagree:**", ""]
        lines += [f"- ✗ {e} / {w}: {why}" for (w, e), why in sorted(problems.items())]
    else:
        checked = sum(1 for r in runs.values() for ev in r.workloads.values() if "summary" in ev)
        lines.append(f"All {checked} finished results agree with the reference engine's "
                     f"(first of {', '.join(REFERENCE_ORDER)} to finish: row counts, column "
                     f"sums, key-weighted sums, and every row sorted by key; floats to "
                     f"{REL_TOL:g} relative).")
    lines.append("")
    if footnotes:
        lines += [f"[^{i}]: {t}" for i, t in enumerate(footnotes, 1)] + [""]

    groups = next((f" ({ev['summary']['rows']:,} here)" for r in runs.values()
                   if "summary" in (ev := r.workloads.get("groupby_many", {}))), "")
    m, man = meta["machine"], data.manifest
    ab = man["arrow_bytes"]
    cores = m["usable_cores"]
    lines += [
        "Workloads (the same PySpark DataFrame code for Quiver and PySpark; Ray Data's "
        "`groupby(...).aggregate(Sum, Count)` and `Dataset.join` then `aggregate(Count, Sum, Sum)`):",
        "",
        *[f"- `{w}`: {WORKLOADS[w][0]}; reads "
          + ", ".join(f"{t}.{c}" for t, cs in READS[w].items() for c in cs)
          + f" ({data.bytes_read(w) / GB:.2f} GB)." for w in args.workloads],
        "",
        f"- **Data:** fact (key int64, amount float64) {spec.fact_rows:,} rows, "
        f"{sum(ab['fact'].values()) / GB:.2f} GB in Arrow, "
        f"{meta['fact_files']} Parquet file(s) ({meta['fact_mib']:.0f} MiB, snappy); dim "
        f"(key int64, weight float64) {spec.dim_rows:,} rows, "
        f"{sum(ab['dim'].values()) / GB:.2f} GB in Arrow, {meta['dim_files']} file(s) "
        f"({meta['dim_mib']:.0f} MiB). The fact's keys are drawn uniformly from "
        f"{spec.distinct_keys:,} of the dim's keys"
        + (f" (every {spec.stride}th)" if spec.stride > 1 else "")
        + f", so `groupby_many` has up to that many groups{groups} and every fact "
        "row joins with exactly one dim row. Seeded numpy, "
        f"seed {spec.seed} (`benchmarks/shuffle.py`).",
        f"- **Machine:** {m['cpu']}, {m['cores']} cores ({cores} usable), {m['ram']} RAM, "
        f"{m['os']}, Python {m['python']}, pyarrow {meta['pyarrow']}. Load average (1/5/15 "
        f"min) when the run started: {meta['load']}; *load after* is the 1-minute load "
        "average as each engine finished.",
        f"- **Settings:** Quiver `local[{cores}]` or `ray`, and PySpark `local[{cores}]`, with "
        f"`spark.sql.shuffle.partitions={args.partitions}` and "
        "`spark.sql.autoBroadcastJoinThreshold=-1` (the join is shuffled at any size, as "
        "Ray Data's always is); PySpark driver memory "
        f"{args.driver_memory}, UI off, Arrow on, AQE at its default (on). Ray: "
        f"`ray.init(num_cpus={cores}, object_store_memory={args.object_store_gib:g} GiB, "
        "include_dashboard=False)` — for quiver-ray made by the harness before the "
        f"session, so Quiver runs on that Ray; Ray Data with `num_partitions={args.partitions}` "
        "for the group-by and the join, its default shuffle strategy, progress bars off. "
        "Start-up: *import* is the engine's import (Ray's too for the Ray engines), "
        "*ray.init* starts the local Ray cluster, *session* is `getOrCreate()` (for "
        "PySpark: the JVM's launch).",
        "- **Memory:** *sampled* is the largest total RSS of the child's process tree seen "
        f"every {args.sample_s}s; *sum of per-process peaks* adds each process's kernel "
        "high-water mark (VmHWM), an upper bound. For Ray, RSS counts object-store pages "
        "(shared memory in /dev/shm) once per process that maps them, so both figures "
        "overstate its footprint.",
        "",
        f"<!-- {SECTION}:end -->",
    ]
    return "\n".join(lines)


# --- entry point ---------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=2.0,
                        help="GB (10^9 bytes) of Arrow data, fact and dim together")
    parser.add_argument("--keys", type=int, default=ShuffleSpec.keys,
                        help="distinct keys of the fact table (at most the dim's rows)")
    parser.add_argument("--dim-share", type=float, default=ShuffleSpec.dim_share,
                        help="the dim table's share of --gb")
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--no-warmup", action="store_true", help="time every run, the first too")
    parser.add_argument("--partitions", type=int, default=Settings.partitions,
                        help="shuffle partitions (spark.sql.shuffle.partitions, Ray Data num_partitions)")
    parser.add_argument("--object-store-gib", type=float, default=Settings.object_store_gib,
                        help="Ray's object store size")
    parser.add_argument("--driver-memory", default=Settings.driver_memory, help="PySpark's")
    add_run_arguments(parser)
    args = parse_run_arguments(parser, argv, list(ENGINES), list(WORKLOADS))
    meta = run_meta("benchmarks.shuffle", argv)
    data = ensure_data(ShuffleSpec(gb=args.gb, keys=args.keys, dim_share=args.dim_share),
                       args.cache / "shuffle")
    for t in ("fact", "dim"):
        files = list((data.root / t).glob("*.parquet"))
        meta[f"{t}_files"] = len(files)
        meta[f"{t}_mib"] = sum(p.stat().st_size for p in files) / 2**20
    log_dir = args.cache / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)

    runs = {e: run_engine(e, data, args, log_dir) for e in args.engines}
    problems = check_agreement(runs, args.workloads, REFERENCE_ORDER)
    for (w, e), why in sorted(problems.items()):
        bar = "!" * 78
        print(f"\n{bar}\n!!! RESULT MISMATCH: {e} on {w}: {why}\n{bar}", file=sys.stderr, flush=True)

    section = render(runs, problems, args, data, meta)
    print("\n" + section)
    if args.out != "-":
        write_section(Path(args.out), section, SECTION)
        print(f"\nwrote section '{TITLE}' to {args.out}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
