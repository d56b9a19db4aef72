"""The optimizer: pure rules, each `plan -> plan`, and the driver that applies them to a fixed point.

`RULES` are applied together, in order, until none changes the plan; the query pipeline
(engine/execution/query_execution.py) runs them after its first rewrites and again after each
one-shot rule that changed the plan. The driver records which rules changed the plan, so
`explain("extended")` can say so.
"""
from __future__ import annotations

from collections.abc import Callable

from quiver.engine.core.plan import LogicalPlan
from quiver.planners.optimizer.collapse_projects import collapse_projects
from quiver.planners.optimizer.constant_folding import fold_constants
from quiver.planners.optimizer.factor_disjunctions import factor_disjunctions
from quiver.planners.optimizer.limit_pushdown import push_down_limits
from quiver.planners.optimizer.merge_filters import merge_filters
from quiver.planners.optimizer.predicate_pushdown import push_down_predicates
from quiver.planners.optimizer.prune_columns import prune_columns
from quiver.planners.optimizer.simplify_filters import simplify_filters

Rule = Callable[[LogicalPlan], LogicalPlan]

RULES: tuple[Rule, ...] = (
    fold_constants,
    simplify_filters,
    factor_disjunctions,
    merge_filters,
    push_down_predicates,
    push_down_limits,
    collapse_projects,
    prune_columns,
)

MAX_ITERATIONS = 20


def fixed_point(plan: LogicalPlan, rules: tuple[Rule, ...] = RULES) -> tuple[LogicalPlan, list[str]]:
    """`rules` in order, again and again until a pass changes nothing (at most MAX_ITERATIONS passes);
    the plan, and the names of the rules that changed it, each once, in the order they first did."""
    fired: list[str] = []
    for _ in range(MAX_ITERATIONS):
        changed = False
        for rule in rules:
            new = rule(plan)
            if new != plan:
                fired.append(rule.__name__)
                plan = new
                changed = True
        if not changed:
            break
    return plan, list(dict.fromkeys(fired))
