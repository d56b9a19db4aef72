"""Window functions of `quiver.functions` (F): row_number, rank, dense_rank, percent_rank, cume_dist, ntile,
nth_value, lag and lead, used with `.over(Window...)` as in PySpark."""
from __future__ import annotations

from typing import Any

from quiver.engine.api.column import Column, to_expr
from quiver.engine.core.errors import AnalysisException
from quiver.engine.core.expressions import Literal, WindowFunction


def _window(name: str, *args: Any) -> Column:
    return Column(WindowFunction(name, tuple(args)))


def row_number() -> Column:
    return _window("row_number")


def rank() -> Column:
    return _window("rank")


def dense_rank() -> Column:
    return _window("dense_rank")


def percent_rank() -> Column:
    return _window("percent_rank")


def cume_dist() -> Column:
    return _window("cume_dist")


def ntile(n: int) -> Column:
    return _window("ntile", Literal.of(int(n)))


def nth_value(col: Any, offset: int, ignoreNulls: bool = False) -> Column:
    """The value at the `offset`-th row (from 1) of the window frame; null where the frame is shorter."""
    if int(offset) <= 0:
        raise AnalysisException(f"nth_value() takes a positive offset, got {offset}")
    return Column(WindowFunction("nth_value", (to_expr(col), Literal.of(int(offset))), ignore_nulls=bool(ignoreNulls)))


def lag(col: Any, offset: int = 1, default: Any = None) -> Column:
    return _window("lag", to_expr(col), Literal.of(int(offset)), Literal.of(default))


def lead(col: Any, offset: int = 1, default: Any = None) -> Column:
    return _window("lead", to_expr(col), Literal.of(int(offset)), Literal.of(default))


__all__ = [
    "row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "nth_value", "lag", "lead",
]
