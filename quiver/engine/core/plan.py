"""Immutable logical plan nodes, and the generic walkers every rule uses.

A node is a frozen dataclass; `children()` and `with_children()` are derived from its
fields by the tree base (`tree.TreeNode`), so `transform_up` rebuilds any tree without
knowing node types. After analysis
every node's `output` is a tuple of `AttributeRef`s with unique ids.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, ClassVar

import pyarrow as pa

from quiver.engine.core import types as T
from quiver.engine.core.expressions import (
    Alias,
    AttributeRef,
    Expr,
    SortOrder,
    new_expr_id,
    strip_alias,
)
from quiver.engine.core.tree import TreeNode, map_members, members, node_fields, per_class

_plan_ids = itertools.count(1)


def new_plan_id() -> int:
    """A process-wide unique id for a new DataFrame's plan (Spark Connect's plan_id)."""
    return next(_plan_ids)


@dataclass(frozen=True, eq=False)
class LogicalPlan(TreeNode["LogicalPlan"]):
    """Base of all logical plan nodes."""

    # Fields of nodes that declare their output columns; they are not expressions to rewrite.
    output_fields: ClassVar[frozenset[str]] = frozenset({"attributes", "attribute"})

    plan_id: int | None = field(default=None, compare=False, hash=False, repr=False, kw_only=True)
    """An annotation: the DataFrame whose plan this node is the root of (None inside one). A column taken
    from a DataFrame (`df.v`) names its DataFrame's plan id, so that after a self-join the analyzer finds
    which side it came from, as Spark Connect resolves a column by its plan id."""

    estimate_cache: Any = field(default=None, init=False, compare=False, hash=False, repr=False)
    """What `planners.statistics.estimate` worked out for this node (rows, bytes, columns), kept
    because join reordering and the cost-based rules ask for the same subtrees' estimates many
    times. A memo: any rebuilt node starts without it, as the estimate of a changed node (a join
    whose side is now filtered) is not the old node's."""

    def expressions(self) -> tuple[Expr, ...]:
        """The expressions this node evaluates (not those of its children)."""
        return members(self, _expression_fields(type(self)), Expr)

    def map_expressions(self, fn: Callable[[Expr], Expr]) -> LogicalPlan:
        """This node with `fn` applied to each of its expressions; the node itself when none changes,
        so its memos survive and the optimizer's fixed-point check compares by identity."""
        return map_members(self, _expression_fields(type(self)), Expr, fn)

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        raise NotImplementedError(type(self).__name__)

    @cached_property
    def resolved(self) -> bool:
        return all(c.resolved for c in self.children()) and all(e.resolved for e in self.expressions())

    def node_string(self) -> str:
        """One line describing this node (without its children) for explain()."""
        args = ", ".join(e.sql() for e in self.expressions())
        return f"{type(self).__name__} [{args}]" if args else type(self).__name__


@per_class
def _expression_fields(cls: type[LogicalPlan]) -> tuple[str, ...]:
    return tuple(name for name in node_fields(cls) if name not in cls.output_fields)


@dataclass(frozen=True, eq=False)
class UnaryNode(LogicalPlan):
    """A node over one input, `child` (its first field); its output is the child's columns unless
    the node says otherwise (Spark's UnaryNode)."""

    child: LogicalPlan

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return self.child.output


def transform_up(plan: LogicalPlan, fn: Callable[[LogicalPlan], LogicalPlan]) -> LogicalPlan:
    """Rebuild `plan` bottom-up, applying `fn` to every node after its children."""
    return plan.transform_up(fn)


def transform_down(plan: LogicalPlan, fn: Callable[[LogicalPlan], LogicalPlan]) -> LogicalPlan:
    """Apply `fn` top-down; the children of what `fn` returns are visited next."""
    return plan.transform_down(fn)


def attributes_of(schema: T.StructType) -> tuple[AttributeRef, ...]:
    """Fresh attributes (new ids) for the fields of a schema."""
    return tuple(AttributeRef(f.name, f.dataType, f.nullable, new_expr_id()) for f in schema.fields)


# ---------------------------------------------------------------- leaves


@dataclass(frozen=True, eq=False)
class LocalRelation(LogicalPlan):
    """Rows held in memory as one Arrow table (createDataFrame); compared by identity."""

    table: pa.Table
    attributes: tuple[AttributeRef, ...]

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return self.attributes

    def node_string(self) -> str:
        return f"LocalRelation [{', '.join(a.display_name for a in self.attributes)}] {self.table.num_rows} rows"


@dataclass(frozen=True, eq=False)
class SourceScan(LogicalPlan):
    """A scan of a connector `Source`; optimizer rules prune its columns and push filters into it."""

    source: Any
    attributes: tuple[AttributeRef, ...]
    pushed_filters: tuple[Expr, ...] = ()

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return self.attributes

    def node_string(self) -> str:
        pushed = f" PushedFilters: [{', '.join(e.sql() for e in self.pushed_filters)}]" if self.pushed_filters else ""
        cols = ", ".join(a.display_name for a in self.attributes)
        return f"Scan {self.source.describe()} [{cols}]{pushed}"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, SourceScan) and other.source is self.source
                and other.attributes == self.attributes and other.pushed_filters == self.pushed_filters)

    def __hash__(self) -> int:
        return hash((id(self.source), self.attributes, self.pushed_filters))


@dataclass(frozen=True)
class RangeRelation(LogicalPlan):
    """`spark.range(start, end, step)`: one bigint column `id`."""

    start: int
    end: int
    step: int
    num_partitions: int | None
    attribute: AttributeRef

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return (self.attribute,)

    def node_string(self) -> str:
        return f"Range ({self.start}, {self.end}, step={self.step})"


# ---------------------------------------------------------------- unary


@dataclass(frozen=True)
class Project(UnaryNode):
    """Compute a list of named expressions over each row."""

    projections: tuple[Expr, ...]

    @cached_property
    def output(self) -> tuple[AttributeRef, ...]:
        return tuple(named_output(e) for e in self.projections)


def named_output(e: Expr) -> AttributeRef:
    """The attribute a select-list entry produces."""
    if isinstance(e, AttributeRef):
        return e
    if isinstance(e, Alias):
        return e.to_attribute()
    raise TypeError(f"select-list entry {e.sql()} must be an attribute or an alias after analysis")


@dataclass(frozen=True)
class Filter(UnaryNode):
    condition: Expr


@dataclass(frozen=True)
class Aggregate(UnaryNode):
    """Group by `grouping` and compute `aggregates` (named; may reference grouping attributes)."""

    grouping: tuple[Expr, ...]
    aggregates: tuple[Expr, ...]

    def expressions(self) -> tuple[Expr, ...]:
        return self.grouping + self.aggregates

    def map_expressions(self, fn: Callable[[Expr], Expr]) -> LogicalPlan:
        return replace(self, grouping=tuple(fn(e) for e in self.grouping),
                       aggregates=tuple(fn(e) for e in self.aggregates))

    @cached_property
    def output(self) -> tuple[AttributeRef, ...]:
        return tuple(named_output(e) for e in self.aggregates)

    def node_string(self) -> str:
        return (f"Aggregate [{', '.join(e.sql() for e in self.grouping)}], "
                f"[{', '.join(_named_sql(e) for e in self.aggregates)}]")


def _named_sql(e: Expr) -> str:
    if isinstance(e, Alias):
        return f"{strip_alias(e).sql()} AS {e.name}#{e.expr_id}"
    if isinstance(e, AttributeRef):
        return e.display_name
    return e.sql()


@dataclass(frozen=True)
class Window(UnaryNode):
    """Append window expressions (aliased) sharing one PARTITION BY / ORDER BY to every row."""

    window_exprs: tuple[Expr, ...]
    partition_by: tuple[Expr, ...]
    order_by: tuple[SortOrder, ...]

    @cached_property
    def output(self) -> tuple[AttributeRef, ...]:
        return self.child.output + tuple(named_output(e) for e in self.window_exprs)

    def node_string(self) -> str:
        return (f"Window [{', '.join(_named_sql(e) for e in self.window_exprs)}], "
                f"[{', '.join(e.sql() for e in self.partition_by)}], [{', '.join(o.sql() for o in self.order_by)}]")


@dataclass(frozen=True)
class Sort(UnaryNode):
    orders: tuple[SortOrder, ...]
    is_global: bool = True


@dataclass(frozen=True)
class Repartition(UnaryNode):
    """`repartition(n, *cols)` (hash or round robin), `repartitionByRange` or `coalesce(n)` (no shuffle)."""

    num_partitions: int | None
    keys: tuple[Expr, ...] = ()
    kind: str = "hash"

    def node_string(self) -> str:
        keys = f" [{', '.join(k.sql() for k in self.keys)}]" if self.keys else ""
        return f"Repartition {self.kind} {self.num_partitions}{keys}"


@dataclass(frozen=True)
class Limit(UnaryNode):
    n: int

    def node_string(self) -> str:
        return f"Limit {self.n}"


@dataclass(frozen=True)
class Offset(UnaryNode):
    """Skip the first `n` rows (SQL OFFSET, `df.offset(n)`), in the child's order."""

    n: int

    def node_string(self) -> str:
        return f"Offset {self.n}"


@dataclass(frozen=True)
class DeviceHint(UnaryNode):
    """`df.hint("device", "gpu")`: the operator that computes the child runs on that kind of device
    when it can (placement says why where it cannot)."""

    device: str

    def node_string(self) -> str:
        return f"DeviceHint {self.device}"


@dataclass(frozen=True)
class MapInBatches(UnaryNode):
    """`df.mapInArrow(fn, schema)` / `df.mapInPandas(fn, schema)`: `function` turns each partition's
    stream of batches (pyarrow.RecordBatch for kind "arrow", pandas.DataFrame for "pandas") into
    batches with the columns `attributes`. Opaque to the optimizer: no filter, limit or projection
    passes through it, and it reads every column of its child. `device` is the accelerator kind a
    resource profile asked for ("gpu", "npu"), None for any."""

    function: Any
    kind: str
    attributes: tuple[AttributeRef, ...]
    device: str | None = None

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return self.attributes

    def node_string(self) -> str:
        name = getattr(self.function, "__name__", type(self.function).__name__)
        op = "MapInArrow" if self.kind == "arrow" else "MapInPandas"
        device = f" on {self.device}" if self.device else ""
        return f"{op} {name} [{', '.join(a.display_name for a in self.attributes)}]{device}"


@dataclass(frozen=True)
class SubqueryAlias(UnaryNode):
    """`df.alias("d")`: the child's columns become reachable as `d.<name>`."""

    alias: str

    @cached_property
    def output(self) -> tuple[AttributeRef, ...]:
        return tuple(a.with_qualifier((self.alias,)) for a in self.child.output)

    def node_string(self) -> str:
        return f"SubqueryAlias {self.alias}"


@dataclass(frozen=True, eq=False)
class InMemoryRelation(LogicalPlan):
    """A cached plan whose partitions sit in the block store: a leaf for the optimizer."""

    cache_key: int
    attributes: tuple[AttributeRef, ...]
    partitions: int
    storage_level: str
    rows: int = -1
    size_bytes: int = -1

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return self.attributes

    def node_string(self) -> str:
        return f"InMemoryRelation [{', '.join(a.display_name for a in self.attributes)}] {self.storage_level}"


# ---------------------------------------------------------------- binary / n-ary


JOIN_TYPES = ("inner", "left", "right", "full", "left_semi", "left_anti", "cross")

JOIN_TYPE_ALIASES = {
    "inner": "inner", "cross": "cross",
    "outer": "full", "full": "full", "fullouter": "full", "full_outer": "full",
    "left": "left", "leftouter": "left", "left_outer": "left",
    "right": "right", "rightouter": "right", "right_outer": "right",
    "semi": "left_semi", "leftsemi": "left_semi", "left_semi": "left_semi",
    "anti": "left_anti", "leftanti": "left_anti", "left_anti": "left_anti",
}


@dataclass(frozen=True)
class Join(LogicalPlan):
    """Join two plans on an optional condition; `how` is one of JOIN_TYPES."""

    left: LogicalPlan
    right: LogicalPlan
    how: str
    condition: Expr | None = None

    @cached_property
    def output(self) -> tuple[AttributeRef, ...]:
        left, right = self.left.output, self.right.output
        if self.how in ("left_semi", "left_anti"):
            return left
        if self.how in ("right", "full"):
            left = tuple(a.with_nullability(True) for a in left)
        if self.how in ("left", "full"):
            right = tuple(a.with_nullability(True) for a in right)
        return left + right

    def node_string(self) -> str:
        cond = f", {self.condition.sql()}" if self.condition is not None else ""
        return f"Join {self.how}{cond}"


@dataclass(frozen=True)
class Union(LogicalPlan):
    """UNION ALL by position; the first child names the columns."""

    inputs: tuple[LogicalPlan, ...]

    @cached_property
    def output(self) -> tuple[AttributeRef, ...]:
        first = self.inputs[0].output
        return tuple(
            a.with_nullability(any(c.output[i].nullable for c in self.inputs))
            for i, a in enumerate(first)
        )


def plan_stats_rows(plan: LogicalPlan) -> int | None:
    """Rows a leaf is known to hold, for estimates; None where unknown."""
    if isinstance(plan, LocalRelation):
        return plan.table.num_rows
    if isinstance(plan, RangeRelation):
        return max(0, (plan.end - plan.start + plan.step - (1 if plan.step > 0 else -1)) // plan.step)
    if isinstance(plan, SourceScan):
        return plan.source.statistics().num_rows
    return None


__all__ = [
    "LogicalPlan", "UnaryNode", "LocalRelation", "SourceScan", "RangeRelation", "Project", "Filter", "Aggregate",
    "Sort", "Window", "Repartition", "Limit", "SubqueryAlias", "InMemoryRelation", "Join", "Union", "transform_up",
    "transform_down",
    "attributes_of", "named_output", "JOIN_TYPES", "JOIN_TYPE_ALIASES",
]


@dataclass(frozen=True)
class Generate(UnaryNode):
    """explode / posexplode / inline of `generator` (a call of one of them, without `_outer`): each
    child row is repeated once per element, with the element's columns `attributes` added; with
    `outer`, a row whose array or map is null or empty stays, once, with nulls (Spark's Generate)."""

    generator: Expr
    outer: bool
    attributes: tuple[AttributeRef, ...]

    @cached_property
    def output(self) -> tuple[AttributeRef, ...]:
        return self.child.output + self.attributes

    def node_string(self) -> str:
        return (f"Generate {self.generator.sql()}, outer={str(self.outer).lower()}, "
                f"[{', '.join(a.display_name for a in self.attributes)}]")


@dataclass(frozen=True)
class BroadcastHint(UnaryNode):
    """`F.broadcast(df)` / `df.hint("broadcast")`: a join with this side builds its hash table from
    the whole of it, sent to every task of the other side, whatever its estimated size."""


__all__ += ["Generate", "BroadcastHint"]
