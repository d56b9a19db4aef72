"""quiver/planners/optimizer/simplify_filters.py: a filter whose condition is the literal true disappears."""
from __future__ import annotations

from quiver import functions as F
from quiver.engine.core import plan as L
from quiver.engine.core import types as T
from quiver.engine.core.expressions import Literal
from quiver.planners.optimizer import fold_constants, simplify_filters


def test_filter_true_is_removed(spark, run_plan, shape):
    q = spark.range(4).filter(F.lit(1) == F.lit(1))
    folded = fold_constants(q._plan)
    assert shape(folded) == "Filter(RangeRelation)"
    simplified = simplify_filters(folded)
    assert shape(simplified) == "RangeRelation"
    assert run_plan(simplified) == run_plan(q._plan) == [(0,), (1,), (2,), (3,)]


def test_filter_false_or_null_is_kept(spark, run_plan, shape):
    base = spark.range(4)._plan
    for value in (False, None):
        plan = L.Filter(base, Literal(value, T.BooleanType()))
        assert shape(simplify_filters(plan)) == "Filter(RangeRelation)"
        assert run_plan(simplify_filters(plan)) == []


def test_non_literal_conditions_are_untouched(spark):
    plan = spark.range(4).filter(F.col("id") > 1)._plan
    assert simplify_filters(plan) is plan
