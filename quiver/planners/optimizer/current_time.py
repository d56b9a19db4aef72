"""current_timestamp(), now(), current_date() and unix_timestamp() as one value per query (Spark's
ComputeCurrentTime): every call in a query, on every row and in every task, reads the same instant, the one its
optimization began at."""
from __future__ import annotations

import datetime
import math

from quiver.engine.core import types as T
from quiver.engine.core.expressions import Expr, Literal, ScalarFunction, transform_expr
from quiver.engine.core.plan import LogicalPlan, transform_up

CURRENT_TIME_FUNCTIONS = ("current_timestamp", "now", "current_date", "unix_timestamp")


def compute_current_time(plan: LogicalPlan, now: datetime.datetime) -> LogicalPlan:
    """`plan` with each call of the current time replaced by `now` (an aware datetime): a TIMESTAMP literal, its
    whole seconds for unix_timestamp(), or for current_date() the UTC date (the analyzer has already made
    current_date() of another session zone a cast of current_timestamp(), analysis/time_zones.py)."""
    instant = Literal(now.astimezone(datetime.timezone.utc).replace(tzinfo=None), T.TimestampType())
    values = {"current_timestamp": instant, "now": instant, "current_date": Literal(instant.value.date(), T.DateType()),
              "unix_timestamp": Literal(math.floor(now.timestamp()), T.LongType())}

    def replace(e: Expr) -> Expr:
        if isinstance(e, ScalarFunction) and e.name in CURRENT_TIME_FUNCTIONS and not e.args:
            return values[e.name]
        return e

    return transform_up(plan, lambda node: node.map_expressions(lambda e: transform_expr(e, replace)))


__all__ = ["compute_current_time", "CURRENT_TIME_FUNCTIONS"]
