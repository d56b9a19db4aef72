"""The function catalog (quiver/engine/analysis/functions/catalog.py): every function it knows has a CPU
kernel, lookup and its errors, the argument kinds' implicit casts and errors, and common types.

The entries of each domain are checked against PySpark in the test module of the same name.
"""
from __future__ import annotations

import pytest

from quiver.engine.analysis.functions.catalog import SCALAR_FUNCTIONS, common_type, lookup
from quiver.engine.core import types as T
from quiver.engine.core.errors import AnalysisException
from quiver.executors.cpu.kernels import KERNELS


def test_every_catalog_function_has_a_cpu_kernel():
    assert sorted(set(SCALAR_FUNCTIONS) - set(KERNELS)) == []
    assert sorted(set(KERNELS) - set(SCALAR_FUNCTIONS)) == []


def test_spec_names_are_their_lookup_keys():
    assert all(spec.name == key for key, spec in SCALAR_FUNCTIONS.items())


def test_lookup_is_case_insensitive():
    assert lookup("UPPER") is lookup("upper")


def test_unknown_function_suggests_close_names():
    with pytest.raises(AnalysisException, match=r"undefined function 'uper'.*'upper'"):
        lookup("uper")


@pytest.mark.parametrize("name, types, fragment", [
    ("sqrt", [T.BooleanType()], r"function sqrt: the first argument must be DOUBLE.*but it is boolean"),
    ("upper", [T.ArrayType(T.StringType())], r"function upper: the first argument must be STRING.*array<string>"),
    ("year", [T.IntegerType()], r"function year: the first argument must be DATE.*but it is int"),
    ("date_add", [T.DateType(), T.LongType()],
     r"function date_add: the second argument must be INT, SMALLINT or TINYINT"),
    ("size", [T.StringType()], r"function size: the first argument must be ARRAY or MAP"),
    ("if", [T.IntegerType(), T.IntegerType(), T.IntegerType()], r"function if: the first argument must be BOOLEAN"),
    ("greatest", [T.IntegerType(), T.StringType()], r"function greatest: arguments must share a type.*int, string"),
    ("array_contains", [T.ArrayType(T.IntegerType()), T.StringType()], r"array_contains: the value must have"),
])
def test_bad_argument_types_name_function_argument_and_valid_types(name, types, fragment):
    with pytest.raises(AnalysisException, match=fragment):
        lookup(name).input_types(types)


def test_coalesce_promotes_to_string_but_greatest_does_not():
    assert common_type("coalesce", [T.IntegerType(), T.StringType()], True) == T.StringType()
    assert common_type("coalesce", [T.NullType(), T.DateType(), T.TimestampType()], True) == T.TimestampType()
    with pytest.raises(AnalysisException):
        common_type("greatest", [T.IntegerType(), T.StringType()], False)


def test_implicit_casts_requested_by_the_catalog():
    assert lookup("upper").input_types([T.IntegerType()]) == [T.StringType()]
    assert lookup("sqrt").input_types([T.StringType()]) == [T.DoubleType()]
    assert lookup("year").input_types([T.TimestampType()]) == [T.DateType()]
    assert lookup("upper").input_types([T.StringType()]) == [None]
