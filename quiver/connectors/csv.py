"""CSV files with Spark's options and semantics, parsed by pyarrow.csv.

Every field is first read as text, then typed by `connectors.text_values`, so inference
and parsing follow Spark's rules identically for every file. Rows with the wrong number
of fields are handled by `mode`: PERMISSIVE pads or truncates them in place,
DROPMALFORMED drops them, FAILFAST raises naming the file and line.
"""
from __future__ import annotations

import codecs
import csv as stdlib_csv
import gzip
import io
import re
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from quiver.connectors.base import ReadOptions
from quiver.connectors.csv_quoting import QuotingCheck
from quiver.connectors.csv_records import SPARK_CHARSETS, Quoting, Record, is_blank, parse_text, records
from quiver.connectors.files import FilePiece, FileReadError, WholeFileReads, project_file_batch
from quiver.connectors.object_store import open_input_stream
from quiver.connectors.options import option_bool, option_char, option_choice, option_time_zone, reject_options
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
_MAX_BLOCK_SIZE = 1 << 30
_FIRST_READ = 64 << 10
_PYTHON_BATCH_ROWS = 65536
_BLANK_RE = r"^[\x00-\x20]+$"


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
    encoding: str = "utf-8"
    # The zone of timestamps written without an offset (the `timeZone` option; `spark.read` gives the session's).
    time_zone: str = "UTC"

    @classmethod
    def from_options(cls, options: ReadOptions) -> CsvDialect:
        """Read and check options; raises `ConfigurationError` naming a bad option and what is valid."""
        charset = str(options.get("encoding", options.get("charset", "utf-8")))
        encoding = SPARK_CHARSETS.get("utf-8" if charset.lower() == "utf8" else charset.lower())
        if encoding is None:
            raise ConfigurationError(
                f"CSV option 'encoding' (or 'charset') has invalid value {charset!r}; valid values are "
                f"{', '.join(SPARK_CHARSETS)}, as in Spark (latin-1 is 'iso-8859-1')")
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
            encoding=encoding,
            time_zone=option_time_zone(options, "CSV"),
        )

    def quoting(self) -> Quoting:
        """What shapes records, for the Python reader."""
        return Quoting(self.sep, self.quote, self.escape, self.multiline)


def first_record(path: str, dialect: CsvDialect) -> Record | None:
    """The first non-blank record of a file (the header, or what sets the column count)."""
    return next(records(path, dialect.encoding, dialect.quoting(), first_read=_FIRST_READ), None)


def record_line(path: str, dialect: CsvDialect, number: int) -> int | None:
    """The file line where data record `number` (1-based, header and blank lines not counted) starts."""
    rows = records(path, dialect.encoding, dialect.quoting())
    for i, record in enumerate(rows, start=0 if dialect.header else 1):
        if i == number:
            return record.line
    return None


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
        record = next((r for r in (first_record(f.path, dialect) for f in files) if r is not None), None)
        if record is None:
            return pa.schema([])
        first = record.fields
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
        for text, first in _text_batches(piece.file.path, dialect, len(fields), wanted):
            typed, _ = _typed(text, [fields[i] for i in wanted], dialect, piece.file.path, first)
            yield project_file_batch(typed, schema, columns, partition)

    def _read_with_corrupt_records(
        self, piece: FilePiece, schema: pa.Schema, columns: list[str], partition: dict[str, pa.Scalar],
        dialect: CsvDialect, fields: list[pa.Field], corrupt: pa.Field,
    ) -> Iterator[pa.RecordBatch]:
        """PERMISSIVE reads whose schema holds the `columnNameOfCorruptRecord` column: it is not in the
        file, and holds the record's text where the record had the wrong number of fields or a value
        that does not parse (null elsewhere), as in Spark."""
        data = [f for f in fields if f.name != corrupt.name]
        for text, first in _text_batches(piece.file.path, dialect, len(data), None, keep_malformed=True):
            values = text.select(list(range(len(data))))
            typed, bad = _typed(values, data, dialect, piece.file.path, first)
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
    """String batches of the `wanted` field positions (all when None) with the number of their first
    record (1-based, header not counted); malformed records are padded or truncated (PERMISSIVE),
    dropped (DROPMALFORMED) or raised naming the file and line (FAILFAST). `keep_malformed` adds a
    last column with the text of each malformed record (null for the others)."""
    positions = list(range(width)) if wanted is None else (wanted or [0])
    for batch, first in _record_batches(path, dialect, width, positions):
        malformed = batch.column(len(positions))
        if dialect.mode == "DROPMALFORMED" and malformed.null_count < batch.num_rows:
            batch = batch.filter(pc.is_null(malformed))
        if not keep_malformed:
            batch = batch.select(list(range(len(positions))))
        yield (batch if wanted != [] else batch.select([])), first


class _Fallback(Exception):
    """pyarrow's parse of this file may differ from Spark's: read it with the Python reader."""


class _Straddle(Exception):
    """A record is longer than pyarrow's block: read again with larger blocks."""


def _record_batches(
    path: str, dialect: CsvDialect, width: int, positions: list[int],
) -> Iterator[tuple[pa.RecordBatch, int]]:
    """Every data record of the file, in order: string columns `c<i>` for `positions` and a last
    `malformed` column (the text of a record without `width` fields, which is padded or truncated;
    null for the others), with the number of each batch's first record.

    pyarrow reads while `csv_quoting` confirms that its parse is Spark's; when it is not (or a
    record does not fit in a block), the records not yet given are read again, with larger blocks
    or by the Python reader, so nothing is lost or repeated.
    """
    header = first_record(path, dialect) if width else None
    if header is None:
        return
    done = 0
    # pyarrow skips the header as the file's first row: only where it is exactly the first line.
    fast = not dialect.header or (header.line == 1 and not any(c in header.text for c in "\r\n"))
    block = _BLOCK_SIZE
    while fast:
        try:
            reader = _fast_batches(path, dialect, width, positions, block)
            for batch, first in _unseen(reader, done):
                yield batch, first
                done = first - 1 + batch.num_rows
            return
        except _Straddle:
            block *= 16
            fast = block <= _MAX_BLOCK_SIZE
        except _Fallback:
            fast = False
    for batch, first in _unseen(_python_batches(path, dialect, width, positions), done):
        yield batch, first


def _unseen(batches: Iterator[pa.RecordBatch], done: int) -> Iterator[tuple[pa.RecordBatch, int]]:
    """`batches` without their first `done` records, each with the number of its first record."""
    seen = 0
    for batch in batches:
        start, seen = seen, seen + batch.num_rows
        if seen <= done:
            continue
        if start < done:
            batch, start = batch.slice(done - start), done
        yield batch, start + 1


def _fast_batches(
    path: str, dialect: CsvDialect, width: int, positions: list[int], block: int,
) -> Iterator[pa.RecordBatch]:
    """The records as pyarrow parses them, with `block`-byte blocks. Raises `_Fallback` as soon as
    the bytes read are not ones pyarrow parses as Spark does (or do not decode, or FAILFAST meets a
    malformed record: the Python reader then names its line), `_Straddle` for a record over `block`."""
    check = QuotingCheck(dialect.sep, dialect.quote, dialect.escape, dialect.multiline)
    decoder = None if dialect.encoding == "utf-8" else codecs.getincrementaldecoder(dialect.encoding)("strict")
    trouble: list[str] = []

    def observe(buf: pa.Buffer) -> bytes:
        final = len(buf) == 0
        if trouble or not check.clean:
            return b""
        data = buf.to_pybytes()
        if decoder is not None:
            try:
                data = decoder.decode(data, final).encode("utf-8")
            except UnicodeDecodeError:
                trouble.append("decode")
                return b""
        check.feed(data)
        if final:
            check.finish()
        return data if check.clean else b""

    invalid: deque[tuple[int | None, str | None]] = deque()

    def on_invalid(row: pcsv.InvalidRow) -> str:
        if not dialect.multiline and is_blank(row.text):
            invalid.append((row.number, None))
        else:
            if dialect.mode == "FAILFAST":
                trouble.append("malformed")
            invalid.append((row.number, row.text))
        return "skip"

    def confirm() -> None:
        if trouble or not check.clean:
            raise _Fallback

    names = [f"c{i}" for i in range(width)]
    include = [names[i] for i in positions]
    quoting = dialect.quoting()
    try:
        reader = pcsv.open_csv(
            pa.TransformInputStream(open_input_stream(path), observe),
            read_options=pcsv.ReadOptions(column_names=names, skip_rows=1 if dialect.header else 0,
                                          use_threads=False, block_size=block),
            parse_options=pcsv.ParseOptions(delimiter=dialect.sep, quote_char=dialect.quote or False,
                                            escape_char=False, double_quote=False,
                                            newlines_in_values=dialect.multiline, invalid_row_handler=on_invalid),
            convert_options=pcsv.ConvertOptions(column_types={n: pa.string() for n in names}, include_columns=include,
                                                null_values=sorted({dialect.null_value, ""}), strings_can_be_null=True,
                                                quoted_strings_can_be_null=True),
        )
        number = 2 if dialect.header else 1
        for batch in reader:
            confirm()
            if width == 1 and not dialect.multiline and pc.any(pc.match_substring_regex(batch[0], _BLANK_RE)).as_py():
                raise _Fallback  # a whitespace line, which Spark skips, or a quoted blank value, which it keeps
            batch, number = _put_back(batch, invalid, number, width, positions, dialect, quoting)
            yield batch
        confirm()
        if invalid:
            texts = [text for _, text in invalid if text is not None]
            if texts:
                yield _malformed_rows(texts, width, positions, dialect, quoting)
    except pa.ArrowInvalid as e:
        confirm()
        if "straddl" in str(e) or "out of sync" in str(e):
            raise _Straddle from e
        # Anything else pyarrow refuses (bad UTF-8 among them), the Python reader reports exactly.
        raise _Fallback from e


def _python_batches(path: str, dialect: CsvDialect, width: int, positions: list[int]) -> Iterator[pa.RecordBatch]:
    """The records as the Python reader (Spark's rules) parses them; FAILFAST raises at the first
    record without `width` fields, naming the file and its line."""
    rows = records(path, dialect.encoding, dialect.quoting())
    if dialect.header:
        next(rows, None)
    nulls = {"", dialect.null_value}
    columns: list[list[str | None]] = [[] for _ in positions]
    malformed: list[str | None] = []
    for record in rows:
        fields = record.fields
        if len(fields) != width:
            if dialect.mode == "FAILFAST":
                raise FileReadError(
                    f"Malformed CSV record in {file_uri(path)} at line {record.line}: expected {width} fields, "
                    f"found {len(fields)}: {record.text!r}. Use mode PERMISSIVE or DROPMALFORMED to read it anyway.")
            malformed.append(record.text)
            fields = fields + [""] * (width - len(fields))
        else:
            malformed.append(None)
        for out, i in zip(columns, positions):
            value = fields[i]
            out.append(None if value in nulls else value)
        if len(malformed) == _PYTHON_BATCH_ROWS:
            yield _string_batch(columns, malformed, positions)
            columns, malformed = [[] for _ in positions], []
    if malformed:
        yield _string_batch(columns, malformed, positions)


def _string_batch(columns: list[list[str | None]], malformed: list[str | None], positions: list[int]) -> pa.RecordBatch:
    arrays = [pa.array(c, pa.string()) for c in columns] + [pa.array(malformed, pa.string())]
    return pa.RecordBatch.from_arrays(arrays, names=[*(f"c{i}" for i in positions), "malformed"])


def _put_back(
    batch: pa.RecordBatch, invalid: deque[tuple[int | None, str | None]], number: int, width: int,
    positions: list[int], dialect: CsvDialect, quoting: Quoting,
) -> tuple[pa.RecordBatch, int]:
    """`batch` (whose first row is pyarrow's row `number`) with the malformed rows pyarrow skipped
    (`invalid`, consumed; blank ones, text None, dropped) put back in place and a `malformed`
    column; and pyarrow's number of the row after it."""
    places, texts, taken = [], [], 0
    while invalid:
        row, text = invalid[0]
        before = batch.num_rows if row is None else row - number - taken
        if before > batch.num_rows:
            break
        invalid.popleft()
        taken += 1
        if text is not None:
            places.append(max(before, 0))
            texts.append(text)
    number += batch.num_rows + taken
    batch = batch.append_column("malformed", pa.nulls(batch.num_rows, pa.string()))
    if not texts:
        return batch, number
    extra = _malformed_rows(texts, width, positions, dialect, quoting)
    order, good = [], 0
    for i, place in enumerate(places):
        order.extend(range(good, place))
        good = max(good, place)
        order.append(batch.num_rows + i)
    order.extend(range(good, batch.num_rows))
    table = pa.Table.from_batches([batch, extra]).take(pa.array(order, pa.int64()))
    return table.combine_chunks().to_batches()[0], number


def _malformed_rows(
    texts: list[str], width: int, positions: list[int], dialect: CsvDialect, quoting: Quoting,
) -> pa.RecordBatch:
    """Rows with the wrong field count, padded with nulls or truncated to `width` as Spark does,
    with their text as the `malformed` column."""
    nulls = {"", dialect.null_value}
    columns: list[list[str | None]] = [[] for _ in positions]
    for text in texts:
        fields = parse_text(text, quoting)
        fields = fields + [""] * (width - len(fields))
        for out, i in zip(columns, positions):
            out.append(None if fields[i] in nulls else fields[i])
    return _string_batch(columns, [t.rstrip("\r\n") for t in texts], positions)


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
    text: pa.RecordBatch, fields: list[pa.Field], dialect: CsvDialect, path: str, first: int
) -> tuple[pa.RecordBatch, pa.Array | None]:
    """Parse a string batch into `fields`; unparseable values are null, dropped or raised per mode.
    Also the mask of rows with a value that did not parse (None when all did, or they were dropped)."""
    arrays, bad_rows = [], None
    for column, f in zip(text.columns, fields):
        parsed, bad = parse_text_array(column, f.type, dialect.time_zone)
        if bad is not None:
            if dialect.mode == "FAILFAST":
                row = pc.index(bad, True).as_py()
                line = record_line(path, dialect, first + row)
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
