"""The 22 TPC-H queries in the Polars lazy API, with the substitution parameters of `queries/qNN.sql`.

Each query takes the eight tables as LazyFrames by name (`pl.scan_parquet`, so every `collect()` reads
Parquet) and returns a LazyFrame whose columns match the SQL text's by position. The queries are written
as a Polars user would, from the TPC-H specification: semi and anti joins for EXISTS / IN / NOT EXISTS,
aggregates joined back for correlated subqueries. Decimal columns stay decimal, as read; ratios of two
sums are taken in Float64, as SQL engines divide decimals into doubles.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from decimal import Decimal

import polars as pl

Tables = dict[str, pl.LazyFrame]


def _col(name: str) -> pl.Expr:
    return pl.col(name)


def _disc_price() -> pl.Expr:
    """l_extendedprice * (1 - l_discount), the revenue of one line."""
    return _col("l_extendedprice") * (1 - _col("l_discount"))


def _in_range(column: str, start: dt.date, end: dt.date) -> pl.Expr:
    """start <= column < end, the spec's `date 'X' + interval` windows."""
    return (_col(column) >= start) & (_col(column) < end)


def _sql_sum(value: pl.Expr) -> pl.Expr:
    """SUM as SQL has it: null, not 0, over no rows (a global aggregate may see none at small scales)."""
    return pl.when(value.count() > 0).then(value.sum())


def _ratio(numerator: pl.Expr, denominator: pl.Expr) -> pl.Expr:
    """numerator / denominator in Float64, as SQL engines divide two decimal sums."""
    return numerator.cast(pl.Float64) / denominator.cast(pl.Float64)


def q01(t: Tables) -> pl.LazyFrame:
    """Q1: pricing summary report."""
    return (
        t["lineitem"]
        .filter(_col("l_shipdate") <= dt.date(1998, 12, 1) - dt.timedelta(days=90))
        .group_by("l_returnflag", "l_linestatus")
        .agg(
            _col("l_quantity").sum().alias("sum_qty"),
            _col("l_extendedprice").sum().alias("sum_base_price"),
            _disc_price().sum().alias("sum_disc_price"),
            (_disc_price() * (1 + _col("l_tax"))).sum().alias("sum_charge"),
            _col("l_quantity").mean().alias("avg_qty"),
            _col("l_extendedprice").mean().alias("avg_price"),
            _col("l_discount").mean().alias("avg_disc"),
            pl.len().alias("count_order"),
        )
        .sort("l_returnflag", "l_linestatus")
    )


def _region_suppliers(t: Tables, region: str) -> pl.LazyFrame:
    """Suppliers of one region, with their nation's columns."""
    return (
        t["region"].filter(_col("r_name") == region)
        .join(t["nation"], left_on="r_regionkey", right_on="n_regionkey")
        .join(t["supplier"], left_on="n_nationkey", right_on="s_nationkey")
    )


def q02(t: Tables) -> pl.LazyFrame:
    """Q2: minimum cost supplier."""
    offers = t["partsupp"].join(_region_suppliers(t, "EUROPE"), left_on="ps_suppkey", right_on="s_suppkey")
    cheapest = offers.group_by("ps_partkey").agg(_col("ps_supplycost").min().alias("min_cost"))
    brass = t["part"].filter((_col("p_size") == 15) & _col("p_type").str.ends_with("BRASS"))
    return (
        brass.join(offers, left_on="p_partkey", right_on="ps_partkey")
        .join(cheapest, left_on=["p_partkey", "ps_supplycost"], right_on=["ps_partkey", "min_cost"])
        .select("s_acctbal", "s_name", "n_name", "p_partkey", "p_mfgr", "s_address", "s_phone", "s_comment")
        .sort(["s_acctbal", "n_name", "s_name", "p_partkey"], descending=[True, False, False, False])
        .head(100)
    )


def q03(t: Tables) -> pl.LazyFrame:
    """Q3: shipping priority."""
    day = dt.date(1995, 3, 15)
    return (
        t["customer"].filter(_col("c_mktsegment") == "BUILDING")
        .join(t["orders"].filter(_col("o_orderdate") < day), left_on="c_custkey", right_on="o_custkey")
        .join(t["lineitem"].filter(_col("l_shipdate") > day), left_on="o_orderkey", right_on="l_orderkey")
        .group_by(_col("o_orderkey").alias("l_orderkey"), "o_orderdate", "o_shippriority")
        .agg(_disc_price().sum().alias("revenue"))
        .select("l_orderkey", "revenue", "o_orderdate", "o_shippriority")
        .sort(["revenue", "o_orderdate"], descending=[True, False])
        .head(10)
    )


def q04(t: Tables) -> pl.LazyFrame:
    """Q4: order priority checking."""
    late = t["lineitem"].filter(_col("l_commitdate") < _col("l_receiptdate"))
    return (
        t["orders"].filter(_in_range("o_orderdate", dt.date(1993, 7, 1), dt.date(1993, 10, 1)))
        .join(late, left_on="o_orderkey", right_on="l_orderkey", how="semi")
        .group_by("o_orderpriority")
        .agg(pl.len().alias("order_count"))
        .sort("o_orderpriority")
    )


def q05(t: Tables) -> pl.LazyFrame:
    """Q5: local supplier volume."""
    orders = t["orders"].filter(_in_range("o_orderdate", dt.date(1994, 1, 1), dt.date(1995, 1, 1)))
    return (
        t["region"].filter(_col("r_name") == "ASIA")
        .join(t["nation"], left_on="r_regionkey", right_on="n_regionkey")
        .join(t["customer"], left_on="n_nationkey", right_on="c_nationkey")
        .join(orders, left_on="c_custkey", right_on="o_custkey")
        .join(t["lineitem"], left_on="o_orderkey", right_on="l_orderkey")
        .join(t["supplier"], left_on=["l_suppkey", "n_nationkey"], right_on=["s_suppkey", "s_nationkey"])
        .group_by("n_name")
        .agg(_disc_price().sum().alias("revenue"))
        .sort("revenue", descending=True)
    )


def q06(t: Tables) -> pl.LazyFrame:
    """Q6: forecasting revenue change."""
    return (
        t["lineitem"]
        .filter(
            _in_range("l_shipdate", dt.date(1994, 1, 1), dt.date(1995, 1, 1))
            & _col("l_discount").is_between(Decimal("0.05"), Decimal("0.07"))
            & (_col("l_quantity") < 24)
        )
        .select(_sql_sum(_col("l_extendedprice") * _col("l_discount")).alias("revenue"))
    )


def q07(t: Tables) -> pl.LazyFrame:
    """Q7: volume shipping."""
    pair = ["FRANCE", "GERMANY"]
    supp_nation = t["nation"].filter(_col("n_name").is_in(pair)).select("n_nationkey",
                                                                        _col("n_name").alias("supp_nation"))
    cust_nation = t["nation"].filter(_col("n_name").is_in(pair)).select("n_nationkey",
                                                                        _col("n_name").alias("cust_nation"))
    suppliers = t["supplier"].join(supp_nation, left_on="s_nationkey", right_on="n_nationkey")
    customers = t["customer"].join(cust_nation, left_on="c_nationkey", right_on="n_nationkey")
    return (
        t["lineitem"].filter(_col("l_shipdate").is_between(dt.date(1995, 1, 1), dt.date(1996, 12, 31)))
        .join(suppliers, left_on="l_suppkey", right_on="s_suppkey")
        .join(t["orders"], left_on="l_orderkey", right_on="o_orderkey")
        .join(customers, left_on="o_custkey", right_on="c_custkey")
        .filter(_col("supp_nation") != _col("cust_nation"))
        .group_by("supp_nation", "cust_nation", _col("l_shipdate").dt.year().alias("l_year"))
        .agg(_disc_price().sum().alias("revenue"))
        .sort("supp_nation", "cust_nation", "l_year")
    )


def q08(t: Tables) -> pl.LazyFrame:
    """Q8: national market share."""
    america = (
        t["region"].filter(_col("r_name") == "AMERICA")
        .join(t["nation"], left_on="r_regionkey", right_on="n_regionkey")
        .select("n_nationkey")
    )
    customers = t["customer"].join(america, left_on="c_nationkey", right_on="n_nationkey", how="semi")
    orders = t["orders"].filter(_col("o_orderdate").is_between(dt.date(1995, 1, 1), dt.date(1996, 12, 31)))
    suppliers = t["supplier"].join(
        t["nation"].select("n_nationkey", _col("n_name").alias("nation")), left_on="s_nationkey", right_on="n_nationkey"
    )
    volume = _disc_price()
    return (
        t["part"].filter(_col("p_type") == "ECONOMY ANODIZED STEEL")
        .join(t["lineitem"], left_on="p_partkey", right_on="l_partkey")
        .join(suppliers, left_on="l_suppkey", right_on="s_suppkey")
        .join(orders, left_on="l_orderkey", right_on="o_orderkey")
        .join(customers, left_on="o_custkey", right_on="c_custkey")
        .group_by(_col("o_orderdate").dt.year().alias("o_year"))
        .agg(_ratio(pl.when(_col("nation") == "BRAZIL").then(volume).otherwise(0).sum(),
                    volume.sum()).alias("mkt_share"))
        .sort("o_year")
    )


def q09(t: Tables) -> pl.LazyFrame:
    """Q9: product type profit measure."""
    amount = _disc_price() - _col("ps_supplycost") * _col("l_quantity")
    return (
        t["part"].filter(_col("p_name").str.contains("green", literal=True))
        .join(t["lineitem"], left_on="p_partkey", right_on="l_partkey")
        .join(t["partsupp"], left_on=["p_partkey", "l_suppkey"], right_on=["ps_partkey", "ps_suppkey"])
        .join(t["supplier"], left_on="l_suppkey", right_on="s_suppkey")
        .join(t["nation"], left_on="s_nationkey", right_on="n_nationkey")
        .join(t["orders"], left_on="l_orderkey", right_on="o_orderkey")
        .group_by(_col("n_name").alias("nation"), _col("o_orderdate").dt.year().alias("o_year"))
        .agg(amount.sum().alias("sum_profit"))
        .sort(["nation", "o_year"], descending=[False, True])
    )


def q10(t: Tables) -> pl.LazyFrame:
    """Q10: returned item reporting."""
    orders = t["orders"].filter(_in_range("o_orderdate", dt.date(1993, 10, 1), dt.date(1994, 1, 1)))
    return (
        t["customer"]
        .join(orders, left_on="c_custkey", right_on="o_custkey")
        .join(t["lineitem"].filter(_col("l_returnflag") == "R"), left_on="o_orderkey", right_on="l_orderkey")
        .join(t["nation"], left_on="c_nationkey", right_on="n_nationkey")
        .group_by("c_custkey", "c_name", "c_acctbal", "c_phone", "n_name", "c_address", "c_comment")
        .agg(_disc_price().sum().alias("revenue"))
        .select("c_custkey", "c_name", "revenue", "c_acctbal", "n_name", "c_address", "c_phone", "c_comment")
        .sort("revenue", descending=True)
        .head(20)
    )


def q11(t: Tables) -> pl.LazyFrame:
    """Q11: important stock identification."""
    german = (
        t["partsupp"]
        .join(t["supplier"], left_on="ps_suppkey", right_on="s_suppkey")
        .join(t["nation"].filter(_col("n_name") == "GERMANY"), left_on="s_nationkey", right_on="n_nationkey",
              how="semi")
        .with_columns((_col("ps_supplycost") * _col("ps_availqty")).alias("value"))
    )
    total = german.select(_col("value").sum().alias("total"))
    # value > total * 0.0001, kept exact in decimals as value * 10000 > total.
    return (
        german.group_by("ps_partkey").agg(_col("value").sum())
        .join(total, how="cross")
        .filter(_col("value") * 10000 > _col("total"))
        .select("ps_partkey", "value")
        .sort("value", descending=True)
    )


def q12(t: Tables) -> pl.LazyFrame:
    """Q12: shipping modes and order priority."""
    high = _col("o_orderpriority").is_in(["1-URGENT", "2-HIGH"])
    return (
        t["lineitem"]
        .filter(
            _col("l_shipmode").is_in(["MAIL", "SHIP"])
            & (_col("l_commitdate") < _col("l_receiptdate"))
            & (_col("l_shipdate") < _col("l_commitdate"))
            & _in_range("l_receiptdate", dt.date(1994, 1, 1), dt.date(1995, 1, 1))
        )
        .join(t["orders"], left_on="l_orderkey", right_on="o_orderkey")
        .group_by("l_shipmode")
        .agg(
            pl.when(high).then(1).otherwise(0).sum().alias("high_line_count"),
            pl.when(high).then(0).otherwise(1).sum().alias("low_line_count"),
        )
        .sort("l_shipmode")
    )


def q13(t: Tables) -> pl.LazyFrame:
    """Q13: customer distribution."""
    orders = t["orders"].filter(~_col("o_comment").str.contains("special.*requests"))
    return (
        t["customer"]
        .join(orders, left_on="c_custkey", right_on="o_custkey", how="left")
        .group_by("c_custkey")
        .agg(_col("o_orderkey").count().alias("c_count"))
        .group_by("c_count")
        .agg(pl.len().alias("custdist"))
        .sort(["custdist", "c_count"], descending=[True, True])
    )


def q14(t: Tables) -> pl.LazyFrame:
    """Q14: promotion effect."""
    volume = _disc_price()
    promo = pl.when(_col("p_type").str.starts_with("PROMO")).then(volume).otherwise(0)
    return (
        t["lineitem"].filter(_in_range("l_shipdate", dt.date(1995, 9, 1), dt.date(1995, 10, 1)))
        .join(t["part"], left_on="l_partkey", right_on="p_partkey")
        .select((100.0 * _ratio(_sql_sum(promo), _sql_sum(volume))).alias("promo_revenue"))
    )


def q15(t: Tables) -> pl.LazyFrame:
    """Q15: top supplier."""
    revenue = (
        t["lineitem"].filter(_in_range("l_shipdate", dt.date(1996, 1, 1), dt.date(1996, 4, 1)))
        .group_by(_col("l_suppkey").alias("supplier_no"))
        .agg(_disc_price().sum().alias("total_revenue"))
    )
    return (
        t["supplier"]
        .join(revenue, left_on="s_suppkey", right_on="supplier_no")
        .filter(_col("total_revenue") == _col("total_revenue").max())
        .select("s_suppkey", "s_name", "s_address", "s_phone", "total_revenue")
        .sort("s_suppkey")
    )


def q16(t: Tables) -> pl.LazyFrame:
    """Q16: parts/supplier relationship."""
    complaints = t["supplier"].filter(_col("s_comment").str.contains("Customer.*Complaints"))
    parts = t["part"].filter(
        (_col("p_brand") != "Brand#45")
        & ~_col("p_type").str.starts_with("MEDIUM POLISHED")
        & _col("p_size").is_in([49, 14, 23, 45, 19, 3, 36, 9])
    )
    return (
        t["partsupp"]
        .join(complaints, left_on="ps_suppkey", right_on="s_suppkey", how="anti")
        .join(parts, left_on="ps_partkey", right_on="p_partkey")
        .group_by("p_brand", "p_type", "p_size")
        .agg(_col("ps_suppkey").n_unique().alias("supplier_cnt"))
        .sort(["supplier_cnt", "p_brand", "p_type", "p_size"], descending=[True, False, False, False])
    )


def q17(t: Tables) -> pl.LazyFrame:
    """Q17: small-quantity-order revenue."""
    parts = t["part"].filter((_col("p_brand") == "Brand#23") & (_col("p_container") == "MED BOX"))
    lines = t["lineitem"].join(parts, left_on="l_partkey", right_on="p_partkey", how="semi")
    small = lines.group_by("l_partkey").agg((0.2 * _col("l_quantity").mean()).alias("small_qty"))
    return (
        lines.join(small, on="l_partkey")
        .filter(_col("l_quantity") < _col("small_qty"))
        .select((_sql_sum(_col("l_extendedprice")) / 7.0).alias("avg_yearly"))
    )


def q18(t: Tables) -> pl.LazyFrame:
    """Q18: large volume customer."""
    big = (
        t["lineitem"].group_by("l_orderkey")
        .agg(_col("l_quantity").sum().alias("qty"))
        .filter(_col("qty") > 300)
        .select("l_orderkey")
    )
    return (
        t["orders"].join(big, left_on="o_orderkey", right_on="l_orderkey", how="semi")
        .join(t["customer"], left_on="o_custkey", right_on="c_custkey")
        .join(t["lineitem"], left_on="o_orderkey", right_on="l_orderkey")
        .group_by("c_name", _col("o_custkey").alias("c_custkey"), "o_orderkey", "o_orderdate", "o_totalprice")
        .agg(_col("l_quantity").sum().alias("sum(l_quantity)"))
        .sort(["o_totalprice", "o_orderdate"], descending=[True, False])
        .head(100)
    )


def q19(t: Tables) -> pl.LazyFrame:
    """Q19: discounted revenue."""

    def branch(brand: str, containers: list[str], low: int, max_size: int) -> pl.Expr:
        return (
            (_col("p_brand") == brand)
            & _col("p_container").is_in(containers)
            & _col("l_quantity").is_between(low, low + 10)
            & _col("p_size").is_between(1, max_size)
        )

    return (
        t["lineitem"]
        .filter(_col("l_shipmode").is_in(["AIR", "AIR REG"]) & (_col("l_shipinstruct") == "DELIVER IN PERSON"))
        .join(t["part"], left_on="l_partkey", right_on="p_partkey")
        .filter(
            branch("Brand#12", ["SM CASE", "SM BOX", "SM PACK", "SM PKG"], 1, 5)
            | branch("Brand#23", ["MED BAG", "MED BOX", "MED PKG", "MED PACK"], 10, 10)
            | branch("Brand#34", ["LG CASE", "LG BOX", "LG PACK", "LG PKG"], 20, 15)
        )
        .select(_sql_sum(_disc_price()).alias("revenue"))
    )


def q20(t: Tables) -> pl.LazyFrame:
    """Q20: potential part promotion."""
    forest = t["part"].filter(_col("p_name").str.starts_with("forest"))
    shipped = (
        t["lineitem"].filter(_in_range("l_shipdate", dt.date(1994, 1, 1), dt.date(1995, 1, 1)))
        .group_by("l_partkey", "l_suppkey")
        .agg((0.5 * _col("l_quantity").sum().cast(pl.Float64)).alias("half_qty"))
    )
    excess = (
        t["partsupp"].join(forest, left_on="ps_partkey", right_on="p_partkey", how="semi")
        .join(shipped, left_on=["ps_partkey", "ps_suppkey"], right_on=["l_partkey", "l_suppkey"])
        .filter(_col("ps_availqty") > _col("half_qty"))
    )
    return (
        t["supplier"]
        .join(excess, left_on="s_suppkey", right_on="ps_suppkey", how="semi")
        .join(t["nation"].filter(_col("n_name") == "CANADA"), left_on="s_nationkey", right_on="n_nationkey", how="semi")
        .select("s_name", "s_address")
        .sort("s_name")
    )


def q21(t: Tables) -> pl.LazyFrame:
    """Q21: suppliers who kept orders waiting."""
    lineitem = t["lineitem"]
    late = lineitem.filter(_col("l_receiptdate") > _col("l_commitdate"))
    # EXISTS another supplier on the order: the order has more than one supplier.
    shared = lineitem.group_by("l_orderkey").agg(_col("l_suppkey").n_unique().alias("n")).filter(_col("n") > 1)
    # NOT EXISTS another late supplier: the late line's supplier is the order's only late one.
    alone = late.group_by("l_orderkey").agg(_col("l_suppkey").n_unique().alias("n")).filter(_col("n") == 1)
    return (
        late
        .join(shared, on="l_orderkey", how="semi")
        .join(alone, on="l_orderkey", how="semi")
        .join(t["orders"].filter(_col("o_orderstatus") == "F"), left_on="l_orderkey", right_on="o_orderkey", how="semi")
        .join(t["supplier"], left_on="l_suppkey", right_on="s_suppkey")
        .join(t["nation"].filter(_col("n_name") == "SAUDI ARABIA"), left_on="s_nationkey", right_on="n_nationkey",
              how="semi")
        .group_by("s_name")
        .agg(pl.len().alias("numwait"))
        .sort(["numwait", "s_name"], descending=[True, False])
        .head(100)
    )


def q22(t: Tables) -> pl.LazyFrame:
    """Q22: global sales opportunity."""
    codes = ["13", "31", "23", "29", "30", "18", "17"]
    customers = t["customer"].with_columns(_col("c_phone").str.slice(0, 2).alias("cntrycode")).filter(
        _col("cntrycode").is_in(codes)
    )
    average = customers.filter(_col("c_acctbal") > 0).select(_col("c_acctbal").mean().alias("avg_acctbal"))
    return (
        customers.join(average, how="cross")
        .filter(_col("c_acctbal") > _col("avg_acctbal"))
        .join(t["orders"], left_on="c_custkey", right_on="o_custkey", how="anti")
        .group_by("cntrycode")
        .agg(pl.len().alias("numcust"), _col("c_acctbal").sum().alias("totacctbal"))
        .sort("cntrycode")
    )


QUERIES: dict[int, Callable[[Tables], pl.LazyFrame]] = {n: globals()[f"q{n:02d}"] for n in range(1, 23)}


def scan(paths: dict[str, str]) -> Tables:
    """Each table as a lazy Parquet scan: nothing is read until a query is collected."""
    return {name: pl.scan_parquet(path) for name, path in paths.items()}
