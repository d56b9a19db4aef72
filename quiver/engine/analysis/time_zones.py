"""The session time zone, bound into a query as the analyzer finishes it (Spark's ResolveTimeZone).

A TIMESTAMP is an instant; its text, its date, its hour and every other field depend on the zone it is seen
in, which is `spark.sql.session.timeZone` (by default the machine's). Kernels know no zone: this pass makes the
zone part of the plan, so every executor, the constant folder and the native engine see the same query.

- A cast between an instant and a wall-clock time (a string, DATE, TIMESTAMP_NTZ) carries the zone
  (`Cast.time_zone`); the CPU kernels convert through it, the native and device executors leave it to them.
- A function that reads a wall-clock field of an instant (hour, date_format, months_between, ...) gets its
  instant as a wall-clock time, `CAST(ts AS TIMESTAMP_NTZ)` in the zone; one that builds an instant from
  wall-clock parts (date_trunc, to_timestamp with a pattern, current_date, interval arithmetic of days and
  months) builds a wall-clock time that is then cast back to an instant in the zone.

Every rewrite leaves an expression it would not rewrite again (its timestamp arguments are TIMESTAMP_NTZ, its
casts carry a zone), so analysing an analysed plan once more changes nothing. In UTC nothing is rewritten:
wall-clock time and instant coincide.
"""
from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace

from quiver.engine.core import types as T
from quiver.engine.core.errors import QuiverNotSupported
from quiver.engine.core.expressions import Cast, Expr, Literal, ScalarFunction, transform_expr
from quiver.engine.core.plan import LogicalPlan, transform_up
from quiver.engine.core.time_zones import zone_info

_SESSION_TIME_ZONE: ContextVar[str] = ContextVar("quiver_session_time_zone", default="UTC")

# The pattern letters that print or parse a zone (Spark's datetime patterns); text in quotes is literal.
_ZONE_LETTERS = re.compile(r"[VzOXxZ]")
_QUOTED = re.compile(r"'[^']*'")
DEFAULT_FORMAT = "yyyy-MM-dd HH:mm:ss"
_DAY_MICROS = 86_400_000_000


@contextmanager
def analyzing_in_zone(zone: str) -> Iterator[None]:
    """Within this block the analyzer binds `zone` (as `conf.normalize_time_zone` names it) into the plans it
    resolves."""
    token = _SESSION_TIME_ZONE.set(zone)
    try:
        yield
    finally:
        _SESSION_TIME_ZONE.reset(token)


def bind_session_time_zone(plan: LogicalPlan) -> LogicalPlan:
    """`plan` with the zone of the session analysing it bound (`bind_time_zone`)."""
    return bind_time_zone(plan, _SESSION_TIME_ZONE.get())


def bind_time_zone(plan: LogicalPlan, zone: str) -> LogicalPlan:
    """`plan` with every zone-dependent cast and function made explicit in `zone` (see the module's docstring)."""
    if zone == "UTC":
        return plan
    return transform_up(plan, lambda node: node.map_expressions(lambda e: transform_expr(e, _binder(zone))))


def _binder(zone: str) -> Callable[[Expr], Expr]:
    def bind(e: Expr) -> Expr:
        if isinstance(e, Literal) and e.wall_clock:
            return _literal_instant(e, zone)
        if isinstance(e, Cast):
            return _bind_cast(e, zone)
        if isinstance(e, ScalarFunction):
            rewrite = _FUNCTIONS.get(e.name)
            if rewrite is not None and all(a.resolved for a in e.args):
                return rewrite(e, zone)
        return e
    return bind


def _literal_instant(e: Literal, zone: str) -> Literal:
    """A wall-clock TIMESTAMP literal as the instant it is in `zone`; Python's rule for a repeated or skipped time
    (fold=0) is Java's, the offset before the change."""
    if e.value is None:
        return Literal(None, e.data_type)
    utc = e.value.replace(tzinfo=zone_info(zone)).astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return Literal(utc, e.data_type)


_WALL_CLOCK = (T.StringType, T.DateType, T.TimestampNTZType)


def _bind_cast(e: Cast, zone: str) -> Cast:
    if e.time_zone is not None or not e.child.resolved:
        return e
    source, target = e.child.dtype, e.to
    crosses = (isinstance(source, T.TimestampType) and isinstance(target, _WALL_CLOCK)
               or isinstance(target, T.TimestampType) and isinstance(source, _WALL_CLOCK))
    return replace(e, time_zone=zone) if crosses else e


def _instant(e: Expr) -> bool:
    return isinstance(e.dtype, T.TimestampType)


def wall_clock(e: Expr, zone: str) -> Expr:
    """An instant's wall-clock time in `zone`; anything else as it is."""
    return Cast(e, T.TimestampNTZType(), time_zone=zone) if _instant(e) else e


def instant(e: Expr, zone: str) -> Expr:
    """A wall-clock time (string, DATE, TIMESTAMP_NTZ) as the instant it is in `zone`; an instant as it is."""
    return Cast(e, T.TimestampType(), time_zone=zone) if isinstance(e.dtype, _WALL_CLOCK) else e


def _fields_of_wall_clock(e: ScalarFunction, zone: str) -> Expr:
    """hour(ts), months_between(a, b), to_date(ts): the fields of the instants' wall-clock times."""
    return replace(e, args=tuple(wall_clock(a, zone) for a in e.args))


def _pattern(e: ScalarFunction, index: int, default: str | None = None) -> str:
    """The literal datetime pattern argument `index` of `e`; QuiverNotSupported when it is computed per row."""
    if len(e.args) <= index:
        return default or DEFAULT_FORMAT
    arg = e.args[index]
    if not isinstance(arg, Literal) or not isinstance(arg.value, str):
        raise QuiverNotSupported(f"{e.name}() with a pattern computed per row in session time zone other than "
                                 "UTC; give the pattern as a literal string, or set spark.sql.session.timeZone=UTC")
    return arg.value


def _names_zone(pattern: str) -> bool:
    return bool(_ZONE_LETTERS.search(_QUOTED.sub("", pattern)))


def _date_format(e: ScalarFunction, zone: str) -> Expr:
    if _instant(e.args[0]) and _names_zone(_pattern(e, 1)):
        raise QuiverNotSupported(f"date_format with a zone pattern letter ({_pattern(e, 1)!r}) in session time zone "
                                 f"{zone}: Quiver prints zones only for UTC; format the zone apart, or set "
                                 "spark.sql.session.timeZone=UTC")
    return _fields_of_wall_clock(e, zone)


def _parsed_instant(e: ScalarFunction, zone: str) -> Expr:
    """to_timestamp(s[, pattern]) of a string: its wall-clock time in `zone` unless the text names a zone."""
    text = e.args[0]
    if isinstance(text.dtype, (T.DateType, T.TimestampNTZType)):
        return instant(text, zone)
    if not isinstance(text.dtype, T.StringType):
        return e
    if len(e.args) == 1:
        return Cast(text, T.TimestampType(), time_zone=zone)
    if _names_zone(_pattern(e, 1)):
        return e
    return Cast(ScalarFunction("to_timestamp_ntz", e.args), T.TimestampType(), time_zone=zone)


def _unix_timestamp(e: ScalarFunction, zone: str) -> Expr:
    """unix_timestamp(text[, pattern]), unix_timestamp(date): the seconds of the instant the wall-clock time is."""
    if not e.args:
        return e
    value = e.args[0]
    if isinstance(value.dtype, T.StringType):
        pattern = e.args[1] if len(e.args) > 1 else Literal.of(DEFAULT_FORMAT)
        parsed = _parsed_instant(ScalarFunction("to_timestamp", (value, pattern)), zone)
    elif isinstance(value.dtype, (T.DateType, T.TimestampNTZType)):
        parsed = instant(value, zone)
    else:
        return e
    return ScalarFunction(e.name, (parsed,))


def _from_unixtime(e: ScalarFunction, zone: str) -> Expr:
    """from_unixtime(seconds, pattern): the instant's wall-clock time in `zone`, formatted."""
    seconds = Cast(e.args[0], T.TimestampType())
    pattern = e.args[1] if len(e.args) > 1 else Literal.of(DEFAULT_FORMAT)
    return _date_format(ScalarFunction("date_format", (seconds, pattern)), zone)


def _date_trunc(e: ScalarFunction, zone: str) -> Expr:
    unit, ts = e.args
    if not _instant(ts):
        return e
    return Cast(ScalarFunction("date_trunc", (unit, wall_clock(ts, zone))), T.TimestampType(), time_zone=zone)


def _current_date(e: ScalarFunction, zone: str) -> Expr:
    return Cast(ScalarFunction("current_timestamp", ()), T.DateType(), time_zone=zone)


def _interval_add(e: ScalarFunction, zone: str) -> Expr:
    """start + INTERVAL: months, days and the whole days of a day-time interval move the wall-clock time in `zone`,
    the rest of it the instant (Spark's timestampAddInterval and timestampAddDayTime)."""
    start, months, days, micros = e.args
    if not isinstance(e.dtype, T.TimestampType):
        return e
    if isinstance(micros, Literal) and isinstance(micros.value, int) and isinstance(days, Literal) \
            and isinstance(days.value, int) and abs(micros.value) >= _DAY_MICROS:
        whole = int(micros.value / _DAY_MICROS)  # toward zero, as Scala's division
        days, micros = Literal.of(days.value + whole), Literal.of(micros.value - whole * _DAY_MICROS)
    calendar = not (isinstance(months, Literal) and months.value == 0 and isinstance(days, Literal) and days.value == 0)
    start = instant(start, zone)
    if not calendar:
        return replace(e, args=(start, months, days, micros))
    moved = Cast(ScalarFunction("interval_add", (wall_clock(start, zone), months, days, Literal.of(0))),
                 T.TimestampType(), time_zone=zone)
    return ScalarFunction("interval_add", (moved, Literal.of(0), Literal.of(0), micros))


_FUNCTIONS: dict[str, Callable[[ScalarFunction, str], Expr]] = {
    **dict.fromkeys(("hour", "minute", "second", "months_between", "to_date"), _fields_of_wall_clock),
    "date_format": _date_format,
    "to_timestamp": _parsed_instant,
    "unix_timestamp": _unix_timestamp,
    "to_unix_timestamp": _unix_timestamp,
    "from_unixtime": _from_unixtime,
    "date_trunc": _date_trunc,
    "current_date": _current_date,
    "interval_add": _interval_add,
}

__all__ = ["analyzing_in_zone", "bind_session_time_zone", "bind_time_zone", "wall_clock", "instant"]
