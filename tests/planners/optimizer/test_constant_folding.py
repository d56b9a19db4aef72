"""quiver/planners/optimizer/constant_folding.py: constant sub-expressions become literals, once, at planning time."""
from __future__ import annotations

from quiver import functions as F
from quiver.engine.core import types as T
from quiver.engine.core.expressions import AggregateFunction, Cast, Literal, ScalarFunction
from quiver.planners.optimizer import fold_constants
from quiver.planners.optimizer.constant_folding import fold_expression


def _exprs(plan):
    return [e for node in plan.walk() for x in node.expressions() for e in x.walk()]


def test_arithmetic_of_literals_folds_to_one_literal(spark, run_plan):
    df = spark.range(3).select((F.col("id") + (F.lit(1) + F.lit(2)) * 10).alias("x"))
    folded = fold_constants(df._plan)
    literals = [e for e in _exprs(folded) if isinstance(e, Literal)]
    assert [(lit.value, lit.data_type) for lit in literals] == [(30, T.LongType())]
    assert run_plan(folded) == run_plan(df._plan) == [(30,), (31,), (32,)]


def test_casts_of_literals_fold_with_their_target_type():
    e = fold_expression(Cast(Literal("5", T.StringType()), T.IntegerType()))
    assert e == Literal(5, T.IntegerType())
    e = fold_expression(Cast(Literal("x", T.StringType()), T.IntegerType()))
    assert e == Literal(None, T.IntegerType())  # an invalid cast is null, as at run time


def test_boolean_identities_drop_the_constant_side(spark, run_plan):
    df = spark.range(5)
    for cond, kept in ((F.lit(True) & (F.col("id") > 1), "(id > CAST(1 AS BIGINT))"),
                       ((F.col("id") > 1) | F.lit(False), "(id > CAST(1 AS BIGINT))")):
        q = df.filter(cond)
        folded = fold_constants(q._plan)
        assert folded.condition.sql() in (kept, "(id > 1)")
        assert run_plan(folded) == run_plan(q._plan) == [(2,), (3,), (4,)]
    assert (fold_constants(df.filter(F.lit(False) & (F.col("id") > 1))._plan).condition
            == Literal(False, T.BooleanType()))
    assert fold_constants(df.filter((F.col("id") > 1) | F.lit(True))._plan).condition == Literal(True, T.BooleanType())


def test_null_and_division_by_zero_fold_to_null(spark, run_plan):
    q = spark.range(2).select((F.lit(1) / F.lit(0)).alias("q"), (F.lit(None) + F.lit(1)).alias("n"))
    folded = fold_constants(q._plan)
    assert all(isinstance(p.child, Literal) and p.child.value is None for p in folded.projections)
    assert run_plan(folded) == run_plan(q._plan) == [(None, None), (None, None)]


def test_non_deterministic_and_aggregate_expressions_are_left_alone(spark):
    rand = ScalarFunction("rand", (Literal(1, T.IntegerType()),))
    assert fold_expression(rand) == rand
    agg = AggregateFunction("count", (Literal(1, T.IntegerType()),))
    assert fold_expression(agg) == agg


def test_column_references_are_not_folded(spark):
    plan = spark.range(3).select((F.col("id") * 2).alias("x"))._plan
    folded = fold_constants(plan)
    assert folded.projections[0].child.sql() == "(id * 2)"  # only CAST(2 AS BIGINT) became 2
    assert fold_constants(folded) == folded
