"""The function catalog and the F wrappers against PySpark: column names and result types.

Each case calls the same function with the same arguments through `pyspark.sql.functions`
and `quiver.functions`; the PySpark column name and Spark type (from one select over a
typed, empty DataFrame) are the expected values, so the table is PySpark's, not ours.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass

import pytest

from quiver import functions as QF
from quiver.engine.core import types as T
from quiver.engine.core.errors import AnalysisException
from quiver.engine.core.expressions import Cast, Expr, Literal, ScalarFunction, UnresolvedColumn
from quiver.engine.analysis.functions.catalog import SCALAR_FUNCTIONS, common_type, lookup, result_type_of
from quiver.executors.cpu.kernels import KERNELS

os.environ["TZ"] = "UTC"
time.tzset()

SCHEMA = {
    "s": T.StringType(), "s2": T.StringType(), "pat": T.StringType(), "i": T.IntegerType(), "l": T.LongType(),
    "d": T.DoubleType(), "dec": T.DecimalType(5, 2), "t": T.DateType(), "ts": T.TimestampType(),
    "arr": T.ArrayType(T.StringType()), "b": T.BooleanType(), "f": T.FloatType(),
}

_UNARY_MATH = ["sqrt", "cbrt", "exp", "expm1", "ln", "log10", "log2", "log1p", "sin", "cos", "tan", "asin", "acos",
               "atan", "sinh", "cosh", "tanh", "degrees", "radians", "signum", "sign"]
_DATE_FIELDS = ["year", "month", "dayofmonth", "day", "dayofweek", "dayofyear", "quarter", "weekofyear", "weekday"]

CASES: list[tuple[str, tuple]] = [
    ("upper", ("s",)), ("lower", ("s",)), ("ucase", ("s",)), ("lcase", ("s",)), ("initcap", ("s",)),
    ("trim", ("s",)), ("ltrim", ("s",)), ("rtrim", ("s",)), ("trim", ("s", "s2")), ("ltrim", ("s", "s2")),
    ("btrim", ("s",)), ("length", ("s",)), ("length", ("i",)), ("char_length", ("s",)), ("character_length", ("s",)),
    ("octet_length", ("s",)), ("bit_length", ("s",)), ("ascii", ("s",)), ("upper", ("d",)),
    ("substring", ("s", 1, 3)), ("substring", ("s", 0, 2)), ("substring", ("s", "i", "i")), ("substr", ("s", "i")),
    ("substr", ("s", "i", "i")), ("concat", ("s", "s2")), ("concat", ("s", "i", "d")), ("concat_ws", ("-", "s", "s2")),
    ("concat_ws", (",", "arr", "s")), ("regexp_replace", ("s", "a", "b")), ("regexp_replace", ("s", "(a)", "$1", 2)),
    ("regexp_extract", ("s", "(a)", 1)), ("lpad", ("s", 5, "x")), ("rpad", ("s", 5, "xy")), ("instr", ("s", "b")),
    ("locate", ("b", "s")), ("locate", ("b", "s", 2)), ("reverse", ("s",)), ("repeat", ("s", 2)),
    ("translate", ("s", "ab", "xy")), ("split", ("s", ",")), ("split", ("s", ",", 2)), ("startswith", ("s", "s2")),
    ("endswith", ("s", "s2")), ("contains", ("s", "s2")), ("like", ("s", "pat")), ("ilike", ("s", "pat")),
    ("rlike", ("s", "pat")), ("regexp", ("s", "pat")), ("regexp_like", ("s", "pat")), ("md5", ("s",)),
    ("sha1", ("s",)), ("sha2", ("s", 256)),
    ("coalesce", ("i", "l")), ("coalesce", ("s", "s2")), ("coalesce", ("i", "dec")), ("ifnull", ("i", "d")),
    ("nvl", ("s", "s2")), ("nvl2", ("s", "i", "d")), ("nullif", ("i", "l")), ("isnull", ("s",)),
    ("isnotnull", ("s",)), ("isnan", ("d",)), ("isnan", ("f",)), ("nanvl", ("d", "d")), ("nanvl", ("f", "f")),
    ("abs", ("i",)), ("abs", ("dec",)), ("abs", ("f",)), ("round", ("d",)), ("round", ("d", 2)), ("round", ("dec",)),
    ("round", ("dec", 1)), ("round", ("dec", 3)), ("round", ("dec", -1)), ("round", ("i", -1)), ("round", ("f", 1)),
    ("bround", ("d",)), ("bround", ("dec", 1)), ("log", ("d",)), ("log", (2.0, "d")),
    ("pow", ("d", 2)), ("power", ("d", "i")), ("pow", (2, "d")), ("atan2", ("d", "i")), ("hypot", ("d", "i")),
    ("floor", ("d",)), ("floor", ("dec",)), ("ceil", ("d",)), ("ceil", ("i",)), ("ceiling", ("d",)),
    ("floor", ("d", 1)), ("ceil", ("dec", 1)), ("ceil", ("i", -1)), ("floor", ("f",)),
    ("greatest", ("i", "d")), ("least", ("i", "l")), ("greatest", ("s", "s2")), ("greatest", ("i", "dec")),
    ("least", ("t", "ts")),
    *[(name, ("d",)) for name in _UNARY_MATH], ("signum", ("dec",)), ("sqrt", ("i",)),
    *[(name, ("t",)) for name in _DATE_FIELDS], ("year", ("ts",)), ("month", ("s",)),
    ("hour", ("ts",)), ("minute", ("ts",)), ("second", ("ts",)), ("hour", ("t",)), ("last_day", ("t",)),
    ("date_add", ("t", 1)), ("date_add", ("t", "i")), ("date_add", ("ts", 1)), ("date_sub", ("t", 1)),
    ("dateadd", ("t", 1)), ("datediff", ("t", "ts")), ("date_diff", ("t", "ts")), ("add_months", ("t", 1)),
    ("months_between", ("ts", "t")), ("months_between", ("ts", "t", False)), ("to_date", ("s",)),
    ("to_date", ("s", "dd/MM/yyyy")), ("to_date", ("ts",)), ("to_timestamp", ("s",)),
    ("to_timestamp", ("s", "yyyy-MM-dd HH:mm")), ("to_timestamp", ("t",)), ("date_format", ("ts", "yyyy-MM-dd")),
    ("date_format", ("t", "yyyy")), ("current_date", ()), ("current_timestamp", ()), ("now", ()),
    ("date_trunc", ("month", "ts")), ("date_trunc", ("month", "t")), ("trunc", ("t", "MM")),
    ("unix_timestamp", ()), ("unix_timestamp", ("ts",)), ("unix_timestamp", ("s", "dd/MM/yyyy")),
    ("to_unix_timestamp", ("s",)), ("from_unixtime", ("l",)), ("from_unixtime", ("l", "yyyy")),
    ("size", ("arr",)), ("cardinality", ("arr",)), ("array_contains", ("arr", "a")), ("reverse", ("arr",)),
    ("sort_array", ("arr",)), ("sort_array", ("arr", False)),
]


def _case_id(case: tuple[str, tuple]) -> str:
    return f"{case[0]}({', '.join(map(repr, case[1]))})"


@pytest.fixture(scope="module")
def pyspark_columns(pyspark_legacy):
    """(name, Spark type) PySpark gives each case, from one select over an empty typed DataFrame."""
    from pyspark.sql import functions as PF

    spark = pyspark_legacy
    df = spark.createDataFrame([], ", ".join(f"{n} {t.simpleString()}" for n, t in SCHEMA.items()))
    selected = df.select(*[getattr(PF, name)(*args) for name, args in CASES])
    return list(zip(selected.columns, [t for _, t in selected.dtypes]))


@dataclass(frozen=True)
class _TypedColumn(Expr):
    """A resolved column for typing without a plan: a name and a type."""

    name: str
    data_type: T.DataType

    @property
    def dtype(self) -> T.DataType:
        return self.data_type

    def sql(self) -> str:
        return self.name


def _analyze(expr: Expr) -> Expr:
    """What the analyzer does for scalar functions: resolve columns, insert the catalog's casts."""
    if isinstance(expr, UnresolvedColumn):
        return _TypedColumn(expr.parts[-1], SCHEMA[expr.parts[-1]])
    if isinstance(expr, ScalarFunction):
        args = [_analyze(a) for a in expr.args]
        spec = lookup(expr.name)
        if spec.input_types is not None:
            targets = spec.input_types([a.dtype for a in args])
            args = [a if t is None else Cast(a, t) for a, t in zip(args, targets)]
        return ScalarFunction(expr.name, tuple(args))
    return expr


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_name_and_type_match_pyspark(case, pyspark_columns):
    name, args = case
    expected_name, expected_type = pyspark_columns[CASES.index(case)]
    column = getattr(QF, name)(*args)
    assert column.expr.sql() == expected_name
    analyzed = _analyze(column.expr)
    assert result_type_of(analyzed.name, analyzed.args).simpleString() == expected_type


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
    ("date_add", [T.DateType(), T.LongType()], r"function date_add: the second argument must be INT, SMALLINT or TINYINT"),
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


def test_round_type_needs_the_literal_scale_and_is_wide_without_it():
    spec = lookup("round")
    assert spec.literal_result_type([T.DecimalType(5, 2), T.IntegerType()], [None, 1]) == T.DecimalType(5, 1)
    assert spec.result_type([T.DecimalType(5, 2), T.IntegerType()]) == T.DecimalType(6, 2)


def test_struct_field_type_comes_from_the_literal_name():
    struct = T.StructType([T.StructField("a", T.IntegerType()), T.StructField("B", T.StringType())])
    assert result_type_of("get_field", [_TypedColumn("st", struct), Literal.of("a")]) == T.IntegerType()
    assert result_type_of("get_field", [_TypedColumn("st", struct), Literal.of("b")]) == T.StringType()
    with pytest.raises(AnalysisException, match="field 'z' does not exist.*fields are a, B"):
        result_type_of("get_field", [_TypedColumn("st", struct), Literal.of("z")])


def test_sha2_rejects_bit_lengths_pyspark_rejects():
    with pytest.raises(ValueError, match="numBits must be one of"):
        QF.sha2("s", 100)
