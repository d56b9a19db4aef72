"""createDataFrame from every input PySpark accepts, with every way of giving a schema; spark.range."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pandas as pd
import pyarrow as pa

from .harness import assert_same, assert_same_value


def test_tuples_with_list_of_names_infers_types():
    def program(spark, F, T, Window):
        return spark.createDataFrame(
            [(1, "a", 1.5, True), (2, "b", -0.25, False), (3, None, None, None)],
            ["id", "name", "score", "flag"])
    assert_same(program, shuffle_partitions=(1,))


def test_tuples_with_ddl_schema():
    def program(spark, F, T, Window):
        return spark.createDataFrame(
            [(1, "a", 1.5), (2, "b", 2.0), (None, None, None)],
            "id int, name string, score double")
    assert_same(program, shuffle_partitions=(1,))


def test_tuples_with_struct_type_every_basic_type():
    def program(spark, F, T, Window):
        schema = T.StructType([
            T.StructField("b", T.ByteType()),
            T.StructField("s", T.ShortType()),
            T.StructField("i", T.IntegerType()),
            T.StructField("l", T.LongType()),
            T.StructField("f", T.FloatType()),
            T.StructField("d", T.DoubleType()),
            T.StructField("str", T.StringType()),
            T.StructField("flag", T.BooleanType()),
            T.StructField("day", T.DateType()),
            T.StructField("ts", T.TimestampType()),
            T.StructField("dec", T.DecimalType(10, 2)),
        ])
        return spark.createDataFrame([
            (1, 300, 70000, 2**40, 1.5, 2.25, "x", True, dt.date(2024, 5, 6),
             dt.datetime(2024, 5, 6, 7, 8, 9), Decimal("12.34")),
            (None, None, None, None, None, None, None, None, None, None, None),
        ], schema)
    assert_same(program, shuffle_partitions=(1,))


def test_struct_type_not_nullable_field_and_nested_array():
    def program(spark, F, T, Window):
        schema = T.StructType([
            T.StructField("id", T.LongType(), False),
            T.StructField("tags", T.ArrayType(T.StringType())),
        ])
        return spark.createDataFrame([(1, ["a", "b"]), (2, []), (3, None)], schema)
    assert_same(program, shuffle_partitions=(1,))


def test_list_of_dicts():
    def program(spark, F, T, Window):
        return spark.createDataFrame([
            {"name": "Alice", "age": 34, "score": 1.5},
            {"name": "Bob", "age": 45, "score": 2.5},
        ])
    assert_same(program, shuffle_partitions=(1,))


def test_list_of_dicts_with_ddl_schema():
    def program(spark, F, T, Window):
        return spark.createDataFrame(
            [{"age": 34, "name": "Alice"}, {"age": None, "name": "Bob"}], "name string, age int")
    assert_same(program, shuffle_partitions=(1,))


def test_list_of_rows():
    def program(spark, F, T, Window):
        return spark.createDataFrame([_row(spark, name="Alice", age=34), _row(spark, name="Bob", age=None)])
    assert_same(program, shuffle_partitions=(1,))


def _row(spark, **kwargs):
    """Build a Row with the Row class of the engine that owns ``spark``."""
    if type(spark).__module__.startswith("pyspark"):
        from pyspark.sql import Row
    else:
        from quiver import Row
    return Row(**kwargs)


def test_list_of_rows_with_schema_and_dates():
    def program(spark, F, T, Window):
        rows = [_row(spark, id=1, day=dt.date(2024, 1, 1)), _row(spark, id=2, day=None)]
        return spark.createDataFrame(rows, "id int, day date")
    assert_same(program, shuffle_partitions=(1,))


def test_from_pandas_infers_types():
    def program(spark, F, T, Window):
        pdf = pd.DataFrame({
            "i": [1, 2, 3],
            "x": [1.5, float("nan"), -2.0],
            "s": ["a", None, "c"],
            "b": [True, False, True],
        })
        return spark.createDataFrame(pdf)
    assert_same(program, shuffle_partitions=(1,))


def test_from_pandas_with_ddl_schema():
    def program(spark, F, T, Window):
        pdf = pd.DataFrame({"id": [1, 2, 3], "amount": [10.0, 20.5, None]})
        return spark.createDataFrame(pdf, "id int, amount double")
    assert_same(program, shuffle_partitions=(1,))


def test_from_pandas_with_dates_and_timestamps():
    def program(spark, F, T, Window):
        pdf = pd.DataFrame({
            "ts": pd.to_datetime(["2024-01-01 10:00:00", "2024-06-30 23:59:59"]),
            "n": [1, 2],
        })
        return spark.createDataFrame(pdf)
    assert_same(program, shuffle_partitions=(1,))


def test_from_arrow_table():
    def program(spark, F, T, Window):
        table = pa.table({
            "i32": pa.array([1, None, 3], pa.int32()),
            "i64": pa.array([10, 20, None], pa.int64()),
            "f64": pa.array([0.5, None, 2.5], pa.float64()),
            "s": pa.array(["x", "y", None], pa.string()),
            "flag": pa.array([True, None, False], pa.bool_()),
            "day": pa.array([dt.date(2024, 1, 1), None, dt.date(2024, 12, 31)], pa.date32()),
            "ts": pa.array([dt.datetime(2024, 1, 1, 1, 2, 3), None, dt.datetime(2024, 3, 4, 5, 6, 7)],
                           pa.timestamp("us", tz="UTC")),
        })
        return spark.createDataFrame(table)
    assert_same(program, shuffle_partitions=(1,))


def test_from_arrow_table_then_transform():
    def program(spark, F, T, Window):
        table = pa.table({"k": ["a", "b", "a", "c"], "v": [1, 2, 3, 4]})
        return spark.createDataFrame(table).groupBy("k").agg(F.sum("v").alias("total"))
    assert_same(program)


def test_range_single_argument():
    def program(spark, F, T, Window):
        return spark.range(5)
    assert_same(program, ordered=True, shuffle_partitions=(1,))


def test_range_start_end_step():
    def program(spark, F, T, Window):
        return spark.range(2, 20, 3)
    assert_same(program, ordered=True, shuffle_partitions=(1,))


def test_range_with_partitions_then_arithmetic():
    def program(spark, F, T, Window):
        return spark.range(0, 10, 1, 3).withColumn("sq", F.col("id") * F.col("id"))
    assert_same(program, shuffle_partitions=(1,))


def test_empty_dataframe_with_schema():
    def program(spark, F, T, Window):
        return spark.createDataFrame([], "a int, b string")
    assert_same(program, shuffle_partitions=(1,))


def test_inferred_types_with_nulls_dates_and_decimals():
    def program(spark, F, T, Window):
        return spark.createDataFrame(
            [(None, dt.date(2024, 1, 2), Decimal("1.5")), (7, None, None)], ["n", "day", "dec"])
    assert_same(program, shuffle_partitions=(1,))


def test_inferred_array_column():
    def program(spark, F, T, Window):
        return spark.createDataFrame([(1, [1, 2, 3]), (2, [])], ["id", "xs"])
    assert_same(program, shuffle_partitions=(1,))


def test_atomic_values_with_type_schema():
    def program(spark, F, T, Window):
        return spark.createDataFrame([1, 2, 3], T.IntegerType())
    assert_same(program, shuffle_partitions=(1,))


def test_count_of_created_frames():
    def fn(spark, F, T, Window):
        return [
            spark.createDataFrame([(i, str(i)) for i in range(37)], "a int, b string").count(),
            spark.range(1000).count(),
            spark.createDataFrame(pd.DataFrame({"x": range(11)})).count(),
        ]
    assert_same_value(fn)


def test_timezone_aware_datetimes_become_utc():
    def program(spark, F, T, Window):
        plus2 = dt.timezone(dt.timedelta(hours=2))
        return spark.createDataFrame(
            [(1, dt.datetime(2024, 1, 1, 12, 0, tzinfo=plus2)),
             (2, dt.datetime(2024, 7, 1, 0, 30, tzinfo=dt.timezone.utc))],
            "id int, ts timestamp")
    assert_same(program, shuffle_partitions=(1,))


def test_from_pandas_nullable_extension_dtypes():
    def program(spark, F, T, Window):
        pdf = pd.DataFrame({
            "i": pd.array([1, None, 3], dtype="Int64"),
            "i32": pd.array([1, 2, None], dtype="Int32"),
            "b": pd.array([True, None, False], dtype="boolean"),
            "s": pd.array(["a", None, "c"], dtype="string"),
            "f": pd.array([0.5, None, 1.5], dtype="Float64"),
        })
        return spark.createDataFrame(pdf)
    assert_same(program, shuffle_partitions=(1,))


def test_from_pandas_with_list_of_names_renames():
    def program(spark, F, T, Window):
        return spark.createDataFrame(pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}), ["id", "label"])
    assert_same(program, shuffle_partitions=(1,))
