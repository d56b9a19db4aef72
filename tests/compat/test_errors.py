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


# Errors of joins and set operations: one message each, whichever front end built the plan
# (quiver/engine/analysis/builder.py), named as PySpark names them.

@pytest.mark.parametrize("how", ["left outer", "sideways"])
def test_unsupported_join_type(how):
    def program(spark, F, T, Window):
        return people(spark).join(people(spark).select("id"), "id", how).collect()
    assert_both_raise(program, _analysis_exception_or_any(), match=[f"unsupported join type '{how}'", "left_outer"])


@pytest.mark.parametrize("sql", [False, True])
def test_using_column_missing_on_the_right(sql):
    def program(spark, F, T, Window):
        a = people(spark)
        b = spark.createDataFrame([(1, "x")], "id int, v string")
        if sql:
            a.createOrReplaceTempView("missing_using_a")
            b.createOrReplaceTempView("missing_using_b")
            return spark.sql("SELECT * FROM missing_using_a JOIN missing_using_b USING (name)").collect()
        return a.join(b, "name").collect()
    assert_both_raise(program, _analysis_exception_or_any(), match=["'name'", "right side", "id, v"])


@pytest.mark.parametrize("operation", ["intersect", "subtract", "intersectAll", "exceptAll", "union"])
def test_set_operation_of_different_column_counts_names_the_operation(operation):
    words = {"intersect": "INTERSECT", "subtract": "EXCEPT", "intersectAll": "INTERSECT ALL",
             "exceptAll": "EXCEPT ALL", "union": "UNION"}

    def program(spark, F, T, Window):
        a = spark.createDataFrame([(1, "a")], "id int, v string")
        b = spark.createDataFrame([(1, "a", 2.0)], "id int, v string, w double")
        return getattr(a, operation)(b).collect()
    program.__name__ = f"{operation}_column_count"
    assert_both_raise(program, _analysis_exception_or_any(),
                      match=[f"{words[operation]} can only be performed", "2 columns", "3 columns"])


@pytest.mark.parametrize("query", [
    "SELECT 1 AS n, DATE'2024-01-01' AS d UNION ALL SELECT 2, 3",
    "SELECT 1 AS n, DATE'2024-01-01' AS d INTERSECT SELECT 2, 3",
    "SELECT 1 AS n, DATE'2024-01-01' AS d EXCEPT ALL SELECT 2, 3",
])
def test_set_operation_of_incompatible_column_types(query):
    def program(spark, F, T, Window):
        return spark.sql(query).collect()
    assert_both_raise(program, _analysis_exception_or_any(), match=["compatible column types", "second column", "date"])


def test_union_by_name_extra_right_column_without_allow():
    def program(spark, F, T, Window):
        a = spark.createDataFrame([(1,)], "id int")
        b = spark.createDataFrame([(1, "x")], "id int, v string")
        return a.unionByName(b).collect()
    assert_both_raise(program, _analysis_exception_or_any(), match=["UNION", "same number of columns"])


def test_union_by_name_repeated_column_name():
    def program(spark, F, T, Window):
        a = spark.createDataFrame([(1, 2)], "id int, ID int")
        b = spark.createDataFrame([(1, 2)], "id int, v int")
        return a.unionByName(b).collect()
    assert_both_raise(program, _analysis_exception_or_any(), match=["'ID' already exists"])


@pytest.mark.parametrize("case", ["df.limit", "df.offset", "sql LIMIT", "sql OFFSET"])
def test_negative_limit_and_offset(case):
    def program(spark, F, T, Window):
        df = people(spark)
        df.createOrReplaceTempView("negative_people")
        if case == "df.limit":
            return df.limit(-1).collect()
        if case == "df.offset":
            return df.offset(-2).collect()
        return spark.sql(f"SELECT * FROM negative_people {case.split()[1]} -3").collect()
    program.__name__ = f"negative_{case.replace(' ', '_').replace('.', '_')}"
    assert_both_raise(program, _analysis_exception_or_any(), match=["must be equal to or greater than 0"])


# Window frames: the DataFrame API and SQL share one check of a window function and its frame
# (quiver/engine/analysis/builder.py window_expression).

@pytest.mark.parametrize("case", ["rank rows", "cume_dist rows", "lag frame", "inverted", "starts unbounded following"])
def test_window_frame_spark_refuses(case):
    def program(spark, F, T, Window):
        w = Window.orderBy("age")
        column = {
            "rank rows": lambda: F.rank().over(w.rowsBetween(-1, 1)),
            "cume_dist rows": lambda: F.cume_dist().over(w.rowsBetween(Window.unboundedPreceding, Window.currentRow)),
            "lag frame": lambda: F.lag("age").over(w.rowsBetween(-1, 1)),
            "inverted": lambda: F.sum("age").over(w.rowsBetween(1, -1)),
            "starts unbounded following": lambda: F.sum("age").over(
                w.rowsBetween(Window.unboundedFollowing, Window.unboundedFollowing)),
        }[case]()
        return people(spark).select("id", column.alias("w")).collect()
    program.__name__ = f"window_frame_{case.replace(' ', '_')}"
    assert_both_raise(program, _analysis_exception_or_any(), match=["frame"])
