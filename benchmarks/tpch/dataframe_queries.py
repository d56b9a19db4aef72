"""The 22 TPC-H queries in the PySpark DataFrame API, with the substitution parameters of `queries/qNN.sql`.

Each query takes a session (PySpark's SparkSession or Quiver's Session) and the eight TPC-H tables as
DataFrames by name, and returns its answer as a DataFrame whose columns match the SQL text's by position.
The same code runs on both engines: the functions module and Window class come from the session's own
package. Subqueries are written as a DataFrame user would: semi and anti joins for EXISTS / IN / NOT
EXISTS, aggregates joined back for correlated scalar subqueries, a window for Q2's per-part minimum.
"""
from __future__ import annotations

import datetime as dt
import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

DataFrame = Any  # pyspark.sql.DataFrame or quiver.DataFrame
Session = Any  # pyspark.sql.SparkSession or quiver.Session
Tables = dict[str, DataFrame]


def _package(session: Session) -> str:
    """The package holding the session's `functions` module and `Window`: pyspark.sql or quiver."""
    top = type(session).__module__.split(".")[0]
    return "pyspark.sql" if top == "pyspark" else top


def _functions(session: Session) -> ModuleType:
    """The functions module (`F`) of the session's engine."""
    return importlib.import_module(f"{_package(session)}.functions")


def _window(session: Session) -> Any:
    """The Window class of the session's engine."""
    return importlib.import_module(_package(session)).Window


def q01(session: Session, t: Tables) -> DataFrame:
    """Q1: pricing summary report."""
    F = _functions(session)
    price = F.col("l_extendedprice")
    disc_price = price * (1 - F.col("l_discount"))

    def mean(column: str) -> Any:
        """The average as a double, as DuckDB gives it: Spark's decimal average keeps only 6 places."""
        return F.avg(F.col(column).cast("double"))

    return (
        t["lineitem"]
        .filter(F.col("l_shipdate") <= F.date_sub(F.lit(dt.date(1998, 12, 1)), 90))
        .groupBy("l_returnflag", "l_linestatus")
        .agg(
            F.sum("l_quantity").alias("sum_qty"),
            F.sum(price).alias("sum_base_price"),
            F.sum(disc_price).alias("sum_disc_price"),
            F.sum(disc_price * (1 + F.col("l_tax"))).alias("sum_charge"),
            mean("l_quantity").alias("avg_qty"),
            mean("l_extendedprice").alias("avg_price"),
            mean("l_discount").alias("avg_disc"),
            F.count("*").alias("count_order"),
        )
        .orderBy("l_returnflag", "l_linestatus")
    )


def q02(session: Session, t: Tables) -> DataFrame:
    """Q2: minimum cost supplier."""
    F, Window = _functions(session), _window(session)
    europe = (
        t["region"].filter(F.col("r_name") == "EUROPE")
        .join(t["nation"], F.col("r_regionkey") == F.col("n_regionkey"))
        .join(t["supplier"], F.col("n_nationkey") == F.col("s_nationkey"))
    )
    brass = t["part"].filter((F.col("p_size") == 15) & F.col("p_type").endswith("BRASS"))
    return (
        brass.join(t["partsupp"], F.col("p_partkey") == F.col("ps_partkey"))
        .join(europe, F.col("ps_suppkey") == F.col("s_suppkey"))
        .withColumn("min_cost", F.min("ps_supplycost").over(Window.partitionBy("p_partkey")))
        .filter(F.col("ps_supplycost") == F.col("min_cost"))
        .select("s_acctbal", "s_name", "n_name", "p_partkey", "p_mfgr", "s_address", "s_phone", "s_comment")
        .orderBy(F.col("s_acctbal").desc(), "n_name", "s_name", "p_partkey")
        .limit(100)
    )


def q03(session: Session, t: Tables) -> DataFrame:
    """Q3: shipping priority."""
    F = _functions(session)
    day = dt.date(1995, 3, 15)
    return (
        t["customer"].filter(F.col("c_mktsegment") == "BUILDING")
        .join(t["orders"].filter(F.col("o_orderdate") < day), F.col("c_custkey") == F.col("o_custkey"))
        .join(t["lineitem"].filter(F.col("l_shipdate") > day), F.col("o_orderkey") == F.col("l_orderkey"))
        .groupBy("l_orderkey", "o_orderdate", "o_shippriority")
        .agg(F.sum(F.col("l_extendedprice") * (1 - F.col("l_discount"))).alias("revenue"))
        .select("l_orderkey", "revenue", "o_orderdate", "o_shippriority")
        .orderBy(F.col("revenue").desc(), "o_orderdate")
        .limit(10)
    )


def q04(session: Session, t: Tables) -> DataFrame:
    """Q4: order priority checking."""
    F = _functions(session)
    start = F.lit(dt.date(1993, 7, 1))
    late = t["lineitem"].filter(F.col("l_commitdate") < F.col("l_receiptdate"))
    return (
        t["orders"]
        .filter((F.col("o_orderdate") >= start) & (F.col("o_orderdate") < F.add_months(start, 3)))
        .join(late, F.col("o_orderkey") == F.col("l_orderkey"), "left_semi")
        .groupBy("o_orderpriority")
        .agg(F.count("*").alias("order_count"))
        .orderBy("o_orderpriority")
    )


def q05(session: Session, t: Tables) -> DataFrame:
    """Q5: local supplier volume."""
    F = _functions(session)
    asia = (
        t["region"].filter(F.col("r_name") == "ASIA")
        .join(t["nation"], F.col("r_regionkey") == F.col("n_regionkey"))
    )
    orders = t["orders"].filter(
        (F.col("o_orderdate") >= dt.date(1994, 1, 1)) & (F.col("o_orderdate") < dt.date(1995, 1, 1))
    )
    return (
        asia.join(t["customer"], F.col("n_nationkey") == F.col("c_nationkey"))
        .join(orders, F.col("c_custkey") == F.col("o_custkey"))
        .join(t["lineitem"], F.col("o_orderkey") == F.col("l_orderkey"))
        .join(
            t["supplier"],
            (F.col("l_suppkey") == F.col("s_suppkey")) & (F.col("c_nationkey") == F.col("s_nationkey")),
        )
        .groupBy("n_name")
        .agg(F.sum(F.col("l_extendedprice") * (1 - F.col("l_discount"))).alias("revenue"))
        .orderBy(F.col("revenue").desc())
    )


def q06(session: Session, t: Tables) -> DataFrame:
    """Q6: forecasting revenue change."""
    F = _functions(session)
    return (
        t["lineitem"]
        .filter(
            (F.col("l_shipdate") >= dt.date(1994, 1, 1))
            & (F.col("l_shipdate") < dt.date(1995, 1, 1))
            & F.col("l_discount").between(0.05, 0.07)
            & (F.col("l_quantity") < 24)
        )
        .agg(F.sum(F.col("l_extendedprice") * F.col("l_discount")).alias("revenue"))
    )


def q07(session: Session, t: Tables) -> DataFrame:
    """Q7: volume shipping."""
    F = _functions(session)
    pair = t["nation"].filter(F.col("n_name").isin("FRANCE", "GERMANY"))
    supp_nation = pair.select(F.col("n_nationkey").alias("supp_nationkey"), F.col("n_name").alias("supp_nation"))
    cust_nation = pair.select(F.col("n_nationkey").alias("cust_nationkey"), F.col("n_name").alias("cust_nation"))
    lineitem = t["lineitem"].filter(F.col("l_shipdate").between(dt.date(1995, 1, 1), dt.date(1996, 12, 31)))
    return (
        supp_nation.join(t["supplier"], F.col("supp_nationkey") == F.col("s_nationkey"))
        .join(lineitem, F.col("s_suppkey") == F.col("l_suppkey"))
        .join(t["orders"], F.col("l_orderkey") == F.col("o_orderkey"))
        .join(t["customer"], F.col("o_custkey") == F.col("c_custkey"))
        .join(cust_nation, F.col("c_nationkey") == F.col("cust_nationkey"))
        .filter(F.col("supp_nation") != F.col("cust_nation"))
        .select(
            "supp_nation",
            "cust_nation",
            F.year("l_shipdate").alias("l_year"),
            (F.col("l_extendedprice") * (1 - F.col("l_discount"))).alias("volume"),
        )
        .groupBy("supp_nation", "cust_nation", "l_year")
        .agg(F.sum("volume").alias("revenue"))
        .orderBy("supp_nation", "cust_nation", "l_year")
    )


def q08(session: Session, t: Tables) -> DataFrame:
    """Q8: national market share."""
    F = _functions(session)
    brazil = F.when(F.col("nation") == "BRAZIL", F.col("volume")).otherwise(0)
    america = (
        t["region"].filter(F.col("r_name") == "AMERICA")
        .join(t["nation"], F.col("r_regionkey") == F.col("n_regionkey"))
        .select(F.col("n_nationkey").alias("cust_nationkey"))
    )
    supp_nation = t["nation"].select(F.col("n_nationkey").alias("supp_nationkey"), F.col("n_name").alias("nation"))
    orders = t["orders"].filter(F.col("o_orderdate").between(dt.date(1995, 1, 1), dt.date(1996, 12, 31)))
    return (
        t["part"].filter(F.col("p_type") == "ECONOMY ANODIZED STEEL")
        .join(t["lineitem"], F.col("p_partkey") == F.col("l_partkey"))
        .join(orders, F.col("l_orderkey") == F.col("o_orderkey"))
        .join(t["customer"], F.col("o_custkey") == F.col("c_custkey"))
        .join(america, F.col("c_nationkey") == F.col("cust_nationkey"))
        .join(t["supplier"], F.col("l_suppkey") == F.col("s_suppkey"))
        .join(supp_nation, F.col("s_nationkey") == F.col("supp_nationkey"))
        .select(
            F.year("o_orderdate").alias("o_year"),
            (F.col("l_extendedprice") * (1 - F.col("l_discount"))).alias("volume"),
            "nation",
        )
        .groupBy("o_year")
        # A double quotient, as DuckDB's: Spark's decimal quotient keeps only 6 places.
        .agg((F.sum(brazil).cast("double") / F.sum("volume")).alias("mkt_share"))
        .orderBy("o_year")
    )


def q09(session: Session, t: Tables) -> DataFrame:
    """Q9: product type profit measure."""
    F = _functions(session)
    return (
        t["part"].filter(F.col("p_name").contains("green"))
        .join(t["lineitem"], F.col("p_partkey") == F.col("l_partkey"))
        .join(
            t["partsupp"],
            (F.col("l_partkey") == F.col("ps_partkey")) & (F.col("l_suppkey") == F.col("ps_suppkey")),
        )
        .join(t["supplier"], F.col("l_suppkey") == F.col("s_suppkey"))
        .join(t["nation"], F.col("s_nationkey") == F.col("n_nationkey"))
        .join(t["orders"], F.col("l_orderkey") == F.col("o_orderkey"))
        .select(
            F.col("n_name").alias("nation"),
            F.year("o_orderdate").alias("o_year"),
            (
                F.col("l_extendedprice") * (1 - F.col("l_discount"))
                - F.col("ps_supplycost") * F.col("l_quantity")
            ).alias("amount"),
        )
        .groupBy("nation", "o_year")
        .agg(F.sum("amount").alias("sum_profit"))
        .orderBy("nation", F.col("o_year").desc())
    )


def q10(session: Session, t: Tables) -> DataFrame:
    """Q10: returned item reporting."""
    F = _functions(session)
    start = F.lit(dt.date(1993, 10, 1))
    orders = t["orders"].filter((F.col("o_orderdate") >= start) & (F.col("o_orderdate") < F.add_months(start, 3)))
    return (
        t["customer"]
        .join(orders, F.col("c_custkey") == F.col("o_custkey"))
        .join(t["lineitem"].filter(F.col("l_returnflag") == "R"), F.col("o_orderkey") == F.col("l_orderkey"))
        .join(t["nation"], F.col("c_nationkey") == F.col("n_nationkey"))
        .groupBy("c_custkey", "c_name", "c_acctbal", "c_phone", "n_name", "c_address", "c_comment")
        .agg(F.sum(F.col("l_extendedprice") * (1 - F.col("l_discount"))).alias("revenue"))
        .select("c_custkey", "c_name", "revenue", "c_acctbal", "n_name", "c_address", "c_phone", "c_comment")
        .orderBy(F.col("revenue").desc())
        .limit(20)
    )


def q11(session: Session, t: Tables) -> DataFrame:
    """Q11: important stock identification."""
    F = _functions(session)
    german = (
        t["nation"].filter(F.col("n_name") == "GERMANY")
        .join(t["supplier"], F.col("n_nationkey") == F.col("s_nationkey"))
        .join(t["partsupp"], F.col("s_suppkey") == F.col("ps_suppkey"))
        .select("ps_partkey", (F.col("ps_supplycost") * F.col("ps_availqty")).alias("stock_value"))
    )
    threshold = german.agg((F.sum("stock_value") * 0.0001).alias("threshold"))
    return (
        german.groupBy("ps_partkey")
        .agg(F.sum("stock_value").alias("value"))
        .crossJoin(threshold)
        .filter(F.col("value") > F.col("threshold"))
        .select("ps_partkey", "value")
        .orderBy(F.col("value").desc())
    )


def q12(session: Session, t: Tables) -> DataFrame:
    """Q12: shipping modes and order priority."""
    F = _functions(session)
    urgent = F.col("o_orderpriority").isin("1-URGENT", "2-HIGH")
    lineitem = t["lineitem"].filter(
        F.col("l_shipmode").isin("MAIL", "SHIP")
        & (F.col("l_commitdate") < F.col("l_receiptdate"))
        & (F.col("l_shipdate") < F.col("l_commitdate"))
        & (F.col("l_receiptdate") >= dt.date(1994, 1, 1))
        & (F.col("l_receiptdate") < dt.date(1995, 1, 1))
    )
    return (
        t["orders"]
        .join(lineitem, F.col("o_orderkey") == F.col("l_orderkey"))
        .groupBy("l_shipmode")
        .agg(
            F.sum(F.when(urgent, 1).otherwise(0)).alias("high_line_count"),
            F.sum(F.when(~urgent, 1).otherwise(0)).alias("low_line_count"),
        )
        .orderBy("l_shipmode")
    )


def q13(session: Session, t: Tables) -> DataFrame:
    """Q13: customer distribution."""
    F = _functions(session)
    orders = t["orders"].filter(~F.col("o_comment").like("%special%requests%"))
    return (
        t["customer"]
        .join(orders, F.col("c_custkey") == F.col("o_custkey"), "left")
        .groupBy("c_custkey")
        .agg(F.count("o_orderkey").alias("c_count"))
        .groupBy("c_count")
        .agg(F.count("*").alias("custdist"))
        .orderBy(F.col("custdist").desc(), F.col("c_count").desc())
    )


def q14(session: Session, t: Tables) -> DataFrame:
    """Q14: promotion effect."""
    F = _functions(session)
    revenue = F.col("l_extendedprice") * (1 - F.col("l_discount"))
    lineitem = t["lineitem"].filter(
        (F.col("l_shipdate") >= dt.date(1995, 9, 1)) & (F.col("l_shipdate") < dt.date(1995, 10, 1))
    )
    return (
        lineitem.join(t["part"], F.col("l_partkey") == F.col("p_partkey"))
        .agg(
            (100.0 * F.sum(F.when(F.col("p_type").startswith("PROMO"), revenue).otherwise(0)) / F.sum(revenue))
            .alias("promo_revenue")
        )
    )


def q15(session: Session, t: Tables) -> DataFrame:
    """Q15: top supplier."""
    F = _functions(session)
    revenue = (
        t["lineitem"]
        .filter((F.col("l_shipdate") >= dt.date(1996, 1, 1)) & (F.col("l_shipdate") < dt.date(1996, 4, 1)))
        .groupBy(F.col("l_suppkey").alias("supplier_no"))
        .agg(F.sum(F.col("l_extendedprice") * (1 - F.col("l_discount"))).alias("total_revenue"))
    )
    top = revenue.agg(F.max("total_revenue").alias("max_revenue"))
    return (
        t["supplier"]
        .join(revenue, F.col("s_suppkey") == F.col("supplier_no"))
        .join(top, F.col("total_revenue") == F.col("max_revenue"))
        .select("s_suppkey", "s_name", "s_address", "s_phone", "total_revenue")
        .orderBy("s_suppkey")
    )


def q16(session: Session, t: Tables) -> DataFrame:
    """Q16: parts/supplier relationship."""
    F = _functions(session)
    parts = t["part"].filter(
        (F.col("p_brand") != "Brand#45")
        & ~F.col("p_type").startswith("MEDIUM POLISHED")
        & F.col("p_size").isin(49, 14, 23, 45, 19, 3, 36, 9)
    )
    complainers = t["supplier"].filter(F.col("s_comment").like("%Customer%Complaints%"))
    return (
        t["partsupp"]
        .join(complainers, F.col("ps_suppkey") == F.col("s_suppkey"), "left_anti")
        .join(parts, F.col("ps_partkey") == F.col("p_partkey"))
        .groupBy("p_brand", "p_type", "p_size")
        .agg(F.countDistinct("ps_suppkey").alias("supplier_cnt"))
        .orderBy(F.col("supplier_cnt").desc(), "p_brand", "p_type", "p_size")
    )


def q17(session: Session, t: Tables) -> DataFrame:
    """Q17: small-quantity-order revenue."""
    F = _functions(session)
    parts = t["part"].filter((F.col("p_brand") == "Brand#23") & (F.col("p_container") == "MED BOX"))
    lineitem = parts.join(t["lineitem"], F.col("p_partkey") == F.col("l_partkey"))
    small = lineitem.groupBy(F.col("l_partkey").alias("small_partkey")).agg(
        (0.2 * F.avg("l_quantity")).alias("small_quantity")
    )
    return (
        lineitem.join(small, F.col("l_partkey") == F.col("small_partkey"))
        .filter(F.col("l_quantity") < F.col("small_quantity"))
        .agg((F.sum("l_extendedprice") / 7.0).alias("avg_yearly"))
    )


def q18(session: Session, t: Tables) -> DataFrame:
    """Q18: large volume customer."""
    F = _functions(session)
    large = (
        t["lineitem"].groupBy(F.col("l_orderkey").alias("large_orderkey"))
        .agg(F.sum("l_quantity").alias("order_quantity"))
        .filter(F.col("order_quantity") > 300)
    )
    return (
        t["orders"]
        .join(large, F.col("o_orderkey") == F.col("large_orderkey"), "left_semi")
        .join(t["customer"], F.col("o_custkey") == F.col("c_custkey"))
        .join(t["lineitem"], F.col("o_orderkey") == F.col("l_orderkey"))
        .groupBy("c_name", "c_custkey", "o_orderkey", "o_orderdate", "o_totalprice")
        .agg(F.sum("l_quantity").alias("sum(l_quantity)"))
        .orderBy(F.col("o_totalprice").desc(), "o_orderdate")
        .limit(100)
    )


def q19(session: Session, t: Tables) -> DataFrame:
    """Q19: discounted revenue."""
    F = _functions(session)

    def bracket(brand: str, containers: tuple[str, ...], quantity: int, max_size: int) -> Any:
        return (
            (F.col("p_brand") == brand)
            & F.col("p_container").isin(*containers)
            & F.col("l_quantity").between(quantity, quantity + 10)
            & F.col("p_size").between(1, max_size)
        )

    small = bracket("Brand#12", ("SM CASE", "SM BOX", "SM PACK", "SM PKG"), 1, 5)
    medium = bracket("Brand#23", ("MED BAG", "MED BOX", "MED PKG", "MED PACK"), 10, 10)
    large = bracket("Brand#34", ("LG CASE", "LG BOX", "LG PACK", "LG PKG"), 20, 15)
    lineitem = t["lineitem"].filter(
        F.col("l_shipmode").isin("AIR", "AIR REG") & (F.col("l_shipinstruct") == "DELIVER IN PERSON")
    )
    return (
        lineitem.join(t["part"], F.col("l_partkey") == F.col("p_partkey"))
        .filter(small | medium | large)
        .agg(F.sum(F.col("l_extendedprice") * (1 - F.col("l_discount"))).alias("revenue"))
    )


def q20(session: Session, t: Tables) -> DataFrame:
    """Q20: potential part promotion."""
    F = _functions(session)
    shipped = (
        t["lineitem"]
        .filter((F.col("l_shipdate") >= dt.date(1994, 1, 1)) & (F.col("l_shipdate") < dt.date(1995, 1, 1)))
        .groupBy("l_partkey", "l_suppkey")
        .agg((0.5 * F.sum("l_quantity")).alias("half_quantity"))
    )
    forest = t["part"].filter(F.col("p_name").startswith("forest"))
    excess = (
        t["partsupp"]
        .join(forest, F.col("ps_partkey") == F.col("p_partkey"), "left_semi")
        .join(shipped, (F.col("ps_partkey") == F.col("l_partkey")) & (F.col("ps_suppkey") == F.col("l_suppkey")))
        .filter(F.col("ps_availqty") > F.col("half_quantity"))
    )
    return (
        t["supplier"]
        .join(t["nation"].filter(F.col("n_name") == "CANADA"), F.col("s_nationkey") == F.col("n_nationkey"))
        .join(excess, F.col("s_suppkey") == F.col("ps_suppkey"), "left_semi")
        .select("s_name", "s_address")
        .orderBy("s_name")
    )


def q21(session: Session, t: Tables) -> DataFrame:
    """Q21: suppliers who kept orders waiting."""
    F = _functions(session)
    late = F.col("l_receiptdate") > F.col("l_commitdate")
    others = t["lineitem"].select(
        F.col("l_orderkey").alias("other_orderkey"), F.col("l_suppkey").alias("other_suppkey"), late.alias("other_late")
    )
    same_order_other_supplier = (F.col("l_orderkey") == F.col("other_orderkey")) & (
        F.col("l_suppkey") != F.col("other_suppkey")
    )
    return (
        t["nation"].filter(F.col("n_name") == "SAUDI ARABIA")
        .join(t["supplier"], F.col("n_nationkey") == F.col("s_nationkey"))
        .join(t["lineitem"].filter(late), F.col("s_suppkey") == F.col("l_suppkey"))
        .join(t["orders"].filter(F.col("o_orderstatus") == "F"), F.col("l_orderkey") == F.col("o_orderkey"))
        .join(others, same_order_other_supplier, "left_semi")
        .join(others.filter(F.col("other_late")), same_order_other_supplier, "left_anti")
        .groupBy("s_name")
        .agg(F.count("*").alias("numwait"))
        .orderBy(F.col("numwait").desc(), "s_name")
        .limit(100)
    )


def q22(session: Session, t: Tables) -> DataFrame:
    """Q22: global sales opportunity."""
    F = _functions(session)
    customers = (
        t["customer"]
        .withColumn("cntrycode", F.substring("c_phone", 1, 2))
        .filter(F.col("cntrycode").isin("13", "31", "23", "29", "30", "18", "17"))
    )
    average = customers.filter(F.col("c_acctbal") > 0).agg(F.avg("c_acctbal").alias("avg_acctbal"))
    return (
        customers.crossJoin(average)
        .filter(F.col("c_acctbal") > F.col("avg_acctbal"))
        .join(t["orders"], F.col("c_custkey") == F.col("o_custkey"), "left_anti")
        .groupBy("cntrycode")
        .agg(F.count("*").alias("numcust"), F.sum("c_acctbal").alias("totacctbal"))
        .orderBy("cntrycode")
    )


QUERIES: dict[int, Callable[[Session, Tables], DataFrame]] = {n: globals()[f"q{n:02d}"] for n in range(1, 23)}
