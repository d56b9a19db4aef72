"""Catalog entries for Spark's date and time functions: fields, arithmetic (date_add, add_months, and
interval_add for `+ INTERVAL` in SQL), differences, parsing and formatting, truncation, unix time,
make_date, next_day and time zones."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from quiver.engine.analysis.functions.catalog import (
    BIGINT,
    BOOLEAN,
    DATE,
    DATETIME_TEXT,
    DAYS,
    INT,
    STRING,
    TIMESTAMP,
    DataType,
    check_arguments,
    register,
    returns,
    shown_as,
    shown_with_defaults,
    takes,
    unary,
)
from quiver.engine.core import types as T


def _unix_timestamp(name: str) -> Callable[[list[str]], str]:
    def pretty(args: list[str]) -> str:
        shown = list(args) or ["current_timestamp()"]
        if len(shown) == 1:
            shown.append("yyyy-MM-dd HH:mm:ss")
        return f"{name}({', '.join(shown)})"
    return pretty


unary(["year", "month", "dayofmonth", "day", "dayofweek", "dayofyear", "quarter", "weekofyear", "weekday"],
      DATE, T.IntegerType())
unary(["hour", "minute", "second"], TIMESTAMP, T.IntegerType())
unary(["last_day"], DATE, T.DateType())
for _name in ("date_add", "date_sub", "dateadd"):
    register(_name, 2, 2, returns(T.DateType()), takes(_name, DATE, DAYS),
             shown_as("date_add") if _name == "dateadd" else None)
register("add_months", 2, 2, returns(T.DateType()), takes("add_months", DATE, DAYS))


def _same_timestamp(t: DataType) -> DataType:
    """A wall-clock time (TIMESTAMP_NTZ) stays one, anything else becomes an instant (TIMESTAMP)."""
    return T.TimestampNTZType() if isinstance(t, T.TimestampNTZType) else T.TimestampType()


def _interval_result(types: list[DataType], literals: list[Any]) -> DataType:
    """date +/- INTERVAL of whole days and months stays a date (Spark's DateAddInterval); else a timestamp."""
    if isinstance(types[0], (T.DateType, T.StringType)) and literals[3] == 0:
        return T.DateType()
    return _same_timestamp(types[0])


# interval_add(start, months, days, microseconds): what `start + INTERVAL ...` in SQL becomes.
register("interval_add", 4, 4, lambda types: _same_timestamp(types[0]), literal_result=_interval_result)
for _name in ("datediff", "date_diff"):
    register(_name, 2, 2, returns(T.IntegerType()), takes(_name, DATE, DATE))
register("months_between", 2, 3, returns(T.DoubleType()), takes("months_between", TIMESTAMP, TIMESTAMP, BOOLEAN),
         shown_with_defaults("months_between", 3, ("true",)))
register("to_date", 1, 2, returns(T.DateType()), takes("to_date", DATETIME_TEXT, STRING))
register("to_timestamp", 1, 2, returns(T.TimestampType()),
         lambda types: ([None] if isinstance(types[0], T.NumericType)
                        else check_arguments("to_timestamp", [DATETIME_TEXT], types[:1]))
         + check_arguments("to_timestamp", [STRING], types[1:]))
# to_timestamp's wall-clock twin: the time the text says, in no zone.
register("to_timestamp_ntz", 1, 2, returns(T.TimestampNTZType()),
         lambda types: check_arguments("to_timestamp_ntz", [DATETIME_TEXT], types[:1])
         + check_arguments("to_timestamp_ntz", [STRING], types[1:]))
register("date_format", 2, 2, returns(T.StringType()), takes("date_format", TIMESTAMP, STRING))
register("current_date", 0, 0, returns(T.DateType()))
register("current_timestamp", 0, 0, returns(T.TimestampType()))
register("now", 0, 0, returns(T.TimestampType()))
register("date_trunc", 2, 2, lambda types: _same_timestamp(types[1]), takes("date_trunc", STRING, TIMESTAMP))
register("trunc", 2, 2, returns(T.DateType()), takes("trunc", DATE, STRING))
for _name in ("unix_timestamp", "to_unix_timestamp"):
    register(_name, 0 if _name == "unix_timestamp" else 1, 2, returns(T.LongType()),
             takes(_name, DATETIME_TEXT, STRING), _unix_timestamp(_name))
register("from_unixtime", 1, 2, returns(T.StringType()), takes("from_unixtime", BIGINT, STRING),
         shown_with_defaults("from_unixtime", 2, ("yyyy-MM-dd HH:mm:ss",)))
register("make_date", 3, 3, returns(T.DateType()), takes("make_date", INT, INT, INT))
register("next_day", 2, 2, returns(T.DateType()), takes("next_day", DATE, STRING))
for _name in ("from_utc_timestamp", "to_utc_timestamp"):
    register(_name, 2, 2, returns(T.TimestampType()), takes(_name, TIMESTAMP, STRING))

del _name
