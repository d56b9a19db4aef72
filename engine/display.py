"""How results look to a person: `show()`'s text table and the notebook's HTML table, as Spark prints them."""
from __future__ import annotations

import datetime as dt
import decimal
import html
from typing import Any

import pyarrow as pa

from quiver.engine import types as T
from quiver.engine.expressions import format_double


def format_value(v: Any, dtype: T.DataType, top: bool = True) -> str:
    """A value as Spark's show() prints it: NULL, true, 1.0E10, [1, 2], {a, 1}, 2024-01-05 10:00:00."""
    if v is None:
        return "NULL" if top else "NULL"
    if isinstance(dtype, T.BooleanType):
        return "true" if v else "false"
    if isinstance(dtype, (T.DoubleType, T.FloatType)):
        return format_double(float(v))
    if isinstance(dtype, T.DecimalType):
        return format(decimal.Decimal(v), "f")
    if isinstance(v, dt.datetime):
        text = v.strftime("%Y-%m-%d %H:%M:%S")
        if v.microsecond:
            text += ("." + f"{v.microsecond:06d}").rstrip("0")
        return text
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(dtype, T.ArrayType):
        return "[" + ", ".join(format_value(x, dtype.elementType, False) for x in v) + "]"
    if isinstance(dtype, T.MapType):
        items = v.items() if isinstance(v, dict) else v
        return "{" + ", ".join(f"{format_value(k, dtype.keyType, False)} -> {format_value(x, dtype.valueType, False)}"
                               for k, x in items) + "}"
    if isinstance(dtype, T.StructType):
        values = v.values() if isinstance(v, dict) else v
        return "{" + ", ".join(format_value(x, f.dataType, False) for x, f in zip(values, dtype.fields)) + "}"
    if isinstance(dtype, T.BinaryType):
        return "[" + " ".join(f"{b:02X}" for b in v) + "]"
    return str(v)


def _cells(table: pa.Table, schema: T.StructType, n: int) -> list[list[str]]:
    cols = [table.column(i).to_pylist()[:n] for i in range(table.num_columns)]
    return [[format_value(v, f.dataType) for v, f in zip(row, schema.fields)] for row in zip(*cols)] if cols else []


def show_string(table: pa.Table, schema: T.StructType, n: int, truncate: bool | int, vertical: bool) -> str:
    """The text `df.show(n, truncate, vertical)` prints."""
    width = 20 if truncate is True else int(truncate or 0)
    names = list(schema.names)
    rows = _cells(table, schema, n)
    more = table.num_rows > n

    def cut(s: str) -> str:
        if width > 0 and len(s) > width:
            return s[:width] if width < 4 else s[: width - 3] + "..."
        return s

    rows = [[cut(c) for c in r] for r in rows]
    if vertical:
        return _vertical(names, rows, more, n)
    header = [cut(h) for h in names]
    widths = [max(3, len(h), *(len(r[i]) for r in rows)) if rows else max(3, len(h)) for i, h in enumerate(header)]
    sep = "+" + "+".join("-" * w for w in widths) + "+\n"

    def line(cells: list[str]) -> str:
        if width > 0:
            return "|" + "|".join(c.rjust(w) for c, w in zip(cells, widths)) + "|\n"
        return "|" + "|".join(c.ljust(w) for c, w in zip(cells, widths)) + "|\n"

    out = sep + line(header) + sep + "".join(line(r) for r in rows) + sep
    if more:
        out += f"only showing top {n} row{'s' if n != 1 else ''}"
    return out


def _vertical(names: list[str], rows: list[list[str]], more: bool, n: int) -> str:
    if not rows:
        return "(0 rows)\n"
    key_w = max(len(x) for x in names)
    val_w = max(len(c) for r in rows for c in r) if rows else 0
    out = []
    for i, r in enumerate(rows):
        head = f"-RECORD {i}"
        out.append(head + "-" * max(0, key_w + val_w + 5 - len(head)) + "\n")
        for name, cell in zip(names, r):
            out.append(f" {name.ljust(key_w)} | {cell.ljust(val_w)} \n")
    text = "".join(out)
    if more:
        text += f"only showing top {n} row{'s' if n != 1 else ''}"
    return text


def html_table(table: pa.Table, schema: T.StructType, n: int) -> str:
    """An HTML table of the first `n` rows, with the schema in the header (for notebooks)."""
    head = "".join(f"<th>{html.escape(f.name)}<br><small>{html.escape(f.dataType.simpleString())}</small></th>"
                   for f in schema.fields)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>"
                   for r in _cells(table, schema, n))
    note = f"<p>only showing top {n} rows</p>" if table.num_rows > n else ""
    return f"<table border='1'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{note}"
