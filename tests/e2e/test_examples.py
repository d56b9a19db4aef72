"""Whole jobs: read CSV files the test writes, transform, write Parquet, read back — on both engines."""
from __future__ import annotations

import csv
import itertools
import random

import pyarrow.parquet as pq
import pytest

try:
    from ..compat.harness import assert_same, assert_same_value
except ImportError:
    from compat.harness import assert_same, assert_same_value

_counter = itertools.count()


@pytest.fixture(scope="module")
def shop_files(tmp_path_factory):
    """orders.csv (messy: blanks, padded text, a bad row) and products.csv, written by hand."""
    root = tmp_path_factory.mktemp("shop")
    rng = random.Random(7)
    products = [(f"P{i:02d}", rng.choice(["books", "games", "music", "tools"]), round(rng.uniform(2, 60), 2))
                for i in range(12)]
    with open(root / "products.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["sku", "category", "list_price"])
        w.writerows(products)
    with open(root / "orders.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["order_id", "order_date", "customer", "sku", "qty", "discount"])
        for i in range(300):
            day = f"2024-{rng.randint(1, 6):02d}-{rng.randint(1, 28):02d}"
            customer = rng.choice(["acme", " Acme ", "globex", "initech", "", "umbrella"])
            sku = rng.choice([p[0] for p in products] + ["P99"])
            qty = rng.choice([str(rng.randint(1, 9)), "", "3"])
            discount = rng.choice(["", "0.1", "0.25", "0"])
            w.writerow([1000 + i, day, customer, sku, qty, discount])
    return root


def _fresh(tmp_path, label):
    return str(tmp_path / f"{label}-{next(_counter)}")


def test_monthly_revenue_job(shop_files, tmp_path):
    orders_csv, products_csv = str(shop_files / "orders.csv"), str(shop_files / "products.csv")

    def job(spark, F, T, Window):
        orders = spark.read.option("header", True).option("inferSchema", True).csv(orders_csv)
        products = spark.read.csv(products_csv, header=True, schema="sku string, category string, list_price double")
        clean = (orders
                 .withColumn("customer", F.lower(F.trim("customer")))
                 .withColumn("customer", F.when(F.col("customer") == "", None).otherwise(F.col("customer")))
                 .withColumn("order_date", F.to_date("order_date"))
                 .fillna({"qty": 1, "discount": 0.0})
                 .dropna(subset=["customer"]))
        lines = (clean.join(products, "sku", "inner")
                 .withColumn("revenue", F.round(F.col("qty") * F.col("list_price") * (1 - F.col("discount")), 2))
                 .withColumn("month", F.month("order_date")))
        report = (lines.groupBy("month", "category")
                  .agg(F.round(F.sum("revenue"), 2).alias("revenue"), F.count("*").alias("lines"),
                       F.countDistinct("customer").alias("customers"), F.max("qty").alias("max_qty")))
        out = _fresh(tmp_path, "monthly")
        report.write.mode("overwrite").partitionBy("month").parquet(out)
        return spark.read.parquet(out).orderBy("month", "category")

    assert_same(job, ordered=True, shuffle_partitions=(1, 5))


def test_customer_ranking_job(shop_files, tmp_path):
    orders_csv, products_csv = str(shop_files / "orders.csv"), str(shop_files / "products.csv")

    def job(spark, F, T, Window):
        orders = spark.read.csv(orders_csv, header=True, inferSchema=True)
        products = spark.read.csv(products_csv, header=True, inferSchema=True)
        spend = (orders.join(products, "sku", "left")
                 .withColumn("customer", F.lower(F.trim("customer")))
                 .filter(F.col("customer") != "")
                 .withColumn("amount", F.coalesce(F.col("qty"), F.lit(1)) * F.coalesce(F.col("list_price"), F.lit(0.0)))
                 .groupBy("customer")
                 .agg(F.round(F.sum("amount"), 2).alias("spend"), F.count("*").alias("orders"),
                      F.min("order_date").alias("first_order"), F.max("order_date").alias("last_order")))
        unknown_sku = orders.join(products, "sku", "left_anti").groupBy().count().withColumnRenamed("count", "unknown")
        ranked = spend.crossJoin(unknown_sku).orderBy(F.col("spend").desc(), "customer").limit(3)
        out = _fresh(tmp_path, "ranking")
        ranked.write.parquet(out)
        return spark.read.parquet(out).orderBy(F.col("spend").desc(), "customer")

    assert_same(job, ordered=True, shuffle_partitions=(1, 5))


def test_written_parquet_is_plain_parquet(shop_files, tmp_path):
    orders_csv = str(shop_files / "orders.csv")

    def job(spark, F, T, Window):
        out = _fresh(tmp_path, "plain")
        spark.read.csv(orders_csv, header=True, inferSchema=True).filter(F.col("qty") > 5).write.parquet(out)
        table = pq.read_table(out)
        return [table.num_rows, sorted(table.column_names), spark.read.parquet(out).count()]

    assert_same_value(job, shuffle_partitions=(1,))
