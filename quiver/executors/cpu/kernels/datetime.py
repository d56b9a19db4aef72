"""CPU kernels for Spark's date and time functions: fields, arithmetic, parsing, formatting, truncation,
make_date, next_day and time zones (from_utc_timestamp, to_utc_timestamp)."""
from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from quiver.engine.core import types as T
from quiver.engine.core.ansi import ansi_enabled
from quiver.engine.core.conf import normalize_time_zone
from quiver.engine.core.errors import DateTimeException, QuiverError
from quiver.engine.core.time_zones import local_to_utc, utc_to_local
from quiver.executors.cpu import datetime_format as dtf
from quiver.executors.cpu.cast import cast_array
from quiver.executors.cpu.kernels.registry import (
    Value,
    all_null,
    as_array,
    constant,
    kernel,
    length_of,
    per_constant,
    per_row,
)

# ---------------------------------------------------------------- dates and times

def _as_date(value: pa.Array) -> pa.Array:
    return value if pa.types.is_date32(value.type) else cast_array(value, T.DateType())


def _as_timestamp(value: pa.Array) -> pa.Array:
    return value if value.type == pa.timestamp("us") else cast_array(value, T.TimestampType())


def _int32(value: pa.Array) -> pa.Array:
    return value.cast(pa.int32())


def _field(name: str, fn: Callable[[pa.Array], pa.Array], of: Callable[[pa.Array], pa.Array]) -> None:
    def run(args: list[Value], rt: T.DataType) -> Value:
        return _int32(fn(of(args[0])))
    run.__doc__ = f"{name}: a calendar field as int."
    kernel(name)(run)


for _name, _fn in (("year", pc.year), ("month", pc.month), ("dayofmonth", pc.day), ("day", pc.day),
                   ("dayofyear", pc.day_of_year), ("quarter", pc.quarter), ("weekofyear", pc.iso_week),
                   ("weekday", pc.day_of_week)):
    _field(_name, _fn, _as_date)
_field("dayofweek", lambda d: pc.day_of_week(d, count_from_zero=False, week_start=7), _as_date)
_field("hour", pc.hour, _as_timestamp)
_field("minute", pc.minute, _as_timestamp)
_field("second", pc.second, _as_timestamp)


def _days(dates: pa.Array) -> np.ndarray:
    return _as_date(dates).cast(pa.int32()).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)


def _date_result(days: np.ndarray, *sources: Value) -> pa.Array:
    mask = np.zeros(len(days), dtype=bool)
    for s in sources:
        if isinstance(s, pa.Array):
            mask |= s.is_null().to_numpy(zero_copy_only=False)
        elif not s.is_valid:
            mask[:] = True
    return pa.array(days.astype(np.int32), pa.date32(), mask=mask)


@kernel("last_day")
def last_day(args: list[Value], rt: T.DataType) -> Value:
    """The last day of the date's month."""
    year, month, _ = dtf.civil_from_days(_days(args[0]))
    last = dtf.days_from_civil(year, month, dtf.days_in_month(year, month))
    return _date_result(last, args[0])


def _shift_days(args: list[Value], sign: int) -> pa.Array:
    length = length_of(args)
    dates = as_array(args[0], length)
    count = as_array(args[1], length)
    offset = count.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    return _date_result(_days(dates) + sign * offset, dates, count)


@kernel("date_add", "dateadd", data="all")
def date_add(args: list[Value], rt: T.DataType) -> Value:
    """The date `days` days later."""
    return _shift_days(args, 1)


@kernel("date_sub", data="all")
def date_sub(args: list[Value], rt: T.DataType) -> Value:
    """The date `days` days earlier."""
    return _shift_days(args, -1)


@kernel("datediff", "date_diff", data="all")
def datediff(args: list[Value], rt: T.DataType) -> Value:
    """Days from `start` to `end` (end - start)."""
    end, start = (_as_date(a) if isinstance(a, pa.Array) else cast_array(a, T.DateType()) for a in args)
    return pc.subtract(end.cast(pa.int32()), start.cast(pa.int32()))


@kernel("add_months", data="all")
def add_months(args: list[Value], rt: T.DataType) -> Value:
    """The date `n` months later, clamped to the end of a shorter month (Jan 31 + 1 = Feb 29)."""
    length = length_of(args)
    dates, count = as_array(args[0], length), as_array(args[1], length)
    year, month, day = dtf.civil_from_days(_days(dates))
    total = year * 12 + (month - 1) + count.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    new_year, new_month = np.floor_divide(total, 12), total % 12 + 1
    new_day = np.minimum(day, dtf.days_in_month(new_year, new_month))
    return _date_result(dtf.days_from_civil(new_year, new_month, new_day), dates, count)


def _add_months_to_days(days: np.ndarray, months: int) -> np.ndarray:
    """Days since the epoch moved by whole months, clamped to the end of a shorter month."""
    if months == 0:
        return days
    year, month, day = dtf.civil_from_days(days)
    total = year * 12 + (month - 1) + months
    new_year, new_month = np.floor_divide(total, 12), total % 12 + 1
    return dtf.days_from_civil(new_year, new_month, np.minimum(day, dtf.days_in_month(new_year, new_month)))


_MICROS_PER_DAY = 86_400_000_000


@kernel("interval_add")
def interval_add(args: list[Value], rt: T.DataType) -> Value:
    """`start + INTERVAL m MONTHS d DAYS u MICROSECONDS`: months first (end-of-month clamped), then days and time."""
    months, days, micros = (int(constant(a, "interval_add", "interval part")) for a in args[1:])
    start = args[0]
    if isinstance(rt, T.DateType):
        return _date_result(_add_months_to_days(_days(start), months) + days, start)
    stamps = _as_timestamp(start)
    raw = stamps.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    day, time_of_day = np.divmod(raw, _MICROS_PER_DAY)
    shifted = (_add_months_to_days(day, months) + days) * _MICROS_PER_DAY + time_of_day + micros
    return pa.array(shifted, pa.timestamp("us"), mask=stamps.is_null().to_numpy(zero_copy_only=False))


@kernel("months_between", data=(0, 1))
def months_between(args: list[Value], rt: T.DataType) -> Value:
    """Months from date2 to date1; whole when the days match or both are month ends, else by 31-day months."""
    round_off = True if len(args) < 3 else constant(args[2], "months_between", "roundOff flag")
    length = length_of(args[:2])
    first, second = (_as_timestamp(as_array(a, length)) for a in args[:2])
    m1 = first.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    m2 = second.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    d1, d2 = np.floor_divide(m1, dtf.MICROS_PER_DAY), np.floor_divide(m2, dtf.MICROS_PER_DAY)
    y1, mo1, day1 = dtf.civil_from_days(d1)
    y2, mo2, day2 = dtf.civil_from_days(d2)
    months = ((y1 - y2) * 12 + (mo1 - mo2)).astype(np.float64)
    last1 = day1 == dtf.days_in_month(y1, mo1)
    last2 = day2 == dtf.days_in_month(y2, mo2)
    seconds1 = (m1 - d1 * dtf.MICROS_PER_DAY) // dtf.MICROS_PER_SECOND
    seconds2 = (m2 - d2 * dtf.MICROS_PER_DAY) // dtf.MICROS_PER_SECOND
    seconds = (day1 - day2) * 86_400 + (seconds1 - seconds2)
    diff = np.where((day1 == day2) | (last1 & last2), months, months + seconds / 2_678_400.0)
    if round_off:
        # Spark: Math.round(diff * 1e8) / 1e8
        diff = np.floor(diff * 1e8 + 0.5) / 1e8
    mask = first.is_null().to_numpy(zero_copy_only=False) | second.is_null().to_numpy(zero_copy_only=False)
    return pa.array(diff, pa.float64(), mask=mask)


@kernel("to_date")
def to_date(args: list[Value], rt: T.DataType) -> Value:
    """A date from text (CAST rules, or a Spark pattern such as 'dd/MM/yyyy'), a date or a timestamp."""
    value = args[0]
    if len(args) == 1 or not (pa.types.is_string(value.type) or pa.types.is_large_string(value.type)):
        return cast_array(value, T.DateType())
    fmt = constant(args[1], "to_date", "format")
    if fmt is None:
        return all_null(len(value), T.DateType())
    return _parsed_or_raise(value, dtf.parse_with_pattern(value, fmt, "to_date"), fmt).cast(pa.date32())


def _parsed_or_raise(text: pa.Array, parsed: pa.Array, pattern: str) -> pa.Array:
    """`parsed`, the values of `text` read with `pattern`; under ANSI mode (outside the try_ forms) the first text
    that did not parse raises Spark's CANNOT_PARSE_TIMESTAMP instead of becoming null."""
    if not ansi_enabled() or parsed.null_count == text.null_count:
        return parsed
    failed = pc.and_(pc.is_valid(text), pc.is_null(parsed))
    bad = text.filter(failed)[0].as_py()
    raise DateTimeException(
        "CANNOT_PARSE_TIMESTAMP",
        f"Text {bad!r} could not be parsed with the pattern {pattern!r}. Use `try_to_timestamp` to tolerate "
        "invalid input string and return NULL instead.", "22007", {"message": f"Text {bad!r} could not be parsed"})


@kernel("to_timestamp", "to_timestamp_ntz")
def to_timestamp(args: list[Value], rt: T.DataType) -> Value:
    """A timestamp from text (CAST rules or a Spark pattern), a date, or seconds since the epoch; in the layout
    an instant and a wall-clock time share (the analyzer decides which the text is, analysis/time_zones.py)."""
    value = args[0]
    if len(args) == 1 or not (pa.types.is_string(value.type) or pa.types.is_large_string(value.type)):
        return cast_array(value, T.TimestampType())
    fmt = constant(args[1], "to_timestamp", "format")
    if fmt is None:
        return all_null(len(value), T.TimestampType())
    return _parsed_or_raise(value, dtf.parse_with_pattern(value, fmt, "to_timestamp"), fmt)


@kernel("date_format")
def date_format(args: list[Value], rt: T.DataType) -> Value:
    """A timestamp printed with a Spark pattern ('yyyy-MM-dd HH:mm')."""
    fmt = constant(args[1], "date_format", "format")
    if fmt is None:
        return all_null(len(args[0]), T.StringType())
    return dtf.format_with_pattern(_as_timestamp(args[0]), fmt, "date_format")


def _epoch_seconds(timestamps: pa.Array) -> pa.Array:
    """Whole seconds since the epoch, truncated toward zero as Spark's unix_timestamp does."""
    micros = timestamps.cast(pa.int64())
    values = micros.fill_null(0).to_numpy(zero_copy_only=False)
    values = np.sign(values) * (np.abs(values) // dtf.MICROS_PER_SECOND)
    return pa.array(values, pa.int64(), mask=micros.is_null().to_numpy(zero_copy_only=False))


def _now_micros() -> int:
    now = datetime.now(timezone.utc)
    return int(now.timestamp()) * dtf.MICROS_PER_SECOND + now.microsecond


@kernel("unix_timestamp", "to_unix_timestamp")
def unix_timestamp(args: list[Value], rt: T.DataType) -> Value:
    """Seconds since the epoch of a timestamp, a date, or text in `format` (default yyyy-MM-dd HH:mm:ss)."""
    if not args:
        return pa.scalar(_now_micros() // dtf.MICROS_PER_SECOND, pa.int64())
    value = args[0]
    if pa.types.is_string(value.type) or pa.types.is_large_string(value.type):
        fmt = "yyyy-MM-dd HH:mm:ss" if len(args) < 2 else constant(args[1], "unix_timestamp", "format")
        if fmt is None:
            return all_null(len(value), T.LongType())
        value = _parsed_or_raise(value, dtf.parse_with_pattern(value, fmt, "unix_timestamp"), fmt)
    return _epoch_seconds(_as_timestamp(value))


@kernel("from_unixtime")
def from_unixtime(args: list[Value], rt: T.DataType) -> Value:
    """Seconds since the epoch printed with `format` (default yyyy-MM-dd HH:mm:ss)."""
    fmt = "yyyy-MM-dd HH:mm:ss" if len(args) < 2 else constant(args[1], "from_unixtime", "format")
    if fmt is None:
        return all_null(len(args[0]), T.StringType())
    seconds = args[0].cast(pa.int64())
    micros = pc.multiply(seconds, dtf.MICROS_PER_SECOND).cast(pa.timestamp("us"))
    return dtf.format_with_pattern(micros, fmt, "from_unixtime")


@kernel("current_date")
def current_date(args: list[Value], rt: T.DataType) -> Value:
    """Today in the session time zone (UTC)."""
    return pa.scalar(_now_micros() // dtf.MICROS_PER_DAY, pa.int32()).cast(pa.date32())


@kernel("current_timestamp", "now")
def current_timestamp(args: list[Value], rt: T.DataType) -> Value:
    """Now, as a UTC wall-clock timestamp."""
    return pa.scalar(_now_micros(), pa.timestamp("us"))


_TRUNC_UNITS = {
    "year": "year", "yyyy": "year", "yy": "year", "quarter": "quarter", "month": "month", "mm": "month",
    "mon": "month", "week": "week", "day": "day", "dd": "day", "hour": "hour", "minute": "minute",
    "second": "second", "millisecond": "millisecond", "microsecond": "microsecond",
}
_DATE_UNITS = ("year", "quarter", "month", "week")


@kernel("date_trunc", data=(1,))
def date_trunc(args: list[Value], rt: T.DataType) -> Value:
    """The timestamp truncated to a unit ('year', 'month', 'week', 'hour', ...); unknown units give null."""
    unit = constant(args[0], "date_trunc", "unit")
    ts = _as_timestamp(args[1])
    arrow_unit = _TRUNC_UNITS.get((unit or "").lower())
    if arrow_unit is None:
        return all_null(len(ts), T.TimestampType())
    return pc.floor_temporal(ts, unit=arrow_unit, week_starts_monday=True)


@kernel("trunc")
def trunc(args: list[Value], rt: T.DataType) -> Value:
    """The date truncated to 'year', 'quarter', 'month' or 'week'; other units give null."""
    unit = constant(args[1], "trunc", "unit")
    dates = _as_date(args[0])
    arrow_unit = _TRUNC_UNITS.get((unit or "").lower())
    if arrow_unit not in _DATE_UNITS:
        return all_null(len(dates), T.DateType())
    return pc.floor_temporal(dates, unit=arrow_unit, week_starts_monday=True)

del _name, _fn


# ---------------------------------------------------------------- make_date, next_day, time zones

def _make_date(y: int, m: int, d: int) -> _dt.date | None:
    try:
        return _dt.date(y, m, d)
    except (ValueError, OverflowError):
        return None


def _strict_make_date(y: int, m: int, d: int) -> _dt.date:
    """make_date under ANSI mode: a field out of range raises DATETIME_FIELD_OUT_OF_BOUNDS with the message of
    Java's LocalDate.of, which Spark's carries."""
    if not 1 <= m <= 12:
        problem = f"Invalid value for MonthOfYear (valid values 1 - 12): {m}"
    elif not 1 <= d <= 31:
        problem = f"Invalid value for DayOfMonth (valid values 1 - 28/31): {d}"
    else:
        value = _make_date(y, m, d)
        if value is not None:
            return value
        problem = (f"Invalid value for Year (valid values -999999999 - 999999999): {y}" if not 1 <= y <= 9999
                   else f"Invalid date '{_dt.date(2000, m, 1).strftime('%B').upper()} {d}'")
    raise DateTimeException("DATETIME_FIELD_OUT_OF_BOUNDS.WITHOUT_SUGGESTION", f"{problem}. ", "22023",
                            {"rangeMessage": problem})


@kernel("make_date", data="all")
def make_date(args: list[Value], rt: T.DataType) -> Value:
    """A date from year, month and day; null where they name no date (Spark's non-ANSI result), an error
    under ANSI mode."""
    return per_row(args, _strict_make_date if ansi_enabled() else _make_date, pa.date32())


_WEEKDAYS = {"MO": 0, "MON": 0, "MONDAY": 0, "TU": 1, "TUE": 1, "TUESDAY": 1, "WE": 2, "WED": 2,
             "WEDNESDAY": 2, "TH": 3, "THU": 3, "THURSDAY": 3, "FR": 4, "FRI": 4, "FRIDAY": 4,
             "SA": 5, "SAT": 5, "SATURDAY": 5, "SU": 6, "SUN": 6, "SUNDAY": 6}


@kernel("next_day")
def next_day(args: list[Value], rt: T.DataType) -> Value:
    """The first later date on the given day of the week; null for an unknown day name."""
    def apply(d: list[pa.Array], consts: list[Any]) -> pa.Array:
        target = _WEEKDAYS.get(str(consts[0]).strip().upper())
        if target is None:
            return all_null(len(d[0]), T.DateType())
        days = d[0].view(pa.int32()).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        weekday = (days + 3) % 7  # 1970-01-01 was a Thursday
        moved = days + (target - weekday - 1) % 7 + 1
        return pa.array(moved.astype(np.int32), pa.int32(), mask=d[0].is_null().to_numpy(zero_copy_only=False)
                        ).view(pa.date32())
    return per_constant([args[0]], [args[1]], apply, pa.date32())


def _zone(name: str) -> str:
    zone = normalize_time_zone(name)
    if zone is None:
        raise QuiverError(f"unknown time zone {name!r}; use a region such as 'America/New_York' or an "
                          "offset such as '+08:00'")
    return zone


def _shift_zone(stamps: pa.Array, zone_name: str, to_utc: bool) -> pa.Array:
    """Spark's from_utc_timestamp (the UTC wall-clock time of each value, shown as `zone_name`'s) and
    to_utc_timestamp (its inverse), by Java's rules for repeated and skipped times."""
    zone = _zone(zone_name)
    stamps = stamps if pa.types.is_timestamp(stamps.type) else stamps.view(pa.timestamp("us"))
    return local_to_utc(stamps, zone) if to_utc else utc_to_local(stamps, zone)


@kernel("from_utc_timestamp")
def from_utc_timestamp(args: list[Value], rt: T.DataType) -> Value:
    """The UTC wall-clock time shown as the wall-clock time of the zone."""
    return per_constant([args[0]], [args[1]], lambda d, c: _shift_zone(d[0], c[0], False), rt.to_arrow())


@kernel("to_utc_timestamp")
def to_utc_timestamp(args: list[Value], rt: T.DataType) -> Value:
    """The zone's wall-clock time shown as the UTC wall-clock time."""
    return per_constant([args[0]], [args[1]], lambda d, c: _shift_zone(d[0], c[0], True), rt.to_arrow())
