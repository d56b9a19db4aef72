"""More of `quiver.functions` (F): hashes, random values, row positions, grouping(), and further
string, math and date functions, with PySpark's signatures. Re-exported by quiver/engine/api/functions/__init__.py.
"""
from __future__ import annotations

import random as _random
from typing import Any

from quiver.engine.api.column import Column
from quiver.engine.api.functions.scalar import ColumnOrName, _call, _col, _cols, _lit


# ---------------------------------------------------------------- hashes

def hash(*cols: ColumnOrName) -> Column:  # noqa: A001 — PySpark's name
    """Spark's Murmur3 hash (x86_32, seed 42) of the columns, as an int."""
    return _call("hash", *_cols("hash", cols, least=1))


def xxhash64(*cols: ColumnOrName) -> Column:
    """Spark's XXH64 hash (seed 42) of the columns, as a bigint."""
    return _call("xxhash64", *_cols("xxhash64", cols, least=1))


def crc32(col: ColumnOrName) -> Column:
    """CRC-32 of a string's or binary's bytes, as a bigint."""
    return _call("crc32", _col(col))


def sha(col: ColumnOrName) -> Column:
    """SHA-1 hex digest (sha1's other name)."""
    return _call("sha", _col(col))


# ---------------------------------------------------------------- random values and row positions

def _seed(seed: Any) -> Any:
    # PySpark picks a random seed when none is given, and the column name shows it
    return _lit(_random.randint(-(1 << 63), (1 << 63) - 1) if seed is None else seed)


def rand(seed: int | None = None) -> Column:
    """Uniform in [0, 1), per partition from seed + partition index (values differ from Spark's)."""
    return _call("rand", _seed(seed))


def randn(seed: int | None = None) -> Column:
    """Standard normal, per partition from seed + partition index (values differ from Spark's)."""
    return _call("randn", _seed(seed))


def monotonically_increasing_id() -> Column:
    """partition index << 33 | row within the partition, as Spark computes it."""
    return _call("monotonically_increasing_id")


def spark_partition_id() -> Column:
    """The index of the partition a row is in."""
    return _call("spark_partition_id")


# ---------------------------------------------------------------- grouping sets

def grouping(col: ColumnOrName) -> Column:
    """1 where `col` is aggregated away in this row's grouping set (rollup, cube), else 0."""
    return _call("grouping", _col(col))


def grouping_id(*cols: ColumnOrName) -> Column:
    """The grouping() bits of the grouping columns (or of `cols`), first column highest."""
    return _call("grouping_id", *_cols("grouping_id", cols))


# ---------------------------------------------------------------- strings

def format_string(format: str, *cols: ColumnOrName) -> Column:  # noqa: A002
    """printf-style formatting (Java's Formatter: %s, %d, %5.2f, %x, %%)."""
    return _call("format_string", _lit(format), *_cols("format_string", cols))


def printf(format: ColumnOrName, *cols: ColumnOrName) -> Column:  # noqa: A002
    return _call("printf", _col(format), *_cols("printf", cols))


def base64(col: ColumnOrName) -> Column:
    return _call("base64", _col(col))


def unbase64(col: ColumnOrName) -> Column:
    return _call("unbase64", _col(col))


def levenshtein(left: ColumnOrName, right: ColumnOrName, threshold: int | None = None) -> Column:
    """Edit distance; with a threshold, -1 where the distance is above it."""
    args = [_col(left), _col(right)] + ([_lit(threshold)] if threshold is not None else [])
    return _call("levenshtein", *args)


def soundex(col: ColumnOrName) -> Column:
    return _call("soundex", _col(col))


def regexp_extract_all(str: ColumnOrName, regexp: ColumnOrName, idx: int | Column | None = None) -> Column:  # noqa: A002
    """Group `idx` (default 1) of every match of a Java regex, as array<string>."""
    args = [_col(str), _col(regexp)] + ([_lit(idx)] if idx is not None else [])
    return _call("regexp_extract_all", *args)


def format_number(col: ColumnOrName, d: int) -> Column:
    """The number with thousands separators and `d` decimal places (HALF_EVEN), e.g. '1,234.50'."""
    return _call("format_number", _col(col), _lit(d))


def substring_index(str: ColumnOrName, delim: str, count: int) -> Column:  # noqa: A002
    """The part before the count-th `delim` (from the end when count is negative)."""
    return _call("substring_index", _col(str), _lit(delim), _lit(count))


def left(str: ColumnOrName, len: ColumnOrName) -> Column:  # noqa: A002
    return _call("left", _col(str), _col(len))


def right(str: ColumnOrName, len: ColumnOrName) -> Column:  # noqa: A002
    return _call("right", _col(str), _col(len))


def split_part(src: ColumnOrName, delimiter: ColumnOrName, partNum: ColumnOrName) -> Column:  # noqa: N803
    """The partNum-th (from 1; negative counts from the end) piece of splitting on a literal delimiter."""
    return _call("split_part", _col(src), _col(delimiter), _col(partNum))


def replace(src: ColumnOrName, search: ColumnOrName, replace: ColumnOrName | None = None) -> Column:
    args = [_col(src), _col(search)] + ([_col(replace)] if replace is not None else [])
    return _call("replace", *args)


# ---------------------------------------------------------------- math

def pmod(dividend: ColumnOrName | float, divisor: ColumnOrName | float) -> Column:
    """The positive remainder of dividend / divisor (null for a zero divisor)."""
    return _call("pmod", _col(dividend), _col(divisor))


def conv(col: ColumnOrName, fromBase: int, toBase: int) -> Column:  # noqa: N803
    """A number written in base `fromBase` rewritten in base `toBase` (a negative toBase is signed)."""
    return _call("conv", _col(col), _lit(fromBase), _lit(toBase))


def bin(col: ColumnOrName) -> Column:  # noqa: A001
    """The binary digits of a bigint (two's complement for negatives)."""
    return _call("bin", _col(col))


def hex(col: ColumnOrName) -> Column:  # noqa: A001
    """Hex digits of a bigint, or of a string's or binary's bytes."""
    return _call("hex", _col(col))


def unhex(col: ColumnOrName) -> Column:
    """The bytes that hex digits spell (null for a non-hex character)."""
    return _call("unhex", _col(col))


# ---------------------------------------------------------------- dates and times

def make_date(year: ColumnOrName, month: ColumnOrName, day: ColumnOrName) -> Column:
    """A date from its fields; null where they name no date."""
    return _call("make_date", _col(year), _col(month), _col(day))


def next_day(date: ColumnOrName, dayOfWeek: str) -> Column:  # noqa: N803
    """The first date after `date` that falls on dayOfWeek ('Mon', 'tuesday', ...)."""
    return _call("next_day", _col(date), _lit(dayOfWeek))


def from_utc_timestamp(timestamp: ColumnOrName, tz: ColumnOrName) -> Column:
    """The UTC wall-clock time `timestamp` shown as the wall-clock time in zone `tz`."""
    return _call("from_utc_timestamp", _col(timestamp), _lit(tz) if isinstance(tz, str) else _col(tz))


def to_utc_timestamp(timestamp: ColumnOrName, tz: ColumnOrName) -> Column:
    """The wall-clock time in zone `tz` shown as the UTC wall-clock time."""
    return _call("to_utc_timestamp", _col(timestamp), _lit(tz) if isinstance(tz, str) else _col(tz))


__all__ = [
    "hash", "xxhash64", "crc32", "sha", "rand", "randn", "monotonically_increasing_id", "spark_partition_id",
    "grouping", "grouping_id", "format_string", "printf", "base64", "unbase64", "levenshtein", "soundex",
    "regexp_extract_all", "format_number", "substring_index", "left", "right", "split_part", "replace", "pmod",
    "conv", "bin", "hex", "unhex", "make_date", "next_day", "from_utc_timestamp", "to_utc_timestamp",
]
