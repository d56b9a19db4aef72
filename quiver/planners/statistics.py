"""Row-count, size and per-column estimates of logical plans, for join order, broadcast and placement.

Leaves know what their source knows (Parquet footers: row counts and each column's min, max
and nulls; in-memory tables: row counts and each numeric or date column's min and max).
Above them, filters scale rows by a selectivity read from those ranges (a date range
covering a seventh of the column's span keeps a seventh of the rows), and an equi-join keeps
|L|·|R| / max(distinct keys of either side). A column's distinct count is guessed from its
integer span (TPC-H keys are dense) capped by the rows.
-1 means unknown, which never broadcasts.
"""
from __future__ import annotations

import datetime as dt
import decimal
import weakref
from dataclasses import dataclass, field, replace

import pyarrow as pa
import pyarrow.compute as pc

from quiver.engine.core import plan as L
from quiver.engine.core import types as T
from quiver.engine.core.expressions import (
    Alias,
    And,
    AttributeRef,
    BinaryArithmetic,
    Cast,
    Comparison,
    Expr,
    In,
    IsNotNull,
    IsNull,
    Literal,
    Not,
    Or,
    ScalarFunction,
    split_conjuncts,
)
from quiver.engine.core.types import schema_from_arrow

FILTER_SELECTIVITY = 0.5
EQUALITY_SELECTIVITY = 0.1
RANGE_SELECTIVITY = 1 / 3
LIKE_SELECTIVITY = 0.1


@dataclass(frozen=True)
class ColumnEstimate:
    """A column's estimated distinct count and numeric range (None where unknown)."""

    ndv: float | None = None
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Estimate:
    rows: int
    size_bytes: int
    columns: dict[int, ColumnEstimate] = field(default_factory=dict)


def row_width(attrs) -> int:
    """Bytes per row for a list of attributes, by type (strings guessed at 20 bytes)."""
    width = 0
    for a in attrs:
        t = a.dtype
        if isinstance(t, (T.LongType, T.DoubleType, T.TimestampType)):
            width += 8
        elif isinstance(t, (T.IntegerType, T.FloatType, T.DateType)):
            width += 4
        elif isinstance(t, (T.ShortType,)):
            width += 2
        elif isinstance(t, (T.ByteType, T.BooleanType)):
            width += 1
        elif isinstance(t, T.DecimalType):
            width += 16
        else:
            width += 20
    return max(width, 1)


def estimate(plan: L.LogicalPlan) -> Estimate:
    """Rows, bytes and column estimates `plan` is expected to produce; rows -1 where nothing is known.

    Plan nodes are immutable, so each node's estimate is worked out once and kept on it: join
    reordering and the cost-based rules ask for the same subtrees' estimates many times.
    """
    cached = plan.estimate_cache
    if cached is None:
        cached = plan.memoize("estimate_cache", _estimate(plan))
    return cached


def _estimate(plan: L.LogicalPlan) -> Estimate:
    if isinstance(plan, L.LocalRelation):
        return Estimate(plan.table.num_rows, plan.table.nbytes, _local_columns(plan))
    if isinstance(plan, L.RangeRelation):
        rows = L.plan_stats_rows(plan) or 0
        low, high = sorted((plan.start, plan.start + (rows - 1) * plan.step)) if rows else (plan.start, plan.start)
        return Estimate(rows, rows * 8, {plan.attribute.expr_id: ColumnEstimate(rows, low, high)})
    if isinstance(plan, L.SourceScan):
        return _scan(plan)
    if isinstance(plan, L.InMemoryRelation):
        return Estimate(plan.rows, plan.size_bytes)
    kids = [estimate(c) for c in plan.children()]
    if isinstance(plan, L.Filter):
        k = kids[0]
        return _scaled(k, selectivity(plan.condition, k), plan.output)
    if isinstance(plan, L.Project):
        k = kids[0]
        columns = {}
        for p in plan.projections:
            column = _named_column(p, k)
            if column is not None:
                columns[p.expr_id] = column
        if k.rows >= 0:
            return Estimate(k.rows, k.rows * row_width(plan.output), columns)
        return replace(k, columns=columns)
    if isinstance(plan, L.SubqueryAlias):
        return kids[0]
    if isinstance(plan, L.Aggregate):
        return _aggregate(plan, kids[0])
    if isinstance(plan, L.Offset):
        k = kids[0]
        rows = k.rows if k.rows < 0 else max(k.rows - plan.n, 0)
        return Estimate(rows, rows * row_width(plan.output), k.columns)
    if isinstance(plan, L.Limit):
        k = kids[0]
        rows = plan.n if k.rows < 0 else min(plan.n, k.rows)
        return Estimate(rows, rows * row_width(plan.output), k.columns)
    if isinstance(plan, L.Join):
        return _join(plan, kids[0], kids[1])
    if isinstance(plan, L.Union):
        if any(k.rows < 0 for k in kids):
            return Estimate(-1, -1)
        return Estimate(sum(k.rows for k in kids), sum(k.size_bytes for k in kids))
    return kids[0] if kids else Estimate(-1, -1)


def _scan(plan: L.SourceScan) -> Estimate:
    stats = plan.source.statistics()
    if stats.num_rows is None:
        if stats.size_bytes is not None:
            full = row_width([*_source_attrs(plan)]) or 1
            return Estimate(-1, int(stats.size_bytes * row_width(plan.output) / full))
        return Estimate(-1, -1)
    rows = stats.num_rows
    columns = {}
    for a in plan.output:
        cs = getattr(stats, "columns", {}).get(a.name)
        if cs is None:
            continue
        low, high = _number(cs.min), _number(cs.max)
        ndv = cs.distinct_count
        if ndv is None and low is not None and high is not None and _is_discrete(a.dtype):
            ndv = min(rows, high - low + 1)
        columns[a.expr_id] = ColumnEstimate(ndv, low, high)
    return Estimate(rows, rows * row_width(plan.output), columns)


_LOCAL_COLUMNS: weakref.WeakKeyDictionary[L.LocalRelation, dict[int, ColumnEstimate]] = weakref.WeakKeyDictionary()


def _local_columns(plan: L.LocalRelation) -> dict[int, ColumnEstimate]:
    """Ranges of an in-memory table's numeric and date columns, read once per relation, as a footer would give them.

    Without them every column of a table counts as a key, so a fact table's foreign key
    (a few distinct values) would make its join look as small as the dimension.
    """
    columns = _LOCAL_COLUMNS.get(plan)
    if columns is not None:
        return columns
    columns = {}
    rows = plan.table.num_rows
    for a, values in zip(plan.attributes, plan.table.columns):
        if not _has_range(a.dtype) or values.null_count == len(values):
            continue
        try:
            bounds = pc.min_max(values)
        except pa.ArrowNotImplementedError:
            continue
        low, high = _number(bounds["min"].as_py()), _number(bounds["max"].as_py())
        if low is None or high is None:
            continue
        ndv = min(rows, high - low + 1) if _is_discrete(a.dtype) else None
        columns[a.expr_id] = ColumnEstimate(ndv, low, high)
    _LOCAL_COLUMNS[plan] = columns
    return columns


def _has_range(t: T.DataType) -> bool:
    return _is_discrete(t) or isinstance(t, (T.DoubleType, T.FloatType, T.DecimalType, T.TimestampType))


def _is_discrete(t: T.DataType) -> bool:
    return isinstance(t, (T.IntegerType, T.LongType, T.ShortType, T.ByteType, T.DateType))


def _number(v) -> float | None:
    """A statistic or literal as a number on one axis: dates as day numbers, decimals as floats."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, dt.datetime):
        return v.timestamp() / 86400
    if isinstance(v, dt.date):
        return float(v.toordinal() - 719163)
    if isinstance(v, (int, float, decimal.Decimal)):
        return float(v)
    return None


def _scaled(k: Estimate, fraction: float, output) -> Estimate:
    if k.rows < 0:
        return Estimate(-1, _scale(k.size_bytes, fraction), k.columns)
    rows = max(1, int(k.rows * fraction)) if k.rows else 0
    columns = {i: replace(c, ndv=min(c.ndv, rows) if c.ndv is not None else None) for i, c in k.columns.items()}
    return Estimate(rows, rows * row_width(output), columns)


def _aggregate(plan: L.Aggregate, k: Estimate) -> Estimate:
    if not plan.grouping:
        return Estimate(1, row_width(plan.output))
    if k.rows < 0:
        return Estimate(-1, k.size_bytes)
    groups = 1.0
    for g in plan.grouping:
        c = _named_column(g, k)
        groups *= c.ndv if c is not None and c.ndv else max(k.rows, 1) ** 0.5
    rows = int(min(k.rows, groups))
    columns = {}
    for e, a in zip(plan.aggregates, plan.output):
        c = _named_column(e, k)
        if c is not None:
            columns[a.expr_id] = c
    return Estimate(rows, rows * row_width(plan.output), columns)


def _named_column(e: Expr, k: Estimate) -> ColumnEstimate | None:
    """The estimate of a column, also under an alias (`groupBy(col("k").alias("g"))` groups as `k` does)."""
    source = e.child if isinstance(e, Alias) else e
    modulus = _int_literal(source.right) if isinstance(source, BinaryArithmetic) and source.op == "%" else None
    if modulus:
        # x % m takes at most |m| values (2|m| - 1 with negative x), and at most as many as x does
        inner = _named_column(source.left, k)
        bound = abs(modulus) * (2 if inner is None or inner.low is None or inner.low < 0 else 1)
        ndv = min(bound, inner.ndv) if inner is not None and inner.ndv else min(bound, max(k.rows, 1))
        return ColumnEstimate(ndv)
    return k.columns.get(source.expr_id) if isinstance(source, AttributeRef) else None


def _int_literal(e: Expr) -> int | None:
    """The value of an integer constant (also under a cast to an integral type), else None."""
    if isinstance(e, Cast) and isinstance(e.to, T.IntegralType):
        e = e.child
    if isinstance(e, Literal) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return e.value
    return None


def equi_keys(condition: Expr | None, left_ids: set[int],
              right_ids: set[int]) -> list[tuple[AttributeRef, AttributeRef]]:
    """The (left column, right column) equality pairs of a join condition."""
    pairs = []
    for c in split_conjuncts(condition):
        if isinstance(c, Comparison) and c.op in ("=", "<=>") and isinstance(c.left, AttributeRef) \
                and isinstance(c.right, AttributeRef):
            if c.left.expr_id in left_ids and c.right.expr_id in right_ids:
                pairs.append((c.left, c.right))
            elif c.right.expr_id in left_ids and c.left.expr_id in right_ids:
                pairs.append((c.right, c.left))
    return pairs


def join_rows(a: Estimate, b: Estimate, pairs: list[tuple[AttributeRef, AttributeRef]]) -> float:
    """|A ⋈ B| = |A|·|B| / max(distinct keys of A, of B); composite keys count at most one per row."""
    if not pairs:
        return float(a.rows) * b.rows
    left_ndv = right_ndv = 1.0
    for lk, rk in pairs:
        left_ndv *= _ndv(a, lk)
        right_ndv *= _ndv(b, rk)
    left_ndv, right_ndv = min(left_ndv, max(a.rows, 1)), min(right_ndv, max(b.rows, 1))
    return float(a.rows) * b.rows / max(left_ndv, right_ndv, 1.0)


def _ndv(e: Estimate, a: AttributeRef) -> float:
    c = e.columns.get(a.expr_id)
    return c.ndv if c is not None and c.ndv else max(e.rows, 1)


def _join(plan: L.Join, a: Estimate, b: Estimate) -> Estimate:
    if plan.how == "left_semi":
        return _semi_join(plan, a, b)
    if plan.how == "left_anti":
        return a
    if a.rows < 0 or b.rows < 0:
        return Estimate(-1, -1)
    left_ids = {x.expr_id for x in plan.left.output}
    right_ids = {x.expr_id for x in plan.right.output}
    if plan.how == "cross" or plan.condition is None:
        rows = float(a.rows) * b.rows
    else:
        rows = join_rows(a, b, equi_keys(plan.condition, left_ids, right_ids))
        if plan.how in ("left", "full"):
            rows = max(rows, a.rows)
        if plan.how in ("right", "full"):
            rows = max(rows, b.rows)
    rows_int = int(min(rows, 1 << 62))
    columns = {i: replace(c, ndv=min(c.ndv, rows_int) if c.ndv is not None else None)
               for i, c in {**a.columns, **b.columns}.items()}
    return Estimate(rows_int, rows_int * row_width(plan.output), columns)


def _semi_join(plan: L.Join, a: Estimate, b: Estimate) -> Estimate:
    """Left rows whose key the right side holds: with the right's keys drawn from the left's
    (containment), a share ndv(right key) / ndv(left key) of them, the loosest over the key pairs."""
    if a.rows < 0 or b.rows < 0 or plan.condition is None:
        return a
    pairs = equi_keys(plan.condition, {x.expr_id for x in plan.left.output}, {x.expr_id for x in plan.right.output})
    if not pairs:
        return a
    kept = 0.0 if b.rows == 0 else max(min(1.0, _ndv(b, r) / _ndv(a, left)) for left, r in pairs)
    return _scaled(a, kept, plan.output)


# ---------------------------------------------------------------- selectivity


def selectivity(e: Expr, k: Estimate) -> float:
    """The fraction of rows a condition keeps, from column ranges and distinct counts where known."""
    if isinstance(e, And):
        return _conjunction(split_conjuncts(e), k)
    if isinstance(e, Or):
        a, b = selectivity(e.left, k), selectivity(e.right, k)
        return min(1.0, a + b - a * b)
    if isinstance(e, Not):
        return max(0.0, 1.0 - selectivity(e.child, k))
    if isinstance(e, IsNotNull):
        return 1.0
    if isinstance(e, IsNull):
        return 0.05
    if isinstance(e, In):
        c = _column(e.child, k)
        if c is not None and c.ndv:
            return min(1.0, len(e.values) / c.ndv)
        return min(1.0, EQUALITY_SELECTIVITY * len(e.values))
    if isinstance(e, Comparison):
        return _comparison(e, k)
    if isinstance(e, ScalarFunction) and e.name in ("like", "rlike", "startswith", "endswith", "contains"):
        return LIKE_SELECTIVITY
    if isinstance(e, Literal):
        return 1.0 if e.value is True else 0.0
    return FILTER_SELECTIVITY


def _conjunction(conditions: list[Expr], k: Estimate) -> float:
    """Independent conditions multiply; range bounds on one column intersect into one interval first,
    so `d >= x AND d < y` keeps the rows between x and y rather than the product of two halves."""
    fraction = 1.0
    intervals: dict[int, tuple[ColumnEstimate, float, float]] = {}
    for c in conditions:
        bound = _range_bound(c, k)
        if bound is None:
            fraction *= selectivity(c, k)
            continue
        expr_id, col, low, high = bound
        _, known_low, known_high = intervals.get(expr_id, (col, col.low, col.high))
        intervals[expr_id] = (col, max(low, known_low), min(high, known_high))
    for col, low, high in intervals.values():
        fraction *= _kept_fraction(col, low, high, k)
    return fraction


def _kept_fraction(col: ColumnEstimate, low: float, high: float, k: Estimate) -> float:
    """The share of `col`'s known range that [low, high] covers, at least one row's worth."""
    return max(max(high - low, 0.0) / (col.high - col.low), 1.0 / max(k.rows, 1))


def _range_bound(e: Expr, k: Estimate) -> tuple[int, ColumnEstimate, float, float] | None:
    """(column id, column, low, high) for `column <op> literal` with a known value range, else None."""
    if not isinstance(e, Comparison) or e.op not in ("<", "<=", ">", ">="):
        return None
    op, column, value = e.op, e.left, _literal(e.right)
    if _column(column, k) is None:
        op, column, value = _FLIPPED[e.op], e.right, _literal(e.left)
    col = _column(column, k)
    if col is None or value is None or col.low is None or col.high is None or col.high <= col.low:
        return None
    while isinstance(column, Cast):
        column = column.child
    if op in ("<", "<="):
        return column.expr_id, col, col.low, min(value, col.high)
    return column.expr_id, col, max(value, col.low), col.high


def _column(e: Expr, k: Estimate) -> ColumnEstimate | None:
    while isinstance(e, Cast):
        e = e.child
    return k.columns.get(e.expr_id) if isinstance(e, AttributeRef) else None


def _literal(e: Expr) -> float | None:
    while isinstance(e, Cast):
        e = e.child
    return _number(e.value) if isinstance(e, Literal) else None


_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "<=>": "<=>"}


def _comparison(e: Comparison, k: Estimate) -> float:
    op, col, value = e.op, _column(e.left, k), _literal(e.right)
    if col is None and value is None:
        op, col, value = _FLIPPED.get(e.op, e.op), _column(e.right, k), _literal(e.left)
    if col is None:
        return EQUALITY_SELECTIVITY if op in ("=", "<=>") else RANGE_SELECTIVITY
    if op in ("=", "<=>"):
        return 1.0 / col.ndv if col.ndv else EQUALITY_SELECTIVITY
    bound = _range_bound(e, k)
    if bound is None:
        return RANGE_SELECTIVITY
    _, col, low, high = bound
    return _kept_fraction(col, low, high, k)


def _scale(v: int, f: float) -> int:
    return v if v < 0 else int(v * f)


def _source_attrs(plan: L.SourceScan):
    return [_Typed(f.dataType) for f in schema_from_arrow(plan.source.schema()).fields]


@dataclass(frozen=True)
class _Typed:
    dtype: T.DataType


def never_null(plan: L.LogicalPlan, attr: AttributeRef) -> bool:
    """Whether `attr`, a column of `plan`'s output, is null in no row: traced down to a source column
    whose statistics count no nulls, through nodes that pass it on without null-extending it
    (filters, sorts, limits, projections of the column, inner and semi joins, the preserved side of
    an outer join). Attributes stay nullable, as Spark's file sources make them; this lets a rule
    drop work that nulls would need, such as NOT IN's null checks."""
    if not attr.nullable:
        return True
    if isinstance(plan, L.SourceScan):
        if all(a.expr_id != attr.expr_id for a in plan.attributes):
            return False
        column = getattr(plan.source.statistics(), "columns", {}).get(attr.name)
        return column is not None and column.null_count == 0
    if isinstance(plan, (L.Filter, L.Sort, L.Limit, L.Offset, L.SubqueryAlias, L.Repartition)):
        return never_null(plan.child, attr)
    if isinstance(plan, L.Project):
        for p in plan.projections:
            if p.expr_id == attr.expr_id:
                named = p.child if isinstance(p, Alias) else p
                return isinstance(named, AttributeRef) and never_null(plan.child, named)
        return False
    if isinstance(plan, L.Join):
        sides = {"inner": "lr", "cross": "lr", "left_semi": "l", "left_anti": "l", "left": "l", "right": "r"}
        for side, child in (("l", plan.left), ("r", plan.right)):
            if side in sides.get(plan.how, "") and any(a.expr_id == attr.expr_id for a in child.output):
                return never_null(child, attr)
    return False

