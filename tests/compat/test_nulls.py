"""fillna/na.fill, dropna/na.drop, and null semantics of comparisons, joins and functions."""
from __future__ import annotations

from .data import people
from .harness import assert_same


def _messy(spark):
    return spark.createDataFrame(
        [(1, None, None, None), (2, "b", 2.5, 20), (None, None, None, None), (4, "d", None, 40), (5, None, 5.5, None)],
        "id int, s string, x double, n bigint")


def test_fillna_zero_numeric_only():
    def program(spark, F, T, Window):
        return _messy(spark).fillna(0)
    assert_same(program)


def test_fillna_float_value_applies_to_int_columns_too():
    def program(spark, F, T, Window):
        return _messy(spark).fillna(1.5)
    assert_same(program)


def test_fillna_string_only_strings():
    def program(spark, F, T, Window):
        return _messy(spark).fillna("missing")
    assert_same(program)


def test_fillna_dict():
    def program(spark, F, T, Window):
        return _messy(spark).fillna({"s": "none", "x": -1.0, "n": 0})
    assert_same(program)


def test_fillna_subset():
    def program(spark, F, T, Window):
        return _messy(spark).fillna(0, subset=["x"]).fillna("?", subset=["s"])
    assert_same(program)


def test_na_fill():
    def program(spark, F, T, Window):
        return _messy(spark).na.fill(7).na.fill({"s": "z"})
    assert_same(program)


def test_fillna_bool():
    def program(spark, F, T, Window):
        df = spark.createDataFrame([(1, None), (2, True)], "id int, ok boolean")
        return df.fillna(False)
    assert_same(program)


def test_dropna_default_any():
    def program(spark, F, T, Window):
        return _messy(spark).dropna()
    assert_same(program)


def test_dropna_how_all():
    def program(spark, F, T, Window):
        return _messy(spark).dropna(how="all")
    assert_same(program)


def test_dropna_thresh():
    def program(spark, F, T, Window):
        return _messy(spark).dropna(thresh=2)
    assert_same(program)


def test_dropna_subset():
    def program(spark, F, T, Window):
        return _messy(spark).dropna(subset=["s", "x"], how="all")
    assert_same(program)


def test_na_drop():
    def program(spark, F, T, Window):
        return _messy(spark).na.drop(subset=["id"])
    assert_same(program)


def test_comparisons_with_null_are_null():
    def program(spark, F, T, Window):
        return _messy(spark).select(
            "id", (F.col("x") > 1).alias("gt"), (F.col("s") == "b").alias("eq"),
            (F.col("x") == F.lit(None)).alias("eq_null"), (F.col("n") + 1).alias("plus"),
            F.col("s").isNull().alias("is_null"))
    assert_same(program)


def test_null_safe_equality():
    def program(spark, F, T, Window):
        df = spark.createDataFrame([(1, 1), (None, None), (1, None), (2, 3)], "a int, b int")
        return df.select("a", "b", F.col("a").eqNullSafe(F.col("b")).alias("nse"),
                         (F.col("a") == F.col("b")).alias("eq"))
    assert_same(program)


def test_coalesce():
    def program(spark, F, T, Window):
        return _messy(spark).select(
            "id", F.coalesce("s", F.lit("default")).alias("s"),
            F.coalesce(F.col("x"), F.col("n"), F.lit(0)).alias("num"))
    assert_same(program)


def test_null_in_arithmetic_and_string_functions():
    def program(spark, F, T, Window):
        return people(spark).select(
            "id", (F.col("age") * 2).alias("a2"), F.upper("city").alias("u"), F.length("city").alias("len"),
            F.concat(F.col("name"), F.lit("/"), F.col("city")).alias("nc"))
    assert_same(program)


def test_null_literal_cast():
    def program(spark, F, T, Window):
        return people(spark).select("id", F.lit(None).cast("int").alias("nothing"),
                                    F.lit(None).cast("string").alias("ns"))
    assert_same(program)
