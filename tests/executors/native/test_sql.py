"""quiver/executors/native/sql.py: what translates to DuckDB SQL with Spark's values, and what says why not."""
from __future__ import annotations

import datetime as dt
import decimal

import pytest

from quiver.engine.core import expressions as E
from quiver.engine.core import types as T
from quiver.executors.native.sql import Untranslatable, expression, literal, quoted

PRICE = E.AttributeRef("price", T.DecimalType(15, 2), expr_id=1)
RATE = E.AttributeRef("rate", T.DecimalType(15, 2), expr_id=2)
SCORE = E.AttributeRef("score", T.DoubleType(), expr_id=3)
TAG = E.AttributeRef("tag", T.StringType(), expr_id=4)
SMALL = E.AttributeRef("small", T.IntegerType(), expr_id=5)


def test_columns_are_their_internal_names_quoted():
    assert expression(PRICE) == '"#1"'
    assert quoted('a"b') == '"a""b"'


def test_literals_keep_their_spark_types():
    assert literal("it's", T.StringType()) == "'it''s'"
    assert literal(dt.date(1998, 9, 2), T.DateType()) == "DATE '1998-09-02'"
    assert literal(decimal.Decimal("0.05"), T.DecimalType(3, 2)) == "CAST('0.05' AS DECIMAL(3, 2))"
    assert literal(None, T.LongType()) == "CAST(NULL AS BIGINT)"


def test_decimal_arithmetic_is_pinned_to_sparks_result_type():
    product = E.BinaryArithmetic("*", PRICE, RATE)
    assert product.dtype == T.DecimalType(31, 4)
    assert expression(product) == 'CAST(("#1" * "#2") AS DECIMAL(31, 4))'


def test_a_product_spark_rounds_does_not_translate():
    chain = PRICE
    for _ in range(3):
        chain = E.BinaryArithmetic("*", chain, PRICE)
    assert chain.dtype.scale < 8  # Spark gave up digits of scale, and rounds to the rest
    with pytest.raises(Untranslatable, match="rounds"):
        expression(chain)


@pytest.mark.parametrize("expr", [
    E.Comparison(">", SCORE, E.Literal(3.5, T.DoubleType())),       # floats: NaN and infinities
    E.BinaryArithmetic("+", SMALL, E.Literal(1, T.IntegerType())),  # integers wrap without ANSI
    E.BinaryArithmetic("/", PRICE, RATE),                           # division rounds
    E.Cast(TAG, T.IntegerType()),                                   # string parsing
    E.Cast(PRICE, T.DecimalType(10, 2)),                            # a narrowing cast
])
def test_what_spark_does_differently_does_not_translate(expr):
    with pytest.raises(Untranslatable):
        expression(expr)


def test_exact_casts_and_boolean_logic_translate():
    widened = E.Cast(SMALL, T.DecimalType(12, 2))
    test = E.And(E.In(TAG, (E.Literal("a", T.StringType()),)), E.Not(E.IsNull(widened)))
    assert expression(test) == """(("#4" IN ('a')) AND (NOT (CAST("#5" AS DECIMAL(12, 2)) IS NULL)))"""


def test_a_case_when_whose_branches_share_its_type_is_pinned_to_it():
    one, zero = E.Literal(1, T.IntegerType()), E.Literal(0, T.IntegerType())
    case = E.CaseWhen((E.Comparison("=", TAG, E.Literal("a", T.StringType())),), (one,), zero)
    assert expression(case) == ("""CAST(CASE WHEN ("#4" = 'a') THEN CAST(1 AS INTEGER) ELSE CAST(0 AS INTEGER) END """
                                """AS INTEGER)""")
    widened = E.CaseWhen((E.IsNull(TAG),), (SMALL,), E.Literal(2**40, T.LongType()))
    with pytest.raises(Untranslatable, match="differ in type"):
        expression(widened)


def test_a_splits_pieces_of_one_file_are_read_as_one_range_where_they_continue_each_other():
    from quiver.connectors.files import DataFile, FilePiece
    from quiver.executors.native.sql import _file_ranges

    a, b = DataFile("/data/a.parquet", 100), DataFile("/data/b.parquet", 100)
    pieces = [FilePiece(a, (0, 1)), FilePiece(a, (2,)), FilePiece(a, (4, 5)), FilePiece(b, None), FilePiece(b, (0,))]
    assert _file_ranges(pieces) == [("/data/a.parquet", [0, 1, 2]), ("/data/a.parquet", [4, 5]),
                                    ("/data/b.parquet", None), ("/data/b.parquet", [0])]
    with pytest.raises(Untranslatable, match="not contiguous"):
        _file_ranges([FilePiece(a, (0, 2))])
