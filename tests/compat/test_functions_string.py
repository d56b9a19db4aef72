"""String functions: upper, lower, trim, length, substring, concat, concat_ws, regexp_replace, ..."""
from __future__ import annotations

import pytest

from .data import people, words
from .harness import assert_same


def test_upper_lower_trim_length():
    def program(spark, F, T, Window):
        return words(spark).select(
            "id", F.upper("s"), F.lower(F.col("s")), F.trim("s"), F.length("s"), F.length(F.trim("s")).alias("tl"))
    assert_same(program)


def test_ltrim_rtrim():
    def program(spark, F, T, Window):
        return words(spark).select("id", F.ltrim("s").alias("l"), F.rtrim("s").alias("r"))
    assert_same(program)


@pytest.mark.parametrize("pos,length", [(1, 3), (0, 2), (3, 100), (-3, 2), (7, 1), (2, 0)])
def test_substring_positions(pos, length):
    def program(spark, F, T, Window):
        return words(spark).select("id", F.substring("s", pos, length).alias("sub"))
    program.__name__ = f"substring_{pos}_{length}"
    assert_same(program, shuffle_partitions=(1,))


def test_substring_default_name_and_column_substr():
    def program(spark, F, T, Window):
        return words(spark).select(F.substring("email", 1, 3), F.col("email").substr(2, 4).alias("s2"))
    assert_same(program)


def test_concat_null_propagates():
    def program(spark, F, T, Window):
        return people(spark).select(F.concat("name", F.lit(" from "), "city").alias("where"), F.concat("name", "city"))
    assert_same(program)


def test_concat_ws_skips_nulls():
    def program(spark, F, T, Window):
        return people(spark).select(F.concat_ws("-", "name", "city", F.col("age").cast("string")).alias("key"),
                                    F.concat_ws(", ", "city", "name"))
    assert_same(program)


def test_concat_with_numbers_casts_implicitly():
    def program(spark, F, T, Window):
        return people(spark).select(F.concat(F.col("name"), F.col("id")).alias("tag"))
    assert_same(program)


def test_regexp_replace_simple_and_groups():
    def program(spark, F, T, Window):
        return words(spark).select(
            "id",
            F.regexp_replace("email", "@.*$", "").alias("user"),
            F.regexp_replace("email", r"(\w+)@(\w+)", "$2 at $1").alias("swapped"),
            F.regexp_replace("t", "-", "").alias("no_dash"),
            F.regexp_replace("s", r"\s+", " ").alias("squashed"))
    assert_same(program)


def test_string_functions_on_unicode():
    def program(spark, F, T, Window):
        return words(spark).filter(F.col("id") == 5).select(
            F.upper("s").alias("u"), F.lower("s").alias("l"), F.length("s").alias("n"),
            F.substring("s", 2, 3).alias("sub"))
    assert_same(program)


def test_string_compare_and_coalesce():
    def program(spark, F, T, Window):
        return words(spark).select("id", F.coalesce("s", "t").alias("first_non_null"),
                                   (F.col("t") == "").alias("empty"))
    assert_same(program)


@pytest.mark.beyond_contract
def test_split_lpad_regexp_extract_initcap():
    def program(spark, F, T, Window):
        return words(spark).select(
            "id", F.split("t", "-").alias("parts"), F.lpad(F.col("id").cast("string"), 4, "0").alias("padded"),
            F.regexp_extract("email", r"@(\w+)\.", 1).alias("domain"), F.initcap("s").alias("title"))
    assert_same(program)


def test_trim_functions_take_a_column_of_characters_per_row():
    def program(spark, F, T, Window):
        df = spark.createDataFrame([("xxhixx", "x"), ("--a-b--", "-"), ("abcba", "ab"), ("keep", ""), (None, "x"),
                                    ("yy", None)], "s string, t string")
        return df.select(F.trim("s", F.col("t")).alias("both"), F.ltrim("s", F.col("t")).alias("left"),
                         F.rtrim("s", F.col("t")).alias("right"), F.btrim("s", "t").alias("b"))
    assert_same(program)
