"""Joins on Arrow tables: match row indices on narrow key tables, then gather the payload once.

Matching runs Acero's hash join over (keys, row id) only; every join type, and any
non-equality residual condition, is then assembled from the matched index pairs. Null
keys never match (SQL semantics), which Acero's hash join already guarantees; float keys
are canonicalised first, so NaN matches NaN and -0.0 matches 0.0 as in Spark.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from quiver.engine.core import types as T
from quiver.engine.core.expressions import AttributeRef, Expr
from quiver.engine.core.imports import LazyModule
from quiver.executors.cpu.batch_chunks import CHUNK_ROWS, table_chunks
from quiver.executors.cpu.evaluate import evaluate, evaluate_array
from quiver.executors.cpu.hashing import canonical_floats
from quiver.executors.cpu.join_index import KeyIndex, indexable, take_rows

acero = LazyModule("pyarrow.acero")  # it imports pyarrow.dataset, and that pandas

PAIR_CHUNK = 1 << 20


def join_tables(
    left: pa.Table,
    right: pa.Table,
    how: str,
    left_keys: tuple[Expr, ...],
    right_keys: tuple[Expr, ...],
    condition: Expr | None,
    output: tuple[AttributeRef, ...],
) -> pa.Table:
    """Join `left` and `right` (columns named by internal attribute names) into `output` columns."""
    left = left.combine_chunks()
    right = right.combine_chunks()
    if left_keys and condition is None:
        joined = _acero_join(left, right, how, left_keys, right_keys, output)
        if joined is not None:
            return joined
    if left_keys:
        li, ri = _key_matches(left, right, left_keys, right_keys)
    else:
        li, ri = _all_pairs(left.num_rows, right.num_rows)
    if condition is not None and len(li):
        li, ri = _apply_residual(left, right, li, ri, condition)
    return _assemble(left, right, how, li, ri, output)


def _key_matches(left: pa.Table, right: pa.Table, lk: tuple[Expr, ...],
                 rk: tuple[Expr, ...]) -> tuple[np.ndarray, np.ndarray]:
    lbatch = _as_batch(left)
    rbatch = _as_batch(right)
    lcols = {f"k{i}": evaluate_array(e, lbatch) for i, e in enumerate(lk)}
    rcols = {f"r{i}": evaluate_array(e, rbatch) for i, e in enumerate(rk)}
    for i in range(len(lk)):
        a, b = lcols[f"k{i}"], rcols[f"r{i}"]
        if a.type != b.type:
            b = b.cast(a.type)
        lcols[f"k{i}"], rcols[f"r{i}"] = canonical_floats(a), canonical_floats(b)
    lcols["__l"] = pa.array(np.arange(left.num_rows, dtype=np.int64))
    rcols["__r"] = pa.array(np.arange(right.num_rows, dtype=np.int64))
    ltab, rtab = pa.table(lcols), pa.table(rcols)
    joined = ltab.join(rtab, keys=[f"k{i}" for i in range(len(lk))], right_keys=[f"r{i}" for i in range(len(rk))],
                       join_type="inner", use_threads=False, coalesce_keys=False)
    return joined.column("__l").to_numpy(), joined.column("__r").to_numpy()


_ACERO_JOIN_TYPES = {
    "inner": "inner", "left": "left outer", "right": "right outer", "full": "full outer",
    "left_semi": "left semi", "left_anti": "left anti",
}


def _acero_join(left: pa.Table, right: pa.Table, how: str, lk: tuple[Expr, ...], rk: tuple[Expr, ...],
                output: tuple[AttributeRef, ...]) -> pa.Table | None:
    """Acero's hash join with the payload carried through; None where Acero cannot carry a column type."""
    left, lnames = _with_keys(left, lk, "__lk")
    right, rnames = _with_keys(right, rk, "__rk")
    for a, b in zip(lnames, rnames):
        if left.schema.field(a).type != right.schema.field(b).type:
            right = right.set_column(right.schema.get_field_index(b), b,
                                     right.column(b).cast(left.schema.field(a).type))
    try:
        joined = left.join(right, keys=lnames, right_keys=rnames, join_type=_ACERO_JOIN_TYPES[how],
                           use_threads=False, coalesce_keys=False)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
        return None
    return joined.select([a.internal_name for a in output])


_MIRRORED = {"inner": "inner", "left": "right outer", "right": "left outer", "full": "full outer",
             "left_semi": "right semi", "left_anti": "right anti"}
# Acero's join types (the probe side on its left) whose output for a probe row depends on that row alone.
_PROBE_LOCAL = frozenset({"inner", "left outer", "left semi", "left anti"})
# Probe chunks hold BUILD_REUSE times the build side's rows (building costs a few times what probing
# does per row), but no more than MAX_CHUNK_ROWS or the build side's rows, whichever is larger: a chunk's
# memory stays within a small multiple of the build side's, which the operator has reserved.
BUILD_REUSE = 16
MAX_CHUNK_ROWS = 4 * CHUNK_ROWS


def probe_chunk_rows(build_rows: int) -> int:
    """How many probe rows one Acero plan joins against a build side of `build_rows` rows."""
    return max(CHUNK_ROWS, min(build_rows * BUILD_REUSE, max(MAX_CHUNK_ROWS, build_rows)))


def stream_hash_join(
    probe: Iterator[pa.RecordBatch], probe_attrs: tuple[AttributeRef, ...], probe_keys: tuple[Expr, ...],
    build: pa.Table, build_keys: tuple[Expr, ...], how: str, output: tuple[AttributeRef, ...], probe_is_left: bool,
    residual: pc.Expression | None = None,
) -> Iterator[pa.RecordBatch]:
    """An equi-join streaming `probe` batches against a hash table on `build`; yields output batches.

    `how` is from the left side's point of view; when the probe side is the right input the
    join type is mirrored. `residual`, over internal column names, is the rest of the ON
    condition, which a matching pair must also satisfy. Fixed-width keys without a residual are
    indexed once and each probe batch joined as it comes (`_indexed_join`); other joins go
    through Acero, probe batches gathered into chunks joined on this thread (see batch_chunks).
    """
    if probe_is_left:
        join_type = _ACERO_JOIN_TYPES[how]
    elif how in _MIRRORED:
        join_type = _MIRRORED[how]
    else:
        raise ValueError(f"a {how} join cannot build on its left side")
    build, build_names = _with_keys(build.combine_chunks(), build_keys, "__bk")
    schema = pa.schema([pa.field(a.internal_name, a.dtype.to_arrow()) for a in probe_attrs])
    computed = [(i, e) for i, e in enumerate(probe_keys)
                if not (isinstance(e, AttributeRef) and e.internal_name in schema.names) or _is_float(e)]
    probe_names = [e.internal_name if not any(i == j for j, _ in computed) else f"__pk{i}"
                   for i, e in enumerate(probe_keys)]
    for i, e in computed:
        schema = schema.append(pa.field(f"__pk{i}", e.dtype.to_arrow()))
    for name, bname in zip(probe_names, build_names):
        want = schema.field(name).type
        if build.schema.field(bname).type != want:
            build = build.set_column(build.schema.get_field_index(bname), bname, build.column(bname).cast(want))

    def batches() -> Iterator[pa.RecordBatch]:
        for b in probe:
            if b.num_rows == 0:
                continue
            arrays = [b.column(a.internal_name) for a in probe_attrs]
            arrays += [canonical_floats(evaluate_array(e, b)) for _, e in computed]
            yield pa.RecordBatch.from_arrays(arrays, schema=schema)

    names = [a.internal_name for a in output]
    keep_probe = [n for n in schema.names if n in names]
    keep_build = [n for n in build.column_names if n in names]
    if residual is None and indexable([schema.field(n).type for n in probe_names]):
        yield from _indexed_join(join_type, batches(), schema, probe_names, build, build_names, names)
        return
    probe_side = _JoinSide(probe_names, keep_probe)
    build_side = _JoinSide(build_names, keep_build)
    if join_type in _PROBE_LOCAL:
        # Each chunk of probe rows joins on this thread; the hash table is built again per chunk,
        # which chunks of many times the build side's rows keep to a small share of the work.
        # A chunk smaller than the build side is itself the cheaper side to build on. One plan over
        # the whole probe side would not bound memory: Acero queues up to 1 GiB of a plan's output
        # before pausing its sources, and with use_threads=False it drains the probe source into it.
        for chunk in table_chunks(batches(), schema, probe_chunk_rows(build.num_rows)):
            if chunk.num_rows < build.num_rows:
                plan = _hash_join(_SWAPPED[join_type], build, build_side, chunk, probe_side, residual)
            else:
                plan = _hash_join(join_type, chunk, probe_side, build, build_side, residual)
            yield from _named(plan, names)
        return
    yield from _build_side_join(join_type, table_chunks(batches(), schema, probe_chunk_rows(build.num_rows)),
                                schema, probe_side, build, build_side, residual, names)


def _indexed_join(join_type: str, batches: Iterator[pa.RecordBatch], schema: pa.Schema, probe_names: list[str],
                  build: pa.Table, build_names: list[str], names: list[str]) -> Iterator[pa.RecordBatch]:
    """The join with the build side's keys indexed once (quiver/executors/cpu/join_index.py) and each probe
    batch joined on its own: its pairs, or its kept rows, come out with it; a join that keeps build rows by
    whether any probe row matched them marks their key groups and emits those rows after the last batch."""
    index = KeyIndex([build.column(n) for n in build_names])
    probe_out = [n for n in names if n in schema.names]
    build_out = [n for n in names if n not in schema.names]
    build_columns = [build.column(n).combine_chunks() for n in build_out]
    hit = np.zeros(index.num_groups, dtype=bool) if join_type in _BUILD_KEPT else None
    for batch in batches:
        groups = index.groups([batch.column(n) for n in probe_names])
        if hit is not None:
            hit[groups[groups >= 0]] = True
        if join_type in ("left semi", "left anti"):
            rows = np.flatnonzero((groups >= 0) if join_type == "left semi" else (groups < 0))
            if len(rows):
                yield _ordered(names, probe_out, take_rows([batch.column(n) for n in probe_out], rows), [], [])
            continue
        if join_type in ("right semi", "right anti"):
            continue
        for found in index.matches(groups, keep_unmatched=join_type in ("left outer", "full outer")):
            yield _ordered(names, probe_out, take_rows([batch.column(n) for n in probe_out], found.probe_rows),
                           build_out, take_rows(build_columns, found.build_rows))
    if hit is None:
        return
    semi = join_type == "right semi"
    rows = index.rows_of(hit if semi else ~hit, null_keys=not semi)
    if len(rows):
        nulls = [pa.nulls(len(rows), schema.field(n).type) for n in probe_out]
        yield _ordered(names, probe_out, nulls, build_out, take_rows(build_columns, rows))


# Join types (the probe side on Acero's left) that emit build rows by whether any probe row matched them.
_BUILD_KEPT = frozenset({"right outer", "full outer", "right semi", "right anti"})


def _ordered(names: list[str], probe_names: list[str], probe: list[pa.Array], build_names: list[str],
             build: list[pa.Array]) -> pa.RecordBatch:
    columns = dict(zip(probe_names, probe))
    columns.update(zip(build_names, build))
    return pa.RecordBatch.from_arrays([columns[n] for n in names], names=names)


# Join types whose unmatched (or matched) build rows matter, and the probe-local join each chunk runs.
_PER_CHUNK = {"right outer": "inner", "full outer": "left outer", "right semi": "inner", "right anti": "inner"}
_BUILD_ROW = "__build_row"


def _build_side_join(join_type: str, chunks: Iterator[pa.Table], schema: pa.Schema, probe_side: _JoinSide,
                     build: pa.Table, build_side: _JoinSide, residual: pc.Expression | None,
                     names: list[str]) -> Iterator[pa.RecordBatch]:
    """A join whose build rows' fate is known only once every probe row is in, chunk by chunk like the
    others: each chunk's matches (and, for a full outer join, its unmatched probe rows) come out at once, a
    bitmap keeps which build rows some pair matched (the residual condition included), and the build rows
    the join type asks for come out after the last chunk: the unmatched ones null-extended for an outer
    join, the matched or unmatched ones for a semi or anti join."""
    numbered = build.append_column(_BUILD_ROW, pa.array(np.arange(build.num_rows, dtype=np.int64)))
    matched = np.zeros(build.num_rows, dtype=bool)
    pairs = join_type in ("right outer", "full outer")
    probe_out = probe_side if pairs else _JoinSide(probe_side.keys, [])
    build_out = _JoinSide(build_side.keys, (build_side.output if pairs else []) + [_BUILD_ROW])
    for chunk in chunks:
        plan = _hash_join(_PER_CHUNK[join_type], chunk, probe_out, numbered, build_out, residual)
        for batch in plan.to_reader(use_threads=False):
            if not batch.num_rows:
                continue
            rows = batch.column(_BUILD_ROW)
            matched[(rows.drop_null() if rows.null_count else rows).to_numpy()] = True
            if pairs:
                yield pa.RecordBatch.from_arrays([batch.column(n) for n in names], names=names)
    chosen = np.flatnonzero(matched if join_type == "right semi" else ~matched)
    if not len(chosen):
        return
    rest = build.take(pa.array(chosen))
    yield pa.RecordBatch.from_arrays(
        [rest.column(n).combine_chunks() if n in rest.column_names else pa.nulls(len(chosen), schema.field(n).type)
         for n in names], names=names)


@dataclass(frozen=True)
class _JoinSide:
    """One input of an Acero hash join: its key columns and the columns it contributes to the output."""

    keys: list[str]
    output: list[str]


# A probe-local join with its inputs swapped: the build side becomes Acero's left input.
_SWAPPED = {"inner": "inner", "left outer": "right outer", "left semi": "right semi", "left anti": "right anti"}


def _hash_join(join_type: str, left: pa.Table | pa.RecordBatchReader, left_side: _JoinSide, right: pa.Table,
               right_side: _JoinSide, residual: pc.Expression | None) -> acero.Declaration:
    """Acero's hash join of `left` with `right`, building its hash table on `right`."""
    if isinstance(left, pa.RecordBatchReader):
        source = acero.Declaration("record_batch_reader_source", acero.RecordBatchReaderSourceNodeOptions(left))
    else:
        source = acero.Declaration("table_source", acero.TableSourceNodeOptions(left))
    left_output = [] if join_type in ("right semi", "right anti") else left_side.output
    right_output = [] if join_type in ("left semi", "left anti") else right_side.output
    options = acero.HashJoinNodeOptions(join_type, left_side.keys, right_side.keys, left_output, right_output,
                                        filter_expression=residual)
    build = acero.Declaration("table_source", acero.TableSourceNodeOptions(right))
    return acero.Declaration("hashjoin", options, inputs=[source, build])


def _named(plan: acero.Declaration, names: list[str]) -> Iterator[pa.RecordBatch]:
    """The plan's non-empty output batches with exactly the columns `names`, in that order."""
    for batch in plan.to_reader(use_threads=False):
        if batch.num_rows:
            yield pa.RecordBatch.from_arrays([batch.column(n) for n in names], names=names)


def _with_keys(table: pa.Table, keys: tuple[Expr, ...], prefix: str) -> tuple[pa.Table, list[str]]:
    """Key columns by name: an attribute's own column, or an evaluated expression appended.

    Float keys are always appended canonicalised, since Acero matches keys bit for bit.
    """
    names = []
    batch = None
    for i, e in enumerate(keys):
        if isinstance(e, AttributeRef) and e.internal_name in table.column_names and not _is_float(e):
            names.append(e.internal_name)
            continue
        batch = batch if batch is not None else _as_batch(table)
        name = f"{prefix}{i}"
        table = table.append_column(name, canonical_floats(evaluate_array(e, batch)))
        names.append(name)
    return table, names


def _is_float(e: Expr) -> bool:
    return isinstance(e.dtype, (T.FloatType, T.DoubleType))


def _as_batch(table: pa.Table) -> pa.RecordBatch:
    batches = table.to_batches()
    if len(batches) == 1:
        return batches[0]
    return pa.RecordBatch.from_arrays([c.combine_chunks() for c in table.columns], schema=table.schema)


def _all_pairs(n_left: int, n_right: int) -> tuple[np.ndarray, np.ndarray]:
    li = np.repeat(np.arange(n_left, dtype=np.int64), n_right)
    ri = np.tile(np.arange(n_right, dtype=np.int64), n_left)
    return li, ri


def _apply_residual(left: pa.Table, right: pa.Table, li: np.ndarray, ri: np.ndarray,
                    condition: Expr) -> tuple[np.ndarray, np.ndarray]:
    keep_l, keep_r = [], []
    for start in range(0, len(li), PAIR_CHUNK):
        cl, cr = li[start:start + PAIR_CHUNK], ri[start:start + PAIR_CHUNK]
        pairs = _gather(left, right, cl, cr)
        mask = evaluate(condition, pairs)
        if isinstance(mask, pa.Scalar):
            if mask.as_py():
                keep_l.append(cl)
                keep_r.append(cr)
            continue
        m = pc.fill_null(mask, False).to_numpy(zero_copy_only=False)
        keep_l.append(cl[m])
        keep_r.append(cr[m])
    if not keep_l:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(keep_l), np.concatenate(keep_r)


def _gather(left: pa.Table, right: pa.Table, li: np.ndarray, ri: np.ndarray) -> pa.RecordBatch:
    lt = left.take(pa.array(li))
    rt = right.take(pa.array(ri))
    arrays = [c.combine_chunks() for c in lt.columns] + [c.combine_chunks() for c in rt.columns]
    return pa.RecordBatch.from_arrays(arrays, names=lt.column_names + rt.column_names)


def _unmatched(n: int, matched: np.ndarray) -> np.ndarray:
    mask = np.ones(n, dtype=bool)
    mask[matched] = False
    return np.nonzero(mask)[0]


def _assemble(left: pa.Table, right: pa.Table, how: str, li: np.ndarray, ri: np.ndarray,
              output: tuple[AttributeRef, ...]) -> pa.Table:
    if how == "left_semi":
        return _select(left.take(pa.array(np.unique(li))), output)
    if how == "left_anti":
        return _select(left.take(pa.array(_unmatched(left.num_rows, li))), output)
    l_idx, r_idx = [li], [ri]
    l_null, r_null = [np.zeros(len(li), bool)], [np.zeros(len(ri), bool)]
    if how in ("left", "full"):
        extra = _unmatched(left.num_rows, li)
        l_idx.append(extra)
        r_idx.append(np.zeros(len(extra), np.int64))
        l_null.append(np.zeros(len(extra), bool))
        r_null.append(np.ones(len(extra), bool))
    if how in ("right", "full"):
        extra = _unmatched(right.num_rows, ri)
        l_idx.append(np.zeros(len(extra), np.int64))
        r_idx.append(extra)
        l_null.append(np.ones(len(extra), bool))
        r_null.append(np.zeros(len(extra), bool))
    lt = left.take(_indices(np.concatenate(l_idx), np.concatenate(l_null)))
    rt = right.take(_indices(np.concatenate(r_idx), np.concatenate(r_null)))
    columns = dict(zip(lt.column_names, lt.columns))
    columns.update(zip(rt.column_names, rt.columns))
    return pa.table([columns[a.internal_name] for a in output], names=[a.internal_name for a in output])


def _indices(idx: np.ndarray, null: np.ndarray) -> pa.Array:
    if null.any():
        return pa.array(idx, type=pa.int64(), mask=null)
    return pa.array(idx, type=pa.int64())


def _select(table: pa.Table, output: tuple[AttributeRef, ...]) -> pa.Table:
    return table.select([a.internal_name for a in output])
