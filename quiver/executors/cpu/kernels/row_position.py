"""Functions whose value depends on where a row is: rand, randn, monotonically_increasing_id, spark_partition_id.

A task binds them to its partition before evaluating a batch: each call gets three more
literal arguments, the partition index, the row offset of the batch within the partition and
the batch's row count, so the value of a row depends only on (seed, partition, row position)
and not on how the partition was cut into batches.

- `monotonically_increasing_id()` is Spark's formula exactly: partition << 33 | row in partition.
- `spark_partition_id()` is the task's partition index.
- `rand(seed)` is uniform in [0, 1) and `randn(seed)` standard normal, from a PCG64 stream seeded
  with seed + partition index (Spark seeds its XORShiftRandom the same way). The streams differ
  from Spark's, so the values do too; they are deterministic for a seed and a partitioning.
  randn takes two uniforms per row (Box-Muller), so a batch can seek to its rows directly.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from quiver.engine.core import types as T
from quiver.engine.core.errors import QuiverError
from quiver.engine.core.expressions import Expr, Literal, ScalarFunction, transform_expr
from quiver.executors.cpu.kernels.registry import KERNELS, Value

POSITIONAL_FUNCTIONS = frozenset({"rand", "random", "randn", "monotonically_increasing_id", "spark_partition_id"})

_SEED_MASK = (1 << 64) - 1


def uses_row_position(exprs: Sequence[Expr]) -> bool:
    """Whether any of `exprs` calls a function that needs its partition and row position."""
    return any(isinstance(e, ScalarFunction) and e.name in POSITIONAL_FUNCTIONS for x in exprs for e in x.walk())


def bind_row_position(exprs: Sequence[Expr], partition: int, offset: int, rows: int) -> tuple[Expr, ...]:
    """`exprs` with each positional call told its partition, the batch's first row and its row count."""
    where = (Literal(int(partition), T.IntegerType()), Literal(int(offset), T.LongType()),
             Literal(int(rows), T.LongType()))

    def bind(e: Expr) -> Expr:
        if isinstance(e, ScalarFunction) and e.name in POSITIONAL_FUNCTIONS:
            return ScalarFunction(e.name, tuple(e.args) + where)
        return e

    return tuple(transform_expr(x, bind) for x in exprs)


def _position(args: Sequence[Value], function: str) -> tuple[list[Value], int, int, int]:
    if len(args) < 3 or not all(isinstance(a, pa.Scalar) for a in args[-3:]):
        raise QuiverError(f"{function}() can only be computed inside a projection or a filter of a task")
    partition, offset, rows = (a.as_py() for a in args[-3:])
    return list(args[:-3]), partition, offset, rows


def _seed(args: list[Value]) -> int:
    if not args:
        return 0
    value = args[0].as_py() if isinstance(args[0], pa.Scalar) else None
    return 0 if value is None else int(value)


def _generator(seed: int, partition: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64((seed + partition) & _SEED_MASK))


def uniform(seed: int, partition: int, offset: int, rows: int) -> np.ndarray:
    """Rows offset .. offset+rows of the partition's uniform stream (one 64-bit draw per value)."""
    gen = _generator(seed, partition)
    gen.bit_generator.advance(offset)
    return gen.random(rows)


def normal(seed: int, partition: int, offset: int, rows: int) -> np.ndarray:
    """Rows offset .. offset+rows of the partition's standard normal stream (Box-Muller over two draws)."""
    gen = _generator(seed, partition)
    gen.bit_generator.advance(2 * offset)
    u = gen.random(2 * rows).reshape(rows, 2) if rows else np.zeros((0, 2))
    return np.sqrt(-2.0 * np.log1p(-u[:, 0])) * np.cos(2.0 * np.pi * u[:, 1])


def _rand(args: Sequence[Value], rt: T.DataType) -> Value:
    rest, partition, offset, rows = _position(args, "rand")
    return pa.array(uniform(_seed(rest), partition, offset, rows), pa.float64())


def _randn(args: Sequence[Value], rt: T.DataType) -> Value:
    rest, partition, offset, rows = _position(args, "randn")
    return pa.array(normal(_seed(rest), partition, offset, rows), pa.float64())


def _monotonically_increasing_id(args: Sequence[Value], rt: T.DataType) -> Value:
    _, partition, offset, rows = _position(args, "monotonically_increasing_id")
    return pa.array((np.int64(partition) << np.int64(33)) + offset + np.arange(rows, dtype=np.int64), pa.int64())


def _spark_partition_id(args: Sequence[Value], rt: T.DataType) -> Value:
    _, partition, _, rows = _position(args, "spark_partition_id")
    return pa.array(np.full(rows, partition, np.int32), pa.int32())


# Registered directly, not with @kernel: these read their literal position arguments and return a
# column of the batch's length even though every argument is a literal.
KERNELS["rand"] = KERNELS["random"] = _rand
KERNELS["randn"] = _randn
KERNELS["monotonically_increasing_id"] = _monotonically_increasing_id
KERNELS["spark_partition_id"] = _spark_partition_id
