"""Date functions: to_date, year, month, dayofmonth, date_add, date_sub, datediff; date bucketing."""
from __future__ import annotations

import datetime as dt

import pytest

from .data import events, sales
from .harness import assert_same


def test_to_date_default_format():
    def program(spark, F, T, Window):
        return events(spark).select("id", F.to_date("ds").alias("d"), F.to_date(F.col("ds")))
    assert_same(program)


def test_to_date_with_format():
    def program(spark, F, T, Window):
        df = spark.createDataFrame([("15/01/2024",), ("29/02/2024",), (None,)], "raw string")
        return df.select(F.to_date("raw", "dd/MM/yyyy").alias("d"))
    assert_same(program)


def test_to_date_from_timestamp():
    def program(spark, F, T, Window):
        return events(spark).select("id", F.to_date("ts").alias("d"))
    assert_same(program)


def test_year_month_dayofmonth_on_dates_and_timestamps():
    def program(spark, F, T, Window):
        return events(spark).select(
            "id", F.year("d"), F.month("d"), F.dayofmonth("d"),
            F.year("ts").alias("ty"), F.month("ts").alias("tm"), F.dayofmonth("ts").alias("td"))
    assert_same(program)


def test_year_of_string_column():
    def program(spark, F, T, Window):
        return events(spark).select("id", F.year("ds").alias("y"), F.month(F.to_date("ds")).alias("m"))
    assert_same(program)


def test_date_add_date_sub():
    def program(spark, F, T, Window):
        return events(spark).select(
            "id", F.date_add("d", 1).alias("plus1"), F.date_add("d", 366).alias("plus366"),
            F.date_sub("d", 60).alias("minus60"), F.date_add("d", -1).alias("minus1"), F.date_add("d", 10))
    assert_same(program)


def test_datediff():
    def program(spark, F, T, Window):
        return events(spark).select(
            "id", F.datediff(F.lit(dt.date(2024, 3, 1)), "d").alias("days_to_march"),
            F.datediff("d", F.to_date(F.lit("2020-01-01"))).alias("since_2020"),
            F.datediff(F.col("ts"), F.col("d")).alias("ts_minus_d"))
    assert_same(program)


def test_date_arithmetic_chain():
    def program(spark, F, T, Window):
        return (events(spark).withColumn("due", F.date_add(F.to_date("ds"), 30))
                .withColumn("late", F.datediff(F.lit(dt.date(2024, 3, 15)), F.col("due")) > 0)
                .select("id", "due", "late", F.year("due").alias("due_year")))
    assert_same(program)


def test_date_bucketing_by_month():
    def program(spark, F, T, Window):
        return (sales(spark).filter(F.col("day").isNotNull())
                .withColumn("y", F.year("day")).withColumn("m", F.month("day"))
                .groupBy("y", "m").agg(F.sum("qty").alias("qty"), F.count("*").alias("orders"))
                .orderBy("y", "m"))
    assert_same(program, ordered=True)


def test_dates_equality_and_ordering():
    def program(spark, F, T, Window):
        return events(spark).filter(F.col("d") == F.to_date(F.lit("2024-02-29"))).union(
            events(spark).filter(F.col("d") < "2021-01-01"))
    assert_same(program)


@pytest.mark.beyond_contract
def test_date_format_trunc_dayofweek():
    def program(spark, F, T, Window):
        return events(spark).select(
            "id", F.date_format("d", "yyyy-MM").alias("ym"), F.trunc("d", "month").alias("month_start"),
            F.dayofweek("d").alias("dow"), F.date_trunc("hour", "ts").alias("hour"),
            F.to_timestamp(F.lit("2024-01-01 10:00:00")).alias("ts_lit"))
    assert_same(program)


def test_date_add_with_column_days_and_negative_datediff():
    def program(spark, F, T, Window):
        df = spark.createDataFrame([(dt.date(2024, 1, 31), 1), (dt.date(2024, 2, 28), -60), (None, 3),
                                    (dt.date(2023, 3, 1), None)],
                                   "d date, n int")
        return df.select("d", "n", F.date_add("d", F.col("n")).alias("plus"),
                         F.date_sub(F.col("d"), F.col("n")).alias("minus"),
                         F.datediff(F.lit(dt.date(2020, 1, 1)), "d").alias("neg"))
    assert_same(program)


def test_year_month_day_of_timestamps_near_midnight_utc():
    def program(spark, F, T, Window):
        df = spark.createDataFrame([(dt.datetime(2023, 12, 31, 23, 59, 59),), (dt.datetime(2024, 1, 1, 0, 0, 0),)],
                                   "ts timestamp")
        return df.select("ts", F.year("ts"), F.month("ts"), F.dayofmonth("ts"), F.to_date("ts").alias("d"))
    assert_same(program)


@pytest.mark.parametrize("call", ["to_timestamp_pattern", "unix_timestamp", "to_unix_timestamp", "to_date_pattern"])
def test_text_a_pattern_cannot_read_raises_under_ansi(call):
    from quiver.engine.core.errors import DateTimeException

    from .harness import assert_both_raise

    def program(spark, F, T, Window):
        df = spark.createDataFrame([("2024-01-02 03:04:05",), ("abc",)], "s string")
        column = {"to_timestamp_pattern": lambda: F.to_timestamp("s", "yyyy-MM-dd HH:mm:ss"),
                  "unix_timestamp": lambda: F.unix_timestamp("s"),
                  "to_unix_timestamp": lambda: F.to_unix_timestamp("s"),
                  "to_date_pattern": lambda: F.to_date("s", "yyyy-MM-dd HH:mm:ss")}[call]()
        return df.select(column)
    error = assert_both_raise(program, DateTimeException, match=["CANNOT_PARSE_TIMESTAMP", "'abc'"])
    assert error.getCondition() == "CANNOT_PARSE_TIMESTAMP"


def test_text_a_pattern_cannot_read_is_null_without_ansi():
    def program(spark, F, T, Window):
        df = spark.createDataFrame([("2024-01-02 03:04:05",), ("abc",), (None,)], "s string")
        return df.select(F.to_timestamp("s", "yyyy-MM-dd HH:mm:ss").alias("t"), F.unix_timestamp("s").alias("u"),
                         F.to_date("s", "yyyy-MM-dd HH:mm:ss").alias("d"))
    assert_same(program, conf={"spark.sql.ansi.enabled": False}, shuffle_partitions=(1,))
