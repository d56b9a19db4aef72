"""Joins whose keys differ in type on the two sides (string = bigint, int = double, decimal = bigint,
date = string, ...), coerced as Spark's analyzer coerces them, for every join type, shuffled and broadcast,
against real PySpark."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from .harness import assert_same

# (left type, left keys, right type, right keys): each side has keys the other lacks, a duplicate and a null.
PAIRS = {
    "string=bigint": ("string", ["1", "2", "2", "10", "-3", None], "bigint", [1, 2, 4, 10, -3, None]),
    "bigint=string": ("bigint", [1, 2, 2, 10, 7, None], "string", ["1", "2", "5", "10", " 7 ", None]),
    "int=double": ("int", [1, 2, 2, 3, None], "double", [1.0, 2.5, 3.0, 2.0, None]),
    "decimal=bigint": ("decimal(10,2)", [Decimal("1.00"), Decimal("2.50"), Decimal("3.00"), None], "bigint",
                       [1, 2, 3, None]),
    "date=string": ("date", [dt.date(2024, 1, 1), dt.date(2024, 1, 2), None], "string",
                    ["2024-01-01", "2024-01-03", "2024-01-02", None]),
    "int=bigint": ("int", [1, 2, 3, None], "bigint", [2, 3, 4, 3, None]),
    "string=double": ("string", ["1.5", "2", "2.0", None], "double", [1.5, 2.0, 3.0, None]),
}
HOWS = ["inner", "left", "right", "full", "left_semi", "left_anti"]


@pytest.mark.parametrize("broadcast", [False, True], ids=["shuffled", "broadcast"])
@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("pair", list(PAIRS))
def test_join_on_keys_of_two_types(pair, how, broadcast):
    left_type, left_keys, right_type, right_keys = PAIRS[pair]

    def program(spark, F, T, Window):
        left = spark.createDataFrame([(k, i) for i, k in enumerate(left_keys)], f"k {left_type}, li int")
        right = spark.createDataFrame([(k, i) for i, k in enumerate(right_keys)], f"k {right_type}, ri int")
        if broadcast:
            right = F.broadcast(right)
        return left.join(right, left.k == right.k, how)
    assert_same(program, shuffle_partitions=(1, 3))


@pytest.mark.parametrize("how", ["inner", "left", "right", "full"])
@pytest.mark.parametrize("pair", list(PAIRS))
def test_using_join_on_a_column_of_two_types(pair, how):
    left_type, left_keys, right_type, right_keys = PAIRS[pair]

    def program(spark, F, T, Window):
        left = spark.createDataFrame([(k, i) for i, k in enumerate(left_keys)], f"k {left_type}, li int")
        right = spark.createDataFrame([(k, i) for i, k in enumerate(right_keys)], f"k {right_type}, ri int")
        return left.join(right, "k", how)
    assert_same(program, shuffle_partitions=(1, 3))


@pytest.mark.parametrize("how", ["INNER", "LEFT", "RIGHT", "FULL OUTER"])
def test_sql_join_on_string_and_bigint_keys(how):
    def program(spark, F, T, Window):
        left_type, left_keys, right_type, right_keys = PAIRS["string=bigint"]
        spark.createDataFrame([(k, i) for i, k in enumerate(left_keys)], f"k {left_type}, li int") \
            .createOrReplaceTempView("l")
        spark.createDataFrame([(k, i) for i, k in enumerate(right_keys)], f"k {right_type}, ri int") \
            .createOrReplaceTempView("r")
        return spark.sql(f"SELECT l.k AS lk, li, r.k AS rk, ri FROM l {how} JOIN r ON l.k = r.k")
    assert_same(program, shuffle_partitions=(1, 3))
