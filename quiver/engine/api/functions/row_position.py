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
    """Uniform in [0, 1), per partition from seed + partition index (values differ from Spark's).

    >>> v = spark.range(100).select(F.rand(7).alias("r")).collect()
    >>> all(0 <= r.r < 1 for r in v)
    True
    """
    return call("rand", _seed(seed))


def randn(seed: int | None = None) -> Column:
    """Standard normal, per partition from seed + partition index (values differ from Spark's).

    >>> spark.range(3).select(F.randn(7).alias("r")).count()
    3
    """
    return call("randn", _seed(seed))


def monotonically_increasing_id() -> Column:
    """partition index << 33 | row within the partition, as Spark computes it.

    >>> spark.range(3, numPartitions=1).select(F.monotonically_increasing_id().alias("id")).collect()
    [Row(id=0), Row(id=1), Row(id=2)]
    """
    return call("monotonically_increasing_id")


def spark_partition_id() -> Column:
    """The index of the partition a row is in.

    >>> spark.range(4, numPartitions=2).select(F.spark_partition_id().alias("p")).collect()
    [Row(p=0), Row(p=0), Row(p=1), Row(p=1)]
    """
    return call("spark_partition_id")


__all__ = [
    "rand", "randn", "monotonically_increasing_id", "spark_partition_id",
]
