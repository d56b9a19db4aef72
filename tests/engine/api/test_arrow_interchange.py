"""A DataFrame through the Arrow PyCapsule interface: Arrow consumers (pyarrow, Polars, DuckDB) read Quiver's
results, and createDataFrame takes their tables, each round trip keeping columns, types and rows."""
from __future__ import annotations

import datetime as dt
import decimal

import pandas as pd
import pyarrow as pa
import pytest

from quiver import functions as F
from quiver.engine.core.errors import AnalysisException


@pytest.fixture
def df(spark):
    rows = [(1, "a", 1.5, dt.date(2024, 1, 2), decimal.Decimal("3.25")),
            (2, None, None, None, None),
            (3, "c", -0.5, dt.date(1999, 12, 31), decimal.Decimal("-1.00"))]
    return spark.createDataFrame(rows, "id long, name string, score double, day date, price decimal(10,2)")


def test_pyarrow_reads_the_result_and_its_schema(df, spark):
    spark.range(1).collect()
    before = spark.lastJob()
    schema = pa.schema(df)
    assert spark.lastJob() is before, "reading the schema must not run the query"
    assert schema == df.toArrow().schema
    assert schema.types == [pa.int64(), pa.string(), pa.float64(), pa.date32(), pa.decimal128(10, 2)]
    assert pa.table(df).equals(df.toArrow())
    assert pa.RecordBatchReader.from_stream(df).read_all().equals(df.toArrow())


def test_polars_reads_the_result_and_to_polars_gives_the_same_frame(df):
    pl = pytest.importorskip("polars")
    frame = pl.DataFrame(df)
    assert frame.columns == df.columns and frame.height == 3
    assert frame.equals(df.toPolars())
    assert frame.rows() == [tuple(r) for r in df.collect()]


def test_to_polars_names_the_columns_polars_cannot_hold_twice(spark):
    pytest.importorskip("polars")
    left = spark.range(3).withColumn("v", F.col("id") * 2)
    right = spark.range(3).withColumn("v", F.col("id") * 3)
    with pytest.raises(AnalysisException, match="distinct column names, and id, v appear more than once"):
        left.join(right, left.id == right.id).toPolars()


def test_duckdb_queries_a_dataframe_by_its_variable_name(df):
    duckdb = pytest.importorskip("duckdb")
    quiver_df = df  # noqa: F841 - DuckDB finds the DataFrame by this name
    [(total, count)] = duckdb.sql("SELECT sum(id), count(name) FROM quiver_df").fetchall()
    assert (total, count) == (6, 2)


def test_create_dataframe_takes_what_polars_duckdb_and_arrow_streams_export(df, spark):
    pl = pytest.importorskip("polars")
    duckdb = pytest.importorskip("duckdb")
    expected = [tuple(r) for r in df.collect()]
    through_polars = spark.createDataFrame(df.toPolars())
    assert through_polars.dtypes == df.dtypes
    assert [tuple(r) for r in through_polars.collect()] == expected
    relation = duckdb.sql("SELECT 1::BIGINT AS id, 'x' AS name UNION ALL SELECT 2, NULL ORDER BY id")
    assert [tuple(r) for r in spark.createDataFrame(relation).collect()] == [(1, "x"), (2, None)]
    assert spark.createDataFrame(relation).dtypes == [("id", "bigint"), ("name", "string")]
    reader = pa.RecordBatchReader.from_batches(pa.table(df).schema, pa.table(df).to_batches())
    assert [tuple(r) for r in spark.createDataFrame(reader).collect()] == expected
    # Polars' own layouts (string views, categoricals, unsigned integers) take their Spark types.
    odd = pl.DataFrame({"u": pl.Series([1, 2], dtype=pl.UInt32), "c": pl.Series(["p", "q"], dtype=pl.Categorical)})
    assert spark.createDataFrame(odd).dtypes == [("u", "bigint"), ("c", "string")]
    assert [tuple(r) for r in spark.createDataFrame(odd).collect()] == [(1, "p"), (2, "q")]


def test_create_dataframe_of_pandas_with_arrow_dtypes_keeps_their_types(spark):
    frame = pd.DataFrame({"n": pd.Series([1, None], dtype="int32[pyarrow]"),
                          "s": pd.Series(["a", "b"], dtype="string[pyarrow]")})
    created = spark.createDataFrame(frame)
    assert created.dtypes == [("n", "int"), ("s", "string")]
    assert [tuple(r) for r in created.collect()] == [(1, "a"), (None, "b")]
