"""Adaptive query execution: the rest of a job re-planned at each stage boundary, from the sizes its
finished stages really wrote (Spark's AQE, over Quiver's stage graph).

Three rules, each a pure function of stages and `ShuffleStatistics` that returns the rewritten stage
and the `AdaptiveDecision`s it made (the scheduler applies them and records the decisions):

- `switch_join` — a shuffled join one of whose sides has finished small becomes a broadcast join
  before the other side's map stage runs: that stage's pipeline moves into the join's stage, so its
  rows are never shuffled (Spark's join strategy switch). A finished side that is empty, where the
  join type then has no rows, replaces the join with an empty relation, and the stages only the
  other side needed are not run at all (Spark's empty-relation propagation).
- `adapt_reads`, before a stage runs with all its inputs finished:
  - a shuffled join's partition far above the median on a side that may be split is read by
    several tasks, each a run of its map outputs, with the other side's partition read whole by
    each (Spark's OptimizeSkewedJoin);
  - runs of small reduce partitions are read by one task each, toward a target size (Spark's
    CoalesceShufflePartitions); every partition-routed read of the stage is cut the same way, so
    co-partitioned inputs stay aligned.
- `place_skewed_tasks`, as the stage's tasks are made: a task far above the median that the stage's
  device has no room for (a partition no split could cut: the side of an outer join that keeps its
  rows, a skewed key of a window or sort) runs on the device that has the memory for it, a GPU or NPU
  beside a CPU held to its budget, or the host beside a device too small.

What a rule may change is bounded by what the stage's operators need: splitting a partition or
replacing the join's inputs is only done where every operator between the stage's root and the
join works row by row or per task (`_PER_TASK`), so no operator above loses the co-location a
shuffle gave it.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

import pyarrow as pa

from quiver.engine.core.conf import RuntimeConfig, parse_bool, parse_positive_int, parse_size, parse_skew_factor
from quiver.engine.core.plan import LogicalPlan
from quiver.planners.physical.nodes import (
    BlockRange,
    FilterExec,
    GenerateExec,
    HashAggregateExec,
    HashJoinExec,
    KeyFilterExec,
    LocalTableExec,
    PhysicalPlan,
    ProjectExec,
    ShuffleReadExec,
    SortExec,
)
from quiver.planners.stages import Stage
from quiver.planners.statistics import estimate

# Spark's default spark.sql.shuffle.partitions: the most partitions a query's size gives it where the user set none.
MAX_INITIAL_PARTITIONS = 200
# As Spark's ShufflePartitionsUtil: a piece under SMALL_PARTITION_FACTOR of the target merges into its
# neighbour when the two stay within MERGED_PARTITION_FACTOR of it.
SMALL_PARTITION_FACTOR = 0.2
MERGED_PARTITION_FACTOR = 1.2
# A task's operators hold several times their input (a join's build side thrice, an aggregate's or sort's
# twice, the input itself): a coalesced partition is at most the budget over this times the concurrent tasks.
TASK_MEMORY_SHARE = 4
# A device's partitions: room for its working set (several times the input) in its memory, and at most
# what Spark RAPIDS reads as one batch (spark.rapids.sql.batchSizeBytes' default).
DEVICE_PARTITION_MAX_BYTES = 1 << 30
DEVICE_MEMORY_SHARE = 8


@dataclass(frozen=True)
class ShuffleStatistics:
    """What one finished map stage wrote: Arrow bytes and rows of each (map partition, reduce partition) block."""

    stage_id: int
    bytes: tuple[tuple[int, ...], ...]
    rows: tuple[tuple[int, ...], ...]

    @property
    def map_partitions(self) -> int:
        return len(self.bytes)

    def partition_bytes(self) -> list[int]:
        """Bytes of each reduce partition, over every map output."""
        if not self.bytes:
            return []
        return [sum(col) for col in zip(*self.bytes)]

    @property
    def total_bytes(self) -> int:
        return sum(map(sum, self.bytes))

    @property
    def total_rows(self) -> int:
        return sum(map(sum, self.rows))


@dataclass(frozen=True)
class AdaptiveSettings:
    """Spark's `spark.sql.adaptive.*` keys, as one query reads them (defaults are Spark's)."""

    enabled: bool = True
    coalesce: bool = True
    advisory_bytes: int = 64 << 20
    min_partition_bytes: int = 1 << 20
    parallelism_first: bool = True
    # The fewest partitions coalescing aims for when parallelismFirst is on (the default parallelism).
    min_partitions: int = 1
    skew_join: bool = True
    skew_factor: float = 5.0
    skew_threshold: int = 256 << 20
    broadcast_threshold: int = 10 << 20
    # The largest partition coalescing makes: what one of the tasks running at once may hold under the
    # process's memory budget (None: no bound), so merging small partitions never makes a task spill.
    max_partition_bytes: int | None = None

    @classmethod
    def from_conf(cls, conf: RuntimeConfig, default_parallelism: int,
                  memory_budget: int | None = None) -> AdaptiveSettings:
        """The settings `conf` gives, with `default_parallelism` where minPartitionNum is unset; under a
        memory budget, coalesced partitions stay within a share of it per concurrent task."""
        def flag(key: str) -> bool:
            return parse_bool(key, conf.get(key)) == "true"

        min_num = conf.get("quiver.sql.adaptive.coalescePartitions.minPartitionNum")
        broadcast = conf.get("quiver.sql.adaptive.autoBroadcastJoinThreshold")
        return cls(
            enabled=flag("quiver.sql.adaptive.enabled"),
            coalesce=flag("quiver.sql.adaptive.coalescePartitions.enabled"),
            advisory_bytes=max(1, parse_size("spark.sql.adaptive.advisoryPartitionSizeInBytes",
                                             conf.get("quiver.sql.adaptive.advisoryPartitionSizeInBytes"))),
            min_partition_bytes=max(1, parse_size("spark.sql.adaptive.coalescePartitions.minPartitionSize",
                                                  conf.get("quiver.sql.adaptive.coalescePartitions.minPartitionSize"))),
            parallelism_first=flag("quiver.sql.adaptive.coalescePartitions.parallelismFirst"),
            min_partitions=(parse_positive_int("spark.sql.adaptive.coalescePartitions.minPartitionNum", min_num)
                            if min_num else max(1, default_parallelism)),
            skew_join=flag("quiver.sql.adaptive.skewJoin.enabled"),
            skew_factor=float(parse_skew_factor("spark.sql.adaptive.skewJoin.skewedPartitionFactor",
                                                conf.get("quiver.sql.adaptive.skewJoin.skewedPartitionFactor"))),
            skew_threshold=parse_size("spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes",
                                      conf.get("quiver.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes")),
            broadcast_threshold=(parse_size("spark.sql.adaptive.autoBroadcastJoinThreshold", broadcast)
                                 if broadcast else conf.broadcast_threshold()),
            max_partition_bytes=(None if memory_budget is None
                                 else max(1, memory_budget // (max(1, default_parallelism) * TASK_MEMORY_SHARE))),
        )

    def for_device(self, memory_bytes: int | None) -> AdaptiveSettings:
        """The settings for a stage placed on a device with `memory_bytes` free (None: unbounded): partitions
        as large as its memory allows, up to DEVICE_PARTITION_MAX_BYTES, never smaller than the CPU's, and
        no longer cut for the CPU's parallelism (one device runs one large task better than many small)."""
        room = DEVICE_PARTITION_MAX_BYTES if memory_bytes is None else memory_bytes // DEVICE_MEMORY_SHARE
        target = max(self.advisory_bytes, min(DEVICE_PARTITION_MAX_BYTES, room))
        return replace(self, advisory_bytes=target, parallelism_first=False)


def initial_partitions(plan: LogicalPlan, settings: AdaptiveSettings, default: int) -> int:
    """Shuffle partitions for a query whose user set none: enough that the largest relation the plan
    estimates cuts into partitions a task may hold under the memory budget (`max_partition_bytes`; the
    advisory size where no budget is known), between `default` and Spark's 200 (its
    spark.sql.shuffle.partitions); coalescing then merges the partitions that turn out small. More
    partitions than that only add blocks: each map task cuts every batch into one piece per partition."""
    if not (settings.enabled and settings.coalesce):
        return default
    per_partition = settings.max_partition_bytes or settings.advisory_bytes
    largest = max((estimate(node).size_bytes for node in plan.walk()), default=0)
    return max(default, min(MAX_INITIAL_PARTITIONS, math.ceil(max(largest, 0) / per_partition)))


@dataclass(frozen=True)
class AdaptiveDecision:
    """One change adaptive execution made to a stage, in words: what `explain()` and the job report show."""

    stage_id: int
    rule: str
    detail: str

    def describe(self) -> str:
        return f"stage {self.stage_id}: {self.rule}: {self.detail}"


# ---------------------------------------------------------------- the shape rules may change

# Operators that work row by row or per task, so that a task may see any subset of their input's rows:
# a join's inputs may be replaced and a partition split beneath them.
_PER_TASK = (FilterExec, ProjectExec, GenerateExec, KeyFilterExec)


def _path_to_join(root: PhysicalPlan) -> list[PhysicalPlan] | None:
    """The operators from `root` down to its first shuffled join, each per-task, ending with the join;
    None where an operator on the way needs its input co-located (or there is no such join)."""
    path: list[PhysicalPlan] = []
    node = root
    while True:
        path.append(node)
        if isinstance(node, HashJoinExec):
            if node.strategy == "shuffle":
                return path
            node = node.right if node.strategy == "broadcast-left" else node.left
        elif isinstance(node, _PER_TASK) or (isinstance(node, HashAggregateExec) and node.mode == "partial"):
            node = node.child  # type: ignore[attr-defined]
        else:
            return None


def _rebuild(path: list[PhysicalPlan], new_last: PhysicalPlan) -> PhysicalPlan:
    """The root of `path` with its last node replaced by `new_last` (each node above keeps its other inputs)."""
    node = new_last
    for parent, old in zip(reversed(path[:-1]), reversed(path[1:])):
        node = parent.with_children(tuple(node if c is old else c for c in parent.children()))
    return node


def routed_reads(root: PhysicalPlan) -> list[ShuffleReadExec]:
    """The shuffle reads whose blocks a task picks by its partition number (not broadcast reads, and not
    a key filter's source, which every task reads whole)."""
    out: list[ShuffleReadExec] = []

    def walk(node: PhysicalPlan) -> None:
        if isinstance(node, ShuffleReadExec):
            if not node.broadcast:
                out.append(node)
            return
        if isinstance(node, KeyFilterExec):
            walk(node.child)
            return
        for child in node.children():
            walk(child)

    walk(root)
    return out


def _reads_of(stage: Stage) -> set[int]:
    """Every stage id `stage` reads, by any kind of read."""
    return {n.stage_id for n in stage.root.walk() if isinstance(n, ShuffleReadExec)}


def _size(nbytes: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{nbytes} B"


def with_map_outputs(stage: Stage, stats: ShuffleStatistics) -> Stage:
    """`stage` with its reads of the finished stage `stats` describes naming the map outputs it really
    wrote (a stage whose reads were coalesced, or that took in another's pipeline, ran another number of
    tasks than it was planned with)."""
    count = stats.map_partitions

    def retarget(node: PhysicalPlan) -> PhysicalPlan:
        if isinstance(node, ShuffleReadExec) and node.stage_id == stats.stage_id and node.map_partitions != count:
            return replace(node, map_partitions=count)
        return node

    root = stage.root.transform_up(retarget)
    return stage if root is stage.root else Stage(stage.id, root, stage.output, stage.parents)


# ---------------------------------------------------------------- join switch and empty sides

# Join types whose result is empty when the named side has no rows.
_EMPTY_WHEN_RIGHT_EMPTY = frozenset({"inner", "left_semi", "right"})
_EMPTY_WHEN_LEFT_EMPTY = frozenset({"inner", "left", "left_semi", "left_anti"})
# Join types that may build a broadcast hash table on the named side (as the planner's).
_BROADCAST_RIGHT = frozenset({"inner", "left", "left_semi", "left_anti"})
_BROADCAST_LEFT = frozenset({"inner", "right"})


def switch_join(stage: Stage, stages: Mapping[int, Stage], finished: Mapping[int, ShuffleStatistics],
                settings: AdaptiveSettings) -> tuple[Stage, AdaptiveDecision] | None:
    """`stage` with its shuffled join re-planned from a finished side's real size, or None.

    The finished side has no rows and the join type then has none: the join becomes an empty relation
    (its inputs' stages need not run). The finished side is within the broadcast threshold while the
    other side's map stage has not run, is read by nothing else, and may be the build side of a
    broadcast join for this join type: the join becomes a broadcast join over that stage's pipeline,
    which moves into `stage` (its rows are never shuffled).
    """
    if not settings.enabled:
        return None
    path = _path_to_join(stage.root)
    if path is None:
        return None
    join = path[-1]
    assert isinstance(join, HashJoinExec)
    left, right = join.left, join.right
    if not (isinstance(left, ShuffleReadExec) and isinstance(right, ShuffleReadExec)):
        return None
    if {id(r) for r in routed_reads(stage.root)} != {id(left), id(right)}:
        return None
    for side, other, empty_kinds, broadcast_kinds, strategy in (
            (right, left, _EMPTY_WHEN_RIGHT_EMPTY, _BROADCAST_RIGHT, "broadcast-right"),
            (left, right, _EMPTY_WHEN_LEFT_EMPTY, _BROADCAST_LEFT, "broadcast-left")):
        stats = finished.get(side.stage_id)
        if stats is None or side.reads is not None:
            continue
        if stats.total_rows == 0 and join.how in empty_kinds:
            schema = pa.schema([pa.field(a.internal_name, a.dtype.to_arrow()) for a in join.output])
            empty = LocalTableExec(schema.empty_table(), join.output, 1)
            root = _rebuild(path, empty)
            kept = {n.stage_id for n in root.walk() if isinstance(n, ShuffleReadExec)}
            decision = AdaptiveDecision(stage.id, "empty relation",
                                        f"stage {side.stage_id} wrote no rows, so the {join.how} join is empty "
                                        f"and stage {other.stage_id} is not needed for it")
            return Stage(stage.id, root, stage.output, tuple(sorted(set(stage.parents) & kept))), decision
        other_stage = stages.get(other.stage_id)
        if (join.how not in broadcast_kinds or settings.broadcast_threshold < 0
                or stats.total_bytes > settings.broadcast_threshold
                or other.stage_id in finished or other_stage is None or other.fixed or other.reads is not None
                or any(other.stage_id in _reads_of(s) for s in stages.values() if s.id != stage.id)
                or sum(1 for n in stage.root.walk() if isinstance(n, ShuffleReadExec)
                       and n.stage_id == other.stage_id) != 1):
            continue
        build = ShuffleReadExec(side.stage_id, side.attributes, 1, side.map_partitions, broadcast=True,
                                reads=(BlockRange(0, side.partitions),), estimate=side.estimate)
        reason = (f"adaptive: stage {side.stage_id} wrote {_size(stats.total_bytes)} <= threshold "
                  f"{_size(settings.broadcast_threshold)}")
        children = (other_stage.root, build) if strategy == "broadcast-right" else (build, other_stage.root)
        new_join = replace(join, left=children[0], right=children[1], strategy=strategy, reason=reason,
                           build_left=False)
        parents = (set(stage.parents) - {other.stage_id}) | set(other_stage.parents)
        decision = AdaptiveDecision(stage.id, "broadcast join",
                                    f"stage {side.stage_id} wrote {_size(stats.total_bytes)} "
                                    f"({stats.total_rows:,} rows), within {_size(settings.broadcast_threshold)}: the "
                                    f"{join.how} join broadcasts it, and stage {other.stage_id}'s operators run "
                                    "in this stage instead of shuffling their rows")
        return Stage(stage.id, _rebuild(path, new_join), stage.output, tuple(sorted(parents))), decision
    return None


# ---------------------------------------------------------------- coalescing and skew


def split_sizes(sizes: list[int], target: int) -> list[tuple[int, int]]:
    """Contiguous [start, end) runs of `sizes`, each within `target` where one item allows, with a small
    last-or-inner run merged into a neighbour when the two stay within MERGED_PARTITION_FACTOR of it."""
    runs: list[list[int]] = []
    start, acc = 0, 0
    for i, size in enumerate(sizes):
        if i > start and acc + size > target:
            runs.append([start, i, acc])
            start, acc = i, 0
        acc += size
    if sizes:
        runs.append([start, len(sizes), acc])
    merged: list[list[int]] = []
    for run in runs:
        if merged and (run[2] < SMALL_PARTITION_FACTOR * target or merged[-1][2] < SMALL_PARTITION_FACTOR * target) \
                and merged[-1][2] + run[2] <= MERGED_PARTITION_FACTOR * target:
            merged[-1][1], merged[-1][2] = run[1], merged[-1][2] + run[2]
        else:
            merged.append(run)
    return [(a, b) for a, b, _ in merged]


def coalesce_target(total: int, settings: AdaptiveSettings) -> int:
    """The size coalesced partitions aim for (Spark's): the advisory size, or with parallelismFirst the
    total over the minimum partition count where that is smaller, never under minPartitionSize."""
    target = settings.advisory_bytes
    if settings.parallelism_first:
        target = min(target, max(16, math.ceil(total / max(1, settings.min_partitions))))
    target = max(target, settings.min_partition_bytes)
    if settings.max_partition_bytes is not None:
        target = min(target, settings.max_partition_bytes)
    return target


def _median(values: list[int]) -> float:
    ordered = sorted(values)
    n = len(ordered)
    if n == 0:
        return 0.0
    return float(ordered[n // 2]) if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2


def _skew_splits(join: HashJoinExec, stats: dict[int, ShuffleStatistics],
                 settings: AdaptiveSettings) -> tuple[dict[int, list[BlockRange]], dict[int, list[BlockRange]],
                                                      list[str]]:
    """Per skewed reduce partition, the map-output runs each side is read in (a side not split: one whole
    read), and a line per split; empty when no partition is skewed."""
    left, right = join.left, join.right
    assert isinstance(left, ShuffleReadExec) and isinstance(right, ShuffleReadExec)
    sides = []
    for read, splittable in ((left, join.how in ("inner", "left", "left_semi", "left_anti")),
                             (right, join.how in ("inner", "right"))):
        sizes = stats[read.stage_id].partition_bytes()
        median = _median(sizes)
        limit = max(settings.skew_threshold, settings.skew_factor * median)
        normal = [s for s in sizes if s <= limit]
        target = max(settings.advisory_bytes, int(sum(normal) / len(normal)) if normal else 0)
        sides.append((read, sizes, median, limit, target, splittable))
    left_runs: dict[int, list[BlockRange]] = {}
    right_runs: dict[int, list[BlockRange]] = {}
    lines: list[str] = []
    partitions = left.partitions
    for r in range(partitions):
        runs_per_side = []
        for read, sizes, median, limit, target, splittable in sides:
            whole = [BlockRange(r, r + 1)]
            if not splittable or sizes[r] <= limit:
                runs_per_side.append(whole)
                continue
            per_map = [stats[read.stage_id].bytes[m][r] for m in range(read.map_partitions)]
            runs = [BlockRange(r, r + 1, a, b) for a, b in split_sizes(per_map, target)]
            if len(runs) > 1:
                lines.append(f"partition {r} of stage {read.stage_id} ({_size(sizes[r])}, median "
                             f"{_size(int(median))}) read in {len(runs)} runs of its map outputs")
            runs_per_side.append(runs)
        if len(runs_per_side[0]) > 1 or len(runs_per_side[1]) > 1:
            left_runs[r], right_runs[r] = runs_per_side
    return left_runs, right_runs, lines


def adapt_reads(stage: Stage, finished: Mapping[int, ShuffleStatistics],
                settings: AdaptiveSettings) -> tuple[Stage, list[AdaptiveDecision]]:
    """`stage`, about to run with every input finished, with its partition-routed reads cut into tasks by
    their real sizes: skewed join partitions split, runs of small partitions coalesced."""
    if not settings.enabled:
        return stage, []
    reads = routed_reads(stage.root)
    if not reads or any(r.reads is not None or r.fixed or r.stage_id not in finished for r in reads):
        return stage, []
    n = reads[0].partitions
    if n <= 1 or any(r.partitions != n for r in reads) or stage.num_partitions != n:
        return stage, []
    stats = {r.stage_id: finished[r.stage_id] for r in reads}
    if any(len(s.partition_bytes()) != n for s in stats.values()):
        return stage, []
    decisions: list[AdaptiveDecision] = []
    # Per reduce partition, the (left, right) runs a split join reads it in.
    splits: dict[int, list[tuple[BlockRange, BlockRange]]] = {}
    join_sides: tuple[int, int] | None = None
    path = _path_to_join(stage.root)
    if settings.skew_join and path is not None and len(reads) == 2:
        join = path[-1]
        assert isinstance(join, HashJoinExec)
        if {id(join.left), id(join.right)} == {id(r) for r in reads}:
            left_runs, right_runs, lines = _skew_splits(join, stats, settings)
            for r in left_runs:
                splits[r] = [(a, b) for a in left_runs[r] for b in right_runs[r]]
            if splits:
                join_sides = (id(join.left), id(join.right))
                decisions.append(AdaptiveDecision(stage.id, "skew join", "; ".join(lines)))
    totals = [sum(s.partition_bytes()[r] for s in stats.values()) for r in range(n)]
    groups: list[tuple[int, int]] = []
    if settings.coalesce:
        target = coalesce_target(sum(totals), settings)
        start = 0
        for r in sorted(splits) + [n]:
            groups += [(start + a, start + b) for a, b in split_sizes(totals[start:r], target)]
            if r < n:
                groups.append((r, r + 1))
            start = r + 1
    else:
        groups = [(r, r + 1) for r in range(n)]
    coalesced = len(groups) - len(splits)
    if coalesced < n - len(splits):
        unsplit = sum(t for r, t in enumerate(totals) if r not in splits)
        decisions.append(AdaptiveDecision(
            stage.id, "coalesce partitions",
            f"{n - len(splits)} partitions of stage{'s' if len(stats) > 1 else ''} "
            f"{', '.join(str(s) for s in sorted(stats))} ({_size(unsplit)}) read by {coalesced} "
            f"task{'s' if coalesced != 1 else ''} (target {_size(coalesce_target(sum(totals), settings))})"))
    if not decisions:
        return stage, []
    # The tasks, in partition order: each a (left, right) pair for a split partition, else one run for every read.
    tasks: list[tuple[BlockRange, BlockRange] | BlockRange] = []
    for a, b in groups:
        if b == a + 1 and a in splits:
            tasks.extend(splits[a])
        else:
            tasks.append(BlockRange(a, b))

    def reads_for(read: ShuffleReadExec) -> tuple[BlockRange, ...]:
        side = None if join_sides is None else join_sides.index(id(read))
        return tuple(t[side] if isinstance(t, tuple) and side is not None else t  # type: ignore[misc]
                     for t in tasks)

    new_reads = {id(r): replace(r, reads=reads_for(r)) for r in reads}

    def swap(node: PhysicalPlan) -> PhysicalPlan:
        if isinstance(node, ShuffleReadExec) and id(node) in new_reads:
            return new_reads[id(node)]
        if isinstance(node, KeyFilterExec):
            child = swap(node.child)
            return node if child is node.child else replace(node, child=child)
        kids = node.children()
        return node.with_children(tuple(swap(k) for k in kids)) if kids else node

    return Stage(stage.id, swap(stage.root), stage.output, stage.parents), decisions


# ---------------------------------------------------------------- skewed tasks on the device with room

# Operators that hold their task's input (a hash table, sorted runs): moving a task to a device with more
# memory only helps where these run there.
HOLDS_INPUT = (HashJoinExec, HashAggregateExec, SortExec)


@dataclass(frozen=True)
class TaskRoom:
    """A device a stage's tasks may run on, and the most shuffle bytes one of its tasks may read there
    (None: no bound): on the CPU, a concurrent task's share of the memory budget (`max_partition_bytes`);
    on a GPU or NPU, its free memory over DEVICE_MEMORY_SHARE."""

    device: str
    bytes: int | None

    def holds(self, nbytes: int) -> bool:
        return self.bytes is None or nbytes <= self.bytes

    def describe(self) -> str:
        return f"{self.device} (no bound)" if self.bytes is None else f"{self.device} ({_size(self.bytes)} a task)"


def device_room(label: str, free_bytes: int | None) -> TaskRoom:
    """What one task may read on a device with `free_bytes` free (None: unbounded)."""
    return TaskRoom(label, None if free_bytes is None else free_bytes // DEVICE_MEMORY_SHARE)


def task_input_bytes(stage: Stage, finished: Mapping[int, ShuffleStatistics]) -> list[int] | None:
    """The shuffle bytes each task of `stage` reads by its partition number (its reads as adaptive execution
    cut them); None where a read's stage has not finished or its blocks do not match the read."""
    totals = [0] * stage.num_partitions
    for read in routed_reads(stage.root):
        stats = finished.get(read.stage_id)
        if stats is None or stats.map_partitions != read.map_partitions:
            return None
        ranges = read.reads if read.reads is not None else tuple(BlockRange(p, p + 1) for p in range(read.partitions))
        if len(ranges) != len(totals) or any(len(row) < r.end for row in stats.bytes for r in ranges):
            return None
        for task, r in enumerate(ranges):
            map_end = stats.map_partitions if r.map_end is None else r.map_end
            totals[task] += sum(sum(stats.bytes[m][r.start:r.end]) for m in range(r.map_start, map_end))
    return totals


def skewed_tasks(sizes: list[int], settings: AdaptiveSettings) -> list[int]:
    """The tasks that are skewed: over skewedPartitionFactor times the median and
    skewedPartitionThresholdInBytes, as Spark's skew join reads them."""
    if not settings.enabled or len(sizes) < 2:
        return []
    limit = max(settings.skew_threshold, settings.skew_factor * _median(sizes))
    return [task for task, size in enumerate(sizes) if size > limit]


def oversized_tasks(sizes: list[int], home: TaskRoom, settings: AdaptiveSettings) -> list[int]:
    """The skewed tasks (`skewed_tasks`) that read more than `home` holds."""
    return [task for task in skewed_tasks(sizes, settings) if not home.holds(sizes[task])]


def place_skewed_tasks(stage_id: int, sizes: list[int], home: TaskRoom, others: list[TaskRoom],
                       settings: AdaptiveSettings) -> tuple[dict[int, str], list[AdaptiveDecision]]:
    """Per oversized task of the stage (`oversized_tasks`), the other device that holds it, the one with the
    most room; the decision says why. A task no device holds stays home (where it spills, or falls back)."""
    moves: dict[int, str] = {}
    lines: list[str] = []
    median = _median(sizes)
    for task in oversized_tasks(sizes, home, settings):
        fits = [room for room in others if room.holds(sizes[task])]
        if not fits:
            continue
        target = max(fits, key=lambda room: math.inf if room.bytes is None else room.bytes)
        moves[task] = target.device
        lines.append(f"task {task} reads {_size(sizes[task])} (median {_size(int(median))}), over what a task may "
                     f"hold on {home.describe()}: it runs on {target.describe()}")
    decisions = [AdaptiveDecision(stage_id, "skewed task placement", "; ".join(lines))] if lines else []
    return moves, decisions


__all__ = ["HOLDS_INPUT", "AdaptiveDecision", "AdaptiveSettings", "BlockRange", "ShuffleStatistics", "TaskRoom",
           "adapt_reads", "coalesce_target", "device_room", "initial_partitions", "oversized_tasks",
           "place_skewed_tasks", "routed_reads", "skewed_tasks", "split_sizes", "switch_join", "task_input_bytes",
           "with_map_outputs"]
