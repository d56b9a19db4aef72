"""select in all its spellings, literals, Column operators and the names Spark gives expressions."""
from __future__ import annotations

import pytest

from .data import numbers, people
from .harness import assert_same


def test_select_names():
    def program(spark, F, T, Window):
        return people(spark).select("name", "age")
    assert_same(program)


def test_select_column_objects_and_attribute_access():
    def program(spark, F, T, Window):
        df = people(spark)
        return df.select(F.col("name"), df.age, df["city"], F.column("salary"))
    assert_same(program)


def test_select_list_and_star():
    def program(spark, F, T, Window):
        df = people(spark)
        return df.select(["id", "name"]).select("*")
    assert_same(program)


def test_select_star_with_extra_expression():
    def program(spark, F, T, Window):
        return people(spark).select("*", (F.col("age") + 1).alias("next_age"))
    assert_same(program)


def test_select_literals_types():
    def program(spark, F, T, Window):
        return people(spark).select(
            "id",
            F.lit(1).alias("one"),
            F.lit(2**40).alias("big"),
            F.lit(1.5).alias("half"),
            F.lit("x").alias("s"),
            F.lit(True).alias("t"),
        )
    assert_same(program)


def test_select_default_expression_names():
    def program(spark, F, T, Window):
        df = numbers(spark)
        return df.select(
            F.col("i") + 1, F.col("i") * F.col("j"), F.col("d") - F.col("i"),
            F.upper(F.lit("a")), F.col("i") > 2, F.lit(5))
    assert_same(program)


@pytest.mark.parametrize("left,right", [("i", "j"), ("i", "b"), ("b", "d"), ("i", "d"), ("j", "b")])
def test_arithmetic_type_mixes(left, right):
    def program(spark, F, T, Window):
        df = numbers(spark).filter(F.col(right) != 0)
        a, b = F.col(left), F.col(right)
        return df.select(
            "i",
            (a + b).alias("add"), (a - b).alias("sub"), (a * b).alias("mul"),
            (a / b).alias("div"), (a % b).alias("mod"))
    assert_same(program)


def test_division_is_double_and_modulo_sign_follows_dividend():
    def program(spark, F, T, Window):
        df = spark.createDataFrame([(7, 2), (-7, 2), (7, -2), (-7, -3), (0, 5)], "a int, b int")
        return df.select("a", "b", (F.col("a") / F.col("b")).alias("q"), (F.col("a") % F.col("b")).alias("r"))
    assert_same(program)


def test_arithmetic_with_python_scalars_on_both_sides():
    def program(spark, F, T, Window):
        df = numbers(spark)
        return df.select(
            "i", (F.col("i") + 1).alias("a"), (2 * F.col("i")).alias("b"), (10 - F.col("j")).alias("c"),
            (F.col("d") / 2).alias("d2"), (1 / F.col("i")).alias("inv"), (F.col("i") * 1.5).alias("f"))
    assert_same(program)


def test_unary_minus_and_comparisons():
    def program(spark, F, T, Window):
        df = numbers(spark)
        return df.select(
            "i", (-F.col("b")).alias("neg"), (-F.col("d")).alias("negd"),
            (F.col("b") == 8).alias("eq"), (F.col("b") != 8).alias("ne"),
            (F.col("b") < F.col("i")).alias("lt"), (F.col("b") <= 0).alias("le"),
            (F.col("d") > 1).alias("gt"), (F.col("d") >= 3.0).alias("ge"))
    assert_same(program)


def test_boolean_operators_three_valued():
    def program(spark, F, T, Window):
        df = spark.createDataFrame(
            [(True, True), (True, False), (True, None), (False, None), (None, None), (False, False)],
            "p boolean, q boolean")
        p, q = F.col("p"), F.col("q")
        return df.select("p", "q", (p & q).alias("and_"), (p | q).alias("or_"), (~p).alias("not_p"))
    assert_same(program)


def test_select_same_column_twice_with_aliases():
    def program(spark, F, T, Window):
        df = people(spark)
        return df.select(F.col("name").alias("a"), F.col("name").alias("b"), df.name.alias("c"))
    assert_same(program)


def test_select_after_select_expression_chain():
    def program(spark, F, T, Window):
        df = people(spark)
        step = df.select((F.col("salary") * 12).alias("yearly"), "name")
        return step.select("name", (F.col("yearly") / 1000).alias("k"))
    assert_same(program)


def test_column_name_method_and_astype():
    def program(spark, F, T, Window):
        return people(spark).select(F.col("age").name("years"), F.col("id").astype("string").alias("sid"))
    assert_same(program)


def test_modulo_and_division_with_doubles():
    def program(spark, F, T, Window):
        df = spark.createDataFrame([(5.5, 2.0), (-5.5, 2.0), (7.0, -3.0), (0.3, 0.1)], "x double, y double")
        return df.select("x", "y", (F.col("x") % F.col("y")).alias("m"), (F.col("x") / F.col("y")).alias("q"))
    assert_same(program)


def test_column_names_are_case_insensitive():
    def program(spark, F, T, Window):
        df = people(spark)
        return df.select("NAME", F.col("Age"), df["CITY"]).filter(F.col("age") > 30).withColumn("AGE", F.col("age") + 1)
    assert_same(program)


def test_column_names_with_spaces_and_dots():
    def program(spark, F, T, Window):
        df = spark.createDataFrame([(1, 2.5, "x")], ["order id", "unit.price", "Product Name"])
        return df.select("order id", F.col("`unit.price`").alias("price"), df["Product Name"]).withColumn(
            "total price", F.col("price") * 2)
    assert_same(program)


def test_with_column_chain_referencing_new_columns():
    def program(spark, F, T, Window):
        return (people(spark).withColumn("monthly", F.col("salary") / 12)
                .withColumn("weekly", F.col("monthly") * 12 / 52)
                .withColumn("monthly", F.round("monthly", 2))
                .select("name", "monthly", "weekly"))
    assert_same(program)
