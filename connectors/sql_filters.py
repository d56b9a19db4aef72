"""A scan's Arrow predicate as a PostgreSQL WHERE clause, so the server sends only matching rows.

pyarrow offers no way to walk a `pc.Expression`, but it pickles one as an Arrow IPC file whose
schema metadata lists the tree depth first ('call' name, arguments, 'options', 'end'; 'field_ref'
name; 'literal' column index) and whose columns hold the literals, typed. Python reads that
metadata only as a dict, which folds the repeated keys, so the ordered list is read through the
Arrow C data interface (a stable ABI). Anything not understood is left out: the predicate is a
hint, and the engine filters every row again, so a clause may be weaker than the predicate but
must never reject a row the predicate keeps.
"""
from __future__ import annotations

import ctypes
import datetime as dt
import math
import struct
from dataclasses import dataclass
from typing import Any, Mapping

import pyarrow as pa
import pyarrow.compute as pc

from quiver.connectors.postgres_connection import quote_identifier, quote_literal
from quiver.connectors.postgres_types import ColumnRead

_COMPARISONS = {"equal": "=", "not_equal": "<>", "less": "<", "less_equal": "<=", "greater": ">",
                "greater_equal": ">="}
_FLIPPED = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_MATCH_NULLS = 0


@dataclass(frozen=True)
class _Call:
    name: str
    args: tuple[Any, ...]
    options: pa.StructScalar | None


@dataclass(frozen=True)
class _Field:
    name: str


@dataclass(frozen=True)
class _Literal:
    value: pa.Scalar


def where_clause(predicate: pc.Expression | None, columns: Mapping[str, ColumnRead]) -> str | None:
    """SQL that keeps at least the rows `predicate` keeps, over `columns` by name; None when no
    part of it translates."""
    if predicate is None:
        return None
    try:
        tree = _decode(predicate)
    except (ValueError, KeyError, IndexError, TypeError, OSError, pa.ArrowException):
        return None
    sql, _ = _translate(tree, columns)
    return sql


class _ArrowSchema(ctypes.Structure):
    _fields_ = [("format", ctypes.c_char_p), ("name", ctypes.c_char_p), ("metadata", ctypes.c_void_p),
                ("flags", ctypes.c_int64), ("n_children", ctypes.c_int64), ("children", ctypes.c_void_p),
                ("dictionary", ctypes.c_void_p), ("release", ctypes.c_void_p), ("private_data", ctypes.c_void_p)]


_RELEASE = ctypes.CFUNCTYPE(None, ctypes.POINTER(_ArrowSchema))


def _metadata_items(schema: pa.Schema) -> list[tuple[str, str]]:
    """Every key-value pair of `schema`'s metadata, in order, repeated keys kept."""
    exported = _ArrowSchema()
    schema._export_to_c(ctypes.addressof(exported))
    try:
        if not exported.metadata:
            return []
        (count,) = struct.unpack("=i", ctypes.string_at(exported.metadata, 4))
        offset, items = 4, []
        for _ in range(count):
            pair = []
            for _ in range(2):
                (size,) = struct.unpack("=i", ctypes.string_at(exported.metadata + offset, 4))
                pair.append(ctypes.string_at(exported.metadata + offset + 4, size).decode())
                offset += 4 + size
            items.append((pair[0], pair[1]))
        return items
    finally:
        if exported.release:
            _RELEASE(exported.release)(ctypes.byref(exported))


def _decode(expression: pc.Expression) -> Any:
    """The tree of calls, field references and literals `expression` pickles as."""
    _, (buffer,) = expression.__reduce__()
    reader = pa.ipc.open_file(pa.py_buffer(buffer))
    batch = reader.get_batch(0) if reader.num_record_batches else None
    items = _metadata_items(reader.schema)

    def node(i: int) -> tuple[Any, int]:
        key, value = items[i]
        if key == "literal":
            return _Literal(batch.column(int(value))[0]), i + 1
        if key == "field_ref":
            return _Field(value), i + 1
        if key != "call":
            raise ValueError(f"unexpected {key!r} in a serialized expression")
        args, options, i = [], None, i + 1
        while items[i][0] != "end":
            if items[i][0] == "options":
                options = batch.column(int(items[i][1]))[0]
                i += 1
                continue
            arg, i = node(i)
            args.append(arg)
        return _Call(value, tuple(args), options), i + 1

    tree, end = node(0)
    if end != len(items):
        raise ValueError("trailing items in a serialized expression")
    return tree


def _translate(node: Any, columns: Mapping[str, ColumnRead]) -> tuple[str | None, bool]:
    """SQL for `node` and whether it is exact (keeps exactly the rows `node` keeps) rather than weaker."""
    if not isinstance(node, _Call):
        return None, False
    if node.name in ("and_kleene", "and"):
        parts = [_translate(a, columns) for a in node.args]
        kept = [sql for sql, _ in parts if sql is not None]
        exact = all(sql is not None and ok for sql, ok in parts)
        return (" AND ".join(f"({s})" for s in kept) if kept else None), exact
    if node.name in ("or_kleene", "or"):
        parts = [_translate(a, columns) for a in node.args]
        if any(sql is None for sql, _ in parts):
            return None, False
        return " OR ".join(f"({sql})" for sql, _ in parts), all(ok for _, ok in parts)
    if node.name == "invert" and len(node.args) == 1:
        inner, exact = _translate(node.args[0], columns)
        return (f"NOT ({inner})", True) if inner is not None and exact else (None, False)
    if node.name in _COMPARISONS and len(node.args) == 2:
        return _comparison(_COMPARISONS[node.name], node.args[0], node.args[1], columns), True
    if node.name in ("is_null", "is_valid") and len(node.args) == 1:
        column = _column(node.args[0], columns)
        if column is None or (node.name == "is_null" and _option(node, "nan_is_null")):
            return None, False
        return f"{quote_identifier(column.name)} IS {'NOT ' if node.name == 'is_valid' else ''}NULL", True
    if node.name == "is_in" and len(node.args) == 1:
        return _membership(node, columns), True
    return None, False


def _column(node: Any, columns: Mapping[str, ColumnRead]) -> ColumnRead | None:
    if isinstance(node, _Field):
        read = columns.get(node.name)
        if read is not None and read.filterable:
            return read
    return None


def _option(call: _Call, name: str) -> Any:
    if call.options is None:
        return None
    value = call.options.get(name) if hasattr(call.options, "get") else None
    return None if value is None else value.as_py()


def _comparison(op: str, left: Any, right: Any, columns: Mapping[str, ColumnRead]) -> str | None:
    column, literal = _column(left, columns), right
    if column is None:
        column, literal, op = _column(right, columns), left, _FLIPPED[op]
    if column is None or not isinstance(literal, _Literal):
        return None
    value = _sql_value(literal.value, column)
    if value is None:
        return None
    return f"{_compared(column)} {op} {value}"


def _membership(call: _Call, columns: Mapping[str, ColumnRead]) -> str | None:
    column = _column(call.args[0], columns)
    value_set = call.options.get("value_set") if call.options is not None else None
    if column is None or value_set is None or _option(call, "null_matching_behavior") != _MATCH_NULLS:
        return None
    values = [_sql_value(v, column) for v in value_set.values]
    if not values or any(v is None for v in values):
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
