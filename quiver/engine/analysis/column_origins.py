"""Which side of a join a column taken from a DataFrame (`df.v`, `df["v"]`) belongs to.

A self-join, or a join of a frame with one derived from it (`a.join(a.filter(...), "k")`), has the
same attribute ids on both sides; the analyzer gives the right side fresh ids for those it shares
with the left. Matched by id alone, `b.v` would then silently be the left's `v`. So a column handle
carries the plan id of the DataFrame it came from and its position there (`ColumnOrigin`), and is
resolved as Spark Connect resolves a column with a plan id: find that DataFrame's plan under the
node using the column, take its column at that position, and follow it up through the renames to
the node's input. Where the frame occurs on several paths, Spark Connect's rule decides: an
occurrence that is the node's input itself wins over deeper ones (`a.join(b, a.k == b.k)` with
`b = a.filter(...)`: `a` is the left input and only inside `b` on the right); any other pair is
ambiguous and raises rather than pick one (`a.join(a, a.k == a.k)`, or `a.join(b, "k").select(a.v)`,
where the join, not `a`, is the select's input). A column the plan above its frame dropped
(`b.k` after `a.join(b, "k", "left")`, which keeps only the left's key; `df.v` after
`df.withColumn("v", ...)`) is matched by id and then by name, as Spark Connect falls back to its name.
A handle whose DataFrame is not under the node at all (`df1.select(df2.v)`) raises, as in Connect,
rather than match a column of the same name.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from quiver.engine.core.errors import AnalysisException
from quiver.engine.core.expressions import Alias, AttributeRef, ColumnOrigin, Expr, transform_expr
from quiver.engine.core.plan import Aggregate, LogicalPlan, Project

# (depth, attribute) for each place a frame's column is visible: depth counts the DataFrames passed on the way.
_Matches = list[tuple[int, AttributeRef]]


def has_column_origins(node: LogicalPlan) -> bool:
    """Whether any of `node`'s own expressions holds a column handle still to resolve."""
    return any(True for e in node.expressions() for _ in _handles(e))


def resolve_origins(node: LogicalPlan) -> LogicalPlan:
    """`node` with every column handle in its expressions replaced by the attribute of `node`'s inputs it
    refers to (see the module docstring). A handle whose DataFrame is not under `node` (or whose column
    the plan above that DataFrame dropped) loses its origin and is matched by id and name, as before."""
    if not has_column_origins(node):
        return node
    memo: dict[tuple[int, ColumnOrigin], _Matches] = {}

    def resolve(e: Expr) -> Expr:
        if isinstance(e, AttributeRef) and e.origin is not None:
            return _resolve(e, node.children(), memo)
        return e

    return node.map_expressions(lambda e: transform_expr(e, resolve))


def unplaced_references(node: LogicalPlan) -> set[int]:
    """Ids of the attributes `node`'s expressions read that no DataFrame under `node` places: those taken
    from no DataFrame, and column handles whose DataFrame is not found below (they fall back to their id)."""
    memo: dict[tuple[int, ColumnOrigin], _Matches] = {}
    ids: set[int] = set()
    for e in node.expressions():
        for x in e.walk():
            if isinstance(x, AttributeRef) and (
                    x.origin is None or not any(_find(c, x.origin, memo) for c in node.children())):
                ids.add(x.expr_id)
    return ids


def _handles(e: Expr) -> Iterator[AttributeRef]:
    for x in e.walk():
        if isinstance(x, AttributeRef) and x.origin is not None:
            yield x


def _resolve(handle: AttributeRef, inputs: tuple[LogicalPlan, ...],
             memo: dict[tuple[int, ColumnOrigin], _Matches]) -> AttributeRef:
    origin = handle.origin
    assert origin is not None
    matches = [m for child in inputs for m in _find(child, origin, memo)]
    if not matches:
        if not any(_holds_frame(child, origin.plan_id, set()) for child in inputs):
            raise AnalysisException(
                f"[CANNOT_RESOLVE_DATAFRAME_COLUMN] cannot resolve the DataFrame column '{handle.name}': the "
                f"DataFrame it was taken from is not an input of this query (as in df1.select(df2.v)). Use "
                f"F.col('{handle.name}'), or take the column from a DataFrame this query is built from."
            )
        return dataclasses.replace(handle, origin=None)
    matches.sort(key=lambda m: m[0])
    (first_depth, attribute), rest = matches[0], matches[1:]
    if any(depth == 0 or first_depth != 0 for depth, _ in rest):
        raise AnalysisException(
            f"[AMBIGUOUS_COLUMN_REFERENCE] column '{handle.name}' is ambiguous: it was taken from a DataFrame that "
            f"this query joins with itself (or with a DataFrame derived from it), so it could be either side's. "
            f"Alias the DataFrames with different names before joining them and name the column with its alias, "
            f"e.g. df.alias('a').join(df.alias('b'), F.col('a.{handle.name}') == F.col('b.{handle.name}'))."
        )
    # Spark keeps the spelling the user wrote: df["CITY"] on column `city` is named CITY.
    return attribute if attribute.name == handle.name else dataclasses.replace(attribute, name=handle.name)


def _find(plan: LogicalPlan, origin: ColumnOrigin, memo: dict[tuple[int, ColumnOrigin], _Matches]) -> _Matches:
    """Where the column `origin` names is visible in `plan`'s output, each with how many nodes lie between
    `plan` and the occurrence of its DataFrame (0 when `plan` is that DataFrame's root).

    Memoized per (node, origin): a frame joined with itself shares its subtrees, which would otherwise be
    walked once per path."""
    key = (id(plan), origin)
    if key in memo:
        return memo[key]
    found: _Matches = []
    if plan.plan_id == origin.plan_id:
        if origin.position < len(plan.output):
            found.append((0, plan.output[origin.position]))
    else:
        for child in plan.children():
            for depth, attribute in _find(child, origin, memo):
                visible = _visible(plan, attribute)
                if visible is not None:
                    found.append((depth + 1, visible))
    memo[key] = found
    return found


def _holds_frame(plan: LogicalPlan, plan_id: int, seen: set[int]) -> bool:
    """Whether the DataFrame `plan_id` is `plan` or under it (`seen`: nodes already walked, shared subtrees)."""
    if plan.plan_id == plan_id:
        return True
    if id(plan) in seen:
        return False
    seen.add(id(plan))
    return any(_holds_frame(child, plan_id, seen) for child in plan.children())


def _visible(plan: LogicalPlan, attribute: AttributeRef) -> AttributeRef | None:
    """`attribute` of a child as `plan`'s output has it: the same id, or renamed to a fresh id under its own
    name (the analyzer's renaming of a self-join's right side); None where `plan` does not pass it on."""
    for out in plan.output:
        if out.expr_id == attribute.expr_id:
            return out
    if isinstance(plan, (Project, Aggregate)):
        named = plan.projections if isinstance(plan, Project) else plan.aggregates
        for e in named:
            if (isinstance(e, Alias) and e.name == attribute.name and isinstance(e.child, AttributeRef)
                    and e.child.expr_id == attribute.expr_id):
                return e.to_attribute()
    return None


__all__ = ["has_column_origins", "resolve_origins", "unplaced_references"]
