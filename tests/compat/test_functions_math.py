"""Math functions: abs, round (HALF_UP), sqrt, and numeric expression typing."""
from __future__ import annotations

import pytest

from .data import numbers
from .harness import assert_same


def test_abs_int_bigint_double():
    def program(spark, F, T, Window):
        return numbers(spark).select("i", F.abs("b"), F.abs("d"), F.abs(F.col("j")).alias("aj"))
    assert_same(program)


def test_round_half_up_doubles():
    def program(spark, F, T, Window):
        df = spark.createDataFrame([(0.5,), (1.5,), (2.5,), (-2.5,), (0.125,), (2.675,), (None,), (1234.5678,)],
                                   "x double")
        return df.select("x", F.round("x"), F.round("x", 2).alias("r2"), F.round("x", -1).alias("rm1"))
    assert_same(program)


def test_round_ints_and_decimals():
    def program(spark, F, T, Window):
        df = spark.createDataFrame([(15, 1234), (-25, 5)], "a int, b bigint").withColumn(
            "dec", F.col("a").cast("decimal(10,3)") / 7)
        return df.select(F.round("a", -1).alias("ra"), F.round("b", -2).alias("rb"), F.round("b"),
                         F.round("dec", 2).alias("rdec"))
    assert_same(program)


def test_sqrt_including_negative_is_nan():
    def program(spark, F, T, Window):
        return numbers(spark).select("i", F.sqrt("i"), F.sqrt("b").alias("sb"), F.sqrt(F.col("d")).alias("sd"))
    assert_same(program)


def test_math_on_expressions():
    def program(spark, F, T, Window):
        return numbers(spark).select(
            "i", F.round(F.sqrt(F.abs(F.col("b")) + 1), 3).alias("x"),
            F.abs(F.col("d") - F.col("i")).alias("dist"))
    assert_same(program)


def test_double_specials():
    def program(spark, F, T, Window):
        df = spark.createDataFrame([(float("inf"),), (float("-inf"),), (float("nan"),), (0.0,), (-0.0,)], "x double")
        return df.select("x", (F.col("x") * 2).alias("x2"), F.abs("x").alias("ax"), (F.col("x") > 0).alias("pos"),
                         (F.col("x") == F.lit(float("nan"))).alias("is_nan_eq"))
    assert_same(program)


@pytest.mark.beyond_contract
def test_ceil_floor_pow_greatest_least():
    def program(spark, F, T, Window):
        return numbers(spark).select(
            "i", F.ceil("d").alias("c"), F.floor("d").alias("f"), F.pow("i", 2).alias("p"),
            F.greatest("i", "j").alias("g"), F.least("i", "j").alias("l"), F.exp(F.lit(0)).alias("e"),
            F.log(F.lit(1.0)).alias("ln"))
    assert_same(program)


def test_integer_arithmetic_stays_integer():
    def program(spark, F, T, Window):
        return numbers(spark).select(
            (F.col("i") * 3 + F.col("j")).alias("ii"), (F.col("b") - F.col("i")).alias("bi"),
            (F.col("i") % 4).alias("m"), (F.col("b") * 2).alias("b2"))
    assert_same(program)
