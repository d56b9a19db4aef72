"""A scan's pushed-down filters as a PostgreSQL WHERE clause, so the server sends only matching rows.

The filters are Quiver's own expressions (the scan's conjuncts). Comparisons of a column with a
literal, IN lists, null tests and AND/OR/NOT of those translate; anything else is left out. The
clause is a hint, and the engine filters every row again, so a clause may be weaker than the
filters but must never reject a row they keep: NOT wraps only what translated exactly.

Literals never enter the SQL text: each is a bind parameter (`$1`, `$2`, ...) sent as text and cast to
its type in the clause (`$1::date`), so no server setting (`standard_conforming_strings=off` makes a
backslash escape a quote) can turn a value into SQL.
"""
from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa

from quiver.connectors.arrow_predicate import literal_scalar
from quiver.connectors.postgres_connection import quote_identifier
from quiver.connectors.postgres_types import ColumnRead
from quiver.engine.core.expressions import And, AttributeRef, Comparison, Expr, In, IsNotNull, IsNull, Not, Or

_OPERATORS = {"=": "=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_FLIPPED = {"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
# Where a parameter goes, until the clause is whole and its parameters are numbered in order.
# PostgreSQL identifiers cannot hold NUL, and a column name or value that does is never translated.
_SLOT = "\x00"


@dataclass(frozen=True)
class _Clause:
    """Translated SQL with a slot for each parameter, and the parameters' values in slot order."""

    sql: str
    values: tuple[str, ...] = ()


def where_clause(filters: Sequence[Expr] | None, columns: Mapping[str, ColumnRead],
                 first_parameter: int = 1) -> tuple[str | None, tuple[str, ...]]:
    """SQL that keeps at least the rows every filter keeps, over `columns` by name, with its literals as
    parameters `$first_parameter`, ... and their values (as text) in that order; None when no part of
    them translates."""
    parts = [c for c, _ in (_translate(f, columns) for f in filters or ()) if c is not None]
    if not parts:
        return None, ()
    clause = parts[0] if len(parts) == 1 else _joined(" AND ", parts)
    pieces = clause.sql.split(_SLOT)
    numbered = pieces[0] + "".join(f"${first_parameter + i}{piece}" for i, piece in enumerate(pieces[1:]))
    return numbered, clause.values


def _joined(separator: str, parts: Sequence[_Clause]) -> _Clause:
    return _Clause(separator.join(f"({p.sql})" for p in parts), tuple(v for p in parts for v in p.values))


def _translate(e: Expr, columns: Mapping[str, ColumnRead]) -> tuple[_Clause | None, bool]:
    """SQL for `e` and whether it is exact (keeps exactly the rows `e` keeps) rather than weaker."""
    if isinstance(e, And):
        parts = [_translate(x, columns) for x in (e.left, e.right)]
        kept = [c for c, _ in parts if c is not None]
        exact = all(c is not None and ok for c, ok in parts)
        return (_joined(" AND ", kept) if kept else None), exact
    if isinstance(e, Or):
        parts = [_translate(x, columns) for x in (e.left, e.right)]
        either = [c for c, _ in parts if c is not None]
        if len(either) < 2:
            return None, False
        return _joined(" OR ", either), all(ok for _, ok in parts)
    if isinstance(e, Not):
        inner, exact = _translate(e.child, columns)
        return (_Clause(f"NOT ({inner.sql})", inner.values), True) if inner is not None and exact else (None, False)
    if isinstance(e, Comparison) and e.op in _OPERATORS:
        clause = _comparison(e, columns)
        return clause, clause is not None
    if isinstance(e, (IsNull, IsNotNull)):
        column = _column(e.child, columns)
        if column is None:
            return None, False
        return _Clause(f"{quote_identifier(column.name)} IS {'NOT ' if isinstance(e, IsNotNull) else ''}NULL"), True
    if isinstance(e, In):
        clause = _membership(e, columns)
        return clause, clause is not None
    return None, False


def _column(e: Expr, columns: Mapping[str, ColumnRead]) -> ColumnRead | None:
    if isinstance(e, AttributeRef):
        read = columns.get(e.name)
        if read is not None and read.filterable and _SLOT not in read.name:
            return read
    return None


def _comparison(e: Comparison, columns: Mapping[str, ColumnRead]) -> _Clause | None:
    column, literal, op = _column(e.left, columns), e.right, e.op
    if column is None:
        column, literal, op = _column(e.right, columns), e.left, _FLIPPED[op]
    scalar = literal_scalar(literal) if column is not None else None
    value = _parameter(scalar, column) if scalar is not None else None
    if value is None:
        return None
    placeholder, text = value
    return _Clause(f"{_compared(column)} {_OPERATORS[op]} {placeholder}", (text,))


def _membership(e: In, columns: Mapping[str, ColumnRead]) -> _Clause | None:
    column = _column(e.child, columns)
    if column is None or not e.values:
        return None
    scalars = [literal_scalar(v) for v in e.values]
    values = [_parameter(v, column) if v is not None else None for v in scalars]
    kept = [v for v in values if v is not None]
    if len(kept) < len(values):
        return None
    return _Clause(f"{_compared(column)} IN ({', '.join(p for p, _ in kept)})", tuple(t for _, t in kept))


def _compared(column: ColumnRead) -> str:
    # Spark orders strings by their UTF-8 bytes; the "C" collation does the same, whatever the
    # database's default collation.
    name = quote_identifier(column.name)
    return f'{name} COLLATE "C"' if column.kind == "string" else name


def _parameter(scalar: pa.Scalar, column: ColumnRead) -> tuple[str, str] | None:
    """`scalar` as a parameter comparable with `column`: the SQL that stands for it (a slot cast to its
    type) and its value as text; None where it has no exact one."""
    if not scalar.is_valid:
        return None
    t = scalar.type
    try:
        value = scalar.as_py()
    except (ValueError, OverflowError, pa.ArrowException):
        return None
    if pa.types.is_boolean(t) and column.kind == "boolean":
        return f"{_SLOT}::boolean", "true" if value else "false"
    if pa.types.is_integer(t) and column.kind in ("integral", "fractional", "decimal"):
        # int8 compares with int2 and int4 columns through their own operators, so an index still serves.
        return (f"{_SLOT}::int8", str(int(value))) if -2 ** 63 <= value < 2 ** 63 else (f"{_SLOT}::numeric", str(value))
    if pa.types.is_floating(t) and column.kind in ("integral", "fractional", "decimal"):
        # PostgreSQL, like Spark, orders NaN above every number and equal to itself.
        if math.isnan(value):
            text = "NaN"
        elif math.isinf(value):
            text = "Infinity" if value > 0 else "-Infinity"
        else:
            text = repr(value)
        return f"{_SLOT}::float8", text
    if pa.types.is_decimal(t) and column.kind in ("integral", "fractional", "decimal"):
        return f"{_SLOT}::numeric", str(value)
    if (pa.types.is_string(t) or pa.types.is_large_string(t)) and column.kind == "string":
        # PostgreSQL text cannot hold NUL.
        return (f'{_SLOT}::text COLLATE "C"', value) if "\x00" not in value else None
    if pa.types.is_date(t) and column.kind == "date":
        return f"{_SLOT}::date", value.isoformat()
    if pa.types.is_timestamp(t) and column.kind in ("timestamp", "timestamptz") and isinstance(value, dt.datetime):
        moment = value.astimezone(dt.timezone.utc).replace(tzinfo=None) if value.tzinfo else value
        if column.kind == "timestamptz":
            return f"{_SLOT}::timestamptz", f"{moment.isoformat(sep=' ')}+00"
        return f"{_SLOT}::timestamp", moment.isoformat(sep=" ")
    return None
