"""Fixtures for this package's tests; the Quiver session and partition counts come from tests/conftest.py."""
from __future__ import annotations

import pytest


def _rows_of(plan, spark) -> list[tuple]:
    """Run a logical plan as it is (no optimizer) and return its rows, sorted, as tuples."""
    from quiver.planners.physical.planner import PlannerConfig, plan_physical
    from quiver.planners.stages import split_stages

    conf = PlannerConfig(shuffle_partitions=spark.conf.shuffle_partitions(),
                         broadcast_threshold=spark.conf.broadcast_threshold(),
                         default_parallelism=spark._context.runtime.parallelism)
    names = [a.internal_name for a in plan.output]
    parts = spark._context.scheduler.run_job(split_stages(plan_physical(plan, conf)),
                                     lambda p, batches: [tuple(r.values()) for b in batches
                                                         for r in b.select(names).to_pylist()])
    return sorted((row for part in parts for row in part),
                  key=lambda r: tuple((v is None, v if v is not None else 0) for v in r))


@pytest.fixture
def run_plan(spark):
    """`run_plan(plan)`: the sorted rows of a logical plan, executed without optimization, so that
    a rule's input and output plans can be compared by their results."""
    return lambda plan: _rows_of(plan, spark)


def _shape(plan) -> str:
    """A plan's node types as nested text, e.g. 'Project(Filter(LocalRelation))'."""
    kids = plan.children()
    name = type(plan).__name__
    return f"{name}({', '.join(_shape(k) for k in kids)})" if kids else name


@pytest.fixture
def shape():
    return _shape
