"""Array, map and struct kernels (quiver/executors/cpu/kernels/collection.py) against real PySpark."""
from __future__ import annotations

import pyarrow as pa
import pytest

from quiver.engine.core import types as T
from quiver.executors.cpu.kernels import KERNELS
from tests.executors.cpu.kernels.harness import NAN, Lit, assert_matches_pyspark, c, case_id, pyspark_results, same

CASES: list[tuple[str, tuple]] = [
    ("size", c("arr")), ("array_contains", ("arr", Lit("b"))), ("array_contains", ("arr", "s")),
    ("size", (Lit(None, "array<string>"),)), ("sort_array", c("arr")), ("sort_array", ("arr", Lit(False))),
    ("sort_array", (Lit(None, "array<double>"),)),
]


@pytest.fixture(scope="module")
def spark_results(pyspark_legacy):
    return pyspark_results(pyspark_legacy, CASES)


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_matches_pyspark(case, table, spark_results):
    assert_matches_pyspark(case, CASES, table, spark_results)


def test_struct_map_and_array_access():
    struct = pa.array([{"a": 1, "B": "x"}, None], pa.struct([("a", pa.int32()), ("B", pa.string())]))
    assert KERNELS["get_field"]([struct, pa.scalar("b")], T.StringType()).to_pylist() == ["x", None]
    mapping = pa.array([[("k", 1)], None, [("j", 2)]], pa.map_(pa.string(), pa.int32()))
    assert KERNELS["get_field"]([mapping, pa.scalar("k")], T.IntegerType()).to_pylist() == [1, None, None]
    lists = pa.array([[1, 2], [3], None, [4, 5, 6]], pa.list_(pa.int32())).slice(1)
    assert KERNELS["element_at_index"]([lists, pa.scalar(1)], T.IntegerType()).to_pylist() == [None, None, 5]
    assert KERNELS["reverse"]([lists], T.ArrayType(T.IntegerType())).to_pylist() == [[3], None, [6, 5, 4]]


def test_sort_array_puts_nan_above_numbers_and_nulls_first():
    lists = pa.array([[3.0, None, NAN, 1.0], None, []], pa.list_(pa.float64()))
    asc = KERNELS["sort_array"]([lists, pa.scalar(True)], T.ArrayType(T.DoubleType())).to_pylist()
    desc = KERNELS["sort_array"]([lists, pa.scalar(False)], T.ArrayType(T.DoubleType())).to_pylist()
    assert same(asc, [[None, 1.0, 3.0, NAN], None, []]) and same(desc, [[NAN, 3.0, 1.0, None], None, []])
