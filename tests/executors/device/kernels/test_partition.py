"""quiver/executors/device/kernels/partition.py against the CPU executor: every row gets exactly the partition id
`quiver/executors/cpu/partitioning.py::hash_partition_ids` gives it, for every key type and partition count."""
from __future__ import annotations

import datetime as dt
import warnings
from decimal import Decimal as D

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quiver.executors.cpu.hashing import hash_columns
from quiver.executors.cpu.partitioning import hash_partition_ids as cpu_hash_partition_ids
from quiver.executors.device.kernels.columns import column_to_device, to_host
from quiver.executors.device.kernels.partition import column_hashes, hash_partition_ids

STRATEGIES = {
    "i8": (pa.int8(), st.integers(-128, 127)),
    "i32": (pa.int32(), st.integers(-(2**31), 2**31 - 1)),
    "i64": (pa.int64(), st.integers(-(2**63), 2**63 - 1)),
    "u64": (pa.uint64(), st.integers(0, 2**63 - 1)),
    "u8": (pa.uint8(), st.integers(0, 255)),
    "b": (pa.bool_(), st.booleans()),
    "f32": (pa.float32(), st.sampled_from([0.0, -0.0, 1.5, float("nan"), float("inf"), -3.25])),
    "f64": (pa.float64(), st.floats(allow_nan=True, allow_infinity=True)),
    "date": (pa.date32(), st.dates(min_value=dt.date(1800, 1, 1))),
    "ts": (pa.timestamp("us"), st.datetimes(min_value=dt.datetime(1900, 1, 1))),
    "dec": (pa.decimal128(12, 3), st.decimals(min_value=D("-999999999.999"), max_value=D("999999999.999"), places=3,
                                              allow_nan=False, allow_infinity=False)),
    "s": (pa.string(), st.sampled_from(["", "a", "b", "é", "a longer text"])),
    "ls": (pa.large_string(), st.text(max_size=5)),
    "ds": (pa.dictionary(pa.int32(), pa.string()), st.sampled_from(["x", "y", ""])),
}


@st.composite
def key_columns(draw):
    kinds = draw(st.lists(st.sampled_from(sorted(STRATEGIES)), min_size=1, max_size=3))
    n = draw(st.integers(0, 25))
    columns = []
    for kind in kinds:
        t, values = STRATEGIES[kind]
        data = draw(st.lists(st.one_of(st.none(), values), min_size=n, max_size=n))
        columns.append(pa.array(data, t.value_type).dictionary_encode() if pa.types.is_dictionary(t)
                       else pa.array(data, t))
    return columns


@settings(max_examples=80, deadline=None)
@given(columns=key_columns(), n=st.sampled_from([1, 2, 7, 200, 2**31 + 11, 2**62 + 3]))
def test_partition_ids_equal_the_cpu_ids(xp, columns, n):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the int64 arithmetic must not make numpy warn
        got = to_host(hash_partition_ids([column_to_device(c, xp) for c in columns], n, xp)).tolist()
    assert got == cpu_hash_partition_ids(columns, n).tolist()


@settings(max_examples=40, deadline=None)
@given(columns=key_columns())
def test_row_hashes_have_the_cpu_hash_bits(xp, columns):
    got = np.array(to_host(column_hashes(column_to_device(columns[0], xp), xp)), dtype=np.int64).view(np.uint64)
    assert got.tolist() == hash_columns(columns[:1]).tolist()


def test_equal_keys_of_every_layout_share_a_partition(xp):
    values = ["k1", None, "k2", "k1"]
    layouts = [pa.array(values), pa.array(values, pa.large_string()), pa.array(values).dictionary_encode()]
    ids = [to_host(hash_partition_ids([column_to_device(a, xp)], 13, xp)).tolist() for a in layouts]
    assert ids[0] == ids[1] == ids[2] and ids[0][0] == ids[0][3]
    floats = pa.array([0.0, -0.0, float("nan"), -float("nan")])
    f_ids = to_host(hash_partition_ids([column_to_device(floats, xp)], 1000, xp)).tolist()
    assert f_ids[0] == f_ids[1] and f_ids[2] == f_ids[3]


def test_no_key_columns_is_an_error(xp):
    with pytest.raises(ValueError, match="at least one key"):
        hash_partition_ids([], 4, xp)
