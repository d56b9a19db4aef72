"""A scan's pushed-down filters as a PostgreSQL WHERE clause, so the server sends only matching rows.

The filters are Quiver's own expressions (the scan's conjuncts). Comparisons of a column with a
literal, IN lists, null tests and AND/OR/NOT of those translate; anything else is left out. The
clause is a hint, and the engine filters every row again, so a clause may be weaker than the
filters but must never reject a row they keep: NOT wraps only what translated exactly.
"""
from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence

import pyarrow as pa

from quiver.connectors.arrow_predicate import literal_scalar
from quiver.connectors.postgres_connection import quote_identifier, quote_literal
from quiver.connectors.postgres_types import ColumnRead
from quiver.engine.core.expressions import And, AttributeRef, Comparison, Expr, In, IsNotNull, IsNull, Not, Or

_OPERATORS = {"=": "=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_FLIPPED = {"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def where_clause(filters: Sequence[Expr] | None, columns: Mapping[str, ColumnRead]) -> str | None:
    """SQL that keeps at least the rows every filter keeps, over `columns` by name; None when no
    part of them translates."""
    parts = [sql for sql, _ in (_translate(f, columns) for f in filters or ()) if sql is not None]
    if len(parts) <= 1:
        return parts[0] if parts else None
    return " AND ".join(f"({p})" for p in parts)


def _translate(e: Expr, columns: Mapping[str, ColumnRead]) -> tuple[str | None, bool]:
    """SQL for `e` and whether it is exact (keeps exactly the rows `e` keeps) rather than weaker."""
    if isinstance(e, And):
        parts = [_translate(x, columns) for x in (e.left, e.right)]
        kept = [sql for sql, _ in parts if sql is not None]
        exact = all(sql is not None and ok for sql, ok in parts)
        return (" AND ".join(f"({s})" for s in kept) if kept else None), exact
    if isinstance(e, Or):
        parts = [_translate(x, columns) for x in (e.left, e.right)]
        if any(sql is None for sql, _ in parts):
            return None, False
        return " OR ".join(f"({sql})" for sql, _ in parts), all(ok for _, ok in parts)
    if isinstance(e, Not):
        inner, exact = _translate(e.child, columns)
        return (f"NOT ({inner})", True) if inner is not None and exact else (None, False)
    if isinstance(e, Comparison) and e.op in _OPERATORS:
        sql = _comparison(e, columns)
        return sql, sql is not None
    if isinstance(e, (IsNull, IsNotNull)):
        column = _column(e.child, columns)
        if column is None:
            return None, False
        return f"{quote_identifier(column.name)} IS {'NOT ' if isinstance(e, IsNotNull) else ''}NULL", True
    if isinstance(e, In):
        sql = _membership(e, columns)
        return sql, sql is not None
    return None, False


def _column(e: Expr, columns: Mapping[str, ColumnRead]) -> ColumnRead | None:
    if isinstance(e, AttributeRef):
        read = columns.get(e.name)
        if read is not None and read.filterable:
            return read
    return None


def _comparison(e: Comparison, columns: Mapping[str, ColumnRead]) -> str | None:
    column, literal, op = _column(e.left, columns), e.right, e.op
    if column is None:
        column, literal, op = _column(e.right, columns), e.left, _FLIPPED[op]
    scalar = literal_scalar(literal) if column is not None else None
    value = _sql_value(scalar, column) if scalar is not None else None
    return None if value is None else f"{_compared(column)} {_OPERATORS[op]} {value}"


def _membership(e: In, columns: Mapping[str, ColumnRead]) -> str | None:
    column = _column(e.child, columns)
    if column is None or not e.values:
        return None
    scalars = [literal_scalar(v) for v in e.values]
    values = [_sql_value(v, column) if v is not None else None for v in scalars]
    if any(v is None for v in values):
        return None
    return f"{_compared(column)} IN ({', '.join(values)})"


def _compared(column: ColumnRead) -> str:
    # Spark orders strings by their UTF-8 bytes; the "C" collation does the same, whatever the
    # database's default collation.
    name = quote_identifier(column.name)
    return f'{name} COLLATE "C"' if column.kind == "string" else name


def _sql_value(scalar: pa.Scalar, column: ColumnRead) -> str | None:
    """`scalar` as a SQL literal comparable with `column`; None where it has no exact one."""
    if not scalar.is_valid:
        return None
    t = scalar.type
    try:
        value = scalar.as_py()
    except (ValueError, OverflowError, pa.ArrowException):
        return None
    if pa.types.is_boolean(t) and column.kind == "boolean":
        return "TRUE" if value else "FALSE"
    if pa.types.is_integer(t) and column.kind in ("integral", "fractional", "decimal"):
        return str(int(value))
    if pa.types.is_floating(t) and column.kind in ("integral", "fractional", "decimal"):
        # PostgreSQL, like Spark, orders NaN above every number and equal to itself.
        if math.isnan(value):
            text = "NaN"
        elif math.isinf(value):
            text = "Infinity" if value > 0 else "-Infinity"
        else:
            text = repr(value)
        return f"'{text}'::float8"
    if pa.types.is_decimal(t) and column.kind in ("integral", "fractional", "decimal"):
        return f"'{value}'::numeric"
    if (pa.types.is_string(t) or pa.types.is_large_string(t)) and column.kind == "string":
        return quote_literal(value) + ' COLLATE "C"' if "\x00" not in value else None
    if pa.types.is_date(t) and column.kind == "date":
        return f"DATE '{value.isoformat()}'"
    if pa.types.is_timestamp(t) and column.kind in ("timestamp", "timestamptz") and isinstance(value, dt.datetime):
        moment = value.astimezone(dt.timezone.utc).replace(tzinfo=None) if value.tzinfo else value
        kind = "TIMESTAMPTZ" if column.kind == "timestamptz" else "TIMESTAMP"
        zone = "+00" if column.kind == "timestamptz" else ""
        return f"{kind} '{moment.isoformat(sep=' ')}{zone}'"
    return None
