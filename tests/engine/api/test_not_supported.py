"""quiver/engine/api/unsupported.py: a PySpark name Quiver lacks raises QuiverNotSupported naming it and
pointing at the README's support table; a typo stays an AttributeError with the closest name; with PySpark's
names in place the error is pyspark.errors.PySparkNotImplementedError."""
from __future__ import annotations

import subprocess
import sys

import pytest

from quiver import functions as F
from quiver.engine.api.missing_api import MISSING
from quiver.engine.core.errors import QuiverNotSupported


@pytest.mark.parametrize("reach, named", [
    (lambda spark, df: df.rdd, "DataFrame.rdd"),
    (lambda spark, df: df.pandas_api(), "DataFrame.pandas_api"),
    (lambda spark, df: df.unpivot, "DataFrame.unpivot"),
    (lambda spark, df: df.groupBy("id").applyInPandas, "GroupedData.applyInPandas"),
    (lambda spark, df: spark.read.text("x.txt"), "DataFrameReader.text"),
    (lambda spark, df: spark.read.orc("x.orc"), "DataFrameReader.orc"),
    (lambda spark, df: spark.sparkContext.parallelize([1, 2]), "SparkContext.parallelize"),
    (lambda spark, df: spark.readStream, "SparkSession.readStream"),
    (lambda spark, df: df.write.saveAsTable, "DataFrameWriter.saveAsTable"),
    (lambda spark, df: F.transform, "functions.transform"),
    (lambda spark, df: df.id.isNaN(), "Column.isNaN"),
])
def test_a_pyspark_name_quiver_lacks_raises_quiver_not_supported(spark, reach, named):
    df = spark.range(3)
    with pytest.raises(QuiverNotSupported, match=rf"^{named} is part of PySpark [\d.]+'s API") as caught:
        reach(spark, df)
    assert "What is supported, against PySpark" in str(caught.value)
    assert isinstance(caught.value, NotImplementedError)


def test_every_listed_name_is_really_missing_from_quiver(spark):
    """The generated list and the API agree: no name Quiver has is refused."""
    df = spark.range(1)
    owners = {"DataFrame": df, "GroupedData": df.groupBy("id"), "DataFrameReader": spark.read,
              "DataFrameWriter": df.write, "SparkSession": spark, "SparkContext": spark.sparkContext,
              "Column": df.id, "Catalog": spark.catalog}
    for owner, obj in owners.items():
        present = set(dir(type(obj)))
        assert not (MISSING.get(owner, frozenset()) & present), owner


def test_a_typo_is_an_attribute_error_with_the_closest_name(spark):
    df = spark.createDataFrame([(1, "a")], ["amount", "city"])
    with pytest.raises(AttributeError, match=r"no attribute 'selectt'\. Did you mean 'select'\?") as caught:
        _ = df.selectt
    assert not isinstance(caught.value, QuiverNotSupported)
    with pytest.raises(AttributeError, match="no attribute 'bogus'"):
        _ = spark.read.bogus
    with pytest.raises(AttributeError, match="no attribute 'sum_all'"):
        _ = F.sum_all
    assert df.amount is not None and df.city is not None  # columns still read as attributes


def test_a_struct_field_named_like_a_missing_column_method_reads_by_item(spark):
    df = spark.sql("SELECT named_struct('isNaN', 1) AS s")
    assert df.select(df.s["isNaN"]).collect()[0][0] == 1


def test_under_pyspark_names_it_is_pyspark_not_implemented_error():
    code = ("import quiver; quiver.use_as_pyspark()\n"
            "from pyspark.sql import SparkSession\n"
            "from pyspark.errors import PySparkNotImplementedError\n"
            "spark = SparkSession.builder.master('local[1]').getOrCreate()\n"
            "try:\n    spark.range(2).rdd\nexcept PySparkNotImplementedError as e:\n    print('caught', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.startswith("caught DataFrame.rdd is part of PySpark")


def test_hasattr_and_getattr_with_a_default_answer_missing(spark):
    """Programs probe with hasattr (`hasattr(df, "rdd")` to tell Spark from pandas): they get False."""
    df = spark.range(1)
    assert not hasattr(df, "rdd") and getattr(spark.read, "orc", None) is None
    assert not hasattr(F, "transform") and hasattr(F, "col")
