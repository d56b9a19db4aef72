"""How the wrappers of `quiver.functions` (F) build their calls, shared by every domain module.

Each wrapper builds `Column(ScalarFunction(name, args))` with PySpark's signature and
PySpark's reading of each argument: where PySpark takes a column *or name*, a str is a
column name, read with `to_expr` (`F.startswith("s", "p")` compares two columns); where it
takes a pattern, format, separator or count, a Python value is a literal, read with
`literal_expr` (`F.regexp_replace(c, "a", "b")`). Defaults PySpark fills in (round's scale 0,
locate's pos 1, split's limit -1) are passed explicitly so the column names match PySpark's.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from quiver.engine.api.column import Column, to_expr
from quiver.engine.core.errors import AnalysisException
from quiver.engine.core.expressions import ScalarFunction

ColumnOrName = Column | str


def call(name: str, *args: Any) -> Column:
    """`name(args)`; each arg is already an expression (see `to_expr` / `literal_expr`)."""
    return Column(ScalarFunction(name, tuple(args)))


def column_args(name: str, cols: tuple, least: int = 0) -> tuple:
    """The columns (or names) of a variadic call, given one by one or as one list; at least `least`."""
    if len(cols) == 1 and isinstance(cols[0], (list, tuple)):
        cols = tuple(cols[0])
    if len(cols) < least:
        raise AnalysisException(f"{name} needs at least {least} columns, got {len(cols)}")
    return tuple(to_expr(c) for c in cols)


def unary(name: str, doc: str) -> Callable[[ColumnOrName], Column]:
    """The wrapper `name(col)` of a one-argument function, with `doc` as its docstring."""
    def f(col: ColumnOrName) -> Column:
        return call(name, to_expr(col))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


__all__ = [
    "ColumnOrName", "call", "column_args", "unary",
]
