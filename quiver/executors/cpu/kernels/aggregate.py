"""The CPU kernel of grouping() and grouping_id(): a guard.

They are aggregate functions that only mean something under grouping sets, where
quiver/engine/analysis/grouping_sets.py replaces them before execution; the aggregates
themselves run in quiver/executors/cpu/aggregate.py. The kernel is registered so the table
names every function the catalog knows.
"""
from __future__ import annotations

from quiver.engine.core import types as T
from quiver.engine.core.errors import QuiverError
from quiver.executors.cpu.kernels.registry import Value, kernel


@kernel("grouping", "grouping_id", data="all")
def grouping(args: list[Value], rt: T.DataType) -> Value:
    """Only meaningful under grouping sets, where quiver/engine/analysis/grouping_sets.py replaces it before
    execution."""
    raise QuiverError("grouping() and grouping_id() can only be used with rollup(), cube(), groupingSets() "
                      "or GROUP BY ROLLUP / CUBE / GROUPING SETS")
