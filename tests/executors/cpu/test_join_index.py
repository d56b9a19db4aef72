"""quiver/executors/cpu/join_index.py: the build side's key index against a brute-force match of every pair,
for one and two keys, dense keys (the direct table) and sparse ones (the hash table), nulls, duplicates
fanning out past one step, and each fixed-width key type."""
from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quiver.executors.cpu import join_index
from quiver.executors.cpu.join_index import KeyIndex, indexable


def _pairs(index: KeyIndex, probe: list[pa.Array], keep_unmatched: bool) -> list[tuple[int, int]]:
    found = list(index.matches(index.groups(probe), keep_unmatched))
    return [(int(p), int(b)) for m in found for p, b in zip(m.probe_rows, m.build_rows)]


def _brute(build_rows: list[tuple], probe_rows: list[tuple], keep_unmatched: bool) -> list[tuple[int, int]]:
    out = []
    for i, p in enumerate(probe_rows):
        hits = [j for j, b in enumerate(build_rows) if None not in p and p == b]
        out.extend((i, j) for j in hits)
        if keep_unmatched and not hits:
            out.append((i, -1))
    return out


def _columns(rows: list[tuple], width: int, dtype: pa.DataType) -> list[pa.Array]:
    return [pa.array([r[j] for r in rows], dtype) for j in range(width)]


@pytest.mark.parametrize("spread", [1, 10**12], ids=["dense-keys", "sparse-keys"])
@pytest.mark.parametrize("width", [1, 2], ids=["1key", "2keys"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(build=st.lists(st.tuples(st.one_of(st.none(), st.integers(-3, 6)), st.one_of(st.none(), st.integers(0, 2))),
                      max_size=30),
       probe=st.lists(st.tuples(st.one_of(st.none(), st.integers(-4, 7)), st.one_of(st.none(), st.integers(0, 2))),
                      max_size=30),
       keep_unmatched=st.booleans())
def test_matches_are_every_pair_with_equal_keys_in_probe_order(monkeypatch, spread, width, build, probe,
                                                                keep_unmatched):
    monkeypatch.setattr(join_index, "MAX_OUTPUT_ROWS", 3)

    def widen(rows: list[tuple]) -> list[tuple]:
        return [tuple(None if v is None else v * spread for v in r[:width]) for r in rows]

    build, probe = widen(build), widen(probe)
    index = KeyIndex(_columns(build, width, pa.int64()))
    distinct = {b for b in build if None not in b}
    if width == 1 and spread == 1 and distinct:
        assert index._direct is not None
    if width == 2 or (spread > 1 and len(distinct) > 1):
        assert index._direct is None
    assert _pairs(index, _columns(probe, width, pa.int64()), keep_unmatched) == _brute(build, probe, keep_unmatched)


def test_one_key_with_many_build_rows_comes_out_in_steps(monkeypatch):
    monkeypatch.setattr(join_index, "MAX_OUTPUT_ROWS", 100)
    index = KeyIndex([pa.array([7] * 250 + [8], pa.int64())])
    steps = list(index.matches(index.groups([pa.array([7, 8, 7], pa.int64())]), keep_unmatched=False))
    assert [len(s.probe_rows) for s in steps] == [250, 1, 250]
    assert np.concatenate([s.build_rows for s in steps]).tolist() == list(range(250)) + [250] + list(range(250))


def test_rows_of_marks_groups_and_keeps_null_keys_only_when_asked():
    index = KeyIndex([pa.array([1, None, 2, 1], pa.int64())])
    hit = np.zeros(index.num_groups, dtype=bool)
    hit[index.groups([pa.array([1], pa.int64())])] = True
    assert index.rows_of(hit, null_keys=False).tolist() == [0, 3]
    assert index.rows_of(~hit, null_keys=True).tolist() == [1, 2]


@pytest.mark.parametrize("dtype, values", [
    (pa.int8(), [1, -2, 3]),
    (pa.uint64(), [2**64 - 1, 0, 2**63]),
    (pa.bool_(), [True, False, True]),
    (pa.float64(), [0.5, -1.25, 1e300]),
    (pa.date32(), [dt.date(2020, 1, 1), dt.date(1969, 12, 31), dt.date(2024, 2, 29)]),
    (pa.timestamp("us"), [dt.datetime(2020, 1, 1, 1), dt.datetime(1900, 1, 1), dt.datetime(2038, 1, 19)]),
])
def test_each_fixed_width_type_matches_by_value(dtype, values):
    assert indexable([dtype])
    index = KeyIndex([pa.array(values, dtype)])
    probe = [values[2], values[0], None, values[1]]
    want = _brute([(v,) for v in values], [(v,) for v in probe], keep_unmatched=True)
    assert _pairs(index, [pa.array(probe, dtype)], keep_unmatched=True) == want


def test_strings_and_decimals_are_left_to_acero():
    assert not indexable([pa.string()])
    assert not indexable([pa.int64(), pa.decimal128(10, 2)])
    assert not indexable([])
