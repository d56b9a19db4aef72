"""Math kernels (quiver/executors/cpu/kernels/math.py) against real PySpark."""
from __future__ import annotations

import pytest

from tests.executors.cpu.kernels.harness import Lit, assert_matches_pyspark, c, case_id, pyspark_results

CASES: list[tuple[str, tuple]] = [
    ("abs", c("i")), ("abs", c("l")), ("abs", c("d")), ("abs", c("dec")), ("abs", c("f")), ("round", c("d")),
    ("round", ("d", Lit(1))), ("round", ("d", Lit(2))), ("round", ("d", Lit(-1))), ("bround", c("d")),
    ("bround", ("d", Lit(2))), ("round", c("i")), ("round", ("i", Lit(-1))), ("round", ("i", Lit(-2))),
    ("bround", ("i", Lit(-1))), ("round", ("l", Lit(-1))), ("round", ("i", Lit(1))), ("round", c("dec")),
    ("round", ("dec", Lit(1))), ("round", ("dec", Lit(3))), ("round", ("dec", Lit(-1))),
    ("bround", ("dec", Lit(1))), ("round", c("f")), ("round", ("f", Lit(1))), ("round", c("s")), ("floor", c("d")),
    ("ceil", c("d")), ("ceiling", c("d")), ("floor", c("i")), ("ceil", c("l")), ("floor", c("dec")),
    ("ceil", c("dec")), ("floor", c("f")), ("floor", ("d", Lit(1))), ("ceil", ("dec", Lit(1))),
    ("ceil", ("i", Lit(-1))), ("signum", c("d")), ("sign", c("i")), ("signum", c("dec")), ("signum", c("s")),
    ("sqrt", c("d")), ("sqrt", c("i")), ("cbrt", c("d")), ("exp", c("d")), ("expm1", c("d")), ("ln", c("d")),
    ("log10", c("d")), ("log2", c("d")), ("log1p", c("d")), ("log", c("d")), ("log", (Lit(2.0), "d")),
    ("log", ("i", "d")), ("pow", ("d", Lit(2))), ("power", ("d", "d")), ("power", ("i", "n")), ("sin", c("d")),
    ("cos", c("d")), ("tan", c("d")), ("asin", c("d")), ("acos", c("d")), ("atan", c("d")), ("sinh", c("d")),
    ("cosh", c("d")), ("tanh", c("d")), ("degrees", c("d")), ("radians", c("d")), ("atan2", ("d", "i")),
    ("hypot", ("d", "i")), ("greatest", ("i", Lit(3))), ("least", ("i", Lit(3))),
    ("greatest", ("d", Lit(1.0), "i")), ("least", ("d", Lit(1.0))), ("greatest", ("s", "sd")),
    ("least", ("dt", "ts")), ("greatest", ("i", "dec")), ("least", ("b", Lit(True))),
    ("greatest", ("i", Lit(None))),
]


@pytest.fixture(scope="module")
def spark_results(pyspark_legacy):
    return pyspark_results(pyspark_legacy, CASES)


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_matches_pyspark(case, table, spark_results):
    assert_matches_pyspark(case, CASES, table, spark_results)
