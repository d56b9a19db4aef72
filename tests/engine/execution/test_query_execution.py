"""quiver/engine/execution/query_execution.py: every step a query goes through is one entry of `PIPELINE`,
runs once per query, and explain names the logical steps and optimizer rules that changed the plan."""
from __future__ import annotations

import dataclasses
import functools
import re
from collections import Counter
from collections.abc import Callable

import pytest

from quiver import functions as F
from quiver.engine.core import plan as L
from quiver.engine.execution import query_execution
from quiver.engine.execution.query_execution import (
    PIPELINE,
    Analysis,
    FixedPoint,
    Placement,
    Rewrite,
)
from quiver.planners.optimizer import RULES
from quiver.planners.optimizer.decorrelate_subqueries import rewrite_subqueries


def _functions(step) -> list[Callable]:
    """The functions a pipeline entry lists: its own, and the rules of a fixed point."""
    if isinstance(step, FixedPoint):
        return list(step.rules)
    return [getattr(step, f.name) for f in dataclasses.fields(step) if callable(getattr(step, f.name))]


def _counted(step, calls: Counter):
    """`step` with its function counting its calls under the step's name (which it keeps)."""
    def count(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def counting(*args, **kwargs):
            calls[step.name] += 1
            return fn(*args, **kwargs)
        return counting

    return dataclasses.replace(step, **{f.name: count(getattr(step, f.name)) for f in dataclasses.fields(step)
                                        if callable(getattr(step, f.name))})


def _fired(text: str) -> list[str]:
    """The rules explain's optimized-plan header says fired."""
    listed = re.search(r"== Optimized Logical Plan ==  \(rules fired: ([^)]*)\)", text).group(1)
    return [] if listed == "none" else listed.split(", ")


def test_no_step_or_rule_is_listed_twice():
    """rewrite_subqueries once ran as a step and again as the first of the optimizer's RULES."""
    listed = [fn for step in PIPELINE for fn in _functions(step)]
    assert len(listed) == len(set(listed)), Counter(fn.__name__ for fn in listed).most_common(3)
    assert rewrite_subqueries not in RULES
    names = [step.name for step in PIPELINE]
    assert len(names) == len(set(names))


def test_the_pipeline_starts_with_analysis_and_ends_with_placement():
    assert isinstance(PIPELINE[0], Analysis) and isinstance(PIPELINE[-1], Placement)
    assert [step.name for step in PIPELINE[-3:]] == ["plan_physical", "split_stages", "place_stage"]


def test_each_step_runs_once_per_query(spark, monkeypatch):
    """Every step a query's execution applies (all but analysis, done as the DataFrame is built, and
    placement, done by the scheduler stage by stage) runs exactly once for one action."""
    cached = spark.range(20).withColumn("g", F.col("id") % 4).cache()
    cached.count()  # filled by a job of its own before the query under test
    cached.createOrReplaceTempView("pipeline_once")
    try:
        query = spark.sql("SELECT g, sum(id) AS total FROM pipeline_once WHERE g IN (SELECT id FROM range(2)) "
                          "GROUP BY g")
        calls: Counter = Counter()
        monkeypatch.setattr(query_execution, "PIPELINE", tuple(_counted(step, calls) for step in PIPELINE))
        rows = sorted(tuple(r) for r in query.collect())
        applied = [s.name for s in PIPELINE if not isinstance(s, (Analysis, Placement, FixedPoint))]
        assert {name: calls[name] for name in applied} == dict.fromkeys(applied, 1)
        assert rows == [(0, 40), (1, 45)]
        assert {"use_cached_data", "rewrite_subqueries"} <= set(query._execution().fired_rules)
    finally:
        spark.catalog.dropTempView("pipeline_once")
        cached.unpersist()


def test_a_plan_is_worked_out_once_however_often_it_is_read(spark, monkeypatch):
    calls: Counter = Counter()
    monkeypatch.setattr(query_execution, "PIPELINE", tuple(_counted(step, calls) for step in PIPELINE))
    execution = spark.range(10).groupBy((F.col("id") % 2).alias("k")).count()._execution()
    for _ in range(2):
        assert execution.optimized is execution.optimized and execution.fired_rules is execution.fired_rules
        assert execution.physical is execution.physical and execution.stages is execution.stages
    assert calls["rewrite_subqueries"] == calls["plan_physical"] == calls["split_stages"] == 1


@pytest.mark.parametrize("build, expected", [
    (lambda s: s.sql("SELECT * FROM range(10) WHERE id IN (SELECT id * 2 FROM range(5))"), "rewrite_subqueries"),
    (lambda s: s.sql("SELECT id FROM range(10) WHERE id > (SELECT max(id) - 3 FROM range(10))"),
     "inline_scalar_subqueries"),
    (lambda s: s.range(0, 40, 1, 4).groupBy(F.spark_partition_id().alias("p")).count(),
     "pull_out_nondeterministic"),
    (lambda s: s.range(100).select((F.col("id") * 2).alias("d")).filter(F.col("d") > 3), "push_down_predicates"),
], ids=["subquery", "scalar-subquery", "nondeterministic-aggregate", "optimizer-rule"])
def test_explain_names_the_steps_that_changed_the_plan(spark, capsys, build, expected):
    build(spark).explain(True)
    fired = _fired(capsys.readouterr().out)
    assert expected in fired
    assert len(fired) == len(set(fired))
    assert set(fired) <= {step.name for step in PIPELINE} | {rule.__name__ for rule in RULES}


def test_explain_names_a_cached_input_and_nothing_for_a_plan_no_step_changes(spark, capsys):
    spark.range(3).explain(True)
    assert _fired(capsys.readouterr().out) == []
    cached = spark.range(30).withColumn("g", F.col("id") % 3).cache()
    try:
        cached.count()
        cached.groupBy("g").count().explain(True)
        assert _fired(capsys.readouterr().out) == ["use_cached_data"]
    finally:
        cached.unpersist()


def test_a_one_shot_step_runs_its_follow_up_rules_only_where_it_changed_the_plan(spark):
    relation = spark.range(3)._plan
    seen: list[L.LogicalPlan] = []

    def follow_up(plan: L.LogicalPlan) -> L.LogicalPlan:
        seen.append(plan)
        return plan

    def untouched(plan: L.LogicalPlan) -> L.LogicalPlan:
        return plan

    def limited(plan: L.LogicalPlan) -> L.LogicalPlan:
        return L.Limit(plan, 2)

    fired: list[str] = []
    assert Rewrite(untouched, then=(follow_up,)).apply(None, relation, fired) is relation
    assert seen == [] and fired == []
    assert Rewrite(limited, then=(follow_up,)).apply(None, relation, fired) == L.Limit(relation, 2)
    assert seen == [L.Limit(relation, 2)] and fired == ["limited"]
