"""Narrow forms of a partial aggregate's inputs: string keys as dictionary codes, decimal sums as int64.

Acero groups by an int32 code far faster than by a string, and sums int64 several times faster
than decimal128. TPC-H Q1 groups 6M lineitems by two one-letter flags, stored with a dictionary
of three values, and sums decimal columns and products of them; what the narrow forms bought is
in the ledger of benchmarks/RESULTS.md.

Neither form holds for every batch: a dictionary may arrive with nulls in it or a column decoded,
and an int64 sum is exact only while the magnitudes it adds cannot overflow. So a partial
aggregate runs in *segments*: consecutive batches prepared alike. A batch that cannot be prepared
as its segment's first was, or would exhaust an int64 sum's budget, starts a new segment. Segments' states are
ordinary partial states, merged by the final aggregate like any other map task's.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from quiver.engine.core import types as T
from quiver.engine.core.expressions import Expr
from quiver.executors.cpu.decimal import INT64_LIMIT, FixedPoint, decimal_array, largest_magnitude
from quiver.executors.cpu.fixed_point import fixed_point_value

# Remapping a batch's dictionary goes through Python, value by value; a larger one is decoded.
MAX_CODED_DICTIONARY = 4096


class DictionaryCodes:
    """One code per distinct value across every batch's dictionary, so codes group like values."""

    def __init__(self, value_type: pa.DataType):
        self.value_type = value_type
        self._codes: dict = {}

    def codes(self, column: pa.DictionaryArray) -> pa.Array:
        """The column's indices rewritten to this object's codes (nulls stay null)."""
        lookup = np.fromiter((self._codes.setdefault(v, len(self._codes)) for v in column.dictionary.to_pylist()),
                             dtype=np.int32, count=len(column.dictionary))
        indices = column.indices
        if indices.null_count:
            lookup = np.append(lookup, np.int32(0))  # the slot null indices read before being masked
            positions = indices.fill_null(len(lookup) - 1).to_numpy(zero_copy_only=False)
            return pa.array(lookup[positions], mask=np.asarray(indices.is_null()))
        remapped = lookup[indices.to_numpy(zero_copy_only=False)]
        return pa.array(remapped)

    def values(self, codes: pa.Array) -> pa.Array:
        """Codes back to the values they stand for."""
        dictionary = pa.array(list(self._codes), type=self.value_type)
        return dictionary.take(codes)


def codable(column: pa.Array | None) -> bool:
    """Whether a key column can be grouped by remapped dictionary codes."""
    return (column is not None and pa.types.is_dictionary(column.type) and column.dictionary.null_count == 0
            and len(column.dictionary) <= MAX_CODED_DICTIONARY)


def summable_as_int64(expr: Expr, function: str, distinct: bool) -> bool:
    """Whether a partial aggregate's argument may be summed as int64: a decimal sum or average."""
    return function in ("sum", "avg") and not distinct and isinstance(expr.dtype, T.DecimalType)


class Int64SumBudget:
    """How much magnitude one int64 sum column has left before it could overflow.

    Every group's sum is at most the sum of |value| over all rows, which is at most
    sum(bound * rows) over the batches, so while that stays within int64 no group's sum can wrap.
    """

    def __init__(self):
        self.used = 0

    def cost(self, value: FixedPoint, rows: int) -> int | None:
        """What a batch's values would use of the budget; None when they do not fit in what is left."""
        cost = value.bound * rows
        if self.used + cost > INT64_LIMIT:
            cost = largest_magnitude(value.values) * rows
        return cost if self.used + cost <= INT64_LIMIT else None

    def charge(self, cost: int) -> None:
        self.used += cost


def int64_argument(expr: Expr, batch: pa.RecordBatch, memo: dict) -> FixedPoint | None:
    """A decimal argument as unscaled int64 values at its type's scale, or None where it does not fit."""
    value = fixed_point_value(expr, batch, memo)
    if value is None or not isinstance(value.values, np.ndarray):
        return None
    return value


def int64_array(value: FixedPoint) -> pa.Array:
    """The unscaled values as an int64 array, null where the decimal is null."""
    values = np.ascontiguousarray(value.values, dtype=np.int64)
    if value.valid is None:
        return pa.array(values)
    return pa.array(values, mask=~value.valid)


def decimal_sums(sums: pa.Array | pa.ChunkedArray, scale: int) -> pa.Array:
    """Int64 sums of unscaled values as the decimal128(38, scale) sums Acero gives for decimals."""
    if isinstance(sums, pa.ChunkedArray):
        sums = sums.combine_chunks()
    valid = np.asarray(sums.is_valid()) if sums.null_count else None
    values = sums.fill_null(0).to_numpy(zero_copy_only=False)
    return decimal_array(FixedPoint(values, scale, 0, valid), len(sums), pa.decimal128(38, scale))



# A batch is aggregated over runs when they are at least this many times fewer than its rows.
RUN_COMPRESSION = 2


def run_states(prepared: pa.RecordBatch, nkeys: int, steps: list) -> pa.RecordBatch | None:
    """Partial states of a prepared batch sorted by its keys (data clustered by the grouping key, as
    lineitem is by l_orderkey): each run of equal consecutive keys becomes one state row, computed
    with numpy's reduceat instead of a hash table. None where that does not apply: no keys, a null
    or non-integer key, a step other than sum or count, a sum over anything but int64 or double, too
    few repeats, or runs out of order (a key seen again later: a hash table gives fewer rows, as for
    Q1's four flag pairs scattered over 6M rows). Keys may repeat across batches; the final
    aggregate merges them.
    """
    rows = prepared.num_rows
    if nkeys == 0 or rows < 2 or any(s.function not in ("sum", "count", "count_all") for s in steps):
        return None
    keys = [prepared.column(f"k{i}") for i in range(nkeys)]
    if any(k.null_count or not (pa.types.is_integer(k.type) or pa.types.is_date(k.type)) for k in keys):
        return None
    if any(s.function == "sum" and prepared.column(s.column).type not in (pa.int64(), pa.float64()) for s in steps):
        return None
    change = np.zeros(rows - 1, dtype=bool)
    for k in keys:
        values = k.to_numpy(zero_copy_only=False)
        change |= values[1:] != values[:-1]
    starts = np.concatenate(([0], np.flatnonzero(change) + 1))
    if len(starts) * RUN_COMPRESSION > rows:
        return None
    arrays = [k.take(pa.array(starts)) for k in keys]
    if not _ordered(arrays):
        return None
    for s in steps:
        if s.function == "count_all":
            arrays.append(pa.array(np.diff(np.append(starts, rows))))
            continue
        column = prepared.column(s.column)
        valid = np.asarray(column.is_valid()).astype(np.int64) if column.null_count else None
        if s.function == "count":
            arrays.append(pa.array(np.add.reduceat(valid, starts) if valid is not None
                                   else np.diff(np.append(starts, rows))))
            continue
        sums = np.add.reduceat(column.fill_null(0).to_numpy(zero_copy_only=False) if valid is not None
                             else column.to_numpy(zero_copy_only=False), starts)
        arrays.append(pa.array(sums, mask=np.add.reduceat(valid, starts) == 0) if valid is not None
                      else pa.array(sums))
    return pa.RecordBatch.from_arrays(arrays, names=[f"k{i}" for i in range(nkeys)] + [s.output for s in steps])


def _ordered(run_keys: list[pa.Array]) -> bool:
    """Whether the runs' key tuples strictly increase, or strictly decrease, so no key repeats."""
    if len(run_keys[0]) < 2:
        return True
    ascending = np.zeros(len(run_keys[0]) - 1, dtype=bool)
    descending = ascending.copy()
    tied = np.ones_like(ascending)
    for k in run_keys:
        values = k.to_numpy(zero_copy_only=False)
        ascending |= tied & (values[1:] > values[:-1])
        descending |= tied & (values[1:] < values[:-1])
        tied &= values[1:] == values[:-1]
    return bool(ascending.all() or descending.all())
