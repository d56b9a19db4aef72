"""User-defined functions and mapInPandas / mapInArrow against real PySpark: column names, types, rows."""
from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .data import numbers, people
from .harness import assert_same

# PySpark 4 runs row UDFs through Arrow by default, which coerces a result of the wrong type (an int
# for a double UDF) instead of nulling it; Quiver follows the classic pickled semantics.
CLASSIC_UDFS = {"spark.sql.execution.pythonUDF.arrow.enabled": False}


def test_udf_names_types_and_nulls():
    def program(spark, F, T, Window):
        @F.udf("int")
        def name_len(s):
            return None if s is None else len(s)

        greet = F.udf(lambda name, city: f"{name} from {city}")
        older = F.udf(lambda age: None if age is None else age + 10, T.LongType())
        return people(spark).select("id", name_len("name"), greet("name", F.col("city")),
                                    older(F.col("age")).alias("older"), name_len(F.upper("name")))
    assert_same(program, shuffle_partitions=(1,), conf=CLASSIC_UDFS)


def test_udf_results_the_declared_type_cannot_hold():
    def program(spark, F, T, Window):
        as_int = F.udf(lambda d: d, "int")
        as_double = F.udf(lambda i: i, "double")
        as_text = F.udf(lambda v: v, "string")
        narrow = F.udf(lambda b: None if b is None else b * 1000000000, "int")
        return numbers(spark).select("i", as_int("d"), as_double("i"), as_text("i"), as_text("d"), narrow("b"))
    assert_same(program, shuffle_partitions=(1,), conf=CLASSIC_UDFS)


def test_udf_in_filter_and_group_by():
    def program(spark, F, T, Window):
        decade = F.udf(lambda a: None if a is None else a // 10 * 10, "int")
        return (people(spark).filter(decade("age") > 20)
                .groupBy(decade("age").alias("decade"))
                .agg(F.count("*").alias("n"), F.max("salary").alias("top")))
    assert_same(program, shuffle_partitions=(1, 3), conf=CLASSIC_UDFS)


def test_registered_udf_in_sql():
    def program(spark, F, T, Window):
        people(spark).createOrReplaceTempView("udf_people")
        spark.udf.register("initial", lambda s: s[0] if s else None)
        return spark.sql("SELECT id, initial(name) AS i, initial(city) FROM udf_people WHERE initial(name) < 'E'")
    assert_same(program, shuffle_partitions=(1,), conf=CLASSIC_UDFS)


def test_registered_udf_in_expr_and_select_expr():
    """A registered function is resolved when the expression is analyzed, so F.expr and selectExpr see it."""
    def program(spark, F, T, Window):
        spark.udf.register("initial_of", lambda s: s[0] if s else None)
        return people(spark).select("id", F.expr("initial_of(name) AS i")).selectExpr("id", "initial_of(i) AS j")
    assert_same(program, shuffle_partitions=(1,), conf=CLASSIC_UDFS)


def test_pandas_udf_series_to_series():
    def program(spark, F, T, Window):
        @F.pandas_udf("double")
        def bonus(salary: pd.Series, age: pd.Series) -> pd.Series:
            return salary * 0.1 + age

        return people(spark).select("id", bonus("salary", "age"))
    assert_same(program, shuffle_partitions=(1,))


def test_map_in_pandas():
    def program(spark, F, T, Window):
        def adults(frames):
            for pdf in frames:
                kept = pdf[pdf.age >= 30]
                yield pd.DataFrame({"name": kept.name, "decade": (kept.age // 10).astype("int64")})

        return people(spark).mapInPandas(adults, "name string, decade long").filter("decade > 3")
    assert_same(program, shuffle_partitions=(1, 3))


def test_map_in_arrow():
    def program(spark, F, T, Window):
        def shout(batches):
            for b in batches:
                yield pa.RecordBatch.from_pydict({"id": b.column("id"), "loud": pc.utf8_upper(b.column("name"))})

        return people(spark).mapInArrow(shout, T.StructType([
            T.StructField("id", T.IntegerType()), T.StructField("loud", T.StringType())]))
    assert_same(program, shuffle_partitions=(1,))
