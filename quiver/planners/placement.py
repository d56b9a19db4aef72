"""Device placement: the device each operator of a stage runs on, and why.

For every stage the planner picks, per operator, the candidate device that minimises compute
plus data movement. Dynamic programming over the operator tree is exact for trees: the best
cost of a subtree whose root runs on device d is the root's compute time on d plus, for each
child, the cheapest of (that child's subtree on d' + moving its output from d' to d). Data
enters a stage on the host (scans, shuffle reads) and leaves it on the host (the exchange or
the action), so a device pays for both edges. Devices that cannot run an operator (an
unsupported expression or type, a working set over their memory) are not candidates for it.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from quiver.engine.core.conf import PLACEMENT_MODES
from quiver.executors.base import Device
from quiver.planners.cost import DeviceProfile
from quiver.planners.physical import nodes as P

# Rows per batch a streaming operator is invoked on; each invocation pays the operator's fixed cost.
BATCH_ROWS = 1 << 17
# A device keeps this fraction of its memory for its runtime, fragmentation and outputs.
MEMORY_HEADROOM = 0.8
_HOST_ONLY = (P.ScanExec, P.LocalTableExec, P.CachedExec, P.RangeExec, P.ShuffleReadExec)


@dataclass(frozen=True)
class Candidate:
    """A device placement may use: the device, its cost profile, and what its executor can run.

    `unsupported(node)` is None when the device's executor can run that operator, else the reason.
    """

    device: Device
    profile: DeviceProfile
    unsupported: Callable[[P.PhysicalPlan], str | None]
    executor: Any = None
    # How many of this device the runtime has (a Ray cluster's CPUs or GPUs), over which a stage's
    # tasks spread; 0 leaves it to the profile (a CPU profile's cores, one device).
    units: int = 0

    @property
    def label(self) -> str:
        return str(self.device)


@dataclass(frozen=True)
class DeviceCost:
    """One candidate's estimate for one operator: compute seconds, seconds to bring its inputs
    there, or why it cannot run there."""

    device: str
    compute_s: float | None
    transfer_in_s: float = 0.0
    reason: str = ""
    # Costed, but ruled out by `quiver.placement` or a hint: shown, never chosen.
    excluded: bool = False

    @property
    def usable(self) -> bool:
        return self.compute_s is not None and not self.excluded


@dataclass(frozen=True)
class OperatorPlacement:
    """Where one operator runs, its estimated output size, and its cost on every candidate."""

    path: tuple[int, ...]
    operator: str
    device: Device
    rows: int
    bytes: int
    costs: tuple[DeviceCost, ...]
    note: str = ""


@dataclass(frozen=True)
class StagePlacement:
    """The device of every operator of one stage (by its path from the stage root)."""

    stage_id: int
    mode: str
    operators: tuple[OperatorPlacement, ...]
    seconds: float
    candidates: tuple[str, ...]

    def describe(self) -> str:
        head = (f"Stage {self.stage_id} placement ({self.mode}; candidates {', '.join(self.candidates)}):"
                f" est. {seconds_text(self.seconds)}")
        lines = [head]
        for op in self.operators:
            indent = "  " + "   " * len(op.path)
            size = f"rows≈{count_text(op.rows)}, bytes≈{bytes_text(op.bytes)}" if op.rows >= 0 else "size unknown"
            costs = "; ".join(cost_text(c) for c in op.costs)
            note = f"  ({op.note})" if op.note else ""
            lines.append(f"{indent}{op.operator} on {op.device}  [{size}]  cost: {costs}{note}")
        return "\n".join(lines)


def place_stage(
    stage_id: int,
    root: P.PhysicalPlan,
    candidates: list[Candidate],
    mode: str = "cost",
    actual_sizes: dict[int, tuple[int, int]] | None = None,
    concurrent_tasks: int = 1,
) -> StagePlacement:
    """Choose a device for every operator of the stage rooted at `root`.

    `candidates` starts with the CPU. `actual_sizes` maps a finished stage's id to the rows and
    bytes it wrote, which replace the estimates of the shuffle reads of that stage.
    `concurrent_tasks` tasks of the stage share one device's memory at a time.
    """
    if mode not in PLACEMENT_MODES:
        raise ValueError(f"quiver.placement must be one of {', '.join(PLACEMENT_MODES)}, got {mode!r}")
    if not candidates or candidates[0].device.kind != "cpu":
        raise ValueError("placement needs the CPU as its first candidate")
    sizes = _Sizes(actual_sizes or {})
    planner = _Placer(candidates, mode, sizes, max(1, concurrent_tasks))
    best = planner.best(root, ())
    exit_costs = [best[i][0] + planner.transfer(sizes.output(root)[1], i, 0) for i in range(len(candidates))]
    choice = min(range(len(candidates)), key=lambda i: exit_costs[i])
    operators = tuple(planner.assign(root, (), choice))
    return StagePlacement(stage_id, mode, operators, exit_costs[choice], tuple(c.label for c in candidates))


def device_paths(root: P.PhysicalPlan, placement: StagePlacement) -> Iterator[tuple[P.PhysicalPlan, Device]]:
    """Each operator node of `root` with the device `placement` gave it."""
    by_path = {op.path: op.device for op in placement.operators}

    def walk(node: P.PhysicalPlan, path: tuple[int, ...]):
        yield node, by_path[path]
        for i, child in enumerate(node.children()):
            yield from walk(child, path + (i,))

    yield from walk(root, ())


class _Sizes:
    """Rows and bytes of each operator's output: the planner's estimate, or a finished stage's actuals."""

    def __init__(self, actual: dict[int, tuple[int, int]]):
        self.actual = actual

    def output(self, node: P.PhysicalPlan) -> tuple[int, int]:
        if isinstance(node, P.ShuffleReadExec) and node.stage_id in self.actual:
            return self.actual[node.stage_id]
        est = P.estimated_size(node)
        if est is not None:
            return est
        kids = node.children()
        if not kids:
            return (-1, -1)
        if isinstance(node, P.HashJoinExec):
            sides = [self.output(k) for k in kids]
            if any(r < 0 for r, _ in sides):
                return (-1, -1)
            return max(r for r, _ in sides), sum(b for _, b in sides)
        return self.output(kids[0])

    def inputs(self, node: P.PhysicalPlan) -> tuple[int, int]:
        kids = [self.output(k) for k in node.children()]
        if not kids or any(r < 0 for r, _ in kids):
            return (-1, -1) if kids else self.output(node)
        return sum(r for r, _ in kids), sum(b for _, b in kids)


class _Placer:
    def __init__(self, candidates: list[Candidate], mode: str, sizes: _Sizes, concurrent_tasks: int):
        self.candidates = candidates
        self.mode = mode
        self.sizes = sizes
        self.concurrent = concurrent_tasks
        self.memo: dict[tuple[int, ...], list[tuple[float, list[int]]]] = {}
        self.op_costs: dict[tuple[int, ...], list[DeviceCost]] = {}
        self.notes: dict[tuple[int, ...], str] = {}

    # -- costs

    def transfer(self, nbytes: int, src: int, dst: int) -> float:
        """Seconds to move `nbytes` from candidate `src` to candidate `dst` (through the host)."""
        if src == dst or nbytes <= 0:
            return 0.0
        seconds = 0.0
        # Each device has its own link to its host, so a stage's transfers spread over every device too.
        if self.candidates[src].device.kind != "cpu":
            seconds += self.candidates[src].profile.transfer_seconds(nbytes, to_device=False) \
                / _parallelism(self.candidates[src])
        if self.candidates[dst].device.kind != "cpu":
            seconds += self.candidates[dst].profile.transfer_seconds(nbytes, to_device=True) \
                / _parallelism(self.candidates[dst])
        return seconds

    def compute(self, node: P.PhysicalPlan, i: int) -> DeviceCost:
        """Seconds the operator alone takes on candidate `i`, or why it cannot run there."""
        cand = self.candidates[i]
        label = cand.label
        if cand.device.kind != "cpu":
            if isinstance(node, _HOST_ONLY) and not isinstance(node, P.CachedExec):
                return DeviceCost(label, None, reason="reads host data")
            reason = cand.unsupported(node)
            if reason:
                return DeviceCost(label, None, reason=reason)
            if self.sizes.inputs(node)[0] < 0:
                return DeviceCost(label, None, reason="input size unknown")
            need = self.working_set(node)
            if need > cand.profile.memory_bytes * MEMORY_HEADROOM:
                return DeviceCost(label, None, reason=(
                    f"working set {bytes_text(need)} over {MEMORY_HEADROOM:.0%} of its "
                    f"{bytes_text(cand.profile.memory_bytes)}"))
        seconds = self.operator_seconds(node, cand.profile) / _parallelism(cand)
        pinned_here = node.device_pin == cand.device.kind
        if cand.device.kind != "cpu" and not pinned_here and (
                self.mode == "cpu" or (self.mode in ("gpu", "npu") and cand.device.kind != self.mode)):
            return DeviceCost(label, seconds, reason=f"placement is {self.mode}", excluded=True)
        return DeviceCost(label, seconds)

    def operator_seconds(self, node: P.PhysicalPlan, profile: DeviceProfile) -> float:
        """The operator's time on `profile`'s device: its work, plus its fixed cost (kernel launches,
        per-call overhead) once per invocation: per batch where it streams, per task where it blocks."""
        out_rows, out_bytes = (max(v, 0) for v in self.sizes.output(node))
        rows, nbytes = (max(v, 0) for v in self.sizes.inputs(node))
        tasks = max(1, node.num_partitions)

        def charge(op: str, r: float, b: float, streaming: bool, **extra: float) -> float:
            calls = max(tasks, math.ceil(r / BATCH_ROWS)) if streaming else tasks
            return profile.operator_seconds(op, r, b, **extra) + profile.operators[op].fixed * (calls - 1)

        if isinstance(node, P.ScanExec):
            return charge("scan", out_rows, out_bytes, True)
        if isinstance(node, P.FilterExec):
            return charge("filter", rows, nbytes, True)
        if isinstance(node, P.ProjectExec):
            return charge("project", rows, nbytes, True)
        if isinstance(node, P.HashAggregateExec):
            return charge("aggregate", rows, nbytes, False, groups=max(out_rows, 1))
        if isinstance(node, P.HashJoinExec):
            build, probe = _join_sides(node)
            b_rows, b_bytes = (max(v, 0) for v in self.sizes.output(build))
            p_rows, p_bytes = (max(v, 0) for v in self.sizes.output(probe))
            # a device joins each task's whole probe side at once (its key coding spans both sides)
            return charge("join_build", b_rows, b_bytes, False) + charge("join_probe", p_rows, p_bytes, False,
                                                                         build_rows=b_rows)
        if isinstance(node, P.SortExec):
            return charge("sort", rows, nbytes, False)
        if isinstance(node, P.TopKExec):
            return charge("topk", rows, nbytes, False)
        return 0.0

    def working_set(self, node: P.PhysicalPlan) -> int:
        """Device bytes one task needs at once, times the tasks that share the device."""
        tasks = max(1, node.num_partitions)
        share = min(self.concurrent, tasks) / tasks
        _, nbytes = self.sizes.inputs(node)
        _, out_bytes = self.sizes.output(node)
        if isinstance(node, P.HashJoinExec):
            build, probe = _join_sides(node)
            b = max(self.sizes.output(build)[1], 0)
            p = max(self.sizes.output(probe)[1], 0)
            # the broadcast side is whole in every task; the probe side and output are that task's share
            per_task_build = b if node.strategy.startswith("broadcast") else b / tasks
            return int((per_task_build * 2 + (p + max(out_bytes, 0)) / tasks) * min(self.concurrent, tasks))
        if isinstance(node, (P.HashAggregateExec, P.SortExec, P.TopKExec)):
            return int((max(nbytes, 0) * 2 + max(out_bytes, 0)) * share)
        return int(min(max(nbytes, 0), BATCH_ROWS * 64) * 2 * share)

    # -- dynamic programming

    def best(self, node: P.PhysicalPlan, path: tuple[int, ...]) -> list[tuple[float, list[int]]]:
        """For each candidate i: (least seconds of the subtree with `node` on i, children's choices)."""
        if path in self.memo:
            return self.memo[path]
        kids = node.children()
        kid_best = [self.best(k, path + (j,)) for j, k in enumerate(kids)]
        costs = [self.compute(node, i) for i in range(len(self.candidates))]
        pin = node.device_pin
        wanted, why = (pin, f"pinned to {pin} by a hint") if pin else (
            (self.mode, f"placement is {self.mode}") if self.mode in ("gpu", "npu") else (None, ""))
        if wanted is not None:
            chosen = [i for i, c in enumerate(costs) if c.usable and self.candidates[i].device.kind == wanted]
            if chosen:
                costs = [c if i in chosen or not c.usable
                         else DeviceCost(c.device, c.compute_s, reason=why, excluded=True)
                         for i, c in enumerate(costs)]
                self.notes[path] = why if pin else ""
            elif pin:
                self.notes[path] = f"pinned to {pin} by a hint, but no {pin} candidate can run it"
        self.op_costs[path] = costs
        table: list[tuple[float, list[int]]] = []
        for i, cost in enumerate(costs):
            if not cost.usable:
                table.append((math.inf, []))
                continue
            total = cost.compute_s
            choices = []
            for k, kb in zip(kids, kid_best):
                out_bytes = max(self.sizes.output(k)[1], 0)
                options = [kb[j][0] + self.transfer(out_bytes, j, i) for j in range(len(self.candidates))]
                j = min(range(len(options)), key=lambda x: options[x])
                total += options[j]
                choices.append(j)
            table.append((total, choices))
        self.memo[path] = table
        return table

    def assign(self, node: P.PhysicalPlan, path: tuple[int, ...], i: int) -> Iterator[OperatorPlacement]:
        table = self.memo[path]
        costs = self.op_costs[path]
        shown = []
        for j, c in enumerate(costs):
            transfer = 0.0
            if c.usable:
                transfer = sum(self.transfer(max(self.sizes.output(k)[1], 0), self._chosen(node, path, n, j), j)
                               for n, k in enumerate(node.children()))
            shown.append(DeviceCost(c.device, c.compute_s, transfer, c.reason, c.excluded))
        rows, nbytes = self.sizes.output(node)
        yield OperatorPlacement(path, _operator_name(node), self.candidates[i].device, rows, nbytes, tuple(shown),
                                self.notes.get(path, ""))
        for n, (child, j) in enumerate(zip(node.children(), table[i][1])):
            yield from self.assign(child, path + (n,), j)

    def _chosen(self, node: P.PhysicalPlan, path: tuple[int, ...], n: int, i: int) -> int:
        choices = self.memo[path][i][1]
        return choices[n] if n < len(choices) else 0


def _parallelism(cand: Candidate) -> int:
    """Units the operator's work spreads over: the runtime's count of the device where it reports one
    (a Ray cluster's CPUs or GPUs); else all of a CPU profile's cores (the host it describes splits a
    stage into as many tasks, as `local[*]` does), while a device's costs are for the whole device."""
    if cand.units > 0:
        return cand.units
    return max(1, cand.profile.cores) if cand.profile.kind == "cpu" else 1


def _join_sides(node: P.HashJoinExec) -> tuple[P.PhysicalPlan, P.PhysicalPlan]:
    """(build, probe): the broadcast side or, for a shuffled join, the side the executor builds on."""
    if node.strategy == "broadcast-left" or node.build_left:
        return node.left, node.right
    return node.right, node.left


def _operator_name(node: P.PhysicalPlan) -> str:
    name = type(node).__name__.removesuffix("Exec")
    if isinstance(node, P.HashAggregateExec):
        return f"{name}({node.mode})"
    if isinstance(node, P.HashJoinExec):
        return f"{name}({node.how}, {node.strategy})"
    if isinstance(node, P.ShuffleReadExec):
        return f"{name}(stage {node.stage_id})"
    if isinstance(node, P.TopKExec):
        return f"{name}({node.n})"
    return name


def cost_text(c: DeviceCost) -> str:
    if c.compute_s is None:
        return f"{c.device} n/a ({c.reason})"
    moved = f" + {seconds_text(c.transfer_in_s)} transfer" if c.transfer_in_s > 0 else ""
    ruled_out = f" (not chosen: {c.reason})" if c.excluded else ""
    return f"{c.device} {seconds_text(c.compute_s)}{moved}{ruled_out}"


def seconds_text(s: float) -> str:
    if s == math.inf:
        return "inf"
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} µs"


def count_text(n: int) -> str:
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)


def bytes_text(n: float) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"


__all__ = [
    "BATCH_ROWS",
    "PLACEMENT_MODES",
    "Candidate",
    "DeviceCost",
    "OperatorPlacement",
    "StagePlacement",
    "device_paths",
    "place_stage",
]
