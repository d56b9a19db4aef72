"""Order a group of inner joins by estimated cardinality, never through a cross product it can avoid.

A tree of inner/cross joins (the FROM list of `FROM a, b, c WHERE ...`) is flattened into
its inputs and conditions. Equalities between columns form equivalence classes, so
`p_partkey = l_partkey AND ps_partkey = l_partkey` also connects part with partsupp.
Then, greedily (GOO), the two connected inputs whose join is estimated smallest are joined,
until one tree is left; the smaller side of each join goes right, where the hash table is
built. A Project on top keeps the group's original column order.
"""
from __future__ import annotations

from dataclasses import dataclass

from quiver.engine.core.expressions import AttributeRef, Comparison, Expr, conjoin, split_conjuncts
from quiver.engine.core.plan import Filter, Join, LogicalPlan, Project
from quiver.planners.statistics import Estimate, equi_keys, estimate, join_rows

_INNER = ("inner", "cross")


def reorder_joins(plan: LogicalPlan) -> LogicalPlan:
    """Reorder every group of three or more inner joins in `plan`."""
    if isinstance(plan, Join) and plan.how in _INNER:
        items, conditions = _flatten(plan)
        items = [reorder_joins(i) for i in items]
        if len(items) < 3 or any(estimate(i).rows < 0 for i in items):
            return _rebuild_children(plan)
        ordered = _order(items, conditions)
        if ordered.output != plan.output:
            ordered = Project(ordered, plan.output)
        return ordered
    return _rebuild_children(plan)


def _rebuild_children(plan: LogicalPlan) -> LogicalPlan:
    kids = plan.children()
    new = tuple(reorder_joins(k) for k in kids)
    return plan.with_children(new) if any(a is not b for a, b in zip(new, kids)) else plan


def _flatten(plan: LogicalPlan) -> tuple[list[LogicalPlan], list[Expr]]:
    """The inputs and conjuncts of a tree of inner joins, seeing through column-only projections."""
    if isinstance(plan, Project) and all(isinstance(p, AttributeRef) for p in plan.projections) \
            and isinstance(plan.child, Join) and plan.child.how in _INNER:
        return _flatten(plan.child)
    if isinstance(plan, Join) and plan.how in _INNER:
        left_items, left_conds = _flatten(plan.left)
        right_items, right_conds = _flatten(plan.right)
        return left_items + right_items, left_conds + right_conds + split_conjuncts(plan.condition)
    return [plan], []


@dataclass
class _Tree:
    plan: LogicalPlan
    ids: frozenset[int]
    stats: Estimate

    @staticmethod
    def of(plan: LogicalPlan) -> _Tree:
        return _Tree(plan, frozenset(a.expr_id for a in plan.output), estimate(plan))

    @property
    def tie(self) -> int:
        return min(self.ids) if self.ids else 0


class _Equivalences:
    """Union-find over columns that the conditions make equal."""

    def __init__(self) -> None:
        self.parent: dict[int, int] = {}
        self.attrs: dict[int, AttributeRef] = {}

    def add(self, a: AttributeRef, b: AttributeRef) -> None:
        for x in (a, b):
            self.attrs.setdefault(x.expr_id, x)
            self.parent.setdefault(x.expr_id, x.expr_id)
        ra, rb = self.find(a.expr_id), self.find(b.expr_id)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def classes(self) -> list[list[AttributeRef]]:
        groups: dict[int, list[AttributeRef]] = {}
        for i in sorted(self.parent):
            groups.setdefault(self.find(i), []).append(self.attrs[i])
        return list(groups.values())


def _is_column_equality(c: Expr) -> bool:
    return isinstance(c, Comparison) and c.op == "=" and isinstance(c.left, AttributeRef) \
        and isinstance(c.right, AttributeRef) and c.left.dtype == c.right.dtype


def _order(items: list[LogicalPlan], conditions: list[Expr]) -> LogicalPlan:
    equal = _Equivalences()
    others: list[Expr] = []
    for c in conditions:
        if _is_column_equality(c):
            equal.add(c.left, c.right)
        else:
            others.append(c)
    classes = equal.classes()
    trees = [_Tree.of(_with_local_equalities(i, classes)) for i in items]
    while len(trees) > 1:
        best = None
        for i in range(len(trees)):
            for j in range(i + 1, len(trees)):
                a, b = trees[i], trees[j]
                condition = _between(a, b, classes, others)
                pairs = equi_keys(condition, set(a.ids), set(b.ids))
                if not pairs:
                    continue
                rows = join_rows(a.stats, b.stats, pairs)
                key = (rows, min(a.tie, b.tie), max(a.tie, b.tie))
                if best is None or key < best[0]:
                    best = (key, i, j, condition)
        if best is None:
            # Nothing connects what is left: cross the two smallest inputs.
            trees.sort(key=lambda t: (t.stats.rows, t.tie))
            i, j, condition = 0, 1, _between(trees[0], trees[1], classes, others)
        else:
            _, i, j, condition = best
        a, b = trees[i], trees[j]
        used = set(split_conjuncts(condition))
        others = [c for c in others if c not in used]
        big, small = (a, b) if (a.stats.rows, b.tie) >= (b.stats.rows, a.tie) else (b, a)
        joined = Join(big.plan, small.plan, "inner" if condition is not None else "cross", condition)
        trees = [t for k, t in enumerate(trees) if k not in (i, j)] + [_Tree.of(joined)]
    plan = trees[0].plan
    return Filter(plan, conjoin(others)) if others else plan


def _between(a: _Tree, b: _Tree, classes: list[list[AttributeRef]], others: list[Expr]) -> Expr | None:
    """The condition joining `a` and `b`: one equality per shared equivalence class, and the other conjuncts
    they cover."""
    parts: list[Expr] = []
    for members in classes:
        left = [m for m in members if m.expr_id in a.ids]
        right = [m for m in members if m.expr_id in b.ids]
        if left and right:
            parts.append(Comparison("=", left[0], right[0]))
    both = a.ids | b.ids
    for c in others:
        refs = c.references()
        if refs and refs <= both and refs & a.ids and refs & b.ids:
            parts.append(c)
    return conjoin(parts) if parts else None


def _with_local_equalities(item: LogicalPlan, classes: list[list[AttributeRef]]) -> LogicalPlan:
    """`item` filtered on the equalities its own columns inherit from a class (a = b, b = c gives a = c)."""
    ids = {a.expr_id for a in item.output}
    local: list[Expr] = []
    for members in classes:
        mine = [m for m in members if m.expr_id in ids]
        local.extend(Comparison("=", mine[0], m) for m in mine[1:])
    return Filter(item, conjoin(local)) if local else item
