"""The scalar half of `quiver.functions` (F): upper, substring, round, date_add, ... as in PySpark.

Each wrapper builds `Column(ScalarFunction(name, args))` with PySpark's signature and
PySpark's reading of each argument: where PySpark takes a column *or name*, a str is a
column name (`F.startswith("s", "p")` compares two columns); where it takes a pattern,
format, separator or count, a Python value is a literal (`F.regexp_replace(c, "a", "b")`).
Defaults PySpark fills in (round's scale 0, locate's pos 1, split's limit -1) are passed
explicitly so the column names match PySpark's.
"""
from __future__ import annotations

from typing import Any

from quiver.engine.api.column import Column, lit, to_expr
from quiver.engine.core.errors import AnalysisException
from quiver.engine.core.expressions import ScalarFunction

ColumnOrName = Column | str


def _call(name: str, *args: Any) -> Column:
    """`name(args)`; each arg is already an expression (see _col / _lit)."""
    return Column(ScalarFunction(name, tuple(args)))


def _col(value: Any) -> Any:
    """A column or name; other Python values (ints, floats) become literals, as PySpark's `lit` would."""
    return to_expr(value)


def _lit(value: Any) -> Any:
    """A literal; a Column stays a column (PySpark accepts either for patterns and counts)."""
    return lit(value).expr


def _cols(name: str, cols: tuple, least: int = 0) -> tuple:
    if len(cols) == 1 and isinstance(cols[0], (list, tuple)):
        cols = tuple(cols[0])
    if len(cols) < least:
        raise AnalysisException(f"{name} needs at least {least} columns, got {len(cols)}")
    return tuple(_col(c) for c in cols)


# ---------------------------------------------------------------- strings

def upper(col: ColumnOrName) -> Column:
    """Upper case."""
    return _call("upper", _col(col))


def lower(col: ColumnOrName) -> Column:
    """Lower case."""
    return _call("lower", _col(col))


def ucase(str: ColumnOrName) -> Column:  # noqa: A002 — PySpark's parameter name
    return _call("ucase", _col(str))


def lcase(str: ColumnOrName) -> Column:  # noqa: A002
    return _call("lcase", _col(str))


def initcap(col: ColumnOrName) -> Column:
    """First letter of each space-separated word upper case, the rest lower case."""
    return _call("initcap", _col(col))


def _trim(name: str, col: ColumnOrName, trim: ColumnOrName | None) -> Column:
    return _call(name, _col(col)) if trim is None else _call(name, _col(col), _col(trim))


def trim(col: ColumnOrName, trim: ColumnOrName | None = None) -> Column:
    """Strip spaces (or the characters of `trim`, a column or name) from both ends."""
    return _trim("trim", col, trim)


def ltrim(col: ColumnOrName, trim: ColumnOrName | None = None) -> Column:
    return _trim("ltrim", col, trim)


def rtrim(col: ColumnOrName, trim: ColumnOrName | None = None) -> Column:
    return _trim("rtrim", col, trim)


def btrim(str: ColumnOrName, trim: ColumnOrName | None = None) -> Column:  # noqa: A002
    return _trim("btrim", str, trim)


def length(col: ColumnOrName) -> Column:
    """Characters of a string, bytes of a binary."""
    return _call("length", _col(col))


def char_length(str: ColumnOrName) -> Column:  # noqa: A002
    return _call("char_length", _col(str))


def character_length(str: ColumnOrName) -> Column:  # noqa: A002
    return _call("character_length", _col(str))


def octet_length(col: ColumnOrName) -> Column:
    return _call("octet_length", _col(col))


def bit_length(col: ColumnOrName) -> Column:
    return _call("bit_length", _col(col))


def ascii(col: ColumnOrName) -> Column:  # noqa: A001 — PySpark's name
    """Code point of the first character."""
    return _call("ascii", _col(col))


def substring(str: ColumnOrName, pos: ColumnOrName | int, len: ColumnOrName | int) -> Column:  # noqa: A002
    """`len` characters from 1-based `pos` (0 acts as 1; negative counts from the end)."""
    return _call("substring", _col(str), _col(pos), _col(len))


def substr(str: ColumnOrName, pos: ColumnOrName, len: ColumnOrName | None = None) -> Column:  # noqa: A002
    """substring with column (or name) arguments; without `len`, to the end."""
    return _call("substr", _col(str), _col(pos)) if len is None else _call("substr", _col(str), _col(pos), _col(len))


def concat(*cols: ColumnOrName) -> Column:
    """Concatenation; null if any argument is null."""
    return _call("concat", *_cols("concat", cols))


def concat_ws(sep: str, *cols: ColumnOrName) -> Column:
    """Join with `sep`, skipping nulls."""
    return _call("concat_ws", _lit(sep), *_cols("concat_ws", cols))


def regexp_replace(string: ColumnOrName, pattern: str | Column, replacement: str | Column,
                   position: Column | int | None = None) -> Column:
    """Replace every match of a Java regex; `$1` in the replacement is group 1."""
    args = [_col(string), _lit(pattern), _lit(replacement)]
    if position is not None:
        args.append(_lit(position))
    return _call("regexp_replace", *args)


def regexp_extract(str: ColumnOrName, pattern: str, idx: int) -> Column:  # noqa: A002
    """Group `idx` of the first match of a Java regex, '' when it does not match."""
    return _call("regexp_extract", _col(str), _lit(pattern), _lit(idx))


def lpad(col: ColumnOrName, len: Column | int, pad: Column | str) -> Column:  # noqa: A002
    """Left-pad with `pad` (or cut) to `len` characters."""
    return _call("lpad", _col(col), _lit(len), _lit(pad))


def rpad(col: ColumnOrName, len: Column | int, pad: Column | str) -> Column:  # noqa: A002
    """Right-pad with `pad` (or cut) to `len` characters."""
    return _call("rpad", _col(col), _lit(len), _lit(pad))


def instr(str: ColumnOrName, substr: Column | str, start: Any = None, occurrence: Any = None) -> Column:  # noqa: A002
    """1-based position of `substr` (a literal) in the string, 0 if absent."""
    if start is not None or occurrence is not None:
        raise AnalysisException("instr: the start and occurrence arguments are not supported; "
                                "use locate(substr, str, pos) to search from a position")
    return _call("instr", _col(str), _lit(substr))


def locate(substr: str, str: ColumnOrName, pos: int = 1) -> Column:  # noqa: A002
    """1-based position of `substr` in the string at or after `pos`, 0 if absent."""
    return _call("locate", _lit(substr), _col(str), _lit(pos))


def reverse(col: ColumnOrName) -> Column:
    """A string's characters, or an array's elements, reversed."""
    return _call("reverse", _col(col))


def repeat(col: ColumnOrName, n: ColumnOrName | int) -> Column:
    """The string repeated n times."""
    return _call("repeat", _col(col), _col(n))


def translate(srcCol: ColumnOrName, matching: str, replace: str) -> Column:  # noqa: N803 — PySpark's name
    """Replace characters of `matching` by the same-position characters of `replace`."""
    return _call("translate", _col(srcCol), _lit(matching), _lit(replace))


def split(str: ColumnOrName, pattern: Column | str, limit: ColumnOrName | int = -1) -> Column:  # noqa: A002
    """Split around matches of a Java regex into array<string>."""
    return _call("split", _col(str), _lit(pattern), _col(limit))


def startswith(str: ColumnOrName, prefix: ColumnOrName) -> Column:  # noqa: A002
    return _call("startswith", _col(str), _col(prefix))


def endswith(str: ColumnOrName, suffix: ColumnOrName) -> Column:  # noqa: A002
    return _call("endswith", _col(str), _col(suffix))


def contains(left: ColumnOrName, right: ColumnOrName) -> Column:
    return _call("contains", _col(left), _col(right))


def like(str: ColumnOrName, pattern: ColumnOrName, escapeChar: Column | None = None) -> Column:  # noqa: A002,N803
    """SQL LIKE; `pattern` is a column or name (use F.lit for a fixed pattern)."""
    args = [_col(str), _col(pattern)] + ([_lit(escapeChar)] if escapeChar is not None else [])
    return _call("like", *args)


def ilike(str: ColumnOrName, pattern: ColumnOrName, escapeChar: Column | None = None) -> Column:  # noqa: A002,N803
    args = [_col(str), _col(pattern)] + ([_lit(escapeChar)] if escapeChar is not None else [])
    return _call("ilike", *args)


def rlike(str: ColumnOrName, regexp: ColumnOrName) -> Column:  # noqa: A002
    return _call("rlike", _col(str), _col(regexp))


def regexp(str: ColumnOrName, regexp: ColumnOrName) -> Column:  # noqa: A002
    return _call("regexp", _col(str), _col(regexp))


def regexp_like(str: ColumnOrName, regexp: ColumnOrName) -> Column:  # noqa: A002
    return _call("regexp_like", _col(str), _col(regexp))


def md5(col: ColumnOrName) -> Column:
    return _call("md5", _col(col))


def sha1(col: ColumnOrName) -> Column:
    return _call("sha1", _col(col))


def sha2(col: ColumnOrName, numBits: int) -> Column:  # noqa: N803
    """SHA-2 hex digest with 224, 256, 384 or 512 bits (0 means 256)."""
    if numBits not in (0, 224, 256, 384, 512):
        raise ValueError(f"sha2: numBits must be one of 0, 224, 256, 384, 512, got {numBits!r}")
    return _call("sha2", _col(col), _lit(numBits))


# ---------------------------------------------------------------- nulls

def coalesce(*cols: ColumnOrName) -> Column:
    """The first non-null argument."""
    return _call("coalesce", *_cols("coalesce", cols, least=1))


def ifnull(col1: ColumnOrName, col2: ColumnOrName) -> Column:
    return _call("ifnull", _col(col1), _col(col2))


def nvl(col1: ColumnOrName, col2: ColumnOrName) -> Column:
    return _call("nvl", _col(col1), _col(col2))


def nvl2(col1: ColumnOrName, col2: ColumnOrName, col3: ColumnOrName) -> Column:
    """col2 where col1 is not null, else col3."""
    return _call("nvl2", _col(col1), _col(col2), _col(col3))


def nullif(col1: ColumnOrName, col2: ColumnOrName) -> Column:
    """Null where col1 = col2, else col1."""
    return _call("nullif", _col(col1), _col(col2))


def isnull(col: ColumnOrName) -> Column:
    return _call("isnull", _col(col))


def isnotnull(col: ColumnOrName) -> Column:
    return _call("isnotnull", _col(col))


def isnan(col: ColumnOrName) -> Column:
    """True for NaN (false for null)."""
    return _call("isnan", _col(col))


def nanvl(col1: ColumnOrName, col2: ColumnOrName) -> Column:
    """col2 where col1 is NaN, else col1."""
    return _call("nanvl", _col(col1), _col(col2))


# ---------------------------------------------------------------- math

def abs(col: ColumnOrName) -> Column:  # noqa: A001
    return _call("abs", _col(col))


def round(col: ColumnOrName, scale: Column | int | None = None) -> Column:  # noqa: A001
    """HALF_UP rounding to `scale` decimal places (default 0)."""
    return _call("round", _col(col)) if scale is None else _call("round", _col(col), _lit(scale))


def bround(col: ColumnOrName, scale: Column | int | None = None) -> Column:
    """HALF_EVEN rounding to `scale` decimal places (default 0)."""
    return _call("bround", _col(col)) if scale is None else _call("bround", _col(col), _lit(scale))


def _unary(name: str, doc: str):
    def f(col: ColumnOrName) -> Column:
        return _call(name, _col(col))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


sqrt = _unary("sqrt", "Square root.")
cbrt = _unary("cbrt", "Cube root.")
exp = _unary("exp", "e to the power of the value.")
expm1 = _unary("expm1", "exp(x) - 1, precise near 0.")
ln = _unary("ln", "Natural logarithm (null for x <= 0).")
log10 = _unary("log10", "Base-10 logarithm (null for x <= 0).")
log2 = _unary("log2", "Base-2 logarithm (null for x <= 0).")
log1p = _unary("log1p", "ln(1 + x), precise near 0.")
sin = _unary("sin", "Sine.")
cos = _unary("cos", "Cosine.")
tan = _unary("tan", "Tangent.")
asin = _unary("asin", "Arc sine.")
acos = _unary("acos", "Arc cosine.")
atan = _unary("atan", "Arc tangent.")
sinh = _unary("sinh", "Hyperbolic sine.")
cosh = _unary("cosh", "Hyperbolic cosine.")
tanh = _unary("tanh", "Hyperbolic tangent.")
degrees = _unary("degrees", "Radians to degrees.")
radians = _unary("radians", "Degrees to radians.")
signum = _unary("signum", "-1.0, 0.0 or 1.0.")
sign = _unary("sign", "-1.0, 0.0 or 1.0.")


def log(arg1: ColumnOrName | float, arg2: ColumnOrName | None = None) -> Column:
    """log(col) is the natural logarithm; log(base, col) the logarithm in `base`."""
    if arg2 is None:
        return _call("ln", _col(arg1))
    base = float(arg1) if isinstance(arg1, (int, float)) and not isinstance(arg1, bool) else arg1
    return _call("log", _lit(base), _col(arg2))


def _binary_math(value: Any) -> Any:
    """PySpark's binary math functions read a str as a column name and a number as a literal."""
    return _col(value)


def pow(col1: ColumnOrName | float, col2: ColumnOrName | float) -> Column:  # noqa: A001
    """col1 raised to col2."""
    return _call("power", _binary_math(col1), _binary_math(col2))


def power(col1: ColumnOrName | float, col2: ColumnOrName | float) -> Column:
    return _call("power", _binary_math(col1), _binary_math(col2))


def atan2(col1: ColumnOrName | float, col2: ColumnOrName | float) -> Column:
    return _call("atan2", _binary_math(col1), _binary_math(col2))


def hypot(col1: ColumnOrName | float, col2: ColumnOrName | float) -> Column:
    return _call("hypot", _binary_math(col1), _binary_math(col2))


def _rounding(name: str, col: ColumnOrName, scale: Column | int | None) -> Column:
    return _call(name, _col(col)) if scale is None else _call(name, _col(col), _lit(scale))


def floor(col: ColumnOrName, scale: Column | int | None = None) -> Column:
    """Largest integer <= x (bigint), or with `scale` a decimal rounded down."""
    return _rounding("floor", col, scale)


def ceil(col: ColumnOrName, scale: Column | int | None = None) -> Column:
    """Smallest integer >= x (bigint), or with `scale` a decimal rounded up."""
    return _rounding("ceil", col, scale)


def ceiling(col: ColumnOrName, scale: Column | int | None = None) -> Column:
    return _rounding("ceiling", col, scale)


def greatest(*cols: ColumnOrName) -> Column:
    """The largest non-null argument."""
    return _call("greatest", *_cols("greatest", cols, least=2))


def least(*cols: ColumnOrName) -> Column:
    """The smallest non-null argument."""
    return _call("least", *_cols("least", cols, least=2))


# ---------------------------------------------------------------- dates and times

year = _unary("year", "Year of a date or timestamp.")
month = _unary("month", "Month (1-12).")
dayofmonth = _unary("dayofmonth", "Day of the month.")
day = _unary("day", "Day of the month.")
dayofweek = _unary("dayofweek", "Day of the week, 1 = Sunday ... 7 = Saturday.")
dayofyear = _unary("dayofyear", "Day of the year.")
quarter = _unary("quarter", "Quarter (1-4).")
weekofyear = _unary("weekofyear", "ISO week of the year.")
weekday = _unary("weekday", "Day of the week, 0 = Monday ... 6 = Sunday.")
hour = _unary("hour", "Hour of a timestamp.")
minute = _unary("minute", "Minute of a timestamp.")
second = _unary("second", "Second of a timestamp.")


def last_day(date: ColumnOrName) -> Column:
    """The last day of the date's month."""
    return _call("last_day", _col(date))


def date_add(start: ColumnOrName, days: ColumnOrName | int) -> Column:
    """The date `days` days after `start`."""
    return _call("date_add", _col(start), _col(days))


def dateadd(start: ColumnOrName, days: ColumnOrName | int) -> Column:
    return _call("dateadd", _col(start), _col(days))


def date_sub(start: ColumnOrName, days: ColumnOrName | int) -> Column:
    """The date `days` days before `start`."""
    return _call("date_sub", _col(start), _col(days))


def datediff(end: ColumnOrName, start: ColumnOrName) -> Column:
    """Days from `start` to `end`."""
    return _call("datediff", _col(end), _col(start))


def date_diff(end: ColumnOrName, start: ColumnOrName) -> Column:
    return _call("date_diff", _col(end), _col(start))


def add_months(start: ColumnOrName, months: ColumnOrName | int) -> Column:
    """The date `months` months after `start` (clamped to the month's end)."""
    return _call("add_months", _col(start), _col(months))


def months_between(date1: ColumnOrName, date2: ColumnOrName, roundOff: bool = True) -> Column:  # noqa: N803
    """Months from date2 to date1, rounded to 8 digits unless roundOff is False."""
    return _call("months_between", _col(date1), _col(date2), _lit(roundOff))


def to_date(col: ColumnOrName, format: str | None = None) -> Column:  # noqa: A002
    """A date from a string (optionally in a Spark pattern like 'dd/MM/yyyy') or a timestamp."""
    return _call("to_date", _col(col)) if format is None else _call("to_date", _col(col), _lit(format))


def to_timestamp(col: ColumnOrName, format: str | None = None) -> Column:  # noqa: A002
    """A timestamp from a string (optionally in a Spark pattern) or a date."""
    return _call("to_timestamp", _col(col)) if format is None else _call("to_timestamp", _col(col), _lit(format))


def date_format(date: ColumnOrName, format: str) -> Column:  # noqa: A002
    """The date or timestamp printed with a Spark pattern such as 'yyyy-MM-dd HH:mm'."""
    return _call("date_format", _col(date), _lit(format))


def current_date() -> Column:
    return _call("current_date")


def current_timestamp() -> Column:
    return _call("current_timestamp")


def now() -> Column:
    return _call("now")


def date_trunc(format: str, timestamp: ColumnOrName) -> Column:  # noqa: A002
    """The timestamp truncated to 'year', 'quarter', 'month', 'week', 'day', 'hour', ..."""
    return _call("date_trunc", _lit(format), _col(timestamp))


def trunc(date: ColumnOrName, format: str) -> Column:  # noqa: A002
    """The date truncated to 'year', 'quarter', 'month' or 'week'."""
    return _call("trunc", _col(date), _lit(format))


def unix_timestamp(timestamp: ColumnOrName | None = None, format: str = "yyyy-MM-dd HH:mm:ss") -> Column:  # noqa: A002
    """Seconds since the epoch of a timestamp, date or string in `format`; no argument means now."""
    if timestamp is None:
        return _call("unix_timestamp")
    return _call("unix_timestamp", _col(timestamp), _lit(format))


def to_unix_timestamp(timestamp: ColumnOrName, format: ColumnOrName | None = None) -> Column:  # noqa: A002
    if format is None:
        return _call("to_unix_timestamp", _col(timestamp))
    return _call("to_unix_timestamp", _col(timestamp), _col(format))


def from_unixtime(timestamp: ColumnOrName, format: str = "yyyy-MM-dd HH:mm:ss") -> Column:  # noqa: A002
    """Seconds since the epoch as text in `format`."""
    return _call("from_unixtime", _col(timestamp), _lit(format))


# ---------------------------------------------------------------- collections

def size(col: ColumnOrName) -> Column:
    """Elements of an array or map (-1 for null)."""
    return _call("size", _col(col))


def cardinality(col: ColumnOrName) -> Column:
    return _call("cardinality", _col(col))


def array_contains(col: ColumnOrName, value: Any) -> Column:
    """Whether the array holds `value` (a literal, or a Column)."""
    return _call("array_contains", _col(col), _lit(value))


def sort_array(col: ColumnOrName, asc: bool = True) -> Column:
    """Each array sorted ascending (nulls first) or descending (nulls last)."""
    return _call("sort_array", _col(col), _lit(asc))


__all__ = [
    "lit",  # re-exported: quiver/engine/api/functions/__init__.py takes the F namespace from this module's __all__
    "upper", "lower", "ucase", "lcase", "initcap", "trim", "ltrim", "rtrim", "btrim", "length", "char_length",
    "character_length", "octet_length", "bit_length", "ascii", "substring", "substr", "concat", "concat_ws",
    "regexp_replace", "regexp_extract", "lpad", "rpad", "instr", "locate", "reverse", "repeat", "translate",
    "split", "startswith", "endswith", "contains", "like", "ilike", "rlike", "regexp", "regexp_like", "md5",
    "sha1", "sha2", "coalesce", "ifnull", "nvl", "nvl2", "nullif", "isnull", "isnotnull", "isnan", "nanvl",
    "abs", "round", "bround", "sqrt", "cbrt", "exp", "expm1", "ln", "log", "log10", "log2", "log1p", "sin", "cos",
    "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "degrees", "radians", "signum", "sign", "pow",
    "power", "atan2", "hypot", "floor", "ceil", "ceiling", "greatest", "least", "year", "month", "dayofmonth",
    "day", "dayofweek", "dayofyear", "quarter", "weekofyear", "weekday", "hour", "minute", "second", "last_day",
    "date_add", "dateadd", "date_sub", "datediff", "date_diff", "add_months", "months_between", "to_date",
    "to_timestamp", "date_format", "current_date", "current_timestamp", "now", "date_trunc", "trunc",
    "unix_timestamp", "to_unix_timestamp", "from_unixtime", "size", "cardinality", "array_contains", "sort_array",
]
