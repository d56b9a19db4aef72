"""`quiver.functions` (imported as `F`): column constructors and aggregates, as `pyspark.sql.functions`.

Scalar functions (upper, substring, date_add, ...) live in `scalar_functions` and are
re-exported here, so `F.upper` and `F.sum` come from one module, as in PySpark.
"""
from __future__ import annotations

from typing import Any

from quiver.engine.api.column import Column, lit, to_expr  # noqa: F401 — lit is part of the F namespace
from quiver.engine.core.errors import AnalysisException
from quiver.engine.core.expressions import (
    AggregateFunction, CaseWhen, Literal, UnresolvedColumn, UnresolvedStar, WindowFunction,
)
from quiver.engine.api.functions.scalar import *  # noqa: F401,F403 — the scalar half of the F namespace
from quiver.engine.api.functions import scalar as _scalar
from quiver.engine.api.udf import PandasUDFType, UserDefinedFunction, pandas_udf, udf  # noqa: F401 — F.udf, F.pandas_udf


def col(name: str) -> Column:
    """A column by name; `"d.grp"` is column grp of the DataFrame aliased `d`."""
    if name == "*":
        return Column(UnresolvedStar(None))
    return Column(UnresolvedColumn.parse(name))


column = col


def expr(text: str) -> Column:
    """A column from a SQL expression string."""
    from quiver.engine.sql.statements import parse_expression

    return Column(parse_expression(text))


def when(condition: Column, value: Any) -> Column:
    if not isinstance(condition, Column):
        raise TypeError("when() condition must be a Column, e.g. F.col('x') > 1")
    from quiver.engine.api.column import literal_expr

    return Column(CaseWhen((condition.expr,), (literal_expr(value),), None))


def asc(name: str) -> Column:
    return col(name).asc()


def desc(name: str) -> Column:
    return col(name).desc()


def asc_nulls_first(name: str) -> Column:
    return col(name).asc_nulls_first()


def asc_nulls_last(name: str) -> Column:
    return col(name).asc_nulls_last()


def desc_nulls_first(name: str) -> Column:
    return col(name).desc_nulls_first()


def desc_nulls_last(name: str) -> Column:
    return col(name).desc_nulls_last()


# ---------------------------------------------------------------- aggregates


def _agg(name: str, c: Any, display: str | None = None, **kw: Any) -> Column:
    return Column(AggregateFunction(name, (to_expr(c),), display=display, **kw))


def count(c: Any) -> Column:
    """count(*) / count(1) count rows; count(col) counts non-null values."""
    if isinstance(c, str) and c == "*":
        return Column(AggregateFunction("count", ()))
    if isinstance(c, Column) and isinstance(c.expr, UnresolvedStar):
        return Column(AggregateFunction("count", ()))
    if isinstance(c, int) or (isinstance(c, Column) and isinstance(c.expr, Literal) and c.expr.value is not None):
        return Column(AggregateFunction("count", ()))
    return _agg("count", c)


def sum(c: Any) -> Column:  # noqa: A001 — PySpark's name
    return _agg("sum", c)


def avg(c: Any) -> Column:
    return _agg("avg", c)


def mean(c: Any) -> Column:
    return _agg("avg", c, display="avg")


def min(c: Any) -> Column:  # noqa: A001
    return _agg("min", c)


def max(c: Any) -> Column:  # noqa: A001
    return _agg("max", c)


def first(c: Any, ignorenulls: bool = False) -> Column:
    return _agg("first", c, ignore_nulls=ignorenulls)


def last(c: Any, ignorenulls: bool = False) -> Column:
    return _agg("last", c, ignore_nulls=ignorenulls)


def any_value(c: Any, ignoreNulls: bool = False) -> Column:
    return _agg("any_value", c, ignore_nulls=ignoreNulls)


def stddev(c: Any) -> Column:
    return _agg("stddev", c)


def stddev_samp(c: Any) -> Column:
    return _agg("stddev_samp", c)


def stddev_pop(c: Any) -> Column:
    return _agg("stddev_pop", c)


def variance(c: Any) -> Column:
    return _agg("variance", c)


def var_samp(c: Any) -> Column:
    return _agg("var_samp", c)


def var_pop(c: Any) -> Column:
    return _agg("var_pop", c)


def collect_list(c: Any) -> Column:
    return _agg("collect_list", c)


def collect_set(c: Any) -> Column:
    return _agg("collect_set", c)


def product(c: Any) -> Column:
    return _agg("product", c)


def median(c: Any) -> Column:
    return _agg("median", c)


def bool_and(c: Any) -> Column:
    return _agg("bool_and", c)


def bool_or(c: Any) -> Column:
    return _agg("bool_or", c)


every = bool_and
some = bool_or


def countDistinct(c: Any, *cols: Any) -> Column:
    return Column(AggregateFunction("count", tuple(to_expr(x) for x in (c, *cols)), distinct=True))


count_distinct = countDistinct


def sum_distinct(c: Any) -> Column:
    return Column(AggregateFunction("sum", (to_expr(c),), distinct=True))


sumDistinct = sum_distinct


def approx_count_distinct(c: Any, rsd: float | None = None) -> Column:
    return Column(AggregateFunction("count", (to_expr(c),), distinct=True, display="approx_count_distinct"))


__all__ = [n for n in dir() if not n.startswith("_")] + list(getattr(_scalar, "__all__", []))


# ---------------------------------------------------------------- window functions


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


__all__ = [n for n in dir() if not n.startswith("_")] + list(getattr(_scalar, "__all__", []))


# hashes, random values, row positions, grouping() and further string/math/date functions
from quiver.engine.api.functions.misc import *  # noqa: E402,F401,F403
from quiver.engine.api.functions import misc as _misc  # noqa: E402

__all__ = __all__ + [n for n in _misc.__all__ if n not in __all__]

# arrays, maps, structs, generators (explode, ...) and the broadcast hint
from quiver.engine.api.functions.collection import *  # noqa: E402,F401,F403
from quiver.engine.api.functions import collection as _collections  # noqa: E402

__all__ = __all__ + [n for n in _collections.__all__ if n not in __all__]
