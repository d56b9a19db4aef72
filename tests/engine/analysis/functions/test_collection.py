"""The array, map and struct functions' F wrappers and signatures
(quiver/engine/analysis/functions/collection.py) against PySpark: column names and result types."""
from __future__ import annotations

import pytest

from quiver.engine.analysis.functions.catalog import result_type_of
from quiver.engine.core import types as T
from quiver.engine.core.errors import AnalysisException
from quiver.engine.core.expressions import Literal
from tests.engine.analysis.functions.harness import TypedColumn, assert_name_and_type_match, case_id, pyspark_columns

CASES: list[tuple[str, tuple]] = [
    ("size", ("arr",)), ("cardinality", ("arr",)), ("array_contains", ("arr", "a")), ("sort_array", ("arr",)),
    ("sort_array", ("arr", False)),
]


@pytest.fixture(scope="module")
def expected_columns(pyspark_legacy):
    return pyspark_columns(pyspark_legacy, CASES)


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_name_and_type_match_pyspark(case, expected_columns):
    assert_name_and_type_match(case, CASES, expected_columns)


def test_struct_field_type_comes_from_the_literal_name():
    struct = T.StructType([T.StructField("a", T.IntegerType()), T.StructField("B", T.StringType())])
    assert result_type_of("get_field", [TypedColumn("st", struct), Literal.of("a")]) == T.IntegerType()
    assert result_type_of("get_field", [TypedColumn("st", struct), Literal.of("b")]) == T.StringType()
    with pytest.raises(AnalysisException, match="field 'z' does not exist.*fields are a, B"):
        result_type_of("get_field", [TypedColumn("st", struct), Literal.of("z")])
