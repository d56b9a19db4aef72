"""Hash aggregation on Arrow (Acero's group-by) in three modes: partial, final and complete.

A partial aggregate turns rows into *states* per group (e.g. avg -> sum and count); the
final aggregate merges states from every partition and finishes them. Functions whose
states cannot be merged (count distinct, stddev) run in complete mode after the exchange.
Input is consumed in chunks, so a partition never has to be one table in memory.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from quiver.engine import types as T
from quiver.engine.errors import QuiverError
from quiver.engine.expressions import AttributeRef, Expr
from quiver.executors.evaluate import evaluate_array

CHUNK_ROWS = 1 << 20

_ALL = pc.ScalarAggregateOptions(skip_nulls=False, min_count=0)
_SKIP = pc.ScalarAggregateOptions(skip_nulls=True, min_count=1)


@dataclass(frozen=True)
class _Step:
    """One Arrow group-by aggregation: input column, Arrow function, options, output column."""

    column: str | list
    function: str
    options: object | None
    output: str


def _state_names(i: int, call) -> list[str]:
    name = call.function.name
    if name == "avg":
        return [f"s{i}_sum", f"s{i}_count"]
    return [f"s{i}"]


def aggregate_partition(
    batches: Iterable[pa.RecordBatch], keys: tuple, calls: tuple, mode: str
) -> Iterator[pa.RecordBatch]:
    """Run one partition's aggregation; yields the result as record batches."""
    key_attrs = [a for _, a in keys]
    if mode == "final":
        merged = _merge_states(_concat(_rename_final_input(b, keys, calls) for b in batches), len(keys), calls)
        result = _finish(merged, len(keys), calls)
    elif mode == "complete":
        prepared = [_prepare(b, keys, calls) for b in batches if b.num_rows]
        table = pa.concat_tables(prepared) if prepared else _prepared_schema(keys, calls).empty_table()
        result = _finish_complete(_group(table, len(keys), _complete_steps(calls)), len(keys), calls)
    else:
        yield from _with_key_names(_partial_states(batches, keys, calls), key_attrs, calls, partial=True).to_batches()
        return
    if not keys and result.num_rows == 0:
        result = _empty_global_row(calls)
    yield from _with_key_names(result, key_attrs, calls, partial=False).to_batches()


def _partial_states(batches: Iterable[pa.RecordBatch], keys: tuple, calls: tuple) -> pa.Table:
    """States per group of one partition, aggregating chunk by chunk to bound memory."""
    partials: list[pa.Table] = []
    pending: list[pa.Table] = []
    pending_rows = 0
    for b in batches:
        if b.num_rows == 0:
            continue
        pending.append(_prepare(b, keys, calls))
        pending_rows += b.num_rows
        if pending_rows >= CHUNK_ROWS:
            partials.append(_group(pa.concat_tables(pending), len(keys), _partial_steps(calls)))
            pending, pending_rows = [], 0
    if pending or not partials:
        table = pa.concat_tables(pending) if pending else _prepared_schema(keys, calls).empty_table()
        partials.append(_group(table, len(keys), _partial_steps(calls)))
    if len(partials) == 1:
        return partials[0]
    return _merge_states(pa.concat_tables(partials), len(keys), calls)


def _concat(tables: Iterable[pa.Table]) -> pa.Table | None:
    tables = [t for t in tables]
    if not tables:
        return None
    return pa.concat_tables(tables)


def _prepared_schema(keys: tuple, calls: tuple) -> pa.Schema:
    fields = [pa.field(f"k{i}", e.dtype.to_arrow()) for i, (e, _) in enumerate(keys)]
    for i, c in enumerate(calls):
        for j, a in enumerate(c.function.args):
            fields.append(pa.field(f"a{i}_{j}", a.dtype.to_arrow()))
    return pa.schema(fields)


def _prepare(batch: pa.RecordBatch, keys: tuple, calls: tuple) -> pa.Table:
    """Evaluate grouping keys and aggregate arguments into a narrow table (k*, a*_*)."""
    arrays, names = [], []
    for i, (e, _) in enumerate(keys):
        arrays.append(evaluate_array(e, batch))
        names.append(f"k{i}")
    for i, c in enumerate(calls):
        for j, a in enumerate(c.function.args):
            arrays.append(evaluate_array(a, batch))
            names.append(f"a{i}_{j}")
    if not arrays:
        arrays, names = [pa.nulls(batch.num_rows, pa.int8())], ["_rows"]
    return pa.Table.from_arrays(arrays, names=names)


def _group(table: pa.Table, nkeys: int, steps: list[_Step]) -> pa.Table:
    key_names = [f"k{i}" for i in range(nkeys)]
    specs = [(s.column, s.function, s.options) if s.options is not None else (s.column, s.function) for s in steps]
    out = table.group_by(key_names, use_threads=False).aggregate(specs)
    produced = {}
    for s in steps:
        col = s.column if isinstance(s.column, str) else None
        arrow_name = f"{col}_{s.function}" if col else s.function
        produced[s.output] = out.column(arrow_name)
    cols = [out.column(k) for k in key_names] + list(produced.values())
    return pa.Table.from_arrays(cols, names=key_names + list(produced))


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
        elif name in ("first", "last", "any_value"):
            fn = "last" if name == "last" else "first"
            steps.append(_Step(f"s{i}", fn, _SKIP if c.function.ignore_nulls else _ALL, f"s{i}"))
        elif name == "collect_list":
            steps.append(_Step(f"s{i}", "list", None, f"s{i}"))
        elif name in ("bool_and", "bool_or"):
            steps.append(_Step(f"s{i}", "all" if name == "bool_and" else "any", _SKIP, f"s{i}"))
    return steps


def _merge_states(states: pa.Table | None, nkeys: int, calls: tuple) -> pa.Table | None:
    """Merge state rows of the same group (from several partitions or chunks)."""
    if states is None:
        return None
    merged = _group(states, nkeys, _merge_steps(calls))
    for i, c in enumerate(calls):
        if c.function.name == "collect_list":
            merged = merged.set_column(merged.schema.get_field_index(f"s{i}"), f"s{i}", _flatten_lists(merged.column(f"s{i}")))
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
            value = _divide_avg(s, n, c.result.dtype)
        elif name == "count":
            value = pc.fill_null(states.column(f"s{i}"), 0)
        elif name == "collect_list":
            value = drop_null_elements(states.column(f"s{i}"))
        else:
            value = states.column(f"s{i}")
        cols.append(_cast(value, out_type))
        names.append(f"r{i}")
    return pa.Table.from_arrays(cols, names=names)


def _divide_avg(s, n, result_type: T.DataType):
    nz = pc.if_else(pc.equal(n, 0), pa.scalar(None, pa.int64()), n)
    if isinstance(result_type, T.DecimalType):
        return pc.divide(pc.cast(s, pa.float64()), pc.cast(nz, pa.float64()))
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
            if len(f.args) != 1:
                raise QuiverError("count(DISTINCT ...) of several columns is not supported yet; count a concatenation")
            steps.append(_Step(arg, "count_distinct", pc.CountOptions("only_valid"), f"s{i}"))
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
            steps.append(_Step(arg, "approximate_median", _SKIP, f"s{i}"))
        else:
            part = _partial_steps((c,))
            for s in part:
                steps.append(_Step(s.column if s.column == [] else arg, s.function, s.options,
                                   s.output.replace("s0", f"s{i}", 1)))
    return steps


def _finish_complete(table: pa.Table, nkeys: int, calls: tuple) -> pa.Table:
    cols = [table.column(f"k{i}") for i in range(nkeys)]
    names = [f"k{i}" for i in range(nkeys)]
    for i, c in enumerate(calls):
        name = c.function.name
        out_type = c.result.dtype.to_arrow()
        if name == "avg":
            value = _divide_avg(table.column(f"s{i}_sum"), table.column(f"s{i}_count"), c.result.dtype)
        elif name in ("count", "count_distinct"):
            value = pc.fill_null(table.column(f"s{i}"), 0)
        elif name in ("collect_list", "collect_set"):
            value = drop_null_elements(table.column(f"s{i}"))
        else:
            value = table.column(f"s{i}")
        cols.append(_cast(value, out_type))
        names.append(f"r{i}")
    return pa.Table.from_arrays(cols, names=names)


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


def _rename_final_input(batch: pa.RecordBatch, keys: tuple, calls: tuple) -> pa.Table:
    """Partial output columns (named by key attribute and state) back to the k*/s* layout."""
    table = pa.Table.from_batches([batch])
    names = []
    for name in table.column_names:
        names.append(name)
    key_names = {a.internal_name: f"k{i}" for i, (_, a) in enumerate(keys)}
    return table.rename_columns([key_names.get(n, n) for n in names])


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
