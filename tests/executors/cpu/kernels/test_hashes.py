"""Digest kernels (quiver/executors/cpu/kernels/hashes.py) against real PySpark; hash, xxhash64 and crc32 are
checked bit for bit in tests/compat/test_hash_functions.py."""
from __future__ import annotations

import pytest

from tests.executors.cpu.kernels.harness import Lit, assert_matches_pyspark, c, case_id, pyspark_results

CASES: list[tuple[str, tuple]] = [
    ("md5", c("s")), ("sha1", c("s")), ("sha2", ("s", Lit(256))), ("sha2", ("s", Lit(384))),
]


@pytest.fixture(scope="module")
def spark_results(pyspark_legacy):
    return pyspark_results(pyspark_legacy, CASES)


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_matches_pyspark(case, table, spark_results):
    assert_matches_pyspark(case, CASES, table, spark_results)
