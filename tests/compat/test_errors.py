"""Error paths: both engines refuse the program; Quiver's exception is actionable."""
from __future__ import annotations

import pytest

from .data import people
from .harness import assert_both_raise, quiver_engine


def _analysis_exception():
    from quiver.engine.core.errors import AnalysisException
    return AnalysisException


def _parse_exception():
    from quiver.engine.core.errors import ParseException
    return ParseException


def test_select_missing_column_names_it_lists_columns_and_suggests():
    def program(spark, F, T, Window):
        return people(spark).select("agee").collect()
    exc = assert_both_raise(program, _analysis_exception_or_any(), match=["agee", "age", "name", "salary"])
    if not quiver_engine().name.startswith("pyspark"):
        message = str(exc)
        assert "Did you mean 'age'" in message, message
        assert "Available columns" in message, message


def test_missing_column_in_filter_with_col():
    def program(spark, F, T, Window):
        return people(spark).filter(F.col("cty") == "Paris").collect()
    assert_both_raise(program, _analysis_exception_or_any(), match=["cty", "city"])


def test_missing_column_in_with_column_expression():
    def program(spark, F, T, Window):
        return people(spark).withColumn("x", F.col("salry") * 2).collect()
    assert_both_raise(program, _analysis_exception_or_any(), match=["salry", "salary"])


def test_missing_column_in_group_by_and_agg():
    def program(spark, F, T, Window):
        return people(spark).groupBy("citi").agg(F.sum("age")).collect()
    assert_both_raise(program, _analysis_exception_or_any(), match=["citi", "city"])


def test_missing_column_in_order_by():
    def program(spark, F, T, Window):
        return people(spark).orderBy("nam").collect()
    assert_both_raise(program, _analysis_exception_or_any(), match=["nam", "name"])


def test_missing_join_key():
    def program(spark, F, T, Window):
        a = people(spark)
        b = spark.createDataFrame([(1, "x")], "id int, v string")
        return a.join(b, "idd").collect()
    assert_both_raise(program, _analysis_exception_or_any(), match=["idd"])


@pytest.mark.parametrize("ddl", ["id integr, name string", "id int name string", "id array<int", "id decimal(x,2)"])
def test_bad_type_string_in_schema(ddl):
    def program(spark, F, T, Window):
        return spark.createDataFrame([(1, "a")], ddl).collect()
    assert_both_raise(program, _analysis_exception_or_any())


def test_bad_type_string_in_cast():
    def program(spark, F, T, Window):
        return people(spark).select(F.col("age").cast("integr")).collect()
    assert_both_raise(program, _analysis_exception_or_any(), match=["integr"])


def test_union_of_different_column_counts():
    def program(spark, F, T, Window):
        a = spark.createDataFrame([(1, "a")], "id int, v string")
        b = spark.createDataFrame([(1, "a", 2.0)], "id int, v string, w double")
        return a.union(b).collect()
    assert_both_raise(program, _analysis_exception_or_any(), match=["2", "3"])


def test_union_by_name_missing_column_without_allow():
    def program(spark, F, T, Window):
        a = spark.createDataFrame([(1, "a")], "id int, v string")
        b = spark.createDataFrame([(1, 2.0)], "id int, w double")
        return a.unionByName(b).collect()
    assert_both_raise(program, _analysis_exception_or_any(), match=["v"])


def test_ambiguous_column_after_join():
    def program(spark, F, T, Window):
        a = spark.createDataFrame([(1, "a")], "k int, v string")
        b = spark.createDataFrame([(1, "b")], "k int, v string")
        return a.join(b, a.k == b.k).select("v").collect()
    assert_both_raise(program, _analysis_exception_or_any(), match=["v", "ambiguous"])


def test_missing_qualified_column_after_alias():
    def program(spark, F, T, Window):
        return people(spark).alias("p").select(F.col("p.nme")).collect()
    assert_both_raise(program, _analysis_exception_or_any(), match=["nme"])


def test_error_exception_is_quiver_error_subclass():
    from quiver.engine.core.errors import AnalysisException, ParseException, QuiverError

    assert issubclass(AnalysisException, QuiverError)
    assert issubclass(ParseException, AnalysisException)


def _analysis_exception_or_any():
    """Quiver's AnalysisException (importing it is part of the contract)."""
    if quiver_engine().name.startswith("pyspark"):
        return Exception
    return _analysis_exception()
