"""quiver/engine/api/spark_interop.py: DataFrames handed between Quiver and real PySpark through Arrow keep their
column names, exact types (decimals, timestamps as instants, timestamp_ntz, dates, nested
arrays/maps/structs) and rows, both ways."""
from __future__ import annotations

import datetime
import math
from decimal import Decimal

import pyarrow as pa
import pytest

from quiver.engine.api.session import Session
from quiver.engine.api.spark_interop import from_pyspark, to_pyspark
from quiver.engine.core.errors import AnalysisException

RICH_SQL = """
SELECT * FROM VALUES
  (1, CAST(9007199254740993 AS BIGINT), CAST('12345678901234567890.123456789012345678' AS DECIMAL(38,18)),
   CAST(-1.25 AS DECIMAL(5,2)), TIMESTAMP'2024-03-10 02:30:00.123456', TIMESTAMP_NTZ'2024-03-10 02:30:00.123456',
   DATE'2024-02-29', 'ann', ARRAY(1, NULL, 3), MAP('a', CAST(1.5 AS DOUBLE), 'b', NULL),
   NAMED_STRUCT('x', 1, 'when', TIMESTAMP'1900-01-01 00:00:00', 'tags', ARRAY('p', 'q')),
   CAST(7 AS TINYINT), CAST(-300 AS SMALLINT), CAST(0.5 AS FLOAT), X'00FF', true),
  (2, NULL, NULL, NULL, TIMESTAMP'2500-12-31 23:59:59.999999', NULL, DATE'1970-01-01', NULL, ARRAY(), MAP(),
   NULL, NULL, NULL, CAST('NaN' AS FLOAT), NULL, false),
  (3, CAST(-1 AS BIGINT), CAST(0 AS DECIMAL(38,18)), CAST(999.99 AS DECIMAL(5,2)), NULL,
   TIMESTAMP_NTZ'1969-12-31 23:59:59.5', NULL, '', NULL, NULL,
   NAMED_STRUCT('x', NULL, 'when', NULL, 'tags', NULL), NULL, NULL, NULL, X'', NULL)
AS t(id, big, d38, d5, ts, ntz, day, name, arr, m, st, tiny, small, f, bin, flag)
"""


@pytest.fixture(scope="module")
def quiver_session() -> Session:
    return Session.builder.master("local[2]").getOrCreate()


@pytest.fixture
def rich(spark):
    return spark.sql(RICH_SQL)


def ordered(rows) -> list[tuple]:
    return sorted((tuple(r) for r in rows), key=lambda r: r[0])


def is_nan(value) -> bool:
    return isinstance(value, float) and math.isnan(value)


def assert_same_rows(ours, theirs) -> None:
    """Same rows by id, value by value (NaN equal to NaN; nested Rows compare as tuples)."""
    mine, expected = ordered(ours), ordered(theirs)
    assert len(mine) == len(expected)
    for row, want in zip(mine, expected):
        assert len(row) == len(want)
        for a, b in zip(row, want):
            assert a == b or (is_nan(a) and is_nan(b)), (row[0], a, b)


@pytest.fixture
def session_time_zone(spark):
    """`session_time_zone("Asia/Kolkata")` sets PySpark's session time zone for one test."""
    previous = spark.conf.get("spark.sql.session.timeZone")
    yield lambda zone: spark.conf.set("spark.sql.session.timeZone", zone)
    spark.conf.set("spark.sql.session.timeZone", previous)


def test_from_pyspark_keeps_names_types_and_rows(quiver_session, rich):
    ours = from_pyspark(quiver_session, rich)
    assert ours.columns == rich.columns
    assert ours.dtypes == rich.dtypes
    assert_same_rows(ours.collect(), rich.collect())


def test_to_pyspark_keeps_names_types_and_rows(quiver_session, spark):
    ours = quiver_session.createDataFrame(
        [(1, Decimal("123.456"), datetime.datetime(2024, 1, 2, 3, 4, 5, 678901), datetime.datetime(2024, 1, 2, 3, 4, 5),
          datetime.date(2024, 2, 29), [[1, 2], None], {"k": [Decimal("1.5")]}, ("a", datetime.date(2000, 1, 1))),
         (2, None, None, None, None, None, None, None)],
        "id INT, amount DECIMAL(12,3), at TIMESTAMP, wall TIMESTAMP_NTZ, day DATE, grid ARRAY<ARRAY<INT>>, "
        "m MAP<STRING, ARRAY<DECIMAL(4,1)>>, s STRUCT<name: STRING, born: DATE>")
    theirs = to_pyspark(ours, spark)
    assert theirs.columns == ours.columns
    assert theirs.dtypes == ours.dtypes == [
        ("id", "int"), ("amount", "decimal(12,3)"), ("at", "timestamp"), ("wall", "timestamp_ntz"), ("day", "date"),
        ("grid", "array<array<int>>"), ("m", "map<string,array<decimal(4,1)>>"), ("s", "struct<name:string,born:date>")]
    assert ordered(theirs.collect()) == ordered(ours.collect())


def test_timestamps_stay_the_same_instants_in_any_session_time_zone(quiver_session, spark, session_time_zone):
    session_time_zone("Asia/Kolkata")
    theirs = spark.sql("SELECT TIMESTAMP'2024-06-01 12:00:00' AS ts, TIMESTAMP_NTZ'2024-06-01 12:00:00' AS ntz, "
                       "unix_micros(TIMESTAMP'2024-06-01 12:00:00') AS micros")
    ours = from_pyspark(quiver_session, theirs)
    table = ours.toArrow()
    # The instant 12:00 in Kolkata is 06:30 UTC; the wall-clock value has no zone and stays 12:00.
    assert table.column("ts").cast(pa.int64())[0].as_py() == theirs.first().micros
    assert table.column("ntz")[0].as_py() == datetime.datetime(2024, 6, 1, 12, 0)
    back = to_pyspark(ours, spark)
    check = back.selectExpr("unix_micros(ts) AS micros", "CAST(ts AS STRING) AS ts_text",
                            "CAST(ntz AS STRING) AS ntz_text")
    assert tuple(check.first()) == (theirs.first().micros, "2024-06-01 12:00:00", "2024-06-01 12:00:00")


def test_round_trip_both_ways_is_identity(quiver_session, spark, rich):
    again = to_pyspark(from_pyspark(quiver_session, rich), spark)
    assert again.dtypes == rich.dtypes
    assert_same_rows(again.collect(), rich.collect())


def test_many_rows_and_an_empty_result(quiver_session, spark):
    theirs = spark.range(0, 20000).selectExpr("id", "CAST(id AS DECIMAL(20,2)) / 4 AS quarter", "id % 7 AS k")
    ours = from_pyspark(quiver_session, theirs)
    assert ours.count() == 20000
    assert ours.groupBy("k").count().orderBy("k").collect()[0]["count"] == 2858
    empty = from_pyspark(quiver_session, theirs.limit(0))
    assert empty.dtypes == theirs.dtypes and empty.count() == 0
    back = to_pyspark(empty, spark)
    assert back.dtypes == theirs.dtypes and back.count() == 0


def test_handover_goes_through_arrow_not_pandas(quiver_session, spark, rich, monkeypatch):
    from pyspark.sql import DataFrame as PySparkDataFrame
    from pyspark.sql import SparkSession

    from quiver.engine.api.dataframe import DataFrame as QuiverDataFrame

    def refuse(*args, **kwargs):
        raise AssertionError("the handover must not go through pandas")

    monkeypatch.setattr(PySparkDataFrame, "toPandas", refuse)
    monkeypatch.setattr(QuiverDataFrame, "toPandas", refuse)
    handed = []
    create = SparkSession.createDataFrame

    def spy(self, data, *args, **kwargs):
        handed.append(type(data))
        return create(self, data, *args, **kwargs)

    monkeypatch.setattr(SparkSession, "createDataFrame", spy)
    to_pyspark(from_pyspark(quiver_session, rich), spark).count()
    assert handed == [pa.Table]


def test_a_type_quiver_lacks_is_named(quiver_session, spark):
    with pytest.raises(AnalysisException,
                       match="column 'gap' has PySpark type interval day, which Quiver has no type for"):
        from_pyspark(quiver_session, spark.sql("SELECT 1 AS id, INTERVAL '1' DAY AS gap"))
