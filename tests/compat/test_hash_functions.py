"""hash (Murmur3), xxhash64, crc32, md5, sha1, sha2 and sha: Spark's exact values for every atomic type."""
from __future__ import annotations

import datetime as dt
import decimal

import pytest

from .harness import assert_same

_SCHEMA = ("b boolean, t tinyint, sh smallint, i int, l bigint, f float, d double, s string, "
           "dec decimal(10,2), big decimal(30,5), day date, ts timestamp, bin binary")


def typed(spark):
    """One row per edge: zero and negative zero, NaN, infinities, extreme integers, empty and unicode
    strings, strings longer than one XXH64 stripe, wide and negative decimals, dates before 1970, nulls."""
    rows = [
        (True, 1, 1, 1, 1, 1.5, 2.5, "a", decimal.Decimal("1.25"), decimal.Decimal("12345678901234567890.12345"),
         dt.date(2024, 2, 29), dt.datetime(2024, 1, 1, 12, 30, 45, 123456), b"\x00\x01"),
        (False, -128, -32768, -2147483648, -9223372036854775808, -0.0, -0.0, "", decimal.Decimal("-0.01"),
         decimal.Decimal("-99999999999999999999.99999"), dt.date(1969, 12, 31), dt.datetime(1960, 5, 17, 3, 4, 5),
         b""),
        (None, 127, 32767, 2147483647, 9223372036854775807, float("nan"), float("nan"), "héllo wörld ✓ 日本",
         decimal.Decimal("99999999.99"), decimal.Decimal("0.00001"), dt.date(1900, 1, 1), dt.datetime(1970, 1, 1),
         bytes(range(200, 256))),
        (True, 0, 0, 0, 0, float("inf"), float("-inf"), "the quick brown fox jumps over the lazy dog 0123456789",
         decimal.Decimal("0"), decimal.Decimal("0"), dt.date(1, 1, 1), dt.datetime(2038, 1, 19, 3, 14, 8), b"abcdefgh"),
        (None, None, None, None, None, None, None, None, None, None, None, None, None),
        (False, 7, 300, 123456, 12345678901234, 0.0, 0.0, "abc", decimal.Decimal("-12.5"), decimal.Decimal("-1"),
         dt.date(2000, 6, 15), dt.datetime(1999, 12, 31, 23, 59, 59, 999999), b"\xff" * 33),
    ]
    return spark.createDataFrame(rows, _SCHEMA)


_COLUMNS = ["b", "t", "sh", "i", "l", "f", "d", "s", "dec", "big", "day", "ts", "bin"]


@pytest.mark.parametrize("function", ["hash", "xxhash64"])
def test_hash_of_each_type(function):
    def program(spark, F, T, Window):
        fn = getattr(F, function)
        return typed(spark).select("i", *[fn(c) for c in _COLUMNS])
    program.__name__ = f"{function}_of_each_type"
    assert_same(program, shuffle_partitions=(1, 3))


@pytest.mark.parametrize("function", ["hash", "xxhash64"])
def test_hash_of_several_columns_chains_seeds_and_skips_nulls(function):
    def program(spark, F, T, Window):
        fn = getattr(F, function)
        return typed(spark).select("i", fn("i", "s"), fn("s", "d", "dec"), fn(*_COLUMNS), fn(F.lit(None), "l"),
                                   fn(F.lit(1), F.lit("x")).alias("constant"))
    program.__name__ = f"{function}_of_several_columns"
    assert_same(program, shuffle_partitions=(1, 3))


def test_digests_and_crc32():
    def program(spark, F, T, Window):
        df = typed(spark)
        return df.select("i", F.crc32("s"), F.crc32("bin"), F.md5("s"), F.sha1("bin"), F.sha("s"),
                         F.sha2("s", 256), F.sha2("bin", 512), F.crc32(F.col("i").cast("string")).alias("ci"))
    assert_same(program, shuffle_partitions=(1,))


def test_hash_functions_in_sql_and_expr():
    def program(spark, F, T, Window):
        typed(spark).createOrReplaceTempView("hash_typed")
        return spark.sql("SELECT i, hash(i, s), xxhash64(l, d, day), crc32(s), hash(42), xxhash64('abc'), "
                         "hash(CAST(1.5 AS DECIMAL(3, 1))) FROM hash_typed")
    assert_same(program, shuffle_partitions=(1,))


def test_hash_in_expr_and_group_by():
    def program(spark, F, T, Window):
        df = typed(spark).select(F.expr("hash(s) % 3").alias("bucket"), "i")
        return df.groupBy("bucket").agg(F.count("*").alias("n"))
    assert_same(program)


def test_hash_of_many_rows_matches(quiver_api, pyspark_api):
    """A larger column (several batches' worth of distinct strings and longs) hashes as Spark does."""
    def program(spark, F, T, Window):
        df = spark.range(0, 5000).select(
            "id", (F.col("id") * 7919 - 123456789).alias("l"),
            F.concat(F.lit("k"), F.col("id").cast("string")).alias("s"))
        return df.select("id", F.hash("l", "s"), F.xxhash64("s", "l"))
    assert_same(program, shuffle_partitions=(2,))
