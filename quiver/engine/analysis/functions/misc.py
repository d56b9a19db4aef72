"""Catalog entries for hash, random and partition-aware functions, grouping(), and the further string,
math and date functions (format_string, base64, pmod, conv, make_date, from_utc_timestamp, ...).

Kept apart from `function_catalog` (which imports this module at its end) so each family can
grow without touching the core table; the argument kinds and helpers are the core's.
"""
from __future__ import annotations

from quiver.engine.core import types as T
from quiver.engine.analysis.functions.catalog import (
    BIGINT, BINARY, DATE, INT, NUMERIC, STRING, TIMESTAMP, DataType, _call, _call_filling, _check,
    _fixed, _inputs, _register, common_type,
)


def _any_arguments(types: list[DataType]) -> list[DataType | None]:
    return [None] * len(types)


def _hex_inputs(types: list[DataType]) -> list[DataType | None]:
    """hex takes bigint, string or binary; other numbers become bigint, as Spark's implicit cast."""
    t = types[0]
    if isinstance(t, (T.StringType, T.BinaryType, T.LongType)):
        return [None]
    if isinstance(t, (T.IntegralType, T.NullType)):
        return [T.LongType()]
    if isinstance(t, (T.FractionalType,)):
        return [T.LongType()]
    return _check("hex", [STRING], types)


def _pmod_inputs(types: list[DataType]) -> list[DataType | None]:
    for i, t in enumerate(types):
        if not isinstance(t, (T.NumericType, T.NullType, T.StringType)):
            _check("pmod", [NUMERIC, NUMERIC], types)
    wanted = [T.DoubleType() if isinstance(t, T.StringType) else t for t in types]
    target = common_type("pmod", wanted, False)
    if isinstance(target, T.NullType):
        target = T.IntegerType()
    return [None if t == target else target for t in types]


def _pmod_result(types: list[DataType]) -> DataType:
    wanted = [T.DoubleType() if isinstance(t, T.StringType) else t for t in types]
    target = common_type("pmod", wanted, False)
    return T.IntegerType() if isinstance(target, T.NullType) else target


def _format_number_inputs(types: list[DataType]) -> list[DataType | None]:
    out = _check("format_number", [NUMERIC], types[:1])
    second = types[1]
    if isinstance(second, T.StringType):
        return out + [None]
    return out + _check("format_number", [INT], [second])


# hashes
_register("hash", 1, None, _fixed(T.IntegerType()), _any_arguments)
_register("xxhash64", 1, None, _fixed(T.LongType()), _any_arguments)
_register("crc32", 1, 1, _fixed(T.LongType()), _inputs("crc32", BINARY))

# random values and where a row is
for _name in ("rand", "random", "randn"):
    _register(_name, 0, 1, _fixed(T.DoubleType()), _inputs(_name, BIGINT))
_register("monotonically_increasing_id", 0, 0, _fixed(T.LongType()))
_register("spark_partition_id", 0, 0, _fixed(T.IntegerType()), None, _call("SPARK_PARTITION_ID"))

# grouping sets: replaced by the grouping-set aggregate before execution (quiver/engine/analysis/grouping_sets.py)
_register("grouping", 1, 1, _fixed(T.ByteType()), _any_arguments)
_register("grouping_id", 0, None, _fixed(T.LongType()), _any_arguments)

# strings
for _name in ("format_string", "printf"):
    _register(_name, 1, None, _fixed(T.StringType()),
              (lambda n: lambda types: _check(n, [STRING], types[:1]) + [None] * (len(types) - 1))(_name))
_register("base64", 1, 1, _fixed(T.StringType()), _inputs("base64", BINARY))
_register("unbase64", 1, 1, _fixed(T.BinaryType()), _inputs("unbase64", STRING))
_register("levenshtein", 2, 3, _fixed(T.IntegerType()), _inputs("levenshtein", STRING, STRING, INT))
_register("soundex", 1, 1, _fixed(T.StringType()), _inputs("soundex", STRING))
_register("regexp_extract_all", 2, 3, _fixed(T.ArrayType(T.StringType())),
          _inputs("regexp_extract_all", STRING, STRING, INT), _call_filling("regexp_extract_all", 3, ("1",)))
_register("format_number", 2, 2, _fixed(T.StringType()), _format_number_inputs)
_register("substring_index", 3, 3, _fixed(T.StringType()), _inputs("substring_index", STRING, STRING, INT))
_register("left", 2, 2, _fixed(T.StringType()), _inputs("left", STRING, INT))
_register("right", 2, 2, _fixed(T.StringType()), _inputs("right", STRING, INT))
_register("split_part", 3, 3, _fixed(T.StringType()), _inputs("split_part", STRING, STRING, INT))
_register("replace", 2, 3, _fixed(T.StringType()), _inputs("replace", STRING, STRING, STRING),
          _call_filling("replace", 3, ("",)))

# math
_register("pmod", 2, 2, _pmod_result, _pmod_inputs)
_register("conv", 3, 3, _fixed(T.StringType()), _inputs("conv", STRING, INT, INT))
_register("bin", 1, 1, _fixed(T.StringType()), _inputs("bin", BIGINT))
_register("hex", 1, 1, _fixed(T.StringType()), _hex_inputs)
_register("unhex", 1, 1, _fixed(T.BinaryType()), _inputs("unhex", STRING))

# dates and times
_register("make_date", 3, 3, _fixed(T.DateType()), _inputs("make_date", INT, INT, INT))
_register("next_day", 2, 2, _fixed(T.DateType()), _inputs("next_day", DATE, STRING))
for _name in ("from_utc_timestamp", "to_utc_timestamp"):
    _register(_name, 2, 2, _fixed(T.TimestampType()), _inputs(_name, TIMESTAMP, STRING))

del _name
