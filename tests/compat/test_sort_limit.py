"""orderBy/sort with directions and null placement, limit, top-N, and row_number top-N."""
from __future__ import annotations

import pytest

from .data import people, sales
from .harness import assert_same, assert_same_value


def test_order_by_name_ascending_default():
    def program(spark, F, T, Window):
        return people(spark).orderBy("name")
    assert_same(program, ordered=True)


def test_sort_desc_column_method():
    def program(spark, F, T, Window):
        return people(spark).sort(F.col("id").desc())
    assert_same(program, ordered=True)


def test_order_by_nullable_default_nulls_first_ascending():
    def program(spark, F, T, Window):
        return people(spark).select("id", "age").orderBy("age", "id")
    assert_same(program, ordered=True)


def test_order_by_nullable_desc_puts_nulls_last():
    def program(spark, F, T, Window):
        return people(spark).select("id", "age").orderBy(F.desc("age"), "id")
    assert_same(program, ordered=True)


@pytest.mark.parametrize("order", ["asc", "desc", "asc_nulls_first", "asc_nulls_last",
                                   "desc_nulls_first", "desc_nulls_last"])
def test_null_placement_column_methods(order):
    def program(spark, F, T, Window):
        df = people(spark).select("id", "age")
        return df.orderBy(getattr(F.col("age"), order)(), F.col("id"))
    program.__name__ = f"order_{order}"
    assert_same(program, ordered=True, shuffle_partitions=(1, 3))


@pytest.mark.parametrize("order", ["asc", "desc", "asc_nulls_first", "asc_nulls_last",
                                   "desc_nulls_first", "desc_nulls_last"])
def test_null_placement_functions(order):
    def program(spark, F, T, Window):
        return sales(spark).select("order_id", "region").orderBy(getattr(F, order)("region"), F.asc("order_id"))
    program.__name__ = f"order_F_{order}"
    assert_same(program, ordered=True, shuffle_partitions=(1, 3))


def test_order_by_ascending_flags_list():
    def program(spark, F, T, Window):
        return sales(spark).orderBy(["category", "order_id"], ascending=[False, True])
    assert_same(program, ordered=True)


def test_order_by_ascending_false():
    def program(spark, F, T, Window):
        return people(spark).orderBy("id", ascending=False)
    assert_same(program, ordered=True)


def test_order_by_double_with_nan_and_null():
    def program(spark, F, T, Window):
        df = spark.createDataFrame([(1, 1.5), (2, float("nan")), (3, None), (4, -2.0), (5, float("inf"))],
                                   "id int, x double")
        return df.orderBy("x")
    assert_same(program, ordered=True)


def test_order_by_expression():
    def program(spark, F, T, Window):
        return sales(spark).orderBy((F.col("qty") * F.col("price")).desc_nulls_last(), "order_id")
    assert_same(program, ordered=True)


def test_top_n_after_order_by():
    def program(spark, F, T, Window):
        return sales(spark).orderBy(F.col("price").desc_nulls_last(), "order_id").limit(3)
    assert_same(program, ordered=True)


def test_limit_then_order():
    def program(spark, F, T, Window):
        return people(spark).orderBy("id").limit(4).orderBy(F.col("name").desc())
    assert_same(program, ordered=True)


def test_limit_count_without_order():
    def fn(spark, F, T, Window):
        df = spark.range(100)
        return [df.limit(7).count(), df.limit(0).count(), df.limit(1000).count()]
    assert_same_value(fn)


def test_limit_zero_keeps_schema():
    def program(spark, F, T, Window):
        return people(spark).limit(0)
    assert_same(program)


def test_order_by_after_group_by():
    def program(spark, F, T, Window):
        return sales(spark).groupBy("region").agg(F.sum("qty").alias("q")).orderBy(F.col("q").desc(), "region")
    assert_same(program, ordered=True)


def test_top_n_per_category_with_row_number():
    def program(spark, F, T, Window):
        w = Window.partitionBy("category").orderBy(F.col("price").desc_nulls_last(), "order_id")
        return (sales(spark).withColumn("rn", F.row_number().over(w))
                .filter(F.col("rn") <= 2).select("category", "product", "price", "rn"))
    assert_same(program)


def test_window_running_total_and_rank():
    def program(spark, F, T, Window):
        w = Window.partitionBy("region").orderBy("order_id")
        return sales(spark).select(
            "region", "order_id",
            F.sum("qty").over(w.rowsBetween(Window.unboundedPreceding, Window.currentRow)).alias("running"),
            F.rank().over(Window.partitionBy("category").orderBy("price")).alias("price_rank"),
            F.count("*").over(Window.partitionBy("region")).alias("in_region"))
    assert_same(program)


def test_sort_strings_case_sensitive():
    def program(spark, F, T, Window):
        df = spark.createDataFrame([("b",), ("B",), ("a",), ("A",), ("",), (None,), ("ab",)], "s string")
        return df.orderBy("s")
    assert_same(program, ordered=True)


def test_sql_limit_with_offset_and_offset_alone():
    def program(spark, F, T, Window):
        people(spark).createOrReplaceTempView("offset_people")
        paged = spark.sql("SELECT id, name FROM offset_people ORDER BY id DESC LIMIT 3 OFFSET 2")
        rest = spark.sql("SELECT id, name FROM offset_people ORDER BY id OFFSET 5")
        beyond = spark.sql("SELECT id, name FROM offset_people ORDER BY id LIMIT 2 OFFSET 40")
        return paged.union(rest).union(beyond)
    assert_same(program, ordered=True)


def test_dataframe_offset_after_a_sort():
    def program(spark, F, T, Window):
        return sales(spark).orderBy("order_id").offset(3).select("order_id", "qty")
    assert_same(program, ordered=True)
