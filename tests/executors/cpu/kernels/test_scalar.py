"""Scalar kernels against real PySpark: the same function on the same values, with nulls.

Every case runs through the catalog's implicit casts and result type, then the kernel,
exactly as the analyzer and executor will; the reference is one Spark SQL query over the
same rows (non-ANSI, UTC). Values and Spark type names must match.
"""
from __future__ import annotations

import datetime as dt
import math
import os
import time
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given
from hypothesis import strategies as st

from quiver.engine.core import types as T
from quiver.engine.core.errors import QuiverError
from quiver.engine.analysis.functions.catalog import NOT_LITERAL, lookup
from quiver.executors.cpu.cast import cast_array
from quiver.executors.cpu.kernels import KERNELS

os.environ["TZ"] = "UTC"
time.tzset()

D = Decimal
NAN, INF = float("nan"), float("inf")

SCHEMA = [
    ("s", T.StringType()), ("i", T.IntegerType()), ("l", T.LongType()), ("d", T.DoubleType()),
    ("dec", T.DecimalType(5, 2)), ("dt", T.DateType()), ("ts", T.TimestampType()), ("b", T.BooleanType()),
    ("arr", T.ArrayType(T.StringType())), ("sd", T.StringType()), ("n", T.IntegerType()), ("f", T.FloatType()),
]
COLUMNS = {
    "s": ["Ab c", None, "", "  x y  ", "\tx\n", "ß straße", "héllo wORLD foo-bar", "aB_cD", "😀x", "abcb",
          "a%", "a,b;c,,", "ΟΔΟΣ İ ǆ ﬁx ŉ", " 12 ", "1.5", "o'neil mc-donald"],
    "i": [15, 25, -15, None, -2147483648, 2147483647, 0, 1, -1, 7, 100, 3, 2, -7, 12, 5],
    "l": [-9223372036854775808, 5, -128, None, 9223372036854775807, 0, 15, -25, 1, 2, 3, 4, 10**12, -1, 6, 7],
    "d": [2.5, -2.5, 0.125, 1.005, -0.0, None, NAN, INF, -1.0, 0.0, 1e300, 15.0, 25.0, 2.675, 1e-5, -INF],
    "dec": [D("2.55"), D("-2.55"), D("999.99"), None, D("0.00"), D("1.25"), D("-1.25"), D("0.05"), D("12.34"),
            D("100.00"), D("-0.01"), D("5.55"), D("3.14"), D("9.99"), D("0.50"), D("-999.99")],
    "dt": [dt.date(2024, 1, 31), dt.date(2024, 2, 29), dt.date(2023, 12, 31), dt.date(2021, 1, 3), None,
           dt.date(1969, 12, 31), dt.date(2020, 12, 31), dt.date(2024, 3, 31), dt.date(2000, 1, 1),
           dt.date(1900, 3, 1), dt.date(2024, 12, 30), dt.date(2021, 1, 1), dt.date(2024, 6, 15),
           dt.date(1970, 1, 1), dt.date(2027, 1, 1), dt.date(2024, 1, 15)],
    "ts": [dt.datetime(2024, 5, 15, 13, 45, 59, 987654), None, dt.datetime(1969, 12, 31, 23, 59, 59, 500000),
           dt.datetime(2024, 1, 5), dt.datetime(2024, 2, 29, 23, 59, 59), dt.datetime(2000, 1, 1, 12),
           dt.datetime(2024, 12, 31, 0, 0, 0, 1000), dt.datetime(2024, 3, 15, 12), dt.datetime(1999, 12, 31, 23, 59, 59),
           dt.datetime(2024, 1, 31, 6, 30), dt.datetime(2021, 1, 3, 1, 2, 3), dt.datetime(2024, 2, 29, 0, 0, 1),
           dt.datetime(1970, 1, 1), dt.datetime(2024, 7, 4, 18, 0, 0, 123000), dt.datetime(2030, 10, 10, 10, 10, 10),
           dt.datetime(2024, 1, 1, 0, 0)],
    "b": [True, False, None, True, False, True, False, True, False, True, False, True, False, True, False, True],
    "arr": [["a", "b"], ["a", None], None, [], ["b"], ["x", "y", "z"], ["b", "b"], [None], ["c"], ["a"],
            ["", "b"], ["q"], ["b", None], ["r", "s"], ["t"], ["u", "v"]],
    "sd": ["2024-01-05", "2024-01-05 10:11:12", "bad", None, "05/01/2024", "2024-1-5", "2024-01-05T10:11:12.345",
           "2024-02-30", " 2024-03-01 ", "2024", "2024-01-05 10:11:12.3", "5/1/2024", "Jan 5 2024",
           "2024-01-05 10:00:00+01:00", "2024-12-31 23:59:59", "1999-01-01 00:00:00"],
    "n": [2, 0, -1, None, 1, 3, 5, 10, 2, 1, 4, -3, 2, 1, 100, 0],
    "f": [1.5, 1.25, None, -2.5, 0.1, 3.4e38, NAN, 1.1, 0.0, -0.0, 2.675, 16777216.0, 1e7, 1e-4, 123456.7, 0.3],
}
ROWS = len(COLUMNS["s"])

# (function, arguments): a str naming a column of the table above, or Lit(value) for a literal


class Lit:
    def __init__(self, value: Any, sql_type: str | None = None):
        self.value, self.sql_type = value, sql_type


def c(*names: str) -> tuple[str, ...]:
    return names


CASES: list[tuple[str, tuple]] = [
    # strings
    ("upper", c("s")), ("lower", c("s")), ("ucase", c("s")), ("initcap", c("s")), ("trim", c("s")),
    ("ltrim", c("s")), ("rtrim", c("s")), ("trim", ("s", Lit("x "))), ("length", c("s")), ("ascii", c("s")),
    ("reverse", c("s")), ("md5", c("s")), ("sha1", c("s")), ("sha2", ("s", Lit(256))), ("sha2", ("s", Lit(384))),
    ("octet_length", c("s")), ("upper", c("i")), ("length", c("d")), ("lower", c("b")),
    ("substring", ("s", Lit(1), Lit(3))), ("substring", ("s", Lit(0), Lit(2))), ("substring", ("s", Lit(-2), Lit(1))),
    ("substring", ("s", Lit(-10), Lit(3))), ("substring", ("s", Lit(2))), ("substring", ("s", Lit(5), Lit(2))),
    ("substring", ("s", Lit(2), Lit(-1))), ("substring", ("s", Lit(-3))), ("substring", ("s", Lit(-5), Lit(2))),
    ("substr", ("s", "n", Lit(2))), ("substring", ("s", "n", "n")),
    ("concat", ("s", "s")), ("concat", ("s", Lit("-"), "i")), ("concat", ("s", "d")), ("concat_ws", (Lit("-"), "s", "sd")),
    ("concat_ws", (Lit(","), "arr", "s")), ("concat_ws", (Lit("-"),)), ("concat_ws", (Lit(None), "s")),
    ("regexp_replace", ("s", Lit("(a)(b)?"), Lit("X$1"))), ("regexp_replace", ("s", Lit("[aeiou]"), Lit("\\$"))),
    ("regexp_replace", ("s", Lit("b"), Lit("_"), Lit(3))), ("regexp_replace", ("s", Lit("\\s+"), Lit("-"))),
    ("regexp_extract", ("s", Lit("(a)(b)?"), Lit(0))), ("regexp_extract", ("s", Lit("(a)(b)?"), Lit(2))),
    ("regexp_extract", ("s", Lit("([a-z]+) ([a-z]+)"), Lit(2))), ("regexp_extract", ("s", Lit("(\\d+)"))),
    ("lpad", ("s", Lit(5), Lit("xy"))), ("rpad", ("s", Lit(5), Lit("xy"))), ("lpad", ("s", Lit(2), Lit("x"))),
    ("rpad", ("s", Lit(0), Lit("x"))), ("lpad", ("s", Lit(5), Lit(""))), ("lpad", ("s", Lit(-1), Lit("x"))),
    ("lpad", ("s", Lit(6))), ("rpad", ("s", "n", Lit("ab"))),
    ("instr", ("s", Lit("b"))), ("instr", ("s", Lit(""))), ("instr", ("s", Lit("x"))),
    ("locate", (Lit("b"), "s")), ("locate", (Lit("b"), "s", Lit(3))), ("locate", (Lit("b"), "s", Lit(0))),
    ("locate", (Lit(""), "s", Lit(2))), ("locate", (Lit("x"), "s", Lit(2))),
    ("repeat", ("s", Lit(3))), ("repeat", ("s", Lit(0))), ("repeat", ("s", "n")),
    ("translate", ("s", Lit("abc"), Lit("x"))), ("translate", ("s", Lit("ab"), Lit("ba"))), ("translate", ("s", Lit(" "), Lit("_"))),
    ("split", ("s", Lit(","))), ("split", ("s", Lit(","), Lit(2))), ("split", ("s", Lit(""))), ("split", ("s", Lit("[,;]"))),
    ("split", ("s", Lit(""), Lit(2))), ("split", ("s", Lit(" "), Lit(0))),
    ("startswith", ("s", Lit("a"))), ("endswith", ("s", Lit("b"))), ("contains", ("s", Lit("b"))), ("contains", ("s", Lit(None, "string"))),
    ("startswith", ("s", Lit(""))), ("contains", ("s", "sd")),
    ("like", ("s", Lit("a%"))), ("like", ("s", Lit("_b%"))), ("like", ("s", Lit("a\\%"))), ("like", ("s", Lit("%"))),
    ("like", ("s", Lit("%x_"))), ("ilike", ("s", Lit("A%"))), ("like", ("s", Lit("a/%"), Lit("/"))),
    ("rlike", ("s", Lit("a.c"))), ("rlike", ("s", Lit("^[a-z]+$"))), ("rlike", ("s", Lit("(?i)ab"))),
    # nulls and conditionals
    ("coalesce", ("s", "sd")), ("coalesce", ("i", "d")), ("coalesce", ("i", Lit(0))), ("coalesce", (Lit(None), "i")),
    ("coalesce", ("i", "s")), ("ifnull", ("d", Lit(0.0))), ("nvl", ("i", "l")), ("nvl2", ("i", Lit("a"), Lit("b"))),
    ("nvl2", ("i", "i", "d")), ("if", ("b", "i", "d")), ("if", ("b", "s", Lit(None))), ("nullif", ("i", Lit(15))),
    ("nullif", ("i", "n")), ("nullif", ("i", Lit(2.5))), ("isnull", c("s")), ("isnotnull", c("d")),
    ("isnan", c("d")), ("isnan", c("i")), ("isnan", c("f")), ("nanvl", ("d", Lit(0.0))), ("nanvl", ("i", "d")),
    # math
    ("abs", c("i")), ("abs", c("l")), ("abs", c("d")), ("abs", c("dec")), ("abs", c("f")),
    ("round", c("d")), ("round", ("d", Lit(1))), ("round", ("d", Lit(2))), ("round", ("d", Lit(-1))),
    ("bround", c("d")), ("bround", ("d", Lit(2))), ("round", c("i")), ("round", ("i", Lit(-1))), ("round", ("i", Lit(-2))),
    ("bround", ("i", Lit(-1))), ("round", ("l", Lit(-1))), ("round", ("i", Lit(1))), ("round", c("dec")),
    ("round", ("dec", Lit(1))), ("round", ("dec", Lit(3))), ("round", ("dec", Lit(-1))), ("bround", ("dec", Lit(1))),
    ("round", c("f")), ("round", ("f", Lit(1))), ("round", c("s")),
    ("floor", c("d")), ("ceil", c("d")), ("ceiling", c("d")), ("floor", c("i")), ("ceil", c("l")), ("floor", c("dec")),
    ("ceil", c("dec")), ("floor", c("f")), ("floor", ("d", Lit(1))), ("ceil", ("dec", Lit(1))), ("ceil", ("i", Lit(-1))),
    ("signum", c("d")), ("sign", c("i")), ("signum", c("dec")), ("signum", c("s")),
    ("sqrt", c("d")), ("sqrt", c("i")), ("cbrt", c("d")), ("exp", c("d")), ("expm1", c("d")), ("ln", c("d")),
    ("log10", c("d")), ("log2", c("d")), ("log1p", c("d")), ("log", c("d")), ("log", (Lit(2.0), "d")),
    ("log", ("i", "d")), ("pow", ("d", Lit(2))), ("power", ("d", "d")), ("power", ("i", "n")),
    ("sin", c("d")), ("cos", c("d")), ("tan", c("d")), ("asin", c("d")), ("acos", c("d")), ("atan", c("d")),
    ("sinh", c("d")), ("cosh", c("d")), ("tanh", c("d")), ("degrees", c("d")), ("radians", c("d")),
    ("atan2", ("d", "i")), ("hypot", ("d", "i")),
    ("greatest", ("i", Lit(3))), ("least", ("i", Lit(3))), ("greatest", ("d", Lit(1.0), "i")), ("least", ("d", Lit(1.0))),
    ("greatest", ("s", "sd")), ("least", ("dt", "ts")), ("greatest", ("i", "dec")), ("least", ("b", Lit(True))),
    ("greatest", ("i", Lit(None))),
    # dates and times
    ("year", c("dt")), ("month", c("dt")), ("dayofmonth", c("dt")), ("day", c("dt")), ("dayofweek", c("dt")),
    ("dayofyear", c("dt")), ("quarter", c("dt")), ("weekofyear", c("dt")), ("weekday", c("dt")),
    ("last_day", c("dt")), ("year", c("ts")), ("dayofweek", c("ts")), ("year", c("sd")), ("month", c("sd")),
    ("hour", c("ts")), ("minute", c("ts")), ("second", c("ts")), ("hour", c("dt")), ("hour", c("sd")), ("second", c("sd")),
    ("date_add", ("dt", Lit(1))), ("date_sub", ("dt", Lit(1))), ("date_add", ("dt", "n")), ("date_add", ("ts", Lit(1))),
    ("date_add", ("sd", Lit(-3))), ("dateadd", ("dt", Lit(40))),
    ("datediff", ("dt", Lit("2024-01-01"))), ("datediff", ("ts", "dt")), ("datediff", ("sd", "dt")),
    ("add_months", ("dt", Lit(1))), ("add_months", ("dt", Lit(-13))), ("add_months", ("dt", "n")), ("add_months", ("ts", Lit(1))),
    ("months_between", ("ts", "dt")), ("months_between", ("dt", Lit("2024-01-31"))), ("months_between", ("ts", "dt", Lit(False))),
    ("to_date", c("sd")), ("to_date", ("sd", Lit("dd/MM/yyyy"))), ("to_date", ("sd", Lit("d/M/yyyy"))),
    ("to_date", ("sd", Lit("yyyy-MM-dd"))), ("to_date", ("sd", Lit("MMM d yyyy"))), ("to_date", c("ts")),
    ("to_timestamp", c("sd")), ("to_timestamp", ("sd", Lit("yyyy-MM-dd HH:mm:ss"))),
    ("to_timestamp", ("sd", Lit("yyyy-MM-dd'T'HH:mm:ss.SSS"))), ("to_timestamp", ("sd", Lit("yyyy-MM-dd HH:mm:ssXXX"))),
    ("to_timestamp", c("dt")), ("to_timestamp", c("i")), ("to_timestamp", c("dec")),
    ("date_format", ("ts", Lit("yyyy-MM-dd"))), ("date_format", ("ts", Lit("dd/MM/yy HH:mm:ss.SSS"))),
    ("date_format", ("ts", Lit("h:mm a, EEE MMM d"))), ("date_format", ("ts", Lit("EEEE MMMM D Q"))),
    ("date_format", ("dt", Lit("yyyy/MM/dd HH"))), ("date_format", ("sd", Lit("HH:mm"))),
    ("date_format", ("ts", Lit("S SS SSSSSS k K"))), ("date_format", ("ts", Lit("yyyy-MM-dd'T'HH:mm:ssXXX"))),
    ("date_trunc", (Lit("month"), "ts")), ("date_trunc", (Lit("YEAR"), "ts")), ("date_trunc", (Lit("week"), "ts")),
    ("date_trunc", (Lit("quarter"), "ts")), ("date_trunc", (Lit("hour"), "ts")), ("date_trunc", (Lit("dd"), "ts")),
    ("date_trunc", (Lit("millisecond"), "ts")), ("date_trunc", (Lit("bogus"), "ts")), ("date_trunc", (Lit("mm"), "dt")),
    ("trunc", ("dt", Lit("MM"))), ("trunc", ("dt", Lit("year"))), ("trunc", ("dt", Lit("week"))),
    ("trunc", ("dt", Lit("quarter"))), ("trunc", ("dt", Lit("dd"))), ("trunc", ("ts", Lit("mon"))),
    ("unix_timestamp", c("ts")), ("unix_timestamp", c("dt")), ("unix_timestamp", c("sd")),
    ("unix_timestamp", ("sd", Lit("dd/MM/yyyy"))), ("from_unixtime", c("i")), ("from_unixtime", ("i", Lit("yyyy-MM-dd"))),
    # collections
    ("size", c("arr")), ("array_contains", ("arr", Lit("b"))), ("array_contains", ("arr", "s")), ("reverse", c("arr")),
    ("size", (Lit(None, "array<string>"),)),
    ("sort_array", c("arr")), ("sort_array", ("arr", Lit(False))), ("sort_array", (Lit(None, "array<double>"),)),
]


def _sql_literal(lit: Lit) -> str:
    v = lit.value
    if v is None:
        return f"CAST(NULL AS {lit.sql_type})" if lit.sql_type else "NULL"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v) if -2**31 <= v < 2**31 else f"{v}L"
    if isinstance(v, float):
        return f"double('{v}')" if not math.isfinite(v) else f"{v!r}D"
    if isinstance(v, str):
        return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"
    raise TypeError(v)


def _arrow_literal(lit: Lit) -> pa.Scalar:
    v = lit.value
    if v is None:
        return pa.scalar(None, T.parse_data_type(lit.sql_type).to_arrow() if lit.sql_type else pa.null())
    if isinstance(v, bool):
        return pa.scalar(v, pa.bool_())
    if isinstance(v, int):
        return pa.scalar(v, pa.int32() if -2**31 <= v < 2**31 else pa.int64())
    if isinstance(v, float):
        return pa.scalar(v, pa.float64())
    return pa.scalar(v, pa.string())


def _case_id(case: tuple[str, tuple]) -> str:
    name, args = case
    return f"{name}({', '.join(a if isinstance(a, str) else repr(a.value) for a in args)})"


@pytest.fixture(scope="module")
def spark(pyspark_legacy):
    return pyspark_legacy


@pytest.fixture(scope="module")
def table() -> pa.Table:
    return pa.table({name: pa.array(COLUMNS[name], t.to_arrow()) for name, t in SCHEMA})


@pytest.fixture(scope="module")
def spark_results(spark) -> dict[int, tuple[list, str]]:
    """Every case in one Spark query: column k holds case k."""
    schema = ", ".join(f"{n} {t.simpleString()}" for n, t in SCHEMA)
    rows = [tuple(COLUMNS[n][r] for n, _ in SCHEMA) for r in range(ROWS)]
    spark.createDataFrame(rows, schema).createOrReplaceTempView("t")
    exprs = []
    for k, (name, args) in enumerate(CASES):
        rendered = [a if isinstance(a, str) else _sql_literal(a) for a in args]
        if name == "trim" and len(args) == 2:
            # SQL's two-argument trim(a, b) trims a's characters from b; F.trim(col, chars) is the order we test
            exprs.append(f"TRIM(BOTH {rendered[1]} FROM {rendered[0]}) AS c{k}")
        else:
            exprs.append(f"`{name}`({', '.join(rendered)}) AS c{k}")
    df = spark.sql(f"SELECT {', '.join(exprs)} FROM t")
    collected = df.collect()
    return {k: ([row[k] for row in collected], df.dtypes[k][1]) for k in range(len(CASES))}


def evaluate(name: str, args: tuple, table: pa.Table) -> tuple[list, T.DataType]:
    """What the analyzer and CPU executor do with a ScalarFunction: coerce, type, run the kernel."""
    values = [table.column(a).combine_chunks() if isinstance(a, str) else _arrow_literal(a) for a in args]
    spec = lookup(name)
    types = [T.from_arrow(v.type) for v in values]
    targets = spec.input_types(types) if spec.input_types else [None] * len(values)
    coerced = [v if t is None else cast_array(v, t) for v, t in zip(values, targets)]
    coerced_types = [T.from_arrow(v.type) if t is None else t for v, t in zip(values, targets)]
    literals = [a.value if isinstance(a, Lit) else NOT_LITERAL for a in args]
    if spec.literal_result_type is not None:
        result_type = spec.literal_result_type(coerced_types, literals)
    else:
        result_type = spec.result_type(coerced_types)
    out = KERNELS[name](coerced, result_type)
    if isinstance(out, pa.Scalar):
        out = pa.array([out.as_py()] * table.num_rows, out.type)
    assert out.type == result_type.to_arrow() or pa.types.is_null(out.type), (out.type, result_type)
    return out.to_pylist(), result_type


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b or math.isclose(a, b, rel_tol=1e-12)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b if a is not None and b is not None else a is b


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_matches_pyspark(case, table, spark_results):
    k = CASES.index(case)
    expected, expected_type = spark_results[k]
    actual, actual_type = evaluate(case[0], case[1], table)
    assert actual_type.simpleString() == expected_type
    mismatches = [(_row(r), e, a) for r, (e, a) in enumerate(zip(expected, actual)) if not same(e, a)]
    assert not mismatches, "row inputs, PySpark, Quiver:\n" + "\n".join(map(repr, mismatches))


def _row(r: int) -> dict:
    return {n: COLUMNS[n][r] for n, _ in SCHEMA}


FOLDING = [
    ("upper", ["abc"]), ("substring", ["abcdef", 2, 3]), ("concat_ws", ["-", "a", None, "b"]), ("round", [2.5, 0]),
    ("round", [Decimal("2.55"), 1]), ("regexp_replace", ["aab", "a", "x"]), ("split", ["a,b", ","]),
    ("date_add", [dt.date(2024, 1, 31), 1]), ("date_format", [dt.datetime(2024, 1, 5, 10), "yyyy/MM/dd HH"]),
    ("coalesce", [None, 3]), ("greatest", [1.0, NAN]), ("locate", ["b", "abcb", 3]), ("lpad", ["a", 4, "xy"]),
    ("to_date", ["05/01/2024", "dd/MM/yyyy"]), ("array_contains", [["a", None], "b"]), ("isnan", [None]),
]


@pytest.mark.parametrize("name, values", FOLDING, ids=[f[0] for f in FOLDING])
def test_all_literal_arguments_fold_to_a_scalar_equal_to_the_column_result(name, values):
    scalars = [pa.scalar(v, pa.int32()) if type(v) is int else pa.scalar(v) for v in values]
    spec = lookup(name)
    types = [T.from_arrow(v.type) for v in scalars]
    targets = spec.input_types(types) if spec.input_types else [None] * len(values)
    scalars = [v if t is None else cast_array(v, t) for v, t in zip(scalars, targets)]
    coerced = [T.from_arrow(v.type) for v in scalars]
    rt = spec.literal_result_type(coerced, values) if spec.literal_result_type else spec.result_type(coerced)
    folded = KERNELS[name](scalars, rt)
    assert isinstance(folded, pa.Scalar) and folded.type == rt.to_arrow()
    as_columns = KERNELS[name]([pa.array([v.as_py()] * 3, v.type) if i == 0 else v for i, v in enumerate(scalars)], rt)
    assert all(same(folded.as_py(), x) for x in as_columns.to_pylist())


def test_zero_argument_functions_return_scalars():
    today = KERNELS["current_date"]([], T.DateType())
    now = KERNELS["current_timestamp"]([], T.TimestampType())
    assert today.type == pa.date32() and now.type == pa.timestamp("us")
    assert now.as_py().date() == today.as_py()
    assert KERNELS["unix_timestamp"]([], T.LongType()).as_py() == int(now.as_py().timestamp())


def test_literal_value_with_a_column_pattern_runs_per_distinct_pattern():
    patterns = pa.array(["a%", "%c", None, "a%"])
    assert KERNELS["like"]([pa.scalar("abc"), patterns], T.BooleanType()).to_pylist() == [True, True, None, True]
    widths = pa.array([1, 3, 5, 3], pa.int32())
    assert KERNELS["lpad"]([pa.scalar("ab"), widths, pa.scalar("-")], T.StringType()).to_pylist() == ["a", "-ab", "---ab", "-ab"]


def test_a_column_where_spark_needs_a_literal_is_a_clear_error():
    with pytest.raises(QuiverError, match="date_format: the format must be a literal value, not a column"):
        KERNELS["date_format"]([pa.array([0], pa.timestamp("us")), pa.array(["yyyy"])], T.StringType())


def test_bad_regex_and_replacement_errors_name_the_function():
    with pytest.raises(QuiverError, match=r"regexp_replace: cannot use regular expression '\(\?<=a\)b'.*RE2"):
        KERNELS["regexp_replace"]([pa.array(["ab"]), pa.scalar("(?<=a)b"), pa.scalar("x")], T.StringType())
    with pytest.raises(QuiverError, match=r"regexp_extract: the regex '\(a\)' has 1 groups.*not 2"):
        KERNELS["regexp_extract"]([pa.array(["ab"]), pa.scalar("(a)"), pa.scalar(2)], T.StringType())
    with pytest.raises(QuiverError, match="like: the escape character"):
        KERNELS["like"]([pa.array(["ab"]), pa.scalar("a\\b")], T.BooleanType())


def test_struct_map_and_array_access():
    struct = pa.array([{"a": 1, "B": "x"}, None], pa.struct([("a", pa.int32()), ("B", pa.string())]))
    assert KERNELS["get_field"]([struct, pa.scalar("b")], T.StringType()).to_pylist() == ["x", None]
    mapping = pa.array([[("k", 1)], None, [("j", 2)]], pa.map_(pa.string(), pa.int32()))
    assert KERNELS["get_field"]([mapping, pa.scalar("k")], T.IntegerType()).to_pylist() == [1, None, None]
    lists = pa.array([[1, 2], [3], None, [4, 5, 6]], pa.list_(pa.int32())).slice(1)
    assert KERNELS["element_at_index"]([lists, pa.scalar(1)], T.IntegerType()).to_pylist() == [None, None, 5]
    assert KERNELS["reverse"]([lists], T.ArrayType(T.IntegerType())).to_pylist() == [[3], None, [6, 5, 4]]


def test_sort_array_puts_nan_above_numbers_and_nulls_first():
    lists = pa.array([[3.0, None, NAN, 1.0], None, []], pa.list_(pa.float64()))
    asc = KERNELS["sort_array"]([lists, pa.scalar(True)], T.ArrayType(T.DoubleType())).to_pylist()
    desc = KERNELS["sort_array"]([lists, pa.scalar(False)], T.ArrayType(T.DoubleType())).to_pylist()
    assert same(asc, [[None, 1.0, 3.0, NAN], None, []]) and same(desc, [[NAN, 3.0, 1.0, None], None, []])


def test_sliced_string_columns():
    strings = pa.array(["zz", "é b", "abcb", None]).slice(1)
    assert KERNELS["instr"]([strings, pa.scalar("b")], T.IntegerType()).to_pylist() == [3, 2, None]
    assert KERNELS["ascii"]([strings], T.IntegerType()).to_pylist() == [233, 97, None]


@given(st.lists(st.one_of(st.none(), st.text(alphabet="ab%_.\\\n*x", max_size=8)), max_size=30),
       st.text(alphabet="ab%_.\\*x", max_size=7))
def test_like_matches_the_anchored_regex_it_replaces(strings, pattern):
    from quiver.executors.cpu.kernels.string import like_match, like_regex

    arr = pa.array(strings, pa.string())
    try:
        reference = pc.match_substring_regex(arr, like_regex(pattern))
    except QuiverError:
        with pytest.raises(QuiverError):
            like_match(arr, pattern)
        return
    assert like_match(arr, pattern).equals(reference)
