"""`quiver calibrate`: time the CPU executor's operators on this machine and fit a cost profile.

Each operator runs on synthetic Arrow data at several row counts and column mixes (int64,
float64, decimal, string, and all four at once), so rows and bytes vary independently; each
operator's `OperatorCost` is then fitted by non-negative least squares on *relative* residuals
(every measurement weighted by 1/seconds), since placement compares costs by ratio. A separate
set of held-out sizes, never used in fitting, checks the fit (`evaluate_profile`).

Times are the process's CPU seconds, not wall seconds: the operators run on the calling
thread, so the two agree on an idle core, and on a shared machine only CPU time measures the
operator rather than its neighbours (wall times here varied by 2x with other tenants' load).
"""
from __future__ import annotations

import datetime
import gc
import itertools
import os
import platform
import socket
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from quiver.engine.core import types as T
from quiver.engine.core.errors import ConfigurationError
from quiver.engine.core.expressions import (
    AggregateFunction,
    AttributeRef,
    BinaryArithmetic,
    Comparison,
    Expr,
    Literal,
    SortOrder,
    new_expr_id,
)
from quiver.executors.cpu.aggregate import aggregate_partition
from quiver.executors.cpu.evaluate import evaluate_array, filter_batch
from quiver.executors.cpu.join import stream_hash_join
from quiver.executors.cpu.partitioning import hash_partition_ids, split_by_ids
from quiver.executors.cpu.sort import sort_indices, top_k_indices
from quiver.planners.cost import OPERATORS, DeviceProfile, OperatorCost
from quiver.planners.physical.nodes import AggregateCall

FIT_SIZES = (1 << 14, 1 << 16, 1 << 18, 1 << 20)
# between the fitted sizes, and one past the largest: placement extrapolates too
HELD_OUT_SIZES = (1 << 15, 1 << 17, 1 << 19, 1 << 21)
QUICK_SIZES = (1 << 12, 1 << 14)
QUICK_HELD_OUT_SIZES = (1 << 13,)
DEFAULT_REPEATS = 5
CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}
VARIANTS = ("int64", "float64", "decimal", "string", "wide")
PROBE_BATCH_ROWS = 1 << 16
EXCHANGE_PARTITIONS = 8
TOPK = 100
# Which OperatorCost terms each operator's fit may use; the rest stay 0.
TERMS = dict.fromkeys(OPERATORS, ("fixed", "per_row", "per_byte"))
TERMS["aggregate"] = ("fixed", "per_row", "per_byte", "per_group")
TERMS["join_probe"] = ("fixed", "per_row", "per_byte", "per_build_row")

KEY = AttributeRef("k", T.LongType(), False, new_expr_id())
_PAYLOAD = {
    "int64": AttributeRef("i", T.LongType(), False, new_expr_id()),
    "float64": AttributeRef("f", T.DoubleType(), False, new_expr_id()),
    "decimal": AttributeRef("d", T.DecimalType(12, 2), False, new_expr_id()),
    "string": AttributeRef("s", T.StringType(), False, new_expr_id()),
}
_STRINGS = pa.array([f"{'abcdefghijklmnop'[:4 + i % 13]}{i}" for i in range(4096)])


@dataclass(frozen=True)
class Measurement:
    """One timed run: an operator's inputs and the median seconds it took."""

    op: str
    variant: str
    rows: int
    bytes: int
    groups: int
    build_rows: int
    build_bytes: int
    seconds: float


@dataclass
class Case:
    """A prepared operator run: its cost-model inputs, the call to time, and the times taken."""

    op: str
    variant: str
    rows: int
    bytes: int
    run: Callable[[], object]
    groups: int = 0
    build_rows: int = 0
    build_bytes: int = 0

    def measurement(self, seconds: float) -> Measurement:
        return Measurement(self.op, self.variant, self.rows, self.bytes, self.groups, self.build_rows,
                           self.build_bytes, seconds)


def payload_attrs(variant: str) -> list[AttributeRef]:
    """The payload columns of a variant: one of int64, float64, decimal, string, or all four ("wide")."""
    return list(_PAYLOAD.values()) if variant == "wide" else [_PAYLOAD[variant]]


class Inputs:
    """Synthetic batches for one measurement run; operators share them (and their payload columns)."""

    def __init__(self, seed: int, folder: str):
        self.rng = np.random.default_rng(seed)
        self.folder = folder
        self._base: dict[tuple[str, int], pa.RecordBatch] = {}

    def base(self, variant: str, rows: int) -> pa.RecordBatch:
        """Key `k` uniform over [0, rows) and the variant's payload columns."""
        if (variant, rows) not in self._base:
            attrs = payload_attrs(variant)
            arrays = [pa.array(self.rng.integers(0, rows, rows))] + [self._column(a, rows) for a in attrs]
            names = [KEY.internal_name] + [a.internal_name for a in attrs]
            self._base[(variant, rows)] = pa.RecordBatch.from_arrays(arrays, names=names)
        return self._base[(variant, rows)]

    def keyed(self, variant: str, rows: int, keys: np.ndarray) -> pa.RecordBatch:
        """The first len(keys) base rows with `keys` as their key column."""
        batch = self.base(variant, rows).slice(0, len(keys))
        return batch.set_column(0, KEY.internal_name, pa.array(keys))

    def _column(self, attr: AttributeRef, rows: int) -> pa.Array:
        t = attr.dtype
        if isinstance(t, T.LongType):
            return pa.array(self.rng.integers(-1_000_000, 1_000_000, rows))
        if isinstance(t, T.DoubleType):
            return pa.array(self.rng.standard_normal(rows))
        if isinstance(t, T.DecimalType):
            return pa.array(self.rng.integers(-1_000_000, 1_000_000, rows, dtype=np.int32)).cast(t.to_arrow())
        return _STRINGS.take(pa.array(self.rng.integers(0, len(_STRINGS), rows)))


def group_count(variant: str, rows: int) -> int:
    """Aggregate group counts, from a few dozen to one per four rows across the variants."""
    per_group = {"int64": 0, "float64": 64, "decimal": 4, "string": 1024, "wide": 16}[variant]
    return min(rows, max(1, rows // per_group) if per_group else 32)


def build_share(variant: str) -> int:
    """Probe rows per build row in the join_probe runs, from 1 to 64 across the variants."""
    return {"int64": 1, "float64": 16, "decimal": 4, "string": 64, "wide": 2}[variant]


# ---------------------------------------------------------------- one case per operator


def _scan_case(data: Inputs, variant: str, rows: int) -> Case:
    batch = data.base(variant, rows)
    path = os.path.join(data.folder, f"scan-{variant}-{rows}.parquet")
    pq.write_table(pa.Table.from_batches([batch]), path, compression="snappy", row_group_size=PROBE_BATCH_ROWS)

    def run():
        # as quiver/connectors/parquet.py reads a file: no pre-buffering, a row group at a time, no threads
        reader = pq.ParquetFile(path, pre_buffer=False)
        return [reader.read_row_group(i, use_threads=False) for i in range(reader.metadata.num_row_groups)]

    return Case("scan", variant, rows, batch.nbytes, run)


def _filter_case(data: Inputs, variant: str, rows: int) -> Case:
    batch = data.base(variant, rows)
    condition = Comparison("<", KEY, Literal(rows // 2, T.LongType()))
    return Case("filter", variant, rows, batch.nbytes, lambda: filter_batch(batch, condition))


def projection(attr: AttributeRef) -> Expr:
    """The benchmark's projection of one column: arithmetic on numbers, strings passed through."""
    t = attr.dtype
    if isinstance(t, T.LongType):
        return BinaryArithmetic("+", BinaryArithmetic("*", attr, Literal(3, T.LongType())), attr)
    if isinstance(t, T.DoubleType):
        return BinaryArithmetic("+", BinaryArithmetic("*", attr, Literal(1.5, T.DoubleType())), attr)
    if isinstance(t, T.DecimalType):
        return BinaryArithmetic("+", attr, attr)
    return attr  # strings pass through, as most projections carry them


def _project_case(data: Inputs, variant: str, rows: int) -> Case:
    batch = data.base(variant, rows)
    exprs = [projection(KEY)] + [projection(a) for a in payload_attrs(variant)]
    names = [f"p{i}" for i in range(len(exprs))]

    # a column passed through is zero-copy: project's bytes are those its expressions compute from
    computed = sum(batch.column(a.internal_name).nbytes for e, a in zip(exprs, [KEY, *payload_attrs(variant)])
                   if e is not a)

    def run():
        return pa.RecordBatch.from_arrays([evaluate_array(e, batch) for e in exprs], names=names)

    return Case("project", variant, rows, computed, run)


def _aggregate_case(data: Inputs, variant: str, rows: int) -> Case:
    groups = group_count(variant, rows)
    batch = data.keyed(variant, rows, data.rng.integers(0, groups, rows))
    calls = []
    for a in payload_attrs(variant):
        fn = AggregateFunction("max" if isinstance(a.dtype, T.StringType) else "sum", (a,))
        calls.append(AggregateCall(fn, AttributeRef(fn.sql(), fn.dtype, True, new_expr_id())))
    keys = ((KEY, AttributeRef("g", T.LongType(), False, new_expr_id())),)
    return Case("aggregate", variant, rows, batch.nbytes,
                 lambda: list(aggregate_partition([batch], keys, tuple(calls), "partial")), groups=groups)


_BUILD_KEY = AttributeRef("bk", T.LongType(), False, new_expr_id())


def _join(probe: pa.RecordBatch, build: pa.RecordBatch, variant: str) -> Callable[[], object]:
    """An inner hash join as the CPU executor runs one: probe batches streamed through a table built on `build`."""
    probe_attrs = (KEY, *payload_attrs(variant))
    build_payload = tuple(AttributeRef(f"b{a.name}", a.dtype, False, new_expr_id()) for a in payload_attrs(variant))
    table = pa.Table.from_batches([build]).rename_columns(
        [_BUILD_KEY.internal_name] + [a.internal_name for a in build_payload])
    output = probe_attrs + (_BUILD_KEY, *build_payload)
    batches = [probe.slice(s, PROBE_BATCH_ROWS) for s in range(0, probe.num_rows, PROBE_BATCH_ROWS)]

    def run():
        return list(stream_hash_join(iter(batches), probe_attrs, (KEY,), table, (_BUILD_KEY,), "inner", output,
                                     probe_is_left=True))

    return run


def _join_build_case(data: Inputs, variant: str, rows: int) -> Case:
    build = data.keyed(variant, rows, data.rng.permutation(rows))
    probe = data.keyed(variant, rows, np.array([rows // 2]))
    return Case("join_build", variant, rows, build.nbytes, _join(probe, build, variant))


def _join_probe_case(data: Inputs, variant: str, rows: int) -> Case:
    build_rows = max(1, rows // build_share(variant))
    build = data.keyed(variant, rows, data.rng.permutation(build_rows))
    probe = data.keyed(variant, rows, data.rng.integers(0, 2 * build_rows, rows))  # half the keys match
    return Case("join_probe", variant, rows, probe.nbytes, _join(probe, build, variant),
                 build_rows=build_rows, build_bytes=build.nbytes)


ORDER = (SortOrder(KEY, True, None),)


def _sort_case(data: Inputs, variant: str, rows: int) -> Case:
    batch = data.base(variant, rows)

    def run():  # as SortExec: the permutation of the keys, then one take of every column
        return batch.take(sort_indices([evaluate_array(KEY, batch)], ORDER))

    return Case("sort", variant, rows, batch.nbytes, run)


def _topk_case(data: Inputs, variant: str, rows: int) -> Case:
    batch = data.base(variant, rows)

    def run():
        return batch.take(top_k_indices([evaluate_array(KEY, batch)], ORDER, TOPK))

    return Case("topk", variant, rows, batch.nbytes, run)


def _exchange_case(data: Inputs, variant: str, rows: int) -> Case:
    batch = data.base(variant, rows)

    def run():
        ids = hash_partition_ids([batch.column(0)], EXCHANGE_PARTITIONS)
        return split_by_ids(batch, ids, EXCHANGE_PARTITIONS)

    return Case("exchange", variant, rows, batch.nbytes, run)


BENCHMARKS = {
    "scan": "ParquetFile.read_row_group of a snappy file in 64Ki-row groups from the page cache, as "
            "quiver/connectors/parquet.py reads one; bytes = the decoded Arrow bytes",
    "filter": "filter_batch with k < rows/2 (half the rows survive); bytes = the input batch",
    "project": "evaluate_array of c*3+c (int64), c*1.5+c (float64), c+c (decimal) per column, strings passed "
               "through; bytes = the columns computed from",
    "aggregate": "aggregate_partition, partial sum (max for strings) grouped by an int64 key, 32 to rows/4 groups",
    "join_build": "stream_hash_join, inner, with a one-row probe: the hash table on rows unique int64 keys and "
                  "their payload",
    "join_probe": "stream_hash_join, inner, probe in 64Ki-row batches with half its keys matching, build side "
                  "rows/64 to rows; fitted to the whole join minus the join_build estimate",
    "sort": "sort_indices on an int64 key, then one take of the batch, as SortExec",
    "topk": "top_k_indices with k=100 on an int64 key, then a take",
    "exchange": "hash_partition_ids on an int64 key into 8 partitions, then split_by_ids",
}

CASES: dict[str, Callable[[Inputs, str, int], Case]] = {
    "scan": _scan_case, "filter": _filter_case, "project": _project_case, "aggregate": _aggregate_case,
    "join_build": _join_build_case, "join_probe": _join_probe_case, "sort": _sort_case, "topk": _topk_case,
    "exchange": _exchange_case,
}


# ---------------------------------------------------------------- timing


def measure(sizes: Sequence[int], repeats: int = 3, operators: Iterable[str] = OPERATORS,
            variants: Sequence[str] = VARIANTS, seed: int = 0, clock: str = "cpu") -> list[Measurement]:
    """Median seconds of every operator x variant x size on this machine's CPU executor.

    `clock` "cpu" counts the process's CPU seconds (the operators run on the calling thread),
    which is what an operator costs on a core of its own; "wall" also counts waiting for a
    core, which on a shared machine depends on its other tenants more than on the operator.

    Runs go round-robin, one pass over every case per repeat in a shuffled order, so that a
    slow spell of a shared machine spreads over all cases instead of skewing a few; a run
    under 20 ms is repeated within its pass, since it is noisier.
    """
    operators = list(operators)
    with tempfile.TemporaryDirectory(prefix="quiver-calibrate-") as folder:
        data = Inputs(seed, folder)
        for op, variant in itertools.product(operators, variants):
            CASES[op](Inputs(seed, folder), variant, 256).run()  # the first call may compile or import
        cases = [CASES[op](data, variant, int(rows))
                 for op, variant, rows in itertools.product(operators, variants, sizes)]
        return time_cases(cases, repeats, CLOCKS[clock], data.rng)


def time_cases(cases: Sequence[Case], repeats: int, timer: Callable[[], float],
               rng: np.random.Generator) -> list[Measurement]:
    """Median seconds of each case: one shuffled pass over every case per repeat (see `measure`)."""
    times: list[list[float]] = [[] for _ in cases]
    inner = [1] * len(cases)
    order = list(range(len(cases)))
    for p in range(max(1, repeats)):
        rng.shuffle(order)
        for i in order:
            times[i].extend(_timed(cases[i].run, inner[i], timer))
            if p == 0:
                first = min(times[i])
                inner[i] = 1 if first > 0.02 else 3 if first > 0.002 else 9
    return [c.measurement(float(np.median(t))) for c, t in zip(cases, times)]


def _timed(run: Callable[[], object], n: int, timer: Callable[[], float]) -> list[float]:
    """Seconds of `n` calls of `run`, with the cyclic collector off: one of its full passes
    over this process takes tens of milliseconds, longer than a small run."""
    out = []
    gc.disable()
    try:
        for _ in range(n):
            start = timer()
            run()
            out.append(timer() - start)
    finally:
        gc.enable()
    return out


# ---------------------------------------------------------------- fitting


def _features(m: Measurement, terms: Sequence[str]) -> list[float]:
    values = {"fixed": 1.0, "per_row": m.rows, "per_byte": m.bytes, "per_group": m.groups,
              "per_build_row": m.build_rows}
    return [float(values[t]) for t in terms]


def nnls(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Non-negative least squares, exactly, by trying every support set (a handful of columns here)."""
    n = a.shape[1]
    best, best_err = np.zeros(n), float(np.sum(b * b))
    for k in range(1, n + 1):
        for support in itertools.combinations(range(n), k):
            cols = list(support)
            x, *_ = np.linalg.lstsq(a[:, cols], b, rcond=None)
            if np.any(x < 0):
                continue
            err = float(np.sum((a[:, cols] @ x - b) ** 2))
            if err < best_err:
                best, best_err = np.zeros(n), err
                best[cols] = x
    return best


def fit_cost(points: Sequence[Measurement], terms: Sequence[str],
             offset: Callable[[Measurement], float] | None = None) -> OperatorCost:
    """The OperatorCost minimising squared relative error over `points` (seconds minus `offset`)."""
    a = np.array([_features(m, terms) for m in points])
    target = np.array([m.seconds - (offset(m) if offset else 0.0) for m in points])
    weight = 1.0 / np.array([max(m.seconds, 1e-9) for m in points])
    # scale columns to unit size so the solver does not see 1 next to 1e8
    scale = np.maximum(np.abs(a * weight[:, None]).max(axis=0), 1e-300)
    x = nnls(a * weight[:, None] / scale, target * weight) / scale
    return OperatorCost(**{"fixed": 0.0, "per_row": 0.0, "per_byte": 0.0, **{t: float(v) for t, v in zip(terms, x)}})


def _build_seconds(cost: OperatorCost) -> Callable[[Measurement], float]:
    return lambda m: cost.seconds(m.build_rows, m.build_bytes)


MODEL_NOTE = ("seconds = fixed + per_row*rows + per_byte*bytes (+ per_group*groups, per_build_row*build_rows), "
              "each operator fitted by non-negative least squares on relative residuals")


def fit_costs(points: Sequence[Measurement],
              offsets: Mapping[str, Callable[[Measurement], float]] | None = None) -> dict[str, OperatorCost]:
    """One OperatorCost per operator fitted from `points`; `offsets[op]` is seconds of each of op's
    measurements that another part of the profile already charges (subtracted before fitting)."""
    offsets = dict(offsets or {})
    by_op = {op: [m for m in points if m.op == op] for op in OPERATORS}
    costs: dict[str, OperatorCost] = {}
    for op in OPERATORS:
        if op != "join_probe":
            costs[op] = fit_cost(by_op[op], TERMS[op], offsets.get(op))
    # a measured join is build + probe: probe costs what the build model does not explain
    costs["join_probe"] = fit_cost(by_op["join_probe"], TERMS["join_probe"], _build_seconds(costs["join_build"]))
    return {op: costs[op] for op in OPERATORS}


def fit_profile(points: Sequence[Measurement], name: str, source: str) -> DeviceProfile:
    """A kind="cpu" profile with one OperatorCost per operator fitted from `points`."""
    return DeviceProfile(
        name=name, kind="cpu", memory_bytes=host_memory_bytes(), launch_overhead_s=0.0,
        host_to_device_bytes_per_s=0.0, device_to_host_bytes_per_s=0.0, transfer_latency_s=0.0,
        operators=fit_costs(points), source=source, cores=os.cpu_count() or 1,
        notes={"model": MODEL_NOTE,
               "clock": "CPU seconds of the calling thread's process: an operator on a core of its own",
               "sizes": f"fitted on {sorted({m.rows for m in points})} rows; below the smallest, fixed costs "
                        "are underestimated",
               "variants": "an int64 key plus a payload of int64 | float64 | decimal(12,2) | string (4-16 "
                           "characters) | all four, so rows and bytes vary independently",
               "memory_bytes": "physical memory x 0.8, the rest left to the OS, Python and the object store",
               "launch_overhead_s": "0: per-call Python overhead is in each operator's fixed cost",
               "cores": "this machine's CPUs: the costs are per core, and a stage's tasks spread over them",
               "transfer": "not applicable: a CPU reads host memory directly", **BENCHMARKS})


def host_memory_bytes() -> int:
    """Physical memory x 0.8 (8 GiB when the OS will not say)."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") * 0.8)
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def predicted_seconds(profile: DeviceProfile, m: Measurement) -> float:
    """The profile's estimate for a measurement; a measured join is charged its build and its probe."""
    if m.op == "join_probe":
        return (profile.operator_seconds("join_build", m.build_rows, m.build_bytes)
                + profile.operator_seconds("join_probe", m.rows, m.bytes, build_rows=m.build_rows))
    return profile.operator_seconds(m.op, m.rows, m.bytes, m.groups, m.build_rows)


# ---------------------------------------------------------------- entry points


def calibrate(output_path: str | None, sizes: Sequence[int] = FIT_SIZES, repeats: int = DEFAULT_REPEATS,
              name: str = "cpu-calibrated") -> DeviceProfile:
    """Time the CPU executor at `sizes`, fit a profile, and write it as JSON to `output_path` (if given)."""
    started = time.perf_counter()
    points = measure(sizes, repeats)
    host = socket.gethostname()
    when = datetime.date.today().isoformat()
    source = (f"calibrated on {host} {when} ({platform.processor() or platform.machine()}, "
              f"{os.cpu_count()} CPUs) by quiver calibrate in {time.perf_counter() - started:.0f} s")
    profile = fit_profile(points, name, source)
    if output_path:
        write_profile(profile, output_path)
    return profile


def write_profile(profile: DeviceProfile, output_path: str) -> None:
    """Write `profile` as JSON, atomically: a reader never sees half a file."""
    os.makedirs(os.path.dirname(os.path.abspath(output_path)), exist_ok=True)
    tmp = f"{output_path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(profile.to_json())
    os.replace(tmp, output_path)


def evaluate_profile(profile: DeviceProfile, sizes: Sequence[int] = HELD_OUT_SIZES, repeats: int = DEFAULT_REPEATS,
                     seed: int = 1, clock: str = "cpu") -> dict:
    """Median relative error |predicted - measured| / measured per operator, per size and overall, at `sizes`.

    Use sizes the profile was not fitted on. The `join_probe` row compares build + probe
    against a whole measured join.
    """
    if profile.kind != "cpu":
        raise ConfigurationError(f"evaluate_profile times the CPU executor; profile '{profile.name}' "
                                 f"describes a {profile.kind} (check it with calibrate_device.evaluate_device_profile)")
    points = measure(sizes, repeats, seed=seed, clock=clock)
    return error_report(points, sizes, lambda m: predicted_seconds(profile, m))


def error_report(points: Sequence[Measurement], sizes: Sequence[int],
                 predict: Callable[[Measurement], float]) -> dict:
    """Median relative error of `predict` against `points`, per operator, per size and overall."""
    errors: dict[str, list[float]] = {op: [] for op in OPERATORS}
    rows = []
    for m in points:
        pred = predict(m)
        err = abs(pred - m.seconds) / max(m.seconds, 1e-9)
        errors[m.op].append(err)
        rows.append({"op": m.op, "variant": m.variant, "rows": m.rows, "bytes": m.bytes,
                     "measured_s": m.seconds, "predicted_s": pred, "relative_error": err})
    per_op = {op: float(np.median(e)) for op, e in errors.items() if e}
    per_size = {n: float(np.median([r["relative_error"] for r in rows if r["rows"] == n])) for n in sizes}
    every = [e for es in errors.values() for e in es]
    return {"sizes": list(sizes), "per_operator": per_op, "per_size": per_size, "overall": float(np.median(every)),
            "measurements": rows}
