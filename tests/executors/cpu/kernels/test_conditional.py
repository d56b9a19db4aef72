"""Conditional and null-handling kernels (quiver/executors/cpu/kernels/conditional.py) against real PySpark."""
from __future__ import annotations

import pytest

from tests.executors.cpu.kernels.harness import Lit, assert_matches_pyspark, c, case_id, pyspark_results

CASES: list[tuple[str, tuple]] = [
    ("coalesce", ("s", "sd")), ("coalesce", ("i", "d")), ("coalesce", ("i", Lit(0))),
    ("coalesce", (Lit(None), "i")), ("coalesce", ("i", "s")), ("ifnull", ("d", Lit(0.0))), ("nvl", ("i", "l")),
    ("nvl2", ("i", Lit("a"), Lit("b"))), ("nvl2", ("i", "i", "d")), ("if", ("b", "i", "d")),
    ("if", ("b", "s", Lit(None))), ("nullif", ("i", Lit(15))), ("nullif", ("i", "n")), ("nullif", ("i", Lit(2.5))),
    ("isnull", c("s")), ("isnotnull", c("d")), ("isnan", c("d")), ("isnan", c("i")), ("isnan", c("f")),
    ("nanvl", ("d", Lit(0.0))), ("nanvl", ("i", "d")),
]


@pytest.fixture(scope="module")
def spark_results(pyspark_legacy):
    return pyspark_results(pyspark_legacy, CASES)


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_matches_pyspark(case, table, spark_results):
    assert_matches_pyspark(case, CASES, table, spark_results)
