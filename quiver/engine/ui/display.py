"""How results look to a person: `show()`'s text table and the notebook's HTML table, as Spark prints them."""
from __future__ import annotations

import datetime as dt
import decimal
import html
import re
from typing import Any

import numpy as np
import pyarrow as pa

from quiver.engine.core import types as T
from quiver.engine.core.expressions import format_double

_FULL_WIDTH = re.compile("[\u1100-\u115F\u2E80-\uA4CF\uAC00-\uD7A3\uF900-\uFAFF\uFE10-\uFE19"
                         "\uFE30-\uFE6F\uFF00-\uFF60\uFFE0-\uFFE6]")
_META = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\f": "\\f", "\b": "\\b", "\v": "\\v", "\a": "\\a"}


def format_float(v: float) -> str:
    """Java's Float.toString: the shortest text of the float32 value (0.1, 1.0E20), not of its double widening."""
    return format_double(float(str(np.float32(v))))


def _java_len(s: str) -> int:
    """The string's length in UTF-16 code units, as Java's String.length counts it."""
    return len(s.encode("utf-16-le")) // 2


def _java_prefix(s: str, units: int) -> str:
    """The first `units` UTF-16 code units of `s`, as Java's substring(0, units) takes them."""
    return s.encode("utf-16-le")[: 2 * units].decode("utf-16-le", errors="ignore")


def _half_width(s: str) -> int:
    """Spark's Utils.stringHalfWidth: UTF-16 length, plus one more for each full-width (East Asian) character."""
    return _java_len(s) + len(_FULL_WIDTH.findall(s))


def _escape_meta(s: str) -> str:
    """Spark's escapeMetaCharacters: a tab or newline in a cell or name prints as \\t or \\n."""
    return "".join(_META.get(c, c) for c in s)


def _pad(s: str, width: int, left: bool) -> str:
    """`s` padded with spaces to `width` display columns (full-width characters count two)."""
    fill = " " * max(0, width - _half_width(s))
    return fill + s if left else s + fill


def format_value(v: Any, dtype: T.DataType, top: bool = True) -> str:
    """A value as Spark's show() prints it: NULL, true, 1.0E10, [1, 2], {a, 1}, 2024-01-05 10:00:00."""
    if v is None:
        return "NULL"
    if isinstance(dtype, T.BooleanType):
        return "true" if v else "false"
    if isinstance(dtype, T.FloatType):
        return format_float(v)
    if isinstance(dtype, T.DoubleType):
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


def _cut(s: str, width: int) -> str:
    """A cell as Spark truncates it: escaped, then cut to `width` with "..." (no dots below 4 characters)."""
    s = _escape_meta(s)
    if width > 0 and _java_len(s) > width:
        return _java_prefix(s, width) if width < 4 else _java_prefix(s, width - 3) + "..."
    return s


def _footer(more: bool, n: int) -> str:
    """The "only showing top n rows" line, when rows were left out."""
    return f"only showing top {n} row{'s' if n != 1 else ''}" if more else ""


def show_string(table: pa.Table, schema: T.StructType, n: int, truncate: bool | int, vertical: bool) -> str:
    """The text `df.show(n, truncate, vertical)` prints; column names are escaped but never truncated."""
    n = max(0, n)
    width = 20 if truncate is True else int(truncate or 0)
    names = [_escape_meta(x) for x in schema.names]
    rows = [[_cut(c, width) for c in r] for r in _cells(table, schema, n)]
    more = table.num_rows > n
    if vertical:
        return _vertical(names, rows, more, n)
    widths = [max(3, *(_half_width(r[i]) for r in [names, *rows])) for i in range(len(names))]
    sep = "+" + "+".join("-" * w for w in widths) + "+\n"

    def line(cells: list[str]) -> str:
        return "|" + "|".join(_pad(c, w, width > 0) for c, w in zip(cells, widths)) + "|\n"

    return sep + line(names) + sep + "".join(line(r) for r in rows) + sep + _footer(more, n)


def _vertical(names: list[str], rows: list[list[str]], more: bool, n: int) -> str:
    """The `vertical=True` layout: one "-RECORD i---" block per row, names and values left-aligned."""
    if not rows:
        return "(0 rows)\n"
    key_w = max(3, *(_half_width(x) for x in names))
    val_w = max(3, *(_half_width(c) for r in rows for c in r))
    out = []
    for i, r in enumerate(rows):
        out.append(f"-RECORD {i}".ljust(key_w + val_w + 5, "-") + "\n")
        out.extend(f" {_pad(name, key_w, False)} | {_pad(cell, val_w, False)} \n" for name, cell in zip(names, r))
    return "".join(out) + _footer(more, n)


def html_table(table: pa.Table, schema: T.StructType, n: int, truncate: int = 20) -> str:
    """An HTML table of the first `n` rows, with the schema in the header (for notebooks); cells longer
    than `truncate` characters (0: no limit) are cut as show() cuts them."""
    head = "".join(f"<th>{html.escape(f.name)}<br><small>{html.escape(f.dataType.simpleString())}</small></th>"
                   for f in schema.fields)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_cut(c, truncate))}</td>" for c in r)
                   + "</tr>" for r in _cells(table, schema, n))
    shown = min(n, table.num_rows)
    note = (f"<p>only showing top {n} {'row' if n == 1 else 'rows'}</p>" if table.num_rows > n
            else f"<p>{shown} {'row' if shown == 1 else 'rows'}</p>")
    return (f"<table class='quiver-dataframe' border='1'><thead><tr>{head}</tr></thead><tbody>{body}</tbody>"
            f"</table>{note}")
