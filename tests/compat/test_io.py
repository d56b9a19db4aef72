"""df.write then spark.read: parquet, csv, json, partitionBy, save modes — each engine in its own dir."""
from __future__ import annotations

import itertools
import os

import pytest

from .data import people, sales
from .harness import assert_same, assert_same_value, pyspark_engine, quiver_engine

_counter = itertools.count()


def _fresh(tmp_path, label: str) -> str:
    """A path no run has used yet (each engine and partition count writes its own)."""
    return str(tmp_path / f"{label}-{next(_counter)}")


def test_parquet_round_trip(tmp_path):
    def program(spark, F, T, Window):
        path = _fresh(tmp_path, "people.parquet")
        people(spark).write.parquet(path)
        return spark.read.parquet(path)
    assert_same(program)


def test_parquet_round_trip_all_basic_types(tmp_path):
    def program(spark, F, T, Window):
        path = _fresh(tmp_path, "types.parquet")
        df = sales(spark).withColumn("big", F.col("qty").cast("bigint")).withColumn(
            "flag", F.col("qty") > 3).withColumn("dec", F.col("price").cast("decimal(8,2)")).withColumn(
            "ts", F.col("day").cast("timestamp"))
        df.write.mode("overwrite").parquet(path)
        return spark.read.parquet(path)
    assert_same(program)


def test_format_save_and_load(tmp_path):
    def program(spark, F, T, Window):
        path = _fresh(tmp_path, "fmt")
        people(spark).write.format("parquet").mode("overwrite").save(path)
        return spark.read.format("parquet").load(path).filter(F.col("age") > 30)
    assert_same(program)


def test_csv_header_infer_schema(tmp_path):
    def program(spark, F, T, Window):
        path = _fresh(tmp_path, "people.csv")
        people(spark).write.option("header", True).csv(path)
        return spark.read.option("header", True).option("inferSchema", True).csv(path)
    assert_same(program)


def test_csv_without_infer_schema_is_all_strings(tmp_path):
    def program(spark, F, T, Window):
        path = _fresh(tmp_path, "plain.csv")
        people(spark).write.csv(path, header=True)
        return spark.read.csv(path, header=True)
    assert_same(program)


def test_csv_with_explicit_schema_and_dates(tmp_path):
    def program(spark, F, T, Window):
        path = _fresh(tmp_path, "sales.csv")
        sales(spark).write.mode("overwrite").csv(path, header=True)
        schema = "order_id int, region string, product string, category string, day date, qty int, price double"
        return spark.read.schema(schema).option("header", "true").csv(path)
    assert_same(program)


def test_csv_no_header_default_column_names(tmp_path):
    def program(spark, F, T, Window):
        path = _fresh(tmp_path, "noheader.csv")
        people(spark).select("id", "name").write.csv(path)
        return spark.read.csv(path)
    assert_same(program)


def test_csv_read_format_load_with_options(tmp_path):
    def program(spark, F, T, Window):
        path = _fresh(tmp_path, "opts.csv")
        people(spark).write.format("csv").option("header", "true").option("sep", ";").save(path)
        return (spark.read.format("csv").option("header", "true").option("sep", ";")
                .option("inferSchema", "true").load(path))
    assert_same(program)


def test_json_round_trip(tmp_path):
    def program(spark, F, T, Window):
        path = _fresh(tmp_path, "people.json")
        people(spark).write.json(path)
        return spark.read.json(path)
    assert_same(program)


def test_json_round_trip_with_schema(tmp_path):
    def program(spark, F, T, Window):
        path = _fresh(tmp_path, "sales.json")
        sales(spark).write.mode("overwrite").json(path)
        schema = "order_id int, region string, product string, category string, day date, qty int, price double"
        return spark.read.schema(schema).json(path)
    assert_same(program)


def test_partition_by_one_column(tmp_path):
    def program(spark, F, T, Window):
        path = _fresh(tmp_path, "by_category")
        sales(spark).write.partitionBy("category").parquet(path)
        return spark.read.parquet(path)
    assert_same(program)


def test_partition_by_int_and_string_then_filter(tmp_path):
    def program(spark, F, T, Window):
        path = _fresh(tmp_path, "by_dept_city")
        people(spark).filter(F.col("dept_id").isNotNull() & F.col("city").isNotNull()) \
            .write.partitionBy("dept_id", "city").mode("overwrite").parquet(path)
        return spark.read.parquet(path).filter(F.col("dept_id") == 10)
    assert_same(program)


def test_partition_by_writes_hive_directories(tmp_path):
    def fn(spark, F, T, Window):
        path = _fresh(tmp_path, "hive")
        sales(spark).filter(F.col("region").isNotNull()).write.partitionBy("region").parquet(path)
        return sorted(d for d in os.listdir(path) if not d.startswith((".", "_")))
    assert_same_value(fn, shuffle_partitions=(1,))


def test_mode_overwrite_replaces(tmp_path):
    def program(spark, F, T, Window):
        path = _fresh(tmp_path, "ow")
        people(spark).write.parquet(path)
        people(spark).filter(F.col("id") <= 2).write.mode("overwrite").parquet(path)
        return spark.read.parquet(path)
    assert_same(program)


def test_mode_append_adds(tmp_path):
    def program(spark, F, T, Window):
        path = _fresh(tmp_path, "app")
        people(spark).write.parquet(path)
        people(spark).filter(F.col("id") <= 2).write.mode("append").parquet(path)
        return spark.read.parquet(path)
    assert_same(program)


def test_mode_ignore_keeps_existing(tmp_path):
    def program(spark, F, T, Window):
        path = _fresh(tmp_path, "ign")
        people(spark).filter(F.col("id") <= 2).write.csv(path, header=True)
        people(spark).write.mode("ignore").csv(path, header=True)
        return spark.read.csv(path, header=True, inferSchema=True)
    assert_same(program)


def test_mode_error_raises_on_existing_path(tmp_path):
    def fn(spark, F, T, Window):
        path = _fresh(tmp_path, "err")
        people(spark).write.parquet(path)
        outcomes = []
        for mode in ("error", "errorifexists"):
            try:
                people(spark).write.mode(mode).parquet(path)
                outcomes.append("no error")
            except Exception:  # noqa: BLE001 - each engine has its own exception type
                outcomes.append("raised")
        try:
            people(spark).write.parquet(path)  # default mode is errorifexists
            outcomes.append("no error")
        except Exception:  # noqa: BLE001
            outcomes.append("raised")
        return outcomes + [spark.read.parquet(path).count()]
    assert_same_value(fn, shuffle_partitions=(1,))


def test_read_directory_of_several_files(tmp_path):
    def program(spark, F, T, Window):
        path = _fresh(tmp_path, "multi")
        spark.range(0, 100, 1, 4).withColumn("k", F.col("id") % 7).write.parquet(path)
        return spark.read.parquet(path).groupBy("k").agg(F.count("*").alias("n"), F.sum("id").alias("s"))
    assert_same(program)


def test_quiver_reads_what_pyspark_wrote(tmp_path):
    ref = pyspark_engine()
    pq, csv, js = (str(tmp_path / n) for n in ("spark.parquet", "spark.csv", "spark.json"))
    people(ref.spark).write.parquet(pq)
    sales(ref.spark).write.csv(csv, header=True)
    people(ref.spark).write.json(js)

    def program(spark, F, T, Window):
        a = spark.read.parquet(pq).select("id", "name")
        b = spark.read.json(js).select(F.col("id").cast("int").alias("id"), "city")
        c = spark.read.csv(csv, header=True, inferSchema=True).groupBy("region").count()
        return a.join(b, "id").crossJoin(c.agg(F.sum("count").alias("lines")))
    assert_same(program, shuffle_partitions=(2,))


def test_pyspark_reads_what_quiver_wrote(tmp_path):
    qv = quiver_engine()
    pq, csv = str(tmp_path / "q.parquet"), str(tmp_path / "q.csv")
    sales(qv.spark).write.parquet(pq)
    sales(qv.spark).write.csv(csv, header=True)

    def program(spark, F, T, Window):
        return spark.read.parquet(pq).unionByName(
            spark.read.csv(csv, header=True, inferSchema=True).select(*spark.read.parquet(pq).columns))
    # both engines read Quiver's files; PySpark's reading is the reference
    assert_same(program, shuffle_partitions=(1,))


def test_csv_infer_schema_dates_doubles_and_quoted_text(tmp_path):
    def program(spark, F, T, Window):
        path = _fresh(tmp_path, "quoted.csv")
        df = spark.createDataFrame(
            [(1, "plain", 1.5, True), (2, "has, comma", None, False), (3, 'has "quotes"', 2.0, None),
             (4, None, -3.25, True), (5, "", 0.0, False)],
            "id int, text string, x double, ok boolean").withColumn("day", F.date_add(F.lit("2024-01-01").cast("date"),
                                                                                      F.col("id")))
        df.write.csv(path, header=True)
        return spark.read.csv(path, header=True, inferSchema=True)
    assert_same(program)


def test_read_list_of_paths_and_glob(tmp_path):
    def program(spark, F, T, Window):
        a, b = _fresh(tmp_path, "part-a.csv"), _fresh(tmp_path, "part-b.csv")
        people(spark).filter(F.col("id") <= 3).write.csv(a, header=True)
        people(spark).filter(F.col("id") > 3).write.csv(b, header=True)
        both = spark.read.csv([a, b], header=True, inferSchema=True)
        globbed = spark.read.csv(a + "/*.csv", header=True, inferSchema=True)
        return both.withColumn("src", F.lit("list")).unionByName(globbed.withColumn("src", F.lit("glob")))
    assert_same(program)


def _typed(spark):
    import datetime as dt
    return spark.createDataFrame(
        [(1, dt.datetime(2024, 1, 2, 3, 4, 5, 120000), dt.date(2024, 1, 2), 1.5, True, 'say "hi"', "back\\slash"),
         (2, None, None, None, None, None, ""),
         (3, dt.datetime(2024, 1, 2), dt.date(2024, 2, 29), 1e-7, False, "a,b", "x")],
        "id int, ts timestamp, d date, x double, b boolean, q string, bs string")


@pytest.mark.xfail(strict=True,
                   reason='known gap: CSV writer formats timestamps and doubles with Arrow, not Spark, text rules')
def test_text_written_for_timestamps_dates_doubles_in_csv(tmp_path):
    def program(spark, F, T, Window):
        path = _fresh(tmp_path, "typed.csv")
        _typed(spark).write.csv(path, header=True)
        return spark.read.csv(path, header=True)  # every column as the string that was written
    assert_same(program)


@pytest.mark.xfail(strict=True, reason="known gap: JSON writer formats timestamps without Spark's millisecond "
                                       "precision and Z suffix")
def test_text_written_for_timestamps_dates_doubles_in_json(tmp_path):
    def program(spark, F, T, Window):
        path = _fresh(tmp_path, "typed.json")
        _typed(spark).write.json(path)
        return spark.read.json(path)
    assert_same(program)


def test_quiver_reads_csv_pyspark_wrote_with_quotes_and_backslashes(tmp_path):
    ref = pyspark_engine()
    path = str(tmp_path / "typed_by_spark.csv")
    _typed(ref.spark).write.csv(path, header=True)

    def program(spark, F, T, Window):
        return spark.read.csv(path, header=True, inferSchema=True)
    assert_same(program, shuffle_partitions=(1,))
