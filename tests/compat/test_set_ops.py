"""union, unionByName (with missing columns), distinct, dropDuplicates, intersect, subtract, intersectAll, exceptAll."""
from __future__ import annotations

import pytest

from .data import people, sales
from .harness import assert_same


def test_union_keeps_duplicates():
    def program(spark, F, T, Window):
        df = people(spark).select("name", "city")
        return df.union(df.filter(F.col("city") == "Paris"))
    assert_same(program)


def test_union_all_alias():
    def program(spark, F, T, Window):
        df = people(spark).select("id")
        return df.unionAll(df)
    assert_same(program)


def test_union_is_by_position_names_from_left():
    def program(spark, F, T, Window):
        a = spark.createDataFrame([(1, "x")], "id int, label string")
        b = spark.createDataFrame([("y", 2)], "label string, id int").select("id", "label")
        c = spark.createDataFrame([(3, "z")], "other int, thing string")
        return a.union(b).union(c)
    assert_same(program)


def test_union_widens_int_to_bigint_and_double():
    def program(spark, F, T, Window):
        a = spark.createDataFrame([(1, 1)], "x int, y int")
        b = spark.createDataFrame([(2**40, 2.5)], "x bigint, y double")
        return a.union(b)
    assert_same(program)


def test_union_by_name_reorders():
    def program(spark, F, T, Window):
        a = spark.createDataFrame([(1, "x", 1.0)], "id int, label string, w double")
        b = spark.createDataFrame([(2.0, "y", 2)], "w double, label string, id int")
        return a.unionByName(b)
    assert_same(program)


def test_union_by_name_allow_missing_columns():
    def program(spark, F, T, Window):
        a = spark.createDataFrame([(1, "x")], "id int, label string")
        b = spark.createDataFrame([(2, 9.5)], "id int, score double")
        return a.unionByName(b, allowMissingColumns=True)
    assert_same(program)


def test_distinct():
    def program(spark, F, T, Window):
        return sales(spark).select("category", "region").distinct()
    assert_same(program)


def test_distinct_treats_nulls_and_nan_as_equal():
    def program(spark, F, T, Window):
        df = spark.createDataFrame(
            [(None, float("nan")), (None, float("nan")), (1, None), (1, None), (1, 0.0), (1, -0.0)],
            "a int, x double")
        return df.distinct()
    assert_same(program)


def test_drop_duplicates_all_columns():
    def program(spark, F, T, Window):
        df = spark.createDataFrame([(1, "a"), (1, "a"), (2, "b"), (2, None), (2, None)], "k int, v string")
        return df.dropDuplicates()
    assert_same(program)


def test_drop_duplicates_subset_row_count_and_keys():
    def program(spark, F, T, Window):
        return sales(spark).dropDuplicates(["category"]).select("category")
    assert_same(program)


def test_drop_duplicates_subset_keeps_whole_rows():
    def program(spark, F, T, Window):
        # duplicates on the subset are identical rows, so which survives does not matter
        df = spark.createDataFrame(
            [(1, "a", 10), (1, "a", 10), (2, "b", 20), (3, None, 30), (3, None, 30)], "k int, s string, v int")
        return df.dropDuplicates(["k", "s"])
    assert_same(program)


def test_drop_duplicates_subset_survivor_is_a_real_row():
    def program(spark, F, T, Window):
        df = spark.createDataFrame([(1, 10), (1, 11), (2, 20)], "k int, v int")
        dedup = df.dropDuplicates(["k"])
        # whichever row survives, it must be one of the input rows
        return dedup.join(df, ["k", "v"], "left_semi").groupBy("k").count()
    assert_same(program)


def test_drop_duplicates_alias_drop_duplicates():
    def program(spark, F, T, Window):
        df = spark.createDataFrame([(1, "a"), (1, "a"), (2, "b")], "k int, v string")
        return df.drop_duplicates()
    assert_same(program)


@pytest.mark.beyond_contract
def test_intersect_and_subtract():
    def program(spark, F, T, Window):
        a = spark.createDataFrame([(1,), (2,), (2,), (3,), (None,)], "x int")
        b = spark.createDataFrame([(2,), (3,), (4,), (None,)], "x int")
        return a.intersect(b).withColumn("op", F.lit("intersect")).union(
            a.subtract(b).withColumn("op", F.lit("subtract")))
    assert_same(program)


def test_intersect_all_and_except_all_keep_multisets():
    def program(spark, F, T, Window):
        a = spark.createDataFrame([(1, "x"), (1, "x"), (1, "x"), (2, None), (2, None), (3, "z")], "k int, v string")
        b = spark.createDataFrame([(1, "x"), (1, "x"), (2, None), (4, "w")], "k long, v string")
        return a.intersectAll(b).withColumn("op", F.lit("intersectAll")).union(
            a.exceptAll(b).withColumn("op", F.lit("exceptAll"))).union(
            b.exceptAll(a).withColumn("op", F.lit("b exceptAll a")))
    assert_same(program)


def test_sql_intersect_all_and_except_all():
    def program(spark, F, T, Window):
        people(spark).createOrReplaceTempView("setop_people")
        return spark.sql(
            "(SELECT city FROM setop_people INTERSECT ALL SELECT city FROM setop_people WHERE age > 30) "
            "UNION ALL (SELECT city FROM setop_people EXCEPT ALL SELECT city FROM setop_people WHERE age > 30)")
    assert_same(program)


# One definition of set operations for the DataFrame API and SQL (quiver/engine/analysis/builder.py): the
# cases below are where the two front ends differed before they shared it.

def test_intersect_and_subtract_widen_column_types():
    def program(spark, F, T, Window):
        a = spark.createDataFrame([(1, 1.5), (2, 2.5), (2, 2.5), (None, None)], "k int, x float")
        b = spark.createDataFrame([(1, 1.5), (3, 0.0), (None, None)], "k bigint, x double")
        return a.intersect(b).withColumn("op", F.lit("intersect")).union(
            a.subtract(b).withColumn("op", F.lit("subtract"))).union(
            b.subtract(a).withColumn("op", F.lit("b subtract a")))
    assert_same(program)


def test_sql_and_dataframe_set_operations_agree_on_types():
    def program(spark, F, T, Window):
        a = spark.createDataFrame([(1, "x"), (2, "y"), (2, "y")], "k int, v string")
        b = spark.createDataFrame([(2, "y"), (5, "z")], "k bigint, v string")
        a.createOrReplaceTempView("agree_a")
        b.createOrReplaceTempView("agree_b")
        sql = spark.sql(
            "SELECT *, 'intersect' AS op FROM (SELECT * FROM agree_a INTERSECT SELECT * FROM agree_b) "
            "UNION ALL SELECT *, 'except all' FROM (SELECT * FROM agree_a EXCEPT ALL SELECT * FROM agree_b)")
        api = a.intersect(b).withColumn("op", F.lit("intersect")).union(
            a.exceptAll(b).withColumn("op", F.lit("except all")))
        return sql.union(api)
    assert_same(program)


def test_union_by_name_matches_names_in_any_case():
    def program(spark, F, T, Window):
        a = spark.createDataFrame([(1, "x")], "id int, label string")
        b = spark.createDataFrame([("y", 2)], "LABEL string, Id bigint")
        return a.unionByName(b)
    assert_same(program)


def test_union_by_name_allow_missing_columns_on_both_sides():
    def program(spark, F, T, Window):
        a = spark.createDataFrame([(1, "x", 0.5)], "id int, label string, score double")
        b = spark.createDataFrame([(True, 2, 7)], "flag boolean, ID bigint, n int")
        return a.unionByName(b, allowMissingColumns=True)
    assert_same(program)
