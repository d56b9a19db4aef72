"""The string functions' F wrappers and signatures (quiver/engine/analysis/functions/string.py) against
PySpark: column names and result types."""
from __future__ import annotations

import pytest

from tests.engine.analysis.functions.harness import assert_name_and_type_match, case_id, pyspark_columns

CASES: list[tuple[str, tuple]] = [
    ("upper", ("s",)), ("lower", ("s",)), ("ucase", ("s",)), ("lcase", ("s",)), ("initcap", ("s",)),
    ("trim", ("s",)), ("ltrim", ("s",)), ("rtrim", ("s",)), ("trim", ("s", "s2")), ("ltrim", ("s", "s2")),
    ("btrim", ("s",)), ("length", ("s",)), ("length", ("i",)), ("char_length", ("s",)),
    ("character_length", ("s",)), ("octet_length", ("s",)), ("bit_length", ("s",)), ("ascii", ("s",)),
    ("upper", ("d",)), ("substring", ("s", 1, 3)), ("substring", ("s", 0, 2)), ("substring", ("s", "i", "i")),
    ("substr", ("s", "i")), ("substr", ("s", "i", "i")), ("concat", ("s", "s2")), ("concat", ("s", "i", "d")),
    ("concat_ws", ("-", "s", "s2")), ("concat_ws", (",", "arr", "s")), ("regexp_replace", ("s", "a", "b")),
    ("regexp_replace", ("s", "(a)", "$1", 2)), ("regexp_extract", ("s", "(a)", 1)), ("lpad", ("s", 5, "x")),
    ("rpad", ("s", 5, "xy")), ("instr", ("s", "b")), ("locate", ("b", "s")), ("locate", ("b", "s", 2)),
    ("reverse", ("s",)), ("repeat", ("s", 2)), ("translate", ("s", "ab", "xy")), ("split", ("s", ",")),
    ("split", ("s", ",", 2)), ("startswith", ("s", "s2")), ("endswith", ("s", "s2")), ("contains", ("s", "s2")),
    ("like", ("s", "pat")), ("ilike", ("s", "pat")), ("rlike", ("s", "pat")), ("regexp", ("s", "pat")),
    ("regexp_like", ("s", "pat")), ("reverse", ("arr",)),
]


@pytest.fixture(scope="module")
def expected_columns(pyspark_legacy):
    return pyspark_columns(pyspark_legacy, CASES)


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_name_and_type_match_pyspark(case, expected_columns):
    assert_name_and_type_match(case, CASES, expected_columns)
