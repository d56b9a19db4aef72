"""The math functions' F wrappers and signatures (quiver/engine/analysis/functions/math.py) against
PySpark: column names and result types."""
from __future__ import annotations

import pytest

from quiver.engine.analysis.functions.catalog import lookup
from quiver.engine.core import types as T
from tests.engine.analysis.functions.harness import assert_name_and_type_match, case_id, pyspark_columns

_UNARY_MATH = ["sqrt", "cbrt", "exp", "expm1", "ln", "log10", "log2", "log1p", "sin", "cos", "tan", "asin", "acos",
               "atan", "sinh", "cosh", "tanh", "degrees", "radians", "signum", "sign"]

CASES: list[tuple[str, tuple]] = [
    ("abs", ("i",)), ("abs", ("dec",)), ("abs", ("f",)), ("round", ("d",)), ("round", ("d", 2)),
    ("round", ("dec",)), ("round", ("dec", 1)), ("round", ("dec", 3)), ("round", ("dec", -1)), ("round", ("i", -1)),
    ("round", ("f", 1)), ("bround", ("d",)), ("bround", ("dec", 1)), ("log", ("d",)), ("log", (2.0, "d")),
    ("pow", ("d", 2)), ("power", ("d", "i")), ("pow", (2, "d")), ("atan2", ("d", "i")), ("hypot", ("d", "i")),
    ("floor", ("d",)), ("floor", ("dec",)), ("ceil", ("d",)), ("ceil", ("i",)), ("ceiling", ("d",)),
    ("floor", ("d", 1)), ("ceil", ("dec", 1)), ("ceil", ("i", -1)), ("floor", ("f",)), ("greatest", ("i", "d")),
    ("least", ("i", "l")), ("greatest", ("s", "s2")), ("greatest", ("i", "dec")), ("least", ("t", "ts")),
    *[(name, ("d",)) for name in _UNARY_MATH], ("signum", ("dec",)), ("sqrt", ("i",)),
]


@pytest.fixture(scope="module")
def expected_columns(pyspark_legacy):
    return pyspark_columns(pyspark_legacy, CASES)


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_name_and_type_match_pyspark(case, expected_columns):
    assert_name_and_type_match(case, CASES, expected_columns)


def test_round_type_needs_the_literal_scale_and_is_wide_without_it():
    spec = lookup("round")
    assert spec.literal_result_type([T.DecimalType(5, 2), T.IntegerType()], [None, 1]) == T.DecimalType(5, 1)
    assert spec.result_type([T.DecimalType(5, 2), T.IntegerType()]) == T.DecimalType(6, 2)
