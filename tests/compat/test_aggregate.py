"""groupBy/agg, global aggregates, default aggregate names, null handling in aggregates."""
from __future__ import annotations

from decimal import Decimal as D

from .data import money, numbers, people, sales
from .harness import assert_same


def test_group_by_sum_avg_min_max_count_default_names():
    def program(spark, F, T, Window):
        return people(spark).groupBy("city").agg(
            F.sum("age"), F.avg("salary"), F.min("age"), F.max("salary"), F.count("age"), F.mean("age"))
    assert_same(program)


def test_count_star_and_count_of_nullable_column():
    def program(spark, F, T, Window):
        return people(spark).groupBy("dept_id").agg(
            F.count("*"), F.count("salary"), F.count(F.lit(1)).alias("ones"), F.count("city").alias("n_city"))
    assert_same(program)


def test_group_by_count():
    def program(spark, F, T, Window):
        return people(spark).groupBy("city").count()
    assert_same(program)


def test_group_by_multiple_keys():
    def program(spark, F, T, Window):
        return sales(spark).groupBy("region", "category").agg(
            F.sum("qty").alias("qty"), F.count("*").alias("lines"))
    assert_same(program)


def test_group_by_column_objects_and_list():
    def program(spark, F, T, Window):
        df = sales(spark)
        a = df.groupBy(F.col("category"), df.region).agg(F.max("price").alias("top"))
        b = df.groupBy(["category", "region"]).agg(F.min("price").alias("low"))
        return a.join(b, ["category", "region"])
    assert_same(program)


def test_group_by_expression_key():
    def program(spark, F, T, Window):
        return people(spark).groupBy((F.col("age") >= 35).alias("older")).agg(F.count("*").alias("n"))
    assert_same(program)


def test_agg_dict_form():
    def program(spark, F, T, Window):
        return people(spark).groupBy("city").agg({"salary": "sum", "age": "max"})
    assert_same(program)


def test_agg_dict_form_avg_count_and_global():
    def program(spark, F, T, Window):
        df = people(spark)
        return df.agg({"salary": "avg"}).crossJoin(df.groupBy().agg({"age": "count"}))
    assert_same(program)


def test_global_agg_without_group_by():
    def program(spark, F, T, Window):
        return people(spark).agg(
            F.sum("salary").alias("total"), F.avg("age").alias("mean_age"), F.count("*").alias("n"),
            F.min("name").alias("first_name"), F.max("name").alias("last_name"))
    assert_same(program)


def test_global_agg_on_empty_input():
    def program(spark, F, T, Window):
        return people(spark).filter(F.col("age") > 1000).agg(
            F.sum("age"), F.count("*"), F.avg("salary"), F.max("name"))
    assert_same(program)


def test_group_by_on_empty_input_gives_no_rows():
    def program(spark, F, T, Window):
        return people(spark).filter(F.col("age") > 1000).groupBy("city").count()
    assert_same(program)


def test_sum_types_int_bigint_double_decimal():
    def program(spark, F, T, Window):
        df = numbers(spark)
        return df.agg(F.sum("i"), F.sum("b"), F.sum("d"), F.avg("i"), F.avg("b"), F.min("d"), F.max("b"))
    assert_same(program)


def test_decimal_sum_avg():
    def program(spark, F, T, Window):
        return money(spark).groupBy("k").agg(F.sum("amount"), F.avg("amount"), F.max("amount"))
    assert_same(program)


def test_decimal_avg_is_exact_and_rounds_half_up():
    """Beyond a double's 16 digits and at a rounding tie, avg over decimals is exact decimal division."""
    def program(spark, F, T, Window):
        from decimal import Decimal
        df = spark.createDataFrame(
            [("big", Decimal("12345678901234567.89")), ("big", Decimal("1.00")), ("big", Decimal("2.00")),
             ("tie", Decimal("0.01"))] + [("tie", Decimal("0.00"))] * 31  # 0.0003125 at scale 6
            + [("neg", Decimal("-1.00")), ("neg", Decimal("-2.00")), ("neg", Decimal("-2.00"))],
            "k string, x decimal(20,2)")
        return df.groupBy("k").agg(F.avg("x").alias("a"), F.sum("x").alias("s"))
    assert_same(program)


def test_aggregates_skip_nulls_and_all_null_group_is_null():
    def program(spark, F, T, Window):
        df = spark.createDataFrame(
            [("a", 1, 1.0), ("a", None, None), ("b", None, None), ("b", None, None), ("c", 5, 2.0)],
            "k string, v int, x double")
        return df.groupBy("k").agg(
            F.sum("v").alias("s"), F.avg("v").alias("a"), F.min("x").alias("mn"), F.max("x").alias("mx"),
            F.count("v").alias("c"), F.count("*").alias("rows"))
    assert_same(program)


def test_null_group_keys_form_one_group():
    def program(spark, F, T, Window):
        return sales(spark).groupBy("region").agg(F.count("*").alias("n"), F.sum("qty").alias("q"))
    assert_same(program)


def test_count_distinct():
    def program(spark, F, T, Window):
        return sales(spark).groupBy("category").agg(
            F.countDistinct("region"), F.countDistinct("product").alias("products"))
    assert_same(program)


def test_count_distinct_multiple_columns_global():
    def program(spark, F, T, Window):
        return sales(spark).agg(F.countDistinct("category", "region").alias("pairs"))
    assert_same(program)


def test_first_and_last_on_constant_groups():
    def program(spark, F, T, Window):
        df = spark.createDataFrame(
            [("a", "x", 1), ("a", "x", 1), ("b", "y", 2), ("b", "y", 2), ("b", "y", 2)],
            "k string, label string, n int")
        return df.groupBy("k").agg(F.first("label"), F.last("n"), F.first("n").alias("fn"))
    assert_same(program)


def test_first_ignorenulls():
    def program(spark, F, T, Window):
        df = spark.createDataFrame(
            [("a", None), ("a", "x"), ("a", None), ("b", None), ("c", "z")], "k string, v string")
        return df.groupBy("k").agg(F.first("v", ignorenulls=True).alias("v"),
                                   F.last("v", ignorenulls=True).alias("w"))
    assert_same(program)


def test_stddev_variants():
    def program(spark, F, T, Window):
        df = spark.createDataFrame(
            [("a", 1.0), ("a", 2.0), ("a", 4.0), ("b", 3.0), ("c", None), ("c", 5.0), ("c", 7.0)],
            "k string, v double")
        return df.groupBy("k").agg(F.stddev("v"), F.stddev_samp("v").alias("samp"), F.stddev_pop("v").alias("pop"))
    assert_same(program)


def test_collect_list_sorted_by_harness():
    def program(spark, F, T, Window):
        return sales(spark).groupBy("category").agg(F.collect_list("product").alias("products"))
    assert_same(program, sort_arrays=True)


def test_collect_list_skips_nulls_and_sort_array():
    def program(spark, F, T, Window):
        return sales(spark).groupBy("category").agg(
            F.sort_array(F.collect_list("qty")).alias("qtys"), F.collect_list("region"))
    assert_same(program, sort_arrays=True)


def test_collect_set_with_sort_array():
    def program(spark, F, T, Window):
        return sales(spark).groupBy("region").agg(F.sort_array(F.collect_set("category")).alias("cats"))
    assert_same(program)


def test_aggregate_of_expression():
    def program(spark, F, T, Window):
        return sales(spark).groupBy("region").agg(
            F.sum(F.col("qty") * F.col("price")).alias("revenue"),
            F.round(F.avg(F.col("price")), 2).alias("avg_price"))
    assert_same(program)


def test_expression_over_aggregates():
    def program(spark, F, T, Window):
        return sales(spark).groupBy("category").agg(
            (F.sum("qty") / F.count("*")).alias("per_line"), (F.max("price") - F.min("price")).alias("spread"))
    assert_same(program)


def test_having_filter_after_agg_and_order():
    def program(spark, F, T, Window):
        return (people(spark).groupBy("city").agg(F.count("*").alias("n"), F.avg("salary").alias("avg"))
                .filter(F.col("n") >= 2).orderBy(F.col("avg").desc()))
    assert_same(program, ordered=True)


def test_min_max_of_strings_and_dates():
    def program(spark, F, T, Window):
        return sales(spark).groupBy("category").agg(
            F.min("product"), F.max("product"), F.min("day"), F.max("day"))
    assert_same(program)


def test_grouped_shortcuts_sum_avg_max_min():
    def program(spark, F, T, Window):
        df = sales(spark)
        s = df.groupBy("category").sum("qty")
        a = df.groupBy("category").avg("price")
        m = df.groupBy("category").max("qty", "price")
        return s.join(a, "category").join(m, "category")
    assert_same(program)


def test_count_on_whole_frame_column_alias_default_name():
    def program(spark, F, T, Window):
        return people(spark).select(F.count("*"), F.sum("age"), F.count("age"))
    assert_same(program)


def test_sum_of_large_ints_promotes_to_bigint():
    def program(spark, F, T, Window):
        df = spark.createDataFrame([("a", 2_000_000_000), ("a", 2_000_000_000), ("a", 2_000_000_000), ("b", -5)],
                                   "k string, v int")
        return df.groupBy("k").agg(F.sum("v").alias("s"), F.avg("v").alias("a"), F.max("v").alias("m"))
    assert_same(program)


def test_group_by_double_key_nan_and_negative_zero():
    def program(spark, F, T, Window):
        df = spark.createDataFrame(
            [(float("nan"), 1), (float("nan"), 2), (0.0, 3), (-0.0, 4), (None, 5), (1.5, 6)], "x double, v int")
        return df.groupBy("x").agg(F.sum("v").alias("s"), F.count("*").alias("n"))
    assert_same(program)


def test_count_distinct_ignores_nulls_and_empty_string_is_a_value():
    def program(spark, F, T, Window):
        df = spark.createDataFrame([("a", None), ("a", ""), ("a", "x"), ("a", "x"), ("b", None)], "k string, s string")
        return df.groupBy("k").agg(F.countDistinct("s").alias("d"), F.count("s").alias("c"))
    assert_same(program)


def test_group_by_and_count_same_column():
    def program(spark, F, T, Window):
        return people(spark).groupBy("city").agg(F.count("city"), F.max("city").alias("mx"))
    assert_same(program)


def test_group_by_no_keys_count():
    def program(spark, F, T, Window):
        return people(spark).groupBy().count()
    assert_same(program)


def test_nan_is_largest_in_min_max():
    def program(spark, F, T, Window):
        df = spark.createDataFrame(
            [("a", float("nan")), ("a", 1.0), ("b", float("nan")), ("c", None), ("c", -1.0), ("d", float("inf")),
             ("d", float("nan"))], "k string, x double")
        return df.groupBy("k").agg(F.min("x"), F.max("x"), F.sum("x"), F.countDistinct("x"))
    assert_same(program)


def test_sql_aggregate_filter_clause_names_and_values():
    def program(spark, F, T, Window):
        people(spark).createOrReplaceTempView("agg_filter_people")
        return spark.sql(
            "SELECT city, count(*) FILTER (WHERE age > 30), sum(salary) FILTER (WHERE age > 30) AS s, "
            "count(DISTINCT dept_id) FILTER (WHERE salary IS NOT NULL), avg(age) FILTER (WHERE city <> 'Oslo'), "
            "max(name) FILTER (WHERE age IS NULL) FROM agg_filter_people GROUP BY city")
    assert_same(program)


def test_sum_and_avg_of_a_wide_decimal_per_group():
    """decimal(38, 2) values add up in decimal256 (past 28 digits decimal128 could wrap); averages read them back."""
    def program(spark, F, T, Window):
        rows = [(i % 3, D(i * 37 % 1000) + D("0.05") * (i % 7)) for i in range(60)] + [(1, D(10) ** 20)]
        df = spark.createDataFrame(rows, "g int, price decimal(38,2)").repartition(3)
        return df.groupBy("g").agg(F.sum("price").alias("total"), F.avg("price").alias("mean"),
                                   F.count("price").alias("n"))
    assert_same(program)


def test_median_is_exact_and_interpolates_between_the_middle_values():
    # Arrow's approximate_median (a t-digest) gave 2.0 for [2, 5] and 0.0 for [0, 10].
    def program(spark, F, T, Window):
        df = spark.createDataFrame(
            [(1, 2.0), (1, 5.0), (2, 0.0), (2, 10.0), (2, None), (3, None), (4, 7.0), (4, 1.0), (4, 3.0),
             (5, float("nan")), (5, 1.0), (6, 0.1), (6, 0.2), (6, 0.7), (6, 1e300)], "k int, v double")
        ints = spark.createDataFrame([(1, 1), (1, 2), (2, -3), (2, 8), (2, 8)], "k int, n int")
        return (df.groupBy("k").agg(F.median("v").alias("m"))
                .unionByName(ints.groupBy("k").agg(F.median("n").alias("m")).withColumn("k", F.col("k") + 10))
                .unionByName(df.agg(F.median("v").alias("m")).withColumn("k", F.lit(99))))
    assert_same(program)


def test_every_and_some_name_their_columns_as_spark_does():
    def program(spark, F, T, Window):
        df = spark.createDataFrame([(1, True), (1, False), (2, True), (2, None)], "k int, b boolean")
        return df.groupBy("k").agg(F.every("b"), F.some("b"), F.bool_and("b"), F.bool_or("b"))
    assert_same(program)
