"""Size and row-count estimates of logical plans, for broadcast and placement decisions.

Estimates come from what leaves know (in-memory tables, Parquet metadata, file sizes) and
simple selectivity guesses above them; -1 means unknown, which never broadcasts.
"""
from __future__ import annotations

from dataclasses import dataclass

from quiver.engine import plan as L
from quiver.engine import types as T

FILTER_SELECTIVITY = 0.5


@dataclass(frozen=True)
class Estimate:
    rows: int
    size_bytes: int


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
    """Rows and bytes `plan` is expected to produce; (-1, -1) where nothing is known."""
    if isinstance(plan, L.LocalRelation):
        return Estimate(plan.table.num_rows, plan.table.nbytes)
    if isinstance(plan, L.RangeRelation):
        rows = L.plan_stats_rows(plan) or 0
        return Estimate(rows, rows * 8)
    if isinstance(plan, L.SourceScan):
        stats = plan.source.statistics()
        if stats.num_rows is not None:
            rows = stats.num_rows
            return Estimate(rows, rows * row_width(plan.output))
        if stats.size_bytes is not None:
            full = row_width([*_source_attrs(plan)]) or 1
            return Estimate(-1, int(stats.size_bytes * row_width(plan.output) / full))
        return Estimate(-1, -1)
    kids = [estimate(c) for c in plan.children()]
    if isinstance(plan, L.Filter):
        k = kids[0]
        return Estimate(_scale(k.rows, FILTER_SELECTIVITY), _scale(k.size_bytes, FILTER_SELECTIVITY))
    if isinstance(plan, L.Project):
        k = kids[0]
        if k.rows >= 0:
            return Estimate(k.rows, k.rows * row_width(plan.output))
        return k
    if isinstance(plan, L.Aggregate):
        k = kids[0]
        if not plan.grouping:
            return Estimate(1, row_width(plan.output))
        return Estimate(k.rows, k.rows * row_width(plan.output) if k.rows >= 0 else k.size_bytes)
    if isinstance(plan, L.Limit):
        k = kids[0]
        rows = plan.n if k.rows < 0 else min(plan.n, k.rows)
        return Estimate(rows, rows * row_width(plan.output))
    if isinstance(plan, L.Join):
        a, b = kids
        if plan.how in ("left_semi", "left_anti"):
            return a
        if a.rows < 0 or b.rows < 0:
            return Estimate(-1, -1)
        rows = a.rows * b.rows if plan.how == "cross" or plan.condition is None else max(a.rows, b.rows)
        return Estimate(rows, rows * row_width(plan.output))
    if isinstance(plan, L.Union):
        if any(k.rows < 0 for k in kids):
            return Estimate(-1, -1)
        return Estimate(sum(k.rows for k in kids), sum(k.size_bytes for k in kids))
    return kids[0] if kids else Estimate(-1, -1)


def _scale(v: int, f: float) -> int:
    return v if v < 0 else int(v * f)


def _source_attrs(plan: L.SourceScan):
    from quiver.engine.types import schema_from_arrow

    return [_Typed(f.dataType) for f in schema_from_arrow(plan.source.schema()).fields]


@dataclass(frozen=True)
class _Typed:
    dtype: T.DataType
