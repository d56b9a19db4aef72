"""quiver/executors/device/kernels/columns.py: Arrow -> device -> Arrow gives back the same batch, value for value."""
from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal as D

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quiver.executors.base import DeviceFallback
from quiver.executors.device.kernels.columns import (
    DeviceBatch,
    device_nbytes,
    device_type_supported,
    to_arrow,
    to_device,
    to_host,
    unify_dictionaries,
)


def _exact(values: list) -> list:
    """Python values with NaN and the sign of zero made comparable."""
    out = []
    for v in values:
        if isinstance(v, float):
            v = ("nan",) if math.isnan(v) else (v, math.copysign(1.0, v))
        out.append(v)
    return out


def assert_same_batch(got: pa.RecordBatch, want: pa.RecordBatch) -> None:
    assert got.schema.names == want.schema.names
    for name in want.schema.names:
        g, w = got.column(name), want.column(name)
        assert g.type == w.type, name
        assert _exact(g.to_pylist()) == _exact(w.to_pylist()), name


SAMPLE = pa.record_batch({
    "i8": pa.array([1, None, -128, 127], pa.int8()),
    "i64": pa.array([2**63 - 1, -(2**63), None, 0], pa.int64()),
    "u16": pa.array([0, 65535, None, 7], pa.uint16()),
    "u64": pa.array([2**64 - 1, None, 0, 5], pa.uint64()),
    "f32": pa.array([float("nan"), -0.0, None, 1.5], pa.float32()),
    "f64": pa.array([float("inf"), float("-inf"), -0.0, None]),
    "b": pa.array([True, None, False, True]),
    "d": pa.array([dt.date(2020, 2, 29), None, dt.date(1900, 1, 1), dt.date(1970, 1, 1)]),
    "ts": pa.array([-1, None, 1_700_000_000_000_000, 0], pa.timestamp("us")),
    "tsz": pa.array([5, 6, None, -7], pa.timestamp("us", tz="Europe/Paris")),
    "dec": pa.array([D("-12.345"), None, D("999999999999999.999"), D("-999999999999999.999")], pa.decimal128(18, 3)),
    "dec0": pa.array([D(-1), D(0), None, D(42)], pa.decimal128(2, 0)),
    "s": pa.array(["b", None, "a", "b"]),
    "ls": pa.array(["", "x", "x", None], pa.large_string()),
    "dict": pa.array(["q", None, "p", "q"]).dictionary_encode(),
    "dict8": pa.DictionaryArray.from_arrays(pa.array([1, 0, None, 1], pa.int8()), pa.array(["z", "y"])),
})


def test_round_trip_keeps_every_supported_type_value_and_null(xp):
    assert_same_batch(to_arrow(to_device(SAMPLE, xp)), SAMPLE)


def test_round_trip_of_sliced_columns_reads_from_their_offset(xp):
    sliced = SAMPLE.slice(1, 2)
    back = to_arrow(to_device(sliced, xp))
    assert back.num_rows == 2
    assert_same_batch(back, sliced)


def test_round_trip_of_an_empty_batch_and_of_all_null_columns(xp):
    empty = SAMPLE.slice(0, 0)
    assert_same_batch(to_arrow(to_device(empty, xp)), empty)
    nulls = pa.record_batch({"s": pa.nulls(3, pa.string()), "d": pa.nulls(3, pa.decimal128(5, 2)),
                             "f": pa.nulls(3, pa.float64())})
    assert_same_batch(to_arrow(to_device(nulls, xp)), nulls)


def test_dictionary_columns_come_back_as_the_same_dictionary_array(xp):
    back = to_arrow(to_device(SAMPLE, xp))
    assert back.column("dict").equals(SAMPLE.column("dict"))
    assert back.column("dict8").equals(SAMPLE.column("dict8"))


def test_a_dictionary_with_repeats_or_nulls_is_re_encoded_to_distinct_values(xp):
    arr = pa.DictionaryArray.from_arrays(pa.array([0, 1, 2, 3], pa.int32()), pa.array(["a", "a", None, "b"]))
    batch = pa.record_batch({"k": arr})
    col = to_device(batch, xp).column("k")
    assert col.dictionary.to_pylist() in (["a", "b"], ["b", "a"])
    assert to_arrow(to_device(batch, xp)).column("k").to_pylist() == ["a", "a", None, "b"]


def test_storage_holds_decimals_as_unscaled_ints_strings_as_codes_and_zero_in_null_slots(xp):
    d = to_device(SAMPLE, xp)
    assert to_host(d.column("dec").values).tolist() == [-12345, 0, 999999999999999999, -999999999999999999]
    assert to_host(d.column("d").values).tolist() == [18321, 0, -25567, 0]
    s = d.column("s")
    assert [s.dictionary[c].as_py() for c in to_host(s.values).tolist()] == ["b", "b", "a", "b"]
    assert to_host(s.valid).tolist() == [True, False, True, True]
    assert d.column("i8").values.dtype == xp.int8 and d.column("f32").values.dtype == xp.float32
    assert to_host(d.column("f32").values).tolist()[2] == 0.0
    no_nulls = to_device(pa.record_batch({"x": pa.array([1, 2])}), xp)
    assert no_nulls.column("x").valid is None


rows = st.lists(st.tuples(
    st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)),
    st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True)),
    st.one_of(st.none(), st.decimals(min_value=D("-9999999999.99999999"), max_value=D("9999999999.99999999"),
                                     places=8, allow_nan=False, allow_infinity=False)),
    st.one_of(st.none(), st.sampled_from(["", "a", "é", "long text", "b"])),
    st.one_of(st.none(), st.booleans()),
), max_size=30)


@settings(max_examples=40, deadline=None)
@given(data=rows, start=st.integers(0, 5))
def test_round_trip_property(xp, data, start):
    cols = list(zip(*data)) if data else [[]] * 5
    types = [pa.int64(), pa.float64(), pa.decimal128(18, 8), pa.string(), pa.bool_()]
    batch = pa.record_batch([pa.array(list(c), t) for c, t in zip(cols, types)], names=["i", "f", "d", "s", "b"])
    batch = batch.slice(min(start, batch.num_rows))
    assert_same_batch(to_arrow(to_device(batch, xp)), batch)


@pytest.mark.parametrize("t", [pa.decimal256(40, 2), pa.timestamp("ms"), pa.list_(pa.int64()),
                               pa.binary(), pa.float16(), pa.date64(), pa.null(),
                               pa.dictionary(pa.int32(), pa.int64())])
def test_unsupported_types_raise_a_type_error_naming_column_and_type(xp, t):
    assert not device_type_supported(t)
    batch = pa.record_batch({"ok": pa.array([1]), "bad": pa.nulls(1, t)})
    with pytest.raises(TypeError, match=r"column 'bad' has type .*no device representation"):
        to_device(batch, xp)


@pytest.mark.parametrize("t",
                         [pa.int8(), pa.uint64(), pa.float32(), pa.bool_(), pa.date32(), pa.timestamp("us", tz="UTC"),
                               pa.decimal128(18, 18), pa.decimal128(19, 2), pa.decimal128(38, 10), pa.large_string(),
                               pa.dictionary(pa.int16(), pa.large_string())])
def test_supported_types(t):
    assert device_type_supported(t)


def test_missing_column_error_names_it_and_the_columns_present(xp):
    d = to_device(SAMPLE.select(["i8", "s"]), xp)
    assert isinstance(d, DeviceBatch) and d.num_rows == 4
    with pytest.raises(KeyError, match=r"'nope'.*columns: i8, s"):
        d.column("nope")


def test_device_nbytes_counts_values_and_validity(xp):
    batch = pa.record_batch({"a": pa.array([1, None, 3], pa.int32()), "b": pa.array([1.0, 2.0, 3.0]),
                             "s": pa.array(["x", "y", "x"])})
    assert device_nbytes(to_device(batch, xp)) == 3 * 4 + 3 + 3 * 8 + 3 * 4


def test_unify_dictionaries_gives_equal_strings_equal_codes(xp):
    a = to_device(pa.record_batch({"s": pa.array(["x", "y", None])}), xp).column("s")
    b = to_device(pa.record_batch({"s": pa.array(["z", "y", "x", "x"])}), xp).column("s")
    ua, ub = unify_dictionaries([a, b], xp)
    assert ua.dictionary.equals(ub.dictionary)
    assert to_host(ua.values).tolist()[:2] == to_host(a.values).tolist()[:2]
    decode = [ub.dictionary[c].as_py() for c in to_host(ub.values).tolist()]
    assert decode == ["z", "y", "x", "x"]
    assert np.array_equal(to_host(ub.values)[[1, 2]], to_host(ua.values)[[1, 0]])


WIDE = pa.record_batch({
    "sum": pa.array([D("-12.3456"), None, D(2**63 - 1).scaleb(-4), D(-(2**63)).scaleb(-4), D(0)], pa.decimal128(38, 4)),
    "p19": pa.array([D(10**18), D(-(10**18)), None, D(7), D(-1)], pa.decimal128(19, 0)),
})


def test_wide_decimals_travel_as_int64_while_their_values_fit(xp):
    d = to_device(WIDE, xp)
    assert to_host(d.column("sum").values).tolist() == [-123456, 0, 2**63 - 1, -(2**63), 0]
    assert_same_batch(to_arrow(d), WIDE)
    assert_same_batch(to_arrow(to_device(WIDE.slice(2, 3), xp)), WIDE.slice(2, 3))


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, 10**20, -(10**37), 2**64])
def test_a_wide_decimal_beyond_64_bits_falls_back_naming_the_column(xp, value):
    batch = pa.record_batch({"ok": pa.array([1, 2, 3]),
                             "big": pa.array([D(1), None, D(value)], pa.decimal128(38, 0))})
    with pytest.raises(DeviceFallback, match=rf"column 'big' of type decimal128\(38, 0\) holds {value} \(row 2\)"):
        to_device(batch, xp)
    assert to_host(to_device(batch.slice(0, 2), xp).column("big").values).tolist() == [1, 0]


def test_a_null_slot_holding_a_wide_value_is_not_checked(xp):
    """Arrow leaves a null slot's bytes undefined: only valid slots must fit."""
    words = np.array([5, 0, 0, 1, -7, -1], dtype=np.int64)  # 5, 2**64 (null), -7
    validity = pa.array([True, False, True]).buffers()[1]
    arr = pa.Array.from_buffers(pa.decimal128(30, 2), 3, [validity, pa.py_buffer(words)], null_count=1)
    back = to_arrow(to_device(pa.record_batch({"d": arr}), xp)).column("d")
    assert back.to_pylist() == [D("0.05"), None, D("-0.07")]
