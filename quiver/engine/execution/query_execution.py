"""One query's way through the engine: analyzed -> optimized -> physical -> stages -> result.

`PIPELINE` lists every step a query goes through, in order. The plans between them are
computed once, on first use, and can be printed; `explain()` shows them all, and names the
logical steps and optimizer rules that changed the plan.
"""
from __future__ import annotations

import datetime
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

import pyarrow as pa

from quiver.connectors.cache import storage_cache_stats
from quiver.engine.analysis.analyzer import analyze
from quiver.engine.core import plan as L
from quiver.engine.core import subqueries
from quiver.engine.core.ansi import running_ansi
from quiver.engine.core.errors import ConfigurationError, QuiverError, ResultTooLargeError
from quiver.engine.core.expressions import Literal
from quiver.engine.core.subqueries import ScalarSubquery
from quiver.executors.blocks import BlockId
from quiver.executors.native.executor import fragment_choices
from quiver.planners.adaptive import AdaptiveSettings, initial_partitions
from quiver.planners.optimizer import RULES, Rule, fixed_point
from quiver.planners.optimizer.aggregate_key_filters import filter_aggregates_by_join_keys
from quiver.planners.optimizer.current_time import compute_current_time
from quiver.planners.optimizer.decorrelate_subqueries import rewrite_subqueries
from quiver.planners.optimizer.disjunct_filters import derive_disjunct_filters
from quiver.planners.optimizer.join_reorder import reorder_joins
from quiver.planners.optimizer.nondeterministic import pull_out_nondeterministic
from quiver.planners.optimizer.reuse import REUSED, replace_subtrees, shared_aggregates
from quiver.planners.optimizer.semi_join_pushdown import push_down_semi_joins
from quiver.planners.physical.nodes import PhysicalPlan, estimated_size
from quiver.planners.physical.planner import PlannerConfig, plan_physical
from quiver.planners.placement import StagePlacement, place_stage
from quiver.planners.stages import StageGraph, split_stages

if TYPE_CHECKING:
    from quiver.engine.execution.context import ExecutionContext
    from quiver.engine.execution.scheduler import JobMetrics

# PySpark's explain modes, and ours: "graph" draws the stage DAG with each operator's device.
EXPLAIN_MODES = ("simple", "extended", "codegen", "cost", "formatted", "graph")


def explain_mode(extended: bool | str | None, mode: str | None) -> str:
    """The mode `df.explain(extended, mode)` asks for, as PySpark reads its two arguments; raises for an unknown one."""
    if extended is not None and mode is not None:
        raise ConfigurationError("explain() takes extended or mode, not both")
    chosen = extended if isinstance(extended, str) else mode or ("extended" if extended is not False else "simple")
    if not isinstance(chosen, str) or chosen.strip().lower() not in EXPLAIN_MODES:
        raise ConfigurationError(f"unknown explain mode {chosen!r}; valid modes are {', '.join(EXPLAIN_MODES)}")
    return chosen.strip().lower()


# ---------------------------------------------------------------- the steps


@dataclass(frozen=True)
class Analysis:
    """Names and types resolved as each DataFrame or SQL statement is built, as PySpark analyzes
    eagerly, so a wrong column fails on the line that names it: a query starts analyzed."""

    analyze: Rule

    @property
    def name(self) -> str:
        return self.analyze.__name__


def _recorded(name: str, plan: L.LogicalPlan, new: L.LogicalPlan, fired: list[str]) -> L.LogicalPlan:
    """`new`, with `name` added to `fired`, where a step changed `plan`; else `plan` itself."""
    if new == plan:
        return plan
    fired.append(name)
    return new


@dataclass(frozen=True)
class Rewrite:
    """A logical rewrite, applied once; where it changed the plan, the `then` rules run to a fixed point after it."""

    rule: Rule
    then: tuple[Rule, ...] = ()

    @property
    def name(self) -> str:
        return self.rule.__name__

    def apply(self, query: QueryExecution, plan: L.LogicalPlan, fired: list[str]) -> L.LogicalPlan:
        """`plan` rewritten, with this step's name (and the `then` rules that fired) added to `fired`."""
        new = _recorded(self.name, plan, self.rule(plan), fired)
        if new is plan or not self.then:
            return new
        new, again = fixed_point(new, self.then)
        fired.extend(again)
        return new


@dataclass(frozen=True)
class QueryRewrite:
    """A logical rewrite, applied once, that needs its query: the session's cache, or jobs of its own."""

    rewrite: Callable[[QueryExecution, L.LogicalPlan], L.LogicalPlan]

    @property
    def name(self) -> str:
        return self.rewrite.__name__

    def apply(self, query: QueryExecution, plan: L.LogicalPlan, fired: list[str]) -> L.LogicalPlan:
        """`plan` rewritten for `query`, with this step's name added to `fired` where it changed the plan."""
        return _recorded(self.name, plan, self.rewrite(query, plan), fired)


@dataclass(frozen=True)
class FixedPoint:
    """Rules applied together, in order, until a pass changes nothing (the optimizer's driver)."""

    rules: tuple[Rule, ...]

    @property
    def name(self) -> str:
        return "fixed_point(" + ", ".join(r.__name__ for r in self.rules) + ")"

    def apply(self, query: QueryExecution, plan: L.LogicalPlan, fired: list[str]) -> L.LogicalPlan:
        """`plan` at the rules' fixed point, with the names of those that changed it added to `fired`."""
        new, names = fixed_point(plan, self.rules)
        fired.extend(names)
        return new


@dataclass(frozen=True)
class PhysicalPlanning:
    """The optimized logical plan as physical operators, with the exchanges between them."""

    plan: Callable[[L.LogicalPlan, PlannerConfig], PhysicalPlan]

    @property
    def name(self) -> str:
        return self.plan.__name__


@dataclass(frozen=True)
class StageSplitting:
    """The physical plan cut at its exchanges into a DAG of stages, one task per partition each."""

    split: Callable[[PhysicalPlan], StageGraph]

    @property
    def name(self) -> str:
        return self.split.__name__


@dataclass(frozen=True)
class Placement:
    """Each stage's operators put on devices as the stage is about to run, from the real sizes its
    finished parents wrote (the scheduler's placer, `ExecutionContext._place`); explain places them from estimates."""

    place: Callable[..., StagePlacement]

    @property
    def name(self) -> str:
        return self.place.__name__


Step = Analysis | Rewrite | QueryRewrite | FixedPoint | PhysicalPlanning | StageSplitting | Placement
LOGICAL_STEPS = (Rewrite, QueryRewrite, FixedPoint)


def use_cached_data(query: QueryExecution, plan: L.LogicalPlan) -> L.LogicalPlan:
    """Each subtree the user cached replaced by its in-memory relation, filled by a job of its own on first use."""
    return query.context.cache.substitute(plan, skip_root=query.materializing, materialize=not query.describe_only)


def reuse_shared_aggregates(query: QueryExecution, plan: L.LogicalPlan) -> L.LogicalPlan:
    """Each aggregate the plan and its scalar subqueries compute more than once, computed once as a job of
    its own and read back as an in-memory relation (planners/optimizer/reuse.py)."""
    shared = shared_aggregates(plan)
    if not shared:
        return plan
    return replace_subtrees(plan, {a: query._computed_once(a) for a in shared})


def fix_current_time(query: QueryExecution, plan: L.LogicalPlan) -> L.LogicalPlan:
    """Every current_timestamp(), now() and current_date() of the query read as one instant, taken now."""
    return compute_current_time(plan, datetime.datetime.now(datetime.timezone.utc))


def inline_scalar_subqueries(query: QueryExecution, plan: L.LogicalPlan) -> L.LogicalPlan:
    """Each uncorrelated scalar subquery run once, as a job of its own, and replaced by its value."""
    return subqueries.inline_scalar_subqueries(plan, query._scalar_value)


# ---------------------------------------------------------------- the pipeline

# Every step a query goes through, in order; each runs once per query. The logical steps run
# when the optimized plan is first needed, physical planning and stage splitting when theirs are.
PIPELINE: tuple[Step, ...] = (
    Analysis(analyze),
    # Cached subtrees first, so the steps below see the in-memory relations really read, with their real sizes.
    QueryRewrite(use_cached_data),
    # One current time for the whole query (Spark's ComputeCurrentTime), before anything folds or runs it.
    QueryRewrite(fix_current_time),
    # Subqueries: IN/EXISTS and correlated scalars become joins; then a shared aggregate is computed
    # once, before the uncorrelated scalar subqueries that read it run for their values.
    Rewrite(rewrite_subqueries),
    QueryRewrite(reuse_shared_aggregates),
    QueryRewrite(inline_scalar_subqueries),
    # The optimizer (planners/optimizer): its rules to a fixed point; then, once each and each followed
    # by the rules again (as Spark's batches), per-table filters derived from cross-table ORs, join
    # reordering, aggregates filtered to the keys their join keeps, and semi/anti joins sunk below
    # the inner joins they do not need. Reordering needs filters already pushed to the join inputs,
    # where their selectivity is estimated; the rules after each step move the conditions it created
    # and prune columns again.
    FixedPoint(RULES),
    Rewrite(derive_disjunct_filters, then=RULES),
    Rewrite(reorder_joins, then=RULES),
    Rewrite(filter_aggregates_by_join_keys, then=RULES),
    Rewrite(push_down_semi_joins, then=RULES),
    # Last of the logical steps, so no rule puts a nondeterministic expression back inside an
    # aggregate: the physical planner relies on there being none.
    Rewrite(pull_out_nondeterministic),
    PhysicalPlanning(plan_physical),
    StageSplitting(split_stages),
    Placement(place_stage),
)


StepT = TypeVar("StepT", PhysicalPlanning, StageSplitting)


def pipeline_step(kind: type[StepT]) -> StepT:
    """The pipeline's step of `kind`: its physical planning, its stage splitting."""
    return next(step for step in PIPELINE if isinstance(step, kind))


class QueryExecution:
    """The plans of one action, derived lazily from an analyzed logical plan."""

    def __init__(self, context: ExecutionContext, analyzed: L.LogicalPlan, materializing: bool = False,
                 describe_only: bool = False):
        self.context = context
        self.analyzed = analyzed
        self.materializing = materializing
        self.describe_only = describe_only
        self._reused: list[list[BlockId]] = []
        # The job this query's last run ran (its stages' rows, bytes and spills), for explain("cost").
        self.last_job: JobMetrics | None = None

    @cached_property
    def _optimized(self) -> tuple[L.LogicalPlan, list[str]]:
        """The analyzed plan after every logical step of the pipeline, and the names of those that changed it."""
        plan = self.analyzed
        fired: list[str] = []
        # Constants are folded in the query's ANSI mode: one that would raise is left for run time.
        with running_ansi(self.context.conf.ansi_enabled()):
            for step in PIPELINE:
                if isinstance(step, LOGICAL_STEPS):
                    plan = step.apply(self, plan, fired)
        return plan, list(dict.fromkeys(fired))

    def _scalar_value(self, sub: ScalarSubquery) -> Literal:
        """Run an uncorrelated scalar subquery as its own job: its one value, or null for no row."""
        table = QueryExecution(self.context, sub.plan).to_table()
        if table.num_rows > 1:
            raise QuiverError(
                f"a scalar subquery returned more than one row ({table.num_rows} rows), but one used as a value "
                f"may return at most one row; aggregate it or add LIMIT 1:\n{sub.plan.tree_string()}"
            )
        value = table.column(0)[0].as_py() if table.num_rows else None
        return Literal(value, sub.dtype)

    def _computed_once(self, plan: L.LogicalPlan) -> L.InMemoryRelation:
        """Run `plan` as a job of its own and keep its partitions until this query is done."""
        relation = self.context.cache.store_result(QueryExecution(self.context, plan), REUSED)
        blocks = [BlockId("cache", relation.cache_key, p, 0) for p in range(relation.partitions)]
        self._reused.append(blocks)
        # A query planned but never run (explain, fired_rules) frees them when it is collected.
        weakref.finalize(self, self.context.store.drop, blocks)
        return relation

    def release(self) -> None:
        """Drop the blocks of the aggregates this query computed once for its subqueries and itself."""
        for blocks in self._reused:
            self.context.store.drop(blocks)
        self._reused.clear()

    @property
    def optimized(self) -> L.LogicalPlan:
        return self._optimized[0]

    @property
    def fired_rules(self) -> list[str]:
        return self._optimized[1]

    @cached_property
    def physical(self) -> PhysicalPlan:
        conf = self.context.conf
        # Shuffles start with initialPartitionNum partitions where it is set (and coalescing is on), else with
        # the user's spark.sql.shuffle.partitions, else with as many as the data's estimated size needs for
        # each to fit a task's share of the memory budget.
        partitions = conf.shuffle_partitions()
        adaptive = AdaptiveSettings.from_conf(conf, self.context.parallelism, self.context.memory_settings().budget())
        initial = conf.get("quiver.sql.adaptive.coalescePartitions.initialPartitionNum")
        if initial and adaptive.enabled and adaptive.coalesce:
            partitions = int(initial)
        elif not conf.is_set("spark.sql.shuffle.partitions"):
            partitions = initial_partitions(self.optimized, adaptive, partitions)
        pconf = PlannerConfig(
            shuffle_partitions=partitions,
            broadcast_threshold=conf.broadcast_threshold(),
            broadcast_by_cost_max_bytes=conf.broadcast_by_cost_max_bytes(),
            default_parallelism=self.context.parallelism,
        )
        with running_ansi(conf.ansi_enabled()):
            return pipeline_step(PhysicalPlanning).plan(self.optimized, pconf)

    @cached_property
    def stages(self) -> StageGraph:
        return pipeline_step(StageSplitting).split(self.physical)

    def run(self, result_task: Callable[[int, Iterator[pa.RecordBatch]], Any]) -> list[Any]:
        """Run the job; `result_task(partition, batches)` consumes each result partition."""
        ansi = self.context.conf.ansi_enabled()
        try:
            # placement, which the scheduler asks stage by stage, sees the mode too (device kernels decline
            # what ANSI mode checks on the CPU)
            with running_ansi(ansi):
                return self.context.run_job(self.stages, result_task, ansi=ansi)
        finally:
            self.last_job = self.context.scheduler.thread_last_job
            self.release()

    def to_table(self) -> pa.Table:
        """The whole result as one Arrow table with the user's column names, in partition order."""
        output = self.analyzed.output
        schema = pa.schema([pa.field(a.internal_name, a.dtype.to_arrow()) for a in output])
        results = ResultSize(self.context.conf.max_result_size())
        parts = self.run(lambda p, batches: [_conform(b, schema) for b in results.counted(batches)])
        batches = [b for part in parts for b in part]
        results.check_total(batches, len(parts))
        table = pa.Table.from_batches(batches, schema=schema) if batches else schema.empty_table()
        return table.rename_columns([a.name for a in output])

    def placement_string(self) -> str:
        """Per stage, the device of each operator with its estimated size and cost on every candidate."""
        candidates = self.context.placement_candidates()
        if len(candidates) == 1:
            return (f"every operator on {candidates[0].label} "
                    f"(quiver.devices = {self.context.conf.get('quiver.devices')})")
        with running_ansi(self.context.conf.ansi_enabled()):
            return "\n".join(self.context.place(s.id, s.root).describe() for s in self.stages.stages)

    def native_string(self) -> str:
        """Per stage, the fragments that run on the native engine and those considered that stay on Quiver's
        executor, with why; empty when `quiver.native.engine` is none."""
        with running_ansi(self.context.conf.ansi_enabled()):
            native = self.context.native_executor()
            if native is None:
                return ""
            lines = []
            for stage in self.stages.stages:
                for node, why in fragment_choices(stage.root, set(), native):
                    verdict = "runs on duckdb" if why is None else f"stays on Quiver: {why}"
                    lines.append(f"stage {stage.id}: {node.node_string()} -> {verdict}")
        return "\n".join(lines) or "no stage has a fragment the native engine runs"

    def explain_string(self, mode: str = "extended", last_run: JobMetrics | None = None) -> str:
        """The plans as `DataFrame.explain(mode)` prints them. `last_run` (the job of the DataFrame's last
        action) adds what adaptive execution changed in it and the stages as they ran, and in cost mode
        what each stage and operator spilled."""
        sections = []
        if mode in ("extended", "formatted", "all"):
            sections.append("== Analyzed Logical Plan ==\n" + self.analyzed.tree_string())
            rules = f"  (rules fired: {', '.join(self.fired_rules) or 'none'})"
            sections.append("== Optimized Logical Plan ==" + rules + "\n" + self.optimized.tree_string())
        if mode == "cost":
            sections.append("== Optimized Logical Plan ==\n" + self.optimized.tree_string())
            sections.append("== Physical Plan (estimated rows and bytes each operator produces) ==\n"
                            + _estimated_tree(self.physical))
        else:
            sections.append("== Physical Plan ==\n" + self.physical.tree_string())
        sections.append("== Stages ==\n" + self.stages.describe())
        if last_run is not None and last_run.adaptive:
            sections.append("== Adaptive execution of the last run: what changed, and the stages as they ran ==\n"
                            + "\n".join(f"- {line}" for line in last_run.adaptive) + "\n" + last_run.final_stages)
        sections.append("== Placement ==\n" + self.placement_string())
        native = self.native_string()
        if native:
            engine = self.context.conf.get("quiver.native.engine")
            sections.append(f"== Native fragments (quiver.native.engine = {engine}) ==\n" + native)
        if mode == "cost":
            sections.append("== Storage cache (this process, so far) ==\n" + _storage_cache_line())
            if last_run is not None:
                sections.append("== Last run: what spilled to disk under the memory budget ==\n"
                                + spill_summary(last_run, self.context.memory_settings().budget()))
        self.release()
        return "\n\n".join(sections) + "\n"


def _estimated_tree(plan: PhysicalPlan, indent: int = 0) -> str:
    """The physical tree with each operator's estimated output, as `explain("cost")` prints it."""
    size = estimated_size(plan)
    note = f"  [rows≈{size[0]:,}, bytes≈{size[1]:,}]" if size is not None else "  [size unknown]"
    lines = [("   " * (indent - 1) + "+- " if indent else "") + plan.node_string() + note]
    lines += [_estimated_tree(c, indent + 1) for c in plan.children()]
    return "\n".join(lines)


def spill_summary(job: JobMetrics, budget: int) -> str:
    """Per stage of a run job, the operators that spilled (spills, bytes written), and the block store's
    spills, or that nothing spilled, under a budget of `budget` bytes."""
    lines = [f"job {job.job_id}, memory budget {budget:,} bytes per process: "
             + (f"{job.spilled_bytes:,} bytes spilled by operators" if job.spilled_bytes
                else "no operator spilled")]
    for stage in job.stages:
        if stage.spills:
            parts = ", ".join(f"{op} {n:,} spill{'s' if n != 1 else ''} ({b:,} bytes)"
                              for op, (n, b) in sorted(stage.spills.items()))
            lines.append(f"  stage {stage.stage_id} {stage.description}: {parts}")
    store = job.object_store
    if store.get("spilled_bytes"):
        lines.append(f"  block store (this process, so far): {store.get('spills', 0):,} spills, "
                     f"{store['spilled_bytes']:,} bytes")
    return "\n".join(lines)


def _storage_cache_line() -> str:
    """Hits, misses and bytes of the storage-side cache in front of slow storage (quiver/connectors/cache.py)."""
    stats = storage_cache_stats()
    if not stats:
        return "no reads through the storage cache yet (it caches object storage such as s3://)"
    return (f"{stats['hits']:,} block hits ({stats['disk_hits']:,} from disk), {stats['misses']:,} misses; "
            f"{stats['bytes_from_store']:,} bytes read from the store, {stats['bytes_saved']:,} bytes saved; "
            f"holding {stats['memory_bytes']:,} bytes in memory and {stats['disk_bytes']:,} on disk")


class ResultSize:
    """`spark.driver.maxResultSize` over one action's result: each result batch is counted as a result task
    hands it on, and the action fails as soon as the count passes the limit, naming both, instead of the
    driver holding it all (the count is shared by the result tasks of this process; the total the driver
    received is checked again once every task is in, for tasks that ran in other processes)."""

    def __init__(self, limit: int):
        self.limit = limit
        self.bytes = 0
        self._lock = threading.Lock()

    def counted(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            if self.limit:
                with self._lock:
                    self.bytes += batch.nbytes
                    seen = self.bytes
                if seen > self.limit:
                    raise self._too_large(seen, None)
            yield batch

    def check_total(self, batches: list[pa.RecordBatch], tasks: int) -> None:
        total = sum(b.nbytes for b in batches)
        if self.limit and total > self.limit:
            raise self._too_large(total, tasks)

    def _too_large(self, seen: int, tasks: int | None) -> ResultTooLargeError:
        of = f" of {tasks} tasks" if tasks is not None else ""
        return ResultTooLargeError(
            f"Total size of results{of} ({_mib(seen)}) is bigger than spark.driver.maxResultSize "
            f"({_mib(self.limit)}); raise spark.driver.maxResultSize (0 for no bound), or write the result "
            f"with df.write instead of bringing it to the driver")

    def __getstate__(self) -> dict:
        # A result task pickled into another process counts there on its own.
        return {"limit": self.limit, "bytes": 0}

    def __setstate__(self, state: dict) -> None:
        self.limit, self.bytes = state["limit"], state["bytes"]
        self._lock = threading.Lock()


def _mib(nbytes: int) -> str:
    return f"{nbytes / (1 << 20):.1f} MiB"


def _keep_batches(partition: int, batches: Iterator[pa.RecordBatch]) -> list[pa.RecordBatch]:
    """A result task that keeps its partition's batches as they are."""
    return list(batches)


def _conform(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """Order columns as the query's output and give them exactly its types."""
    if batch.schema.names != schema.names:
        batch = pa.RecordBatch.from_arrays([batch.column(n) for n in schema.names], names=schema.names)
    if batch.schema != schema:
        batch = pa.RecordBatch.from_arrays(
            [c if c.type == f.type else c.cast(f.type) for c, f in zip(batch.columns, schema)], schema=schema)
    return batch


class CacheManager:
    """Plans the user cached, materialised into the block store the first time a job needs them."""

    def __init__(self, context: ExecutionContext):
        self.context = context
        self._entries: dict[L.LogicalPlan, L.InMemoryRelation | None] = {}
        self._levels: dict[L.LogicalPlan, str] = {}
        self._next_key = 0

    def new_key(self) -> int:
        """A block-store key no other cached or reused relation of this session has."""
        key = self._next_key
        self._next_key += 1
        return key

    def register(self, plan: L.LogicalPlan, storage_level: str) -> None:
        if plan not in self._entries:
            self._entries[plan] = None
            self._levels[plan] = storage_level

    def is_cached(self, plan: L.LogicalPlan) -> bool:
        return plan in self._entries

    def storage_level(self, plan: L.LogicalPlan) -> str | None:
        return self._levels.get(plan)

    def unregister(self, plan: L.LogicalPlan) -> None:
        entry = self._entries.pop(plan, None)
        self._levels.pop(plan, None)
        if entry is not None:
            self.context.store.drop(BlockId("cache", entry.cache_key, p, 0) for p in range(entry.partitions))
            self.context.drop_device_cache(entry.cache_key)

    def clear(self) -> None:
        for plan in list(self._entries):
            self.unregister(plan)

    def substitute(self, plan: L.LogicalPlan, skip_root: bool = False, materialize: bool = True) -> L.LogicalPlan:
        """Replace every cached subtree by its in-memory relation, materialising it if needed.

        `skip_root` is for the job that materialises `plan` itself: only its inputs are substituted.
        With `materialize=False` (explain) nothing runs: a cache not yet filled shows as key -1.
        """
        if not self._entries:
            return plan

        def rule(node: L.LogicalPlan) -> L.LogicalPlan:
            if node is plan and skip_root:
                return node
            if node in self._entries:
                if not materialize and self._entries[node] is None:
                    return L.InMemoryRelation(-1, node.output, 0, self._levels[node])
                return self._materialize(node)
            return node

        return L.transform_down(plan, rule)

    def materialize(self, plan: L.LogicalPlan) -> None:
        """Fill the cache of `plan` (registered) now, as an eager CACHE TABLE does."""
        self._materialize(plan)

    def _materialize(self, plan: L.LogicalPlan) -> L.InMemoryRelation:
        entry = self._entries.get(plan)
        if entry is not None:
            return entry
        entry = self.store_result(QueryExecution(self.context, plan, materializing=True), self._levels[plan])
        self._entries[plan] = entry
        return entry

    def store_result(self, qe: QueryExecution, storage_level: str) -> L.InMemoryRelation:
        """Run `qe` and keep each of its result partitions in the block store, under a new key."""
        key = self.new_key()
        store = self.context.store
        device = self.context.cache_device()
        # Each result task hands back its partition's batches (by reference in-process, mapped from
        # the object store on Ray); the driver keeps them in the store under the cache key.
        parts = qe.run(_keep_batches)
        for p, kept in enumerate(parts):
            store.put(BlockId("cache", key, p, 0), kept, on_disk=storage_level == "DISK_ONLY")
            if device is not None:
                device.cache_put(key, p, kept)
        # Its real size is known now: the planner sizes joins over it (broadcast or not) from that.
        return L.InMemoryRelation(key, qe.analyzed.output, len(parts), storage_level,
                                  rows=sum(b.num_rows for part in parts for b in part),
                                  size_bytes=sum(b.nbytes for part in parts for b in part))
