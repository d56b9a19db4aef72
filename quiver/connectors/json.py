"""JSON Lines files (one object per line) read with Spark's schema inference and modes.

Inference follows Spark: integers are bigint (decimal past 64 bits), numbers with a
fraction or exponent double, then string, boolean, struct for objects and array for
arrays; conflicting types widen (bigint+double -> double) or fall back to string;
columns and struct fields are sorted by name; a column only ever null is string.
Lines that are not JSON objects become `_corrupt_record` (PERMISSIVE), are dropped
(DROPMALFORMED) or raise naming the file and line (FAILFAST). pyarrow's JSON reader does
the work where its answer is Spark's; the rest is parsed line by line. Writing: json_writer.
"""
from __future__ import annotations

import datetime
import io
import json as stdlib_json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import IO, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from quiver.connectors.base import ReadOptions
from quiver.connectors.files import FilePiece, FileReadError, WholeFileReads, project_file_batch
from quiver.connectors.json_schema import canonical_type, infer_value_type, infer_with_pyarrow, merge_types
from quiver.connectors.json_writer import COMPRESSIONS, JsonFileWriter, JsonWriteOptions
from quiver.connectors.object_store import open_binary, open_input_stream
from quiver.connectors.options import option_bool, option_choice, option_time_zone, reject_options
from quiver.connectors.paths import DataFile, file_uri
from quiver.connectors.text_values import parse_text_array
from quiver.engine.core.errors import ConfigurationError
from quiver.engine.core.time_zones import zone_info
from quiver.engine.core.types import from_arrow

MODES = ("PERMISSIVE", "DROPMALFORMED", "FAILFAST")
_ROWS_PER_BATCH = 8192
_UNSUPPORTED = {
    "primitivesAsString": ("false",), "prefersDecimal": ("false",), "samplingRatio": ("1", "1.0"),
    "dateFormat": (), "timestampFormat": (), "lineSep": ("\n",), "inferTimestamp": ("false",),
    "dropFieldIfAllNull": ("false",), "allowComments": ("false",),
}


class _Mismatch(Exception):
    """A JSON value that does not fit the column's type."""


@dataclass(frozen=True)
class JsonOptions:
    """The JSON options Quiver understands, validated once."""

    mode: str = "PERMISSIVE"
    corrupt_column: str = "_corrupt_record"
    # The zone of timestamps written without an offset (the `timeZone` option; `spark.read` gives the session's).
    time_zone: str = "UTC"

    @classmethod
    def from_options(cls, options: ReadOptions) -> JsonOptions:
        if option_bool(options, "multiLine", False):
            raise ConfigurationError(
                "JSON option 'multiLine'=true is not supported yet; Quiver reads JSON Lines "
                "(one object per line). Convert the file to JSON Lines or read it with pandas.")
        encoding = str(options.get("encoding", "utf-8")).lower()
        if encoding not in ("utf-8", "utf8"):
            raise ConfigurationError(f"JSON option 'encoding'={encoding!r} is not supported yet; only utf-8 is")
        reject_options(options, "JSON", _UNSUPPORTED)
        return cls(
            mode=option_choice(options, "mode", MODES, "PERMISSIVE"),
            corrupt_column=str(options.get("columnnameofcorruptrecord", "_corrupt_record")),
            time_zone=option_time_zone(options, "JSON"),
        )


def _open_lines(path: str) -> IO[str]:
    return io.TextIOWrapper(open_binary(path), encoding="utf-8-sig")


def _records(path: str, skip: int = 0) -> Iterator[tuple[int, str, list[dict] | None]]:
    """(line number, line, objects on it or None when it is not JSON objects) for non-blank lines
    after the first `skip` of them."""
    with _open_lines(path) as stream:
        for number, line in enumerate(stream, 1):
            if not line.strip():
                continue
            if skip:
                skip -= 1
                continue
            try:
                value = stdlib_json.loads(line)
            except ValueError:
                yield number, line.rstrip("\r\n"), None
                continue
            if isinstance(value, dict):
                yield number, line, [value]
            elif isinstance(value, list) and all(isinstance(v, dict) for v in value):
                yield number, line, value
            else:
                yield number, line.rstrip("\r\n"), None


class JsonFormat(WholeFileReads):
    """The `FileFormat` for JSON Lines."""

    name = "json"

    def check_options(self, options: ReadOptions) -> None:
        JsonOptions.from_options(options)

    def infer_schema(self, files: Sequence[DataFile], options: ReadOptions) -> pa.Schema:
        opts = JsonOptions.from_options(options)
        row_type: pa.DataType = pa.struct([])
        corrupt = False
        for f in files:
            file_type = infer_with_pyarrow(f.path)
            if file_type is None:
                file_type, file_corrupt = _python_infer(f.path, opts)
                corrupt = corrupt or file_corrupt
            row_type = merge_types(row_type, file_type)
        canonical = canonical_type(row_type)
        fields = list(canonical) if canonical is not None else []
        if corrupt and opts.corrupt_column not in [f.name for f in fields]:
            fields.append(pa.field(opts.corrupt_column, pa.string()))
        return pa.schema(sorted(fields, key=lambda f: f.name))

    def read_piece(
        self, piece: FilePiece, schema: pa.Schema, columns: list[str], predicate: pc.Expression | None,
        options: ReadOptions, partition: dict[str, pa.Scalar],
    ) -> Iterator[pa.RecordBatch]:
        opts = JsonOptions.from_options(options)
        path = piece.file.path
        fields = [f for f in schema if f.name not in partition and f.name in columns]
        done = 0
        if _fast_readable(fields, opts):
            try:
                for batch in _fast_batches(path, fields):
                    yield project_file_batch(batch, schema, columns, partition)
                    done += batch.num_rows
                return
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                pass  # values pyarrow will not convert as Spark does: the rest goes the Python way
        for batch in _python_batches(path, fields, opts, skip=done):
            yield project_file_batch(batch, schema, columns, partition)

    def check_writable(self, schema: pa.Schema) -> None:
        return None

    def check_write_options(self, options: ReadOptions) -> None:
        JsonWriteOptions.from_options(options)

    def extension(self, options: ReadOptions) -> str:
        compression = option_choice(options, "compression", COMPRESSIONS, "none")
        return ".json.gz" if compression == "gzip" else ".json"

    def open_writer(self, path: str, schema: pa.Schema, options: ReadOptions) -> JsonFileWriter:
        return JsonFileWriter(path, schema, options)


def _python_infer(path: str, opts: JsonOptions) -> tuple[pa.DataType, bool]:
    """Row type of one file parsed line by line, and whether it has corrupt records."""
    row_type: pa.DataType = pa.struct([])
    corrupt = False
    for number, line, objects in _records(path):
        if objects is None:
            if opts.mode == "FAILFAST":
                raise _malformed(path, number, line)
            corrupt = corrupt or opts.mode == "PERMISSIVE"
            continue
        for obj in objects:
            row_type = merge_types(row_type, infer_value_type(obj))
    return row_type, corrupt


def _fast_type(t: pa.DataType) -> bool:
    if pa.types.is_struct(t):
        return all(_fast_type(f.type) for f in t)
    if pa.types.is_list(t):
        return _fast_type(t.value_type)
    return pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t) or pa.types.is_string(t)


def _fast_readable(fields: list[pa.Field], opts: JsonOptions) -> bool:
    """pyarrow reads these columns exactly as Spark would (anything it cannot, it refuses)."""
    return bool(fields) and all(f.name != opts.corrupt_column and _fast_type(f.type) for f in fields)


def _fast_batches(path: str, fields: list[pa.Field]) -> Iterator[pa.RecordBatch]:
    if path.endswith(".gz"):
        raise pa.ArrowNotImplementedError("compressed JSON is read the Python way")
    options = pj.ParseOptions(explicit_schema=pa.schema(fields), unexpected_field_behavior="ignore")
    yield from pj.open_json(open_input_stream(path), read_options=pj.ReadOptions(use_threads=False),
                            parse_options=options)


def _python_batches(path: str, fields: list[pa.Field], opts: JsonOptions, skip: int) -> Iterator[pa.RecordBatch]:
    """Batches parsed line by line with Spark's rules for every value; the first `skip` rows left out."""
    corrupt_at = next((i for i, f in enumerate(fields) if f.name == opts.corrupt_column), None)
    converters = [_converter(f.type, opts.time_zone) for f in fields]
    rows: list[list[Any]] = []
    # pyarrow stops at the first line it cannot take, so each row it gave came from one line.
    for number, line, objects in _records(path, skip):
        if objects is None:
            if opts.mode == "FAILFAST":
                raise _malformed(path, number, line)
            if opts.mode == "PERMISSIVE":
                row = [None] * len(fields)
                if corrupt_at is not None:
                    row[corrupt_at] = line
                rows.append(row)
        for obj in objects or ():
            row = _convert_row(obj, fields, converters, corrupt_at, opts, path, number, line)
            if row is not None:
                rows.append(row)
        if len(rows) >= _ROWS_PER_BATCH:
            yield _to_batch(rows, fields, opts.time_zone)
            rows = []
    if rows:
        yield _to_batch(rows, fields, opts.time_zone)


def _malformed(path: str, number: int, line: str) -> FileReadError:
    shown = line if len(line) <= 200 else line[:200] + "..."
    return FileReadError(
        f"Malformed JSON record in {file_uri(path)} at line {number}: {shown!r} is not a JSON object. "
        "Use mode PERMISSIVE (_corrupt_record) or DROPMALFORMED (drop it) to read it anyway.")


def _convert_row(
    obj: dict, fields: list[pa.Field], converters: list[Callable[[Any], Any]], corrupt_at: int | None,
    opts: JsonOptions, path: str, number: int, line: str,
) -> list[Any] | None:
    """One object as a row of `fields`; a value of the wrong type is null, drops or raises per mode."""
    row = []
    bad = False
    for i, (f, convert) in enumerate(zip(fields, converters)):
        if i == corrupt_at:
            row.append(None)
            continue
        try:
            row.append(convert(obj.get(f.name)))
        except _Mismatch:
            if opts.mode == "FAILFAST":
                raise FileReadError(
                    f"Malformed JSON record in {file_uri(path)} at line {number}: field '{f.name}' value "
                    f"{stdlib_json.dumps(obj.get(f.name))} does not fit type {from_arrow(f.type).simpleString()}. "
                    "Use mode PERMISSIVE (null) or DROPMALFORMED (drop the row) to read it anyway.") from None
            bad = True
            row.append(None)
    if bad and opts.mode == "DROPMALFORMED":
        return None
    if bad and corrupt_at is not None:
        row[corrupt_at] = line.rstrip("\r\n")
    return row


def _to_batch(rows: list[list[Any]], fields: list[pa.Field], zone: str = "UTC") -> pa.RecordBatch:
    if not fields:
        return pa.RecordBatch.from_pydict({"_": [None] * len(rows)}).select([])
    arrays = []
    for i, f in enumerate(fields):
        values = [r[i] for r in rows]
        if pa.types.is_date(f.type) or pa.types.is_timestamp(f.type):
            arrays.append(parse_text_array(pa.array(values, pa.string()), f.type, zone)[0])
        else:
            arrays.append(pa.array(values, f.type))
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))


def _text_of(value: Any) -> str:
    """A JSON value as Spark shows it in a string column: strings as is, anything else as JSON text.

    Spark keeps the original text; re-encoding gives the same text for files written with the
    usual `", "` and `": "` separators, which is what `json.dumps` writes.
    """
    if isinstance(value, str):
        return value
    return stdlib_json.dumps(value, ensure_ascii=False)


def _converter(t: pa.DataType, zone: str = "UTC") -> Callable[[Any], Any]:
    """A function turning a parsed JSON value into a Python value of Arrow type `t`."""
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return lambda v: None if v is None else _text_of(v)
    if pa.types.is_integer(t):
        bits = t.bit_width
        low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1

        def to_int(v):
            if v is None:
                return None
            if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high:
                raise _Mismatch
            return v
        return to_int
    if pa.types.is_floating(t):
        def to_float(v):
            if v is None:
                return None
            if isinstance(v, bool):
                raise _Mismatch
            if isinstance(v, (int, float)):
                return float(v)
            if v in ("NaN", "Infinity", "-Infinity", "+Infinity"):
                return float(v.replace("Infinity", "inf"))
            raise _Mismatch
        return to_float
    if pa.types.is_decimal(t):
        def to_decimal(v):
            if v is None:
                return None
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise _Mismatch
            try:
                d = Decimal(str(v)).quantize(Decimal(1).scaleb(-t.scale))
            except InvalidOperation:
                raise _Mismatch from None
            if len(d.as_tuple().digits) > t.precision:
                raise _Mismatch
            return d
        return to_decimal
    if pa.types.is_boolean(t):
        def to_bool(v):
            if v is None or isinstance(v, bool):
                return v
            raise _Mismatch
        return to_bool
    if pa.types.is_date(t) or pa.types.is_timestamp(t):
        def to_text(v):
            if v is None:
                return None
            if isinstance(v, str):
                return v
            raise _Mismatch
        return to_text
    if pa.types.is_struct(t):
        names = [f.name for f in t]
        convs = [_nested(f.type, zone) for f in t]

        def to_struct(v):
            if v is None:
                return None
            if not isinstance(v, dict):
                raise _Mismatch
            return {n: c(v.get(n)) for n, c in zip(names, convs)}
        return to_struct
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        conv = _nested(t.value_type, zone)

        def to_list(v):
            if v is None:
                return None
            if not isinstance(v, list):
                raise _Mismatch
            return [conv(x) for x in v]
        return to_list
    if pa.types.is_map(t):
        key, item = _converter(t.key_type, zone), _nested(t.item_type, zone)

        def to_map(v):
            if v is None:
                return None
            if not isinstance(v, dict):
                raise _Mismatch
            return [(key(k), item(x)) for k, x in v.items()]
        return to_map
    if pa.types.is_binary(t):
        return lambda v: None if v is None else _text_of(v).encode()
    return lambda v: None


def _nested(t: pa.DataType, zone: str = "UTC") -> Callable[[Any], Any]:
    """A converter for values inside structs, arrays and maps (dates and timestamps parsed in Python; a timestamp
    without an offset is a wall-clock time in `zone`, the `timeZone` option)."""
    if pa.types.is_date(t):
        return lambda v: None if v is None else datetime.date.fromisoformat(str(v)[:10])
    if pa.types.is_timestamp(t):
        def to_ts(v):
            if v is None:
                return None
            ts = datetime.datetime.fromisoformat(str(v))
            if ts.tzinfo is None and zone != "UTC":
                ts = ts.replace(tzinfo=local)
            if ts.tzinfo is not None:
                ts = ts.astimezone(datetime.timezone.utc).replace(tzinfo=None)
            return ts
        local = zone_info(zone)
        return to_ts
    return _converter(t, zone)
