"""The native executor: runs a stage fragment (scan, filters, projections, broadcast joins, a partial aggregate)
as one DuckDB query per task, on a connection its worker thread keeps, and streams the result as Arrow batches.

Where the fragments go is `native_fragments`: the largest subtrees of a stage that `sql.fragment`
translates exactly. A DuckDB error in a task (which the translation rules out for every value Spark
accepts) reruns the task on the CPU executor, whose answer or error is Spark's.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from quiver.engine.core import types as T
from quiver.engine.core.ansi import ansi_enabled
from quiver.executors.base import Device, DeviceFallback, TaskContext
from quiver.executors.cpu.aggregate import check_sum_buffer, partial_state_schema
from quiver.executors.cpu.dictionary_eval import decode_dictionaries
from quiver.executors.cpu.shuffle import read_shuffle
from quiver.executors.native.sql import Untranslatable, broadcast_reads, broadcast_relation, fragment
from quiver.planners.physical import nodes as P
from quiver.planners.physical.nodes import estimated_size

# Rows per batch DuckDB hands back (Quiver's operators stream batches of about this size).
BATCH_ROWS = 1 << 17
NATIVE_OPERATORS = frozenset({"ScanExec", "FilterExec", "ProjectExec", "HashAggregateExec", "HashJoinExec"})
# A fragment runs natively when it is expected to give at most this share of the bytes its scan reads
# (`quiver.native.maxOutputShare`).
NATIVE_OUTPUT_SHARE = 0.5
# A fragment whose scans are expected to read less than this stays on Quiver: DuckDB's per-query cost (to
# plan the query and open the file) is more than it saves there.
NATIVE_MIN_SCAN_BYTES = 16 << 20

_local = threading.local()


class DuckDBExecutor:
    """Runs translated fragments on DuckDB, one thread per task (Quiver's scheduler runs the tasks side by
    side), under the task's share of the memory budget (DuckDB spills past it itself)."""

    device = Device("cpu", 0, engine="duckdb")
    capabilities = NATIVE_OPERATORS

    def __init__(self, max_output_share: float = NATIVE_OUTPUT_SHARE, min_scan_bytes: int = NATIVE_MIN_SCAN_BYTES):
        # A fragment runs here when expected to read at least min_scan_bytes and hand on at most
        # max_output_share of them.
        self.max_output_share = max_output_share
        self.min_scan_bytes = min_scan_bytes

    def unsupported(self, plan: P.PhysicalPlan) -> str | None:
        """None when the whole subtree under `plan` translates, else why not."""
        try:
            fragment(plan, None, ansi=ansi_enabled())
        except Untranslatable as e:
            return f"no exact DuckDB translation of {e}"
        return None

    def execute(self, plan: P.PhysicalPlan, partition: int, ctx: TaskContext) -> Iterator[pa.RecordBatch]:
        expected = self.output_schema(plan)
        try:
            sql = fragment(plan, partition, expected if isinstance(plan, P.HashAggregateExec) else None,
                           ansi_enabled())
        except Untranslatable as e:  # this partition's files differ from those placement looked at
            raise DeviceFallback(f"no exact DuckDB translation of {e}") from e
        builds = {broadcast_relation(read): _broadcast_table(read, partition, ctx)
                  for read in broadcast_reads(plan)}
        batches = self._run(sql, expected, ctx, builds)
        return _checked_sums(batches, plan) if isinstance(plan, P.HashAggregateExec) else batches

    @staticmethod
    def output_schema(plan: P.PhysicalPlan) -> pa.Schema:
        """The columns (internal names) and Arrow types Quiver's own executor gives `plan`'s batches."""
        if isinstance(plan, P.HashAggregateExec):
            return partial_state_schema(plan.keys, plan.calls)
        return pa.schema([pa.field(a.internal_name, a.dtype.to_arrow()) for a in plan.output])

    def _run(self, sql: str, expected: pa.Schema, ctx: TaskContext,
             builds: dict[str, pa.Table]) -> Iterator[pa.RecordBatch]:
        con = connection()
        for name, table in builds.items():
            con.register(name, table)
        try:
            yield from self._query(con, sql, expected, ctx)
        finally:
            for name in builds:
                con.unregister(name)

    def _query(self, con: Any, sql: str, expected: pa.Schema, ctx: TaskContext) -> Iterator[pa.RecordBatch]:
        import duckdb

        with ctx.memory.reservation("native fragment (DuckDB)") as held:
            # DuckDB's own buffers are held under the process's budget like any operator's state: as much
            # as the budget gives now, DuckDB spilling past it into the task's spill folder.
            limit = _reserve(held, ctx.memory.budget)
            try:
                con.execute(f"SET memory_limit = '{max(1, limit >> 20)}MiB'")
                os.makedirs(ctx.spill.path, mode=0o700, exist_ok=True)  # DuckDB makes only the last folder
                con.execute(f"SET temp_directory = '{os.path.join(ctx.spill.path, 'duckdb')}'")
                reader = con.sql(sql).to_arrow_reader(BATCH_ROWS)
                for batch in reader:
                    if batch.num_rows:
                        yield _conform(batch, expected)
            except duckdb.Error as e:
                raise DeviceFallback(f"DuckDB could not run a fragment of stage {ctx.stage_id}: {e}") from e


# A fragment asks the budget for 1/NATIVE_MEMORY_SHARE of it for DuckDB's buffers, and runs with at least
# NATIVE_MIN_MEMORY.
NATIVE_MEMORY_SHARE = 4
NATIVE_MIN_MEMORY = 64 << 20


def _reserve(held: Any, budget: int) -> int:
    """Reserve a quarter of the budget for a fragment, or as much as is free down to NATIVE_MIN_MEMORY
    (counted even past the budget, so other holders spill for it); returns the bytes reserved."""
    want = max(NATIVE_MIN_MEMORY, budget // NATIVE_MEMORY_SHARE)
    while want > NATIVE_MIN_MEMORY and not held.try_grow(want):
        want //= 2
    if held.held == 0:
        held.grow(max(want, NATIVE_MIN_MEMORY))
    return held.held


def _broadcast_table(read: P.ShuffleReadExec, partition: int, ctx: TaskContext) -> pa.Table:
    """The rows of broadcast `read` as one Arrow table under the attributes' internal names, dictionaries
    decoded (DuckDB reads the buffers in place)."""
    schema = DuckDBExecutor.output_schema(read)
    batches = read_shuffle(ctx.blocks, f"job{ctx.job_id}", read.stage_id, read.blocks_for(partition))
    return pa.Table.from_batches([_conform(decode_dictionaries(b), schema) for b in batches if b.num_rows],
                                 schema=schema)


def connection() -> Any:
    """This thread's DuckDB connection, kept for the thread's next tasks rather than opened per task; one
    DuckDB thread each, as Quiver's scheduler runs the tasks side by side, and no join reordering."""
    import duckdb

    con = getattr(_local, "duckdb", None)
    if con is None:
        con = duckdb.connect(config={"threads": 1, "preserve_insertion_order": False})
        # DuckDB's own progress bar would print into the user's output under Quiver's (a fragment past 2 s).
        con.execute("SET enable_progress_bar = false")
        known = {row[0] for row in con.execute("SELECT name FROM duckdb_optimizers()").fetchall()}
        con.execute(f"SET disabled_optimizers = '{','.join(o for o in DISABLED_OPTIMIZERS if o in known)}'")
        _local.duckdb = con
    return con


# DuckDB optimizers a fragment runs without (those this DuckDB has):
# - join_order: joins run in the order Quiver's planner wrote them, each building on its broadcast side;
#   reordered, DuckDB may join two broadcast sides first on a key that fans out (TPC-H Q5's nation keys).
# - partial_aggregate_pushdown: without join_order's cardinality estimates DuckDB takes a Parquet scan for
#   empty and pre-aggregates the probe side below the join by its key, a hash aggregate over every row the
#   join then mostly drops (TPC-H Q3 took 1.25x as long: benchmarks/RESULTS.md, 2026-12-07 fourth session).
DISABLED_OPTIMIZERS = ("join_order", "partial_aggregate_pushdown")


def _checked_sums(batches: Iterator[pa.RecordBatch], plan: P.HashAggregateExec) -> Iterator[pa.RecordBatch]:
    """The partial states, each decimal sum checked against the 38 digits Spark's sum buffer holds (DuckDB
    adds decimals in 128 bits, which hold a little more): past them the sum overflows, as on the CPU."""
    sums = [f"s{i}" if c.function.name == "sum" else f"s{i}_sum" for i, c in enumerate(plan.calls)
            if c.function.name in ("sum", "avg") and isinstance(c.function.args[0].dtype, T.DecimalType)]
    for batch in batches:
        for name in sums:
            check_sum_buffer(batch.column(name))
        yield batch


def _conform(batch: pa.RecordBatch, expected: pa.Schema) -> pa.RecordBatch:
    """`batch` with Quiver's column names and types (strings, decimal precisions and sums' widths differ)."""
    arrays = []
    for column, field in zip(batch.columns, expected):
        arrays.append(column if column.type == field.type else column.cast(field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=expected)


def reduces(fragment_root: P.PhysicalPlan, max_share: float = NATIVE_OUTPUT_SHARE,
            min_scan_bytes: int = NATIVE_MIN_SCAN_BYTES) -> bool:
    """Whether the fragment is expected to read at least `min_scan_bytes` and hand on at most `max_share` of
    them.

    DuckDB decodes and filters faster than Quiver's reader, but its result comes back to Arrow as new
    buffers, strings copied and without Quiver's dictionary encoding; a fragment that keeps most of what
    it reads (a mild filter, a partial aggregate over near-unique keys, which Quiver's run-aware aggregate
    does faster) loses that, one that filters or aggregates most of it away wins.
    """
    scans = [n for n in fragment_root.walk() if isinstance(n, P.ScanExec)]
    out, into = estimated_size(fragment_root), [estimated_size(s) for s in scans]
    if out is None or any(s is None for s in into):
        return False
    read = sum(s[1] for s in into if s is not None)
    return read >= min_scan_bytes and out[1] <= max_share * read


def fragment_choices(root: P.PhysicalPlan, placed: set[int],
                     executor: DuckDBExecutor) -> list[tuple[P.PhysicalPlan, str | None]]:
    """Each fragment root considered in a stage's tree, top down, with why it stays on Quiver's executor (None:
    it runs on `executor`). The operators in `placed` (by id: already on a device) are not considered; an
    operator that does not translate is noted and its children considered in turn."""
    choices: list[tuple[P.PhysicalPlan, str | None]] = []

    def visit(node: P.PhysicalPlan) -> None:
        if id(node) in placed:
            return
        if type(node).__name__ in NATIVE_OPERATORS and not isinstance(node, P.ScanExec) \
                and not any(id(n) in placed for n in node.walk()):
            why = executor.unsupported(node)
            translates = why is None
            if translates and not reduces(node, executor.max_output_share, executor.min_scan_bytes):
                why = (f"expected to read under {executor.min_scan_bytes >> 20} MiB, or to hand on more than "
                       f"{executor.max_output_share:g} of what its scan reads (quiver.native.maxOutputShare)")
            choices.append((node, why))
            if translates:
                return
        for child in node.children():
            visit(child)

    visit(root)
    return choices


def native_fragments(root: P.PhysicalPlan, placed: set[int], executor: DuckDBExecutor) -> list[P.PhysicalPlan]:
    """The largest subtrees of a stage's tree that `executor` runs whole, outside the operators in `placed`
    (by id: already on a device), where they `reduce` their scan's data. A scan alone is left to Quiver's
    reader: without a filter, projection or aggregate in the fragment DuckDB only adds a conversion."""
    return [node for node, why in fragment_choices(root, placed, executor) if why is None]
