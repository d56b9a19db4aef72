"""A DataFrame's columns (`df.v`, `df["v"]`) used after joining frames derived from one another, compared
with Spark Connect (Spark's own server), which resolves such a column by the DataFrame it came from.

Matched by attribute id alone, `a.join(b, "k", "left").select(b.v)` with `b = a.filter(...)` gave the
left's `v` — a wrong answer with no error — and with `b = a.withColumn("v", ...)` an internal error.
Classic PySpark raises for most of these shapes (it cannot tell the sides apart); Connect answers
them, and raises AMBIGUOUS_COLUMN_REFERENCE where the frame is on both sides equally.
"""
from __future__ import annotations

import pytest

from .harness import assert_both_raise, assert_same, spark_connect_engine


@pytest.fixture(scope="module")
def connect():
    return spark_connect_engine()


def _frames(spark, F):
    a = spark.createDataFrame([(1, 10), (2, 20), (3, 30), (None, 40)], "k INT, v INT")
    filtered = a.filter(F.col("k") > 1)
    scaled = filtered.withColumn("v", F.col("v") * 100)
    return a, filtered, scaled


def left_join_selects_the_derived_frames_column(spark, F, T, Window):
    a, b, _ = _frames(spark, F)
    return a.join(b, "k", "left").select(b.v)


def left_join_selects_a_column_the_derived_frame_replaced(spark, F, T, Window):
    a, _, c = _frames(spark, F)
    return a.join(c, "k", "left").select(a.v, c.v)


def left_join_by_index_and_by_name(spark, F, T, Window):
    a, b, _ = _frames(spark, F)
    return a.join(b, "k", "left").select(b["v"], b["v"].alias("again"))


def filter_on_the_derived_frames_column(spark, F, T, Window):
    a, b, _ = _frames(spark, F)
    return a.join(b, "k", "left").where(b.v.isNull())


def join_condition_on_both_frames(spark, F, T, Window):
    a, b, _ = _frames(spark, F)
    return a.join(b, a.k == b.k, "left").select(b.v.alias("bv"), b.k)


def join_condition_then_the_right_frames_column(spark, F, T, Window):
    a, _, c = _frames(spark, F)
    return a.join(c, a.k == c.k).select(c.v)


def group_and_derive_from_the_right_frames_column(spark, F, T, Window):
    a, b, _ = _frames(spark, F)
    joined = a.join(b, "k", "left")
    return joined.withColumn("z", b.v + 1).groupBy(b.v).agg(F.count("*").alias("n"), F.max("z").alias("z"))


def order_by_the_right_frames_column(spark, F, T, Window):
    a, b, _ = _frames(spark, F)
    return a.join(b, a.k == b.k, "left").orderBy(b.v.desc_nulls_last()).select(b.v)


def right_frame_is_the_original(spark, F, T, Window):
    a, _, c = _frames(spark, F)
    return c.select("k", (F.col("v") + 1).alias("w")).join(a, "k").select("k", "w", a.v)


def aliased_sides(spark, F, T, Window):
    a, _, _ = _frames(spark, F)
    return a.alias("x").join(a.alias("y"), F.col("x.k") == F.col("y.k") + 1).select("x.v", "y.v")


@pytest.mark.parametrize("program", [
    left_join_selects_the_derived_frames_column,
    left_join_selects_a_column_the_derived_frame_replaced,
    left_join_by_index_and_by_name,
    filter_on_the_derived_frames_column,
    join_condition_on_both_frames,
    join_condition_then_the_right_frames_column,
    group_and_derive_from_the_right_frames_column,
    order_by_the_right_frames_column,
    right_frame_is_the_original,
    aliased_sides,
], ids=lambda p: p.__name__)
def test_a_frames_column_after_a_self_join_is_the_one_spark_connect_picks(connect, program):
    assert_same(program, reference=connect, ordered=program is order_by_the_right_frames_column,
                shuffle_partitions=(1, 3))


def original_on_both_sides_after_the_join(spark, F, T, Window):
    a, b, _ = _frames(spark, F)
    return a.join(b, "k", "left").select(a.v)


def the_same_frame_on_both_sides_of_the_condition(spark, F, T, Window):
    a, _, _ = _frames(spark, F)
    return a.join(a, a.k == a.k).select(a.v)


def two_frames_derived_from_one(spark, F, T, Window):
    a, _, _ = _frames(spark, F)
    return a.filter("k > 1").join(a.filter("k < 3"), "k").select(a.v)


def right_frame_original_selected_after_the_join(spark, F, T, Window):
    a, b, _ = _frames(spark, F)
    return b.join(a, "k").select(a.v)


def order_by_the_original_after_the_join(spark, F, T, Window):
    a, b, _ = _frames(spark, F)
    return a.join(b, a.k == b.k, "left").orderBy(a.v)


@pytest.mark.parametrize("program", [
    original_on_both_sides_after_the_join,
    the_same_frame_on_both_sides_of_the_condition,
    two_frames_derived_from_one,
    right_frame_original_selected_after_the_join,
    order_by_the_original_after_the_join,
], ids=lambda p: p.__name__)
def test_a_frame_found_on_both_sides_is_ambiguous_as_in_spark_connect(connect, program):
    assert_both_raise(program, reference=connect, match=["AMBIGUOUS_COLUMN_REFERENCE", "alias"])
