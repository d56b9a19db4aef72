"""Hash aggregation on Arrow (Acero's group-by) in three modes: partial, final and complete.

A partial aggregate turns rows into *states* per group (e.g. avg -> sum and count); the
final aggregate merges states from every partition and finishes them. Functions whose
states cannot be merged (count distinct, stddev) run in complete mode after the exchange.
A partial aggregate groups its input a chunk of batches at a time, so a partition is never one
table in memory; a final aggregate groups its partition's states, which the shuffle already holds.
"""
from __future__ import annotations

import decimal
import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from quiver.engine.core import types as T
from quiver.engine.core.ansi import ansi_enabled
from quiver.engine.core.errors import QuiverError, arithmetic_overflow, numeric_value_out_of_range
from quiver.engine.core.expressions import AttributeRef
from quiver.engine.core.imports import LazyModule
from quiver.executors.cpu.aggregate_inputs import (
    DictionaryCodes,
    Int64SumBudget,
    codable,
    decimal_sums,
    int64_argument,
    int64_array,
    run_states,
    summable_as_int64,
)
from quiver.executors.cpu.batch_chunks import CHUNK_BYTES, table_chunks
from quiver.executors.cpu.decimal import decimal_average
from quiver.executors.cpu.dictionary_eval import is_dictionary_encoded
from quiver.executors.cpu.evaluate import evaluate_array
from quiver.executors.cpu.hashing import canonical_floats, hash_columns

acero = LazyModule("pyarrow.acero")  # it imports pyarrow.dataset, and that pandas

_ALL = pc.ScalarAggregateOptions(skip_nulls=False, min_count=0)
_SKIP = pc.ScalarAggregateOptions(skip_nulls=True, min_count=1)


@dataclass(frozen=True)
class _Step:
    """One Arrow group-by aggregation: input column, Arrow function, options, output column."""

    column: str | list
    function: str
    options: object | None
    output: str


def aggregate_partition(
    batches: Iterable[pa.RecordBatch], keys: tuple, calls: tuple, mode: str
) -> Iterator[pa.RecordBatch]:
    """Run one partition's aggregation; yields the result as record batches.

    A partial aggregate's input streams through in chunks, each grouped to states, so a
    partition is never held in memory as a whole.
    """
    key_attrs = [a for _, a in keys]
    nkeys = len(keys)
    if mode == "final":
        yield from finish_states(_merge_states(_final_input(batches, keys), nkeys, calls), keys, calls).to_batches()
        return
    if mode == "complete":
        grouped = _group(_prepared_reader(batches, keys, calls), nkeys, _complete_steps(calls))
        result = _finish_complete(grouped, nkeys, calls)
    else:
        for states in _partial_states(batches, keys, calls):
            yield from _with_key_names(states, key_attrs, calls, partial=True).to_batches()
        return
    if not keys and result.num_rows == 0:
        result = _empty_global_row(calls)
    yield from _with_key_names(result, key_attrs, calls, partial=False).to_batches()


def partial_state_schema(keys: tuple, calls: tuple) -> pa.Schema:
    """The columns a partial aggregate emits (keys by their attributes' names, then each call's states), which
    the final aggregate merges: what another engine computing the partial states must produce."""
    empty = next(_partial_states(iter(()), keys, calls))
    return _with_key_names(empty, [a for _, a in keys], calls, partial=True).schema


def finish_states(states: pa.Table | None, keys: tuple, calls: tuple) -> pa.Table:
    """Merged states (keys k0..., states s...) as the final aggregate's columns: one row per group,
    or the one row of a global aggregate over nothing."""
    result = _finish(states, len(keys), calls)
    if not keys and result.num_rows == 0:
        result = _empty_global_row(calls)
    return _with_key_names(result, [a for _, a in keys], calls, partial=False)


def _prepared_schema(keys: tuple, calls: tuple) -> pa.Schema:
    fields = [pa.field(f"k{i}", e.dtype.to_arrow()) for i, (e, _) in enumerate(keys)]
    if not keys:
        fields.append(pa.field("k0", pa.int8()))
    for i, c in enumerate(calls):
        if _is_tuple_distinct(c):
            fields.append(pa.field(f"a{i}_0", pa.int64()))
            continue
        for j, a in enumerate(c.function.args):
            fields.append(pa.field(f"a{i}_{j}", summed_type(c) or a.dtype.to_arrow()))
        if tracks_nan(c):
            fields.append(pa.field(f"a{i}_nan", pa.bool_()))
    return pa.schema(fields)


def summed_type(call) -> pa.DataType | None:
    """The type a sum or average adds its argument up in, where that is not the argument's own: wide enough
    that the total cannot wrap before it is checked against the result type.

    A decimal of more than 28 digits is summed in decimal256 (Acero's decimal128 sum wraps past 38 digits);
    a bigint sum under ANSI mode in decimal128, so an overflow is seen and raised (without ANSI it wraps,
    as Java's long does in Spark); an average of integers in double, as Spark's average adds them.
    """
    f = call.function
    if f.name not in ("sum", "avg") or f.distinct or len(f.args) != 1:
        return None
    t = f.args[0].dtype
    if isinstance(t, T.DecimalType) and t.precision > _DECIMAL128_SUM_DIGITS:
        return pa.decimal256(76, t.scale)
    if isinstance(t, T.IntegralType) and f.name == "avg":
        return pa.float64()
    if isinstance(t, T.LongType) and (ansi_enabled() or f.is_try):
        return pa.decimal128(38, 0)
    return None


def partial_state_types(states: pa.Table, calls: tuple) -> pa.Table:
    """Partial states in the types every task's states share (the device executor's too): a decimal sum added
    up in decimal256 goes back to Acero's decimal128(38, s). A partial sum past 38 digits is an overflow, as
    Spark's sum buffer has 38; it raises in both modes rather than be lost (Spark without ANSI gives NULL)."""
    for i, c in enumerate(calls):
        summed = summed_type(c)
        if summed is None or not pa.types.is_decimal256(summed) or c.function.is_try:
            continue  # try_sum and try_avg run on the CPU only and keep their decimal256 state
        name = f"s{i}" if c.function.name == "sum" else f"s{i}_sum"
        index = states.schema.get_field_index(name)
        column = states.column(name)
        check_sum_buffer(column)
        states = states.set_column(index, name, column.cast(pa.decimal128(38, summed.scale)))
    return states


def check_sum_buffer(column: pa.Array | pa.ChunkedArray) -> None:
    """Raise Spark's overflow where a decimal partial sum needs more than the 38 digits Spark's sum buffer
    holds (a decimal256 sum, or a decimal128 one another engine added up in 128 bits, can hold more)."""
    wide = pa.decimal256(76, column.type.scale)
    bound = pa.scalar(decimal.Decimal(10) ** (38 - wide.scale), wide)
    if pc.any(pc.greater_equal(pc.abs(column.cast(wide)), bound)).as_py():
        raise arithmetic_overflow("try_sum", "Overflow in sum of decimals")


# A decimal128 sum of values of at most this many digits has 10 digits of headroom: 10^10 rows cannot wrap it.
_DECIMAL128_SUM_DIGITS = 28


def checked_sum(total: pa.Array, result_type: T.DataType, overflow_is_null: bool = False) -> pa.Array:
    """A sum's exact total as its result type, where the total may not fit it: a decimal total with more
    digits than the type is NULL, as in Spark without ANSI; under ANSI it raises NUMERIC_VALUE_OUT_OF_RANGE and
    a bigint total beyond a bigint ARITHMETIC_OVERFLOW, as Spark 4's final sum does. `overflow_is_null`
    (try_sum) gives NULL for both, in either mode."""
    out = result_type.to_arrow()
    if total.type == out or not (pa.types.is_decimal(total.type) and
                                 (pa.types.is_decimal(out) or pa.types.is_integer(out))):
        return total
    if pa.types.is_integer(out):  # a bigint sum kept exact under ANSI (summed_type)
        limit = pa.scalar(decimal.Decimal((1 << 63) - 1), total.type)
        beyond = pc.fill_null(pc.greater(pc.abs(total), limit), False)
        if pc.any(beyond).as_py():
            if not overflow_is_null:
                raise arithmetic_overflow("try_add")
            total = pc.if_else(beyond, pa.scalar(None, total.type), total)
        return total.cast(out)
    bound = pa.scalar(decimal.Decimal(10) ** (out.precision - out.scale), pa.decimal256(76, total.type.scale))
    beyond = pc.greater_equal(pc.abs(total.cast(pa.decimal256(76, total.type.scale))), bound)
    if pc.any(beyond).as_py():
        if ansi_enabled() and not overflow_is_null:
            raise numeric_value_out_of_range(total.filter(beyond)[0].as_py(), out.precision, out.scale)
        total = pc.if_else(beyond, pa.scalar(None, total.type), total)
    return total.cast(out, safe=False)


def _is_tuple_distinct(call) -> bool:
    return call.function.distinct and len(call.function.args) > 1


def tracks_nan(call) -> bool:
    """Spark ranks NaN above every number, so max over floats needs to know whether a NaN was seen
    (Arrow's max skips NaN unless every value is NaN)."""
    f = call.function
    return f.name == "max" and len(f.args) == 1 and isinstance(f.args[0].dtype, (T.DoubleType, T.FloatType))


def _nan_wins(value, seen_nan) -> pa.Array:
    """The max where no NaN was seen, NaN where one was."""
    if isinstance(value, pa.ChunkedArray):
        value = value.combine_chunks()
    if isinstance(seen_nan, pa.ChunkedArray):
        seen_nan = seen_nan.combine_chunks()
    return pc.if_else(pc.fill_null(seen_nan, False), pa.scalar(float("nan"), value.type), value)


def _tuple_ids(columns: list[pa.Array]) -> pa.Array:
    """One 64-bit hash per tuple of values, null where any value is null (count(DISTINCT a, b) skips those).

    Counting distinct hashes instead of distinct tuples is exact unless two tuples collide
    in 64 bits, which for a billion distinct tuples has odds of about 3 in 100.
    """
    hashed = hash_columns(columns).view(np.int64)
    valid = np.ones(len(hashed), dtype=bool)
    for c in columns:
        if c.null_count:
            valid &= c.is_valid().to_numpy(zero_copy_only=False)
    return pa.array(hashed, mask=~valid)


def _prepare(batch: pa.RecordBatch, keys: tuple, calls: tuple, schema: pa.Schema) -> pa.RecordBatch:
    """Evaluate grouping keys and aggregate arguments into a narrow batch (k*, a*_*).

    A global aggregate groups by one constant key, so grouped and global aggregation share one path.
    """
    memo: dict = {}
    arrays = [canonical_floats(evaluate_array(e, batch, memo)) for e, _ in keys]
    if not keys:
        arrays.append(_constant_key(batch.num_rows))
    for c in calls:
        arrays.extend(_argument_arrays(c, batch, memo))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _constant_key(rows: int) -> pa.Array:
    """k0 of a global aggregate: every row in the one group 0."""
    return pa.nulls(rows, pa.int8()).fill_null(0)


def _argument_arrays(call, batch: pa.RecordBatch, memo: dict) -> list[pa.Array]:
    """One call's prepared input columns (a*_*): its arguments, a tuple's hash for count(DISTINCT a, b),
    and a seen-NaN flag where max needs one."""
    args = [evaluate_array(a, batch, memo) for a in call.function.args]
    summed = summed_type(call)
    if summed is not None:
        args = [pc.cast(a, summed, safe=False) for a in args]
    arrays = [_tuple_ids(args)] if _is_tuple_distinct(call) else args
    if tracks_nan(call):
        arrays.append(pc.is_nan(args[0]))
    return arrays


def _prepared_reader(batches: Iterable[pa.RecordBatch], keys: tuple, calls: tuple) -> pa.RecordBatchReader:
    schema = _prepared_schema(keys, calls)
    stream = (_prepare(b, keys, calls, schema) for b in batches if b.num_rows)
    return pa.RecordBatchReader.from_batches(schema, stream)


def _partial_states(batches: Iterable[pa.RecordBatch], keys: tuple, calls: tuple) -> Iterator[pa.Table]:
    """Partial states, one table per segment of batches prepared alike (see aggregate_inputs).

    Input batches may hold dictionary-encoded strings; whatever is evaluated is decoded first.
    """
    steps = _partial_steps(calls)
    rows = (b for b in batches if b.num_rows)
    pending = next(rows, None)
    if pending is None:
        yield partial_state_types(_group(_prepared_schema(keys, calls).empty_table(), len(keys), steps), calls)
        return
    while pending is not None:
        segment = _Segment(keys, calls, pending)
        first, pending = segment.prepare(pending), None
        # Keys in runs (clustered data) are aggregated run by run, without a hash table, while they last.
        runs = run_states(first, len(keys), steps)

        def stream(segment: _Segment = segment, first: pa.RecordBatch = runs or first,
                   in_runs: bool = runs is not None) -> Iterator[pa.RecordBatch]:
            nonlocal pending
            yield first
            for batch in rows:
                prepared = segment.prepare(batch)
                if prepared is not None and in_runs:
                    prepared = run_states(prepared, len(keys), steps)
                if prepared is None:
                    pending = batch
                    return
                yield prepared

        if runs is not None:
            # Run states come out chunk by chunk too: a segment can span the whole partition.
            for chunk in table_chunks(stream(), runs.schema, max_bytes=CHUNK_BYTES):
                yield partial_state_types(segment.restore(chunk), calls)
            continue
        # States per chunk of the segment: a group may get a state row in several, which the final
        # aggregate merges as it merges those of other partitions.
        for chunk in table_chunks(stream(), segment.schema, max_bytes=CHUNK_BYTES):
            yield partial_state_types(segment.restore(_group(chunk, len(keys), steps)), calls)


class _Segment:
    """Consecutive input batches prepared in one layout: string keys grouped by dictionary code where
    they arrive encoded, decimal sums summed as int64 while their budget lasts."""

    def __init__(self, keys: tuple, calls: tuple, first: pa.RecordBatch):
        self.keys, self.calls = keys, calls
        self.budgets = [Int64SumBudget() if len(c.function.args) == 1 and summable_as_int64(
            c.function.args[0], c.function.name, c.function.distinct) else None for c in calls]
        read = {a.internal_name for c in calls for arg in c.function.args for a in arg.walk()
                if isinstance(a, AttributeRef)}
        read |= {a.internal_name for e, _ in keys if not isinstance(e, AttributeRef) for a in e.walk()
                 if isinstance(a, AttributeRef)}
        # A key read only as itself stays encoded and is grouped by code; anything else is decoded.
        self.encoded = {e.internal_name for e, _ in keys if codable(_key_column(e, first))} - read
        self.codes = [DictionaryCodes(e.dtype.to_arrow()) if isinstance(e, AttributeRef)
                      and e.internal_name in self.encoded else None for e, _ in keys]
        self._first_memo: tuple[pa.RecordBatch, dict] | None = (first, {})
        self.schema = self._narrowed_schema(first)

    def _narrowed_schema(self, first: pa.RecordBatch) -> pa.Schema:
        """The prepared schema with coded keys as int32 and int64-summed arguments as int64; an
        argument the first batch cannot take the int64 form in keeps its decimal."""
        decoded, memo = self._decoded(first), self._first_memo[1]
        for i, c in enumerate(self.calls):
            if self.budgets[i] is not None:
                value = int64_argument(c.function.args[0], decoded, memo)
                if value is None or self.budgets[i].cost(value, first.num_rows) is None:
                    self.budgets[i] = None
        schema = _prepared_schema(self.keys, self.calls)
        for i, codes in enumerate(self.codes):
            if codes is not None:
                schema = schema.set(i, pa.field(f"k{i}", pa.int32()))
        for i, budget in enumerate(self.budgets):
            if budget is not None:
                schema = schema.set(schema.get_field_index(f"a{i}_0"), pa.field(f"a{i}_0", pa.int64()))
        return schema

    def _decoded(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        if not is_dictionary_encoded(batch):
            return batch
        arrays = [c.dictionary_decode() if pa.types.is_dictionary(c.type) and n not in self.encoded else c
                  for n, c in zip(batch.schema.names, batch.columns)]
        return pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)

    def prepare(self, batch: pa.RecordBatch) -> pa.RecordBatch | None:
        """`batch` as the aggregate's narrow input in this segment's layout; None when it does not fit it."""
        decoded = self._decoded(batch)
        memo = self._first_memo[1] if self._first_memo is not None and batch is self._first_memo[0] else {}
        self._first_memo = None
        arrays = []
        for (e, _), codes in zip(self.keys, self.codes):
            if codes is None:
                arrays.append(canonical_floats(evaluate_array(e, decoded, memo)))
                continue
            column = _key_column(e, batch)
            if column is None or not codable(column):
                return None
            arrays.append(codes.codes(column))
        if not self.keys:
            arrays.append(_constant_key(batch.num_rows))
        costs = []
        for c, budget in zip(self.calls, self.budgets):
            if budget is not None:
                value = int64_argument(c.function.args[0], decoded, memo)
                cost = None if value is None else budget.cost(value, batch.num_rows)
                if cost is None:
                    return None
                costs.append((budget, cost))
                arrays.append(int64_array(value))
                continue
            arrays.extend(_argument_arrays(c, decoded, memo))
        for budget, cost in costs:
            budget.charge(cost)
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def restore(self, states: pa.Table) -> pa.Table:
        """States with coded keys turned back into values and int64 sums into Acero's decimal sums."""
        for i, codes in enumerate(self.codes):
            if codes is not None:
                column = states.column(f"k{i}").combine_chunks()
                states = states.set_column(i, f"k{i}", codes.values(column))
        for i, budget in enumerate(self.budgets):
            if budget is None:
                continue
            name = f"s{i}" if self.calls[i].function.name == "sum" else f"s{i}_sum"
            scale = self.calls[i].function.args[0].dtype.scale
            index = states.schema.get_field_index(name)
            states = states.set_column(index, name, decimal_sums(states.column(name), scale))
        return states


def _key_column(expr, batch: pa.RecordBatch) -> pa.Array | None:
    """The batch's own column for a key that is a plain column reference, else None."""
    if not isinstance(expr, AttributeRef):
        return None
    index = batch.schema.get_field_index(expr.internal_name)
    return batch.column(index) if index >= 0 else None


def _final_input(batches: Iterable[pa.RecordBatch], keys: tuple) -> pa.Table | None:
    """Partial states from every map task, key columns renamed back to k*; None when there are none.

    They are one table (the blocks referenced, not copied), which Acero groups on this thread
    (see batch_chunks)."""
    names = {a.internal_name: f"k{i}" for i, (_, a) in enumerate(keys)}
    it = iter(b for b in batches if b.num_rows)
    first = next(it, None)
    if first is None:
        return None

    def renamed(b: pa.RecordBatch) -> pa.RecordBatch:
        return b.rename_columns([names.get(n, n) for n in b.schema.names])

    head = renamed(first)
    return pa.Table.from_batches(itertools.chain([head], (renamed(b) for b in it)), schema=head.schema)


def _group(source: pa.Table | pa.RecordBatchReader, nkeys: int, steps: list[_Step]) -> pa.Table:
    """One Acero aggregate node over `source`, grouped by k0..k{n-1} (k0 alone for a global aggregate)."""
    key_names = [f"k{i}" for i in range(max(nkeys, 1))]
    aggs = [(s.column, "hash_" + s.function, s.options, s.output) for s in steps]
    if isinstance(source, pa.Table):
        node = acero.Declaration("table_source", acero.TableSourceNodeOptions(source))
    else:
        node = acero.Declaration("record_batch_reader_source", acero.RecordBatchReaderSourceNodeOptions(source))
    plan = acero.Declaration.from_sequence([node, acero.Declaration("aggregate",
                                                                    acero.AggregateNodeOptions(aggs, keys=key_names))])
    out = plan.to_table(use_threads=False)
    return out.select(key_names[:nkeys] + [s.output for s in steps])


def _partial_steps(calls: tuple) -> list[_Step]:
    steps: list[_Step] = []
    for i, c in enumerate(calls):
        f = c.function
        name = f.name
        arg = f"a{i}_0"
        if name == "count":
            if not f.args:
                steps.append(_Step([], "count_all", None, f"s{i}"))
            elif len(f.args) == 1:
                steps.append(_Step(arg, "count", pc.CountOptions("only_valid"), f"s{i}"))
            else:
                raise QuiverError("count() of several columns is not supported; count a struct or concat them")
        elif name == "sum":
            steps.append(_Step(arg, "sum", _SKIP, f"s{i}"))
        elif name == "avg":
            steps.append(_Step(arg, "sum", _SKIP, f"s{i}_sum"))
            steps.append(_Step(arg, "count", pc.CountOptions("only_valid"), f"s{i}_count"))
        elif name in ("min", "max"):
            steps.append(_Step(arg, name, _SKIP, f"s{i}"))
            if tracks_nan(c):
                steps.append(_Step(f"a{i}_nan", "any", _SKIP, f"s{i}_nan"))
        elif name in ("first", "last", "any_value"):
            fn = "last" if name == "last" else "first"
            steps.append(_Step(arg, fn, _SKIP if f.ignore_nulls else _ALL, f"s{i}"))
        elif name == "collect_list":
            steps.append(_Step(arg, "list", None, f"s{i}"))
        elif name in ("bool_and", "bool_or"):
            steps.append(_Step(arg, "all" if name == "bool_and" else "any", _SKIP, f"s{i}"))
        else:
            raise QuiverError(f"aggregate {name} cannot run in partial mode")
    return steps


def _merge_steps(calls: tuple) -> list[_Step]:
    steps: list[_Step] = []
    for i, c in enumerate(calls):
        name = c.function.name
        if name in ("count", "sum"):
            steps.append(_Step(f"s{i}", "sum", _SKIP, f"s{i}"))
        elif name == "avg":
            steps.append(_Step(f"s{i}_sum", "sum", _SKIP, f"s{i}_sum"))
            steps.append(_Step(f"s{i}_count", "sum", _SKIP, f"s{i}_count"))
        elif name in ("min", "max"):
            steps.append(_Step(f"s{i}", name, _SKIP, f"s{i}"))
            if tracks_nan(c):
                steps.append(_Step(f"s{i}_nan", "any", _SKIP, f"s{i}_nan"))
        elif name in ("first", "last", "any_value"):
            fn = "last" if name == "last" else "first"
            steps.append(_Step(f"s{i}", fn, _SKIP if c.function.ignore_nulls else _ALL, f"s{i}"))
        elif name in ("bool_and", "bool_or"):
            steps.append(_Step(f"s{i}", "all" if name == "bool_and" else "any", _SKIP, f"s{i}"))
    return steps


def _merge_states(states: pa.Table | None, nkeys: int, calls: tuple) -> pa.Table | None:
    """Merge state rows of the same group (from several partitions)."""
    if states is None:
        return None
    if nkeys == 0:
        states = _with_constant_key(states)
    steps = _merge_steps(calls)
    for i, c in enumerate(calls):
        summed = summed_type(c)
        if summed is not None and pa.types.is_decimal256(summed):  # the partial sums may add up past 38 digits
            name = f"s{i}" if c.function.name == "sum" else f"s{i}_sum"
            index = states.schema.get_field_index(name)
            states = states.set_column(index, name, states.column(name).cast(summed))
    lists = [i for i, c in enumerate(calls) if c.function.name == "collect_list"]
    if lists:
        # Acero cannot collect list values: collect each group's state row numbers, then gather their lists
        states = states.append_column("__row", pa.array(np.arange(states.num_rows, dtype=np.int64)))
        steps.append(_Step("__row", "list", None, "__rows"))
    merged = _group(states, nkeys, steps)
    if lists:
        rows = merged.column("__rows").combine_chunks()
        lengths = pc.list_value_length(rows).to_numpy(zero_copy_only=False)
        offsets = pa.array(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32))
        taken = pc.list_flatten(rows)
        for i in lists:
            nested = pa.ListArray.from_arrays(offsets, states.column(f"s{i}").combine_chunks().take(taken))
            merged = merged.append_column(f"s{i}", _flatten_lists(pa.chunked_array([nested])))
        merged = merged.drop_columns(["__rows"])
    return merged


def _flatten_lists(col: pa.ChunkedArray) -> pa.Array:
    """list<list<T>> -> list<T>, concatenating each row's lists in order."""
    arr = col.combine_chunks()
    inner = arr.flatten()
    outer_offsets = arr.offsets.to_numpy()
    inner_offsets = inner.offsets.to_numpy()
    new_offsets = inner_offsets[outer_offsets]
    return pa.ListArray.from_arrays(pa.array(new_offsets.astype(np.int32)), inner.flatten())


def drop_null_elements(arr: pa.Array) -> pa.Array:
    """Remove null elements inside each list (collect_list and collect_set skip nulls)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    values = arr.flatten()
    if values.null_count == 0:
        return arr
    parents = pc.list_parent_indices(arr).to_numpy()
    valid = values.is_valid().to_numpy(zero_copy_only=False)
    counts = np.bincount(parents[valid], minlength=len(arr))
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), values.filter(pa.array(valid)))


def _finish(states: pa.Table | None, nkeys: int, calls: tuple) -> pa.Table:
    """Turn merged states into final values of each aggregate's result type."""
    if states is None:
        return _empty_result(nkeys, calls)
    cols = [states.column(f"k{i}") for i in range(nkeys)]
    names = [f"k{i}" for i in range(nkeys)]
    for i, c in enumerate(calls):
        out_type = c.result.dtype.to_arrow()
        name = c.function.name
        if name == "avg":
            s, n = states.column(f"s{i}_sum"), states.column(f"s{i}_count")
            value = _divide_avg(s, n, c.result.dtype, c.function.is_try)
        elif name == "count":
            value = pc.fill_null(states.column(f"s{i}"), 0)
        elif name == "collect_list":
            value = drop_null_elements(states.column(f"s{i}"))
        elif name == "sum":
            value = checked_sum(states.column(f"s{i}").combine_chunks(), c.result.dtype, c.function.is_try)
        else:
            value = states.column(f"s{i}")
            if tracks_nan(c):
                value = _nan_wins(value, states.column(f"s{i}_nan"))
        cols.append(_cast(value, out_type))
        names.append(f"r{i}")
    return pa.Table.from_arrays(cols, names=names)


def _divide_avg(s, n, result_type: T.DataType, overflow_is_null: bool = False):
    """Sum over count, null for no values; exact with HALF_UP rounding for decimals, as Spark; a decimal
    average beyond its type raises under ANSI unless `overflow_is_null` (try_avg)."""
    if isinstance(s, pa.ChunkedArray):
        s, n = s.combine_chunks(), n.combine_chunks()
    if isinstance(result_type, T.DecimalType) and pa.types.is_decimal(s.type):
        return decimal_average(s, n, result_type.to_arrow(), overflow_is_null)
    nz = pc.if_else(pc.equal(n, 0), pa.scalar(None, pa.int64()), n)
    return pc.divide(pc.cast(s, pa.float64()), pc.cast(nz, pa.float64()))


def _cast(value, out_type: pa.DataType):
    if isinstance(value, pa.ChunkedArray):
        value = value.combine_chunks()
    if value.type == out_type:
        return value
    if pa.types.is_decimal(out_type) and pa.types.is_floating(value.type):
        return pc.cast(pc.round(value, out_type.scale), out_type, safe=False)
    return pc.cast(value, out_type, safe=False)


def _complete_steps(calls: tuple) -> list[_Step]:
    steps: list[_Step] = []
    for i, c in enumerate(calls):
        f = c.function
        name = f.name
        arg = f"a{i}_0"
        if f.distinct and name in ("count", "count_distinct"):
            steps.append(_Step(arg, "count_distinct", pc.CountOptions("only_valid"), f"s{i}"))
        elif f.distinct and name in ("sum", "avg"):
            steps.append(_Step(arg, "distinct", pc.CountOptions("only_valid"), f"s{i}"))
        elif f.distinct and name not in ("min", "max"):
            raise QuiverError(f"{name}(DISTINCT ...) is not supported; deduplicate with distinct() first")
        elif name in ("stddev", "stddev_samp", "stddev_pop", "variance", "var_samp", "var_pop"):
            fn = "stddev" if name.startswith("stddev") else "variance"
            ddof = 0 if name.endswith("_pop") else 1
            steps.append(_Step(arg, fn, pc.VarianceOptions(ddof=ddof, min_count=ddof + 1), f"s{i}"))
        elif name == "collect_set":
            steps.append(_Step(arg, "distinct", pc.CountOptions("only_valid"), f"s{i}"))
        elif name == "product":
            steps.append(_Step(arg, "product", _SKIP, f"s{i}"))
        elif name == "median":
            steps.append(_Step(arg, "list", None, f"s{i}"))
        else:
            part = _partial_steps((c,))
            for s in part:
                column = s.column if s.column == [] else s.column.replace("a0_", f"a{i}_", 1)
                steps.append(_Step(column, s.function, s.options, s.output.replace("s0", f"s{i}", 1)))
    return steps


def _finish_complete(table: pa.Table, nkeys: int, calls: tuple) -> pa.Table:
    cols = [table.column(f"k{i}") for i in range(nkeys)]
    names = [f"k{i}" for i in range(nkeys)]
    for i, c in enumerate(calls):
        name = c.function.name
        out_type = c.result.dtype.to_arrow()
        if c.function.distinct and name in ("sum", "avg"):
            value = _distinct_list_total(table.column(f"s{i}"), name == "avg")
        elif name == "avg":
            value = _divide_avg(table.column(f"s{i}_sum"), table.column(f"s{i}_count"), c.result.dtype,
                                c.function.is_try)
        elif name in ("count", "count_distinct"):
            value = pc.fill_null(table.column(f"s{i}"), 0)
        elif name in ("collect_list", "collect_set"):
            value = drop_null_elements(table.column(f"s{i}"))
        elif name == "median":
            value = exact_medians(table.column(f"s{i}"))
        elif name == "sum":
            value = checked_sum(table.column(f"s{i}").combine_chunks(), c.result.dtype, c.function.is_try)
        else:
            value = table.column(f"s{i}")
            if tracks_nan(c):
                value = _nan_wins(value, table.column(f"s{i}_nan"))
        cols.append(_cast(value, out_type))
        names.append(f"r{i}")
    return pa.Table.from_arrays(cols, names=names)


def exact_medians(lists: pa.ChunkedArray | pa.Array) -> pa.Array:
    """Spark's median, percentile(x, 0.5), of each group's list of values: the middle of the sorted non-null
    values, or 0.5 * lower + 0.5 * upper of the two middle ones (as Spark interpolates), NaN sorting last;
    null for a group with none. Exact, as Spark's is: Arrow's approximate_median is a t-digest estimate."""
    arr = drop_null_elements(lists.combine_chunks() if isinstance(lists, pa.ChunkedArray) else lists)
    values = arr.flatten().cast(pa.float64()).to_numpy(zero_copy_only=False)
    parents = pc.list_parent_indices(arr).to_numpy()
    counts = np.bincount(parents, minlength=len(arr))
    ordered = values[np.lexsort((values, parents))]
    starts = np.cumsum(counts) - counts
    present = counts > 0
    lower = np.where(present, starts + (counts - 1) // 2, 0)
    upper = np.where(present, starts + counts // 2, 0)
    low, high = (ordered[lower], ordered[upper]) if len(ordered) else (np.zeros(len(arr)), np.zeros(len(arr)))
    medians = np.where(lower == upper, low, 0.5 * low + 0.5 * high)
    return pa.array(medians, pa.float64(), mask=~present)


def _distinct_list_total(lists: pa.ChunkedArray, average: bool) -> pa.Array:
    """Sum (or mean) of each group's list of distinct values; null for a group with none."""
    arr = lists.combine_chunks()
    values = arr.flatten()
    parents = pc.list_parent_indices(arr).to_numpy()
    integral = pa.types.is_integer(values.type) and not average
    raw = values.cast(pa.int64() if integral else pa.float64()).to_numpy(zero_copy_only=False)
    totals = np.zeros(len(arr), dtype=raw.dtype)
    np.add.at(totals, parents, raw)
    counts = np.bincount(parents, minlength=len(arr))
    if average:
        with np.errstate(divide="ignore", invalid="ignore"):
            totals = totals / np.maximum(counts, 1)
    return pa.array(totals, mask=counts == 0)


def _empty_result(nkeys: int, calls: tuple) -> pa.Table:
    return pa.table({f"r{i}": pa.array([], c.result.dtype.to_arrow()) for i, c in enumerate(calls)})


def _empty_global_row(calls: tuple) -> pa.Table:
    """A global aggregate over no rows still returns one row: count 0, everything else null."""
    cols = {}
    for i, c in enumerate(calls):
        t = c.result.dtype.to_arrow()
        if c.function.name in ("count", "count_distinct"):
            cols[f"r{i}"] = pa.array([0], t)
        elif c.function.name in ("collect_list", "collect_set"):
            cols[f"r{i}"] = pa.array([[]], t)
        else:
            cols[f"r{i}"] = pa.nulls(1, t)
    return pa.table(cols)


def _with_constant_key(states: pa.Table) -> pa.Table:
    """Global states get the constant group key k0 back (the partial output dropped it)."""
    return states.append_column(pa.field("k0", pa.int8()), _constant_key(states.num_rows))


def _with_key_names(table: pa.Table, key_attrs: list[AttributeRef], calls: tuple, partial: bool) -> pa.Table:
    """Name key columns by their attributes; final values by their result attributes."""
    names = []
    for n in table.column_names:
        if n.startswith("k") and n[1:].isdigit():
            names.append(key_attrs[int(n[1:])].internal_name)
        elif not partial and n.startswith("r") and n[1:].isdigit():
            names.append(calls[int(n[1:])].result.internal_name)
        else:
            names.append(n)
    return table.rename_columns(names)
