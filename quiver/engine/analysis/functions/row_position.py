"""Catalog entries for the functions whose value depends on where a row is: rand (random), randn,
monotonically_increasing_id and spark_partition_id (their kernels: quiver/executors/cpu/kernels/row_position.py)."""
from __future__ import annotations

from quiver.engine.analysis.functions.catalog import BIGINT, register, returns, shown_as, takes
from quiver.engine.core import types as T

for _name in ("rand", "random", "randn"):
    register(_name, 0, 1, returns(T.DoubleType()), takes(_name, BIGINT))
register("monotonically_increasing_id", 0, 0, returns(T.LongType()))
register("spark_partition_id", 0, 0, returns(T.IntegerType()), None, shown_as("SPARK_PARTITION_ID"))

del _name
