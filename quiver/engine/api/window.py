"""`Window` and `WindowSpec`: partitioning, ordering and frame of a window function, as in PySpark."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from quiver.engine.analysis.builder import CURRENT_ROW, UNBOUNDED_FOLLOWING, UNBOUNDED_PRECEDING, WindowDefinition
from quiver.engine.api.column import to_expr
from quiver.engine.core.expressions import SortOrder


def _flatten(cols: tuple) -> list:
    if len(cols) == 1 and isinstance(cols[0], (list, tuple)):
        return list(cols[0])
    return list(cols)


@dataclass(frozen=True)
class WindowSpec(WindowDefinition):
    """An immutable window definition (`Column.over` takes one); each builder call returns a new spec."""

    def partitionBy(self, *cols: Any) -> WindowSpec:
        return replace(self, partition_by=tuple(to_expr(c) for c in _flatten(cols)))

    def orderBy(self, *cols: Any) -> WindowSpec:
        orders = []
        for c in _flatten(cols):
            e = to_expr(c)
            orders.append(e if isinstance(e, SortOrder) else SortOrder(e, True, None))
        return replace(self, order_by=tuple(orders))

    def rowsBetween(self, start: int, end: int) -> WindowSpec:
        return replace(self, frame=("rows", _bound(start), _bound(end)))

    def rangeBetween(self, start: int, end: int) -> WindowSpec:
        return replace(self, frame=("range", _bound(start), _bound(end)))


def _bound(v: int) -> int:
    if v <= -(1 << 62):
        return UNBOUNDED_PRECEDING
    if v >= (1 << 62):
        return UNBOUNDED_FOLLOWING
    return int(v)


class Window:
    """Entry points to build a WindowSpec: `Window.partitionBy("k").orderBy("t")`."""

    unboundedPreceding = UNBOUNDED_PRECEDING
    unboundedFollowing = UNBOUNDED_FOLLOWING
    currentRow = CURRENT_ROW

    @staticmethod
    def partitionBy(*cols: Any) -> WindowSpec:
        return WindowSpec().partitionBy(*cols)

    @staticmethod
    def orderBy(*cols: Any) -> WindowSpec:
        return WindowSpec().orderBy(*cols)

    @staticmethod
    def rowsBetween(start: int, end: int) -> WindowSpec:
        return WindowSpec().rowsBetween(start, end)

    @staticmethod
    def rangeBetween(start: int, end: int) -> WindowSpec:
        return WindowSpec().rangeBetween(start, end)
