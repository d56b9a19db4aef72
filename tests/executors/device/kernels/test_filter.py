"""quiver/executors/device/kernels/filter.py: filtering against Arrow's filter (null drops the row), gathering against
Arrow's take, and the all-null rows an outer join asks for."""
from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from quiver.executors.device.kernels.columns import (
    DeviceColumn,
    column_to_device,
    to_arrow,
    to_device,
)
from quiver.executors.device.kernels.filter import filter_batch, take_batch

rows = st.lists(st.tuples(st.one_of(st.none(), st.integers(-5, 5)),
                          st.one_of(st.none(), st.sampled_from(["a", "b", "c"])),
                          st.one_of(st.none(), st.floats(allow_nan=True)),
                          st.one_of(st.none(), st.booleans())), max_size=25)


def _batch(data) -> pa.RecordBatch:
    cols = list(zip(*data)) if data else [[]] * 4
    types = [pa.int64(), pa.string(), pa.float64(), pa.bool_()]
    return pa.record_batch([pa.array(list(c), t) for c, t in zip(cols, types)], names=["i", "s", "f", "m"])


def _rows(batch: pa.RecordBatch) -> list:
    return [tuple(("nan",) if isinstance(v, float) and math.isnan(v) else v for v in r.values())
            for r in batch.to_pylist()]


@settings(max_examples=50, deadline=None)
@given(data=rows)
def test_filter_matches_arrow_filter_with_null_as_false(xp, data):
    batch = _batch(data)
    device = to_device(batch, xp)
    got = to_arrow(filter_batch(device, device.column("m"), xp))
    want = batch.filter(batch.column("m"), null_selection_behavior="drop")
    assert got.schema == want.schema
    assert _rows(got) == _rows(want)


@settings(max_examples=50, deadline=None)
@given(data=rows.filter(bool), picks=st.lists(st.integers(0, 10_000), max_size=30),
       nulls=st.lists(st.booleans(), max_size=30))
def test_take_matches_arrow_take_and_null_where_blanks_whole_rows(xp, data, picks, nulls):
    batch = _batch(data)
    idx = np.array([p % batch.num_rows for p in picks], dtype=np.int64)
    null_where = np.array([(nulls[i] if i < len(nulls) else False) for i in range(len(idx))], dtype=bool)
    marked = np.where(null_where, -1, idx)
    device = to_device(batch, xp)
    got = to_arrow(take_batch(device, xp.asarray(marked), xp, null_where=xp.asarray(null_where)))
    want = batch.take(pa.array(idx, mask=null_where))
    assert got.num_rows == len(idx)
    assert _rows(got) == _rows(want)
    plain = to_arrow(take_batch(device, xp.asarray(idx), xp))
    assert _rows(plain) == _rows(batch.take(pa.array(idx)))


def test_take_from_an_empty_side_gives_all_null_rows(xp):
    empty = to_device(_batch([]), xp)
    out = to_arrow(take_batch(empty, xp.asarray(np.array([-1, -1], np.int64)), xp,
                              null_where=xp.asarray(np.array([True, True]))))
    assert out.num_rows == 2 and all(c.null_count == 2 for c in out.columns)
    assert out.schema == _batch([]).schema


def test_a_null_mask_slot_drops_the_row_whatever_value_it_holds(xp):
    """A computed mask may hold true behind a null (0 = 0 in two null slots); the row still goes."""
    batch = _batch([(1, "a", 1.0, True), (2, "b", 2.0, True), (3, "c", 3.0, True)])
    mask = DeviceColumn(xp.asarray(np.array([True, True, False])), xp.asarray(np.array([True, False, True])),
                        pa.bool_())
    assert to_arrow(filter_batch(to_device(batch, xp), mask, xp)).column("i").to_pylist() == [1]


def test_a_mask_without_nulls_or_all_false(xp):
    batch = _batch([(1, "a", 1.0, True), (2, "b", 2.0, True)])
    device = to_device(batch, xp)
    keep_all = column_to_device(pa.array([True, True]), xp)
    keep_none = column_to_device(pa.array([False, None]), xp)
    assert _rows(to_arrow(filter_batch(device, keep_all, xp))) == _rows(batch)
    assert to_arrow(filter_batch(device, keep_none, xp)).num_rows == 0
