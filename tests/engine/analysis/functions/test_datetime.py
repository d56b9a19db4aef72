"""The date and time functions' F wrappers and signatures (quiver/engine/analysis/functions/datetime.py)
against PySpark: column names and result types."""
from __future__ import annotations

import pytest

from tests.engine.analysis.functions.harness import assert_name_and_type_match, case_id, pyspark_columns

_DATE_FIELDS = ["year", "month", "dayofmonth", "day", "dayofweek", "dayofyear", "quarter", "weekofyear", "weekday"]

CASES: list[tuple[str, tuple]] = [
    *[(name, ("t",)) for name in _DATE_FIELDS], ("year", ("ts",)), ("month", ("s",)), ("hour", ("ts",)),
    ("minute", ("ts",)), ("second", ("ts",)), ("hour", ("t",)), ("last_day", ("t",)), ("date_add", ("t", 1)),
    ("date_add", ("t", "i")), ("date_add", ("ts", 1)), ("date_sub", ("t", 1)), ("dateadd", ("t", 1)),
    ("datediff", ("t", "ts")), ("date_diff", ("t", "ts")), ("add_months", ("t", 1)),
    ("months_between", ("ts", "t")), ("months_between", ("ts", "t", False)), ("to_date", ("s",)),
    ("to_date", ("s", "dd/MM/yyyy")), ("to_date", ("ts",)), ("to_timestamp", ("s",)),
    ("to_timestamp", ("s", "yyyy-MM-dd HH:mm")), ("to_timestamp", ("t",)), ("date_format", ("ts", "yyyy-MM-dd")),
    ("date_format", ("t", "yyyy")), ("current_date", ()), ("current_timestamp", ()), ("now", ()),
    ("date_trunc", ("month", "ts")), ("date_trunc", ("month", "t")), ("trunc", ("t", "MM")), ("unix_timestamp", ()),
    ("unix_timestamp", ("ts",)), ("unix_timestamp", ("s", "dd/MM/yyyy")), ("to_unix_timestamp", ("s",)),
    ("from_unixtime", ("l",)), ("from_unixtime", ("l", "yyyy")),
]


@pytest.fixture(scope="module")
def expected_columns(pyspark_legacy):
    return pyspark_columns(pyspark_legacy, CASES)


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_name_and_type_match_pyspark(case, expected_columns):
    assert_name_and_type_match(case, CASES, expected_columns)
