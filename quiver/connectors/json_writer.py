"""Writing JSON Lines as Spark does: one object per line, null fields left out, NaN and
Infinity as strings, dates and timestamps as text; flat columns are encoded with pyarrow.compute."""
from __future__ import annotations

import base64
import datetime
import gzip
import json as stdlib_json
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from quiver.connectors.base import ReadOptions
from quiver.connectors.options import option_bool, option_choice, reject_options
from quiver.connectors.text_values import concatenated_bytes, format_text_array

COMPRESSIONS = ("none", "uncompressed", "gzip")


_UNSUPPORTED = {"dateFormat": (), "timestampFormat": (), "lineSep": ("\n",), "encoding": ("utf-8", "utf8")}


@dataclass(frozen=True)
class JsonWriteOptions:
    """The JSON write options Quiver understands, validated when the sink is made."""

    keep_nulls: bool = False
    compression: str = "none"

    @classmethod
    def from_options(cls, options: ReadOptions) -> JsonWriteOptions:
        reject_options(options, "JSON write", _UNSUPPORTED)
        return cls(keep_nulls=not option_bool(options, "ignoreNullFields", True),
                   compression=option_choice(options, "compression", COMPRESSIONS, "none"))


class JsonFileWriter:
    """One output JSON Lines file, written as Spark does: nulls omitted, NaN as "NaN", dates as text."""

    def __init__(self, path: str, schema: pa.Schema, options: ReadOptions):
        settings = JsonWriteOptions.from_options(options)
        self.keep_nulls = settings.keep_nulls
        self.stream = gzip.open(path, "wb") if settings.compression == "gzip" else open(path, "wb")

    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        members = [self._members(name, column) for name, column in zip(batch.schema.names, batch.columns)]
        if members:
            body = pc.binary_join_element_wise(*members, ",", null_handling="skip")
        else:
            body = pa.array([""] * batch.num_rows, pa.string())
        lines = pc.binary_join_element_wise("{", body, "}\n", "")
        self.stream.write(concatenated_bytes(lines))

    def _members(self, name: str, column: pa.Array) -> pa.Array:
        """`"name":value` per row, null where the value is null (so the member is left out)."""
        values = _json_values(column, self.keep_nulls)
        if self.keep_nulls:
            values = pc.fill_null(values, "null")
        return pc.binary_join_element_wise(stdlib_json.dumps(name, ensure_ascii=False) + ":", values, "")

    def close(self) -> None:
        self.stream.close()


def _json_values(column: pa.Array, keep_nulls: bool) -> pa.Array:
    """Each value as JSON text (null stays null); flat types vectorized, nested ones in Python."""
    t = column.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return _json_strings(column.cast(pa.string()))
    if pa.types.is_boolean(t) or pa.types.is_integer(t) or pa.types.is_decimal(t):
        return format_text_array(column)
    if pa.types.is_floating(t):
        text = format_text_array(column)
        quoted = pc.binary_join_element_wise('"', text, '"', "")
        return pc.if_else(pc.match_substring_regex(text, r"^-?[A-Z]"), quoted, text)
    if pa.types.is_date(t) or pa.types.is_timestamp(t):
        return pc.binary_join_element_wise('"', format_text_array(column), '"', "")
    return pa.array([None if v is None else stdlib_json.dumps(_plain(v, keep_nulls), ensure_ascii=False,
                                                              separators=(",", ":"))
                     for v in column.to_pylist()], pa.string())


def _json_strings(text: pa.Array) -> pa.Array:
    if pc.any(pc.match_substring_regex(text, r"[\x00-\x1f]")).as_py():
        return pa.array([None if v is None else stdlib_json.dumps(v, ensure_ascii=False) for v in text.to_pylist()],
                        pa.string())
    escaped = pc.replace_substring(pc.replace_substring(text, "\\", "\\\\"), '"', '\\"')
    return pc.binary_join_element_wise('"', escaped, '"', "")


def _plain(value: Any, keep_nulls: bool) -> Any:
    """A nested Python value as plain JSON data: nulls in structs left out, temporal values as text."""
    if isinstance(value, dict):
        return {k: _plain(v, keep_nulls) for k, v in value.items() if keep_nulls or v is not None}
    if isinstance(value, list):
        if value and isinstance(value[0], tuple):
            return {str(k): _plain(v, keep_nulls) for k, v in value}
        return [_plain(v, keep_nulls) for v in value]
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, datetime.datetime):
        return value.isoformat(timespec="microseconds").rstrip("0").rstrip(".")
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    return value
