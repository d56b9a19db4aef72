"""Issue 20's fragment-engine lever, measured before it is built: Quiver's stages of TPC-H Q1, Q3 and Q6 run as
fragments by DuckDB and by DataFusion, against Quiver and the peers running the whole query.

    python -m benchmarks.fragments [--sf 1] [--repeat 5] [--out benchmarks/RESULTS.md|-]

A native vectorised engine behind Quiver's planner would run each stage's operators over that stage's
inputs, one task per split, the tasks' outputs handed on as Arrow (Quiver's shuffle and broadcast blocks).
This runs exactly that shape by hand, for the three queries, so the numbers say what such an executor could
win before anyone writes the translation from Quiver's physical plan:

- each map stage runs 2 tasks at a time on a thread pool (`local[2]`), one task per half of the table's row
  groups (Quiver's scan splits the file the same way), written once as a Parquet file of its own that the
  fragment engine reads with its own reader, pushing its projection and filter into the scan;
- each task runs on its worker thread's DuckDB connection (`threads=1`) or on a new DataFusion context (1
  target partition), the task's inputs registered for it;
- a stage's outputs are concatenated into one Arrow table, the next stage's input (a broadcast, or the
  shuffle of an aggregate's partial results), and the last stage runs once over it;
- the fragments' SQL is written here per query: Quiver's stage boundaries, not its operators.

Beside them: Quiver `local[2]` (SQL text), DuckDB and DataFusion over the whole query with the Parquet file
registered natively, and Polars' lazy query. Each run is timed from registering the tables to the answer as
Arrow; the median of `--repeat` runs after one warm-up, the engines taking turns within each repetition. All
run in this one process (Quiver imported first, as its memory settings need). Answers are compared with
DuckDB's whole-query answer.
"""
from __future__ import annotations

import quiver  # noqa: F401 (first: it sets Arrow's allocator options, which only apply before pyarrow loads)

# isort: split
import argparse
import math
import statistics
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from benchmarks.core import run_meta, write_section
from benchmarks.tpch.answers import answer_difference
from benchmarks.tpch.datagen import ensure_tables

SECTION = "benchmarks.fragments"
TASKS = 2
REL_TOL = 1e-6


@dataclass(frozen=True)
class Stage:
    """One stage: `sql` over `split` (the table each task reads a share of the row groups of) and `inputs`
    (earlier stages' outputs, whole in every task); a stage without a split table runs once."""

    name: str
    sql: str
    split: str | None = None
    inputs: tuple[str, ...] = ()


Q1_SUMS = ("sum(l_quantity) as sum_qty, sum(l_extendedprice) as sum_base_price, "
           "sum(l_extendedprice * (1 - l_discount)) as sum_disc_price, "
           "sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge, sum(l_discount) as sum_disc, "
           "count(*) as count_order")

# Each query as its stages, in the order they run.
QUERIES: dict[int, tuple[Stage, ...]] = {
    1: (
        Stage("partial", f"select l_returnflag, l_linestatus, {Q1_SUMS} from lineitem "
                         "where l_shipdate <= date '1998-09-02' group by l_returnflag, l_linestatus",
              split="lineitem"),
        Stage("final", "select l_returnflag, l_linestatus, sum(sum_qty) as sum_qty, "
                       "sum(sum_base_price) as sum_base_price, sum(sum_disc_price) as sum_disc_price, "
                       "sum(sum_charge) as sum_charge, sum(sum_qty) / sum(count_order) as avg_qty, "
                       "sum(sum_base_price) / sum(count_order) as avg_price, "
                       "sum(sum_disc) / sum(count_order) as avg_disc, sum(count_order) as count_order "
                       "from partial group by l_returnflag, l_linestatus order by l_returnflag, l_linestatus",
              inputs=("partial",)),
    ),
    3: (
        Stage("customers", "select c_custkey from customer where c_mktsegment = 'BUILDING'",
              split="customer"),
        Stage("orders_of", "select o_orderkey, o_orderdate, o_shippriority from orders join customers "
                           "on c_custkey = o_custkey where o_orderdate < date '1995-03-15'",
              split="orders", inputs=("customers",)),
        Stage("partial", "select l_orderkey, o_orderdate, o_shippriority, "
                         "sum(l_extendedprice * (1 - l_discount)) as revenue from lineitem join orders_of "
                         "on l_orderkey = o_orderkey where l_shipdate > date '1995-03-15' "
                         "group by l_orderkey, o_orderdate, o_shippriority",
              split="lineitem", inputs=("orders_of",)),
        Stage("final", "select l_orderkey, sum(revenue) as revenue, o_orderdate, o_shippriority from partial "
                       "group by l_orderkey, o_orderdate, o_shippriority order by revenue desc, o_orderdate "
                       "limit 10",
              inputs=("partial",)),
    ),
    6: (
        Stage("partial", "select sum(l_extendedprice * l_discount) as revenue from lineitem "
                         "where l_shipdate >= date '1994-01-01' and l_shipdate < date '1995-01-01' "
                         "and l_discount between 0.05 and 0.07 and l_quantity < 24",
              split="lineitem"),
        Stage("final", "select sum(revenue) as revenue from partial", inputs=("partial",)),
    ),
}


@cache
def halves(path: Path, tasks: int = TASKS) -> tuple[Path, ...]:
    """The table as `tasks` Parquet files (fewer if it has fewer row groups), each with a contiguous share of
    the file's row groups, written once
    beside it with the same row-group size and codec, so each fragment engine reads its task's split with
    its own Parquet reader (as a native executor would) and no engine's scan depends on another's."""
    source = pq.ParquetFile(path)
    meta = source.metadata
    groups = list(range(meta.num_row_groups))
    step = math.ceil(len(groups) / min(tasks, len(groups)))
    folder = path.parent / f"split{tasks}"
    parts = [folder / f"{path.stem}.{i}.parquet" for i in range(math.ceil(len(groups) / step))]
    if not all(p.exists() for p in parts):
        folder.mkdir(exist_ok=True)
        codec = meta.row_group(0).column(0).compression.lower()
        for part, first in zip(parts, range(0, len(groups), step)):
            table = source.read_row_groups(groups[first:first + step])
            staging = part.with_suffix(".tmp")
            pq.write_table(table, staging, row_group_size=meta.row_group(0).num_rows, compression=codec)
            staging.replace(part)
    return tuple(parts)


_worker = threading.local()


def duckdb_fragment(sql: str, tables: dict[str, object]) -> pa.Table:
    """One task of a stage on DuckDB: the worker thread's own connection (an executor keeps one per thread
    rather than pay for opening one per task), one thread; the task's tables registered, then dropped."""
    import duckdb

    con = getattr(_worker, "duckdb", None)
    if con is None:
        con = _worker.duckdb = duckdb.connect()
        con.execute("SET threads = 1")
    for name, data in tables.items():
        if isinstance(data, Path):
            con.execute(f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM read_parquet('{data}')")
        else:
            con.register(name, data)
    try:
        return con.sql(sql).to_arrow_table()
    finally:
        for name, data in tables.items():
            if isinstance(data, Path):
                con.execute(f"DROP VIEW {name}")
            else:
                con.unregister(name)


def datafusion_fragment(sql: str, tables: dict[str, object]) -> pa.Table:
    """One task of a stage on DataFusion: its own context, one target partition."""
    import datafusion

    ctx = datafusion.SessionContext(datafusion.SessionConfig().with_target_partitions(1))
    for name, data in tables.items():
        if isinstance(data, Path):
            ctx.register_parquet(name, str(data))
        else:
            ctx.register_record_batches(name, [data.to_batches()])
    return ctx.sql(sql).to_arrow_table()


FRAGMENT_ENGINES: dict[str, Callable[[str, dict[str, object]], pa.Table]] = {
    "duckdb fragments": duckdb_fragment,
    "datafusion fragments": datafusion_fragment,
}


def run_fragments(run_task: Callable[[str, dict[str, object]], pa.Table], query: tuple[Stage, ...],
                  paths: dict[str, Path], pool: ThreadPoolExecutor) -> pa.Table:
    """Every stage of `query` in order, map stages `TASKS` tasks at a time on `pool`."""
    outputs: dict[str, pa.Table] = {}
    for stage in query:
        shared = {name: outputs[name] for name in stage.inputs}
        if stage.split is None:
            outputs[stage.name] = run_task(stage.sql, shared)
            continue
        tasks = [{**shared, stage.split: part} for part in halves(paths[stage.split])]
        results = list(pool.map(run_task, [stage.sql] * len(tasks), tasks))
        outputs[stage.name] = pa.concat_tables(results)
    return outputs[query[-1].name]


# The engines that run each query whole, as `benchmarks.tpch` starts them (`local[2]` and 4 shuffle partitions
# for Quiver, default threads for the others).
WHOLE_QUERY_ENGINES = ("quiver", "duckdb", "datafusion", "polars")


def whole_query_runners(paths: dict[str, Path]) -> dict[str, Callable[[int], pa.Table]]:
    """Each engine of WHOLE_QUERY_ENGINES running query n whole, tables registered anew every run, its answer
    as Arrow."""
    from benchmarks.tpch import engines

    names = {t: str(p) for t, p in paths.items()}
    started = {name: engines.start(name, names, "sql") for name in WHOLE_QUERY_ENGINES}
    return {name: (lambda n, e=e: e.to_arrow(e.run(n))) for name, e in started.items()}


def measure(sf: float, repeat: int, log: Callable[[str], None] = print) -> dict[int, dict[str, tuple[float, bool]]]:
    """Per query, per setup: the median seconds and whether its answer matched DuckDB's whole-query one."""
    paths = ensure_tables(sf)
    whole = whole_query_runners(paths)
    setups: dict[str, Callable[[int], pa.Table]] = dict(whole)
    pool = ThreadPoolExecutor(TASKS)
    for name, task in FRAGMENT_ENGINES.items():
        setups[name] = lambda n, task=task: run_fragments(task, QUERIES[n], paths, pool)
    results: dict[int, dict[str, tuple[float, bool]]] = {}
    for n in QUERIES:
        reference = whole["duckdb"](n)
        times: dict[str, list[float]] = {name: [] for name in setups}
        agrees = {name: answer_difference(reference, setup(n), ordered=True, rel_tol=REL_TOL) is None
                  for name, setup in setups.items()}  # the warm-up run
        for _ in range(repeat):
            for name, setup in setups.items():
                start = time.perf_counter()
                setup(n)
                times[name].append(time.perf_counter() - start)
        results[n] = {name: (statistics.median(t), agrees[name]) for name, t in times.items()}
        log(f"Q{n:02d} " + " ".join(f"{name}={s:.3f}{'' if ok else '✗'}" for name, (s, ok) in results[n].items()))
    pool.shutdown()
    return results


def render(results: dict[int, dict[str, tuple[float, bool]]], meta: dict) -> str:
    setups = list(next(iter(results.values())))
    lines = [f"<!-- {SECTION}:begin -->",
             "## Stage fragments on a native engine: what issue 20's lever could win (TPC-H Q1, Q3, Q6)", "",
             f"Generated by `{meta['command']}` on {meta['date']} (load before: {meta['load']}). "
             "Seconds per query, the median of the repetitions after one warm-up, every setup in this one "
             "process, taking turns. *fragments*: Quiver's stages, hand-written as SQL, run by that engine one "
             f"task per half of the table's row groups, {TASKS} at a time, the tasks' outputs handed to the next "
             "stage as Arrow (see the module's docstring). ✗ marks an answer that differs from DuckDB's.", "",
             "| query | " + " | ".join(setups) + " | best of duckdb, polars |", "|---|" + "---|" * (len(setups) + 1)]
    means = {}
    for n, row in results.items():
        best = min(row["duckdb"][0], row["polars"][0])
        cells = [f"{s:.3f}{'' if ok else ' ✗'}" for s, ok in row.values()]
        lines.append(f"| Q{n:02d} | " + " | ".join(cells) + f" | {best:.3f} |")
    for name in setups:
        means[name] = math.exp(statistics.mean(math.log(results[n][name][0]) for n in results))
    best_mean = math.exp(statistics.mean(math.log(min(r["duckdb"][0], r["polars"][0])) for r in results.values()))
    lines.append("| **geomean** | " + " | ".join(f"{means[s]:.3f}" for s in setups) + f" | {best_mean:.3f} |")
    lines.append("| **over the best** | " + " | ".join(f"{means[s] / best_mean:.2f}×" for s in setups) + " | |")
    m = meta["machine"]
    lines += ["", f"- **Machine:** {m['cpu']}, {m['cores']} cores, {m['ram']} RAM, {m['os']}, Python {m['python']}, "
              f"pyarrow {meta['pyarrow']}.", "", f"<!-- {SECTION}:end -->"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sf", type=float, default=1.0, help="TPC-H scale factor (default 1)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per setup and query (default 5)")
    parser.add_argument("--out", default="benchmarks/RESULTS.md", help="markdown file to update, or '-'")
    args = parser.parse_args(argv)
    meta = run_meta("benchmarks.fragments", argv)
    section = render(measure(args.sf, args.repeat), meta)
    if args.out == "-":
        print(section)
    else:
        write_section(Path(args.out), section, SECTION)
        print(f"wrote section {SECTION!r} to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
