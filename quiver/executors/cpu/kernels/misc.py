"""CPU kernels for the further string, math and date functions: format_string, base64, levenshtein,
soundex, regexp_extract_all, format_number, substring_index, pmod, conv, bin, hex, unhex, make_date,
next_day, from_utc_timestamp, to_utc_timestamp.
"""
from __future__ import annotations

import base64 as _base64
import datetime as _dt
import decimal
import math
import re
from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from quiver.engine.core import types as T
from quiver.engine.core.errors import QuiverError
from quiver.executors.cpu.kernels.registry import (
    Value, _all_null, _as_array, _length_of, _per_constant, kernel,
)


def _rows(args: list[Value]) -> list[list[Any]]:
    """Each argument as a Python list of the batch's length (literals repeated)."""
    length = _length_of(args)
    return [_as_array(a, length).to_pylist() for a in args]


def _per_row(args: list[Value], fn: Callable[..., Any], out: pa.DataType, nulls_propagate: bool = True) -> pa.Array:
    """fn over each row's Python values; a null argument gives null unless `nulls_propagate` is off."""
    columns = _rows(args)
    results = []
    for values in zip(*columns):
        results.append(None if nulls_propagate and any(v is None for v in values) else fn(*values))
    return pa.array(results, out)


# ---------------------------------------------------------------- format_string / printf

_JAVA_SPEC = re.compile(r"%(?:(\d+)\$)?([-#+ 0,(<]*)(\d+)?(?:\.(\d+))?([a-zA-Z%])")


def _java_text(value: Any) -> str:
    """A value as Java's String.valueOf prints it (what %s shows)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _java_double(value)
    if isinstance(value, bytes):
        return "[B@" + format(id(value) & 0xFFFFFF, "x")
    return str(value)


def _java_double(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0:
        return "-0.0" if math.copysign(1, v) < 0 else "0.0"
    if 1e-3 <= abs(v) < 1e7:
        text = repr(v)
        return text if "." in text or "e" in text else text + ".0"
    _, digits, exponent = decimal.Decimal(repr(abs(v))).as_tuple()
    shown = "".join(map(str, digits)).rstrip("0") or "0"
    scientific = len(digits) + exponent - 1
    text = shown[0] + "." + (shown[1:] or "0") + "E" + str(scientific)
    return ("-" if v < 0 else "") + text


def java_format(fmt: str, values: list[Any], widths: list[int] | None = None) -> str:
    """Java's String.format for the common conversions: s S d x X o f e E g b c n %.

    `widths` gives each integer argument's bits (32 for an int), which %x and %o show negatives in."""
    out, pos, next_arg = [], 0, 0
    for m in _JAVA_SPEC.finditer(fmt):
        out.append(fmt[pos:m.start()])
        pos = m.end()
        index, flags, width, precision, conv = m.groups()
        if conv == "%":
            out.append("%")
            continue
        if conv == "n":
            out.append("\n")
            continue
        if index is not None:
            arg_i = int(index) - 1
        elif "<" in flags:
            arg_i = max(next_arg - 1, 0)
        else:
            arg_i, next_arg = next_arg, next_arg + 1
        if arg_i >= len(values):
            raise QuiverError(f"format_string: the format {fmt!r} needs more arguments than the {len(values)} given")
        value = values[arg_i]
        flags = flags.replace("<", "")
        text = _convert(conv, flags, precision, value, arg_i, widths)
        if width is not None and len(text) < int(width):
            pad = int(width) - len(text)
            if "-" in flags:
                text = text + " " * pad
            elif "0" in flags and conv in "dxXofeEg" and value is not None and not (
                    isinstance(value, float) and not math.isfinite(value)):
                sign = text[0] if text[:1] in "+- " else ""
                text = sign + "0" * pad + text[len(sign):]
            else:
                text = " " * pad + text
        out.append(text)
    out.append(fmt[pos:])
    return "".join(out)


def _convert(conv: str, flags: str, precision: str | None, value: Any, arg_i: int = 0,
             widths: list[int] | None = None) -> str:
    if conv in "sS":
        text = _java_text(value)
        if precision is not None:
            text = text[: int(precision)]
        return text.upper() if conv == "S" else text
    if conv in "bB":
        text = "false" if value is None or value is False else "true"
        return text.upper() if conv == "B" else text
    if value is None:
        return "null"[: int(precision)] if precision is not None else "null"
    if conv == "c":
        return chr(value) if isinstance(value, int) else str(value)[:1]
    if conv == "d":
        if not isinstance(value, (int, decimal.Decimal)) or isinstance(value, bool):
            raise QuiverError(f"format_string: %d cannot format {value!r} ({type(value).__name__})")
        spec = ("," if "," in flags else "") + "d"
        text = format(int(value), spec)
    elif conv in "xXo":
        if not isinstance(value, int) or isinstance(value, bool):
            raise QuiverError(f"format_string: %{conv} cannot format {value!r}")
        bits = widths[arg_i] if widths else 64
        text = format(value if value >= 0 else value & ((1 << bits) - 1), "o" if conv == "o" else "x")
        text = text.upper() if conv == "X" else text
        return text
    else:
        if not isinstance(value, (float, int, decimal.Decimal)) or isinstance(value, bool):
            raise QuiverError(f"format_string: %{conv} cannot format {value!r} ({type(value).__name__})")
        p = 6 if precision is None else int(precision)
        if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
            return _java_double(value)
        number = decimal.Decimal(value) if not isinstance(value, decimal.Decimal) else value
        if conv == "f":
            text = format(number.quantize(decimal.Decimal(1).scaleb(-p), rounding=decimal.ROUND_HALF_UP),
                          ("," if "," in flags else "") + f".{p}f")
        elif conv in "eE":
            text = format(float(value), f".{p}e")
            text = text.upper() if conv == "E" else text
        else:
            text = format(float(value), f".{p}g")
    if "+" in flags and not text.startswith("-"):
        text = "+" + text
    elif " " in flags and not text.startswith("-"):
        text = " " + text
    if "(" in flags and text.startswith("-"):
        text = "(" + text[1:] + ")"
    return text


@kernel("format_string", "printf", data="all")
def format_string(args: list[Value], rt: T.DataType) -> Value:
    """Java-style printf formatting; null only when the format is null."""
    columns = _rows(args)
    widths = [a.type.bit_width if pa.types.is_integer(a.type) else 64 for a in args[1:]]
    out = [None if row[0] is None else java_format(row[0], list(row[1:]), widths) for row in zip(*columns)]
    return pa.array(out, pa.string())


# ---------------------------------------------------------------- base64, hex, bin, conv

@kernel("base64")
def base64(args: list[Value], rt: T.DataType) -> Value:
    return _per_row([args[0].cast(pa.binary())], lambda b: _base64.b64encode(b).decode("ascii"), pa.string())


def _unbase64(text: str) -> bytes | None:
    cleaned = re.sub(r"\s", "", text)
    cleaned += "=" * (-len(cleaned) % 4)
    try:
        return _base64.b64decode(cleaned, validate=True)
    except ValueError:
        return None


@kernel("unbase64")
def unbase64(args: list[Value], rt: T.DataType) -> Value:
    return _per_row([args[0]], _unbase64, pa.binary())


_MASK64 = (1 << 64) - 1


@kernel("bin")
def bin_(args: list[Value], rt: T.DataType) -> Value:
    """Long.toBinaryString: two's complement bits for a negative number."""
    return _per_row([args[0]], lambda v: format(v & _MASK64, "b"), pa.string())


@kernel("hex")
def hex_(args: list[Value], rt: T.DataType) -> Value:
    """Upper-case hex of a bigint (two's complement), or of a string's or binary's bytes."""
    value = args[0]
    if pa.types.is_integer(value.type):
        return _per_row([value], lambda v: format(v & _MASK64, "X"), pa.string())
    return _per_row([value.cast(pa.binary())], lambda b: b.hex().upper(), pa.string())


def _unhex(text: str) -> bytes | None:
    if len(text) % 2:
        text = "0" + text
    try:
        return bytes.fromhex(text) if re.fullmatch(r"[0-9a-fA-F]*", text) else None
    except ValueError:
        return None


@kernel("unhex")
def unhex(args: list[Value], rt: T.DataType) -> Value:
    return _per_row([args[0]], _unhex, pa.binary())


_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def spark_conv(text: str, from_base: int, to_base: int) -> str | None:
    """Spark's NumberConverter: unsigned 64-bit arithmetic, parsing up to the first invalid digit."""
    if not (2 <= abs(from_base) <= 36 and 2 <= abs(to_base) <= 36):
        return None
    negative = text.startswith("-")
    value = 0
    for ch in text[1:] if negative else text:
        digit = _DIGITS.find(ch.upper())
        if digit < 0 or digit >= abs(from_base):
            break
        value = value * abs(from_base) + digit
        if value > _MASK64:
            value = _MASK64
            break
    if negative and to_base > 0:
        value = _MASK64 if value == _MASK64 else (-value) & _MASK64
    signed_negative = to_base < 0 and (value >= 1 << 63 or negative)
    if to_base < 0 and negative:
        magnitude = value
    elif signed_negative:
        magnitude = (1 << 64) - value
    else:
        magnitude = value
    base, digits = abs(to_base), []
    while True:
        magnitude, r = divmod(magnitude, base)
        digits.append(_DIGITS[r])
        if magnitude == 0:
            break
    return ("-" if signed_negative else "") + "".join(reversed(digits))


@kernel("conv", data="all")
def conv(args: list[Value], rt: T.DataType) -> Value:
    return _per_row(args, spark_conv, pa.string())


# ---------------------------------------------------------------- pmod

@kernel("pmod", data="all")
def pmod(args: list[Value], rt: T.DataType) -> Value:
    """a mod n, made positive: r = a % n; (r + n) % n where r < 0; null for n = 0."""
    length = _length_of(args)
    out_type = rt.to_arrow()
    a, n = (_as_array(x, length).cast(out_type) for x in args)
    if pa.types.is_decimal(out_type):
        def java_mod(x: decimal.Decimal, y: decimal.Decimal) -> decimal.Decimal | None:
            if y == 0:
                return None
            r = x % y  # Decimal's % keeps the dividend's sign, as Java's
            return (r + y) % y if r < 0 else r
        return _per_row([a, n], java_mod, out_type)
    nulls = pc.or_(pc.is_null(a), pc.is_null(n))
    zero = pc.fill_null(pc.equal(n, pa.scalar(0, out_type)), False)
    av = a.fill_null(0).to_numpy(zero_copy_only=False)
    nv = n.fill_null(1).to_numpy(zero_copy_only=False)
    nv = np.where(zero.to_numpy(zero_copy_only=False), np.ones(1, nv.dtype), nv)
    with np.errstate(invalid="ignore"):
        if pa.types.is_floating(out_type):
            r = np.fmod(av, nv)
            r = np.where(r < 0, np.fmod(r + nv, nv), r)
        else:
            r = np.fmod(av, nv)
            r = np.where(r < 0, np.fmod(r + nv, nv), r).astype(av.dtype)
    mask = pc.or_(nulls, zero).to_numpy(zero_copy_only=False)
    return pa.array(r, out_type, mask=mask)


# ---------------------------------------------------------------- more strings

def _levenshtein(a: str, b: str, threshold: int | None = None) -> int:
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    distance = previous[-1]
    return -1 if threshold is not None and distance > threshold else distance


@kernel("levenshtein", data="all")
def levenshtein(args: list[Value], rt: T.DataType) -> Value:
    """Edit distance; with a threshold, -1 where it is larger."""
    return _per_row(args, _levenshtein, pa.int32())


_SOUNDEX = "01230127022455012623017202"


def _soundex(text: str) -> str:
    """Spark's soundex: the input unchanged unless it starts with an ASCII letter; H and W do not separate codes."""
    if not text:
        return ""
    first = text[0].upper()
    if not ("A" <= first <= "Z"):
        return text
    out, last = [first], _SOUNDEX[ord(first) - 65]
    for ch in text[1:]:
        c = ch.upper()
        if not ("A" <= c <= "Z"):
            continue
        code = _SOUNDEX[ord(c) - 65]
        if code == "7":
            continue
        if code != "0" and code != last:
            out.append(code)
            if len(out) > 3:
                break
        last = code
    return "".join(out).ljust(4, "0")


@kernel("soundex")
def soundex(args: list[Value], rt: T.DataType) -> Value:
    return _per_row([args[0]], _soundex, pa.string())


@kernel("regexp_extract_all")
def regexp_extract_all(args: list[Value], rt: T.DataType) -> Value:
    """Group `idx` of every match, as an array (null group -> '')."""
    params = args[1:] + ([pa.scalar(1, pa.int32())] if len(args) < 3 else [])

    def apply(d: list[pa.Array], consts: list[Any]) -> pa.Array:
        pattern, idx = consts
        try:
            regex = re.compile(pattern)
        except re.error as err:
            raise QuiverError(f"regexp_extract_all: {pattern!r} is not a valid regex: {err}") from err
        if idx < 0 or idx > regex.groups:
            raise QuiverError(f"regexp_extract_all: the regex {pattern!r} has {regex.groups} groups, so the "
                              f"group index must be between 0 and {regex.groups}, not {idx}")
        out = [None if s is None else [m.group(idx) or "" for m in regex.finditer(s)] for s in d[0].to_pylist()]
        return pa.array(out, pa.list_(pa.string()))
    return _per_constant([args[0]], params, apply, pa.list_(pa.string()))


def _format_number(value: Any, places: Any) -> str | None:
    if isinstance(places, str):
        raise QuiverError("format_number: a format pattern is not supported; pass the number of decimal places")
    if places < 0:
        return None
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "\u221e" if value > 0 else "-\u221e"
    number = decimal.Decimal(value)
    rounded = number.quantize(decimal.Decimal(1).scaleb(-places), rounding=decimal.ROUND_HALF_EVEN)
    text = format(rounded, f",.{places}f")
    if isinstance(value, float) and math.copysign(1.0, value) < 0 and not text.startswith("-"):
        text = "-" + text
    return text


@kernel("format_number", data="all")
def format_number(args: list[Value], rt: T.DataType) -> Value:
    """'#,###,##0.00'-style text with `d` places, rounded HALF_EVEN (Java's DecimalFormat)."""
    return _per_row(args, _format_number, pa.string())


def _substring_index(text: str, delim: str, count: int) -> str:
    if count == 0 or delim == "":
        return ""
    if count > 0:
        parts = text.split(delim)
        return delim.join(parts[:count]) if len(parts) > count else text
    parts = text.split(delim)
    return delim.join(parts[count:]) if len(parts) > -count else text


@kernel("substring_index", data="all")
def substring_index(args: list[Value], rt: T.DataType) -> Value:
    return _per_row(args, _substring_index, pa.string())


@kernel("left", data="all")
def left(args: list[Value], rt: T.DataType) -> Value:
    return _per_row(args, lambda s, n: s[:n] if n > 0 else "", pa.string())


@kernel("right", data="all")
def right(args: list[Value], rt: T.DataType) -> Value:
    return _per_row(args, lambda s, n: s[-n:] if n > 0 else "", pa.string())


def _split_part(text: str, delim: str, part: int) -> str:
    if part == 0:
        raise QuiverError("split_part: the part number must not be 0 (parts count from 1, or from -1 at the end)")
    pieces = [text] if delim == "" else text.split(delim)
    index = part - 1 if part > 0 else len(pieces) + part
    return pieces[index] if 0 <= index < len(pieces) else ""


@kernel("split_part", data="all")
def split_part(args: list[Value], rt: T.DataType) -> Value:
    return _per_row(args, _split_part, pa.string())


@kernel("replace", data="all")
def replace(args: list[Value], rt: T.DataType) -> Value:
    """Every occurrence of `search` replaced (removed without a replacement); an empty search changes nothing."""
    if len(args) == 2:
        args = list(args) + [pa.scalar("", pa.string())]
    return _per_row(args, lambda s, f, r: s if f == "" else s.replace(f, r), pa.string())


# ---------------------------------------------------------------- dates and times

def _make_date(y: int, m: int, d: int) -> _dt.date | None:
    try:
        return _dt.date(y, m, d)
    except (ValueError, OverflowError):
        return None


@kernel("make_date", data="all")
def make_date(args: list[Value], rt: T.DataType) -> Value:
    """A date from year, month and day; null where they name no date (Spark's non-ANSI result)."""
    return _per_row(args, _make_date, pa.date32())


_WEEKDAYS = {"MO": 0, "MON": 0, "MONDAY": 0, "TU": 1, "TUE": 1, "TUESDAY": 1, "WE": 2, "WED": 2,
             "WEDNESDAY": 2, "TH": 3, "THU": 3, "THURSDAY": 3, "FR": 4, "FRI": 4, "FRIDAY": 4,
             "SA": 5, "SAT": 5, "SATURDAY": 5, "SU": 6, "SUN": 6, "SUNDAY": 6}


@kernel("next_day")
def next_day(args: list[Value], rt: T.DataType) -> Value:
    """The first later date on the given day of the week; null for an unknown day name."""
    def apply(d: list[pa.Array], consts: list[Any]) -> pa.Array:
        target = _WEEKDAYS.get(str(consts[0]).strip().upper())
        if target is None:
            return _all_null(len(d[0]), T.DateType())
        days = d[0].view(pa.int32()).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        weekday = (days + 3) % 7  # 1970-01-01 was a Thursday
        moved = days + (target - weekday - 1) % 7 + 1
        return pa.array(moved.astype(np.int32), pa.int32(), mask=d[0].is_null().to_numpy(zero_copy_only=False)
                        ).view(pa.date32())
    return _per_constant([args[0]], [args[1]], apply, pa.date32())


def _zone(name: str) -> Any:
    m = re.fullmatch(r"(?:UTC|GMT)?([+-])(\d{1,2}):?(\d{2})?", name.strip())
    if m:
        sign = 1 if m.group(1) == "+" else -1
        return _dt.timezone(sign * _dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3) or 0)))
    import zoneinfo

    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as err:
        raise QuiverError(f"unknown time zone {name!r}; use a region such as 'America/New_York' or an "
                          "offset such as '+08:00'") from err


def _shift_zone(stamps: pa.Array, zone_name: str, to_utc: bool) -> pa.Array:
    import pandas as pd

    zone = _zone(zone_name)
    micros = stamps.view(pa.int64()) if pa.types.is_timestamp(stamps.type) else stamps
    series = pd.Series(pd.to_datetime(micros.fill_null(0).to_numpy(zero_copy_only=False), unit="us"))
    if to_utc:
        local = series.dt.tz_localize(zone, ambiguous=np.ones(len(series), bool),
                                      nonexistent=pd.Timedelta(hours=1))
        shifted = local.dt.tz_convert("UTC").dt.tz_localize(None)
    else:
        shifted = series.dt.tz_localize("UTC").dt.tz_convert(zone).dt.tz_localize(None)
    values = shifted.to_numpy().astype("datetime64[us]").astype(np.int64)
    return pa.array(values, pa.int64(), mask=stamps.is_null().to_numpy(zero_copy_only=False)).view(pa.timestamp("us"))


@kernel("from_utc_timestamp")
def from_utc_timestamp(args: list[Value], rt: T.DataType) -> Value:
    """The UTC wall-clock time shown as the wall-clock time of the zone."""
    return _per_constant([args[0]], [args[1]], lambda d, c: _shift_zone(d[0], c[0], False), rt.to_arrow())


@kernel("to_utc_timestamp")
def to_utc_timestamp(args: list[Value], rt: T.DataType) -> Value:
    """The zone's wall-clock time shown as the UTC wall-clock time."""
    return _per_constant([args[0]], [args[1]], lambda d, c: _shift_zone(d[0], c[0], True), rt.to_arrow())


@kernel("grouping", "grouping_id", data="all")
def grouping(args: list[Value], rt: T.DataType) -> Value:
    """Only meaningful under grouping sets, where quiver/engine/analysis/grouping_sets.py replaces it before execution."""
    raise QuiverError("grouping() and grouping_id() can only be used with rollup(), cube(), groupingSets() "
                      "or GROUP BY ROLLUP / CUBE / GROUPING SETS")
