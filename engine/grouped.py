"""`GroupedData`: what `df.groupBy(...)` returns; `agg` and the shortcut aggregates."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from quiver.engine import plan as L
from quiver.engine.column import Column
from quiver.engine.errors import AnalysisException
from quiver.engine.expressions import AggregateFunction, Alias, Expr, UnresolvedColumn

if TYPE_CHECKING:
    from quiver.engine.dataframe import DataFrame

_DICT_FUNCTIONS = {
    "sum": "sum", "avg": "avg", "mean": "avg", "min": "min", "max": "max", "count": "count",
    "first": "first", "last": "last", "stddev": "stddev", "collect_list": "collect_list",
    "collect_set": "collect_set", "variance": "variance",
}


class GroupedData:
    """Grouping keys waiting for aggregates."""

    def __init__(self, df: "DataFrame", keys: list[Expr]):
        self._df = df
        self._keys = keys

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
        return self._df._with(L.Aggregate(self._df._plan, keys, keys + tuple(aggs)))

    def count(self) -> "DataFrame":
        return self._aggregate([Alias(AggregateFunction("count", ()), "count")])

    def _numeric(self, fn: str, cols: tuple[str, ...]) -> "DataFrame":
        from quiver.engine import types as T

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
