"""Spark's partitioned JDBC read: `partitionColumn`, `lowerBound`, `upperBound` and
`numPartitions` become one WHERE clause per partition, with Spark's exact strides.

The bounds only decide the stride; they never filter: the first partition also takes every
value below its upper edge and the NULLs, the last every value from its lower edge up, so each
row of the table is read exactly once whatever the bounds.
"""
from __future__ import annotations

import datetime as dt
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Context, Decimal, localcontext

from quiver.engine.core.errors import ConfigurationError

_EPOCH_DAY = dt.date(1970, 1, 1)
_EPOCH = dt.datetime(1970, 1, 1)
_LONG = (-(2 ** 63), 2 ** 63 - 1)
# Scala's BigDecimal divides with MathContext.DECIMAL128: 34 digits, half-even.
_DECIMAL128 = Context(prec=34, rounding=ROUND_HALF_EVEN)


def bound_value(text: object, kind: str, option: str, column: str) -> int:
    """A bound of a partition column of `kind` ('number', 'date' or 'timestamp') as Spark holds it:
    the number itself, days since 1970 for a date, microseconds since 1970 (UTC) for a timestamp."""
    value = str(text).strip()
    try:
        if kind == "date":
            return (dt.date.fromisoformat(value[:10]) - _EPOCH_DAY).days
        if kind == "timestamp":
            moment = dt.datetime.fromisoformat(value)
            if moment.tzinfo is not None:
                moment = moment.astimezone(dt.timezone.utc).replace(tzinfo=None)
            return (moment - _EPOCH) // dt.timedelta(microseconds=1)
        number = int(value)
    except ValueError as e:
        what = {"date": "a date (yyyy-mm-dd)", "timestamp": "a timestamp (yyyy-mm-dd hh:mm:ss[.ffffff])"}.get(
            kind, "an integer")
        raise ConfigurationError(
            f"option '{option}' must be {what} for partition column {column!r}, got {text!r}") from e
    if not _LONG[0] <= number <= _LONG[1]:
        raise ConfigurationError(f"option '{option}' = {text!r} does not fit in a 64-bit integer")
    return number


def stride_clauses(column: str, kind: str, lower: int, upper: int, num_partitions: int) -> list[str | None]:
    """The WHERE clause of each partition (None: the whole table), as Spark's
    `JDBCRelation.columnPartition` computes them for quoted `column` of `kind`."""
    if num_partitions <= 1 or lower == upper:
        return [None]
    if lower > upper:
        raise ConfigurationError(
            f"the lower bound of partition column {column} is larger than the upper bound: "
            f"lowerBound = {_literal(lower, kind)}, upperBound = {_literal(upper, kind)}")
    span = upper - lower
    # Spark's Long subtraction overflows past 2^63; then it keeps the requested count.
    if span >= num_partitions or span > _LONG[1]:
        count = num_partitions
    else:
        count = span
    with localcontext(_DECIMAL128):
        upper_stride = Decimal(upper) / Decimal(count)
        lower_stride = Decimal(lower) / Decimal(count)
    with localcontext(Context(prec=80)):
        exact_stride = _scale(upper_stride, 18, ROUND_HALF_EVEN) - _scale(lower_stride, 18, ROUND_HALF_EVEN)
        stride = int(exact_stride)
    with localcontext(_DECIMAL128):
        # A stride rounded down to 0 (Spark divides by it and fails) leaves the middle partitions empty.
        lost_strides = (exact_stride - stride) * count / stride if stride else Decimal(0)
        shift = lost_strides / 2 * stride
    with localcontext(Context(prec=80)):
        current = lower + int(_scale(shift, 0, ROUND_HALF_UP))
    clauses: list[str | None] = []
    for i in range(count):
        low = f"{column} >= {_literal(current, kind)}" if i != 0 else None
        current += stride
        high = f"{column} < {_literal(current, kind)}" if i != count - 1 else None
        if high is None:
            clauses.append(low)
        elif low is None:
            clauses.append(f"{high} or {column} is null")
        else:
            clauses.append(f"{low} AND {high}")
    return clauses


def _scale(value: Decimal, places: int, rounding: str) -> Decimal:
    return value.quantize(Decimal(1).scaleb(-places), rounding=rounding)


def _literal(value: int, kind: str) -> str:
    """A bound in SQL: the number, or a quoted date or timestamp (UTC, the sessions' zone)."""
    if kind == "date":
        return f"'{_EPOCH_DAY + dt.timedelta(days=value)}'"
    if kind == "timestamp":
        moment = _EPOCH + dt.timedelta(microseconds=value)
        text = moment.strftime("%Y-%m-%d %H:%M:%S")
        if moment.microsecond:
            text += f".{moment.microsecond:06d}".rstrip("0")
        return f"'{text}'"
    return str(value)
