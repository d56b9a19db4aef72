"""Window functions in Spark SQL: `f(...) OVER (PARTITION BY .. ORDER BY .. frame)` and `WINDOW w AS (...)`.

The SQL text is turned into the `WindowExpression` the DataFrame API builds with
`F.rank().over(Window.partitionBy(..).orderBy(..))`, by the same builder function and its checks
(`analysis.builder.window_expression`), so the analyzer, planner and window executor see one
shape whichever front end wrote the query. This module adds only what SQL has on top: named
windows, frames written as `n PRECEDING`, the arguments window functions take in SQL, and the
split of a GROUP BY query whose windows read aggregates.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from sqlglot import exp

from quiver.engine.analysis.builder import (
    CURRENT_ROW,
    UNBOUNDED_FOLLOWING,
    UNBOUNDED_PRECEDING,
    Frame,
    window_expression,
)
from quiver.engine.core import types as T
from quiver.engine.core.errors import AnalysisException, ParseException
from quiver.engine.core.expressions import (
    WINDOW_FUNCTIONS,
    AggregateFunction,
    Alias,
    Expr,
    Literal,
    SortOrder,
    UnresolvedColumn,
    WindowExpression,
    WindowFunction,
    contains_window,
)
from quiver.engine.sql.display import SparkDisplay, strip_display

if TYPE_CHECKING:
    from quiver.engine.sql.expressions import ExpressionTranslator

_NO_ARGUMENT_FUNCTIONS = frozenset({"row_number", "rank", "dense_rank", "percent_rank", "cume_dist"})


# ---------------------------------------------------------------- WINDOW clause


def named_windows(definitions: list[exp.Window]) -> dict[str, exp.Window]:
    """The WINDOW clause of one SELECT as name -> definition; Spark matches names case-sensitively."""
    named: dict[str, exp.Window] = {}
    for d in definitions:
        name = d.this.name
        if name in named:
            raise ParseException(f"window '{name}' is defined twice in the WINDOW clause: "
                                 f"{', '.join(w.sql(dialect='spark') for w in definitions)}")
        named[name] = d
    return named


def _definition(node: exp.Window, named: Mapping[str, exp.Window], seen: tuple[str, ...] = ()) -> exp.Window:
    """The node holding the PARTITION BY / ORDER BY / frame of `node`, following `OVER w` and `w2 AS w`."""
    ref = node.args.get("alias")
    if ref is None:
        return node
    name = ref.name
    if any(node.args.get(k) for k in ("partition_by", "order", "spec")):
        raise ParseException(
            f"a window reference cannot be combined with more of a window specification in Spark SQL: "
            f"{node.sql(dialect='spark')!r}; put the whole specification in WINDOW {name} AS (...)"
        )
    if name in seen:
        raise AnalysisException(f"window '{name}' is defined in terms of itself: {' -> '.join(seen + (name,))}")
    if name not in named:
        known = ", ".join(sorted(named)) or "(none)"
        raise AnalysisException(
            f"window specification '{name}' is not defined in the WINDOW clause; defined windows: {known}. "
            f"Define it with ... WINDOW {name} AS (PARTITION BY ... ORDER BY ...)"
        )
    return _definition(named[name], named, seen + (name,))


# ---------------------------------------------------------------- OVER


def translate_window(exprs: ExpressionTranslator, node: exp.Window) -> Expr:
    """`f(...) OVER (...)` / `f(...) OVER w` as the WindowExpression `F.f(...).over(spec)` would build."""
    spec_node = _definition(node, exprs.windows)
    function = _function(exprs, node.this)
    partition_by = tuple(exprs.translate(p) for p in spec_node.args.get("partition_by") or [])
    order_node = spec_node.args.get("order")
    order_by = tuple(exprs.order_item(o) for o in (order_node.expressions if order_node is not None else []))
    frame_node = spec_node.args.get("spec")
    frame, shown = _frame(frame_node, node) if frame_node is not None else (None, None)
    plain = strip_display(function)
    if any(contains_window(e) for e in plain.children() + partition_by + order_by):
        raise AnalysisException(f"a window function cannot be nested inside another window: "
                                f"{node.sql(dialect='spark')!r}; compute the inner one in a subquery first")
    window = window_expression(function, partition_by, order_by, frame)
    return _displayed(window, shown) if shown else window


def _function(exprs: ExpressionTranslator, node: exp.Expression) -> Expr:
    """The function before OVER: a window-only function, or an aggregate (with IGNORE NULLS if written)."""
    inner = node.this if isinstance(node, (exp.IgnoreNulls, exp.RespectNulls)) else node
    name = inner.name.lower() if isinstance(inner, exp.Anonymous) else ""
    if name == "nth_value":
        return window_function(exprs, name, list(inner.expressions), inner,
                               ignore_nulls=isinstance(node, exp.IgnoreNulls))
    if name in WINDOW_FUNCTIONS:
        if isinstance(node, exp.IgnoreNulls):
            raise exprs.unsupported(node, f"IGNORE NULLS in {name}()",
                                    "IGNORE NULLS works with first_value and last_value")
        return window_function(exprs, name, list(inner.expressions), inner)
    return exprs.translate(node)


def window_function(exprs: ExpressionTranslator, name: str, args: list[exp.Expression],
                    node: exp.Expression, ignore_nulls: bool = False) -> WindowFunction:
    """row_number(), rank(), ..., ntile(n), lag/lead(x[, offset[, default]]), nth_value(x, n) with the
    arguments F.<name> gives."""
    call = node.sql(dialect="spark")
    if name == "nth_value":
        n = _integer_argument(exprs, args[1]) if len(args) in (2, 3) else None
        if len(args) == 3:
            flag = strip_display(exprs.translate(args[2]))
            ignore_nulls = ignore_nulls or (isinstance(flag, Literal) and flag.value is True)
        if n is None or n <= 0:
            raise AnalysisException(f"nth_value(x, n) takes a positive integer literal n, got {call!r}")
        return WindowFunction(name, (exprs.translate(args[0]), Literal(n, T.IntegerType())), ignore_nulls)
    if name in _NO_ARGUMENT_FUNCTIONS:
        if args:
            raise AnalysisException(f"{name}() takes no arguments, got {call!r}; its order is the window's ORDER BY")
        return WindowFunction(name)
    if name == "ntile":
        buckets = _integer_argument(exprs, args[0]) if len(args) == 1 else None
        if buckets is None or buckets <= 0:
            raise AnalysisException(f"ntile(n) takes one positive integer literal, the number of buckets; got {call!r}")
        return WindowFunction(name, (Literal(buckets, T.IntegerType()),))
    if not 1 <= len(args) <= 3:
        raise AnalysisException(f"{name}(x[, offset[, default]]) takes 1 to 3 arguments, got {call!r}")
    offset = _integer_argument(exprs, args[1]) if len(args) > 1 else 1
    if offset is None:
        raise AnalysisException(f"the offset of {name}() must be an integer literal, got {call!r}")
    default = exprs.translate(args[2]) if len(args) > 2 else Literal(None, T.NullType())
    return WindowFunction(name, (exprs.translate(args[0]), Literal(offset, T.IntegerType()), default))


def _integer_argument(exprs: ExpressionTranslator, node: exp.Expression) -> int | None:
    value = strip_display(exprs.translate(node))
    if isinstance(value, Literal) and isinstance(value.data_type, T.IntegralType) and value.value is not None:
        return int(value.value)
    return None


# ---------------------------------------------------------------- frames


def _frame(spec: exp.WindowSpec, node: exp.Window) -> tuple[Frame, str | None]:
    """A ROWS/RANGE frame as (kind, start, end) offsets, and its text where Spark shows it as written.

    Spark prints `2 PRECEDING` for SQL frames but `-2 FOLLOWING` for the DataFrame API's
    rowsBetween(-2, ..), so frames with a numeric bound keep their SQL text for the column name.
    """
    if spec.args.get("exclude"):
        raise ParseException(f"Spark SQL has no EXCLUDE clause in window frames: {node.sql(dialect='spark')!r}")
    kind = spec.text("kind").lower()
    start, start_text = _bound(spec.args.get("start"), spec.text("start_side"), node)
    end_value = spec.args.get("end")
    # `ROWS n PRECEDING` without BETWEEN ends at the current row.
    end, end_text = (_bound(end_value, spec.text("end_side"), node) if end_value is not None
                     else (CURRENT_ROW, "CURRENT ROW"))
    frame = (kind, start, end)
    numeric = any(t.split()[0] not in ("UNBOUNDED", "CURRENT") for t in (start_text, end_text))
    return frame, (f"{kind.upper()} BETWEEN {start_text} AND {end_text}" if numeric else None)


def _bound(value: exp.Expression | str | None, side: str, node: exp.Window) -> tuple[int, str]:
    """One frame bound as an offset from the current row, and its SQL text."""
    side = side.upper()
    if isinstance(value, str):
        word = value.upper()
        if word == "CURRENT ROW":
            return CURRENT_ROW, word
        if word == "UNBOUNDED":
            return (UNBOUNDED_PRECEDING if side == "PRECEDING" else UNBOUNDED_FOLLOWING), f"UNBOUNDED {side}"
    amount = _frame_amount(value)
    if amount is None:
        interval = " (RANGE frames over intervals are not supported in Quiver yet)" \
            if isinstance(value, exp.Interval) else ""
        raise ParseException(
            f"a window frame bound must be UNBOUNDED, CURRENT ROW or an integer literal n PRECEDING / n FOLLOWING; "
            f"got {node.sql(dialect='spark')!r}{interval}"
        )
    return (-amount if side == "PRECEDING" else amount), f"{amount} {side}"


def _frame_amount(value: exp.Expression | str | None) -> int | None:
    if isinstance(value, exp.Neg):
        inner = _frame_amount(value.this)
        return -inner if inner is not None else None
    if isinstance(value, exp.Literal) and not value.is_string and str(value.this).isdigit():
        return int(value.this)
    return None


def _displayed(window: WindowExpression, frame: str) -> Expr:
    """`window`, named as Spark names a SQL window whose frame has a numeric bound."""
    operands = (window.function,) + window.partition_by + window.order_by
    parts = []
    if window.partition_by:
        parts.append("PARTITION BY " + ", ".join("{}" for _ in window.partition_by))
    if window.order_by:
        parts.append("ORDER BY " + ", ".join("{}" for _ in window.order_by))
    parts.append(frame)
    return SparkDisplay(window, operands, "{} OVER (" + " ".join(parts) + ")")


# ---------------------------------------------------------------- windows over a GROUP BY


def aggregates_rows(e: Expr) -> bool:
    """True if `e` needs a GROUP BY: an aggregate outside any window, or one a window reads (ORDER BY sum(x))."""
    if isinstance(e, WindowExpression):
        return any(aggregates_rows(c) for c in window_inputs(e))
    if isinstance(e, AggregateFunction):
        return True
    return any(aggregates_rows(c) for c in e.children())


def window_inputs(w: WindowExpression) -> tuple[Expr, ...]:
    """What a window reads from each row: its function's arguments and its PARTITION BY / ORDER BY keys."""
    orders = tuple(o.child if isinstance(o, SortOrder) else o for o in w.order_by)
    return w.function.children() + w.partition_by + orders


@dataclass
class WindowInputs:
    """The per-group columns a GROUP BY query computes for the windows evaluated above it.

    In `SELECT k, rank() OVER (ORDER BY sum(v)) FROM t GROUP BY k` the aggregate computes
    `sum(v)` as a hidden column, and the window ranks the groups by it, as Spark plans it.
    """

    prefix: str = "__quiver_window_input_"
    columns: list[Alias] = field(default_factory=list)

    def lift(self, e: Expr) -> Expr:
        """`e` with each window-free part (literals aside) replaced by a reference to a hidden aggregate column."""
        if isinstance(e, WindowExpression):
            function = e.function.with_children(tuple(self.lift(c) for c in e.function.children()))
            return replace(e, function=function, partition_by=tuple(self.lift(p) for p in e.partition_by),
                           order_by=tuple(replace(o, child=self.lift(o.child)) for o in e.order_by))
        if isinstance(e, Literal):
            return e
        if not contains_window(e):
            name = f"{self.prefix}{len(self.columns)}"
            self.columns.append(Alias(e, name))
            return UnresolvedColumn((name,))
        return e.with_children(tuple(self.lift(c) for c in e.children()))


__all__ = [
    "named_windows", "translate_window", "window_function",
    "aggregates_rows", "window_inputs", "WindowInputs",
]
