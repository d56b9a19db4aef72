"""Partial aggregation over narrow inputs: string keys as dictionary codes, decimal sums as int64.

Batches arrive dictionary-encoded or not, with nulls in keys and values, and with magnitudes that
overflow an int64 sum; whatever the segments, partial then final must equal an exact computation.
"""
from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given, settings
from hypothesis import strategies as st

from quiver.engine.core import types as T
from quiver.engine.core.expressions import AggregateFunction, AttributeRef, BinaryArithmetic, Literal, new_expr_id
from quiver.executors.cpu.aggregate import aggregate_partition
from quiver.executors.cpu.aggregate_inputs import DictionaryCodes, Int64SumBudget, codable, run_states
from quiver.executors.cpu.decimal import FixedPoint
from quiver.planners.physical.nodes import AggregateCall

K = AttributeRef("k", T.StringType(), True, new_expr_id())
V = AttributeRef("v", T.DecimalType(18, 2), True, new_expr_id())
DOUBLED = BinaryArithmetic("*", V, Literal(2, T.IntegerType()))
SPECS = [
    AggregateFunction("sum", (V,)),
    AggregateFunction("avg", (V,)),
    AggregateFunction("sum", (DOUBLED,)),
    AggregateFunction("count", ()),
    AggregateFunction("max", (V,)),
]
CALLS = tuple(AggregateCall(f, AttributeRef(f.sql(), f.dtype, f.nullable, new_expr_id())) for f in SPECS)
LARGE = 10**15  # unscaled; 10**4 of these overflow an int64 sum


def _batch(rows, encoding: str) -> pa.RecordBatch:
    keys = pa.array([k for k, _ in rows], pa.string())
    if encoding == "dictionary":
        keys = pc.dictionary_encode(keys)
    elif encoding == "null in dictionary":
        keys = pa.DictionaryArray.from_arrays(pa.array(list(range(len(rows))), pa.int32()), keys)
    values = pa.array([None if v is None else Decimal(v).scaleb(-2) for _, v in rows], pa.decimal128(18, 2))
    return pa.RecordBatch.from_arrays([keys, values], names=[K.internal_name, V.internal_name])


def _two_phase(batches: list[pa.RecordBatch]) -> dict:
    states = list(aggregate_partition(batches, ((K, K),), CALLS, "partial"))
    final = pa.Table.from_batches(list(aggregate_partition(states, ((K, K),), CALLS, "final")))
    return {r[K.internal_name]: tuple(r[c.result.internal_name] for c in CALLS) for r in final.to_pylist()}


def _exact(batches: list[pa.RecordBatch]) -> dict:
    groups: dict = {}
    for b in batches:
        for k, v in zip(pc.cast(b.column(0), pa.string()).to_pylist() if not pa.types.is_dictionary(b.column(0).type)
                        else b.column(0).dictionary_decode().to_pylist(), b.column(1).to_pylist()):
            groups.setdefault(k, []).append(v)
    out = {}
    for k, vs in groups.items():
        present = [v for v in vs if v is not None]
        total = sum(present) if present else None
        avg = (total / len(present)).quantize(Decimal("0.000001"), rounding=ROUND_HALF_UP) if present else None
        doubled = sum(2 * v for v in present) if present else None
        out[k] = (total, avg, doubled, len(vs), max(present) if present else None)
    return out


values = st.one_of(st.none(), st.integers(-10**6, 10**6), st.sampled_from([LARGE, -LARGE, 3 * LARGE]))
batches_strategy = st.lists(
    st.tuples(st.lists(st.tuples(st.one_of(st.none(), st.sampled_from(["a", "b", "c", "d"])), values),
                       min_size=1, max_size=30),
              st.sampled_from(["plain", "dictionary", "null in dictionary"]),
              st.integers(1, 5000)),
    min_size=1, max_size=6)


@settings(max_examples=40, deadline=None)
@given(spec=batches_strategy)
def test_partial_over_encoded_keys_and_int64_sums_equals_exact(spec):
    """Batches are repeated to reach magnitudes past int64: segments must still give exact sums."""
    batches = [_batch(rows, encoding) for rows, encoding, _ in spec]
    repeated = [b for b, (_, _, times) in zip(batches, spec) for _ in range(times if b.num_rows * times < 60000 else 1)]
    assert _two_phase(repeated) == _exact(repeated)


def test_sums_past_int64_switch_to_exact_decimals_mid_stream():
    rows = [("a", LARGE)] * 5000
    batches = [_batch(rows, "dictionary") for _ in range(4)]  # 2 * 10**19 in all: past int64
    result = _two_phase(batches)
    assert result["a"][0] == Decimal(20000 * LARGE).scaleb(-2)
    assert result["a"][2] == Decimal(40000 * LARGE).scaleb(-2)


def test_codes_agree_across_batches_with_different_dictionaries():
    codes = DictionaryCodes(pa.string())
    first = codes.codes(pc.dictionary_encode(pa.array(["x", "y", None, "x"])))
    second = codes.codes(pc.dictionary_encode(pa.array(["z", "y", "x"])))
    assert first.to_pylist() == [0, 1, None, 0]
    assert second.to_pylist() == [2, 1, 0]
    assert codes.values(pa.array([2, None, 0], pa.int32())).to_pylist() == ["z", None, "x"]


def test_only_small_null_free_dictionaries_are_coded():
    assert codable(pc.dictionary_encode(pa.array(["a", None])))
    assert not codable(pa.DictionaryArray.from_arrays(pa.array([0], pa.int32()), pa.array([None], pa.string())))
    assert not codable(pa.array(["a"]))
    assert not codable(pc.dictionary_encode(pa.array([str(i) for i in range(5000)])))


def test_budget_refuses_what_could_wrap_and_tightens_a_loose_bound():
    budget = Int64SumBudget()
    loose = FixedPoint(np.array([1, -2], dtype=np.int64), 0, 2**62, None)
    assert budget.cost(loose, 2) == 4  # the bound would not fit; the values' real magnitude does
    budget.charge(2**63 - 4)
    assert budget.cost(loose, 2) is None


def test_encoded_keys_and_decimal_sums_are_prepared_narrow():
    """The layout a dictionary-encoded key and decimal sums get: int32 codes and int64 values."""
    from quiver.executors.cpu.aggregate import _Segment
    batch = _batch([("a", 150), ("b", None)], "dictionary")
    segment = _Segment(((K, K),), CALLS, batch)
    prepared = segment.prepare(batch)
    assert prepared.schema.field("k0").type == pa.int32()
    assert [prepared.schema.field(f"a{i}_0").type for i in range(3)] == [pa.int64()] * 3
    assert prepared.column("a2_0").to_pylist() == [300, None]
    assert prepared.schema.field("a4_0").type == pa.decimal128(18, 2)  # max keeps its decimal


SUMS_AND_COUNTS = tuple(AggregateCall(f, AttributeRef(f.sql(), f.dtype, f.nullable, new_expr_id())) for f in [
    AggregateFunction("sum", (V,)), AggregateFunction("avg", (V,)), AggregateFunction("count", ()),
    AggregateFunction("count", (V,)),
])
N = AttributeRef("n", T.LongType(), True, new_expr_id())


def _runs_batch(rows) -> pa.RecordBatch:
    keys = pa.array([k for k, _ in rows], pa.int64())
    values = pa.array([None if v is None else Decimal(v).scaleb(-2) for _, v in rows], pa.decimal128(18, 2))
    return pa.RecordBatch.from_arrays([keys, values], names=[N.internal_name, V.internal_name])


@settings(max_examples=40, deadline=None)
@given(batches=st.lists(st.lists(st.tuples(st.integers(0, 6), values), min_size=1, max_size=40), min_size=1,
                        max_size=4),
       clustered=st.booleans())
def test_clustered_keys_aggregated_run_by_run_equal_exact(batches, clustered):
    """Keys sorted within each batch (runs, aggregated without a hash table) or not, then merged."""
    prepared = [_runs_batch(sorted(b, key=lambda r: r[0]) if clustered else b) for b in batches]
    states = list(aggregate_partition(prepared, ((N, N),), SUMS_AND_COUNTS, "partial"))
    final = pa.Table.from_batches(list(aggregate_partition(states, ((N, N),), SUMS_AND_COUNTS, "final")))
    got = {r[N.internal_name]: tuple(r[c.result.internal_name] for c in SUMS_AND_COUNTS) for r in final.to_pylist()}
    groups: dict = {}
    for b in batches:
        for k, v in b:
            groups.setdefault(k, []).append(None if v is None else Decimal(v).scaleb(-2))
    expected = {}
    for k, vs in groups.items():
        present = [v for v in vs if v is not None]
        total = sum(present) if present else None
        avg = (total / len(present)).quantize(Decimal("0.000001"), rounding=ROUND_HALF_UP) if present else None
        expected[k] = (total, avg, len(vs), len(present))
    assert got == expected


def test_run_states_reduce_runs_and_refuse_what_they_cannot():
    from quiver.executors.cpu.aggregate import _Step
    steps = [_Step("a0_0", "sum", None, "s0"), _Step([], "count_all", None, "s1"), _Step("a0_0", "count", None, "s2")]
    batch = pa.RecordBatch.from_arrays([pa.array([1, 1, 1, 2, 2, 2]), pa.array([1, None, 3, None, None, 4.5])],
                                       names=["k0", "a0_0"])
    out = run_states(batch, 1, steps)
    assert out.to_pydict() == {"k0": [1, 2], "s0": [4.0, 4.5], "s1": [3, 3], "s2": [2, 1]}
    all_null = pa.RecordBatch.from_arrays([pa.array([5, 5]), pa.array([None, None], pa.int64())], names=["k0", "a0_0"])
    assert run_states(all_null, 1, steps).to_pydict()["s0"] == [None]
    assert run_states(batch, 1, [_Step("a0_0", "min", None, "s0")]) is None  # only sums and counts
    assert run_states(batch, 0, steps) is None  # a global aggregate has no runs
    scattered = pa.RecordBatch.from_arrays([pa.array([1, 2, 1, 2]), pa.array([1.0, 2.0, 3.0, 4.0])],
                                           names=["k0", "a0_0"])
    assert run_states(scattered, 1, steps) is None  # as many runs as rows: the hash table is better
    revisited = pa.RecordBatch.from_arrays([pa.array([1, 1, 2, 2, 1, 1]), pa.array([1.0] * 6)], names=["k0", "a0_0"])
    assert run_states(revisited, 1, steps) is None  # key 1 comes back: runs would not be one row per key
    descending = pa.RecordBatch.from_arrays([pa.array([3, 3, 2, 2]), pa.array([1.0] * 4)], names=["k0", "a0_0"])
    assert run_states(descending, 1, steps).to_pydict()["s1"] == [2, 2]
    null_key = pa.RecordBatch.from_arrays([pa.array([1, 1, None, None]), pa.array([1.0] * 4)], names=["k0", "a0_0"])
    assert run_states(null_key, 1, steps) is None
