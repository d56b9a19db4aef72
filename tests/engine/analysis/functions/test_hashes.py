"""The hash functions' F wrappers and signatures (quiver/engine/analysis/functions/hashes.py) against
PySpark: column names and result types."""
from __future__ import annotations

import pytest

from quiver import functions as QF
from tests.engine.analysis.functions.harness import assert_name_and_type_match, case_id, pyspark_columns

CASES: list[tuple[str, tuple]] = [
    ("md5", ("s",)), ("sha1", ("s",)), ("sha2", ("s", 256)),
]


@pytest.fixture(scope="module")
def expected_columns(pyspark_legacy):
    return pyspark_columns(pyspark_legacy, CASES)


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_name_and_type_match_pyspark(case, expected_columns):
    assert_name_and_type_match(case, CASES, expected_columns)


def test_sha2_rejects_bit_lengths_pyspark_rejects():
    with pytest.raises(ValueError, match="numBits must be one of"):
        QF.sha2("s", 100)
