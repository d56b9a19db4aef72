"""quiver/executors/device/kernels/join.py: matched row pairs, in their documented order, against a
nested-loop join with Spark's key equality (null never matches, NaN = NaN, -0.0 = 0.0, strings by value), and
against pyarrow's hash join for integer and string keys."""
from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quiver.executors.device.kernels.columns import to_device, to_host
from quiver.executors.device.kernels.join import JOIN_TYPES, join_indices

NAMES = ("i", "f", "s")
TYPES = (pa.int64(), pa.float64(), pa.string())
row = st.tuples(st.one_of(st.none(), st.integers(0, 3)),
                st.one_of(st.none(), st.sampled_from([0.0, -0.0, 1.5, float("nan")])),
                st.one_of(st.none(), st.sampled_from(["a", "b", "c", ""])))
side = st.lists(row, max_size=12)
keys = st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True)


def _batch(data) -> pa.RecordBatch:
    cols = list(zip(*data)) if data else [[]] * 3
    return pa.record_batch([pa.array(list(c), t) for c, t in zip(cols, TYPES)], names=list(NAMES))


def _equal(a, b) -> bool:
    if a is None or b is None:
        return False
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a == b


def _nested_loop(left, right, how, names) -> list:
    """The pairs in the order join_indices promises: by left row then right row (by right row for `right`)."""
    col = {n: i for i, n in enumerate(NAMES)}

    def match(lrow, rrow):
        return all(_equal(lrow[col[n]], rrow[col[n]]) for n in names)

    if how == "right":
        return [(i, j) for j, i in _nested_loop(right, left, "left", names)]
    pairs = []
    for i, lrow in enumerate(left):
        found = [j for j, rrow in enumerate(right) if match(lrow, rrow)]
        if how == "left_semi":
            pairs += [i] if found else []
        elif how == "left_anti":
            pairs += [] if found else [i]
        else:
            pairs += [(i, j) for j in found] or ([(i, -1)] if how in ("left", "full") else [])
    if how == "full":
        pairs += [(-1, j) for j, rrow in enumerate(right) if not any(match(lrow, rrow) for lrow in left)]
    return pairs


def _device_pairs(left, right, how, names, xp) -> list:
    lb, rb = to_device(_batch(left), xp), to_device(_batch(right), xp)
    li, ri = join_indices([lb.column(n) for n in names], [rb.column(n) for n in names], how, xp)
    if ri is None:
        return to_host(li).tolist()
    return list(zip(to_host(li).tolist(), to_host(ri).tolist()))


@settings(max_examples=60, deadline=None)
@given(left=side, right=side, names=keys, how=st.sampled_from(JOIN_TYPES))
def test_join_pairs_and_their_order_match_a_nested_loop_join(xp, left, right, names, how):
    assert _device_pairs(left, right, how, names, xp) == _nested_loop(left, right, how, names)


_ARROW_JOIN = {"inner": "inner", "left": "left outer", "right": "right outer", "full": "full outer",
               "left_semi": "left semi", "left_anti": "left anti"}


@settings(max_examples=40, deadline=None)
@given(left=side, right=side, names=st.lists(st.sampled_from(["i", "s"]), min_size=1, unique=True),
       how=st.sampled_from(JOIN_TYPES))
def test_join_pairs_match_pyarrow_hash_join(xp, left, right, names, how):
    lt = pa.Table.from_batches([_batch(left)]).select(names).append_column("li", pa.array(np.arange(len(left))))
    rt = pa.Table.from_batches([_batch(right)]).select(names).append_column("ri", pa.array(np.arange(len(right))))
    joined = lt.join(rt, keys=names, join_type=_ARROW_JOIN[how], use_threads=False)
    got = _device_pairs(left, right, how, names, xp)
    if how in ("left_semi", "left_anti"):
        assert sorted(got) == sorted(joined.column("li").to_pylist())
        return
    li = joined.column("li").fill_null(-1).to_pylist()
    ri = joined.column("ri").fill_null(-1).to_pylist()
    assert sorted(got) == sorted(zip(li, ri))


def test_string_keys_match_by_value_across_different_dictionaries(xp):
    left = pa.record_batch({"k": pa.array(["x", "y", None, "z"])})
    right = pa.record_batch({"k": pa.DictionaryArray.from_arrays(pa.array([0, 1, 2, 1], pa.int8()),
                                                                 pa.array(["z", "x", "w"]))})
    li, ri = join_indices([to_device(left, xp).column("k")], [to_device(right, xp).column("k")], "inner", xp)
    assert list(zip(to_host(li).tolist(), to_host(ri).tolist())) == [(0, 1), (0, 3), (3, 0)]


def test_keys_of_different_integer_widths_and_float_widths_join(xp):
    left = to_device(pa.record_batch({"k": pa.array([1, 2, 3], pa.int32()),
                                      "f": pa.array([0.5, -0.0, 2.0], pa.float32())}), xp)
    right = to_device(pa.record_batch({"k": pa.array([3, 1], pa.int64()), "f": pa.array([2.0, 0.5])}), xp)
    li, ri = join_indices([left.column("k"), left.column("f")], [right.column("k"), right.column("f")], "inner", xp)
    assert list(zip(to_host(li).tolist(), to_host(ri).tolist())) == [(0, 1), (2, 0)]


def test_empty_sides(xp):
    empty = to_device(_batch([]), xp)
    full = to_device(_batch([(1, 1.0, "a"), (None, None, None)]), xp)
    for how in JOIN_TYPES:
        li, ri = join_indices([full.column("i")], [empty.column("i")], how, xp)
        expected = {"inner": [], "left": [(0, -1), (1, -1)], "right": [], "full": [(0, -1), (1, -1)],
                    "left_semi": [], "left_anti": [0, 1]}[how]
        got = to_host(li).tolist() if ri is None else list(zip(to_host(li).tolist(), to_host(ri).tolist()))
        assert got == expected, how
        li, ri = join_indices([empty.column("i")], [full.column("i")], how, xp)
        assert int(li.shape[0]) == (2 if how in ("right", "full") else 0), how


def test_bad_arguments_are_named(xp):
    b = to_device(_batch([(1, 1.0, "a")]), xp)
    with pytest.raises(ValueError, match="unknown join type 'cross'"):
        join_indices([b.column("i")], [b.column("i")], "cross", xp)
    with pytest.raises(ValueError, match="same number"):
        join_indices([b.column("i")], [], "inner", xp)
    with pytest.raises(TypeError, match="cannot join"):
        join_indices([b.column("s")], [b.column("i")], "inner", xp)
