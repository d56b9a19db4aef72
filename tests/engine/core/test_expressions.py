"""quiver/engine/core/expressions.py: the names Spark gives expressions (`sql()`), decimal result types,
the wider common type, and `format_double` = Java's `Double.toString`, each against PySpark."""
from __future__ import annotations

import datetime as dt
import decimal
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quiver.engine.core import types as T
from quiver.engine.core.errors import AnalysisException
from quiver.engine.core.expressions import (
    AttributeRef,
    BinaryArithmetic,
    Literal,
    decimal_arithmetic_type,
    decimal_divide_type,
    format_double,
    infer_literal_type,
    new_expr_id,
    split_name,
    wider_type,
)

SCHEMA = "a INT, b BIGINT, d DOUBLE, s STRING, p BOOLEAN, day DATE, m DECIMAL(10,2)"
DATA = [(1, 2, 1.5, "x", True, dt.date(2024, 1, 1), decimal.Decimal("1.25"))]

NAMED = {
    "add-literal": lambda F: F.col("a") + 1,
    "radd": lambda F: 1 + F.col("a"),
    "sub-mul-div": lambda F: (F.col("a") - F.col("b")) * F.col("d") / 2,
    "mod": lambda F: F.col("b") % 3,
    "negate": lambda F: -F.col("a"),
    "compare": lambda F: F.col("a") >= F.col("b"),
    "eq": lambda F: F.col("s") == "x",
    "ne": lambda F: F.col("a") != 1,
    "null-safe-eq": lambda F: F.col("a").eqNullSafe(F.col("b")),
    "and-or-not": lambda F: (F.col("p") & (F.col("a") > 1)) | ~F.col("p"),
    "is-null": lambda F: F.col("a").isNull(),
    "is-not-null": lambda F: F.col("s").isNotNull(),
    "isin": lambda F: F.col("a").isin(1, 2, 3),
    "cast": lambda F: F.col("a").cast("string"),
    "cast-decimal": lambda F: F.col("d").cast("decimal(5,2)"),
    "when-otherwise": lambda F: F.when(F.col("a") > 1, "big").otherwise("small"),
    "when-no-else": lambda F: F.when(F.col("a") > 1, 1),
    "lit-int": lambda F: F.lit(7),
    "lit-double": lambda F: F.lit(1.5),
    "lit-big-double": lambda F: F.lit(1e20),
    "lit-small-double": lambda F: F.lit(1e-5),
    "lit-string": lambda F: F.lit("hello"),
    "lit-bool": lambda F: F.lit(True),
    "lit-null": lambda F: F.lit(None),
    "lit-date": lambda F: F.lit(dt.date(2024, 5, 6)),
    "lit-decimal": lambda F: F.lit(decimal.Decimal("3.140")),
    "between": lambda F: F.col("a").between(1, 5),
    "decimal-arith": lambda F: F.col("m") * F.col("m") + F.col("a"),
}


@pytest.fixture(scope="module")
def engines(spark, pyspark_session):
    from pyspark.sql import functions as PF

    from quiver import functions as F

    return (spark.createDataFrame(DATA, SCHEMA), F), (pyspark_session.createDataFrame(DATA, SCHEMA), PF)


@pytest.mark.parametrize("case", list(NAMED))
def test_column_names_and_types_match_pyspark(engines, case):
    (qdf, F), (pdf, PF) = engines
    got = qdf.select(NAMED[case](F))
    want = pdf.select(NAMED[case](PF))
    assert got.columns == want.columns
    assert got.dtypes == want.dtypes


def test_aggregate_and_window_names_match_pyspark(engines):
    (qdf, F), (pdf, PF) = engines
    from pyspark.sql import Window as PW

    from quiver import Window

    def aggs(F_):
        return [F_.count("*"), F_.count("a"), F_.sum("b"), F_.avg("d"), F_.countDistinct("s"), F_.max("m"),
                F_.min(F_.col("a") + 1), F_.first("s")]

    assert qdf.agg(*aggs(F)).columns == pdf.agg(*aggs(PF)).columns
    assert qdf.agg(*aggs(F)).dtypes == pdf.agg(*aggs(PF)).dtypes
    q = qdf.select(F.row_number().over(Window.partitionBy("s").orderBy("a")), F.sum("b").over(Window.partitionBy("s")))
    p = pdf.select(PF.row_number().over(PW.partitionBy("s").orderBy("a")), PF.sum("b").over(PW.partitionBy("s")))
    assert q.dtypes == p.dtypes


DECIMALS = ["decimal(5,2)", "decimal(10,0)", "decimal(38,18)", "decimal(20,10)", "decimal(38,0)", "decimal(3,3)"]


def test_decimal_result_types_match_pyspark(pyspark_non_ansi):
    """+ - * / % of every pair of decimal types, read from PySpark's `typeof` (ANSI off, as Quiver)."""
    cases = [(op, a, b) for op in "+-*/%" for a in DECIMALS for b in DECIMALS]
    select = ", ".join(f"typeof(CAST(1 AS {a}) {op} CAST(1 AS {b}))" for op, a, b in cases)
    theirs = list(pyspark_non_ansi.sql(f"SELECT {select}").collect()[0])
    mismatches = []
    for (op, a, b), want in zip(cases, theirs):
        ta, tb = T.parse_data_type(a), T.parse_data_type(b)
        got = decimal_divide_type(ta, tb) if op == "/" else decimal_arithmetic_type(op, ta, tb)
        if got.simpleString() != want:
            mismatches.append((a, op, b, got.simpleString(), want))
    assert not mismatches


def test_binary_arithmetic_dtype_of_decimals_uses_the_decimal_rules():
    a = AttributeRef("a", T.DecimalType(10, 2), True, new_expr_id())
    b = AttributeRef("b", T.DecimalType(5, 4), True, new_expr_id())
    assert BinaryArithmetic("*", a, b).dtype == T.DecimalType(16, 6)
    assert BinaryArithmetic("/", a, b).dtype == decimal_divide_type(T.DecimalType(10, 2), T.DecimalType(5, 4))
    assert BinaryArithmetic("/", AttributeRef("i", T.IntegerType()), AttributeRef("j", T.IntegerType())).dtype \
        == T.DoubleType()


WIDER = ["int", "bigint", "double", "float", "decimal(5,2)", "string", "date", "timestamp", "boolean",
         "array<int>", "array<bigint>"]


def test_wider_type_matches_pysparks_coalesce(pyspark_non_ansi):
    """The common type of two branches, read from coalesce() with ANSI off. Where Spark finds
    none (string and boolean), Quiver may be more lenient; where Spark finds one, it must agree."""

    def spark_types(pairs):
        select = ", ".join(f"typeof(coalesce(CAST(NULL AS {a}), CAST(NULL AS {b})))" for a, b in pairs)
        try:
            return list(pyspark_non_ansi.sql(f"SELECT {select}").collect()[0])
        except Exception:  # noqa: BLE001 — some pair has no common type: ask one by one
            if len(pairs) == 1:
                return [None]
            return [t for pair in pairs for t in spark_types([pair])]

    mismatches = []
    for a in WIDER:
        pairs = [(a, b) for b in WIDER]
        for (_, b), want in zip(pairs, spark_types(pairs)):
            if want is None:
                continue
            try:
                got = wider_type(T.parse_data_type(a), T.parse_data_type(b)).simpleString()
            except AnalysisException:
                got = None
            if got != want:
                mismatches.append((a, b, got, want))
    assert not mismatches


def test_wider_type_error_names_both_types_and_the_context():
    with pytest.raises(AnalysisException, match="CASE WHEN branches: boolean and date"):
        wider_type(T.BooleanType(), T.DateType(), "CASE WHEN branches")


@pytest.mark.parametrize("value,expected", [
    (1, T.IntegerType()), (2**31, T.LongType()), (-(2**31), T.IntegerType()), (1.0, T.DoubleType()),
    (True, T.BooleanType()), ("s", T.StringType()), (None, T.NullType()), (b"x", T.BinaryType()),
    (dt.date(2024, 1, 1), T.DateType()), (dt.datetime(2024, 1, 1), T.TimestampType()),
    (decimal.Decimal("12.340"), T.DecimalType(5, 3)), (decimal.Decimal("0.001"), T.DecimalType(3, 3)),
    ([1, None], T.ArrayType(T.IntegerType())),
])
def test_literal_types_match_pysparks_lit(pyspark_session, value, expected):
    from pyspark.sql import functions as PF

    assert infer_literal_type(value) == expected
    want = pyspark_session.range(1).select(PF.lit(value)).dtypes[0][1]
    assert expected.simpleString() == want


def test_unsupported_literal_names_its_type_and_the_valid_ones():
    with pytest.raises(AnalysisException, match="object.*valid literals are"):
        Literal.of(object())


@pytest.mark.parametrize("text,parts", [("a", ["a"]), ("d.grp", ["d", "grp"]), ("`a.b`.c", ["a.b", "c"]),
                                        ("`we``ird`", ["we`ird"])])
def test_split_name_honours_backquotes(text, parts):
    assert split_name(text) == parts


# ---------------------------------------------------------------- format_double


def _java_double_to_string(pyspark_session, values):
    jvm = pyspark_session.sparkContext._jvm
    return [jvm.java.lang.Double.toString(float(v)) for v in values]


FIXED = [0.0, -0.0, 1.0, -1.5, 100.0, 1e7, 9999999.0, 1e-3, 0.001, 9.999e-4, 1e-4, 1e20, 1e21, 123456.789,
         0.1, 1 / 3, 2.5e-8, 1.7976931348623157e308, 2.2250738585072014e-308, 5e-324, float("nan"), float("inf"),
         float("-inf"), 12345678.9, -1e-10, 4.35]


def test_format_double_matches_java_on_boundaries_and_specials(pyspark_session):
    want = _java_double_to_string(pyspark_session, FIXED)
    got = [format_double(v) for v in FIXED]
    assert [(v, g, w) for v, g, w in zip(FIXED, got, want) if g != w] == []


@settings(max_examples=200, deadline=None)
@given(st.decimals(min_value=-1e15, max_value=1e15, allow_nan=False, allow_infinity=False, places=6)
       .map(float).filter(lambda v: len(repr(abs(v)).replace(".", "").replace("e", "").lstrip("0")) <= 15))
def test_format_double_matches_java_for_short_decimals(pyspark_session, value):
    """Up to 15 significant digits, where every JDK's Double.toString gives the shortest form."""
    assert format_double(value) == _java_double_to_string(pyspark_session, [value])[0]


def test_format_double_handles_non_finite_without_the_jvm():
    assert format_double(math.nan) == "NaN"
    assert format_double(-math.inf) == "-Infinity"
