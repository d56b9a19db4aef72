"""rollup, cube, groupingSets, grouping() / grouping_id() and SQL's GROUP BY ROLLUP / CUBE / GROUPING SETS."""
from __future__ import annotations

import pytest

from .harness import assert_same


def sales(spark):
    rows = [("east", "a", 2021, 10.0), ("east", "b", 2021, 5.5), ("west", "a", 2021, None),
            ("west", "a", 2022, 7.25), (None, "b", 2022, 1.0), ("east", None, 2022, -3.0), ("east", "a", 2022, 0.0)]
    return spark.createDataFrame(rows, "region string, product string, year int, amount double")


def test_rollup_with_grouping_functions():
    def program(spark, F, T, Window):
        return sales(spark).rollup("region", "product").agg(
            F.sum("amount"), F.count("*").alias("n"), F.grouping("region"), F.grouping("product"), F.grouping_id())
    assert_same(program)


def test_cube_with_grouping_id_of_the_columns():
    def program(spark, F, T, Window):
        return sales(spark).cube("region", F.col("year")).agg(
            F.avg("amount").alias("avg"), F.grouping_id("region", "year").alias("gid"), F.grouping("year"))
    assert_same(program)


def test_cube_shortcut_aggregates():
    def program(spark, F, T, Window):
        return sales(spark).cube("product").count()
    assert_same(program)


def test_grouping_sets_method():
    def program(spark, F, T, Window):
        return sales(spark).groupingSets([["region"], ["product", "year"], []], "region", "product", "year").agg(
            F.max("amount"), F.grouping_id())
    assert_same(program)


def test_rollup_keys_inside_aggregates_and_expressions():
    """An aggregate of a grouping column reads the original values; outside aggregates the key is null
    where it is rolled up."""
    def program(spark, F, T, Window):
        return sales(spark).rollup("year").agg(F.sum("year").alias("sy"), (F.col("year") + 1).alias("next"),
                                               F.min("region"))
    assert_same(program)


def test_rollup_on_expression_key():
    def program(spark, F, T, Window):
        return sales(spark).rollup(F.upper("region").alias("r")).agg(F.count("amount"))
    assert_same(program)


@pytest.mark.parametrize("group_by", [
    "ROLLUP(region, product)",
    "CUBE(region, product)",
    "GROUPING SETS ((region, product), (region), ())",
    "region, product GROUPING SETS ((region), (product))",
    "region, product WITH ROLLUP",
    "region, product WITH CUBE",
    "region, ROLLUP(product)",
])
def test_sql_grouping_sets(group_by):
    def program(spark, F, T, Window):
        sales(spark).createOrReplaceTempView("gs_sales")
        return spark.sql(f"SELECT region, product, sum(amount) AS total, count(*), grouping(product), grouping_id() "
                         f"FROM gs_sales GROUP BY {group_by}")
    program.__name__ = f"group_by_{group_by}"
    assert_same(program, shuffle_partitions=(1, 3))


def test_sql_grouping_id_column_having_and_order():
    def program(spark, F, T, Window):
        sales(spark).createOrReplaceTempView("gs_sales")
        return spark.sql("SELECT region, year, sum(amount) s, grouping__id FROM gs_sales "
                         "GROUP BY region, year GROUPING SETS ((region), (year), ()) "
                         "HAVING count(*) > 1 ORDER BY grouping__id, region, year")
    assert_same(program, ordered=True)


def test_grouping_id_must_name_every_grouping_column():
    from .harness import assert_both_raise

    def program(spark, F, T, Window):
        return sales(spark).cube("region", "year").agg(F.grouping_id("year")).collect()
    assert_both_raise(program, match=["grouping_id"])


def test_grouping_outside_grouping_sets_fails():
    from .harness import assert_both_raise

    def program(spark, F, T, Window):
        return sales(spark).groupBy("region").agg(F.grouping("region")).collect()
    assert_both_raise(program, match=["grouping"])
