"""The conditional and null-handling functions' F wrappers and signatures
(quiver/engine/analysis/functions/conditional.py) against PySpark: column names and result types."""
from __future__ import annotations

import pytest

from tests.engine.analysis.functions.harness import assert_name_and_type_match, case_id, pyspark_columns

CASES: list[tuple[str, tuple]] = [
    ("coalesce", ("i", "l")), ("coalesce", ("s", "s2")), ("coalesce", ("i", "dec")), ("ifnull", ("i", "d")),
    ("nvl", ("s", "s2")), ("nvl2", ("s", "i", "d")), ("nullif", ("i", "l")), ("isnull", ("s",)),
    ("isnotnull", ("s",)), ("isnan", ("d",)), ("isnan", ("f",)), ("nanvl", ("d", "d")), ("nanvl", ("f", "f")),
]


@pytest.fixture(scope="module")
def expected_columns(pyspark_legacy):
    return pyspark_columns(pyspark_legacy, CASES)


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_name_and_type_match_pyspark(case, expected_columns):
    assert_name_and_type_match(case, CASES, expected_columns)
