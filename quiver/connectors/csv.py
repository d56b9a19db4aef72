"""CSV files with Spark's options and semantics, parsed by pyarrow.csv.

Every field is first read as text, then typed by `connectors.text_values`, so inference
and parsing follow Spark's rules identically for every file. Rows with the wrong number
of fields are handled by `mode`: PERMISSIVE pads or truncates them in place,
DROPMALFORMED drops them, FAILFAST raises naming the file and line.
"""
from __future__ import annotations

import csv as stdlib_csv
import gzip
import io
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import IO

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from quiver.connectors.base import ReadOptions
from quiver.connectors.files import FilePiece, FileReadError, WholeFileReads, project_file_batch
from quiver.connectors.object_store import open_binary, open_input_stream
from quiver.connectors.options import option_bool, option_char, option_choice, reject_options
from quiver.connectors.paths import DataFile, file_uri
from quiver.connectors.text_values import (
    TextKinds,
    classify,
    concatenated_bytes,
    format_text_array,
    parse_text_array,
)
from quiver.engine.core.errors import AnalysisException, ConfigurationError
from quiver.engine.core.types import from_arrow

MODES = ("PERMISSIVE", "DROPMALFORMED", "FAILFAST")
COMPRESSIONS = ("none", "uncompressed", "gzip")
_UNSUPPORTED = {
    "comment": ("", "\u0000"), "dateFormat": ("yyyy-mm-dd",), "timestampFormat": (), "timestampNTZFormat": (),
    "lineSep": ("\n",), "samplingRatio": ("1", "1.0"), "nanValue": ("nan",), "positiveInf": ("inf",),
    "negativeInf": ("-inf",), "ignoreLeadingWhiteSpace": ("false",), "ignoreTrailingWhiteSpace": ("false",),
    "locale": ("en-us",), "preferDate": ("true",), "enableDateTimeParsingFallback": (),
}
_WRITE_UNSUPPORTED = {
    "dateFormat": (), "timestampFormat": (), "quoteAll": ("false",), "escapeQuotes": ("true",),
    "lineSep": ("\n",), "encoding": ("utf-8", "utf8"), "charToEscapeQuoteEscaping": (),
    "ignoreLeadingWhiteSpace": ("false",), "ignoreTrailingWhiteSpace": ("false",),
}
_BLOCK_SIZE = 1 << 20


@dataclass(frozen=True)
class CsvDialect:
    """The CSV options Quiver understands, validated once."""

    header: bool = False
    infer_schema: bool = False
    sep: str = ","
    quote: str = '"'
    escape: str = "\\"
    null_value: str = ""
    mode: str = "PERMISSIVE"
    multiline: bool = False

    @classmethod
    def from_options(cls, options: ReadOptions) -> CsvDialect:
        """Read and check options; raises `ConfigurationError` naming a bad option and what is valid."""
        encoding = str(options.get("encoding", options.get("charset", "utf-8"))).lower()
        if encoding not in ("utf-8", "utf8"):
            raise ConfigurationError(f"CSV option 'encoding'={encoding!r} is not supported yet; only utf-8 is")
        reject_options(options, "CSV", _UNSUPPORTED)
        sep = options.get("sep", options.get("delimiter"))
        sep = option_char(ReadOptions({"sep": sep} if sep is not None else {}), "sep", ",")
        if sep == "":
            raise ConfigurationError("CSV option 'sep' must be one character, not empty")
        return cls(
            header=option_bool(options, "header", False),
            infer_schema=option_bool(options, "inferSchema", False),
            sep=sep,
            quote=option_char(options, "quote", '"'),
            escape=option_char(options, "escape", "\\"),
            null_value=str(options.get("nullvalue", "")),
            mode=option_choice(options, "mode", MODES, "PERMISSIVE"),
            multiline=option_bool(options, "multiLine", False),
        )

    def python_reader(self, stream: IO[str]) -> Iterator[list[str]]:
        """The stdlib csv reader for the same dialect (first record, malformed rows)."""
        return stdlib_csv.reader(
            stream, delimiter=self.sep, quotechar=self.quote or None, escapechar=self.escape or None,
            doublequote=True, quoting=stdlib_csv.QUOTE_MINIMAL if self.quote else stdlib_csv.QUOTE_NONE,
            strict=False,
        )


def _open_text(path: str) -> IO[str]:
    return io.TextIOWrapper(open_binary(path), encoding="utf-8-sig", newline="")


def first_record(path: str, dialect: CsvDialect) -> list[str] | None:
    """The first non-empty record of a file (the header, or what sets the column count)."""
    with _open_text(path) as stream:
        for row in dialect.python_reader(stream):
            if row and row != [""]:
                return row
    return None


def physical_line(path: str, dialect: CsvDialect, record: int | None) -> int | None:
    """The file line where record number `record` (1-based, blank lines not counted) ends."""
    if record is None:
        return None
    with _open_text(path) as stream:
        reader = dialect.python_reader(stream)
        seen = 0
        for row in reader:
            if row and row != [""]:
                seen += 1
                if seen == record:
                    return reader.line_num
    return record


def header_names(fields: Sequence[str | None]) -> list[str]:
    """Spark's safe header: empty names become `_c<i>`, duplicates (any case) get their index."""
    lowered = [(f or "").lower() for f in fields]
    names = []
    for i, name in enumerate(fields):
        if not name:
            names.append(f"_c{i}")
        elif lowered.count(name.lower()) > 1:
            names.append(f"{name}{i}")
        else:
            names.append(name)
    return names


class CsvFormat(WholeFileReads):
    """The `FileFormat` for CSV."""

    name = "csv"

    def check_options(self, options: ReadOptions) -> None:
        CsvDialect.from_options(options)

    def infer_schema(self, files: Sequence[DataFile], options: ReadOptions) -> pa.Schema:
        """Names from the first record (header) or `_c0..`; types from every file if `inferSchema`."""
        dialect = CsvDialect.from_options(options)
        first = next((r for r in (first_record(f.path, dialect) for f in files) if r is not None), None)
        if first is None:
            return pa.schema([])
        names = header_names(first) if dialect.header else [f"_c{i}" for i in range(len(first))]
        if not dialect.infer_schema:
            return pa.schema([pa.field(n, pa.string()) for n in names])
        kinds = [TextKinds() for _ in names]
        for f in files:
            for batch, _ in _text_batches(f.path, dialect, len(names), None):
                kinds = [k.merge(classify(col)) for k, col in zip(kinds, batch.columns)]
        return pa.schema([pa.field(n, k.resolve()) for n, k in zip(names, kinds)])

    def read_piece(
        self, piece: FilePiece, schema: pa.Schema, columns: list[str], predicate: pc.Expression | None,
        options: ReadOptions, partition: dict[str, pa.Scalar],
    ) -> Iterator[pa.RecordBatch]:
        dialect = CsvDialect.from_options(options)
        fields = [f for f in schema if f.name not in partition]
        self.check_readable(pa.schema(fields))
        corrupt = _corrupt_record_field(fields, options, dialect)
        if corrupt is not None:
            yield from self._read_with_corrupt_records(piece, schema, columns, partition, dialect, fields, corrupt)
            return
        wanted = [i for i, f in enumerate(fields) if f.name in columns]
        for text, first_line in _text_batches(piece.file.path, dialect, len(fields), wanted):
            typed, _ = _typed(text, [fields[i] for i in wanted], dialect, piece.file.path, first_line)
            yield project_file_batch(typed, schema, columns, partition)

    def _read_with_corrupt_records(
        self, piece: FilePiece, schema: pa.Schema, columns: list[str], partition: dict[str, pa.Scalar],
        dialect: CsvDialect, fields: list[pa.Field], corrupt: pa.Field,
    ) -> Iterator[pa.RecordBatch]:
        """PERMISSIVE reads whose schema holds the `columnNameOfCorruptRecord` column: it is not in the
        file, and holds the record's text where the record had the wrong number of fields or a value
        that does not parse (null elsewhere), as in Spark."""
        data = [f for f in fields if f.name != corrupt.name]
        for text, first_line in _text_batches(piece.file.path, dialect, len(data), None, keep_malformed=True):
            values = text.select(list(range(len(data))))
            typed, bad = _typed(values, data, dialect, piece.file.path, first_line)
            raw = text.column(len(data))
            if bad is not None:
                raw = pc.if_else(pc.and_(bad, pc.is_null(raw)), _joined(values, dialect), raw)
            out = pa.RecordBatch.from_arrays([*typed.columns, raw], names=[*typed.schema.names, corrupt.name])
            yield project_file_batch(out, schema, columns, partition)

    def check_readable(self, schema: pa.Schema) -> None:
        """CSV holds flat values only, as in Spark."""
        for f in schema:
            if pa.types.is_nested(f.type) or pa.types.is_binary(f.type) or pa.types.is_map(f.type):
                raise AnalysisException(
                    f"[UNSUPPORTED_DATA_TYPE_FOR_DATASOURCE] The CSV datasource doesn't support the column "
                    f"`{f.name}` of the type \"{from_arrow(f.type).simpleString().upper()}\".")

    def check_writable(self, schema: pa.Schema) -> None:
        self.check_readable(schema)

    def check_write_options(self, options: ReadOptions) -> None:
        CsvWriteOptions.from_options(options)

    def extension(self, options: ReadOptions) -> str:
        compression = option_choice(options, "compression", COMPRESSIONS, "none")
        return ".csv.gz" if compression == "gzip" else ".csv"

    def open_writer(self, path: str, schema: pa.Schema, options: ReadOptions) -> CsvFileWriter:
        return CsvFileWriter(path, schema, options)


def _text_batches(
    path: str, dialect: CsvDialect, width: int, wanted: list[int] | None, keep_malformed: bool = False,
) -> Iterator[tuple[pa.RecordBatch, int]]:
    """String batches of the `wanted` field positions (all when None) with the line of their first row.

    pyarrow parses rows of exactly `width` fields; other rows reach `invalid_row_handler`,
    which records them, and are put back in place (PERMISSIVE) or dropped or raised.
    `keep_malformed` adds a last column with the text of each put-back row (null for the others).
    """
    if width == 0 or first_record(path, dialect) is None:
        return
    names = [f"c{i}" for i in range(width)]
    positions = list(range(width)) if wanted is None else (wanted or [0])
    include = [names[i] for i in positions]
    invalid: list[tuple[int | None, int, str]] = []

    def on_invalid(row: pcsv.InvalidRow) -> str:
        invalid.append((row.number, row.actual_columns, row.text))
        return "error" if dialect.mode == "FAILFAST" else "skip"

    null_values = sorted({dialect.null_value, ""})
    try:
        reader = pcsv.open_csv(
            open_input_stream(path),
            read_options=pcsv.ReadOptions(column_names=names, skip_rows=1 if dialect.header else 0,
                                          use_threads=False, block_size=_BLOCK_SIZE),
            parse_options=pcsv.ParseOptions(delimiter=dialect.sep, quote_char=dialect.quote or False,
                                            escape_char=dialect.escape or False, double_quote=True,
                                            newlines_in_values=dialect.multiline, invalid_row_handler=on_invalid),
            convert_options=pcsv.ConvertOptions(column_types={n: pa.string() for n in names}, include_columns=include,
                                                null_values=null_values, strings_can_be_null=True,
                                                quoted_strings_can_be_null=True),
        )
        line = 2 if dialect.header else 1
        for batch in reader:
            dropped = 0
            if keep_malformed:
                batch = batch.append_column("malformed", pa.nulls(batch.num_rows, pa.string()))
            if dialect.mode == "PERMISSIVE" and invalid:
                batch = _put_back(batch, invalid, line, width, positions, dialect, keep_malformed)
            elif invalid:
                dropped = len(invalid)
                invalid.clear()
            yield (batch if wanted != [] else batch.select([])), line
            line += batch.num_rows + dropped
        if invalid and dialect.mode == "PERMISSIVE":
            rows = _malformed_rows([text for _, _, text in invalid], width, positions, dialect, keep_malformed)
            yield (rows if wanted != [] else rows.select([])), line
    except pa.ArrowInvalid as e:
        if invalid and dialect.mode == "FAILFAST":
            number, found, text = invalid[-1]
            line = physical_line(path, dialect, number)
            raise FileReadError(
                f"Malformed CSV record in {file_uri(path)} at line {line}: expected {width} fields, found {found}: "
                f"{text!r}. Use mode PERMISSIVE or DROPMALFORMED to read it anyway.") from e
        raise FileReadError(f"could not parse CSV file {file_uri(path)}: {e}") from e


def _put_back(
    batch: pa.RecordBatch, invalid: list[tuple[int | None, int, str]], line: int, width: int,
    positions: list[int], dialect: CsvDialect, keep_malformed: bool = False,
) -> pa.RecordBatch:
    """Insert the malformed rows pyarrow skipped (`invalid`, consumed) at their places in `batch`."""
    places, texts = [], []
    while invalid:
        number, _, text = invalid[0]
        before = batch.num_rows if number is None else number - line - len(places)
        if before > batch.num_rows:
            break
        places.append(max(before, 0))
        texts.append(text)
        invalid.pop(0)
    if not texts:
        return batch
    extra = _malformed_rows(texts, width, positions, dialect, keep_malformed)
    order, good = [], 0
    for i, place in enumerate(places):
        order.extend(range(good, place))
        good = max(good, place)
        order.append(batch.num_rows + i)
    order.extend(range(good, batch.num_rows))
    table = pa.Table.from_batches([batch, extra]).take(pa.array(order, pa.int64()))
    return table.combine_chunks().to_batches()[0]


def _malformed_rows(texts: list[str], width: int, positions: list[int], dialect: CsvDialect,
                    keep_malformed: bool = False) -> pa.RecordBatch:
    """Rows with the wrong field count, padded with nulls or truncated to `width` as Spark does
    (with their text as a last column when `keep_malformed`)."""
    columns: list[list[str | None]] = [[] for _ in positions]
    for text in texts:
        fields = next(iter(dialect.python_reader(io.StringIO(text))), [])
        fields = fields + [None] * (width - len(fields))
        for out, i in zip(columns, positions):
            value = fields[i]
            out.append(None if value in ("", dialect.null_value) else value)
    arrays = [pa.array(c, pa.string()) for c in columns]
    names = [f"c{i}" for i in positions]
    if keep_malformed:
        arrays.append(pa.array([t.rstrip("\r\n") for t in texts], pa.string()))
        names.append("malformed")
    return pa.RecordBatch.from_arrays(arrays, names=names)


def _corrupt_record_field(fields: list[pa.Field], options: ReadOptions, dialect: CsvDialect) -> pa.Field | None:
    """The schema's `columnNameOfCorruptRecord` column (default `_corrupt_record`) for a PERMISSIVE read."""
    name = str(options.get("columnNameOfCorruptRecord", "_corrupt_record"))
    field = next((f for f in fields if f.name == name), None)
    if field is None or dialect.mode != "PERMISSIVE":
        return None
    if not pa.types.is_string(field.type):
        raise AnalysisException(
            f"The field for corrupt records, `{name}` (columnNameOfCorruptRecord), must be of type STRING and "
            f"nullable, but is {from_arrow(field.type).simpleString().upper()}.")
    return field


def _joined(values: pa.RecordBatch, dialect: CsvDialect) -> pa.Array:
    """Each row's fields joined back into a record's text (for a row whose record had a bad value)."""
    out = io.StringIO()
    writer = stdlib_csv.writer(out, delimiter=dialect.sep, quotechar=dialect.quote or '"', lineterminator="\n")
    texts = []
    for row in zip(*(c.to_pylist() for c in values.columns)):
        out.seek(0)
        out.truncate()
        writer.writerow(["" if v is None else v for v in row])
        texts.append(out.getvalue().rstrip("\n"))
    return pa.array(texts, pa.string())


def _typed(
    text: pa.RecordBatch, fields: list[pa.Field], dialect: CsvDialect, path: str, first_line: int
) -> tuple[pa.RecordBatch, pa.Array | None]:
    """Parse a string batch into `fields`; unparseable values are null, dropped or raised per mode.
    Also the mask of rows with a value that did not parse (None when all did, or they were dropped)."""
    arrays, bad_rows = [], None
    for column, f in zip(text.columns, fields):
        parsed, bad = parse_text_array(column, f.type)
        if bad is not None:
            if dialect.mode == "FAILFAST":
                row = pc.index(bad, True).as_py()
                line = physical_line(path, dialect, first_line + row)
                raise FileReadError(
                    f"Malformed CSV record in {file_uri(path)} at line {line}: cannot parse "
                    f"{column[row].as_py()!r} as {from_arrow(f.type).simpleString()} for column '{f.name}'. "
                    "Use mode PERMISSIVE (null) or DROPMALFORMED (drop the row) to read it anyway.")
            bad_rows = bad if bad_rows is None else pc.or_(bad_rows, bad)
        arrays.append(parsed)
    batch = pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields)) if fields else text.select([])
    if bad_rows is not None and dialect.mode == "DROPMALFORMED":
        return batch.filter(pc.invert(bad_rows)), None
    return batch, bad_rows


@dataclass(frozen=True)
class CsvWriteOptions:
    """The CSV write options Quiver understands, validated when the sink is made."""

    header: bool = False
    sep: str = ","
    quote: str = '"'
    escape: str = "\\"
    null_value: str = ""
    compression: str = "none"

    @classmethod
    def from_options(cls, options: ReadOptions) -> CsvWriteOptions:
        reject_options(options, "CSV write", _WRITE_UNSUPPORTED)
        sep = options.get("sep", options.get("delimiter"))
        quote = option_char(options, "quote", '"')
        return cls(
            header=option_bool(options, "header", False),
            sep=option_char(ReadOptions({"sep": sep} if sep is not None else {}), "sep", ",") or ",",
            quote=quote,
            escape=option_char(options, "escape", "\\") or quote,
            null_value=str(options.get("nullvalue", "")),
            compression=option_choice(options, "compression", COMPRESSIONS, "none"),
        )


class CsvFileWriter:
    """One output CSV file; values in Spark's text forms, nulls as `nullValue`, quoting where needed.

    Unlike Spark, values with leading or trailing spaces are quoted rather than trimmed.
    """

    def __init__(self, path: str, schema: pa.Schema, options: ReadOptions):
        settings = CsvWriteOptions.from_options(options)
        self.sep, self.quote, self.escape = settings.sep, settings.quote, settings.escape
        self.null_value = settings.null_value
        specials = "".join(re.escape(c) for c in {self.sep, self.quote, self.escape} if c)
        self.needs_quote = rf"[{specials}\r\n]|^$|^\s|\s$"
        self.stream = gzip.open(path, "wb") if settings.compression == "gzip" else open(path, "wb")
        if settings.header:
            self._write_lines([self._quoted(pa.array([name], pa.string())) for name in schema.names])

    def _quoted(self, text: pa.Array) -> pa.Array:
        if not self.quote:
            return text
        escaped = text
        if self.escape != self.quote:
            escaped = pc.replace_substring(escaped, self.escape, self.escape * 2)
        escaped = pc.replace_substring(escaped, self.quote, self.escape + self.quote)
        wrapped = pc.binary_join_element_wise(self.quote, escaped, self.quote, "")
        return pc.if_else(pc.match_substring_regex(text, self.needs_quote), wrapped, text)

    def _write_lines(self, columns: list[pa.Array]) -> None:
        lines = pc.binary_join_element_wise(*columns, self.sep, null_handling="replace",
                                            null_replacement=self.null_value)
        lines = pc.binary_join_element_wise(lines, "", "\n")
        self.stream.write(concatenated_bytes(lines))

    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows:
            self._write_lines([self._quoted(format_text_array(c)) for c in batch.columns])

    def close(self) -> None:
        self.stream.close()
