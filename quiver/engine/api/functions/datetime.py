"""Date and time functions of `quiver.functions` (F): fields, arithmetic, differences, parsing and
formatting, truncation, unix time, make_date, next_day and time zones, as in PySpark."""
from __future__ import annotations

from quiver.engine.api.column import Column, literal_expr, to_expr
from quiver.engine.api.functions.calls import ColumnOrName, call, unary

year = unary("year", "Year of a date or timestamp.")
month = unary("month", "Month (1-12).")
dayofmonth = unary("dayofmonth", "Day of the month.")
day = unary("day", "Day of the month.")
dayofweek = unary("dayofweek", "Day of the week, 1 = Sunday ... 7 = Saturday.")
dayofyear = unary("dayofyear", "Day of the year.")
quarter = unary("quarter", "Quarter (1-4).")
weekofyear = unary("weekofyear", "ISO week of the year.")
weekday = unary("weekday", "Day of the week, 0 = Monday ... 6 = Sunday.")
hour = unary("hour", "Hour of a timestamp.")
minute = unary("minute", "Minute of a timestamp.")
second = unary("second", "Second of a timestamp.")


def last_day(date: ColumnOrName) -> Column:
    """The last day of the date's month."""
    return call("last_day", to_expr(date))


def date_add(start: ColumnOrName, days: ColumnOrName | int) -> Column:
    """The date `days` days after `start`."""
    return call("date_add", to_expr(start), to_expr(days))


def dateadd(start: ColumnOrName, days: ColumnOrName | int) -> Column:
    """The date `days` days after `start` (before it for negative days): `date_add` under Spark SQL's other name.

    >>> import datetime
    >>> d = spark.createDataFrame([(datetime.date(2024, 2, 27),)], ["d"])
    >>> d.select(F.dateadd("d", 3).alias("d")).collect()
    [Row(d=datetime.date(2024, 3, 1))]
    """
    return call("dateadd", to_expr(start), to_expr(days))


def date_sub(start: ColumnOrName, days: ColumnOrName | int) -> Column:
    """The date `days` days before `start`."""
    return call("date_sub", to_expr(start), to_expr(days))


def datediff(end: ColumnOrName, start: ColumnOrName) -> Column:
    """Days from `start` to `end`."""
    return call("datediff", to_expr(end), to_expr(start))


def date_diff(end: ColumnOrName, start: ColumnOrName) -> Column:
    """Days from `start` to `end` (negative when `end` is earlier): `datediff` under Spark SQL's other name.

    >>> import datetime
    >>> d = spark.createDataFrame([(datetime.date(2024, 3, 1), datetime.date(2024, 2, 27))], ["end", "start"])
    >>> d.select(F.date_diff("end", "start").alias("days")).collect()
    [Row(days=3)]
    """
    return call("date_diff", to_expr(end), to_expr(start))


def add_months(start: ColumnOrName, months: ColumnOrName | int) -> Column:
    """The date `months` months after `start` (clamped to the month's end)."""
    return call("add_months", to_expr(start), to_expr(months))


def months_between(date1: ColumnOrName, date2: ColumnOrName, roundOff: bool = True) -> Column:  # noqa: N803
    """Months from date2 to date1, rounded to 8 digits unless roundOff is False."""
    return call("months_between", to_expr(date1), to_expr(date2), literal_expr(roundOff))


def to_date(col: ColumnOrName, format: str | None = None) -> Column:  # noqa: A002
    """A date from a string (optionally in a Spark pattern like 'dd/MM/yyyy') or a timestamp."""
    return call("to_date", to_expr(col)) if format is None else call("to_date", to_expr(col), literal_expr(format))


def to_timestamp(col: ColumnOrName, format: str | None = None) -> Column:  # noqa: A002
    """A timestamp from a string (optionally in a Spark pattern) or a date."""
    if format is None:
        return call("to_timestamp", to_expr(col))
    return call("to_timestamp", to_expr(col), literal_expr(format))


def date_format(date: ColumnOrName, format: str) -> Column:  # noqa: A002
    """The date or timestamp printed with a Spark pattern such as 'yyyy-MM-dd HH:mm'."""
    return call("date_format", to_expr(date), literal_expr(format))


def current_date() -> Column:
    """Today's date in the session time zone, for stamping or filtering rows by the day the
    query runs.

    >>> spark.range(1).select(F.current_date()).dtypes
    [('current_date()', 'date')]
    """
    return call("current_date")


def current_timestamp() -> Column:
    """The time the query runs, as a timestamp: taken once per query as it is optimized, so every call, row and
    task of a query reads the same instant, as in Spark.

    >>> spark.range(1000, numPartitions=4).select(F.current_timestamp()).distinct().count()
    1
    """
    return call("current_timestamp")


def now() -> Column:
    """The time the query runs, as a timestamp: `current_timestamp` under Spark SQL's other name, the same instant
    in one query.

    >>> spark.range(1).select(F.now()).dtypes
    [('now()', 'timestamp')]
    """
    return call("now")


def date_trunc(format: str, timestamp: ColumnOrName) -> Column:  # noqa: A002
    """The timestamp truncated to 'year', 'quarter', 'month', 'week', 'day', 'hour', ..."""
    return call("date_trunc", literal_expr(format), to_expr(timestamp))


def trunc(date: ColumnOrName, format: str) -> Column:  # noqa: A002
    """The date truncated to 'year', 'quarter', 'month' or 'week'."""
    return call("trunc", to_expr(date), literal_expr(format))


def unix_timestamp(timestamp: ColumnOrName | None = None, format: str = "yyyy-MM-dd HH:mm:ss") -> Column:  # noqa: A002
    """Seconds since the epoch of a timestamp, date or string in `format`; no argument means now."""
    if timestamp is None:
        return call("unix_timestamp")
    return call("unix_timestamp", to_expr(timestamp), literal_expr(format))


def to_unix_timestamp(timestamp: ColumnOrName, format: ColumnOrName | None = None) -> Column:  # noqa: A002
    """Seconds since the epoch (bigint) of a timestamp, a date, or a string in `format` (a Spark pattern, as a column
    or name; default 'yyyy-MM-dd HH:mm:ss'), read in the session time zone. Unlike `unix_timestamp`, the
    timestamp is required.

    >>> t = spark.createDataFrame([("2024-01-01 00:00:00",)], ["t"])
    >>> t.select(F.to_unix_timestamp("t").alias("s")).collect()
    [Row(s=1704067200)]
    >>> d = spark.createDataFrame([("2024-01-02",)], ["d"])
    >>> d.select(F.to_unix_timestamp("d", F.lit("yyyy-MM-dd")).alias("s")).collect()
    [Row(s=1704153600)]
    """
    if format is None:
        return call("to_unix_timestamp", to_expr(timestamp))
    return call("to_unix_timestamp", to_expr(timestamp), to_expr(format))


def from_unixtime(timestamp: ColumnOrName, format: str = "yyyy-MM-dd HH:mm:ss") -> Column:  # noqa: A002
    """Seconds since the epoch as text in `format`."""
    return call("from_unixtime", to_expr(timestamp), literal_expr(format))


def make_date(year: ColumnOrName, month: ColumnOrName, day: ColumnOrName) -> Column:
    """A date from its fields; null where they name no date."""
    return call("make_date", to_expr(year), to_expr(month), to_expr(day))


def next_day(date: ColumnOrName, dayOfWeek: str) -> Column:  # noqa: N803
    """The first date after `date` that falls on dayOfWeek ('Mon', 'tuesday', ...)."""
    return call("next_day", to_expr(date), literal_expr(dayOfWeek))


def from_utc_timestamp(timestamp: ColumnOrName, tz: ColumnOrName) -> Column:
    """The UTC wall-clock time `timestamp` shown as the wall-clock time in zone `tz`."""
    return call("from_utc_timestamp", to_expr(timestamp), literal_expr(tz) if isinstance(tz, str) else to_expr(tz))


def to_utc_timestamp(timestamp: ColumnOrName, tz: ColumnOrName) -> Column:
    """The wall-clock time in zone `tz` shown as the UTC wall-clock time."""
    return call("to_utc_timestamp", to_expr(timestamp), literal_expr(tz) if isinstance(tz, str) else to_expr(tz))


__all__ = [
    "year", "month", "dayofmonth", "day", "dayofweek", "dayofyear", "quarter", "weekofyear", "weekday", "hour",
    "minute", "second", "last_day", "date_add", "dateadd", "date_sub", "datediff", "date_diff", "add_months",
    "months_between", "to_date", "to_timestamp", "date_format", "current_date", "current_timestamp", "now",
    "date_trunc", "trunc", "unix_timestamp", "to_unix_timestamp", "from_unixtime", "make_date", "next_day",
    "from_utc_timestamp", "to_utc_timestamp",
]
