"""quiver/executors/device/kernels/groupby.py: groups and reductions against pyarrow's Table.group_by, and against a
plain-Python GROUP BY for what Arrow does differently from Spark (NaN and -0.0 keys, NaN in max)."""
from __future__ import annotations

import math
from collections import defaultdict
from decimal import Decimal as D

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quiver.executors.base import DeviceFallback
from quiver.executors.device.kernels.columns import column_to_arrow, to_device, to_host
from quiver.executors.device.kernels.groupby import REDUCTIONS, group_by, segment_reduce

# inf + -inf in a group is NaN, as on the CPU; numpy also warns.
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")

NAMES = ("ki", "kf", "ks", "vi", "vf", "vd", "vb", "vs")
TYPES = (pa.int64(), pa.float64(), pa.string(), pa.int32(), pa.float64(), pa.decimal128(9, 2), pa.bool_(), pa.string())
row = st.tuples(
    st.one_of(st.none(), st.integers(-2, 2)),
    st.one_of(st.none(), st.sampled_from([0.0, -0.0, 1.5, float("nan"), -1.0])),
    st.one_of(st.none(), st.sampled_from(["b", "a", "", "ab"])),
    st.one_of(st.none(), st.integers(-(2**31), 2**31 - 1)),
    # exactly representable partial sums, so any summation order gives the same double
    st.one_of(st.none(), st.sampled_from([0.0, -0.0, 1.5, -2.5, 4.0, float("nan"), float("inf"), float("-inf")])),
    st.one_of(st.none(), st.decimals(min_value=D("-9999999.99"), max_value=D("9999999.99"), places=2,
                                     allow_nan=False, allow_infinity=False)),
    st.one_of(st.none(), st.booleans()),
    st.one_of(st.none(), st.sampled_from(["zeta", "alpha", "Beta", "beta", ""])),
)


def _batch(data) -> pa.RecordBatch:
    cols = list(zip(*data)) if data else [[]] * len(NAMES)
    return pa.record_batch([pa.array(list(c), t) for c, t in zip(cols, TYPES)], names=list(NAMES))


def _key(v):
    """A grouping key as Spark compares it: NaN with NaN, -0.0 with 0.0."""
    if isinstance(v, float):
        return ("nan",) if math.isnan(v) else v + 0.0
    return v


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b and type(a) is type(b)


def _spark_max(values: list):
    return float("nan") if any(isinstance(v, float) and math.isnan(v) for v in values) else max(values)


def _spark_min(values: list):
    numbers = [v for v in values if not (isinstance(v, float) and math.isnan(v))]
    return min(numbers) if numbers else float("nan")


def _expected(values: list, fn: str):
    present = [v for v in values if v is not None]
    if fn == "count_all":
        return len(values)
    if fn == "count":
        return len(present)
    if not present:
        return None
    if fn == "sum":
        total = sum(present)
        if isinstance(total, int):
            total = (total + 2**63) % 2**64 - 2**63
        return total
    if fn == "min":
        return _spark_min(present)
    if fn == "max":
        return _spark_max(present)
    return any(present) if fn == "any" else all(present)


VALUE_REDUCTIONS = {"vi": ("sum", "count", "count_all", "min", "max"), "vf": ("sum", "count", "min", "max"),
                    "vd": ("sum", "min", "max"), "vb": ("any", "all", "count", "min", "max"),
                    "vs": ("min", "max", "count")}


@settings(max_examples=60, deadline=None)
@given(data=st.lists(row, max_size=40),
       key_names=st.lists(st.sampled_from(["ki", "kf", "ks"]), unique=True, max_size=3))
def test_group_by_and_every_reduction_match_a_python_group_by(xp, data, key_names):
    batch = _batch(data)
    device = to_device(batch, xp)
    keys, ids, n_groups = group_by([device.column(k) for k in key_names], xp, num_rows=batch.num_rows)
    key_rows = list(zip(*[column_to_arrow(k).to_pylist() for k in keys])) if keys else [()]
    assert len(key_rows) == n_groups == len({tuple(_key(v) for v in k) for k in key_rows})
    host_ids = to_host(ids).tolist()
    groups: dict = defaultdict(list)
    for i, r in enumerate(batch.to_pylist()):
        want_key = tuple(_key(r[k]) for k in key_names)
        assert tuple(_key(v) for v in key_rows[host_ids[i]]) == want_key
        groups[host_ids[i]].append(r)
    if not key_names:
        assert n_groups == 1
    else:
        assert set(groups) == set(range(n_groups))
    for name, fns in VALUE_REDUCTIONS.items():
        for fn in fns:
            got = column_to_arrow(segment_reduce(device.column(name), ids, n_groups, fn, xp)).to_pylist()
            for g in range(n_groups):
                want = _expected([r[name] for r in groups.get(g, [])], fn)
                assert _same(got[g], want) or (got[g] is None and want is None), (name, fn, g, got[g], want)


@settings(max_examples=40, deadline=None)
@given(data=st.lists(row, max_size=40), key_names=st.lists(st.sampled_from(["ki", "ks"]), unique=True, min_size=1))
def test_reductions_match_pyarrow_group_by(xp, data, key_names):
    batch = _batch(data)
    device = to_device(batch, xp)
    keys, ids, n_groups = group_by([device.column(k) for k in key_names], xp)
    got = {name: column_to_arrow(k) for name, k in zip(key_names, keys)}
    aggregates = [("vi", "sum"), ("vi", "min"), ("vi", "max"), ("vi", "count"), ("vd", "sum"), ("vs", "min"),
                  ("vs", "max"), ("vi", "count_all")]
    for column, fn in aggregates:
        got[f"{column}_{fn}"] = column_to_arrow(segment_reduce(device.column(column), ids, n_groups, fn, xp))
    ours = pa.table(got)
    spec = [(c, "count", pc.CountOptions(mode="all")) if fn == "count_all" else (c, fn) for c, fn in aggregates]
    theirs = pa.Table.from_batches([batch]).group_by(key_names).aggregate(spec)
    # pyarrow names an aggregate column `{column}_{function}`, after the keys or before them by version
    renamed = iter(f"{c}_{fn}" for c, fn in aggregates)
    theirs = theirs.rename_columns([n if n in key_names else next(renamed) for n in theirs.column_names])
    order = [(k, "ascending") for k in key_names]
    ours, theirs = ours.sort_by(order), theirs.select(ours.column_names).sort_by(order)
    for name in ours.column_names:
        assert ours.column(name).to_pylist() == theirs.column(name).to_pylist(), name


def test_the_global_group_exists_without_rows(xp):
    empty = to_device(_batch([]), xp)
    keys, ids, n_groups = group_by([], xp, num_rows=0)
    assert keys == [] and n_groups == 1 and int(ids.shape[0]) == 0
    results = {fn: column_to_arrow(segment_reduce(empty.column("vi" if fn not in ("any", "all") else "vb"), ids, 1, fn,
                                                  xp)).to_pylist() for fn in REDUCTIONS}
    assert results == {"sum": [None], "count": [0], "count_all": [0], "min": [None], "max": [None], "any": [None],
                       "all": [None]}
    with pytest.raises(ValueError, match="num_rows"):
        group_by([], xp)


def test_float_sums_do_not_leak_between_groups(xp):
    """A prefix-sum difference would turn group 1's sum into NaN (inf - inf) or lose it to 1e300 cancellation."""
    batch = pa.record_batch({"g": pa.array([0, 0, 1, 1, 2]), "v": pa.array([float("inf"), 1e300, 1.0, 2.0, -1e300])})
    device = to_device(batch, xp)
    _, ids, n = group_by([device.column("g")], xp)
    assert column_to_arrow(segment_reduce(device.column("v"), ids, n, "sum", xp)).to_pylist() == [float("inf"), 3.0,
                                                                                                  -1e300]


def test_key_columns_come_back_normalised_one_row_per_group(xp):
    batch = pa.record_batch({"k": pa.array([-0.0, float("nan"), None, 0.0, float("-nan"), None])})
    device = to_device(batch, xp)
    keys, ids, n = group_by([device.column("k")], xp)
    values = column_to_arrow(keys[0]).to_pylist()
    assert n == 3 and values[0] is None and values[1] == 0.0 and math.copysign(1.0, values[1]) == 1.0
    assert math.isnan(values[2])
    assert to_host(ids).tolist() == [1, 2, 0, 1, 2, 0]


def test_unknown_reduction_and_sum_of_strings_are_rejected(xp):
    device = to_device(_batch([(1, 1.0, "a", 1, 1.0, D("1.00"), True, "x")]), xp)
    _, ids, n = group_by([device.column("ki")], xp)
    with pytest.raises(ValueError, match="valid: sum, count"):
        segment_reduce(device.column("vi"), ids, n, "median", xp)
    with pytest.raises(TypeError, match="numeric"):
        segment_reduce(device.column("vs"), ids, n, "sum", xp)


def _wide_sums(keys: list, values: list, t: pa.DataType, xp) -> list:
    device = to_device(pa.record_batch({"k": pa.array(keys), "v": pa.array(values, t)}), xp)
    _, ids, n = group_by([device.column("k")], xp)
    total = segment_reduce(device.column("v"), ids, n, "sum", xp)
    return column_to_arrow(total).to_pylist(), total.arrow_type


def test_wide_decimal_sums_are_exact_while_the_largest_group_cannot_leave_int64(xp):
    """Each group's bound is max |v| times the largest group's count, not times every row."""
    big = D(2**62).scaleb(-4)
    sums, t = _wide_sums([0, 1, 2, 2, 3], [big, -big, D("0.0001"), None, -big], pa.decimal128(38, 4), xp)
    assert sums == [big, -big, D("0.0001"), -big] and t == pa.decimal128(38, 4)
    sums, t = _wide_sums([0, 0, 1], [D("1.5"), D("-2.25"), None], pa.decimal128(25, 2), xp)
    assert sums == [D("-0.75"), None] and t == pa.decimal128(35, 2)


def test_a_wide_decimal_sum_that_may_leave_int64_falls_back(xp):
    big = D(2**62).scaleb(-4)
    with pytest.raises(DeviceFallback, match=r"sum of up to 2 decimal128\(38, 4\) values reaching 4611686018427387904"):
        _wide_sums([0, 0, 1], [big, D("-0.0001"), D(1)], pa.decimal128(38, 4), xp)
    # a null is no value: two rows of which one is null bound the sum by max |v| alone
    assert _wide_sums([0, 0, 1], [big, None, big], pa.decimal128(38, 4), xp)[0] == [big, big]


def test_wide_decimal_keys_group_and_order_by_value(xp):
    keys = pa.array([D(2**63 - 1), D(-(2**63)), None, D(2**63 - 1), D(0)], pa.decimal128(38, 0))
    device = to_device(pa.record_batch({"k": keys, "v": keys}), xp)
    groups, ids, n = group_by([device.column("k")], xp)
    assert column_to_arrow(groups[0]).to_pylist() == [None, D(-(2**63)), D(0), D(2**63 - 1)]
    assert column_to_arrow(segment_reduce(device.column("v"), ids, n, "max", xp)).to_pylist() == \
        [None, D(-(2**63)), D(0), D(2**63 - 1)]
