"""The CPU kernel of the generators (explode, posexplode, inline and their _outer forms): a guard.

Generators make rows, not values: the analyzer lifts them out of the select list into a
`Generate` node (quiver/engine/analysis/generators.py), which quiver/executors/cpu/generate.py
runs. The kernel is registered so the table names every function the catalog knows.
"""
from __future__ import annotations

from quiver.engine.core import types as T
from quiver.engine.core.errors import QuiverError
from quiver.executors.cpu.kernels.registry import Value, kernel


@kernel("explode", "explode_outer", "posexplode", "posexplode_outer", "inline", "inline_outer")
def generator(args: list[Value], rt: T.DataType) -> Value:
    """Generators make rows, not values: the analyzer lifts them into a Generate node, so reaching
    here means one was left inside an expression."""
    raise QuiverError("a generator (explode, posexplode, inline) can only be evaluated by a Generate node; "
                      "select it on its own in select() or LATERAL VIEW")
