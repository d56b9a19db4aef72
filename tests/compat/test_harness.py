"""The harness must be able to fail: its comparisons, checked on hand-built values (no engine)."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from .harness import NRow, compare_rows, compare_text, normalize, values_equal


def row(**kw):
    return NRow(tuple(kw), tuple(kw.values()))


def test_floats_within_relative_tolerance_are_equal():
    assert values_equal(1.0, 1.0 + 1e-12)
    assert not values_equal(1.0, 1.0 + 1e-6)
    assert values_equal(float("nan"), float("nan"))
    assert not values_equal(float("nan"), 0.0)


def test_types_must_match():
    assert not values_equal(1, 1.0)
    assert not values_equal(True, 1)
    assert not values_equal(dt.date(2024, 1, 1), dt.datetime(2024, 1, 1))
    assert not values_equal("1", 1)
    assert not values_equal(None, 0)
    assert values_equal(Decimal("1.50"), Decimal("1.5"))


def test_row_names_matter():
    assert not values_equal(row(a=1), row(b=1))
    assert values_equal(row(a=1, b=[1.0, None]), row(a=1, b=[1.0, None]))


def test_multiset_comparison_ignores_order_but_not_multiplicity():
    a = [row(x=1), row(x=2), row(x=2)]
    assert compare_rows(a, list(reversed(a)), ordered=False) is None
    assert compare_rows(a, [row(x=1), row(x=2)], ordered=False) is not None
    assert compare_rows(a, [row(x=1), row(x=1), row(x=2)], ordered=False) is not None
    assert compare_rows(a, list(reversed(a)), ordered=True) is not None


def test_multiset_with_nulls_and_nan_sorts_and_matches():
    a = [row(x=None, y=float("nan")), row(x=1, y=None), row(x=None, y=2.0)]
    assert compare_rows(a, [a[2], a[0], a[1]], ordered=False) is None


def test_diff_message_is_readable():
    message = compare_rows([row(k="a", v=1)], [row(k="a", v=2)], ordered=False)
    assert "rows only in PySpark" in message and "Row(k='a', v=1)" in message and "Row(k='a', v=2)" in message


def test_sort_arrays_option():
    assert normalize([3, 1, None], sort_arrays=True) == [None, 1, 3]
    assert normalize([3, 1], sort_arrays=False) == [3, 1]


def test_text_diff():
    assert compare_text("a\nb\n", "a\nb\n") is None
    assert "-b" in compare_text("a\nb\n", "a\nc\n")


def test_rows_from_pyspark_normalize_with_names(pyspark_session):
    from pyspark.sql import Row

    assert normalize(Row(a=1, b=Row(c="x"))) == row(a=1, b=row(c="x"))
    assert normalize({"k": 1}) != normalize({"k": 2})


@pytest.mark.parametrize("value", [1, 1.5, "s", dt.date(2024, 1, 1), [1, 2], None])
def test_values_equal_reflexive(value):
    assert values_equal(normalize(value), normalize(value))


def test_quiver_side_runs_on_the_master_the_run_names():
    """`make test` runs this package again with QUIVER_TEST_MASTER=ray: its programs must really run there."""
    from .harness import quiver_engine, session_master

    spark = quiver_engine().spark
    assert spark.master == session_master()
    runtime = type(spark._context.runtime).__name__
    assert runtime == ("RayRuntime" if session_master().startswith("ray") else "LocalRuntime")
