"""quiver/engine/api/local_data.py: `createDataFrame` infers the same column names, types and values as PySpark."""
from __future__ import annotations

import datetime as dt
import decimal
import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from quiver import AnalysisException, Row
from quiver.engine.api.local_data import infer_type, to_arrow_table


def _rows(spark_rows) -> list:
    def norm(v):
        if isinstance(v, tuple) and hasattr(v, "__fields__"):  # a Row of either engine
            return tuple(norm(x) for x in v)
        if isinstance(v, dict):
            return sorted((k, norm(x)) for k, x in v.items())
        if isinstance(v, list):
            return [norm(x) for x in v]
        if isinstance(v, float) and math.isnan(v):
            return "NaN"
        if isinstance(v, (bytes, bytearray)):
            return bytes(v)
        return v
    return [norm(r) for r in spark_rows]


def _pyspark_row(*args, **kwargs):
    from pyspark.sql import Row as PRow

    return PRow(*args, **kwargs)


# Each case builds the same data for either engine from its own Row class.
CASES = {
    "tuples": lambda R: [(1, "a", 1.5, True), (2, None, None, False)],
    "lists": lambda R: [[1, "x"], [None, "y"]],
    "dicts-sorted-by-key": lambda R: [{"b": 1, "a": "x"}, {"a": "y", "b": None}],
    "rows": lambda R: [R(name="a", age=1), R(name="b", age=None)],
    "row-factory": lambda R: [R("k", "v")(1, "one"), R("k", "v")(2, "two")],
    "nulls-then-values": lambda R: [(None, None), (1, "x")],
    "temporal": lambda R: [(dt.date(2024, 2, 29), dt.datetime(2024, 1, 1, 12, 30, 15, 250000))],
    "decimal": lambda R: [(decimal.Decimal("1.25"),), (decimal.Decimal("-100"),)],
    "binary": lambda R: [(b"ab", bytearray(b"\x00\xff"))],
    "array-with-null": lambda R: [([1, None, 3],), ([],)],
    "map": lambda R: [({"a": 1.5, "b": None},), ({},)],
    "struct-from-row": lambda R: [(R(x=1, y="s"),), (None,)],
    "nested-array-of-rows": lambda R: [([R(x=1), R(x=2)],)],
    "tuple-value-is-a-struct": lambda R: [((1, "a"),), ((2, "b"),)],
    "big-and-negative-ints": lambda R: [(2**40, -(2**62)), (0, 2**63 - 1)],
    "special-floats": lambda R: [(float("nan"), float("inf")), (-0.0, float("-inf"))],
}


@pytest.mark.parametrize("case", list(CASES))
def test_inferred_schema_and_rows_match_pyspark(spark, pyspark_session, case):
    from pyspark.sql import Row as PRow

    want = pyspark_session.createDataFrame(CASES[case](PRow))
    got = spark.createDataFrame(CASES[case](Row))
    assert got.dtypes == want.dtypes
    assert _rows(got.collect()) == _rows(want.collect())


PANDAS = {
    "numpy-dtypes": lambda: pd.DataFrame({"i": np.array([1, 2], np.int64), "i32": np.array([3, 4], np.int32),
                                          "f": [1.5, np.nan], "b": [True, False], "s": ["x", None]}),
    "datetime64": lambda: pd.DataFrame({"t": pd.to_datetime(["2024-01-01 10:00:00", "2024-03-01 00:00:00"])}),
}


@pytest.mark.parametrize("case", list(PANDAS))
def test_pandas_input_matches_pyspark(spark, pyspark_session, case):
    want = pyspark_session.createDataFrame(PANDAS[case]())
    got = spark.createDataFrame(PANDAS[case]())
    assert got.dtypes == want.dtypes
    assert _rows(got.collect()) == _rows(want.collect())


@pytest.mark.parametrize("schema", [
    "a INT, b STRING", "a: bigint, b: string", "struct<a:smallint,b:string>", ["a", "b"],
])
def test_explicit_schema_matches_pyspark(spark, pyspark_session, schema):
    data = [(1, "x"), (None, "y")]
    want = pyspark_session.createDataFrame(data, schema)
    got = spark.createDataFrame(data, schema)
    assert got.dtypes == want.dtypes
    assert _rows(got.collect()) == _rows(want.collect())


def test_atomic_type_schema_makes_a_value_column(spark, pyspark_session):
    want = pyspark_session.createDataFrame([1, 2, None], "int")
    got = spark.createDataFrame([1, 2, None], "int")
    assert got.dtypes == want.dtypes
    assert _rows(got.collect()) == _rows(want.collect())


def test_declared_timestamp_ntz_is_kept_like_pyspark(spark, pyspark_session):
    """The Arrow layout of timestamp_ntz is timestamp's; the declared type is what tells them apart."""
    data = [(dt.datetime(2024, 3, 10, 2, 30), [dt.datetime(1999, 12, 31, 23, 59, 59)], dt.datetime(2024, 1, 1))]
    schema = "wall TIMESTAMP_NTZ, walls ARRAY<TIMESTAMP_NTZ>, at TIMESTAMP"
    want = pyspark_session.createDataFrame(data, schema)
    got = spark.createDataFrame(data, schema)
    assert got.dtypes == want.dtypes
    assert got.dtypes == [("wall", "timestamp_ntz"), ("walls", "array<timestamp_ntz>"), ("at", "timestamp")]
    assert _rows(got.collect()) == _rows(want.collect())


@pytest.mark.parametrize("data", [[(1,), (2.5,)], [(True,), (1,)]], ids=["int+float", "bool+int"])
def test_mixed_types_in_a_column_are_rejected_like_pyspark(spark, pyspark_session, data):
    from pyspark.errors import PySparkException

    with pytest.raises(PySparkException):
        pyspark_session.createDataFrame(data)
    with pytest.raises(AnalysisException,
                       match="column '_1' mixes values of type (bigint|boolean) and (double|bigint)"):
        spark.createDataFrame(data)


def test_all_null_column_names_the_column(spark):
    with pytest.raises(AnalysisException, match="'b'.*None.*schema"):
        spark.createDataFrame([(1, None), (2, None)], ["a", "b"])


def test_row_length_mismatch_names_the_row(spark):
    with pytest.raises(AnalysisException, match="row 1 has 1 values but the schema has 2 columns"):
        spark.createDataFrame([(1, "a"), (2,)], "a INT, b STRING")


def test_value_that_does_not_fit_the_declared_type_is_named(spark):
    with pytest.raises(AnalysisException, match=r"column 'a' of type int cannot hold the value 'x'"):
        spark.createDataFrame([("x",)], "a INT")


def test_infer_type_merges_nulls_inside_nested_values():
    from quiver.engine.core import types as T

    assert infer_type([[None], [1, None]], "c") == T.ArrayType(T.LongType())
    assert infer_type([None, {"k": None}, {"k": 1.0}], "c") == T.MapType(T.StringType(), T.DoubleType())


def test_arrow_input_is_normalised_to_spark_layouts():
    table = pa.table({"s": pa.array(["a", None], pa.large_string()), "u": pa.array([1, 2], pa.uint8()),
                      "d": pa.array(["x", "x"]).dictionary_encode()})
    out = to_arrow_table(table)
    assert out.schema.types == [pa.string(), pa.int16(), pa.string()]
    assert out.column("d").to_pylist() == ["x", "x"]
