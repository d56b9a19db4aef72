"""filter/where with every predicate the contract names; comparisons with null filter rows out."""
from __future__ import annotations

import datetime as dt

import pytest

from .data import events, numbers, people, sales, words
from .harness import assert_same


def test_filter_greater_than():
    def program(spark, F, T, Window):
        return people(spark).filter(F.col("age") > 30)
    assert_same(program)


def test_where_is_filter_and_chains():
    def program(spark, F, T, Window):
        return people(spark).where(F.col("salary") >= 4000).where(F.col("city") != "London")
    assert_same(program)


def test_filter_with_df_attribute_columns_and_and_or_not():
    def program(spark, F, T, Window):
        df = people(spark)
        return df.filter(((df.age < 30) | (df.city == "Paris")) & ~(df.name == "Carol"))
    assert_same(program)


def test_filter_null_comparisons_drop_rows():
    def program(spark, F, T, Window):
        df = people(spark)
        # age is null for Carol: neither branch keeps her
        return df.filter((F.col("age") > 30) | (F.col("age") <= 30)).select("name")
    assert_same(program)


def test_filter_is_null_and_is_not_null():
    def program(spark, F, T, Window):
        df = people(spark)
        return df.filter(F.col("city").isNull() | F.col("salary").isNull()).union(
            df.filter(F.col("age").isNotNull() & F.col("dept_id").isNotNull()))
    assert_same(program)


def test_filter_isin_with_list_and_varargs():
    def program(spark, F, T, Window):
        df = people(spark)
        return df.filter(F.col("city").isin(["Paris", "Berlin"])).union(df.filter(F.col("age").isin(45, 23)))
    assert_same(program)


def test_filter_not_isin_keeps_no_nulls():
    def program(spark, F, T, Window):
        return people(spark).filter(~F.col("city").isin("Paris", "London"))
    assert_same(program)


def test_filter_between_inclusive():
    def program(spark, F, T, Window):
        return people(spark).filter(F.col("age").between(29, 38))
    assert_same(program)


@pytest.mark.parametrize("pattern", ["%example.com", "foo%", "%@%", "b_r@%", "%EXAMPLE%"])
def test_like_patterns(pattern):
    def program(spark, F, T, Window):
        return words(spark).filter(F.col("email").like(pattern)).select("id", "email")
    program.__name__ = f"like_{pattern}"
    assert_same(program, shuffle_partitions=(1,))


def test_startswith_endswith_contains():
    def program(spark, F, T, Window):
        df = words(spark)
        return df.select(
            "id", F.col("email").startswith("foo").alias("sw"), F.col("email").endswith(".org").alias("ew"),
            F.col("s").contains("o").alias("has_o")
        ).filter(F.col("sw") | F.col("ew") | F.col("has_o"))
    assert_same(program)


def test_filter_on_boolean_column():
    def program(spark, F, T, Window):
        df = spark.createDataFrame([(1, True), (2, False), (3, None)], "id int, ok boolean")
        return df.filter(F.col("ok"))
    assert_same(program)


def test_filter_date_against_string_and_date_literals():
    def program(spark, F, T, Window):
        df = sales(spark)
        return df.filter((F.col("day") >= "2024-02-01") & (F.col("day") < F.lit(dt.date(2024, 3, 9))))
    assert_same(program)


def test_filter_timestamp_range():
    def program(spark, F, T, Window):
        return events(spark).filter(F.col("ts") > F.lit(dt.datetime(2024, 1, 1))).select("id", "ts")
    assert_same(program)


def test_filter_on_computed_column_and_float_compare():
    def program(spark, F, T, Window):
        df = numbers(spark).withColumn("ratio", F.col("i") / F.col("j"))
        return df.filter(F.col("ratio") > 0.3)
    assert_same(program)


def test_filter_sql_string_condition():
    def program(spark, F, T, Window):
        return people(spark).filter("age > 30 AND city = 'London'")
    assert_same(program)


def test_filter_that_removes_everything():
    def program(spark, F, T, Window):
        return people(spark).filter(F.col("age") > 1000)
    assert_same(program)


def test_filter_compare_two_columns_of_different_types():
    def program(spark, F, T, Window):
        return numbers(spark).filter(F.col("d") > F.col("i"))
    assert_same(program)
