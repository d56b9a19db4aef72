"""The kernel registry (quiver/executors/cpu/kernels/registry.py): a call whose arguments are all literals
folds to a scalar, equal to what the kernel gives on a column of those values."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest

from quiver.engine.analysis.functions.catalog import lookup
from quiver.engine.core import types as T
from quiver.executors.cpu.cast import cast_array
from quiver.executors.cpu.kernels import KERNELS
from tests.executors.cpu.kernels.harness import NAN, same

FOLDING = [
    ("upper", ["abc"]), ("substring", ["abcdef", 2, 3]), ("concat_ws", ["-", "a", None, "b"]), ("round", [2.5, 0]),
    ("round", [Decimal("2.55"), 1]), ("regexp_replace", ["aab", "a", "x"]), ("split", ["a,b", ","]),
    ("date_add", [dt.date(2024, 1, 31), 1]), ("date_format", [dt.datetime(2024, 1, 5, 10), "yyyy/MM/dd HH"]),
    ("coalesce", [None, 3]), ("greatest", [1.0, NAN]), ("locate", ["b", "abcb", 3]), ("lpad", ["a", 4, "xy"]),
    ("to_date", ["05/01/2024", "dd/MM/yyyy"]), ("array_contains", [["a", None], "b"]), ("isnan", [None]),
]


@pytest.mark.parametrize("name, values", FOLDING, ids=[f[0] for f in FOLDING])
def test_all_literal_arguments_fold_to_a_scalar_equal_to_the_column_result(name, values):
    scalars = [pa.scalar(v, pa.int32()) if type(v) is int else pa.scalar(v) for v in values]
    spec = lookup(name)
    types = [T.from_arrow(v.type) for v in scalars]
    targets = spec.input_types(types) if spec.input_types else [None] * len(values)
    scalars = [v if t is None else cast_array(v, t) for v, t in zip(scalars, targets)]
    coerced = [T.from_arrow(v.type) for v in scalars]
    rt = spec.literal_result_type(coerced, values) if spec.literal_result_type else spec.result_type(coerced)
    folded = KERNELS[name](scalars, rt)
    assert isinstance(folded, pa.Scalar) and folded.type == rt.to_arrow()
    as_columns = KERNELS[name]([pa.array([v.as_py()] * 3, v.type) if i == 0 else v for i, v in enumerate(scalars)], rt)
    assert all(same(folded.as_py(), x) for x in as_columns.to_pylist())
