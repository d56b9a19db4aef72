"""Actions: collect, count, first, head, take, show (exact text), toPandas, toArrow, Row access."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pandas as pd
import pyarrow as pa

from .data import events, numbers, people, sales
from .harness import assert_same_output, assert_same_value, compare_rows, normalize


def test_collect_rows_and_field_access():
    def fn(spark, F, T, Window):
        rows = people(spark).orderBy("id").collect()
        return [[r.name, r["age"], r[4], r.asDict()] for r in rows]
    assert_same_value(fn)


def test_count_variants():
    def fn(spark, F, T, Window):
        df = people(spark)
        return [df.count(), df.filter(F.col("age") > 30).count(), df.select("city").distinct().count(),
                df.groupBy("city").count().count(), df.limit(2).count()]
    assert_same_value(fn)


def test_first_head_take():
    def fn(spark, F, T, Window):
        df = people(spark).orderBy(F.col("salary").desc_nulls_last())
        return [df.first(), df.head(), df.head(3), df.take(2), df.head(0), df.limit(1).collect()]
    assert_same_value(fn)


def test_first_on_empty_is_none():
    def fn(spark, F, T, Window):
        df = people(spark).filter(F.col("id") < 0)
        return [df.first(), df.head(2), df.take(1), df.collect(), df.count()]
    assert_same_value(fn)


def test_row_types_of_values():
    def fn(spark, F, T, Window):
        row = spark.createDataFrame(
            [(1, 2**40, 1.5, "s", True, dt.date(2024, 1, 2), dt.datetime(2024, 1, 2, 3, 4, 5), Decimal("1.25"))],
            "i int, l bigint, d double, s string, b boolean, day date, ts timestamp, dec decimal(5,2)").first()
        return [[type(v).__name__ for v in row], list(row)]
    assert_same_value(fn)


def test_show_default():
    def fn(spark, F, T, Window):
        people(spark).orderBy("id").show()
    assert_same_output(fn)


def test_show_n_and_numbers_formatting():
    def fn(spark, F, T, Window):
        numbers(spark).orderBy("i").show(3)
    assert_same_output(fn)


def test_show_more_than_twenty_rows_footer():
    def fn(spark, F, T, Window):
        spark.range(25).withColumn("sq", F.col("id") * F.col("id")).show()
    assert_same_output(fn)


def test_show_truncates_long_strings_at_twenty():
    def fn(spark, F, T, Window):
        df = spark.createDataFrame(
            [(1, "short"), (2, "exactly twenty chars"), (3, "this string is longer than twenty characters"), (4, None)],
            "id int, text string")
        df.orderBy("id").show()
        df.orderBy("id").show(truncate=False)
        df.orderBy("id").show(truncate=8)
    assert_same_output(fn)


def test_show_dates_timestamps_booleans_nulls():
    def fn(spark, F, T, Window):
        events(spark).withColumn("flag", F.col("id") > 2).orderBy("id").show()
    assert_same_output(fn)


def test_show_doubles_and_decimals():
    def fn(spark, F, T, Window):
        spark.createDataFrame(
            [(1.0, Decimal("1.50"), 0.1), (123456789.125, Decimal("-2.00"), 1e-5), (None, None, float("nan"))],
            "x double, d decimal(6,2), y double").show()
    assert_same_output(fn)


def test_show_vertical():
    def fn(spark, F, T, Window):
        people(spark).orderBy("id").limit(2).show(vertical=True)
    assert_same_output(fn)


def test_show_empty():
    def fn(spark, F, T, Window):
        people(spark).filter(F.col("id") < 0).show()
    assert_same_output(fn)


def _compare_frames(expected: pd.DataFrame, actual: pd.DataFrame) -> str | None:
    if not isinstance(actual, pd.DataFrame):
        return f"toPandas returned {type(actual).__name__}"
    problems = []
    if list(expected.columns) != list(actual.columns):
        problems.append(f"columns: {list(expected.columns)} vs {list(actual.columns)}")
    exp_dtypes = [_dtype_name(t) for t in expected.dtypes]
    act_dtypes = [_dtype_name(t) for t in actual.dtypes]
    if exp_dtypes != act_dtypes:
        problems.append(f"dtypes: {exp_dtypes} vs {act_dtypes}")
    exp_rows = [normalize(tuple(_py(v) for v in r)) for r in expected.itertuples(index=False)]
    act_rows = [normalize(tuple(_py(v) for v in r)) for r in actual.itertuples(index=False)]
    diff = compare_rows(exp_rows, act_rows, ordered=True)
    if diff:
        problems.append(diff)
    if list(expected.index) != list(actual.index):
        problems.append(f"index: {list(expected.index)[:10]} vs {list(actual.index)[:10]}")
    return "\n".join(problems) or None


def _dtype_name(t) -> str:
    # pandas 3 infers its own string dtype; object-of-str and str are the same data to a user
    name = str(t)
    return "string" if name in ("object", "str", "string") else name


def _py(v):
    if v is None or (isinstance(v, float) and pd.isna(v)):
        return None if v is None else float("nan")
    if v is pd.NaT:
        return None
    if isinstance(v, pd.Timestamp):
        return v.to_pydatetime()
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        return v.item()
    return v


def test_to_pandas():
    def fn(spark, F, T, Window):
        return people(spark).orderBy("id").toPandas()
    assert_same_value(fn, compare=_compare_frames)


def test_to_pandas_types():
    def fn(spark, F, T, Window):
        return events(spark).withColumn("ok", F.col("id") > 2).withColumn("big", F.col("id").cast("bigint")) \
            .orderBy("id").toPandas()
    assert_same_value(fn, compare=_compare_frames)


def test_to_pandas_after_aggregate():
    def fn(spark, F, T, Window):
        return sales(spark).groupBy("category").agg(F.sum("qty").alias("q"), F.avg("price").alias("p")) \
            .orderBy("category").toPandas()
    assert_same_value(fn, compare=_compare_frames)


def _compare_arrow(expected: pa.Table, actual) -> str | None:
    if not isinstance(actual, pa.Table):
        return f"toArrow returned {type(actual).__name__}"
    exp = [(f.name, str(f.type)) for f in expected.schema]
    act = [(f.name, str(f.type)) for f in actual.schema]
    if exp != act:
        return f"arrow schemas differ:\n  pyspark: {exp}\n  quiver:  {act}"
    return compare_rows([normalize(r) for r in expected.to_pylist()],
                        [normalize(r) for r in actual.to_pylist()], ordered=True)


def test_to_arrow():
    def fn(spark, F, T, Window):
        return people(spark).orderBy("id").toArrow()
    assert_same_value(fn, compare=_compare_arrow)


def test_to_arrow_dates_decimals():
    def fn(spark, F, T, Window):
        return spark.createDataFrame(
            [(dt.date(2024, 1, 1), Decimal("1.50"), 2**40), (None, None, None)],
            "d date, dec decimal(10,2), l bigint").toArrow()
    assert_same_value(fn, compare=_compare_arrow)


def test_columns_on_derived_frames():
    def fn(spark, F, T, Window):
        df = people(spark)
        return [df.columns, df.groupBy("city").count().columns, df.select(F.col("age") + 1).columns,
                df.join(df.alias("o"), "id").columns]
    assert_same_value(fn)


def test_to_pandas_int_column_with_nulls_and_dates():
    def fn(spark, F, T, Window):
        return people(spark).select("id", "age", "dept_id", F.lit(dt.date(2024, 1, 1)).alias("d")) \
            .orderBy("id").toPandas()
    assert_same_value(fn, compare=_compare_frames)


def test_timestamps_with_microseconds_collect_and_show():
    def fn(spark, F, T, Window):
        df = spark.createDataFrame(
            [(dt.datetime(2024, 1, 1, 10, 0, 0, 123456),), (dt.datetime(2024, 1, 1, 10, 0, 0, 500000),),
             (dt.datetime(1999, 12, 31, 23, 59, 59),)], "ts timestamp")
        df.orderBy("ts").show(truncate=False)
        return df.orderBy("ts").collect()
    def compare(expected, actual):
        return None if normalize(expected) == normalize(actual) else f"{expected!r}\n{actual!r}"
    assert_same_value(fn, compare=compare)
    assert_same_output(fn)


def test_show_negative_numbers_and_wide_table():
    def fn(spark, F, T, Window):
        numbers(spark).withColumn("label", F.concat(F.lit("row-"), F.col("i").cast("string"))) \
            .withColumn("neg", -F.col("d")).orderBy("i").show()
    assert_same_output(fn)


def test_show_pads_wide_characters_like_spark():
    def fn(spark, F, T, Window):
        spark.createDataFrame(
            [(1, "東京", "ÄÖÜ straße"), (2, "a", "emoji 😀"), (3, "ｶﾀｶﾅ", "")], "id int, city string, s string").show()
    assert_same_output(fn)
