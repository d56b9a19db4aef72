"""Row-by-row comparison of two engines' answers to one TPC-H query."""
from __future__ import annotations

import datetime as dt
import decimal
import math

import pyarrow as pa


def _normal(value):
    """A value in a form that compares across engines: decimals and floats as float, dates as date."""
    if isinstance(value, (decimal.Decimal, float)):
        return float(value)
    if isinstance(value, dt.datetime):
        return value.date() if value.time() == dt.time(0) else value
    return value


def _rows(table: pa.Table) -> list[tuple]:
    columns = [table.column(i).to_pylist() for i in range(table.num_columns)]
    return [tuple(_normal(v) for v in row) for row in zip(*columns)]


def _rounding(table: pa.Table) -> list[float]:
    """Per column, half a unit in the last place a decimal column keeps (0 for other types).

    Spark gives avg(decimal(15, 2)) the type decimal(19, 6), so 0.0500813 comes back as
    0.050081: the same answer rounded, which a relative tolerance alone would reject.
    """
    return [0.5 * 10.0 ** -t.scale if pa.types.is_decimal(t) else 0.0 for t in table.schema.types]


def _same_value(a, b, rel_tol: float, abs_tol: float = 1e-9) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return a is b
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=rel_tol, abs_tol=abs_tol)
    return a == b


def _sort_key(row: tuple) -> tuple:
    return tuple((v is None, round(v, 4) if isinstance(v, float) else v) for v in row)


def answer_difference(expected: pa.Table, actual: pa.Table, ordered: bool, rel_tol: float = 1e-6) -> str | None:
    """None when `actual` has `expected`'s rows (floats to `rel_tol`, in order if `ordered`), else what differs.

    A decimal column may also differ by its own rounding: half a unit in its last place.

    Columns are matched by position, as engines name unaliased expressions differently.
    """
    if expected.num_columns != actual.num_columns:
        return (f"expected {expected.num_columns} columns {expected.column_names}, "
                f"got {actual.num_columns} {actual.column_names}")
    if expected.num_rows != actual.num_rows:
        return f"expected {expected.num_rows} rows, got {actual.num_rows}"
    want, got = _rows(expected), _rows(actual)
    if not ordered:
        want, got = sorted(want, key=_sort_key), sorted(got, key=_sort_key)
    tolerances = [max(1e-9, a, b) for a, b in zip(_rounding(expected), _rounding(actual))]
    for index, (w, g) in enumerate(zip(want, got)):
        if not all(_same_value(a, b, rel_tol, tol) for a, b, tol in zip(w, g, tolerances)):
            return f"row {index} differs: expected {w}, got {g}"
    return None
