"""withColumn, withColumnRenamed, drop, casts, when/otherwise, schema introspection, caching."""
from __future__ import annotations

import datetime as dt

import pytest

from .data import events, numbers, people
from .harness import assert_same, assert_same_output, assert_same_value


def test_with_column_adds_at_end():
    def program(spark, F, T, Window):
        return people(spark).withColumn("age2", F.col("age") * 2)
    assert_same(program)


def test_with_column_replaces_in_place():
    def program(spark, F, T, Window):
        return people(spark).withColumn("age", F.col("age") + 1).withColumn("name", F.upper("name"))
    assert_same(program)


def test_with_column_literal_and_chain():
    def program(spark, F, T, Window):
        return (people(spark)
                .withColumn("country", F.lit("EU"))
                .withColumn("rich", F.col("salary") > 5000)
                .withColumn("bonus", F.col("salary") * 0.1))
    assert_same(program)


def test_with_columns_renamed_and_missing_rename_is_noop():
    def program(spark, F, T, Window):
        return (people(spark)
                .withColumnRenamed("name", "full_name")
                .withColumnRenamed("does_not_exist", "x")
                .withColumnRenamed("age", "years"))
    assert_same(program)


def test_drop_one_many_missing_and_by_column():
    def program(spark, F, T, Window):
        df = people(spark)
        return df.drop("city").drop("salary", "dept_id").drop("nope").drop(df.age)
    assert_same(program)


def test_columns_dtypes_schema_attributes():
    def fn(spark, F, T, Window):
        df = people(spark).withColumn("half", F.col("age") / 2)
        schema = df.schema
        return [df.columns, df.dtypes, [f.name for f in schema.fields],
                [f.dataType.simpleString() for f in schema.fields], schema.simpleString(),
                schema.fieldNames()]
    assert_same_value(fn)


def test_schema_field_nullability_from_ddl():
    def fn(spark, F, T, Window):
        return [(f.name, f.nullable) for f in people(spark).schema.fields]
    assert_same_value(fn)


def test_print_schema_from_ddl():
    def fn(spark, F, T, Window):
        people(spark).printSchema()
    assert_same_output(fn)


def test_print_schema_of_range_and_derived_columns():
    def fn(spark, F, T, Window):
        spark.range(3).withColumn("s", F.col("id").cast("string")).printSchema()
    assert_same_output(fn)


def test_print_schema_nested():
    def fn(spark, F, T, Window):
        spark.createDataFrame([(1, ["a"], 2.0)], "id int, tags array<string>, x double").printSchema()
    assert_same_output(fn)


@pytest.mark.parametrize("target", [
    "int", "bigint", "smallint", "tinyint", "double", "float", "string", "boolean", "decimal(10,2)"])
def test_cast_numbers_to_every_basic_type(target):
    def program(spark, F, T, Window):
        df = spark.createDataFrame([(1, 2.75, 0), (-3, -0.5, 1), (None, None, None), (100, 99.125, 5)],
                                   "i int, d double, z int")
        return df.select(
            F.col("i").cast(target).alias("i_"), F.col("d").cast(target).alias("d_"),
            F.col("z").cast(target).alias("z_"))
    program.__name__ = f"cast_to_{target}"
    assert_same(program, shuffle_partitions=(1,))


def test_cast_strings_to_types():
    def program(spark, F, T, Window):
        df = spark.createDataFrame(
            [("1", "2.5", "true", "2024-03-01", "2024-03-01 12:34:56"),
             ("-42", "1e3", "false", "1999-12-31", "1999-12-31 00:00:00"),
             ("+7", "-0.5", "t", "2024-1-5", "2024-01-05T06:07:08"),
             ("0", ".25", "yes", "2024-12-31", "2024-12-31 23:59:59.999"),
             ("2147483647", "NaN", "0", "2000-02-29", "2000-02-29 00:00:00"),
             ("-1", "Infinity", "N", "1970-01-01", "1970-01-01 00:00:00"),
             (None, None, None, None, None)],
            "i string, d string, b string, day string, ts string")
        return df.select(
            F.col("i").cast("int").alias("i"), F.col("i").cast("bigint").alias("l"),
            F.col("d").cast("double").alias("d"), F.col("b").cast("boolean").alias("b"),
            F.col("day").cast("date").alias("day"), F.col("ts").cast("timestamp").alias("ts"),
            F.when(~F.col("d").isin("NaN", "Infinity"), F.col("d")).cast("decimal(10,2)").alias("dec"))
    assert_same(program, shuffle_partitions=(1,))


def test_cast_with_type_objects():
    def program(spark, F, T, Window):
        df = numbers(spark).filter(F.col("d") < 1000)
        return df.select(
            F.col("i").cast(T.LongType()).alias("l"), F.col("d").cast(T.IntegerType()).alias("i"),
            F.col("b").cast(T.StringType()).alias("s"), F.col("j").cast(T.DoubleType()).alias("x"),
            F.col("i").cast(T.BooleanType()).alias("flag"), F.col("d").cast(T.DecimalType(12, 3)).alias("dec"))
    assert_same(program, shuffle_partitions=(1,))


def test_cast_dates_and_timestamps():
    def program(spark, F, T, Window):
        df = events(spark)
        return df.select(
            "id", F.col("ts").cast("date").alias("ts_date"), F.col("d").cast("string").alias("d_str"),
            F.col("d").cast("timestamp").alias("d_ts"), F.col("ts").cast("string").alias("ts_str"))
    assert_same(program, shuffle_partitions=(1,))


def test_cast_bool_and_double_to_string():
    def program(spark, F, T, Window):
        df = spark.createDataFrame([(True, 1.0, 0.1), (False, -2.5, 123456.789), (None, 1e-3, None)],
                                   "b boolean, x double, y double")
        return df.select(F.col("b").cast("string").alias("b"), F.col("x").cast("string").alias("x"),
                         F.col("y").cast("string").alias("y"), F.col("b").cast("int").alias("bi"))
    assert_same(program, shuffle_partitions=(1,))


def test_when_otherwise():
    def program(spark, F, T, Window):
        return people(spark).select(
            "name",
            F.when(F.col("age") >= 40, "senior").when(F.col("age") >= 30, "mid").otherwise("junior").alias("band"))
    assert_same(program)


def test_when_without_otherwise_gives_null():
    def program(spark, F, T, Window):
        return people(spark).select("name", F.when(F.col("city") == "Paris", 1).alias("is_paris"))
    assert_same(program)


def test_when_nested_and_numeric_result_types():
    def program(spark, F, T, Window):
        c = F.col("salary")
        return people(spark).select(
            "name",
            F.when(c.isNull(), F.lit(-1.0))
             .otherwise(F.when(c > 5000, c * 2).otherwise(F.when(F.col("age") < 30, 0).otherwise(c))).alias("adj"),
            F.when(F.col("age") > 30, F.col("id")).otherwise(F.col("age")).alias("int_or_int"))
    assert_same(program)


def test_when_default_name():
    def program(spark, F, T, Window):
        return numbers(spark).select(F.when(F.col("i") > 2, 1).otherwise(0))
    assert_same(program)


def test_cache_persist_unpersist_keep_results():
    def program(spark, F, T, Window):
        df = people(spark).filter(F.col("age") > 25).cache()
        first = df.count()
        again = df.groupBy("city").count()
        p = df.persist()
        out = p.join(again, "city", "left").withColumn("n_before", F.lit(first))
        result = out.select("name", "city", "count", "n_before")
        df.unpersist()
        return result
    assert_same(program)


def test_is_cached_flag():
    def fn(spark, F, T, Window):
        df = people(spark)
        before = df.is_cached
        df.cache()
        during = df.is_cached
        df.unpersist()
        return [before, during, df.is_cached]
    assert_same_value(fn, shuffle_partitions=(1,))


def test_alias_on_expression_and_backticks_free_names():
    def program(spark, F, T, Window):
        return people(spark).select((F.col("salary") / 12).alias("monthly pay"), F.col("name").alias("who"))
    assert_same(program)


def test_date_literal_column():
    def program(spark, F, T, Window):
        return people(spark).select("id", F.lit(dt.date(2024, 1, 31)).alias("as_of"))
    assert_same(program)


def test_cast_double_to_string_java_formatting():
    def program(spark, F, T, Window):
        df = spark.createDataFrame(
            [(1e20,), (1e-5,), (123456789.0,), (12345678.0,), (0.1 + 0.2,), (1e7,), (9999999.0,), (-0.0,)], "x double")
        # Float.toString is not shortest-repr before JDK 19 (1.23456792E8): keep floats to exact values
        as_float = F.when(F.abs("x") < 1e8, F.col("x").cast("float").cast("string"))
        return df.select("x", F.col("x").cast("string").alias("s"), as_float.alias("fs"))
    assert_same(program, shuffle_partitions=(1,))


def test_cast_padded_strings_and_timestamp_to_long():
    def program(spark, F, T, Window):
        df = spark.createDataFrame([(" 12 ", "2024-01-01 00:00:01"), ("7", "1970-01-01 00:00:00")],
                                   "s string, ts string")
        return df.select(F.col("s").cast("int").alias("i"),
                         F.col("ts").cast("timestamp").cast("long").alias("epoch"),
                         F.col("ts").cast("timestamp").cast("date").alias("d"))
    assert_same(program, shuffle_partitions=(1,))


def test_print_schema_after_aggregate_and_join():
    def fn(spark, F, T, Window):
        p = people(spark)
        p.groupBy("city").agg(F.count("*"), F.sum("age"), F.avg("salary")).printSchema()
        p.join(p.groupBy("dept_id").count(), "dept_id", "left").printSchema()
    assert_same_output(fn)


def test_decimal_arithmetic_result_types():
    def program(spark, F, T, Window):
        from decimal import Decimal
        df = spark.createDataFrame([(Decimal("10.25"), Decimal("3.5"), 4)], "a decimal(10,2), b decimal(5,1), i int")
        return df.select((F.col("a") + F.col("b")).alias("add"), (F.col("a") * F.col("b")).alias("mul"),
                         (F.col("a") - F.col("i")).alias("sub_int"), (F.col("a") * 2).alias("mul_lit"),
                         (F.col("a") + 1.5).alias("add_double"))
    assert_same(program, shuffle_partitions=(1,))


def test_decimal_product_past_38_digits_is_bounded_to_sparks_type():
    """decimal(32,4) * decimal(16,2) needs 49 digits exactly; Spark makes it decimal(38,6) (TPC-H Q1's
    charge), and decimal(38,10) * decimal(10,5) rounds half up from 15 places to decimal(38,6)."""
    def program(spark, F, T, Window):
        from decimal import Decimal as D
        rows = [(D("19.3800"), D("5.00"), D("0.0000005000"), D("1.00000")),
                (D("1234567890123456789012345678.1234"), D("5.00"), D("-0.0000005000"), D("1.00000")),
                (D("-0.0001"), D("0.05"), D("1.2345678901"), D("1.00001")),
                (None, D("1.00"), D("123456789012345678901234.0123456789"), D("99999.99999"))]
        df = spark.createDataFrame(rows, "a decimal(32,4), b decimal(16,2), c decimal(38,10), d decimal(10,5)")
        return df.select((F.col("a") * F.col("b")).alias("charge"), (F.col("c") * F.col("d")).alias("rounded"))
    assert_same(program, shuffle_partitions=(1,))


def test_product_of_two_38_digit_decimals_is_exact():
    """decimal(38,0) * decimal(38,4) needs 77 digits exactly, past even decimal256; Spark gives decimal(38,4)."""
    def program(spark, F, T, Window):
        from decimal import Decimal as D
        rows = [(D(10**20), D("1.2345")), (D(3), D("2.5000")), (None, D("1")), (D(10**37), D("99.9999")),
                (D(-(10**30)), D("-0.0001"))]
        df = spark.createDataFrame(rows, "w decimal(38,0), p decimal(38,4)")
        return df.select((F.col("w") * F.col("p")).alias("x"), (F.col("p") * F.col("p")).alias("pp"),
                         (F.col("w") + F.col("p")).alias("s"))
    assert_same(program, shuffle_partitions=(1,), conf={"spark.sql.ansi.enabled": False})


def test_decimal_product_past_38_digits_that_overflows_is_null_without_ansi():
    def program(spark, F, T, Window):
        from decimal import Decimal as D
        rows = [(D("9999999999999999999999999999.9999"), D("99999999999999.99")), (D("19.3800"), D("5.00"))]
        df = spark.createDataFrame(rows, "a decimal(32,4), b decimal(16,2)")
        return df.select((F.col("a") * F.col("b")).alias("charge"))
    assert_same(program, shuffle_partitions=(1,), conf={"spark.sql.ansi.enabled": False})
