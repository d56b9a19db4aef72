"""Spark 4 runs with ANSI SQL mode on by default: bad casts, division by zero and overflow raise.

The same programs with ``spark.sql.ansi.enabled=false`` (Spark 3 behaviour, which many existing
jobs rely on) give NULLs or wrapped values instead; both modes are checked against PySpark.
"""
from __future__ import annotations

from decimal import Decimal as D

import pytest

from .harness import assert_same, assert_same_error

LEGACY = {"spark.sql.ansi.enabled": False}


def _bad(spark):
    return spark.createDataFrame(
        [("abc", 1, 0, "2024-02-30", 2147483647, 1e10), ("12", 7, 2, "2024-02-28", 1, 2.5)],
        "s string, a int, z int, d string, big int, x double")


CASES = {
    "cast_invalid_string_to_int": lambda F: F.col("s").cast("int"),
    "divide_by_zero": lambda F: F.col("a") / F.col("z"),
    "remainder_by_zero": lambda F: F.col("a") % F.col("z"),
    "to_date_invalid": lambda F: F.to_date("d"),
    "cast_invalid_date": lambda F: F.col("d").cast("date"),
    "int_add_overflow": lambda F: F.col("big") + 1,
    "cast_double_overflow_to_int": lambda F: F.col("x").cast("int"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_ansi_mode_raises(case):
    def program(spark, F, T, Window):
        return _bad(spark).select(CASES[case](F).alias("r")).collect()
    program.__name__ = f"ansi_{case}"
    assert_same_error(program)


@pytest.mark.parametrize("case", sorted(CASES))
def test_legacy_mode_gives_null_or_wraps(case):
    def program(spark, F, T, Window):
        return _bad(spark).select("a", CASES[case](F).alias("r"))
    program.__name__ = f"legacy_{case}"
    assert_same(program, shuffle_partitions=(1,), conf=LEGACY)


def _float_mix(spark, F):
    df = spark.createDataFrame([(1.25, 2, 3), (None, 1, -1)], "f float, i int, s smallint")
    return df.select((F.col("f") * 2).alias("f_times_lit"), (F.col("f") + F.col("i")).alias("f_plus_int"),
                     (F.col("f") - F.col("s")).alias("f_minus_short"), (F.col("f") * F.col("f")).alias("f_sq"),
                     F.round("f", 1).alias("rounded"))


def test_float_and_int_widen_to_double_under_ansi():
    def program(spark, F, T, Window):
        return _float_mix(spark, F)
    assert_same(program, shuffle_partitions=(1,))


def test_float_and_int_stay_float_in_legacy_mode():
    def program(spark, F, T, Window):
        return _float_mix(spark, F)
    assert_same(program, shuffle_partitions=(1,), conf=LEGACY)


# ---------------------------------------------------------------- ANSI errors, case by case against PySpark

# Each query raises under ANSI mode (Spark 4's default) and gives NULL or a wrapped value without it.
SQL_CASES = {
    "bigint_add_overflow": "SELECT 9223372036854775807L + 1L",
    "int_add_overflow": "SELECT 2147483647 + 1",
    "bigint_multiply_overflow": "SELECT -9223372036854775808L * -1L",
    "negate_overflow": "SELECT -(-9223372036854775808L)",
    "abs_overflow": "SELECT abs(-2147483648)",
    "divide_by_zero": "SELECT 1 / 0",
    "decimal_divide_by_zero": "SELECT 1.5 / 0",
    "remainder_by_zero": "SELECT 5 % 0",
    "div_by_zero": "SELECT 5 div 0",
    "pmod_by_zero": "SELECT pmod(5, 0)",
    "cast_malformed_int": "SELECT CAST('abc' AS INT)",
    "cast_malformed_double": "SELECT CAST('x' AS DOUBLE)",
    "cast_malformed_boolean": "SELECT CAST('x' AS BOOLEAN)",
    "cast_malformed_date": "SELECT CAST('2020-13-45' AS DATE)",
    "to_date_malformed": "SELECT to_date('2020-13-45')",
    "to_timestamp_malformed": "SELECT to_timestamp('garbage')",
    "cast_bigint_to_int_overflow": "SELECT CAST(3000000000L AS INT)",
    "cast_int_to_tinyint_overflow": "SELECT CAST(128 AS TINYINT)",
    "cast_double_to_bigint_overflow": "SELECT CAST(1e20D AS BIGINT)",
    "cast_double_to_int_overflow": "SELECT CAST(1.0E10 AS INT)",
    "cast_decimal_out_of_range": "SELECT CAST(12345.678 AS DECIMAL(5,2))",
    "decimal_add_out_of_range": "SELECT CAST(99999999999999999999999999999999999999BD AS DECIMAL(38,0)) + 1",
    "element_at_past_the_end": "SELECT element_at(array(1, 2, 3), 5)",
    "subscript_past_the_end": "SELECT array(1, 2, 3)[5]",
    "make_date_month": "SELECT make_date(2020, 13, 1)",
    "make_date_day": "SELECT make_date(2023, 2, 30)",
}

# Rows from a table, so nothing is folded at planning time and the error comes from a task.
_NUMBERS = "VALUES (9223372036854775807L, 0, 'abc', 2147483647), (1L, 2, '12', 1) AS t(big, z, s, i)"
TABLE_CASES = {
    "column_add_overflow": f"SELECT big + 1 FROM {_NUMBERS}",
    "column_int_overflow": f"SELECT i * 2 FROM {_NUMBERS}",
    "column_divide_by_zero": f"SELECT i / z FROM {_NUMBERS}",
    "column_cast_malformed": f"SELECT CAST(s AS INT) FROM {_NUMBERS}",
    "bigint_sum_overflow": f"SELECT sum(big) FROM {_NUMBERS}",
    "decimal_sum_overflow": "SELECT sum(x) FROM VALUES (CAST(99999999999999999999999999999999999999BD AS "
                            "DECIMAL(38,0))), (CAST(99999999999999999999999999999999999999BD AS DECIMAL(38,0))) "
                            "AS t(x)",
}


@pytest.mark.parametrize("case", sorted(SQL_CASES) + sorted(TABLE_CASES))
def test_ansi_mode_raises_sparks_error(case):
    query = {**SQL_CASES, **TABLE_CASES}[case]

    def program(spark, F, T, Window):
        return spark.sql(query).collect()
    program.__name__ = f"ansi_{case}"
    assert_same_error(program)


@pytest.mark.parametrize("case", sorted(SQL_CASES) + sorted(TABLE_CASES))
def test_without_ansi_the_same_queries_give_null_or_wrap(case):
    query = {**SQL_CASES, **TABLE_CASES}[case]

    def program(spark, F, T, Window):
        return spark.sql(query)
    program.__name__ = f"legacy_{case}"
    assert_same(program, shuffle_partitions=(1,), conf=LEGACY)


# In both modes: the try_* forms give NULL, and what is no error in either mode stays so.
BOTH_MODES = {
    "try_add": "SELECT try_add(9223372036854775807L, 1L), try_add(1, 2), try_add(2147483647, 1)",
    "try_subtract": "SELECT try_subtract(-9223372036854775808L, 1L), try_subtract(5, 3)",
    "try_multiply": "SELECT try_multiply(4611686018427387904L, 2L), try_multiply(3, 4)",
    "try_divide": "SELECT try_divide(1, 0), try_divide(7, 2), try_divide(1.5, 0)",
    "try_mod": "SELECT try_mod(5, 0), try_mod(7, 3)",
    "try_cast": "SELECT try_cast('abc' AS INT), try_cast('12' AS INT), try_cast(3000000000L AS INT)",
    "try_element_at": "SELECT try_element_at(array(1), 5), try_element_at(array(1, 2), -1)",
    "get_outside": "SELECT get(array(1, 2, 3), 5), get(array(1, 2, 3), 0)",
    "map_key_missing": "SELECT element_at(map(1, 2), 3), map(1, 2)[3]",
    "subscripts": "SELECT array(1, 2, 3)[1], split('a,b', ',')[0], element_at(array(1, 2, 3), -1)",
    "div": "SELECT 7 div 2, -7 div 2, 7.5 div 2, CAST(NULL AS INT) div 0",
    "avg_of_large_bigints": f"SELECT avg(big), sum(i) FROM {_NUMBERS}",
    "wide_decimal_sum_in_range": "SELECT sum(x) FROM VALUES (CAST(1 AS DECIMAL(38,0))), (CAST(2 AS DECIMAL(38,0))) "
                                 "AS t(x)",
}


@pytest.mark.parametrize("ansi", [True, False])
@pytest.mark.parametrize("case", sorted(BOTH_MODES))
def test_try_functions_and_safe_operations_in_both_modes(case, ansi):
    query = BOTH_MODES[case]

    def program(spark, F, T, Window):
        return spark.sql(query)
    program.__name__ = f"{'ansi' if ansi else 'legacy'}_{case}"
    assert_same(program, shuffle_partitions=(1,), conf={"spark.sql.ansi.enabled": ansi})


def test_index_zero_is_an_error_in_both_modes():
    def program(spark, F, T, Window):
        return spark.sql("SELECT element_at(array(1, 2, 3), 0)").collect()
    assert_same_error(program)
    assert_same_error(program, conf=LEGACY)


def test_try_functions_of_the_dataframe_api():
    def program(spark, F, T, Window):
        df = spark.createDataFrame([(9223372036854775807, 0, "abc"), (5, 2, "7")], "big long, z int, s string")
        return df.select(F.try_add("big", F.lit(1)).alias("a"), F.try_divide("big", "z").alias("d"),
                         F.try_subtract(F.lit(-9223372036854775807), "big").alias("s"),
                         F.try_multiply("big", F.lit(2)).alias("m"), F.col("s").try_cast("int").alias("c"))
    assert_same(program, shuffle_partitions=(1,))


def test_sums_overflow_across_partitions():
    """The partial sums of several tasks are each in range; their total is not."""
    def program(spark, F, T, Window):
        df = spark.createDataFrame([(i % 2, 4611686018427387904) for i in range(8)], "k int, v long").repartition(4)
        return df.groupBy("k").agg(F.sum("v").alias("total")).collect()
    assert_same_error(program)


@pytest.mark.parametrize("ansi", [True, False])
def test_try_sum_and_try_avg_give_null_on_overflow(ansi):
    def program(spark, F, T, Window):
        df = spark.createDataFrame([(i % 2, 4611686018427387904 if i % 2 else i) for i in range(8)],
                                   "k int, v long").repartition(4)
        wide = spark.createDataFrame([(1, D("9" * 38)), (1, D("9" * 38)), (2, D(5))], "k int, d decimal(38,0)")
        sums = df.groupBy("k").agg(F.try_sum("v").alias("s"), F.try_avg("v").alias("a"), F.sum("k").alias("n"))
        return sums.join(wide.groupBy("k").agg(F.try_sum("d").alias("ds"), F.try_avg("d").alias("da")), "k", "left")
    assert_same(program, shuffle_partitions=(1, 3), conf={"spark.sql.ansi.enabled": ansi})


def test_try_sum_in_sql():
    def program(spark, F, T, Window):
        return spark.sql("SELECT try_sum(big), try_avg(big), try_sum(i) FROM " + _NUMBERS)
    assert_same(program, shuffle_partitions=(1,))
