"""Values written as text (CSV fields, partition folder names): Spark's type inference,
parsing and formatting, done column-at-a-time with pyarrow.compute.

Inference follows Spark's CSV rules: a column is int when every value is an integer that
fits 32 bits, then bigint, decimal(p,0) for longer integers, double, boolean, date
(`yyyy-MM-dd`), timestamp, else string; nulls are ignored and an all-null column is string.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

import pyarrow as pa
import pyarrow.compute as pc

from quiver.engine.core.time_zones import local_to_utc

INT_RE = r"^[+-]?\d+$"
DOUBLE_RE = r"^\s*[+-]?(NaN|Infinity|Inf|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[dDfF]?)\s*$"
DECIMAL_RE = r"^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$"
BOOL_RE = r"(?i)^(true|false)$"
DATE_RE = r"^\d{4}-\d{2}-\d{2}$"
DATE_PREFIX_RE = r"^\s*\d{4}-\d{1,2}-\d{1,2}([T ].*)?$"
TIMESTAMP_RE = (
    r"^\s*\d{4}-\d{1,2}-\d{1,2}([T ]\d{1,2}(:\d{1,2}(:\d{1,2}(\.\d{1,9})?)?)?)?"
    r"(Z|[+-]\d{2}(:?\d{2})?)?\s*$"
)
_ZONE_RE = r"(Z|[+-]\d{2}(:?\d{2})?)\s*$"
_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)
_INT_RANGES = {
    pa.int8(): (-(2**7), 2**7 - 1),
    pa.int16(): (-(2**15), 2**15 - 1),
    pa.int32(): _INT32,
    pa.int64(): _INT64,
}


@dataclass(frozen=True)
class TextKinds:
    """What every non-null value of a text column could be; merged across batches and files."""

    seen: bool = False
    ints: bool = True
    doubles: bool = True
    bools: bool = True
    dates: bool = True
    timestamps: bool = True
    int_min: int | None = None
    int_max: int | None = None
    int_digits: int = 0

    def merge(self, other: TextKinds) -> TextKinds:
        """Kinds that hold for both columns."""
        return TextKinds(
            seen=self.seen or other.seen,
            ints=self.ints and other.ints,
            doubles=self.doubles and other.doubles,
            bools=self.bools and other.bools,
            dates=self.dates and other.dates,
            timestamps=self.timestamps and other.timestamps,
            int_min=_opt(min, self.int_min, other.int_min),
            int_max=_opt(max, self.int_max, other.int_max),
            int_digits=max(self.int_digits, other.int_digits),
        )

    def resolve(self, booleans: bool = True) -> pa.DataType:
        """The narrowest Spark type for the column (boolean only where `booleans`)."""
        if not self.seen:
            return pa.string()
        if self.ints:
            if _INT32[0] <= self.int_min and self.int_max <= _INT32[1]:
                return pa.int32()
            if _INT64[0] <= self.int_min and self.int_max <= _INT64[1]:
                return pa.int64()
            return pa.decimal128(self.int_digits, 0) if self.int_digits <= 38 else pa.float64()
        if self.doubles:
            return pa.float64()
        if self.bools and booleans:
            return pa.bool_()
        if self.dates:
            return pa.date32()
        if self.timestamps:
            return pa.timestamp("us")
        return pa.string()


def _opt(fn, a, b):
    if a is None:
        return b
    if b is None:
        return a
    return fn(a, b)


def _all_match(values: pa.Array, pattern: str) -> bool:
    return bool(pc.all(pc.match_substring_regex(values, pattern), skip_nulls=True).as_py() is not False)


def classify(values: pa.Array) -> TextKinds:
    """The kinds every non-null string in `values` fits."""
    values = _as_string(values).drop_null()
    if len(values) == 0:
        return TextKinds()
    kinds = {
        "ints": _all_match(values, INT_RE),
        "doubles": _all_match(values, DOUBLE_RE),
        "bools": _all_match(values, BOOL_RE),
        "dates": _all_match(values, DATE_RE),
        "timestamps": _all_match(values, TIMESTAMP_RE),
    }
    if not kinds["ints"]:
        return TextKinds(seen=True, **kinds)
    low, high, digits = _int_extent(values)
    return TextKinds(seen=True, int_min=low, int_max=high, int_digits=digits, **kinds)


def _int_extent(values: pa.Array) -> tuple[int, int, int]:
    """Min, max and most significant digits of integer strings, exact even past 64 bits."""
    try:
        as_int = pc.cast(pc.replace_substring_regex(values, r"^\+", ""), pa.int64())
        low, high = pc.min_max(as_int).values()
        return low.as_py(), high.as_py(), len(str(max(abs(low.as_py()), abs(high.as_py()))))
    except (pa.ArrowInvalid, OverflowError):
        ints = [int(v) for v in values.to_pylist()]
        return min(ints), max(ints), max(len(str(abs(i))) for i in ints)


def infer_text_type(values: Iterable[str | None], partition: bool = False) -> pa.DataType:
    """Spark's type for a list of strings; partition values are never inferred as boolean."""
    return classify(pa.array(list(values), pa.string())).resolve(booleans=not partition)


def _as_string(values: pa.Array) -> pa.Array:
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if pa.types.is_null(values.type):
        return pa.nulls(len(values), pa.string())
    if not pa.types.is_string(values.type):
        return values.cast(pa.string())
    return values


def parse_text_array(values: pa.Array, target: pa.DataType, time_zone: str = "UTC") -> tuple[pa.Array, pa.Array | None]:
    """Parse strings into `target` the way Spark casts text; returns (values, mask of bad inputs). A timestamp
    without an offset is a wall-clock time in `time_zone`.

    Unparseable values become null; the mask (None when every value parsed) marks them so
    the caller can apply DROPMALFORMED or FAILFAST.
    """
    values = _as_string(values)
    if pa.types.is_string(target) or pa.types.is_large_string(target):
        return values.cast(target), None
    if pa.types.is_null(target):
        return pa.nulls(len(values)), None
    if pa.types.is_integer(target):
        valid = pc.match_substring_regex(values, INT_RE)
        cleaned = pc.replace_substring_regex(values, r"^\+", "")
        parsed, valid = _cast_valid(cleaned, valid, pa.int64())
        low, high = _INT_RANGES.get(target, _INT64)
        in_range = pc.and_kleene(pc.greater_equal(parsed, low), pc.less_equal(parsed, high))
        valid = pc.and_kleene(valid, in_range)
        parsed = pc.if_else(valid, parsed, pa.scalar(None, pa.int64())).cast(target)
    elif pa.types.is_floating(target):
        valid = pc.match_substring_regex(values, DOUBLE_RE)
        cleaned = pc.replace_substring_regex(pc.utf8_trim_whitespace(values), r"([\d.])[dDfF]$", r"\1")
        parsed, valid = _cast_valid(cleaned, valid, target)
    elif pa.types.is_decimal(target):
        valid = pc.match_substring_regex(values, DECIMAL_RE)
        parsed, valid = _cast_valid(pc.utf8_trim_whitespace(values), valid, target)
    elif pa.types.is_boolean(target):
        valid = pc.match_substring_regex(values, BOOL_RE)
        parsed = pc.if_else(valid, pc.equal(pc.utf8_lower(values), "true"), pa.scalar(None, pa.bool_()))
    elif pa.types.is_date(target):
        valid = pc.match_substring_regex(values, DATE_PREFIX_RE)
        cleaned = pc.utf8_slice_codeunits(_pad_datetime(pc.utf8_trim_whitespace(values)), 0, 10)
        parsed, valid = _cast_valid(cleaned, valid, pa.date32())
        parsed = parsed.cast(target)
    elif pa.types.is_timestamp(target):
        valid = pc.match_substring_regex(values, TIMESTAMP_RE)
        parsed, valid = _parse_timestamps(values, valid, time_zone)
        parsed = parsed.cast(target)
    else:
        raise TypeError(f"values of type {target} cannot be parsed from text")
    bad = pc.and_(pc.is_valid(values), pc.invert(pc.fill_null(valid, False)))
    return parsed, (bad if pc.any(bad).as_py() else None)


def _pad_datetime(values: pa.Array) -> pa.Array:
    """`2024-1-5 1:00` -> `2024-01-05 01:00`: Spark accepts one-digit fields, Arrow does not."""
    values = pc.replace_substring_regex(values, r"^(\d{4})-(\d)-", r"\1-0\2-")
    values = pc.replace_substring_regex(values, r"^(\d{4}-\d{2})-(\d)(\D|$)", r"\1-0\2\3")
    values = pc.replace_substring_regex(values, r"^(\d{4}-\d{2}-\d{2}[T ])(\d)(\D|$)", r"\10\2\3")
    return pc.replace_substring_regex(values, r"(\.\d{6})\d+", r"\1")


def _parse_timestamps(values: pa.Array, valid: pa.Array, time_zone: str = "UTC") -> tuple[pa.Array, pa.Array]:
    cleaned = _pad_datetime(pc.utf8_trim_whitespace(values))
    zoned = pc.fill_null(pc.match_substring_regex(cleaned, r"[T ]\d.*" + _ZONE_RE), False)
    naive_valid = pc.and_(valid, pc.invert(zoned))
    naive, naive_ok = _cast_valid(cleaned, naive_valid, pa.timestamp("us"))
    naive = local_to_utc(naive, time_zone)
    if not pc.any(zoned).as_py():
        return naive, naive_ok
    aware, aware_ok = _cast_valid(cleaned, pc.and_(valid, zoned), pa.timestamp("us", "UTC"))
    aware = aware.cast(pa.timestamp("us"))
    return pc.if_else(zoned, aware, naive), pc.if_else(zoned, aware_ok, naive_ok)


def _cast_valid(values: pa.Array, valid: pa.Array, target: pa.DataType) -> tuple[pa.Array, pa.Array]:
    """Cast the strings `valid` marks; one that still fails (overflow, bad day) becomes null."""
    valid = pc.fill_null(valid, False)
    masked = pc.if_else(valid, values, pa.scalar(None, pa.string()))
    try:
        return pc.cast(masked, target), valid
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        out, ok = [], []
        for value in masked.to_pylist():
            parsed = _cast_one(value, target)
            out.append(parsed)
            ok.append(value is not None and parsed is not None)
        return pa.array(out, target), pa.array(ok, pa.bool_())


def _cast_one(value: str | None, target: pa.DataType):
    if value is None:
        return None
    try:
        if pa.types.is_decimal(target):
            d = Decimal(value)
            q = d.quantize(Decimal(1).scaleb(-target.scale))
            return q if len(q.as_tuple().digits) <= target.precision else None
        return pc.cast(pa.scalar(value), target).as_py()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, InvalidOperation, OverflowError):
        return None


def parse_text_scalar(value: str | None, target: pa.DataType) -> pa.Scalar:
    """One text value parsed as `target` (null when it does not parse)."""
    parsed, _ = parse_text_array(pa.array([value], pa.string()), target)
    return parsed[0]


def format_text_array(values: pa.Array, timestamp_sep: str = "T") -> pa.Array:
    """Spark's text form of each value: `true`, `1.0`, `NaN`, `2024-01-05T10:00:00.5`; nulls stay null."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    t = values.type
    if pa.types.is_dictionary(t):
        return format_text_array(values.dictionary_decode(), timestamp_sep)
    if pa.types.is_string(t):
        return values
    if pa.types.is_large_string(t) or pa.types.is_string_view(t) or pa.types.is_null(t):
        return values.cast(pa.string())
    if pa.types.is_boolean(t):
        return pc.if_else(values, "true", "false")
    if pa.types.is_floating(t):
        text = values.cast(pa.string())
        text = pc.replace_substring_regex(text, r"^(-?\d+)$", r"\1.0")
        text = pc.replace_substring(pc.replace_substring(text, "nan", "NaN"), "inf", "Infinity")
        return text
    if pa.types.is_timestamp(t):
        if t.tz is not None:
            values = values.cast(pa.timestamp(t.unit))
        if t.unit == "s":
            values = values.cast(pa.timestamp("ms"))
        text = pc.strftime(values, format=f"%Y-%m-%d{timestamp_sep}%H:%M:%S")
        return pc.replace_substring_regex(pc.replace_substring_regex(text, r"(\.\d*?)0+$", r"\1"), r"\.$", "")
    if pa.types.is_integer(t) or pa.types.is_decimal(t) or pa.types.is_date(t):
        return values.cast(pa.string())
    raise TypeError(f"values of type {t} have no text form")


def concatenated_bytes(text: pa.Array) -> memoryview:
    """The UTF-8 bytes of every string in `text` back to back, straight from the Arrow buffers."""
    if pa.types.is_large_string(text.type):
        width = 8
    else:
        text = text.cast(pa.string())
        width = 4
    if len(text) == 0:
        return memoryview(b"")
    offsets = text.buffers()[1]
    start = int.from_bytes(offsets[text.offset * width:(text.offset + 1) * width], "little")
    end_at = (text.offset + len(text)) * width
    end = int.from_bytes(offsets[end_at:end_at + width], "little")
    return memoryview(text.buffers()[2])[start:end] if end > start else memoryview(b"")
