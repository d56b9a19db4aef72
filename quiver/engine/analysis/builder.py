"""The plan builder: joins, set operations, aggregates, sorts and limits as the DataFrame API and SQL build them.

`df.join(...)` and `... JOIN ... USING (...)`, `df.intersect(...)` and `INTERSECT`, `groupBy().agg()` and
`GROUP BY`, `F.rank().over(w)` and `rank() OVER (...)` all come here, so each operation has one
definition of Spark's semantics: the join-type names, how USING columns are matched and coalesced,
how a set operation widens its column types, which window frames a function takes, and the errors
each raises. Every function returns an analyzed plan; its caller runs it under the session's type
coercion rules (`spark.sql` does for SQL, `DataFrame._built` for the API).
"""
from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, replace

from quiver.engine.analysis.analyzer import analyze, coerce, fresh_ids, widen_set_operation
from quiver.engine.analysis.grouping_sets import grouping_sets_aggregate
from quiver.engine.core import types as T
from quiver.engine.core.errors import AnalysisException, ConfigurationError, UnresolvedColumnError
from quiver.engine.core.expressions import (
    FRAMED_WINDOW_FUNCTIONS,
    UNBOUNDED,
    WINDOW_FUNCTIONS,
    AggregateFunction,
    Alias,
    AttributeRef,
    CaseWhen,
    Cast,
    Comparison,
    Expr,
    Literal,
    ScalarFunction,
    SortOrder,
    UnresolvedColumn,
    WindowExpression,
    WindowFunction,
    conjoin,
    new_expr_id,
    transform_expr,
)
from quiver.engine.core.plan import (
    JOIN_TYPE_ALIASES,
    Aggregate,
    Join,
    Limit,
    LogicalPlan,
    Offset,
    Project,
    RangeRelation,
    Sort,
    Union,
    Window,
)

# ---------------------------------------------------------------- joins


def join_type(how: str) -> str:
    """Spark's name of a join type (`left_outer`, `leftouter`, `LEFT`, `semi`, ...) as one of `JOIN_TYPES`.

    Case and underscores do not matter, as in Spark's JoinType: `full_outer` is `fullouter`.
    """
    kind = JOIN_TYPE_ALIASES.get(how.lower().replace("_", ""))
    if kind is None:
        raise AnalysisException(
            f"Unsupported join type '{how}'. Supported join types include: "
            + ", ".join(f"'{name}'" for name in JOIN_TYPE_ALIASES) + "."
        )
    return kind


def join(left: LogicalPlan, right: LogicalPlan, how: str = "inner", condition: Expr | None = None) -> LogicalPlan:
    """`left` joined with `right` where `condition` holds; with no condition an inner join is a cross join.

    A DataFrame joined with itself gets new column ids on the right; a condition that reads a
    column both sides share could mean either side, so it is an error (alias the sides first).
    """
    kind = join_type(how)
    if condition is None and kind == "inner":
        kind = "cross"
    elif condition is not None and kind == "cross":
        kind = "inner"
    return analyze(Join(left, right, kind, condition))


def using_join(left: LogicalPlan, right: LogicalPlan, names: Sequence[str], how: str = "inner") -> LogicalPlan:
    """`JOIN ... USING (names)` / `df.join(other, names, how)`: equality on each named column of both sides.

    The output is Spark's: each key once, then the other columns of the left and of the right. The key
    is the left's column (the right's in a right join; in a full join the first non-null of the two,
    named as on the left); a semi or anti join gives the keys and then the left's other columns.
    """
    kind = join_type(how)
    kind = "inner" if kind == "cross" else kind
    if {a.expr_id for a in left.output} & {a.expr_id for a in right.output}:
        right = analyze(fresh_ids(right))
    left_keys = [_using_column(n, left, "left") for n in names]
    right_keys = [_using_column(n, right, "right") for n in names]
    equalities = [coerce(Comparison("=", lk, rk)) for lk, rk in zip(left_keys, right_keys)]
    joined = analyze(Join(left, right, kind, conjoin(equalities)))
    after = {a.expr_id: a for a in joined.output}
    keys: list[Expr] = []
    for lk, rk, equality in zip(left_keys, right_keys, equalities):
        if kind == "right":
            keys.append(after[rk.expr_id])
        elif kind == "full":
            # Both sides in the type the equality compares them in (string = bigint compares bigints), as Spark's
            # coalesce of the two keys has it.
            common = equality.left.dtype if isinstance(equality, Comparison) else lk.dtype
            sides = tuple(after[k.expr_id] if k.dtype == common else Cast(after[k.expr_id], common) for k in (lk, rk))
            keys.append(Alias(ScalarFunction("coalesce", sides), lk.name))
        else:
            keys.append(after[lk.expr_id])
    key_ids = {k.expr_id for k in left_keys + right_keys}
    rest = [a for a in joined.output if a.expr_id not in key_ids]
    return analyze(Project(joined, tuple(keys + rest)))


def _using_column(name: str, side: LogicalPlan, which: str) -> AttributeRef:
    """The first column of `side` called `name` (in any case), as Spark matches a USING column."""
    for a in side.output:
        if a.name.lower() == name.lower():
            return a
    columns = [a.name for a in side.output]
    close = difflib.get_close_matches(name, columns, n=1, cutoff=0.5)
    hint = f" Did you mean '{close[0]}'?" if close else ""
    raise UnresolvedColumnError(
        f"USING column '{name}' cannot be resolved on the {which} side of the join; a USING column must exist on "
        f"both sides.{hint}\nThe {which}-side columns: {', '.join(columns) or '(none)'}"
    )


# ---------------------------------------------------------------- set operations


def union(left: LogicalPlan, right: LogicalPlan) -> LogicalPlan:
    """UNION ALL by position: every row of both; the left names the columns, each column takes the wider type."""
    return analyze(Union((left, right)))


def union_by_name(left: LogicalPlan, right: LogicalPlan, allow_missing_columns: bool = False) -> LogicalPlan:
    """UNION ALL matching columns by name (in any case), in the left's order (`df.unionByName`).

    With `allow_missing_columns`, a column only one side has is null on the other, the right's
    extra columns coming last; without it, a left column the right lacks is an error, and so is a
    right column the left lacks (the inputs then differ in their number of columns), as in Spark.
    """
    for side in (left, right):
        seen: set[str] = set()
        for a in side.output:
            if a.name.lower() in seen:
                raise AnalysisException(
                    f"The column '{a.name}' already exists. unionByName matches columns by name, so each side "
                    f"needs distinct names; rename one first. Columns: {', '.join(c.name for c in side.output)}"
                )
            seen.add(a.name.lower())
    theirs = {a.name.lower(): a for a in right.output}
    mine = {a.name.lower() for a in left.output}
    matched: list[Expr] = []
    for a in left.output:
        found = theirs.get(a.name.lower())
        if found is not None:
            matched.append(found)
        elif allow_missing_columns:
            matched.append(Alias(Literal(None, a.dtype), a.name))
        else:
            raise UnresolvedColumnError(
                f"Cannot resolve column name '{a.name}' among ({', '.join(c.name for c in right.output)}); pass "
                "allowMissingColumns=True to fill the columns one side lacks with nulls"
            )
    extra = [a for a in right.output if a.name.lower() not in mine]
    if allow_missing_columns and extra:
        left = analyze(Project(left, tuple(left.output) + tuple(Alias(Literal(None, a.dtype), a.name) for a in extra)))
    return union(left, analyze(Project(right, tuple(matched + extra))))


def intersect(left: LogicalPlan, right: LogicalPlan, is_all: bool = False) -> LogicalPlan:
    """INTERSECT (distinct rows of both) or INTERSECT ALL (a row found m and n times, min(m, n) times)."""
    return _semi_join_set_operation("INTERSECT ALL" if is_all else "INTERSECT", left, right, "left_semi", is_all)


def except_(left: LogicalPlan, right: LogicalPlan, is_all: bool = False) -> LogicalPlan:
    """EXCEPT (distinct rows of `left` not in `right`) or EXCEPT ALL (m and n copies leave max(m - n, 0))."""
    return _semi_join_set_operation("EXCEPT ALL" if is_all else "EXCEPT", left, right, "left_anti", is_all)


def distinct(plan: LogicalPlan) -> LogicalPlan:
    """Distinct rows of `plan`: an aggregate grouped by every column, as Spark plans DISTINCT."""
    out = plan.output
    return analyze(Aggregate(plan, tuple(out), tuple(out)))


def _semi_join_set_operation(operation: str, left: LogicalPlan, right: LogicalPlan, how: str, is_all: bool
                             ) -> LogicalPlan:
    """INTERSECT / EXCEPT as a left semi / anti join on null-safe equality of every column.

    The distinct forms then drop duplicates, as Spark plans them. The ALL forms keep multisets:
    each side numbers the copies of a row (1, 2, ...), and the join also matches that number, so
    INTERSECT ALL keeps min(m, n) copies of a row found m and n times, EXCEPT ALL max(m - n, 0).
    """
    left, right = (analyze(p) for p in widen_set_operation(operation, (left, right)))
    if {a.expr_id for a in left.output} & {a.expr_id for a in right.output}:
        right = analyze(fresh_ids(right))
    pairs = [Comparison("<=>", lc, rc) for lc, rc in zip(left.output, right.output)]
    if not is_all:
        return distinct(analyze(Join(left, right, how, coerce(conjoin(pairs)))))
    columns = left.output
    left, right = _numbered_copies(left), _numbered_copies(right)
    pairs.append(Comparison("=", left.output[-1], right.output[-1]))
    return analyze(Project(analyze(Join(left, right, how, coerce(conjoin(pairs)))), columns))


def _numbered_copies(plan: LogicalPlan) -> LogicalPlan:
    """`plan` and a last column numbering the copies of each distinct row, from 1."""
    orders = tuple(SortOrder(a) for a in plan.output)
    number = Alias(WindowExpression(WindowFunction("row_number"), plan.output, orders), "__quiver_copy")
    return analyze(Window(plan, (number,), plan.output, orders))


# ---------------------------------------------------------------- aggregates


def aggregate(child: LogicalPlan, grouping: Sequence[Expr], items: Sequence[Expr],
              grouping_sets: Sequence[Sequence[int]] | None = None) -> LogicalPlan:
    """`items` over the groups of `child` by `grouping`; with `grouping_sets` (each a list of positions in
    `grouping`: ROLLUP, CUBE, GROUPING SETS), once per set, the keys outside a set null."""
    if grouping_sets is not None:
        return grouping_sets_aggregate(child, grouping, grouping_sets, items)
    return analyze(Aggregate(child, tuple(grouping), tuple(items)))


def pivoted_aggregates(aggregates: Sequence[Expr], column: Expr, values: Sequence[object]) -> list[Expr]:
    """Each aggregate once per pivot value, over the rows holding that value; named as Spark names them.

    `df.groupBy(k).pivot(column, values).agg(...)` and SQL's PIVOT group by their keys and compute these.
    """
    out: list[Expr] = []
    for v in values:
        cond = Comparison("<=>", column, Literal.of(v))
        for agg in aggregates:
            inner = agg.child if isinstance(agg, Alias) else agg
            label = agg.name if isinstance(agg, Alias) else inner.sql()

            def only_matching(e: Expr, cond: Expr = cond) -> Expr:
                if not isinstance(e, AggregateFunction):
                    return e
                args = e.args or (Literal(1, T.IntegerType()),)
                return replace(e, args=tuple(CaseWhen((cond,), (a,), None) for a in args))

            rewritten = transform_expr(inner, only_matching)
            if _counts(inner):
                # Spark aggregates per (group, value) and then pivots: a value with no rows in a group is null,
                # also for count, which would otherwise say 0
                matched = AggregateFunction("count", (CaseWhen((cond,), (Literal(1, T.IntegerType()),), None),))
                rewritten = CaseWhen((Comparison(">", matched, Literal(0, T.LongType())),), (rewritten,), None)
            prefix = "null" if v is None else str(v)
            out.append(Alias(rewritten, prefix if len(aggregates) == 1 else f"{prefix}_{label}"))
    return out


# Aggregates that give a value, not null, over no rows.
_NON_NULL_ON_EMPTY = {"count", "count_distinct", "approx_count_distinct", "count_if", "collect_list", "collect_set"}


def _counts(e: Expr) -> bool:
    """Whether `e` holds an aggregate that is not null over no rows."""
    return any(isinstance(x, AggregateFunction) and x.name in _NON_NULL_ON_EMPTY for x in e.walk())


# ---------------------------------------------------------------- order and row counts


def sort(child: LogicalPlan, orders: Sequence[Expr], is_global: bool = True) -> LogicalPlan:
    """`child` sorted by `orders` (a key that is not a SortOrder sorts ascending, nulls first), over all rows
    (ORDER BY, `orderBy`) or within each partition (SORT BY, `sortWithinPartitions`)."""
    keys = tuple(o if isinstance(o, SortOrder) else SortOrder(o) for o in orders)
    return analyze(Sort(child, keys, is_global))


def limit(child: LogicalPlan, n: int) -> LogicalPlan:
    """The first `n` rows of `child` (LIMIT, `df.limit`)."""
    return analyze(Limit(child, _row_count(n, "limit")))


def offset(child: LogicalPlan, n: int) -> LogicalPlan:
    """Every row of `child` but the first `n` (OFFSET, `df.offset`)."""
    return analyze(Offset(child, _row_count(n, "offset")))


def _row_count(n: int, clause: str) -> int:
    if n < 0:
        raise AnalysisException(
            f"The limit like expression \"{n}\" is invalid. The {clause} expression must be equal to or greater "
            f"than 0, but got {n}."
        )
    return int(n)


# ---------------------------------------------------------------- struct values

def field_name(e: Expr, position: int) -> str:
    """The field name Spark gives a struct(...) argument: its alias or column name, else `col<n>`."""
    if isinstance(e, Alias):
        return e.name
    if isinstance(e, (AttributeRef,)):
        return e.name
    if isinstance(e, UnresolvedColumn):
        return e.parts[-1]
    if isinstance(e, ScalarFunction) and e.name == "get_field" and isinstance(e.args[1], Literal):
        return str(e.args[1].value)
    return f"col{position + 1}"


def struct_call(values: tuple[Expr, ...]) -> ScalarFunction:
    """struct(a, b AS x, ...) as the pairs (name, value) the `struct` kernel takes."""
    args: list[Expr] = []
    for i, v in enumerate(values):
        args.append(Literal(field_name(v, i), T.StringType()))
        args.append(v.child if isinstance(v, Alias) else v)
    return ScalarFunction("struct", tuple(args))


def zip_call(values: tuple[Expr, ...]) -> ScalarFunction:
    """arrays_zip(a, b): the struct field names (the columns' names, else their positions) lead."""
    names = [Literal(v.name if isinstance(v, (Alias, AttributeRef)) else
                     v.parts[-1] if isinstance(v, UnresolvedColumn) else str(i), T.StringType())
             for i, v in enumerate(values)]
    return ScalarFunction("arrays_zip", tuple(names) + tuple(v.child if isinstance(v, Alias) else v for v in values))


# ---------------------------------------------------------------- ranges


def range_relation(start: int, end: int | None = None, step: int = 1, num_partitions: int | None = None
                   ) -> RangeRelation:
    """A single bigint column `id` from `start` (inclusive) to `end` (exclusive): `spark.range` and SQL's
    `range()` table function; with one bound, from 0 to it."""
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ConfigurationError("range() step must not be 0")
    if num_partitions is not None and num_partitions < 1:
        raise ConfigurationError(f"range() numPartitions must be at least 1, got {num_partitions}")
    return RangeRelation(int(start), int(end), int(step), num_partitions,
                         AttributeRef("id", T.LongType(), False, new_expr_id()))


# ---------------------------------------------------------------- windows

# Frame bounds, as offsets from the current row (PySpark's Window.unboundedPreceding, ...).
UNBOUNDED_PRECEDING = UNBOUNDED
UNBOUNDED_FOLLOWING = -UNBOUNDED - 1
CURRENT_ROW = 0

Frame = tuple[str, int, int]


@dataclass(frozen=True)
class WindowDefinition:
    """What OVER (...) says: the partitioning, ordering and frame of a window, as the API's WindowSpec and
    SQL's window clause both write it."""

    partition_by: tuple[Expr, ...] = ()
    order_by: tuple[SortOrder, ...] = ()
    frame: Frame | None = None

# The only frame each ranking function accepts, as Spark requires (cume_dist counts peers: RANGE).
_RANKING_FRAME = ("rows", UNBOUNDED_PRECEDING, CURRENT_ROW)
_CUME_DIST_FRAME = ("range", UNBOUNDED_PRECEDING, CURRENT_ROW)


def window_expression(function: Expr, partition_by: tuple[Expr, ...] = (), order_by: tuple[SortOrder, ...] = (),
                      frame: Frame | None = None) -> WindowExpression:
    """`function OVER (PARTITION BY .. ORDER BY .. frame)`: an aggregate or a window function evaluated per row
    over its window (`F.rank().over(spec)`, `rank() OVER (...)`), with Spark's checks on both.

    A ranking function's only valid frame is its default one, so the expression keeps none.
    """
    if frame is not None:
        _check_frame(frame)
    if not isinstance(function, (AggregateFunction, WindowFunction)):
        raise AnalysisException(
            f"{function.sql()} is not a window function and cannot be used with OVER; use a window function "
            f"({', '.join(WINDOW_FUNCTIONS)}) or an aggregate such as sum or avg"
        )
    if isinstance(function, AggregateFunction) and function.distinct:
        raise AnalysisException(f"DISTINCT aggregates are not supported over a window in Spark: {function.sql()}")
    if isinstance(function, WindowFunction) and function.name not in FRAMED_WINDOW_FUNCTIONS:
        if not order_by:
            raise AnalysisException(
                f"window function {function.name} requires the window to be ordered: add ORDER BY to its window "
                f"(Window.orderBy(...) in the DataFrame API), e.g. {function.sql()} OVER (PARTITION BY k ORDER BY x)"
            )
        if frame is not None and function.name in ("lag", "lead"):
            raise AnalysisException(f"cannot specify a window frame for {function.name}(): its frame is always the "
                                    "one row at the offset")
        required = _CUME_DIST_FRAME if function.name == "cume_dist" else _RANKING_FRAME
        if frame is not None and frame != required:
            raise AnalysisException(f"the window frame of {function.name}() must be {frame_text(required)}, got "
                                    f"{frame_text(frame)}; leave the frame out to get it")
        frame = None
    return WindowExpression(function, partition_by, order_by, frame)


def _check_frame(frame: Frame) -> None:
    _, start, end = frame
    if start == UNBOUNDED_FOLLOWING or end == UNBOUNDED_PRECEDING:
        raise AnalysisException(f"window frame {frame_text(frame)} is invalid: UNBOUNDED FOLLOWING can only end a "
                                "frame and UNBOUNDED PRECEDING only start one")
    if start > end:
        raise AnalysisException(f"the lower bound of a window frame must be less than or equal to the upper bound: "
                                f"{frame_text(frame)}")


def frame_text(frame: Frame) -> str:
    """`ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW` for ("rows", UNBOUNDED_PRECEDING, 0)."""
    def bound(v: int) -> str:
        if v == UNBOUNDED_PRECEDING:
            return "UNBOUNDED PRECEDING"
        if v == UNBOUNDED_FOLLOWING:
            return "UNBOUNDED FOLLOWING"
        if v == CURRENT_ROW:
            return "CURRENT ROW"
        return f"{-v} PRECEDING" if v < 0 else f"{v} FOLLOWING"
    kind, start, end = frame
    return f"{kind.upper()} BETWEEN {bound(start)} AND {bound(end)}"


__all__ = [
    "join_type", "join", "using_join", "union", "union_by_name", "intersect", "except_", "distinct",
    "aggregate", "pivoted_aggregates", "sort", "limit", "offset", "field_name", "struct_call", "zip_call",
    "range_relation", "UNBOUNDED_PRECEDING", "UNBOUNDED_FOLLOWING", "CURRENT_ROW", "Frame", "WindowDefinition",
    "window_expression", "frame_text",
]
