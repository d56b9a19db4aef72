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
    """An immutable window definition (`Column.over` takes one); each builder call returns a new spec.

    >>> w = Window.partitionBy("name").orderBy("age")
    >>> df.select("name", F.rank().over(w).alias("r")).orderBy("name").collect()
    [Row(name='Alice', r=1), Row(name='Bob', r=1)]
    """

    def partitionBy(self, *cols: Any) -> WindowSpec:
        """This spec with the window's partitioning columns (names or Columns) replaced by `cols`.

        >>> w = Window.orderBy("age").partitionBy("name")
        >>> df.select("name", F.row_number().over(w).alias("n")).orderBy("name").collect()
        [Row(name='Alice', n=1), Row(name='Bob', n=1)]
        """
        return replace(self, partition_by=tuple(to_expr(c) for c in _flatten(cols)))

    def orderBy(self, *cols: Any) -> WindowSpec:
        """This spec with the ordering within each partition replaced by `cols` (names, or Columns such as
        `F.desc("t")`). An ordered window's default frame runs from the partition's start to the current row's
        peers, as in Spark.

        >>> df.select("name", F.rank().over(Window.partitionBy().orderBy(F.desc("age"))).alias("r")).collect()
        [Row(name='Bob', r=1), Row(name='Alice', r=2)]
        """
        orders = []
        for c in _flatten(cols):
            e = to_expr(c)
            orders.append(e if isinstance(e, SortOrder) else SortOrder(e, True, None))
        return replace(self, order_by=tuple(orders))

    def rowsBetween(self, start: int, end: int) -> WindowSpec:
        """This spec with a frame of rows from `start` to `end` relative to the current row (negative before it);
        `Window.unboundedPreceding`, `Window.unboundedFollowing` and `Window.currentRow` name the ends.

        >>> w = Window.orderBy("age").rowsBetween(-1, Window.currentRow)
        >>> df.select("name", F.sum("age").over(w).alias("s")).collect()
        [Row(name='Alice', s=2), Row(name='Bob', s=7)]
        """
        return replace(self, frame=("rows", _bound(start), _bound(end)))

    def rangeBetween(self, start: int, end: int) -> WindowSpec:
        """This spec with a frame of the rows whose ordering value lies from `start` to `end` away from the current
        row's (one numeric ordering column).

        >>> w = Window.orderBy("age").rangeBetween(-3, 0)
        >>> df.select("name", F.count("*").over(w).alias("n")).collect()
        [Row(name='Alice', n=1), Row(name='Bob', n=2)]
        """
        return replace(self, frame=("range", _bound(start), _bound(end)))


def _bound(v: int) -> int:
    if v <= -(1 << 62):
        return UNBOUNDED_PRECEDING
    if v >= (1 << 62):
        return UNBOUNDED_FOLLOWING
    return int(v)


class Window:
    """Entry points to build a WindowSpec: `Window.partitionBy("k").orderBy("t")`.

    >>> w = Window.orderBy("age")
    >>> df.select("name", F.row_number().over(w).alias("n")).collect()
    [Row(name='Alice', n=1), Row(name='Bob', n=2)]
    """

    unboundedPreceding = UNBOUNDED_PRECEDING
    unboundedFollowing = UNBOUNDED_FOLLOWING
    currentRow = CURRENT_ROW

    @staticmethod
    def partitionBy(*cols: Any) -> WindowSpec:
        """A `WindowSpec` partitioned by `cols` (names or Columns).

        >>> df.select("name", F.count("*").over(Window.partitionBy("name")).alias("n")).orderBy("name").collect()
        [Row(name='Alice', n=1), Row(name='Bob', n=1)]
        """
        return WindowSpec().partitionBy(*cols)

    @staticmethod
    def orderBy(*cols: Any) -> WindowSpec:
        """A `WindowSpec` ordered by `cols`, over one partition of every row.

        >>> df.select("name", F.row_number().over(Window.orderBy("age")).alias("n")).collect()
        [Row(name='Alice', n=1), Row(name='Bob', n=2)]
        """
        return WindowSpec().orderBy(*cols)

    @staticmethod
    def rowsBetween(start: int, end: int) -> WindowSpec:
        """A `WindowSpec` with a frame of rows from `start` to `end` relative to the current row.

        >>> w = Window.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
        >>> df.select(F.sum("age").over(w).alias("total")).collect()
        [Row(total=7), Row(total=7)]
        """
        return WindowSpec().rowsBetween(start, end)

    @staticmethod
    def rangeBetween(start: int, end: int) -> WindowSpec:
        """A `WindowSpec` with a frame of ordering values from `start` to `end` away from the current row's.

        >>> df.select(F.max("age").over(Window.orderBy("age").rangeBetween(0, 10)).alias("m")).collect()
        [Row(m=5), Row(m=5)]
        """
        return WindowSpec().rangeBetween(start, end)
