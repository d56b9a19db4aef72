"""quiver/executors/cpu/hashing.py: a value hashes the same wherever it sits — in any batch, slice or
chunk, under any Arrow layout of its type — so hash partitioning sends equal keys to one place."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quiver.executors.cpu.hashing import canonical_floats, hash_array, hash_columns

VALUES = {
    "int64": (st.integers(-(2**63), 2**63 - 1), pa.int64()),
    "int32": (st.integers(-(2**31), 2**31 - 1), pa.int32()),
    "double": (st.floats(allow_nan=False), pa.float64()),
    "string": (st.text(max_size=8), pa.string()),
    "binary": (st.binary(max_size=8), pa.binary()),
    "bool": (st.booleans(), pa.bool_()),
    "date": (st.dates(), pa.date32()),
}


@pytest.mark.parametrize("kind", list(VALUES))
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_same_value_same_hash_across_batches_slices_and_chunks(kind, data):
    values_st, arrow_type = VALUES[kind]
    values = data.draw(st.lists(st.one_of(st.none(), values_st), min_size=1, max_size=30))
    cut = data.draw(st.integers(0, len(values)))
    whole = hash_array(pa.array(values, arrow_type))
    # each value alone, in its own batch
    alone = np.array([hash_array(pa.array([v], arrow_type))[0] for v in values], dtype=np.uint64)
    assert (whole == alone).all()
    # a slice (non-zero offset into the buffers) and a chunked array split at `cut`
    padded = pa.array([values[0]] * 3 + values, arrow_type).slice(3)
    assert (hash_array(padded) == whole).all()
    chunked = pa.chunked_array([pa.array(values[:cut], arrow_type), pa.array(values[cut:], arrow_type)])
    assert (hash_array(chunked) == whole).all()


@settings(max_examples=25, deadline=None)
@given(values=st.lists(st.one_of(st.none(), st.text(max_size=6)), min_size=1, max_size=30))
def test_string_layouts_hash_alike(values):
    """string, large_string, string_view and dictionary-encoded strings of the same text hash the same."""
    plain = hash_array(pa.array(values, pa.string()))
    assert (hash_array(pa.array(values, pa.large_string())) == plain).all()
    assert (hash_array(pa.array(values, pa.string_view())) == plain).all()
    assert (hash_array(pa.array(values, pa.string()).dictionary_encode()) == plain).all()


def test_integer_widths_hash_alike():
    values = [0, 1, -1, 127, None, -128]
    ref = hash_array(pa.array(values, pa.int64()))
    for t in (pa.int8(), pa.int16(), pa.int32()):
        assert (hash_array(pa.array(values, t)) == ref).all(), t


def test_nulls_hash_alike_in_every_type_and_differ_from_empty_and_zero():
    null_hashes = {int(hash_array(pa.array([None], t))[0]) for t in (pa.int64(), pa.float64(), pa.string(),
                                                                    pa.bool_(), pa.date32(), pa.null())}
    assert len(null_hashes) == 1
    null_hash = null_hashes.pop()
    assert int(hash_array(pa.array([""]))[0]) != null_hash
    assert int(hash_array(pa.array([0], pa.int64()))[0]) != null_hash
    assert int(hash_array(pa.array([False]))[0]) != null_hash


def test_negative_zero_and_every_nan_hash_like_their_canonical_value():
    nan_bits = [0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000123]
    nans = np.array(nan_bits, dtype=np.uint64).view(np.float64)
    h = hash_array(pa.array(np.concatenate([nans, [0.0, -0.0]])))
    assert len(set(h[:3].tolist())) == 1
    assert h[3] == h[4]
    assert h[0] != h[3]
    f32 = hash_array(pa.array(np.array([np.nan, -0.0, 1.5], dtype=np.float32)))
    assert (f32 == hash_array(pa.array([np.nan, 0.0, 1.5]))).all()


def test_canonical_floats_makes_equal_doubles_bitwise_equal():
    nans = np.array([0x7FF8000000000000, 0xFFF8000000000000], dtype=np.uint64).view(np.float64)
    out = canonical_floats(pa.array(np.concatenate([nans, [-0.0, 0.0, 2.5]])).slice(0))
    bits = out.to_numpy(zero_copy_only=False).view(np.uint64)
    assert bits[0] == bits[1] and bits[2] == bits[3] == 0
    assert canonical_floats(pa.array([None, -0.0])).to_pylist() == [None, 0.0]
    ints = pa.array([1, None])
    assert canonical_floats(ints) is ints


@settings(max_examples=25, deadline=None)
@given(rows=st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 3)), st.one_of(st.none(), st.text(max_size=3))),
                     min_size=1, max_size=30))
def test_hash_columns_depends_only_on_the_row_values(rows):
    a = pa.array([r[0] for r in rows], pa.int64())
    b = pa.array([r[1] for r in rows], pa.string())
    h = hash_columns([a, b])
    first_seen: dict = {}
    for row, value in zip(rows, h.tolist()):
        assert first_seen.setdefault(row, value) == value


def test_hash_columns_spreads_distinct_keys_evenly():
    keys = pa.array(np.arange(20_000, dtype=np.int64))
    counts = np.bincount((hash_columns([keys]) % np.uint64(8)).astype(np.int64), minlength=8)
    assert counts.min() > 20_000 / 8 * 0.9 and counts.max() < 20_000 / 8 * 1.1, counts


def test_hash_columns_needs_a_column():
    with pytest.raises(ValueError):
        hash_columns([])


def test_importing_quiver_and_a_small_query_load_no_numba_and_a_large_batch_loads_the_kernels():
    """Importing quiver, starting a session and a small query pay for no numba (its import and first kernel load
    cost more than the whole query); the first batch over SMALL_BATCH_ROWS loads the kernels."""
    code = ("import sys, quiver; from quiver.executors.cpu import hashing, jit\n"
            "spark = quiver.Session.builder.master('local[1]').getOrCreate()\n"
            "spark.createDataFrame([(1, 'a'), (2, 'b'), (1, 'a')], ['k', 's']).groupBy('k', 's').count().collect()\n"
            "print('numba' in sys.modules, jit.numba_loaded())\n"
            "import pyarrow as pa; hashing.hash_array(pa.array(range(hashing.SMALL_BATCH_ROWS + 1)))\n"
            "print('numba' in sys.modules, jit.numba_loaded(), bool(hashing._splitmix_into.signatures))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    assert out.stdout.split() == ["False", "False", "True", "True", "True"]


@settings(max_examples=40, deadline=None)
@given(values=st.lists(st.one_of(st.none(), st.text(max_size=12), st.just("")), max_size=50),
       ints=st.lists(st.integers(-(2**63), 2**63 - 1), max_size=50))
def test_a_small_batch_hashes_with_numpy_to_the_kernels_values(values, ints):
    """Batches up to SMALL_BATCH_ROWS rows are hashed with numpy: the same hashes the numba kernels give, so
    equal keys meet whichever path each batch took."""
    from quiver.executors.cpu.hashing import (
        _hash_binary,
        _hash_binary_numpy,
        _splitmix_into,
        _splitmix_numpy,
        binary_buffers,
    )

    offsets, data = binary_buffers(pa.array(values, pa.string()))
    by_kernel = np.empty(len(values), dtype=np.uint64)
    _hash_binary(offsets, data, by_kernel)
    assert _hash_binary_numpy(offsets, data).tolist() == by_kernel.tolist()
    bits = np.array(ints, dtype=np.int64).view(np.uint64)
    mixed = np.empty(len(bits), dtype=np.uint64)
    _splitmix_into(bits, mixed)
    assert _splitmix_numpy(bits).tolist() == mixed.tolist()


def test_a_long_string_or_a_large_batch_takes_the_kernel_to_the_same_hashes():
    from quiver.executors.cpu.hashing import SMALL_BATCH_BYTES, SMALL_BATCH_ROWS

    long_value = "x" * (SMALL_BATCH_BYTES + 1)
    small = hash_array(pa.array(["a", long_value, "b"]))
    large = hash_array(pa.array(["a", long_value, "b"] * (SMALL_BATCH_ROWS // 3 + 1)))
    assert large[:3].tolist() == small.tolist()
    assert hash_array(pa.array(["a", "b"])).tolist() == small[[0, 2]].tolist()
