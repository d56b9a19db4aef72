"""format_string/printf, base64, levenshtein, soundex, regexp_extract_all, format_number, substring_index,
left/right, split_part, replace, pmod, conv, bin, hex/unhex, make_date, next_day, from/to_utc_timestamp."""
from __future__ import annotations

import datetime as dt
import decimal

from .harness import assert_same

NON_ANSI = {"spark.sql.ansi.enabled": False}


def strings(spark):
    rows = [(1, "Robert", "Rupert", 3, 2.5), (2, "", "abc", -7, -0.0), (3, None, "x", None, None),
            (4, "héllo wörld ✓", "hello world", 0, float("nan")), (5, "a,b,,c", "Tymczak", 12345, 1234567.891),
            (6, "1stKey", "Ashcraft", -2147483648, float("inf"))]
    return spark.createDataFrame(rows, "id int, s string, t string, n int, d double")


def test_format_string_and_printf():
    def program(spark, F, T, Window):
        return strings(spark).select("id", F.format_string("%s|%5d|%-4s|%.2f", "s", "n", "t", "d"),
                                     F.printf(F.lit("%s and %s"), "s", "t"), F.format_string("%d%%", "n"),
                                     F.format_string("%08.3f", "d").alias("z"), F.format_string("%x", "n").alias("x"))
    assert_same(program, shuffle_partitions=(1,), conf=NON_ANSI)


def test_base64_hex_and_back():
    def program(spark, F, T, Window):
        df = strings(spark)
        return df.select("id", F.base64("s"), F.unbase64(F.base64("s")).alias("round"), F.hex("s"), F.hex("n"),
                         F.unhex(F.hex("s")).alias("back"), F.bin("n"), F.unhex(F.lit("abc")).alias("odd"),
                         F.unhex(F.lit("zz")).alias("bad"))
    assert_same(program, shuffle_partitions=(1,), conf=NON_ANSI)


def test_levenshtein_and_soundex():
    def program(spark, F, T, Window):
        return strings(spark).select("id", F.levenshtein("s", "t"), F.levenshtein("s", "t", 3).alias("capped"),
                                     F.soundex("s"), F.soundex("t"))
    assert_same(program, shuffle_partitions=(1,))


def test_regexp_extract_all():
    def program(spark, F, T, Window):
        df = spark.createDataFrame([(1, "a1b22c333"), (2, "none"), (3, None), (4, "x-10 y-2")], "id int, s string")
        return df.select("id", F.regexp_extract_all("s", F.lit(r"(\d+)")),
                         F.regexp_extract_all("s", F.lit(r"([a-z])(\d)"), 2),
                         F.expr(r"regexp_extract_all(s, '\\d+', 0)").alias("whole"))
    assert_same(program, shuffle_partitions=(1,))


def test_format_number():
    def program(spark, F, T, Window):
        df = spark.createDataFrame(
            [(1, 1234567.891, 5, decimal.Decimal("-1234.565")), (2, -0.0, -3, decimal.Decimal("0.005")),
             (3, None, None, None), (4, 0.125, 1234567890, decimal.Decimal("99999.999")),
             (5, 2.675, 0, decimal.Decimal("1"))], "id int, d double, i int, m decimal(10,3)")
        return df.select("id", F.format_number("d", 2), F.format_number("d", 0), F.format_number("i", 1),
                         F.format_number("m", 2), F.format_number("d", -1).alias("neg"))
    assert_same(program, shuffle_partitions=(1,))


def test_substring_index_left_right_split_part_replace():
    def program(spark, F, T, Window):
        df = strings(spark)
        return df.select("id", F.substring_index("s", ",", 2), F.substring_index("s", ",", -2),
                         F.substring_index("s", ",", 0).alias("zero"), F.left("s", F.lit(3)), F.right("s", F.lit(2)),
                         F.left("t", F.lit(-1)).alias("none"), F.split_part("s", F.lit(","), F.lit(3)),
                         F.split_part("s", F.lit(","), F.lit(-1)).alias("last"), F.replace("s", F.lit("l")),
                         F.replace("t", F.lit("a"), F.lit("AA")))
    assert_same(program, shuffle_partitions=(1,))


def test_pmod_and_conv():
    def program(spark, F, T, Window):
        df = spark.createDataFrame(
            [(1, 7, -3, 7.5, "ff"), (2, -7, 3, -7.5, "-15"), (3, -7, -3, -0.0, "zz"), (4, 5, 0, 1.0, "777"),
             (5, None, 2, None, None), (6, -9223372036854775807, 10, 1e300, "18446744073709551616")],
            "id int, a bigint, b int, x double, s string")
        return df.select("id", F.pmod("a", "b"), F.pmod("x", F.lit(2.0)), F.pmod(F.col("b"), F.lit(4)),
                         F.conv("s", 16, 10), F.conv("s", 10, -16).alias("signed"), F.conv("s", 36, 2).alias("b2"),
                         F.expr("pmod(a, 5)").alias("p5"))
    assert_same(program, shuffle_partitions=(1,), conf=NON_ANSI)


def test_make_date_and_next_day():
    def program(spark, F, T, Window):
        df = spark.createDataFrame([(1, 2024, 2, 29, dt.date(2024, 1, 1)), (2, 2023, 2, 29, dt.date(1969, 12, 31)),
                                    (3, 1, 1, 1, dt.date(2024, 3, 3)), (4, None, 1, 1, None),
                                    (5, 1960, 13, 1, dt.date(1900, 2, 28))], "id int, y int, m int, d int, day date")
        return df.select("id", F.make_date("y", "m", "d"), F.next_day("day", "Mon"), F.next_day("day", "sunday"),
                         F.next_day("day", "TU").alias("tu"), F.next_day("day", "xyz").alias("bad"))
    assert_same(program, shuffle_partitions=(1,), conf=NON_ANSI)


def test_from_and_to_utc_timestamp():
    def program(spark, F, T, Window):
        df = spark.createDataFrame(
            [(1, dt.datetime(2024, 1, 1, 0, 0)), (2, dt.datetime(2024, 7, 1, 12, 30, 15, 250000)),
             (3, dt.datetime(1965, 3, 1, 8, 0)), (4, None), (5, dt.datetime(2024, 3, 10, 2, 30))],
             "id int, ts timestamp")
        return df.select("id", F.from_utc_timestamp("ts", "America/New_York"), F.to_utc_timestamp("ts", "Asia/Tokyo"),
                         F.from_utc_timestamp("ts", "+05:30").alias("plus"),
                         F.to_utc_timestamp("ts", "UTC").alias("same"),
                         F.to_utc_timestamp("ts", "America/Los_Angeles").alias("la"))
    assert_same(program, shuffle_partitions=(1,))


def test_new_functions_in_sql():
    def program(spark, F, T, Window):
        strings(spark).createOrReplaceTempView("more_strings")
        return spark.sql("SELECT id, format_string('%s-%d', s, n), printf('%s', t), base64(s), unbase64('YWJj'), "
                         "levenshtein(s, t), soundex(t), format_number(d, 1), pmod(n, 4), conv('101', 2, 10), bin(n), "
                         "hex(n), unhex('4142'), make_date(2020, 1, id), next_day(DATE'2024-05-01', 'FRI'), "
                         "substring_index(s, ',', 1), left(t, 2), right(t, 2), split_part(s, ',', 2), "
                         "replace(t, 'a', '') FROM more_strings")
    assert_same(program, shuffle_partitions=(1,), conf=NON_ANSI)
