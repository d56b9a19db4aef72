"""Immutable logical plan nodes, and the generic walkers every rule uses.

A node is a frozen dataclass; `children()` and `with_children()` are derived from its
fields, so `transform_up` rebuilds any tree without knowing node types. After analysis
every node's `output` is a tuple of `AttributeRef`s with unique ids.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Callable, Iterator

import pyarrow as pa

from quiver.engine.core import types as T
from quiver.engine.core.expressions import (
    Alias, AttributeRef, Expr, SortOrder, field_names, new_expr_id, strip_alias,
)


# Fields of leaves that declare their output columns; they are not expressions to rewrite.
_OUTPUT_FIELDS = frozenset({"attributes", "attribute"})


@dataclass(frozen=True, eq=False)
class LogicalPlan:
    """Base of all logical plan nodes."""

    def children(self) -> tuple["LogicalPlan", ...]:
        cached = self.__dict__.get("_children")
        if cached is not None:
            return cached
        out: list[LogicalPlan] = []
        for name in field_names(type(self)):
            v = getattr(self, name)
            if isinstance(v, LogicalPlan):
                out.append(v)
            elif isinstance(v, tuple) and v and all(isinstance(x, LogicalPlan) for x in v):
                out.extend(v)
        # Nodes are immutable, so their children are worked out once (rules walk the tree repeatedly).
        self.__dict__["_children"] = children = tuple(out)
        return children

    def with_children(self, new: tuple["LogicalPlan", ...]) -> "LogicalPlan":
        it = iter(new)
        changes: dict[str, Any] = {}
        for name in field_names(type(self)):
            v = getattr(self, name)
            if isinstance(v, LogicalPlan):
                changes[name] = next(it)
            elif isinstance(v, tuple) and v and all(isinstance(x, LogicalPlan) for x in v):
                changes[name] = tuple(next(it) for _ in v)
        return replace(self, **changes) if changes else self

    def expressions(self) -> tuple[Expr, ...]:
        """The expressions this node evaluates (not those of its children)."""
        out: list[Expr] = []
        for name in field_names(type(self)):
            if name in _OUTPUT_FIELDS:
                continue
            v = getattr(self, name)
            if isinstance(v, Expr):
                out.append(v)
            elif isinstance(v, tuple) and v and all(isinstance(x, Expr) for x in v):
                out.extend(v)
        return tuple(out)

    def map_expressions(self, fn: Callable[[Expr], Expr]) -> "LogicalPlan":
        changes: dict[str, Any] = {}
        for name in field_names(type(self)):
            if name in _OUTPUT_FIELDS:
                continue
            v = getattr(self, name)
            if isinstance(v, Expr):
                new = fn(v)
                if new is not v:
                    changes[name] = new
            elif isinstance(v, tuple) and v and all(isinstance(x, Expr) for x in v):
                mapped = tuple(fn(x) for x in v)
                if any(a is not b for a, b in zip(mapped, v)):
                    changes[name] = mapped
        # An unchanged node stays the same object, so its cached children and estimates survive
        # and the optimizer's fixed-point check compares by identity.
        return replace(self, **changes) if changes else self

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        raise NotImplementedError(type(self).__name__)

    @property
    def resolved(self) -> bool:
        if self.__dict__.get("_resolved"):
            return True
        done = all(c.resolved for c in self.children()) and all(e.resolved for e in self.expressions())
        if done:  # an immutable node once resolved stays so; analysis asks for every node repeatedly
            self.__dict__["_resolved"] = True
        return done

    def node_string(self) -> str:
        """One line describing this node (without its children) for explain()."""
        args = ", ".join(e.sql() for e in self.expressions())
        return f"{type(self).__name__} [{args}]" if args else type(self).__name__

    def tree_string(self, indent: int = 0) -> str:
        lines = [("   " * (indent - 1) + "+- " if indent else "") + self.node_string()]
        for c in self.children():
            lines.append(c.tree_string(indent + 1))
        return "\n".join(lines)

    def walk(self) -> Iterator["LogicalPlan"]:
        yield self
        for c in self.children():
            yield from c.walk()


def transform_up(plan: LogicalPlan, fn: Callable[[LogicalPlan], LogicalPlan]) -> LogicalPlan:
    """Rebuild `plan` bottom-up, applying `fn` to every node after its children."""
    kids = plan.children()
    if kids:
        new_kids = tuple(transform_up(k, fn) for k in kids)
        if any(a is not b for a, b in zip(new_kids, kids)):
            plan = plan.with_children(new_kids)
    return fn(plan)


def transform_down(plan: LogicalPlan, fn: Callable[[LogicalPlan], LogicalPlan]) -> LogicalPlan:
    """Apply `fn` top-down; the children of what `fn` returns are visited next."""
    plan = fn(plan)
    kids = plan.children()
    if kids:
        new_kids = tuple(transform_down(k, fn) for k in kids)
        if any(a is not b for a, b in zip(new_kids, kids)):
            plan = plan.with_children(new_kids)
    return plan


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
class Project(LogicalPlan):
    """Compute a list of named expressions over each row."""

    child: LogicalPlan
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
class Filter(LogicalPlan):
    child: LogicalPlan
    condition: Expr

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return self.child.output


@dataclass(frozen=True)
class Aggregate(LogicalPlan):
    """Group by `grouping` and compute `aggregates` (named; may reference grouping attributes)."""

    child: LogicalPlan
    grouping: tuple[Expr, ...]
    aggregates: tuple[Expr, ...]

    def expressions(self) -> tuple[Expr, ...]:
        return self.grouping + self.aggregates

    def map_expressions(self, fn: Callable[[Expr], Expr]) -> "LogicalPlan":
        return replace(self, grouping=tuple(fn(e) for e in self.grouping), aggregates=tuple(fn(e) for e in self.aggregates))

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
class Window(LogicalPlan):
    """Append window expressions (aliased) sharing one PARTITION BY / ORDER BY to every row."""

    child: LogicalPlan
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
class Sort(LogicalPlan):
    child: LogicalPlan
    orders: tuple[SortOrder, ...]
    is_global: bool = True

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return self.child.output


@dataclass(frozen=True)
class Repartition(LogicalPlan):
    """`repartition(n, *cols)` (hash or round robin), `repartitionByRange` or `coalesce(n)` (no shuffle)."""

    child: LogicalPlan
    num_partitions: int | None
    keys: tuple[Expr, ...] = ()
    kind: str = "hash"

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return self.child.output

    def node_string(self) -> str:
        keys = f" [{', '.join(k.sql() for k in self.keys)}]" if self.keys else ""
        return f"Repartition {self.kind} {self.num_partitions}{keys}"


@dataclass(frozen=True)
class Limit(LogicalPlan):
    child: LogicalPlan
    n: int

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return self.child.output

    def node_string(self) -> str:
        return f"Limit {self.n}"


@dataclass(frozen=True)
class Offset(LogicalPlan):
    """Skip the first `n` rows (SQL OFFSET, `df.offset(n)`), in the child's order."""

    child: LogicalPlan
    n: int

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return self.child.output

    def node_string(self) -> str:
        return f"Offset {self.n}"


@dataclass(frozen=True)
class DeviceHint(LogicalPlan):
    """`df.hint("device", "gpu")`: the operator that computes the child runs on that kind of device
    when it can (placement says why where it cannot)."""

    child: LogicalPlan
    device: str

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return self.child.output

    def node_string(self) -> str:
        return f"DeviceHint {self.device}"


@dataclass(frozen=True)
class MapInBatches(LogicalPlan):
    """`df.mapInArrow(fn, schema)` / `df.mapInPandas(fn, schema)`: `function` turns each partition's
    stream of batches (pyarrow.RecordBatch for kind "arrow", pandas.DataFrame for "pandas") into
    batches with the columns `attributes`. Opaque to the optimizer: no filter, limit or projection
    passes through it, and it reads every column of its child. `device` is the accelerator kind a
    resource profile asked for ("gpu", "npu"), None for any."""

    child: LogicalPlan
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
class SubqueryAlias(LogicalPlan):
    """`df.alias("d")`: the child's columns become reachable as `d.<name>`."""

    child: LogicalPlan
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
    "LogicalPlan", "LocalRelation", "SourceScan", "RangeRelation", "Project", "Filter", "Aggregate",
    "Sort", "Window", "Repartition", "Limit", "SubqueryAlias", "InMemoryRelation", "Join", "Union", "transform_up", "transform_down",
    "attributes_of", "named_output", "JOIN_TYPES", "JOIN_TYPE_ALIASES",
]


@dataclass(frozen=True)
class Generate(LogicalPlan):
    """explode / posexplode / inline of `generator` (a call of one of them, without `_outer`): each
    child row is repeated once per element, with the element's columns `attributes` added; with
    `outer`, a row whose array or map is null or empty stays, once, with nulls (Spark's Generate)."""

    child: LogicalPlan
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
class BroadcastHint(LogicalPlan):
    """`F.broadcast(df)` / `df.hint("broadcast")`: a join with this side builds its hash table from
    the whole of it, sent to every task of the other side, whatever its estimated size."""

    child: LogicalPlan

    @property
    def output(self) -> tuple[AttributeRef, ...]:
        return self.child.output


__all__ += ["Generate", "BroadcastHint"]
