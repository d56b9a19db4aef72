"""Catalog entries for grouping() and grouping_id(), the aggregate functions that read a row's grouping set.

They are replaced by the grouping-set aggregate before execution (quiver/engine/analysis/grouping_sets.py);
the other aggregates are typed by their own expression nodes, not by this catalog.
"""
from __future__ import annotations

from quiver.engine.analysis.functions.catalog import any_arguments, register, returns
from quiver.engine.core import types as T

register("grouping", 1, 1, returns(T.ByteType()), any_arguments)
register("grouping_id", 0, None, returns(T.LongType()), any_arguments)
