"""quiver/engine/ui/display.py: `show()` prints the same text as PySpark's `show()` for the same data.

PySpark's text is what its `show()` writes to stdout (it prints the JVM's `showString`).
Most tests compare the text without trailing newlines, so that one difference in the
blank line after the table is reported once, by `test_show_stdout_is_exactly_pysparks`.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import decimal
import io

import pytest

from quiver.engine.core import types as T
from quiver.engine.ui.display import format_value

SCHEMA = ("i INT, l BIGINT, d DOUBLE, f FLOAT, s STRING, b BOOLEAN, dec DECIMAL(10,3), day DATE, "
          "ts TIMESTAMP, bin BINARY, arr ARRAY<INT>, m MAP<STRING,DOUBLE>, st STRUCT<x:INT,y:STRING>")
ROWS = [
    (1, 2**40, 1.0, 1.5, "short", True, decimal.Decimal("1.500"), dt.date(2024, 2, 29),
     dt.datetime(2024, 1, 1, 10, 0, 0), b"\x00\xffA", [1, None, 3], {"a": 1.0}, (1, "y")),
    (None, None, None, None, None, None, None, None, None, None, None, None, None),
    (-7, -1, 1e7, 3.25, "a string longer than twenty chars", False, decimal.Decimal("-0.001"),
     dt.date(1, 1, 1), dt.datetime(2024, 1, 1, 10, 0, 0, 120000), b"", [], {}, (None, None)),
    (0, 0, 1e-4, float("nan"), "", True, decimal.Decimal("123456.789"), dt.date(9999, 12, 31),
     dt.datetime(1970, 1, 1), b"z", [None], {"k": None}, (2, "")),
    (2, 3, float("-inf"), -0.0, "ünïcödé ✓", False, decimal.Decimal("0"), dt.date(2000, 1, 1),
     dt.datetime(2000, 1, 1, 23, 59, 59, 999999), b"ab", [7], {"z": -2.5}, (3, "q")),
    (3, 4, -0.0, 1e20, "tab\there", True, decimal.Decimal("9.990"), dt.date(2000, 1, 2),
     dt.datetime(2000, 1, 2), b"c", [1, 2], {"x": 1e-5}, (4, "r")),
    (4, 5, 123456789.125, 0.1, "x" * 25, None, decimal.Decimal("1"), dt.date(2000, 1, 3),
     dt.datetime(2000, 1, 3), b"d", [3], {"y": 2.0}, (5, "s")),
]


@pytest.fixture(scope="module")
def frames(spark, pyspark_session):
    return spark.createDataFrame(ROWS, SCHEMA), pyspark_session.createDataFrame(ROWS, SCHEMA)


def _stdout(df, *args) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        df.show(*args)
    return out.getvalue()


def _quiver_text(df, *args) -> str:
    return _stdout(df, *args).rstrip("\n")


def _pyspark_text(df, n=20, truncate=True, vertical=False) -> str:
    return _stdout(df, n, truncate, vertical).rstrip("\n")


@pytest.mark.parametrize("n,vertical", [(20, False), (1, False), (20, True)], ids=["table", "top1", "vertical"])
def test_show_stdout_is_exactly_pysparks(spark, pyspark_session, n, vertical):
    data, schema = [(1, "abc"), (2, None)], "i INT, s STRING"
    got = _stdout(spark.createDataFrame(data, schema), n, True, vertical)
    assert got == _stdout(pyspark_session.createDataFrame(data, schema), n, True, vertical)


@pytest.mark.parametrize("n,truncate,vertical", [
    (20, True, False), (3, True, False), (20, False, False), (20, 5, False), (20, 2, False), (2, True, True),
    (1, 0, False), (0, True, False),
], ids=["default", "top3", "no-truncate", "truncate5", "truncate2", "vertical", "top1-untruncated", "zero-rows"])
def test_show_text_matches_pyspark(frames, n, truncate, vertical):
    qdf, pdf = frames
    assert _quiver_text(qdf, n, truncate, vertical) == _pyspark_text(pdf, n, truncate, vertical)


@pytest.mark.parametrize("column", SCHEMA.split(", ")[:10], ids=lambda c: c.split()[0])
def test_show_of_each_column_type_matches_pyspark(frames, column):
    name = column.split()[0]
    qdf, pdf = frames
    assert _quiver_text(qdf.select(name)) == _pyspark_text(pdf.select(name))


def test_show_of_an_empty_frame_matches_pyspark(spark, pyspark_session):
    qdf = spark.createDataFrame([(1, "a")], "id INT, name STRING").filter("id > 5")
    pdf = pyspark_session.createDataFrame([(1, "a")], "id INT, name STRING").filter("id > 5")
    assert _quiver_text(qdf) == _pyspark_text(pdf)
    assert _quiver_text(qdf, 20, True, True) == _pyspark_text(pdf, 20, True, True)


def test_show_of_computed_column_names_matches_pyspark(spark, pyspark_session):
    from pyspark.sql import functions as PF

    from quiver import functions as F

    data = [(1, 2.5), (None, 0.5)]
    qdf = spark.createDataFrame(data, "a INT, b DOUBLE").select((F.col("a") + 1), F.col("b") * 2, F.lit(1.0e-5))
    pdf = pyspark_session.createDataFrame(data, "a INT, b DOUBLE").select((PF.col("a") + 1), PF.col("b") * 2,
                                                                          PF.lit(1.0e-5))
    assert _quiver_text(qdf) == _pyspark_text(pdf)


def test_format_value_of_nested_nulls():
    t = T.ArrayType(T.MapType(T.StringType(), T.IntegerType()))
    assert format_value([{"a": None}, None], t) == "[{a -> NULL}, NULL]"
