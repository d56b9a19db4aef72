"""Spark's datetime text, vectorised on Arrow: the strings CAST accepts, and `yyyy-MM-dd` patterns.

Spark parses and prints with java.time semantics that neither `strptime` nor Arrow's
`strftime` reproduce (one- or two-digit fields, 1970 defaults, `S` fractions, zone
suffixes), so text is split into fields with one RE2 regex per pattern and the fields
are combined with calendar arithmetic in numpy. Timestamps are wall-clock microseconds
in the session time zone, which Quiver fixes at UTC.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from quiver.engine.core.conf import normalize_time_zone
from quiver.engine.core.errors import QuiverError
from quiver.engine.core.time_zones import local_to_utc_micros

MICROS_PER_SECOND = 1_000_000
MICROS_PER_DAY = 86_400 * MICROS_PER_SECOND

# Java's String.trim plus the Unicode spaces Character.isWhitespace knows: what Spark strips
# from text before casting it.
_SPACE = r"[\x00-\x20\x7f-\x9f\x{1680}\x{2000}-\x{2006}\x{2008}-\x{200a}\x{2028}\x{2029}\x{205f}\x{3000}]"
_TRIM = f"^{_SPACE}+|{_SPACE}+$"

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def trim_spaces(strings: pa.Array) -> pa.Array:
    """Strip the whitespace and control characters Spark ignores around a value cast from text."""
    return pc.replace_substring_regex(strings, _TRIM, "")


# ---------------------------------------------------------------- calendar arithmetic

def days_from_civil(year: np.ndarray, month: np.ndarray, day: np.ndarray) -> np.ndarray:
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm), vectorised."""
    y = year - (month <= 2)
    era = np.floor_divide(y, 400)
    yoe = y - era * 400
    mp = (month + 9) % 12
    doy = (153 * mp + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def civil_from_days(days: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(year, month, day) of days since 1970-01-01, the inverse of `days_from_civil`."""
    z = days.astype(np.int64) + 719468
    era = np.floor_divide(z, 146097)
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = np.where(mp < 10, mp + 3, mp - 9)
    year = yoe + era * 400 + (month <= 2)
    return year, month, day


def is_leap(year: np.ndarray) -> np.ndarray:
    return ((year % 4 == 0) & (year % 100 != 0)) | (year % 400 == 0)


def days_in_month(year: np.ndarray, month: np.ndarray) -> np.ndarray:
    """Length of each month, February by the proleptic Gregorian leap rule."""
    lengths = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])
    m = np.clip(month, 1, 12)
    return lengths[m - 1] + ((m == 2) & is_leap(year))


def _date_array(days: np.ndarray, valid: np.ndarray) -> pa.Array:
    return pa.array(days.astype(np.int32), pa.date32(), mask=~valid)


def _timestamp_array(micros: np.ndarray, valid: np.ndarray) -> pa.Array:
    return pa.array(micros.astype(np.int64), pa.timestamp("us"), mask=~valid)


# ---------------------------------------------------------------- regex fields

def _fields(strings: pa.Array, regex: str) -> tuple[pa.StructArray, np.ndarray]:
    """Named groups of `regex` matched against the whole of each string, and which rows matched."""
    struct = pc.extract_regex(strings, regex)
    valid = np.asarray(struct.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    return struct, valid


def _number(struct: pa.StructArray, name: str, default: int) -> np.ndarray:
    """The integer in group `name`; `default` where the group is empty or the row did not match."""
    text = struct.field(name)
    text = pc.if_else(pc.equal(text, ""), pa.scalar(None, pa.string()), text)
    return pc.fill_null(pc.cast(text, pa.int64()), default).to_numpy(zero_copy_only=False)


def _fraction_micros(struct: pa.StructArray, name: str) -> np.ndarray:
    """Microseconds of a fraction-of-second group: first six digits, right-padded with zeros."""
    text = pc.utf8_rpad(pc.utf8_slice_codeunits(struct.field(name), 0, 6), 6, "0")
    return pc.fill_null(pc.cast(text, pa.int64()), 0).to_numpy(zero_copy_only=False)


_ZONE_OFFSET = (r"^(?:(?:UTC|GMT|UT)?(?P<sign>[+-])(?P<h>\d{1,2})(?::?(?P<m>\d{2}))?(?::?(?P<s>\d{2}))?"
                r"|(?P<utc>Z|UTC|GMT|UT))$")


def _zone_offsets(zones: pa.Array, local_micros: np.ndarray, valid: np.ndarray,
                  default_zone: str = "UTC") -> tuple[np.ndarray, np.ndarray]:
    """UTC micros of local times given each row's zone text ('' = `default_zone`, the session's), and the rows
    still valid.

    Offsets ('Z', '+01:00', 'GMT+1') are vectorised; region ids ('Europe/Paris'), the default zone's among them,
    are resolved once per distinct id by Arrow's tz database, by Java's rules for repeated and skipped times
    (core/time_zones.py).
    """
    zones = pc.utf8_trim_whitespace(pc.fill_null(zones, ""))
    present = pc.not_equal(zones, "").to_numpy(zero_copy_only=False) & valid
    out = local_to_utc_micros(local_micros, default_zone)
    if not present.any():
        return out, valid
    struct, fixed = _fields(zones, _ZONE_OFFSET)
    hours, minutes, seconds = _number(struct, "h", 0), _number(struct, "m", 0), _number(struct, "s", 0)
    sign = np.where(pc.equal(struct.field("sign"), "-").to_numpy(zero_copy_only=False), -1, 1)
    offset = sign * (hours * 3600 + minutes * 60 + seconds) * MICROS_PER_SECOND
    fixed &= (hours <= 18) & (minutes < 60) & (seconds < 60)
    out = np.where(present & fixed, local_micros - offset, out)
    ok = valid & (~present | fixed)
    regions = present & ~fixed
    if regions.any():
        names = np.asarray(zones.to_pylist(), dtype=object)
        for name in set(names[regions]):
            rows = regions & (names == name)
            zone = normalize_time_zone(name)
            if zone is None:
                ok[rows] = False
                continue
            out[rows] = local_to_utc_micros(local_micros[rows], zone)
            ok[rows] = True
    return out, ok


# ---------------------------------------------------------------- CAST(string AS DATE/TIMESTAMP)

_CAST_DATE = r"(?s)^(?P<sign>[+-]?)(?P<y>\d{4,7})(?:-(?P<mo>\d{1,2})(?:-(?P<d>\d{1,2})(?:[ T].*)?)?)?$"
_CAST_TIMESTAMP = (
    r"(?s)^(?P<sign>[+-]?)(?P<y>\d{4,6})(?:-(?P<mo>\d{1,2})(?:-(?P<d>\d{1,2})"
    r"(?:[ T](?P<h>\d{1,2})(?::(?P<mi>\d{1,2})(?::(?P<s>\d{1,2})(?:\.(?P<f>\d*))?)?)?(?P<z>.*))?)?)?$"
)
_CAST_TIME_ONLY = (r"(?s)^T?(?P<h>\d{1,2}):(?P<mi>\d{1,2})(?::(?P<s>\d{1,2})(?:\.(?P<f>\d*))?)?(?P<z>.*)$")


def parse_date(strings: pa.Array) -> pa.Array:
    """CAST(string AS DATE): 'yyyy', 'yyyy-[m]m', 'yyyy-[m]m-[d]d' with anything after ' ' or 'T'; else null."""
    struct, valid = _fields(trim_spaces(strings), _CAST_DATE)
    year, month, day = _number(struct, "y", 1970), _number(struct, "mo", 1), _number(struct, "d", 1)
    year = np.where(pc.equal(struct.field("sign"), "-").to_numpy(zero_copy_only=False), -year, year)
    valid &= (month >= 1) & (month <= 12) & (day >= 1) & (day <= days_in_month(year, month))
    return _date_array(np.where(valid, days_from_civil(year, month, day), 0), valid)


def parse_timestamp(strings: pa.Array, today_days: int | None = None, default_zone: str = "UTC") -> pa.Array:
    """CAST(string AS TIMESTAMP): a date, optionally ' '/'T' and [h]h[:[m]m[:[s]s[.ffffff]]] and a zone; a string
    without a zone is a wall-clock time in `default_zone` (the session's).

    A bare time ('10:00:00', 'T10:00') is taken on the current date, as Spark does.
    """
    text = trim_spaces(strings)
    struct, valid = _fields(text, _CAST_TIMESTAMP)
    year, month, day = _number(struct, "y", 1970), _number(struct, "mo", 1), _number(struct, "d", 1)
    year = np.where(pc.equal(struct.field("sign"), "-").to_numpy(zero_copy_only=False), -year, year)
    days = days_from_civil(year, month, day)
    valid &= (month >= 1) & (month <= 12) & (day >= 1) & (day <= days_in_month(year, month))
    zones = struct.field("z")
    timed_struct = struct
    time_only_struct, time_only = _fields(text, _CAST_TIME_ONLY)
    time_only &= ~valid
    if time_only.any():
        today = today_days if today_days is not None else _today_days()
        days = np.where(time_only, today, days)
        valid |= time_only
        timed_struct = _merge_struct(struct, time_only_struct, time_only, ("h", "mi", "s", "f", "z"))
        zones = timed_struct.field("z")
    hour, minute, second = (_number(timed_struct, g, 0) for g in ("h", "mi", "s"))
    valid &= (hour < 24) & (minute < 60) & (second < 60)
    local = days * MICROS_PER_DAY + ((hour * 60 + minute) * 60 + second) * MICROS_PER_SECOND
    local = local + _fraction_micros(timed_struct, "f")
    micros, valid = _zone_offsets(zones, np.where(valid, local, 0), valid, default_zone)
    return _timestamp_array(micros, valid)


def _merge_struct(base: pa.StructArray, other: pa.StructArray, take_other: np.ndarray,
                  names: tuple[str, ...]) -> pa.StructArray:
    mask = pa.array(take_other)
    fields = [pc.if_else(mask, other.field(n), base.field(n)) for n in names]
    return pa.StructArray.from_arrays(fields, names=list(names))


def _today_days() -> int:
    now = datetime.now(timezone.utc)
    return int(days_from_civil(np.array([now.year]), np.array([now.month]), np.array([now.day]))[0])


# ---------------------------------------------------------------- Spark datetime patterns

@dataclass(frozen=True)
class _Token:
    letter: str  # '' for literal text
    count: int
    text: str = ""


_PATTERN_LETTERS = set("GyuMLdDQqEeaHhkKmsSXxZzVO")


def tokenize(pattern: str, function: str) -> list[_Token]:
    """Split a Spark datetime pattern into letter runs and literal text ('' quotes a quote)."""
    tokens: list[_Token] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "'":
            end = i + 1
            text = []
            while end < len(pattern):
                if pattern[end] == "'":
                    if end + 1 < len(pattern) and pattern[end + 1] == "'":
                        text.append("'")
                        end += 2
                        continue
                    break
                text.append(pattern[end])
                end += 1
            if end >= len(pattern) and not (i + 1 < len(pattern) and pattern[i + 1] == "'"):
                raise QuiverError(f"{function}: unterminated quote in datetime pattern {pattern!r}")
            tokens.append(_Token("", 0, "'" if end == i + 1 else "".join(text)))
            i = end + 1
        elif ch.isascii() and ch.isalpha():
            j = i
            while j < len(pattern) and pattern[j] == ch:
                j += 1
            if ch not in _PATTERN_LETTERS:
                raise QuiverError(
                    f"{function}: pattern letter {ch!r} in {pattern!r} is not a Spark datetime pattern letter; "
                    f"valid letters are {''.join(sorted(_PATTERN_LETTERS))}, and text goes in single quotes"
                )
            tokens.append(_Token(ch, j - i))
            i = j
        elif ch in "[]{}#":
            raise QuiverError(f"{function}: {ch!r} in datetime pattern {pattern!r} is not supported; "
                              f"quote it as '{ch}'")
        else:
            tokens.append(_Token("", 0, ch))
            i += 1
    return tokens


def _alternatives(words: list[str]) -> str:
    return "(?i:" + "|".join(sorted((re.escape(w) for w in words), key=len, reverse=True)) + ")"


def _parse_fragment(tok: _Token, pattern: str, function: str) -> tuple[str, str | None]:
    """(regex fragment, field) for one token; the field names the value a group carries."""
    letter, n = tok.letter, tok.count
    if not letter:
        return re.escape(tok.text), None
    two = r"\d{2}" if n == 2 else r"\d{1,2}"
    if letter in "yu":
        if n == 2:
            return r"\d{2}", "yy"
        return (r"\d{1,6}" if n == 1 else rf"\d{{{n},6}}" if n == 3 else rf"\d{{{n}}}"), "y"
    if letter in "ML":
        if n >= 4:
            return _alternatives(MONTHS), "month_name"
        if n == 3:
            return _alternatives([m[:3] for m in MONTHS]), "month_name"
        return two, "M"
    if letter == "d" and n <= 2:
        return two, "d"
    if letter == "D" and n <= 3:
        return (r"\d{1,3}" if n == 1 else r"\d{2,3}" if n == 2 else r"\d{3}"), "D"
    if letter in "HhkKms" and n <= 2:
        return two, letter
    if letter == "S":
        return rf"\d{{1,{n}}}", "S"
    if letter == "a" and n == 1:
        return "(?i:AM|PM)", "a"
    if letter == "E":
        return (_alternatives(WEEKDAYS) if n >= 4 else _alternatives([w[:3] for w in WEEKDAYS])), None
    if letter == "G":
        return "(?i:AD|BC)", None
    if letter == "X":
        return (r"Z|[+-]\d{2}(?:\d{2})?" if n == 1 else r"Z|[+-]\d{4}" if n == 2 else r"Z|[+-]\d{2}:\d{2}"), "zone"
    if letter == "x":
        return (r"[+-]\d{2}(?:\d{2})?" if n == 1 else r"[+-]\d{4}" if n == 2 else r"[+-]\d{2}:\d{2}"), "zone"
    if letter == "Z":
        return (r"[+-]\d{4}" if n <= 3 else r"Z|[+-]\d{2}:\d{2}"), "zone"
    if letter in "zV":
        return r"[A-Za-z][A-Za-z0-9_/+\-]*", "zone"
    raise QuiverError(f"{function}: pattern {letter * n!r} in {pattern!r} cannot be used to parse text")


def _pattern_regex(pattern: str, function: str) -> tuple[str, dict[str, str]]:
    parts, groups = [], {}
    for k, tok in enumerate(tokenize(pattern, function)):
        fragment, field = _parse_fragment(tok, pattern, function)
        if field is None or field in groups.values():
            parts.append(f"(?:{fragment})")
        else:
            name = f"g{k}"
            groups[name] = field
            parts.append(f"(?P<{name}>{fragment})")
    return "(?s)^" + "".join(parts) + "$", groups


def parse_with_pattern(strings: pa.Array, pattern: str, function: str) -> pa.Array:
    """Timestamps parsed with a Spark pattern ('dd/MM/yyyy HH:mm'); text that does not match is null.

    Fields the pattern lacks default as in Spark: year 1970, month 1, day 1, time 00:00:00.
    """
    regex, groups = _pattern_regex(pattern, function)
    struct, valid = _fields(strings, regex[:-1] + "(?P<end>)$")
    by_field = {field: name for name, field in groups.items()}

    def number(field: str, default: int) -> np.ndarray:
        return _number(struct, by_field[field], default) if field in by_field else np.full(len(strings), default)

    year = number("y", 1970)
    if "yy" in by_field:
        year = 2000 + _number(struct, by_field["yy"], 0)
    month = number("M", 1)
    if "month_name" in by_field:
        names = pc.utf8_lower(pc.utf8_slice_codeunits(struct.field(by_field["month_name"]), 0, 3))
        index = pc.index_in(names, value_set=pa.array([m[:3].lower() for m in MONTHS]))
        month = pc.fill_null(index, 0).to_numpy(zero_copy_only=False) + 1
    day = number("d", 1)
    first_of_year = days_from_civil(year, np.ones_like(year), np.ones_like(year))
    if "D" in by_field:
        day_of_year = _number(struct, by_field["D"], 1)
        valid &= (day_of_year >= 1) & (day_of_year <= 365 + is_leap(year))
        days = first_of_year + day_of_year - 1
    else:
        valid &= (month >= 1) & (month <= 12) & (day >= 1) & (day <= days_in_month(year, month))
        days = days_from_civil(year, month, day)
    hour = number("H", 0)
    if "k" in by_field:
        hour = number("k", 24)
        valid &= (hour >= 1) & (hour <= 24)
        hour = hour % 24
    for field, low, high in (("h", 1, 12), ("K", 0, 11)):
        if field in by_field:
            value = number(field, low)
            valid &= (value >= low) & (value <= high)
            hour = value % 12
    if "a" in by_field:
        pm = pc.equal(pc.utf8_upper(struct.field(by_field["a"])), "PM").to_numpy(zero_copy_only=False)
        hour = hour % 12 + np.where(pm, 12, 0)
    minute, second = number("m", 0), number("s", 0)
    valid &= (hour < 24) & (minute < 60) & (second < 60)
    local = days * MICROS_PER_DAY + ((hour * 60 + minute) * 60 + second) * MICROS_PER_SECOND
    if "S" in by_field:
        local = local + _fraction_micros(struct, by_field["S"])
    local = np.where(valid, local, 0)
    if "zone" in by_field:
        local, valid = _zone_offsets(struct.field(by_field["zone"]), local, valid)
    return _timestamp_array(local, valid)


def _padded(values: pa.Array, width: int) -> pa.Array:
    text = pc.cast(values, pa.string())
    return pc.utf8_lpad(text, width, "0") if width > 1 else text


def format_with_pattern(timestamps: pa.Array, pattern: str, function: str) -> pa.Array:
    """Timestamps (UTC wall clock) printed with a Spark pattern, e.g. 'yyyy-MM-dd HH:mm:ss.SSS'."""
    tokens = tokenize(pattern, function)
    ts = timestamps.cast(pa.timestamp("us"))
    micros = ts.cast(pa.int64())
    pieces: list[pa.Array | pa.Scalar] = []
    for tok in tokens:
        pieces.append(_format_piece(tok, ts, micros, pattern, function))
    if not pieces:
        return pc.if_else(pc.is_valid(ts), pa.scalar(""), pa.scalar(None, pa.string()))
    arrays = [p for p in pieces if isinstance(p, pa.Array)]
    if not arrays:
        text = "".join(p.as_py() for p in pieces)
        return pc.if_else(pc.is_valid(ts), pa.scalar(text), pa.scalar(None, pa.string()))
    return pc.binary_join_element_wise(*pieces, "")


def _format_piece(tok: _Token, ts: pa.Array, micros: pa.Array, pattern: str, function: str) -> pa.Array | pa.Scalar:
    letter, n = tok.letter, tok.count
    if not letter:
        return pa.scalar(tok.text)
    if letter in "yu":
        year = pc.year(ts)
        if n == 2:
            return pc.utf8_slice_codeunits(_padded(year, 2), -2, None)
        return _padded(year, n)
    if letter in "ML":
        month = pc.month(ts)
        if n >= 3:
            names = [m if n >= 4 else m[:3] for m in MONTHS]
            return pc.take(pa.array(names), pc.subtract(month, 1))
        return _padded(month, n)
    if letter == "d":
        return _padded(pc.day(ts), n)
    if letter == "D":
        return _padded(pc.day_of_year(ts), n)
    if letter == "Q" or letter == "q":
        quarter = pc.quarter(ts)
        if n <= 2:
            return _padded(quarter, n)
        if n == 3:
            return pc.binary_join_element_wise("Q", pc.cast(quarter, pa.string()), "")
        return pc.take(pa.array(["1st quarter", "2nd quarter", "3rd quarter", "4th quarter"]), pc.subtract(quarter, 1))
    if letter == "E":
        names = [w if n >= 4 else w[:3] for w in WEEKDAYS]
        return pc.take(pa.array(names), pc.day_of_week(ts))
    if letter == "a":
        return pc.if_else(pc.less(pc.hour(ts), 12), "AM", "PM")
    if letter == "G":
        return pc.if_else(pc.greater(pc.year(ts), 0), "AD", "BC")
    if letter == "H":
        return _padded(pc.hour(ts), n)
    if letter == "k":
        hour = pc.hour(ts)
        return _padded(pc.if_else(pc.equal(hour, 0), 24, hour), n)
    if letter == "K":
        return _padded(_hour12(ts), n)
    if letter == "h":
        hour12 = _hour12(ts)
        return _padded(pc.if_else(pc.equal(hour12, 0), 12, hour12), n)
    if letter == "m":
        return _padded(pc.minute(ts), n)
    if letter == "s":
        return _padded(pc.second(ts), n)
    if letter == "S":
        fraction = pc.add(pc.multiply(pc.millisecond(ts), 1000), pc.microsecond(ts))
        six = pc.utf8_lpad(pc.cast(fraction, pa.string()), 6, "0")
        return pc.utf8_slice_codeunits(six, 0, n) if n <= 6 else pc.utf8_rpad(six, n, "0")
    if letter in "XZxzVO":
        return pa.scalar(_utc_zone_text(letter, n, pattern, function))
    raise QuiverError(f"{function}: pattern {letter * n!r} in {pattern!r} cannot be used to format a timestamp")


def _hour12(ts: pa.Array) -> pa.Array:
    hour = pc.hour(ts)
    return pc.if_else(pc.greater_equal(hour, 12), pc.subtract(hour, 12), hour)


def _utc_zone_text(letter: str, n: int, pattern: str, function: str) -> str:
    """How the UTC session zone prints under each zone letter (Java's DateTimeFormatter)."""
    if letter == "X":
        return "Z"
    if letter == "x":
        return {1: "+00", 2: "+0000", 3: "+00:00"}.get(n, "+00:00")
    if letter == "Z":
        return "+0000" if n <= 3 else ("GMT" if n == 4 else "Z")
    if letter == "O":
        return "GMT"
    return "UTC"
