"""Date and time functions of `quiver.functions` (F): fields, arithmetic, differences, parsing and
formatting, truncation, unix time, make_date, next_day and time zones, as in PySpark."""
from __future__ import annotations

from quiver.engine.api.column import Column, literal_expr, to_expr
from quiver.engine.api.functions.calls import ColumnOrName, call, unary

year = unary("year", """Year of a date or timestamp.

    >>> import datetime
    >>> d = spark.createDataFrame([(datetime.date(2024, 2, 15),)], ["d"])
    >>> d.select(F.year("d")).collect()
    [Row(year(d)=2024)]
    """)
month = unary("month", """Month (1-12).

    >>> import datetime
    >>> d = spark.createDataFrame([(datetime.date(2024, 2, 15),)], ["d"])
    >>> d.select(F.month("d")).collect()
    [Row(month(d)=2)]
    """)
dayofmonth = unary("dayofmonth", """Day of the month.

    >>> import datetime
    >>> d = spark.createDataFrame([(datetime.date(2024, 2, 15),)], ["d"])
    >>> d.select(F.dayofmonth("d")).collect()
    [Row(dayofmonth(d)=15)]
    """)
day = unary("day", """Day of the month.

    >>> import datetime
    >>> d = spark.createDataFrame([(datetime.date(2024, 2, 15),)], ["d"])
    >>> d.select(F.day("d")).collect()
    [Row(day(d)=15)]
    """)
dayofweek = unary("dayofweek", """Day of the week, 1 = Sunday ... 7 = Saturday.

    >>> import datetime
    >>> d = spark.createDataFrame([(datetime.date(2024, 2, 15),)], ["d"])
    >>> d.select(F.dayofweek("d")).collect()
    [Row(dayofweek(d)=5)]
    """)
dayofyear = unary("dayofyear", """Day of the year.

    >>> import datetime
    >>> d = spark.createDataFrame([(datetime.date(2024, 2, 15),)], ["d"])
    >>> d.select(F.dayofyear("d")).collect()
    [Row(dayofyear(d)=46)]
    """)
quarter = unary("quarter", """Quarter (1-4).

    >>> import datetime
    >>> d = spark.createDataFrame([(datetime.date(2024, 2, 15),)], ["d"])
    >>> d.select(F.quarter("d")).collect()
    [Row(quarter(d)=1)]
    """)
weekofyear = unary("weekofyear", """ISO week of the year.

    >>> import datetime
    >>> d = spark.createDataFrame([(datetime.date(2024, 2, 15),)], ["d"])
    >>> d.select(F.weekofyear("d")).collect()
    [Row(weekofyear(d)=7)]
    """)
weekday = unary("weekday", """Day of the week, 0 = Monday ... 6 = Sunday.

    >>> import datetime
    >>> d = spark.createDataFrame([(datetime.date(2024, 2, 15),)], ["d"])
    >>> d.select(F.weekday("d")).collect()
    [Row(weekday(d)=3)]
    """)
hour = unary("hour", """Hour of a timestamp.

    >>> import datetime
    >>> t = spark.createDataFrame([(datetime.datetime(2024, 2, 15, 13, 45, 30),)], ["t"])
    >>> t.select(F.hour("t")).collect()
    [Row(hour(t)=13)]
    """)
minute = unary("minute", """Minute of a timestamp.

    >>> import datetime
    >>> t = spark.createDataFrame([(datetime.datetime(2024, 2, 15, 13, 45, 30),)], ["t"])
    >>> t.select(F.minute("t")).collect()
    [Row(minute(t)=45)]
    """)
second = unary("second", """Second of a timestamp.

    >>> import datetime
    >>> t = spark.createDataFrame([(datetime.datetime(2024, 2, 15, 13, 45, 30),)], ["t"])
    >>> t.select(F.second("t")).collect()
    [Row(second(t)=30)]
    """)


def last_day(date: ColumnOrName) -> Column:
    """The last day of the date's month.

    >>> import datetime
    >>> d = spark.createDataFrame([(datetime.date(2024, 2, 15),)], ["d"])
    >>> d.select(F.last_day("d").alias("l")).collect()
    [Row(l=datetime.date(2024, 2, 29))]
    """
    return call("last_day", to_expr(date))


def date_add(start: ColumnOrName, days: ColumnOrName | int) -> Column:
    """The date `days` days after `start`.

    >>> import datetime
    >>> d = spark.createDataFrame([(datetime.date(2024, 2, 15),)], ["d"])
    >>> d.select(F.date_add("d", 15).alias("a")).collect()
    [Row(a=datetime.date(2024, 3, 1))]
    """
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
    """The date `days` days before `start`.

    >>> import datetime
    >>> d = spark.createDataFrame([(datetime.date(2024, 2, 15),)], ["d"])
    >>> d.select(F.date_sub("d", 15).alias("s")).collect()
    [Row(s=datetime.date(2024, 1, 31))]
    """
    return call("date_sub", to_expr(start), to_expr(days))


def datediff(end: ColumnOrName, start: ColumnOrName) -> Column:
    """Days from `start` to `end`.

    >>> spark.range(1).select(F.datediff(F.lit("2024-03-01"), F.lit("2024-02-01")).alias("n")).collect()
    [Row(n=29)]
    """
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
    """The date `months` months after `start` (clamped to the month's end).

    >>> spark.range(1).select(F.add_months(F.lit("2024-01-31"), 1).alias("m")).collect()
    [Row(m=datetime.date(2024, 2, 29))]
    """
    return call("add_months", to_expr(start), to_expr(months))


def months_between(date1: ColumnOrName, date2: ColumnOrName, roundOff: bool = True) -> Column:  # noqa: N803
    """Months from date2 to date1, rounded to 8 digits unless roundOff is False.

    >>> spark.range(1).select(F.months_between(F.lit("2024-03-31"), F.lit("2024-01-15")).alias("m")).collect()
    [Row(m=2.51612903)]
    """
    return call("months_between", to_expr(date1), to_expr(date2), literal_expr(roundOff))


def to_date(col: ColumnOrName, format: str | None = None) -> Column:  # noqa: A002
    """A date from a string (optionally in a Spark pattern like 'dd/MM/yyyy') or a timestamp.

    >>> spark.createDataFrame([("15/02/2024",)], ["s"]).select(F.to_date("s", "dd/MM/yyyy").alias("d")).collect()
    [Row(d=datetime.date(2024, 2, 15))]
    """
    return call("to_date", to_expr(col)) if format is None else call("to_date", to_expr(col), literal_expr(format))


def to_timestamp(col: ColumnOrName, format: str | None = None) -> Column:  # noqa: A002
    """A timestamp from a string (optionally in a Spark pattern) or a date.

    >>> spark.createDataFrame([("2024-02-15 13:45:30",)], ["s"]).select(F.to_timestamp("s").alias("t")).collect()
    [Row(t=datetime.datetime(2024, 2, 15, 13, 45, 30))]
    """
    if format is None:
        return call("to_timestamp", to_expr(col))
    return call("to_timestamp", to_expr(col), literal_expr(format))


def date_format(date: ColumnOrName, format: str) -> Column:  # noqa: A002
    """The date or timestamp printed with a Spark pattern such as 'yyyy-MM-dd HH:mm'.

    >>> import datetime
    >>> t = spark.createDataFrame([(datetime.datetime(2024, 2, 15, 13, 45, 30),)], ["t"])
    >>> t.select(F.date_format("t", "yyyy-MM-dd HH:mm").alias("f")).collect()
    [Row(f='2024-02-15 13:45')]
    """
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
    """The timestamp truncated to 'year', 'quarter', 'month', 'week', 'day', 'hour', ...

    >>> import datetime
    >>> t = spark.createDataFrame([(datetime.datetime(2024, 2, 15, 13, 45, 30),)], ["t"])
    >>> t.select(F.date_trunc("hour", "t").alias("h")).collect()
    [Row(h=datetime.datetime(2024, 2, 15, 13, 0))]
    """
    return call("date_trunc", literal_expr(format), to_expr(timestamp))


def trunc(date: ColumnOrName, format: str) -> Column:  # noqa: A002
    """The date truncated to 'year', 'quarter', 'month' or 'week'.

    >>> import datetime
    >>> d = spark.createDataFrame([(datetime.date(2024, 2, 15),)], ["d"])
    >>> d.select(F.trunc("d", "month").alias("m")).collect()
    [Row(m=datetime.date(2024, 2, 1))]
    """
    return call("trunc", to_expr(date), literal_expr(format))


def unix_timestamp(timestamp: ColumnOrName | None = None, format: str = "yyyy-MM-dd HH:mm:ss") -> Column:  # noqa: A002
    """Seconds since the epoch of a timestamp, date or string in `format`; no argument means now.

    >>> spark.createDataFrame([("1970-01-02 00:00:00",)], ["s"]).select(F.unix_timestamp("s").alias("u")).collect()
    [Row(u=86400)]
    """
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
    """Seconds since the epoch as text in `format`.

    >>> spark.createDataFrame([(86400,)], ["u"]).select(F.from_unixtime("u").alias("s")).collect()
    [Row(s='1970-01-02 00:00:00')]
    """
    return call("from_unixtime", to_expr(timestamp), literal_expr(format))


def make_date(year: ColumnOrName, month: ColumnOrName, day: ColumnOrName) -> Column:
    """A date from its fields; null where they name no date.

    >>> spark.createDataFrame([(2024, 2, 29)], ["y", "m", "d"]).select(F.make_date("y", "m", "d").alias("d")).collect()
    [Row(d=datetime.date(2024, 2, 29))]
    """
    return call("make_date", to_expr(year), to_expr(month), to_expr(day))


def next_day(date: ColumnOrName, dayOfWeek: str) -> Column:  # noqa: N803
    """The first date after `date` that falls on dayOfWeek ('Mon', 'tuesday', ...).

    >>> import datetime
    >>> d = spark.createDataFrame([(datetime.date(2024, 2, 15),)], ["d"])
    >>> d.select(F.next_day("d", "Mon").alias("n")).collect()
    [Row(n=datetime.date(2024, 2, 19))]
    """
    return call("next_day", to_expr(date), literal_expr(dayOfWeek))


def from_utc_timestamp(timestamp: ColumnOrName, tz: ColumnOrName) -> Column:
    """The UTC wall-clock time `timestamp` shown as the wall-clock time in zone `tz`.

    >>> import datetime
    >>> t = spark.createDataFrame([(datetime.datetime(2024, 2, 15, 13, 45, 30),)], ["t"])
    >>> t.select(F.from_utc_timestamp("t", F.lit("Asia/Tokyo")).alias("t")).collect()
    [Row(t=datetime.datetime(2024, 2, 15, 22, 45, 30))]
    """
    return call("from_utc_timestamp", to_expr(timestamp), literal_expr(tz) if isinstance(tz, str) else to_expr(tz))


def to_utc_timestamp(timestamp: ColumnOrName, tz: ColumnOrName) -> Column:
    """The wall-clock time in zone `tz` shown as the UTC wall-clock time.

    >>> import datetime
    >>> t = spark.createDataFrame([(datetime.datetime(2024, 2, 15, 13, 45, 30),)], ["t"])
    >>> t.select(F.to_utc_timestamp("t", F.lit("Asia/Tokyo")).alias("t")).collect()
    [Row(t=datetime.datetime(2024, 2, 15, 4, 45, 30))]
    """
    return call("to_utc_timestamp", to_expr(timestamp), literal_expr(tz) if isinstance(tz, str) else to_expr(tz))


__all__ = [
    "year", "month", "dayofmonth", "day", "dayofweek", "dayofyear", "quarter", "weekofyear", "weekday", "hour",
    "minute", "second", "last_day", "date_add", "dateadd", "date_sub", "datediff", "date_diff", "add_months",
    "months_between", "to_date", "to_timestamp", "date_format", "current_date", "current_timestamp", "now",
    "date_trunc", "trunc", "unix_timestamp", "to_unix_timestamp", "from_unixtime", "make_date", "next_day",
    "from_utc_timestamp", "to_utc_timestamp",
]
