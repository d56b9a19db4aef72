"""CAST against real PySpark (spark.sql.ansi.enabled=false): same values, same targets, same results.

For every source type one Spark query casts a column of edge values to each target;
`cast_array` must give the same values. `can_cast` is checked against Spark's analyzer
over a grid of types.
"""
from __future__ import annotations

import datetime as dt
import math
import os
import time
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quiver.engine.core import types as T
from quiver.engine.core.errors import AnalysisException
from quiver.executors.cpu.cast import can_cast, cast_array

os.environ["TZ"] = "UTC"
time.tzset()

D = Decimal
NAN, INF = float("nan"), float("inf")
P = T.parse_data_type

STRINGS = [
    "12", " 12 ", "1.5", "-1.9", "1.", ".5", "1e3", "abc", "2147483648", "+3", "\t7\n", "", "1.x", "0x10", "-", ".",
    "9223372036854775807", "9223372036854775808", "127", "128", "-129", "00012", "-0", "2147483647.5",
    "NaN", "nan", "Infinity", "-infinity", "inf", "+inf", "1d", "1f", "1,000", "1e400", "-.5", "+.5e-1", "1.5L",
    "-NAN", "+NaN", "1.005", "-1.005", "999.995", "1.0E-2", "t", "true", "TRUE", "y", "yes", "f", "false", "n",
    "no", "0", "2", "2024-01-05", "2024-1-5", "2024", "2024-01", "2024-01-05 10:00:00", "2024-01-05T10:00",
    "2024-01-05garbage", " 2024-01-05 ", "2024-02-30", "20240105", "2024-13-01", "2024/01/05", "2024-01-05T",
    "02024-01-05", "2024-01-05 1:2:3", "2024-01-05 10:00:00.123456", "2024-01-05 10:00:00.1234567",
    "2024-01-05 10:00:00Z", "2024-01-05 10:00:00+01:00", "2024-01-05 10:00:00 UTC", "2024-01-05 25:00:00",
    "2024-01-05 10:00:00-0800", "2024-01-05 10:00:00 garbage", "2024-01-05 10:00:60", "2024-01-05 10:00:00.",
    "2024-01-05 10:00:00 America/New_York", "2024-01-05 10:00:00GMT+1", "2024-01-05 10:", "2024-01-05  10:00:00",
    "ß", None,
]
DOUBLES = [1.9, -1.9, 1e20, -1e20, NAN, INF, -INF, 0.0, -0.0, 1.005, 2.675, 999.995, 0.125, 1e-5, 123456789.123,
           1e7, 9999999.0, 1e-3, 9.99e-4, 1.23e-10, None, 300.0, -300.0, 0.1, 2.5, 1.5e300, 1e21, 12345678.9, 0.3,
           2.0**60, -2.0**62, 1e18, 123456789012345678.0, 9007199254740993.0, 2.0**53 + 2, 1e15 + 0.5]
SMALL_DOUBLES = [1.5, -1.5, NAN, INF, 0.0, 1704448800.25, -0.000001, None]

# (source type, values, targets)
GROUPS: list[tuple[str, list, list[str]]] = [
    ("string", STRINGS, ["int", "bigint", "tinyint", "smallint", "double", "float", "decimal(5,2)", "decimal(10,0)",
                         "decimal(38,18)", "boolean", "date", "timestamp", "binary"]),
    ("double", DOUBLES, ["int", "bigint", "tinyint", "smallint", "float", "string", "decimal(5,2)",
                         "decimal(38,10)", "boolean"]),
    ("double", SMALL_DOUBLES, ["timestamp"]),
    ("float", [1.1, 1e20, 0.1, 3.4028235e38, 16777216.0, 1e7, 123456.7, NAN, None, -2.5, 1.5, 123456789.0, 1e10,
               -3e9, 2.0**40, 33554436.0],
     ["string", "double", "int", "decimal(10,2)"]),
    ("int", [0, 1, -1, 2147483647, -2147483648, 300, -129, None, 999, 1000],
     ["tinyint", "smallint", "bigint", "double", "float", "string", "decimal(3,0)", "decimal(5,2)", "boolean",
      "timestamp", "binary"]),
    ("bigint", [2147483648, 4294967297, -9223372036854775808, 9223372036854775807, 300, None],
     ["int", "tinyint", "double", "decimal(38,0)", "decimal(10,2)", "string", "binary"]),
    ("decimal(5,2)", [D("1.99"), D("-1.99"), D("300.5"), D("2.55"), D("999.99"), D("-999.99"), D("0.00"), D("1.25"),
                      D("-1.25"), None],
     ["int", "tinyint", "double", "float", "string", "decimal(4,1)", "decimal(3,0)", "decimal(10,4)", "boolean",
      "timestamp"]),
    ("decimal(38,8)", [D("12345678901234567890.12345678"), D("-1.5"), D("123456789012345678901234567.5"), None],
     ["double", "string", "bigint", "int"]),
    ("decimal(20,15)", [D("0.0000000001"), D("1"), None], ["string"]),
    ("boolean", [True, False, None], ["int", "double", "string", "decimal(3,1)", "timestamp", "bigint"]),
    ("date", [dt.date(2024, 1, 5), dt.date(1969, 12, 31), dt.date(1000, 1, 1), dt.date(9999, 12, 30), None],
     ["string", "timestamp", "int", "boolean"]),
    ("timestamp", [dt.datetime(2024, 1, 5, 10, 0, 0, 500000), dt.datetime(1969, 12, 31, 23, 59, 59, 500000),
                   dt.datetime(2024, 1, 5, 10, 0, 0, 123456), dt.datetime(2024, 1, 5, 10, 0, 0, 120000),
                   dt.datetime(2024, 1, 5, 10), dt.datetime(2200, 1, 5, 10, 0, 0, 500000), None],
     ["string", "date", "bigint", "int", "smallint", "double", "float", "decimal(20,3)", "boolean"]),
    ("binary", [b"ABC", b"", None], ["string"]),
    ("array<int>", [[1, 2], None, [3, None], []], ["string", "array<string>"]),
    ("array<string>", [["1", "x"], None, [" 2 "]], ["array<int>", "string"]),
    ("map<int,string>", [{1: "a"}, None, {2: None}], ["string"]),
    ("struct<a:int,b:string>", [{"a": 1, "b": "x"}, None, {"a": None, "b": "y"}], ["string"]),
]


@pytest.fixture(scope="module")
def spark(pyspark_legacy):
    return pyspark_legacy


@pytest.fixture(scope="module")
def spark_casts(spark) -> dict[int, list[list]]:
    """Spark's results, from one query: column v<g> holds group g's values (null-padded)."""
    height = max(len(values) for _, values, _ in GROUPS)
    schema = ", ".join(f"v{g} {source}" for g, (source, _, _) in enumerate(GROUPS))
    rows = [tuple(values[r] if r < len(values) else None for _, values, _ in GROUPS) for r in range(height)]
    casts = [f"CAST(v{g} AS {t}) AS c{g}_{k}" for g, (_, _, targets) in enumerate(GROUPS)
             for k, t in enumerate(targets)]
    collected = spark.createDataFrame(rows, schema).selectExpr(*casts).collect()
    out, column = {}, 0
    for g, (_, values, targets) in enumerate(GROUPS):
        out[g] = [[row[column + k] for row in collected[: len(values)]] for k in range(len(targets))]
        column += len(targets)
    return out


def _pyspark_value(v: Any) -> Any:
    """PySpark gives maps as dicts and binaries as bytearrays; Arrow as lists of pairs and bytes."""
    if isinstance(v, bytearray):
        return bytes(v)
    if isinstance(v, dict):
        return sorted(v.items())
    if hasattr(v, "asDict"):
        return tuple(v)
    return v


def _arrow_value(v: Any) -> Any:
    if isinstance(v, list) and v and isinstance(v[0], tuple):
        return sorted(v)
    if isinstance(v, dict):
        return tuple(v.values())
    return v


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if a is None or b is None:
        return a is b
    # decimals compare by value: the column type already fixes the scale
    return type(a) is type(b) and a == b


CASES = [(g, k) for g, (_, _, targets) in enumerate(GROUPS) for k in range(len(targets))]


def _case_id(case: tuple[int, int]) -> str:
    g, k = case
    return f"{GROUPS[g][0]}->{GROUPS[g][2][k]}#{g}"


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_cast_matches_pyspark(case, spark_casts):
    g, k = case
    source, values, targets = GROUPS[g]
    target = P(targets[k])
    out = cast_array(pa.array(values, P(source).to_arrow()), target)
    assert out.type == target.to_arrow()
    expected = [_pyspark_value(v) for v in spark_casts[g][k]]
    actual = [_arrow_value(v) for v in out.to_pylist()]
    bad = [(values[r], e, a) for r, (e, a) in enumerate(zip(expected, actual)) if not same(e, a)]
    assert not bad, "value, PySpark, Quiver:\n" + "\n".join(map(repr, bad))


GRID = ["string", "boolean", "tinyint", "int", "bigint", "float", "double", "decimal(10,2)", "date", "timestamp",
        "binary", "array<int>", "array<string>", "map<string,int>", "struct<a:int>"]


def test_can_cast_agrees_with_spark(spark):
    # Cast.canCast is the rule Spark's analyzer applies to CAST when ANSI mode is off;
    # asking it directly avoids 225 failing queries
    jvm = spark._jvm
    spark_can_cast = jvm.org.apache.spark.sql.catalyst.expressions.Cast.canCast
    ddl = jvm.org.apache.spark.sql.types.DataType.fromDDL
    disagreements = [
        (source, target, spark_ok)
        for source in GRID for target in GRID
        if can_cast(P(source), P(target)) != (spark_ok := spark_can_cast(ddl(source), ddl(target)))
    ]
    assert not disagreements, "source, target, Spark allows:\n" + "\n".join(map(repr, disagreements))


def test_scalars_stay_scalars():
    assert cast_array(pa.scalar(" 12 "), T.IntegerType()) == pa.scalar(12, pa.int32())
    assert cast_array(pa.scalar(1.0), T.StringType()).as_py() == "1.0"
    assert cast_array(pa.scalar(None, pa.string()), T.DateType()) == pa.scalar(None, pa.date32())


def test_null_column_casts_to_anything():
    out = cast_array(pa.nulls(3), T.DecimalType(5, 2))
    assert out.type == pa.decimal128(5, 2) and out.null_count == 3


def test_impossible_cast_names_both_types_and_the_valid_targets():
    with pytest.raises(AnalysisException, match=r"cannot cast int to date; int casts to string, boolean"):
        cast_array(pa.array([1], pa.int32()), T.DateType())


def test_double_to_string_uses_javas_layout_on_large_arrays():
    values = [1.0, 1e20, 9.99e-4, 123456789.123, -0.0, 1e-300, 2.0**60]
    out = cast_array(pa.array(values * 1000), T.StringType()).to_pylist()
    assert out[:7] == ["1.0", "1.0E20", "9.99E-4", "1.23456789123E8", "-0.0", "1.0E-300", "1.15292150460684698E18"]


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.lists(st.one_of(st.none(), st.integers(-(2**53) + 1, 2**53 - 1)), max_size=30),
                 st.lists(st.one_of(st.none(), st.integers(-(10**17), 10**17)), max_size=30)),
       st.integers(0, 18))
def test_decimal_to_double_is_correctly_rounded(unscaled, scale):
    """The int64 path and the text path agree with Python's correctly rounded Decimal -> float
    (Java's BigDecimal.doubleValue); past 2**53 the text path takes over."""
    values = [None if u is None else Decimal(u).scaleb(-scale) for u in unscaled]
    arr = pa.array(values, pa.decimal128(38, scale))
    got = cast_array(arr, T.DoubleType()).to_pylist()
    assert got == [None if v is None else float(v) for v in values]
