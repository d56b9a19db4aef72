"""The optimizer: a list of pure rules, each `plan -> plan`, applied to a fixed point.

The driver records which rules changed the plan, so `explain("extended")` can say so.
"""
from __future__ import annotations

from typing import Callable

from quiver.engine.core.plan import LogicalPlan
from quiver.planners.optimizer.aggregate_key_filters import filter_aggregates_by_join_keys
from quiver.planners.optimizer.collapse_projects import collapse_projects
from quiver.planners.optimizer.constant_folding import fold_constants
from quiver.planners.optimizer.disjunct_filters import derive_disjunct_filters
from quiver.planners.optimizer.factor_disjunctions import factor_disjunctions
from quiver.planners.optimizer.join_reorder import reorder_joins
from quiver.planners.optimizer.limit_pushdown import push_down_limits
from quiver.planners.optimizer.merge_filters import merge_filters
from quiver.planners.optimizer.predicate_pushdown import push_down_predicates
from quiver.planners.optimizer.prune_columns import prune_columns
from quiver.planners.optimizer.semi_join_pushdown import push_down_semi_joins
from quiver.planners.optimizer.simplify_filters import simplify_filters
from quiver.planners.optimizer.decorrelate_subqueries import rewrite_subqueries

Rule = Callable[[LogicalPlan], LogicalPlan]

RULES: tuple[Rule, ...] = (
    rewrite_subqueries,
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


def optimize(plan: LogicalPlan, rules: tuple[Rule, ...] = RULES) -> tuple[LogicalPlan, list[str]]:
    """Rules to a fixed point; then, once each and each followed by the rules again (as Spark's
    batches): per-table filters derived from cross-table ORs, join reordering, aggregates filtered
    to the keys their join keeps, and semi/anti joins sunk below the inner joins they do not need.

    Reordering needs filters already pushed to the join inputs, where their selectivity is
    estimated; the later passes move the conditions these steps created and prune columns again.
    """
    plan, fired = _fixed_point(plan, rules)
    if rules is not RULES:
        return plan, fired
    for step in (derive_disjunct_filters, reorder_joins, filter_aggregates_by_join_keys, push_down_semi_joins):
        stepped = step(plan)
        if stepped != plan:
            plan, again = _fixed_point(stepped, rules)
            fired = list(dict.fromkeys(fired + [step.__name__] + again))
    return plan, fired


def _fixed_point(plan: LogicalPlan, rules: tuple[Rule, ...]) -> tuple[LogicalPlan, list[str]]:
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
