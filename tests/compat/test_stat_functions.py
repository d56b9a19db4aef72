"""df.stat / df.corr, df.cov, df.crosstab, df.freqItems, df.approxQuantile against PySpark."""
from __future__ import annotations

from .harness import assert_same, assert_same_value


def numbers(spark):
    rows = [(1, "a", 2.5, 10), (2, "b", None, 20), (3, None, -0.0, 30), (4, "a", 7.0, None), (5, "a", 1.5, 50),
            (6, "b", 3.25, 60)]
    return spark.createDataFrame(rows, "i int, s string, d double, l bigint")


def test_corr_and_cov():
    def program(spark, F, T, Window):
        df = numbers(spark)
        return [df.stat.corr("i", "d"), df.corr("i", "l"), df.stat.cov("i", "d"), df.cov("l", "i"),
                df.corr("i", "i", "pearson")]
    assert_same_value(program)


def test_crosstab():
    def program(spark, F, T, Window):
        return numbers(spark).stat.crosstab("s", "i")
    assert_same(program)


def test_freq_items_of_small_data():
    def program(spark, F, T, Window):
        row = numbers(spark).freqItems(["i", "s"], 0.1).collect()[0]
        return [sorted(row[0]), sorted(row[1], key=lambda v: (v is not None, v))]
    assert_same_value(program)


def test_freq_items_names_and_types():
    def program(spark, F, T, Window):
        df = numbers(spark).stat.freqItems(["s", "l"])
        return df.select([F.lit(c).alias(c) for c in df.columns])
    assert_same(program, shuffle_partitions=(1,))


def test_approx_quantile_exact():
    def program(spark, F, T, Window):
        df = numbers(spark)
        return [df.approxQuantile("d", [0.0, 0.25, 0.5, 0.75, 1.0], 0.0),
                df.stat.approxQuantile(["i", "l"], [0.1, 0.5, 0.9], 0.0)]
    assert_same_value(program)
