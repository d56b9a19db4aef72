"""`GroupedData`: what `df.groupBy(...)` returns; `agg` and the shortcut aggregates."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from quiver.engine.core import plan as L
from quiver.engine.api.column import Column
from quiver.engine.core.errors import AnalysisException
from dataclasses import replace

from quiver.engine.core import types as T
from quiver.engine.core.expressions import (
    AggregateFunction, Alias, CaseWhen, Comparison, Expr, Literal, UnresolvedColumn, transform_expr,
)
from quiver.engine.api.column import to_expr
from quiver.engine.analysis.grouping_sets import grouping_sets_aggregate

if TYPE_CHECKING:
    from quiver.engine.api.dataframe import DataFrame

_DICT_FUNCTIONS = {
    "sum": "sum", "avg": "avg", "mean": "avg", "min": "min", "max": "max", "count": "count",
    "first": "first", "last": "last", "stddev": "stddev", "collect_list": "collect_list",
    "collect_set": "collect_set", "variance": "variance",
}


class GroupedData:
    """Grouping keys waiting for aggregates."""

    def __init__(self, df: "DataFrame", keys: list[Expr], pivot: tuple[Expr, list] | None = None):
        self._df = df
        self._keys = keys
        self._pivot = pivot

    def pivot(self, pivot_col: Any, values: list | None = None) -> "GroupedData":
        """One output column per value of `pivot_col` (found with an extra job when not given)."""
        if values is None:
            name = pivot_col if isinstance(pivot_col, str) else None
            distinct = self._df.select(pivot_col).distinct()
            values = sorted((r[0] for r in distinct.collect()), key=lambda v: (v is not None, v))
            if name is None:
                values = list(values)
        return GroupedData(self._df, self._keys, (to_expr(pivot_col), list(values)))

    def agg(self, *exprs: Any) -> "DataFrame":
        if len(exprs) == 1 and isinstance(exprs[0], dict):
            aggs = []
            for col, fn in exprs[0].items():
                name = _DICT_FUNCTIONS.get(fn.lower())
                if name is None:
                    raise AnalysisException(
                        f"unknown aggregate '{fn}' for column '{col}'; valid: {', '.join(sorted(_DICT_FUNCTIONS))}"
                    )
                arg: tuple[Expr, ...] = () if (col == "*" and name == "count") else (UnresolvedColumn.parse(col),)
                aggs.append(AggregateFunction(name, arg))
        else:
            if not exprs:
                raise AnalysisException("agg() needs at least one aggregate expression")
            aggs = []
            for e in exprs:
                if not isinstance(e, Column):
                    raise TypeError(f"agg() takes Columns or one dict, got {type(e).__name__}")
                aggs.append(e.expr)
        return self._aggregate(aggs)

    def _aggregate(self, aggs: list[Expr]) -> "DataFrame":
        keys = tuple(self._keys)
        if self._pivot is not None:
            aggs = pivoted_aggregates(aggs, *self._pivot)
        sets = getattr(self, "_grouping_sets", None)
        if sets is not None:  # rollup, cube, groupingSets
            return self._df._with(grouping_sets_aggregate(self._df._plan, keys, sets, keys + tuple(aggs)))
        return self._df._with(L.Aggregate(self._df._plan, keys, keys + tuple(aggs)))

    def count(self) -> "DataFrame":
        return self._aggregate([Alias(AggregateFunction("count", ()), "count")])

    def _numeric(self, fn: str, cols: tuple[str, ...]) -> "DataFrame":
        if not cols:
            grouped = {id(k) for k in self._keys}
            cols = tuple(a.name for a in self._df._plan.output
                         if isinstance(a.dtype, T.NumericType) and id(a) not in grouped)
        return self._aggregate([AggregateFunction(fn, (UnresolvedColumn.parse(c),)) for c in cols])

    def sum(self, *cols: str) -> "DataFrame":
        return self._numeric("sum", cols)

    def avg(self, *cols: str) -> "DataFrame":
        return self._numeric("avg", cols)

    mean = avg

    def min(self, *cols: str) -> "DataFrame":
        return self._numeric("min", cols)

    def max(self, *cols: str) -> "DataFrame":
        return self._numeric("max", cols)


def pivoted_aggregates(aggs: list[Expr], column: Expr, values: list) -> list[Expr]:
    """Each aggregate once per pivot value, over the rows holding that value; named as Spark names them."""
    out: list[Expr] = []
    for v in values:
        cond = Comparison("<=>", column, Literal.of(v))
        for agg in aggs:
            inner = agg.child if isinstance(agg, Alias) else agg
            label = agg.name if isinstance(agg, Alias) else inner.sql()

            def only_matching(e: Expr) -> Expr:
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
            out.append(Alias(rewritten, prefix if len(aggs) == 1 else f"{prefix}_{label}"))
    return out


# Aggregates that give a value, not null, over no rows.
_NON_NULL_ON_EMPTY = {"count", "count_distinct", "approx_count_distinct", "count_if", "collect_list", "collect_set"}


def _counts(e: Expr) -> bool:
    """Whether `e` holds an aggregate that is not null over no rows."""
    found: list[bool] = []

    def look(node: Expr) -> Expr:
        if isinstance(node, AggregateFunction) and node.name in _NON_NULL_ON_EMPTY:
            found.append(True)
        return node

    transform_expr(e, look)
    return bool(found)
