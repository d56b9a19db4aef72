"""quiver/connectors/arrow_predicate.py: residual join conditions go to Acero only when Arrow gives Spark's answer."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.acero as acero
import pytest

from quiver.connectors.arrow_predicate import exact_arrow_expression
from quiver.engine.core import types as T
from quiver.engine.core.expressions import And, AttributeRef, Comparison, IsNull, Literal, Not, Or

A = AttributeRef("a", T.LongType(), True, 1)
B = AttributeRef("b", T.LongType(), True, 2)
S = AttributeRef("s", T.StringType(), True, 3)
F = AttributeRef("f", T.DoubleType(), True, 4)
I32 = AttributeRef("i", T.IntegerType(), True, 5)


def _rows_kept(expr, table: pa.Table) -> list[int]:
    arrow = exact_arrow_expression(expr)
    assert arrow is not None
    plan = acero.Declaration.from_sequence([
        acero.Declaration("table_source", acero.TableSourceNodeOptions(table)),
        acero.Declaration("filter", acero.FilterNodeOptions(arrow)),
    ])
    return plan.to_table(use_threads=False).column("row").to_pylist()


TABLE = pa.table({"#1": pa.array([1, 2, None, 4], pa.int64()), "#2": pa.array([1, 3, 3, None], pa.int64()),
                  "#3": ["x", "y", None, "x"], "row": [0, 1, 2, 3]})


def test_null_comparisons_drop_the_row_as_in_spark():
    # NOT (a = b): true only where both are known and differ; null compares to unknown
    assert _rows_kept(Not(Comparison("=", A, B)), TABLE) == [1]
    assert _rows_kept(Or(Comparison("<", A, B), IsNull(A)), TABLE) == [1, 2]
    assert _rows_kept(And(Comparison("=", S, Literal("x", T.StringType())), Not(IsNull(B))), TABLE) == [0]


@pytest.mark.parametrize("expr", [
    Comparison("=", F, F),                          # NaN = NaN is true in Spark, false in Arrow
    Comparison("=", A, I32),                        # mixed types: the analyzer's cast is missing
    Comparison("<=>", A, B),                        # null-safe equality
    Or(Comparison("=", A, B), Comparison("=", F, Literal(1.0, T.DoubleType()))),
])
def test_conditions_arrow_might_answer_differently_are_not_translated(expr):
    assert exact_arrow_expression(expr) is None
