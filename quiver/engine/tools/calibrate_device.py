"""`quiver calibrate --device gpu|npu`: time the device kernels and the host link, and fit a device profile.

The operators are the device-generic kernels (`quiver.executors.device.kernels`) the GPU and NPU
executors run, on the executor's array namespace with the data already on the device, timed
on the same synthetic batches as the CPU calibration (`quiver/engine/tools/calibrate.py`) and fitted with
the same model and code. The host link is timed separately: `to_device` and `to_arrow` of
int64 + float64 batches at each size, fitted as latency + bytes / rate.

Times are wall seconds with the device synchronised after every run, so a run's queued kernels
count: the process's CPU time says nothing about a device. With an emulated device (numpy)
everything runs on the host, and the profile says so: it is a smoke test, not the device's speed.
"""
from __future__ import annotations

import dataclasses
import datetime
import itertools
import socket
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from quiver.engine.core import types as T
from quiver.engine.core.errors import ConfigurationError
from quiver.engine.core.expressions import Comparison, Literal
from quiver.engine.tools.calibrate import (
    DEFAULT_REPEATS,
    EXCHANGE_PARTITIONS,
    FIT_SIZES,
    HELD_OUT_SIZES,
    KEY,
    MODEL_NOTE,
    TOPK,
    VARIANTS,
    Case,
    Inputs,
    Measurement,
    build_share,
    error_report,
    fit_cost,
    fit_costs,
    group_count,
    host_memory_bytes,
    payload_attrs,
    predicted_seconds,
    projection,
    time_cases,
    write_profile,
)
from quiver.executors.device.gpu import GpuExecutor
from quiver.executors.device.kernels import (
    DeviceBatch,
    evaluate,
    filter_batch,
    group_by,
    hash_partition_ids,
    join_indices,
    segment_reduce,
    sort_indices,
    take_batch,
    to_arrow,
    to_device,
    top_k_indices,
)
from quiver.executors.device.npu import NpuExecutor
from quiver.planners.cost import DeviceProfile, OperatorCost

DEVICE_KINDS = ("gpu", "npu")
EMULATED_NOTE = "numpy standing in for the device: not the device's speed"
# A real device keeps 10% of its memory for the runtime context, allocator slack and library workspaces.
DEVICE_MEMORY_SHARE = 0.9
LINK = ("host_to_device", "device_to_host")
LAUNCH = "launch"
LINK_TERMS = ("fixed", "per_byte")

DEVICE_BENCHMARKS = {
    "scan": "to_device of the batch (Arrow buffers into device arrays, strings dictionary-encoded on the host), "
            "less the fitted host link time, which placement charges as transfer_seconds",
    "filter": "evaluate(k < rows/2) and filter_batch (half the rows survive); bytes = the input batch",
    "project": "evaluate of c*3+c (int64), c*1.5+c (float64), c+c (decimal) per column, strings passed through; "
               "bytes = the columns computed from",
    "aggregate": "group_by on an int64 key (32 to rows/4 groups), segment_reduce sum per numeric payload column "
                 "(count for strings, whose max the device does not run)",
    "join_build": "join_indices, inner, of a one-row probe against rows unique int64 keys, and take_batch of both "
                  "sides: the kernel codes the build keys on every call",
    "join_probe": "join_indices, inner, half the probe keys matching, build side rows/64 to rows, then take_batch "
                  "of both sides; fitted to the whole join minus the join_build estimate",
    "sort": "sort_indices on an int64 key, then take_batch, as SortExec on a device",
    "topk": "top_k_indices with k=100 on an int64 key, then take_batch",
    "exchange": "hash_partition_ids on an int64 key into 8 partitions, then a stable argsort of the ids and "
                "take_batch (the rows grouped by partition, ready to split)",
}


# ---------------------------------------------------------------- the device


def open_executor(kind: str, index: int = 0, emulated: bool = False) -> Any:
    """The GPU or NPU executor; ConfigurationError names the missing library or device."""
    if kind == "gpu":
        return GpuExecutor.open(index, emulated)
    if kind == "npu":
        return NpuExecutor.open(index, emulated)
    raise ConfigurationError(f"calibrate_device calibrates a {' or '.join(DEVICE_KINDS)}, not a {kind!r}")


def device_synchronizer(executor: Any) -> Callable[[], None]:
    """A call that waits for the device's queued work: CuPy's or torch's synchronize, nothing for numpy."""
    if executor.device.emulated:
        return lambda: None
    if executor.device.kind == "gpu":
        import cupy

        return lambda: cupy.cuda.Device().synchronize()
    import torch

    backend = getattr(torch, "npu", None) or torch.cuda
    return backend.synchronize


def device_name(executor: Any) -> str:
    """What the device calls itself (CuPy's or torch's name), or what stands in for it."""
    device = executor.device
    if device.emulated:
        return f"an emulated {device.kind} ({EMULATED_NOTE})"
    if device.kind == "gpu":
        import cupy

        name = cupy.cuda.runtime.getDeviceProperties(device.index)["name"]
        return f"{name.decode() if isinstance(name, bytes) else name} (gpu:{device.index})"
    import torch

    return f"{torch.npu.get_device_name(device.index)} (npu:{device.index})"


def _memory_bytes(executor: Any) -> tuple[int, str]:
    device = executor.device
    if device.emulated:
        if device.memory_bytes:
            return int(device.memory_bytes), "the emulated device's configured memory"
        return host_memory_bytes(), "emulated: this host's physical memory x 0.8, as the CPU profile"
    note = (f"the device's {device.memory_bytes} bytes x {DEVICE_MEMORY_SHARE}: the rest goes to the runtime "
            "context, allocator slack and library workspaces")
    return int(device.memory_bytes * DEVICE_MEMORY_SHARE), note


# ---------------------------------------------------------------- cases


class _DeviceInputs:
    """The CPU calibration's synthetic batches, and the same batches moved onto the device once."""

    def __init__(self, xp: Any, seed: int):
        self.xp = xp
        self.host = Inputs(seed, folder="")  # no case here writes files
        self.rng = self.host.rng
        self._moved: dict[tuple[str, int], DeviceBatch] = {}

    def base(self, variant: str, rows: int) -> tuple[pa.RecordBatch, DeviceBatch]:
        batch = self.host.base(variant, rows)
        if (variant, rows) not in self._moved:
            self._moved[(variant, rows)] = to_device(batch, self.xp)
        return batch, self._moved[(variant, rows)]

    def keyed(self, variant: str, rows: int, keys: np.ndarray) -> tuple[pa.RecordBatch, DeviceBatch]:
        batch = self.host.keyed(variant, rows, keys)
        return batch, to_device(batch, self.xp)


def _key(batch: DeviceBatch, xp: Any):
    return evaluate(KEY, batch, xp)


def _scan(data: _DeviceInputs, variant: str, rows: int) -> Case:
    batch, _ = data.base(variant, rows)
    return Case("scan", variant, rows, batch.nbytes, lambda: to_device(batch, data.xp))


def _filter(data: _DeviceInputs, variant: str, rows: int) -> Case:
    xp = data.xp
    host, batch = data.base(variant, rows)
    condition = Comparison("<", KEY, Literal(rows // 2, T.LongType()))
    return Case("filter", variant, rows, host.nbytes, lambda: filter_batch(batch, evaluate(condition, batch, xp), xp))


def _project(data: _DeviceInputs, variant: str, rows: int) -> Case:
    xp = data.xp
    host, batch = data.base(variant, rows)
    attrs = [KEY, *payload_attrs(variant)]
    exprs = [projection(a) for a in attrs]
    computed = sum(host.column(a.internal_name).nbytes for e, a in zip(exprs, attrs) if e is not a)
    names = tuple(f"p{i}" for i in range(len(exprs)))
    return Case("project", variant, rows, computed,
                lambda: DeviceBatch(names, tuple(evaluate(e, batch, xp) for e in exprs), rows))


def _aggregate(data: _DeviceInputs, variant: str, rows: int) -> Case:
    xp = data.xp
    groups = group_count(variant, rows)
    host, batch = data.keyed(variant, rows, data.rng.integers(0, groups, rows))
    payload = [(batch.column(a.internal_name), "count" if isinstance(a.dtype, T.StringType) else "sum")
               for a in payload_attrs(variant)]

    def run():
        _, ids, n = group_by([_key(batch, xp)], xp, num_rows=rows)
        return [segment_reduce(column, ids, n, fn, xp) for column, fn in payload]

    return Case("aggregate", variant, rows, host.nbytes, run, groups=groups)


def _join(probe: DeviceBatch, build: DeviceBatch, xp: Any) -> Callable[[], object]:
    def run():
        probe_idx, build_idx = join_indices([_key(probe, xp)], [_key(build, xp)], "inner", xp)
        return take_batch(probe, probe_idx, xp), take_batch(build, build_idx, xp)

    return run


def _join_build(data: _DeviceInputs, variant: str, rows: int) -> Case:
    host, build = data.keyed(variant, rows, data.rng.permutation(rows))
    _, probe = data.keyed(variant, rows, np.array([rows // 2]))
    return Case("join_build", variant, rows, host.nbytes, _join(probe, build, data.xp))


def _join_probe(data: _DeviceInputs, variant: str, rows: int) -> Case:
    build_rows = max(1, rows // build_share(variant))
    build_host, build = data.keyed(variant, rows, data.rng.permutation(build_rows))
    probe_host, probe = data.keyed(variant, rows, data.rng.integers(0, 2 * build_rows, rows))
    return Case("join_probe", variant, rows, probe_host.nbytes, _join(probe, build, data.xp),
                build_rows=build_rows, build_bytes=build_host.nbytes)


def _sort(data: _DeviceInputs, variant: str, rows: int) -> Case:
    xp = data.xp
    host, batch = data.base(variant, rows)
    return Case("sort", variant, rows, host.nbytes,
                lambda: take_batch(batch, sort_indices([_key(batch, xp)], [True], [True], xp), xp))


def _topk(data: _DeviceInputs, variant: str, rows: int) -> Case:
    xp = data.xp
    host, batch = data.base(variant, rows)
    return Case("topk", variant, rows, host.nbytes,
                lambda: take_batch(batch, top_k_indices([_key(batch, xp)], [True], [True], TOPK, xp), xp))


def _exchange(data: _DeviceInputs, variant: str, rows: int) -> Case:
    xp = data.xp
    host, batch = data.base(variant, rows)

    def run():
        ids = hash_partition_ids([_key(batch, xp)], EXCHANGE_PARTITIONS, xp)
        return take_batch(batch, xp.argsort(ids, stable=True), xp)

    return Case("exchange", variant, rows, host.nbytes, run)


DEVICE_CASES: dict[str, Callable[[_DeviceInputs, str, int], Case]] = {
    "scan": _scan, "filter": _filter, "project": _project, "aggregate": _aggregate, "join_build": _join_build,
    "join_probe": _join_probe, "sort": _sort, "topk": _topk, "exchange": _exchange,
}


def _link_cases(data: _DeviceInputs, rows: int) -> list[Case]:
    """to_device and to_arrow of an int64 + float64 batch: plain buffer copies, 16 bytes a row."""
    host, batch = data.base("float64", rows)
    return [Case(LINK[0], "link", rows, host.nbytes, lambda: to_device(host, data.xp)),
            Case(LINK[1], "link", rows, host.nbytes, lambda: to_arrow(batch))]


def _launch_case(data: _DeviceInputs) -> Case:
    """One elementwise kernel on a one-element array: the cost of asking the device for anything."""
    x = data.xp.zeros((1,), dtype=data.xp.int64)
    return Case(LAUNCH, "tiny", 1, 8, lambda: data.xp.add(x, 1))


def _synchronised(case: Case, sync: Callable[[], None]) -> Case:
    """`case` whose run waits for the device before returning, so that its timing counts the queued kernels."""
    def run():
        out = case.run()
        sync()
        return out

    return dataclasses.replace(case, run=run)


# ---------------------------------------------------------------- timing and fitting


def measure_device(executor: Any, sizes: Sequence[int], repeats: int = 3, variants: Sequence[str] = VARIANTS,
                   seed: int = 0) -> list[Measurement]:
    """Median wall seconds of every operator x variant x size on `executor`'s device, plus the host link
    (ops "host_to_device", "device_to_host") at each size and a tiny kernel (op "launch")."""
    xp, sync = executor.xp, device_synchronizer(executor)
    warm = _DeviceInputs(xp, seed)
    for op, variant in itertools.product(DEVICE_CASES, variants):  # the first call compiles kernels
        _synchronised(DEVICE_CASES[op](warm, variant, 256), sync).run()
    data = _DeviceInputs(xp, seed)
    cases = [DEVICE_CASES[op](data, variant, int(rows))
             for op, variant, rows in itertools.product(DEVICE_CASES, variants, sizes)]
    cases += [c for rows in sizes for c in _link_cases(data, int(rows))] + [_launch_case(data)]
    cases = [_synchronised(c, sync) for c in cases]
    for case in cases:  # and the first at each size allocates the device's memory pool
        case.run()
    return time_cases(cases, repeats, time.perf_counter, data.rng)


def _link(points: Sequence[Measurement], op: str) -> tuple[float, float]:
    """(latency seconds, bytes per second) of one direction of the host link, fitted as latency + bytes/rate."""
    measured = [m for m in points if m.op == op]
    cost: OperatorCost = fit_cost(measured, LINK_TERMS)
    # an emulated link (numpy: no copy at all) may show no per-byte cost; the best observed rate is then the rate
    rate = 1.0 / cost.per_byte if cost.per_byte > 0 else max(m.bytes / max(m.seconds, 1e-9) for m in measured)
    return cost.fixed, rate


def fit_device_profile(points: Sequence[Measurement], executor: Any, name: str, source: str) -> DeviceProfile:
    """A kind=gpu|npu profile from `measure_device`'s points: operator costs, link, launch overhead, memory."""
    up_latency, up_rate = _link(points, LINK[0])
    down_latency, down_rate = _link(points, LINK[1])
    launch = float(np.median([m.seconds for m in points if m.op == LAUNCH]))
    memory, memory_note = _memory_bytes(executor)
    device = executor.device
    notes = {
        "model": MODEL_NOTE,
        "device": device_name(executor),
        "clock": "wall seconds with the device synchronised after every run: CPU time says nothing of a device",
        "sizes": f"fitted on {sorted({m.rows for m in points if m.op in DEVICE_CASES})} rows",
        "variants": "an int64 key plus a payload of int64 | float64 | decimal(12,2) | string | all four, as the "
                    "CPU calibration",
        "memory_bytes": memory_note,
        "launch_overhead_s": "median wall time of one elementwise kernel on a one-element array",
        "transfer": "to_device / to_arrow of int64 + float64 batches at each size, each direction fitted as "
                    "latency + bytes / rate; transfer_latency_s is the mean of the two latencies",
        **DEVICE_BENCHMARKS,
    }
    if device.emulated:
        notes["emulated"] = EMULATED_NOTE
    return DeviceProfile(
        name=name, kind=device.kind, memory_bytes=memory, launch_overhead_s=launch,
        host_to_device_bytes_per_s=up_rate, device_to_host_bytes_per_s=down_rate,
        transfer_latency_s=(up_latency + down_latency) / 2,
        operators=fit_costs(points, {"scan": lambda m: up_latency + m.bytes / up_rate}),
        source=source, notes=notes)


def predicted_device_seconds(profile: DeviceProfile, m: Measurement) -> float:
    """The profile's estimate for a device measurement; a measured scan also moves its bytes to the device."""
    seconds = predicted_seconds(profile, m)
    return seconds + profile.transfer_seconds(m.bytes, to_device=True) if m.op == "scan" else seconds


# ---------------------------------------------------------------- entry points


def calibrate_device(kind: str, output_path: str | None, executor: Any = None, sizes: Sequence[int] = FIT_SIZES,
                     repeats: int = DEFAULT_REPEATS, name: str | None = None) -> DeviceProfile:
    """Time the `kind` device's kernels and host link, fit a profile, and write it to `output_path` (if given).

    `executor` defaults to the device's executor (`GpuExecutor.open()` / `NpuExecutor.open()`), which
    raises ConfigurationError naming what is missing; pass an emulated one to calibrate numpy instead.
    """
    executor = executor if executor is not None else open_executor(kind)
    if executor.device.kind != kind:
        raise ConfigurationError(f"calibrate_device({kind!r}) was given the executor of {executor.device}")
    started = time.perf_counter()
    points = measure_device(executor, sizes, repeats)
    when = datetime.date.today().isoformat()
    source = (f"calibrated on {device_name(executor)}, host {socket.gethostname()}, {when}, by quiver calibrate "
              f"--device {kind}{':emulated' if executor.device.emulated else ''} in "
              f"{time.perf_counter() - started:.0f} s")
    profile = fit_device_profile(points, executor, name or f"{kind}-calibrated", source)
    if output_path:
        write_profile(profile, output_path)
    return profile


def evaluate_device_profile(profile: DeviceProfile, executor: Any, sizes: Sequence[int] = HELD_OUT_SIZES,
                            repeats: int = DEFAULT_REPEATS, seed: int = 1) -> dict:
    """Median relative error of `profile` against `executor`'s device at `sizes` (use sizes it was not fitted on),
    per operator, per size and overall, as `calibrate.evaluate_profile`."""
    if profile.kind != executor.device.kind:
        raise ConfigurationError(f"profile '{profile.name}' describes a {profile.kind}, but the executor runs "
                                 f"on {executor.device}")
    points = [m for m in measure_device(executor, sizes, repeats, seed=seed) if m.op in DEVICE_CASES]
    return error_report(points, sizes, lambda m: predicted_device_seconds(profile, m))
