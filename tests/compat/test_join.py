"""Joins on a name, a list of names or a Column condition, every join type, aliases, self-joins."""
from __future__ import annotations

import pytest

from .data import depts, people, sales
from .harness import assert_same

HOWS = ["inner", "left", "right", "full", "outer", "left_outer", "right_outer", "full_outer",
        "left_semi", "left_anti", "leftsemi", "leftanti", "semi", "anti"]


@pytest.mark.parametrize("how", HOWS)
def test_join_on_name(how):
    def program(spark, F, T, Window):
        return people(spark).join(depts(spark), "dept_id", how)
    program.__name__ = f"join_on_name_{how}"
    assert_same(program)


@pytest.mark.parametrize("how", ["inner", "left", "right", "full", "left_semi", "left_anti"])
def test_join_on_column_condition(how):
    def program(spark, F, T, Window):
        p, d = people(spark), depts(spark)
        return p.join(d, p.dept_id == d.dept_id, how)
    program.__name__ = f"join_on_condition_{how}"
    assert_same(program)


@pytest.mark.parametrize("how", ["inner", "left", "full", "left_anti"])
def test_join_on_list_of_names(how):
    def program(spark, F, T, Window):
        left = spark.createDataFrame(
            [(1, "a", 10), (1, "b", 20), (2, "a", 30), (None, "a", 40), (3, None, 50)], "k1 int, k2 string, v int")
        right = spark.createDataFrame(
            [(1, "a", "x"), (2, "a", "y"), (2, "b", "z"), (None, "a", "n"), (3, None, "m")],
            "k1 int, k2 string, w string")
        return left.join(right, ["k1", "k2"], how)
    program.__name__ = f"join_on_list_{how}"
    assert_same(program)


def test_join_default_how_is_inner():
    def program(spark, F, T, Window):
        return people(spark).join(depts(spark), "dept_id")
    assert_same(program)


def test_null_join_key_matches_nothing():
    def program(spark, F, T, Window):
        a = spark.createDataFrame([(None, "l1"), (1, "l2")], "k int, l string")
        b = spark.createDataFrame([(None, "r1"), (1, "r2")], "k int, r string")
        return a.join(b, a.k == b.k, "inner").select(a.l, b.r).union(
            a.join(b, "k", "full").select("l", "r"))
    assert_same(program)


def test_cross_join_and_how_cross():
    def program(spark, F, T, Window):
        a = spark.createDataFrame([(1,), (2,), (3,)], "a int")
        b = spark.createDataFrame([("x",), ("y",)], "b string")
        return a.crossJoin(b).union(a.join(b, how="cross"))
    assert_same(program)


def test_non_equi_join_condition():
    def program(spark, F, T, Window):
        bands = spark.createDataFrame([("low", 0, 30), ("mid", 30, 40), ("high", 40, 200)],
                                      "band string, lo int, hi int")
        p = people(spark)
        return p.join(bands, (p.age >= bands.lo) & (p.age < bands.hi), "left").select("name", "age", "band")
    assert_same(program)


def test_equi_join_with_extra_condition():
    def program(spark, F, T, Window):
        p, d = people(spark), depts(spark)
        return p.join(d, (p.dept_id == d.dept_id) & (p.city == d.hq), "inner").select(p.name, d.dept_name)
    assert_same(program)


def test_alias_and_qualified_column_names():
    def program(spark, F, T, Window):
        d = sales(spark).alias("d")
        g = d.groupBy(F.col("d.category").alias("grp")).agg(F.sum("d.qty").alias("q")).alias("g")
        return d.join(g, F.col("d.category") == F.col("g.grp")).select(
            F.col("d.order_id"), F.col("g.grp"), F.col("g.q"))
    assert_same(program)


def test_self_join_with_aliases():
    def program(spark, F, T, Window):
        emp = spark.createDataFrame(
            [(1, "Ann", None), (2, "Ben", 1), (3, "Cid", 1), (4, "Dee", 2), (5, "Eli", 9)],
            "id int, name string, manager_id int")
        e, m = emp.alias("e"), emp.alias("m")
        return e.join(m, F.col("e.manager_id") == F.col("m.id"), "left").select(
            F.col("e.name").alias("employee"), F.col("m.name").alias("manager"))
    assert_same(program)


def test_join_with_duplicate_column_names_keeps_both():
    def program(spark, F, T, Window):
        a = spark.createDataFrame([(1, "a1"), (2, "a2")], "k int, v string")
        b = spark.createDataFrame([(1, "b1"), (3, "b3")], "k int, v string")
        return a.join(b, a.k == b.k, "full")
    assert_same(program)


def test_join_disambiguate_with_dataframe_columns():
    def program(spark, F, T, Window):
        a = spark.createDataFrame([(1, "a1"), (2, "a2")], "k int, v string")
        b = spark.createDataFrame([(1, "b1"), (2, "b2")], "k int, v string")
        return a.join(b, a.k == b.k).select(a.k, a.v.alias("left_v"), b.v.alias("right_v"))
    assert_same(program)


def test_join_on_name_full_outer_coalesces_key():
    def program(spark, F, T, Window):
        a = spark.createDataFrame([(1, "a"), (2, "b")], "k int, x string")
        b = spark.createDataFrame([(2, "B"), (3, "C")], "k int, y string")
        return a.join(b, "k", "full").orderBy("k")
    assert_same(program, ordered=True)


def test_join_keys_of_different_int_types():
    def program(spark, F, T, Window):
        a = spark.createDataFrame([(1, "a"), (2, "b"), (3, "c")], "k int, x string")
        b = spark.createDataFrame([(1, "A"), (3, "C")], "k bigint, y string")
        return a.join(b, "k")
    assert_same(program)


def test_join_string_keys_with_duplicates_many_to_many():
    def program(spark, F, T, Window):
        a = spark.createDataFrame([("x", 1), ("x", 2), ("y", 3)], "k string, a int")
        b = spark.createDataFrame([("x", 10), ("x", 20), ("z", 30)], "k string, b int")
        return a.join(b, "k", "left")
    assert_same(program)


def test_join_then_aggregate():
    def program(spark, F, T, Window):
        return (people(spark).join(depts(spark), "dept_id", "left")
                .groupBy("dept_name").agg(F.count("*").alias("n"), F.avg("salary").alias("avg_salary")))
    assert_same(program)


def test_three_way_join():
    def program(spark, F, T, Window):
        p = people(spark)
        d = depts(spark)
        cities = spark.createDataFrame([("Paris", "FR"), ("London", "UK"), ("Berlin", "DE")],
                                       "city string, country string")
        return p.join(d, "dept_id", "left").join(cities, "city", "left").select("name", "dept_name", "country")
    assert_same(program)


def test_join_with_empty_side():
    def program(spark, F, T, Window):
        p = people(spark)
        empty = depts(spark).filter(F.col("dept_id") > 1000)
        return p.join(empty, "dept_id", "left").union(p.join(empty, "dept_id", "inner"))
    assert_same(program)


def test_join_on_list_of_column_conditions():
    def program(spark, F, T, Window):
        a = spark.createDataFrame([(1, "x", 10), (2, "y", 20), (2, "z", 30)], "k int, s string, v int")
        b = spark.createDataFrame([(1, "x", 1.0), (2, "z", 2.0), (2, "q", 3.0)], "k2 int, s2 string, w double")
        return a.join(b, [a.k == b.k2, a.s == b.s2], "left")
    assert_same(program)


def test_join_after_rename_and_qualified_alias_names():
    def program(spark, F, T, Window):
        a = people(spark).alias("a")
        b = depts(spark).withColumnRenamed("dept_id", "did").alias("b")
        return a.join(b, F.col("a.dept_id") == F.col("b.did"), "left").select("a.name", "b.dept_name", F.col("b.hq"))
    assert_same(program)


def test_join_then_drop_right_key_idiom():
    def program(spark, F, T, Window):
        p, d = people(spark), depts(spark)
        return p.join(d, p.dept_id == d.dept_id, "left").drop(d.dept_id)
    assert_same(program)


def test_self_join_on_name_without_alias():
    def program(spark, F, T, Window):
        df = people(spark).select("id", "name")
        return df.join(df, "id")
    assert_same(program)


def test_join_on_double_key_nan_and_negative_zero():
    def program(spark, F, T, Window):
        a = spark.createDataFrame([(float("nan"), "a"), (0.0, "b"), (None, "c"), (1.5, "d")], "x double, l string")
        b = spark.createDataFrame([(float("nan"), "A"), (-0.0, "B"), (None, "C")], "x double, r string")
        return a.join(b, "x", "full")
    assert_same(program)


def test_join_empty_string_key_is_not_null():
    def program(spark, F, T, Window):
        a = spark.createDataFrame([("", 1), (None, 2), ("x", 3)], "k string, a int")
        b = spark.createDataFrame([("", 10), (None, 20), ("x", 30)], "k string, b int")
        return a.join(b, "k", "inner")
    assert_same(program)


# One join definition for the DataFrame API and SQL (quiver/engine/analysis/builder.py): the cases below
# are where the two front ends differed before they shared it.

@pytest.mark.parametrize("how", ["LEFT_OUTER", "Full_Outer", "le_ft", "left_semi", "LeftAnti"])
def test_join_type_ignores_case_and_underscores(how):
    def program(spark, F, T, Window):
        return people(spark).join(depts(spark), "dept_id", how)
    program.__name__ = f"join_type_spelling_{how}"
    assert_same(program)


@pytest.mark.parametrize("how", ["left semi", "left anti"])
def test_sql_semi_and_anti_using_join_put_the_keys_first(how):
    def program(spark, F, T, Window):
        people(spark).createOrReplaceTempView("using_people")
        depts(spark).createOrReplaceTempView("using_depts")
        return spark.sql(f"SELECT * FROM using_people {how} JOIN using_depts USING (dept_id)")
    program.__name__ = f"sql_{how.replace(' ', '_')}_using"
    assert_same(program)


@pytest.mark.parametrize("how", ["inner", "right", "full"])
def test_using_key_is_named_as_the_side_it_comes_from(how):
    def program(spark, F, T, Window):
        a = spark.createDataFrame([(1, "a"), (2, "b")], "k int, x string")
        b = spark.createDataFrame([(2, "B"), (3, "C")], "k bigint, y string")
        a.createOrReplaceTempView("using_case_a")
        b.createOrReplaceTempView("using_case_b")
        sql = spark.sql(f"SELECT * FROM using_case_a {how} JOIN using_case_b USING (K)")
        return a.join(b, "K", how).union(sql)
    program.__name__ = f"using_key_case_{how}"
    assert_same(program)


def test_using_join_takes_the_first_column_of_a_repeated_name():
    def program(spark, F, T, Window):
        p, d = people(spark), depts(spark)
        both = p.join(d, p.dept_id == d.dept_id, "left")
        budgets = spark.createDataFrame([(10, 1000), (20, 2000), (30, 3000)], "dept_id int, budget int")
        budgets.createOrReplaceTempView("first_budgets")
        p.createOrReplaceTempView("first_people")
        d.createOrReplaceTempView("first_depts")
        sql = spark.sql("SELECT * FROM first_people p LEFT JOIN first_depts d ON p.dept_id = d.dept_id "
                        "JOIN first_budgets USING (dept_id)")
        return both.join(budgets, "dept_id").union(sql)
    assert_same(program)
