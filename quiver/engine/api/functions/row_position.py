"""The functions of `quiver.functions` (F) whose value depends on where a row is: rand, randn,
monotonically_increasing_id and spark_partition_id, with PySpark's signatures."""
from __future__ import annotations

import random as _random
from typing import Any

from quiver.engine.api.column import Column, literal_expr
from quiver.engine.api.functions.calls import call


def _seed(seed: Any) -> Any:
    # PySpark picks a random seed when none is given, and the column name shows it
    return literal_expr(_random.randint(-(1 << 63), (1 << 63) - 1) if seed is None else seed)


def rand(seed: int | None = None) -> Column:
    """Uniform in [0, 1), per partition from seed + partition index (values differ from Spark's)."""
    return call("rand", _seed(seed))


def randn(seed: int | None = None) -> Column:
    """Standard normal, per partition from seed + partition index (values differ from Spark's)."""
    return call("randn", _seed(seed))


def monotonically_increasing_id() -> Column:
    """partition index << 33 | row within the partition, as Spark computes it."""
    return call("monotonically_increasing_id")


def spark_partition_id() -> Column:
    """The index of the partition a row is in."""
    return call("spark_partition_id")


__all__ = [
    "rand", "randn", "monotonically_increasing_id", "spark_partition_id",
]
