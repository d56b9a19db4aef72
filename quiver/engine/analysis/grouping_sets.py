"""Grouping sets: `rollup`, `cube`, `groupingSets` and SQL's GROUP BY ROLLUP/CUBE/GROUPING SETS.

Planned as Spark's Expand is: every input row is repeated once per grouping set (here a UNION ALL
of projections of the input), each copy carrying the grouping keys with the keys outside its set
set to null, a grouping id (bit i, counted from the last key, is 1 where key i is aggregated
away) and one grouping() bit per key. One Aggregate then groups by keys, id and bits:

    Aggregate([k0', k1', gid, g0, g1], items')
      Union(Project(x, [x.*, k0 AS k0', k1 AS k1', 0 AS gid, 0 AS g0, 0 AS g1]),     -- set (k0, k1)
            Project(x, [x.*, k0 AS k0', null AS k1', 1 AS gid, 0 AS g0, 1 AS g1]),  -- set (k0)
            Project(x, [x.*, null AS k0', null AS k1', 3 AS gid, 1 AS g0, 1 AS g1]))  -- set ()

Aggregate functions read the input's own columns, so sum(k1) still sums k1 in the set (k0);
outside aggregate functions a key reads k', grouping(k) reads g and grouping_id() reads gid.
"""
from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import TYPE_CHECKING

from quiver.engine.analysis.analyzer import analyze, same_expr
from quiver.engine.core import types as T
from quiver.engine.core.errors import AnalysisException
from quiver.engine.core.expressions import (
    AggregateFunction,
    Alias,
    Expr,
    Literal,
    ScalarFunction,
    UnresolvedColumn,
    transform_expr,
)
from quiver.engine.core.plan import Aggregate, LogicalPlan, Project, Union

if TYPE_CHECKING:
    from sqlglot import exp


def rollup_sets(n: int) -> list[tuple[int, ...]]:
    """ROLLUP(k0, .., kn-1): every prefix of the keys, longest first."""
    return [tuple(range(i)) for i in range(n, -1, -1)]


def cube_sets(n: int) -> list[tuple[int, ...]]:
    """CUBE(k0, .., kn-1): every subset of the keys, largest first (Spark's order)."""
    return [c for size in range(n, -1, -1) for c in combinations(range(n), size)]


def grouping_sets_aggregate(child: LogicalPlan, keys: Sequence[Expr], sets: Sequence[Sequence[int]],
                            items: Sequence[Expr]) -> LogicalPlan:
    """Aggregate `items` over `child` once per grouping set (each a list of positions in `keys`)."""
    base = analyze(Aggregate(child, tuple(keys), tuple(_virtual_grouping_id(i) for i in items)))
    if not isinstance(base, Aggregate):
        raise AnalysisException("grouping sets need an aggregation: add aggregate functions or use groupBy()")
    child, resolved_keys = base.child, base.grouping
    n = len(resolved_keys)
    if n > 62:
        raise AnalysisException(f"grouping sets over {n} columns are too many; at most 62 are supported")
    branches = []
    for kept in sets:
        kept = set(kept)
        gid = sum(1 << (n - 1 - i) for i in range(n) if i not in kept)
        extra: list[Expr] = [Alias(k if i in kept else Literal(None, k.dtype), f"__grouping_key{i}")
                             for i, k in enumerate(resolved_keys)]
        extra.append(Alias(Literal(gid, T.LongType()), "__grouping_id"))
        extra += [Alias(Literal(0 if i in kept else 1, T.ByteType()), f"__grouping_bit{i}") for i in range(n)]
        branches.append(Project(child, tuple(child.output) + tuple(extra)))
    expanded = analyze(Union(tuple(branches)))
    added = expanded.output[len(child.output):]
    key_refs, gid_ref, bit_refs = added[:n], added[n], added[n + 1:]

    def key_index(e: Expr) -> int:
        for i, k in enumerate(resolved_keys):
            if same_expr(e, k):
                return i
        raise AnalysisException(f"{e.sql()} is not a grouping column; grouping() and grouping_id() take "
                                f"grouping columns: {', '.join(k.sql() for k in resolved_keys)}")

    def rewrite(e: Expr) -> Expr:
        if isinstance(e, AggregateFunction):
            return e
        if isinstance(e, ScalarFunction) and e.name == "grouping":
            return bit_refs[key_index(e.args[0])]
        if isinstance(e, ScalarFunction) and e.name == "grouping_id":
            if e.args and [key_index(a) for a in e.args] != list(range(n)):
                raise AnalysisException(
                    f"grouping_id({', '.join(a.sql() for a in e.args)}) must name the grouping columns in order: "
                    f"{', '.join(k.sql() for k in resolved_keys)}, or none of them")
            return gid_ref
        for i, k in enumerate(resolved_keys):
            if same_expr(e, k):
                return key_refs[i]
        kids = e.children()
        new_kids = tuple(rewrite(c) for c in kids)
        return e.with_children(new_kids) if any(a is not b for a, b in zip(new_kids, kids)) else e

    out: list[Expr] = []
    for item in base.aggregates:
        inner, name = (item.child, item.name) if isinstance(item, Alias) else (item, item.name)
        rewritten = rewrite(inner)
        if isinstance(item, Alias):
            out.append(Alias(rewritten, name, item.expr_id))
        elif rewritten is inner:
            out.append(item)
        else:
            out.append(Alias(rewritten, name, item.expr_id))
    grouping = tuple(key_refs) + (gid_ref,) + tuple(bit_refs)
    return analyze(Aggregate(expanded, grouping, tuple(out)))



def _virtual_grouping_id(item: Expr) -> Expr:
    """SQL's virtual column grouping__id is grouping_id()."""
    def swap(e: Expr) -> Expr:
        if isinstance(e, UnresolvedColumn) and tuple(p.lower() for p in e.parts) == ("grouping__id",):
            return ScalarFunction("grouping_id", ())
        return e
    swapped = transform_expr(item, swap)
    if isinstance(item, UnresolvedColumn) and swapped is not item:
        return Alias(swapped, "grouping__id")
    return swapped


def grouping_sets_sql(group: exp.Group) -> tuple[list[exp.Expression], list[tuple[int, ...]]] | None:
    """The keys (sqlglot expressions, first appearance first) and sets of a GROUP BY with ROLLUP, CUBE
    or GROUPING SETS, or None for a plain GROUP BY. The sets of several clauses multiply, as in Spark."""
    from sqlglot import exp

    elements = list(group.expressions)
    special = (exp.Rollup, exp.Cube, exp.GroupingSets)
    old_style = group.args.get("grouping_sets") or group.args.get("rollup") or group.args.get("cube")
    if not old_style and not any(isinstance(g, special) for g in elements):
        return None
    members: list[exp.Expression] = []

    def position(e: exp.Expression) -> int:
        for i, m in enumerate(members):
            if m == e:
                return i
        members.append(e)
        return len(members) - 1

    def set_members(e: exp.Expression) -> list[exp.Expression]:
        if isinstance(e, exp.Tuple):
            return list(e.expressions)
        if isinstance(e, exp.Paren):
            return [e.this]
        return [e]

    factors: list[list[tuple[int, ...]]] = []
    plain = [g for g in elements if not isinstance(g, special)]
    if old_style:
        keys = [position(g) for g in plain]
        if group.args.get("grouping_sets"):
            factors.append([tuple(position(m) for m in set_members(s)) for node in group.args["grouping_sets"]
                            for s in node.expressions])
        elif group.args.get("rollup"):
            factors.append([tuple(keys[:i]) for i in range(len(keys), -1, -1)])
        else:
            factors.append([tuple(keys[i] for i in c) for c in cube_sets(len(keys))])
    else:
        for g in elements:
            if isinstance(g, exp.Rollup):
                keys = [position(m) for m in g.expressions]
                factors.append([tuple(keys[:i]) for i in range(len(keys), -1, -1)])
            elif isinstance(g, exp.Cube):
                keys = [position(m) for m in g.expressions]
                factors.append([tuple(keys[i] for i in c) for c in cube_sets(len(keys))])
            elif isinstance(g, exp.GroupingSets):
                factors.append([tuple(position(m) for m in set_members(s)) for s in g.expressions])
            else:
                factors.append([(position(g),)])
    sets: list[tuple[int, ...]] = [()]
    for factor in factors:
        sets = [tuple(dict.fromkeys(a + b)) for a in sets for b in factor]
    return [m.copy() for m in members], sets
