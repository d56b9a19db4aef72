"""quiver/executors/device/kernels/sort.py against the CPU executor's `quiver/executors/cpu/sort.py`: the very
same permutation (ties included) for every key type, direction and null placement; top-k against the CPU's
top-k."""
from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal as D

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quiver.engine.core.expressions import Literal, SortOrder
from quiver.executors.cpu import sort as cpu
from quiver.executors.device.kernels.columns import column_to_device, to_host
from quiver.executors.device.kernels.sort import sort_indices, top_k_indices

STRATEGIES = {
    "i": (pa.int64(), st.integers(-3, 3)),
    "f": (pa.float64(), st.sampled_from([-1.5, 0.0, -0.0, 2.0, float("inf"), float("-inf"), float("nan")])),
    "s": (pa.string(), st.sampled_from(["", "a", "B", "b", "ab", "é", "Z"])),
    "b": (pa.bool_(), st.booleans()),
    "d": (pa.decimal128(6, 2), st.sampled_from([D("-1.50"), D("0.00"), D("2.25"), D("-9999.99")])),
    "t": (pa.date32(), st.sampled_from([dt.date(1960, 1, 1), dt.date(2000, 2, 29), dt.date(1970, 1, 1)])),
    "u": (pa.uint32(), st.sampled_from([0, 1, 2**32 - 1])),
}
KINDS = tuple(STRATEGIES)


def _column(kind: str, values: list) -> pa.Array:
    t = STRATEGIES[kind][0]
    arr = pa.array(values, t)
    return arr.dictionary_encode() if kind == "s" and len(values) % 2 else arr  # both string layouts


@st.composite
def sort_case(draw):
    kinds = draw(st.lists(st.sampled_from(KINDS), min_size=1, max_size=3))
    n = draw(st.integers(0, 30))
    columns = [_column(k, draw(st.lists(st.one_of(st.none(), STRATEGIES[k][1]), min_size=n, max_size=n)))
               for k in kinds]
    ascending = draw(st.lists(st.booleans(), min_size=len(kinds), max_size=len(kinds)))
    nulls_first = draw(st.lists(st.booleans(), min_size=len(kinds), max_size=len(kinds)))
    return columns, ascending, nulls_first


def _orders(ascending, nulls_first) -> tuple[SortOrder, ...]:
    return tuple(SortOrder(Literal(None, None), a, f) for a, f in zip(ascending, nulls_first))


def _cpu_columns(columns: list[pa.Array]) -> list[pa.Array]:
    # the CPU sorts a dictionary column through its values, as its callers decode it first
    return [c.dictionary_decode() if pa.types.is_dictionary(c.type) else c for c in columns]


@settings(max_examples=80, deadline=None)
@given(case=sort_case())
def test_sort_indices_equal_the_cpu_permutation(xp, case):
    columns, ascending, nulls_first = case
    keys = [column_to_device(c, xp) for c in columns]
    got = to_host(sort_indices(keys, ascending, nulls_first, xp)).tolist()
    want = cpu.sort_indices(_cpu_columns(columns), _orders(ascending, nulls_first)).to_pylist()
    assert got == want


def _row_keys(columns: list[pa.Array], rows: list[int]) -> list[tuple]:
    values = [c.to_pylist() for c in _cpu_columns(columns)]
    return [tuple(("nan",) if isinstance(v[r], float) and math.isnan(v[r]) else v[r] for v in values) for r in rows]


@settings(max_examples=50, deadline=None)
@given(case=sort_case(), k=st.integers(0, 35))
def test_top_k_gives_the_cpu_top_k_rows_in_stable_order(xp, case, k):
    columns, ascending, nulls_first = case
    keys = [column_to_device(c, xp) for c in columns]
    got = to_host(top_k_indices(keys, ascending, nulls_first, k, xp)).tolist()
    assert got == to_host(sort_indices(keys, ascending, nulls_first, xp)).tolist()[:k]
    want = cpu.top_k_indices(_cpu_columns(columns), _orders(ascending, nulls_first), k).to_pylist()
    assert _row_keys(columns, got) == _row_keys(columns, want)  # the CPU may order ties differently


def test_strings_sort_by_text_not_by_dictionary_code(xp):
    arr = pa.array(["pear", "apple", None, "fig", "apple"]).dictionary_encode()  # codes follow first appearance
    got = to_host(sort_indices([column_to_device(arr, xp)], [True], [False], xp)).tolist()
    assert got == [1, 4, 3, 0, 2]


def test_nan_is_greatest_and_zeros_tie_in_either_direction(xp):
    arr = pa.array([float("nan"), 1.0, -0.0, float("inf"), 0.0, None])
    key = [column_to_device(arr, xp)]
    assert to_host(sort_indices(key, [True], [True], xp)).tolist() == [5, 2, 4, 1, 3, 0]
    assert to_host(sort_indices(key, [False], [False], xp)).tolist() == [0, 3, 1, 2, 4, 5]


def test_mismatched_arguments_are_rejected(xp):
    key = [column_to_device(pa.array([1, 2]), xp)]
    with pytest.raises(ValueError, match="as many directions"):
        sort_indices(key, [True, False], [True], xp)
    with pytest.raises(ValueError, match="at least one key"):
        sort_indices([], [], [], xp)
