"""Ordinary programs: multi-step pipelines the way a data engineer writes them."""
from __future__ import annotations

import datetime as dt

from .data import depts, people, sales
from .harness import assert_same


def _regions(spark):
    return spark.createDataFrame(
        [("north", "N. America", "Jo"), ("south", "S. America", "Al"), ("east", "Asia", "Mo"),
         ("west", "Europe", None)],
        "region string, market string, manager string")


def test_sales_by_region_with_dimension_join():
    def program(spark, F, T, Window):
        s = sales(spark)
        r = _regions(spark)
        return (s.filter(F.col("qty").isNotNull() & F.col("price").isNotNull())
                .withColumn("revenue", F.col("qty") * F.col("price"))
                .join(r, "region", "left")
                .withColumn("market", F.coalesce(F.col("market"), F.lit("unknown")))
                .groupBy("market", "category")
                .agg(F.round(F.sum("revenue"), 2).alias("revenue"), F.sum("qty").alias("units"),
                     F.countDistinct("product").alias("products"))
                .orderBy(F.col("revenue").desc(), "market", "category"))
    assert_same(program, ordered=True)


def test_top_n_products_per_category_with_order_and_limit():
    def program(spark, F, T, Window):
        s = sales(spark).filter(F.col("qty").isNotNull())
        per_product = s.groupBy("category", "product").agg(F.sum("qty").alias("units"))
        fruit = per_product.filter(F.col("category") == "fruit").orderBy(F.desc("units"), "product").limit(2)
        veg = per_product.filter(F.col("category") == "veg").orderBy(F.desc("units"), "product").limit(2)
        return fruit.union(veg).withColumnRenamed("units", "top_units")
    assert_same(program)


def test_dedup_and_clean_messy_customers():
    def program(spark, F, T, Window):
        raw = spark.createDataFrame(
            [
                (" 1", "  alice SMITH ", "ALICE@Example.com ", "2024-01-03", "12.50"),
                ("1", "Alice Smith", "alice@example.com", "2024-01-03", "12.5"),
                ("2", "bob", None, "2024-02-30", "7"),
                ("3", None, "carol@x.org", "2023-11-11", None),
                ("3", None, "carol@x.org", "2023-11-11", None),
                (None, "ghost", "ghost@x.org", None, "1.0"),
            ],
            "id string, name string, email string, signup string, spend string")
        clean = (raw
                 .withColumn("id", F.trim("id").cast("int"))
                 .dropna(subset=["id"])
                 .withColumn("email", F.lower(F.trim("email")))
                 .withColumn("name", F.regexp_replace(F.trim("name"), r"\s+", " "))
                 .withColumn("spend", F.coalesce(F.col("spend").cast("double"), F.lit(0.0)))
                 .withColumn("signup_year", F.substring("signup", 1, 4).cast("int"))
                 .dropDuplicates(["id", "email"])
                 .fillna({"name": "(unknown)", "email": "(none)"}))
        return clean.select("id", "email", "spend", "signup_year").distinct()
    assert_same(program)


def test_date_bucketing_weekly_monthly():
    def program(spark, F, T, Window):
        s = sales(spark).filter(F.col("day").isNotNull())
        return (s.withColumn("month", F.month("day"))
                .withColumn("year", F.year("day"))
                .withColumn("days_from_start", F.datediff("day", F.lit(dt.date(2023, 12, 31))))
                .withColumn("bucket", (F.col("days_from_start") / 30).cast("int"))
                .groupBy("year", "month", "bucket")
                .agg(F.count("*").alias("orders"), F.sum("qty").alias("units"), F.min("day").alias("first_day"))
                .orderBy("year", "month", "bucket"))
    assert_same(program, ordered=True)


def test_headcount_and_payroll_by_department():
    def program(spark, F, T, Window):
        p, d = people(spark), depts(spark)
        return (p.join(d, "dept_id", "left")
                .withColumn("dept_name", F.coalesce("dept_name", F.lit("unassigned")))
                .withColumn("band", F.when(F.col("age") < 30, "<30").when(F.col("age") < 40, "30s")
                            .when(F.col("age").isNull(), "n/a").otherwise("40+"))
                .groupBy("dept_name", "band")
                .agg(F.count("*").alias("headcount"), F.sum("salary").alias("payroll"), F.max("age").alias("oldest"))
                .filter(F.col("headcount") > 0)
                .orderBy("dept_name", "band"))
    assert_same(program, ordered=True)


def test_customer_orders_semi_anti_and_union():
    def program(spark, F, T, Window):
        customers = spark.createDataFrame(
            [(1, "Ann", "gold"), (2, "Ben", "silver"), (3, "Cy", "gold"), (4, "Di", None)],
            "cid int, cname string, tier string")
        orders = spark.createDataFrame(
            [(100, 1, 20.0), (101, 1, 5.5), (102, 3, 99.9), (103, 9, 1.0), (104, None, 3.0)],
            "oid int, cid int, total double")
        buyers = customers.join(orders, "cid", "left_semi").withColumn("status", F.lit("buyer"))
        idle = customers.join(orders, "cid", "left_anti").withColumn("status", F.lit("idle"))
        spend = orders.groupBy("cid").agg(F.sum("total").alias("spent"))
        return (buyers.unionByName(idle).join(spend, "cid", "left")
                .fillna({"spent": 0.0, "tier": "none"})
                .select("cid", "cname", "tier", "status", F.round("spent", 1).alias("spent")))
    assert_same(program)


def test_running_share_of_region_total():
    def program(spark, F, T, Window):
        s = sales(spark).filter(F.col("qty").isNotNull() & F.col("region").isNotNull())
        totals = s.groupBy("region").agg(F.sum("qty").alias("region_qty"))
        return (s.join(totals, "region")
                .withColumn("share", F.round(F.col("qty") / F.col("region_qty"), 4))
                .select("region", "order_id", "qty", "share")
                .orderBy("region", F.col("share").desc(), "order_id"))
    assert_same(program, ordered=True)


def test_range_based_synthetic_pipeline():
    def program(spark, F, T, Window):
        df = (spark.range(0, 200)
              .withColumn("bucket", (F.col("id") % 10).cast("int"))
              .withColumn("value", F.col("id") * 1.5)
              .withColumn("even", F.col("id") % 2 == 0))
        return (df.filter(~F.col("even") | (F.col("bucket") > 5))
                .groupBy("bucket", "even").agg(F.sum("value").alias("s"), F.count("*").alias("n"),
                                               F.avg("id").alias("mean_id"))
                .withColumn("s_per_n", F.col("s") / F.col("n")))
    assert_same(program)
