"""quiver/planners/statistics.py: row, byte and column estimates from Parquet footers and in-memory tables,
the selectivity of filters (equality 1/ndv, ranges as the fraction of a column's span, range bounds
on one column intersected), and join and aggregate cardinalities.

Every expected number is derived from the module's rules, written out next to the assertion."""
from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from quiver import functions as F
from quiver.engine.core import plan as L
from quiver.engine.core import types as T
from quiver.engine.core.expressions import (
    AttributeRef,
    Comparison,
    In,
    IsNotNull,
    IsNull,
    Literal,
    Not,
    Or,
)
from quiver.planners.statistics import (
    EQUALITY_SELECTIVITY,
    FILTER_SELECTIVITY,
    LIKE_SELECTIVITY,
    RANGE_SELECTIVITY,
    ColumnEstimate,
    Estimate,
    equi_keys,
    estimate,
    join_rows,
    selectivity,
)

ROWS = 1000
START = dt.date(1992, 1, 1)
EPOCH_DAY = (START - dt.date(1970, 1, 1)).days  # dates are day numbers on one axis
# width of one orders row: id BIGINT 8 + grp BIGINT 8 + price DOUBLE 8 + d DATE 4 + name STRING 20 + sparse BIGINT 8
ORDERS_WIDTH = 8 + 8 + 8 + 4 + 20 + 8


def _orders_table(lo: int = 0, hi: int = ROWS) -> pa.Table:
    ids = range(lo, hi)
    return pa.table({
        "id": pa.array(ids, pa.int64()),                                  # 0..999, dense key
        "grp": pa.array([100 + i % 40 for i in ids], pa.int64()),         # 100..139, 40 values
        "price": pa.array([i / 2 for i in ids], pa.float64()),            # 0.0..499.5, not discrete
        "d": pa.array([START + dt.timedelta(days=i) for i in ids], pa.date32()),
        "name": pa.array([f"n{i}" for i in ids], pa.string()),
        "sparse": pa.array([i * 10 for i in ids], pa.int64()),            # span 9991 > rows
    })


@pytest.fixture
def orders(spark, tmp_path):
    path = tmp_path / "orders.parquet"
    pq.write_table(_orders_table(), path)
    return spark.read.parquet(str(path))


@pytest.fixture
def groups(spark, tmp_path):
    """The dimension `orders.grp` references: keys 100..139, one row each."""
    path = tmp_path / "groups.parquet"
    pq.write_table(pa.table({"g_key": pa.array(range(100, 140), pa.int64()),
                             "g_name": pa.array([f"g{i}" for i in range(40)])}), path)
    return spark.read.parquet(str(path))


def _attr(df, name: str) -> AttributeRef:
    return next(a for a in df._plan.output if a.name == name)


def _condition(df, column):
    """The analyzed condition of `df.filter(column)` (literals cast to the column's type)."""
    plan = df.filter(column)._plan
    assert isinstance(plan, L.Filter)
    return plan.condition


def _sel(df, column) -> float:
    return selectivity(_condition(df, column), estimate(df._plan))


# ---------------------------------------------------------------- leaves


def test_parquet_scan_reads_rows_and_ranges_from_the_footer(orders):
    est = estimate(orders._plan)
    assert est.rows == ROWS
    assert est.size_bytes == ROWS * ORDERS_WIDTH
    cols = {a.name: est.columns.get(a.expr_id) for a in orders._plan.output}
    # integer columns: ndv from the span (high - low + 1), capped by the row count
    assert cols["id"] == ColumnEstimate(ndv=1000, low=0.0, high=999.0)
    assert cols["grp"] == ColumnEstimate(ndv=40, low=100.0, high=139.0)
    assert cols["sparse"] == ColumnEstimate(ndv=ROWS, low=0.0, high=9990.0)
    # doubles have a range but no distinct count; dates are day numbers
    assert cols["price"] == ColumnEstimate(ndv=None, low=0.0, high=499.5)
    assert cols["d"] == ColumnEstimate(ndv=1000, low=float(EPOCH_DAY), high=float(EPOCH_DAY + 999))
    # strings: the footer's min/max are not numbers; a small file's distinct values are counted
    assert cols["name"] == ColumnEstimate(ndv=ROWS)


def test_string_distinct_counts_come_from_a_large_files_first_dictionary(spark, tmp_path):
    """Past SMALL_FILE_ROWS only a small dictionary is read, and only for a low-cardinality column."""
    from quiver.connectors.parquet import SMALL_FILE_ROWS
    rows = SMALL_FILE_ROWS + 1000
    path = str(tmp_path / "big.parquet")
    pq.write_table(pa.table({
        "status": pa.array(["F", "O", "P"] * (rows // 3) + ["F"] * (rows % 3)),
        "comment": pa.array([f"comment {i}" for i in range(rows)]),
    }), path, row_group_size=rows // 2)
    df = spark.read.parquet(path)
    est = estimate(df._plan)
    cols = {a.name: est.columns.get(a.expr_id) for a in df._plan.output}
    assert cols["status"] == ColumnEstimate(ndv=3)
    assert cols["comment"] == ColumnEstimate()  # one distinct value per row: no dictionary worth reading
    assert selectivity(_condition(df, F.col("status") == "F"), est) == pytest.approx(1 / 3)


def test_footer_statistics_merge_over_files_and_row_groups(spark, tmp_path):
    folder = tmp_path / "parts"
    folder.mkdir()
    pq.write_table(_orders_table(0, 300), folder / "a.parquet", row_group_size=100)
    pq.write_table(_orders_table(300, 1000), folder / "b.parquet", row_group_size=250)
    # a column with no min/max in one file (all null there) is unknown overall
    pq.write_table(pa.table({"x": pa.array([None] * 10, pa.int64())}), tmp_path / "nulls1.parquet")
    pq.write_table(pa.table({"x": pa.array(range(10), pa.int64())}), tmp_path / "nulls2.parquet")
    df = spark.read.parquet(str(folder))
    est = estimate(df._plan)
    assert est.rows == 1000
    assert est.columns[_attr(df, "id").expr_id] == ColumnEstimate(1000, 0.0, 999.0)
    assert est.columns[_attr(df, "price").expr_id] == ColumnEstimate(None, 0.0, 499.5)
    both = spark.read.parquet(str(tmp_path / "nulls1.parquet"), str(tmp_path / "nulls2.parquet"))
    est = estimate(both._plan)
    assert est.rows == 20
    assert _attr(both, "x").expr_id not in est.columns


def test_in_memory_table_reads_ranges_of_numeric_and_date_columns(spark):
    table = pa.table({
        "a": pa.array([i % 25 * 2 for i in range(50)], pa.int64()),   # 0, 2, .., 48
        "x": pa.array([i / 4 for i in range(50)], pa.float64()),
        "d": pa.array([START + dt.timedelta(days=i) for i in range(50)], pa.date32()),
        "s": pa.array([str(i) for i in range(50)]),
        "n": pa.array([None] * 50, pa.int64()),
    })
    df = spark.createDataFrame(table)
    est = estimate(df._plan)
    assert (est.rows, est.size_bytes) == (50, df._plan.table.nbytes)
    cols = {a.name: est.columns.get(a.expr_id) for a in df._plan.output}
    assert cols == {
        "a": ColumnEstimate(ndv=49, low=0.0, high=48.0),  # min(rows, 48 - 0 + 1)
        "x": ColumnEstimate(ndv=None, low=0.0, high=12.25),
        "d": ColumnEstimate(ndv=50, low=float(EPOCH_DAY), high=float(EPOCH_DAY + 49)),
        "s": None,  # no numeric range
        "n": None,  # no values
    }
    rng = spark.range(100)._plan
    assert estimate(rng) == Estimate(100, 800, {rng.attribute.expr_id: ColumnEstimate(100, 0, 99)})


def test_range_ids_are_distinct_and_a_modulo_bounds_the_groups(spark):
    from quiver import functions as F

    rng = spark.range(10, 1000, 3)._plan
    assert estimate(rng).columns[rng.attribute.expr_id] == ColumnEstimate(330, 10, 997)
    grouped = spark.range(0, 1_000_000).groupBy((F.col("id") % 1000).alias("g")).count()._plan
    assert estimate(grouped).rows == 1000
    few = spark.range(0, 50).groupBy((F.col("id") % 1000).alias("g")).count()._plan
    assert estimate(few).rows == 50


def test_in_memory_foreign_key_join_keeps_the_fact_rows(spark):
    fact = spark.createDataFrame(pa.table({"fk": pa.array([i % 7 for i in range(5000)], pa.int64())}))
    dim = spark.createDataFrame(pa.table({"pk": pa.array(range(7), pa.int64())}))
    # 5000 * 7 / max(ndv(fk) = 7, ndv(pk) = 7), not 5000 * 7 / 5000 as if fk were a key
    assert estimate(fact.join(dim, F.col("fk") == F.col("pk"))._plan).rows == 5000


def test_a_projected_modulo_key_joins_as_a_foreign_key(spark):
    facts = spark.range(0, 40_000_000).select((F.col("id") % 1000).alias("store"), F.col("id"))
    stores = spark.range(0, 1000).select(F.col("id").alias("store"))
    # ndv(id % 1000) is at most 1000 through the projection: 40M * 1000 / 1000, not 40M * 1000 / 40M
    store = facts._plan.output[0]
    assert estimate(facts._plan).columns[store.expr_id].ndv == 1000
    assert estimate(facts.join(stores, "store")._plan).rows == 40_000_000


def test_source_without_row_count_is_unknown_and_scales_bytes(spark, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,b\n" + "".join(f"{i},{i}\n" for i in range(100)))
    df = spark.read.csv(str(path), header=True, inferSchema=True)
    size = path.stat().st_size
    assert estimate(df._plan) == Estimate(-1, size)
    # a filter on an unknown source keeps rows unknown and scales the bytes by the default fraction
    assert estimate(df.filter(F.col("a") < 5)._plan) == Estimate(-1, int(size * RANGE_SELECTIVITY))
    assert estimate(df.filter(F.col("a") % 2 == 0)._plan).size_bytes == int(size * EQUALITY_SELECTIVITY)


# ---------------------------------------------------------------- selectivity


def test_equality_keeps_one_distinct_value(orders):
    assert _sel(orders, F.col("grp") == 105) == pytest.approx(1 / 40)
    assert _sel(orders, F.lit(105) == F.col("grp")) == pytest.approx(1 / 40)
    assert _sel(orders, F.col("id") == 7) == pytest.approx(1 / 1000)
    # no distinct count (a double column): the default
    assert _sel(orders, F.col("price") == 7.5) == EQUALITY_SELECTIVITY
    assert _sel(orders, F.col("grp") != 105) == pytest.approx(39 / 40)


def test_range_is_the_fraction_of_the_span(orders):
    span = 999  # id runs 0..999
    assert _sel(orders, F.col("id") < 250) == pytest.approx(250 / span)
    assert _sel(orders, F.col("id") >= 250) == pytest.approx(1 - 250 / span)
    assert _sel(orders, F.lit(250) > F.col("id")) == pytest.approx(250 / span)  # literal on the left
    assert _sel(orders, F.col("price") <= 100.0) == pytest.approx(100 / 499.5)
    assert _sel(orders, F.col("d") < F.lit(START + dt.timedelta(days=100))) == pytest.approx(100 / span)
    # outside the range: clamped, but never below one row
    assert _sel(orders, F.col("id") < -5) == pytest.approx(1 / ROWS)
    assert _sel(orders, F.col("id") > 5000) == pytest.approx(1 / ROWS)
    assert _sel(orders, F.col("id") > -5) == pytest.approx(1.0)


def test_range_bounds_on_one_column_intersect(orders, spark):
    span = 999
    feb = F.lit(dt.date(1992, 2, 1))  # day 31 of the column
    mar = F.lit(dt.date(1992, 3, 1))  # day 60
    window = _sel(orders, (F.col("d") >= feb) & (F.col("d") < mar))
    assert window == pytest.approx(29 / span)
    product = (1 - 31 / span) * (60 / span)
    assert window != pytest.approx(product)
    # BETWEEN is the same pair of bounds; a third bound narrows the interval again
    orders.createOrReplaceTempView("orders_stats")
    try:
        plan = spark.sql("SELECT * FROM orders_stats WHERE id BETWEEN 100 AND 299")._plan
    finally:
        spark.catalog.dropTempView("orders_stats")
    between = next(n for n in plan.walk() if isinstance(n, L.Filter))
    assert selectivity(between.condition, estimate(between.child)) == pytest.approx(199 / span)
    assert _sel(orders, (F.col("id") >= 100) & (F.col("id") < 600) & (F.col("id") < 300)) == pytest.approx(200 / span)
    # bounds on the same column written either way round
    assert _sel(orders, (F.lit(100) <= F.col("id")) & (F.col("id") < 300)) == pytest.approx(200 / span)
    # disjoint bounds keep at least one row
    assert _sel(orders, (F.col("id") > 600) & (F.col("id") < 400)) == pytest.approx(1 / ROWS)


def test_conditions_on_different_columns_multiply(orders):
    assert _sel(orders, (F.col("id") < 500) & (F.col("grp") == 105)) == pytest.approx(500 / 999 * (1 / 40))
    assert _sel(orders, (F.col("id") < 500) & (F.col("price") < 100.0)) == pytest.approx(500 / 999 * (100 / 499.5))
    # a range on one column and an interval on another
    both = (F.col("id") >= 100) & (F.col("id") < 300) & (F.col("price") > 400.0)
    assert _sel(orders, both) == pytest.approx(200 / 999 * (99.5 / 499.5))


def test_or_not_in_and_null_tests(orders):
    a = b = 1 / 40
    assert _sel(orders, (F.col("grp") == 105) | (F.col("grp") == 106)) == pytest.approx(a + b - a * b)
    assert _sel(orders, F.col("grp").isin(101, 102, 103)) == pytest.approx(3 / 40)
    assert _sel(orders, F.col("grp").isin(*range(100, 160))) == 1.0  # capped
    assert _sel(orders, F.col("price").isin(1.0, 2.0)) == pytest.approx(2 * EQUALITY_SELECTIVITY)
    assert _sel(orders, ~(F.col("id") < 250)) == pytest.approx(1 - 250 / 999)
    assert _sel(orders, F.col("name").isNull()) == 0.05
    assert _sel(orders, F.col("name").isNotNull()) == 1.0
    assert _sel(orders, F.col("name").like("n1%")) == LIKE_SELECTIVITY


def test_unknown_columns_fall_back_to_defaults():
    x = AttributeRef("x", T.LongType(), expr_id=10_001)
    y = AttributeRef("y", T.LongType(), expr_id=10_002)
    nothing = Estimate(100, 800)
    five = Literal(5, T.LongType())
    assert selectivity(Comparison("=", x, five), nothing) == EQUALITY_SELECTIVITY
    assert selectivity(Comparison("<", x, five), nothing) == RANGE_SELECTIVITY
    assert selectivity(Comparison(">=", five, x), nothing) == RANGE_SELECTIVITY
    assert selectivity(Comparison("<", x, y), nothing) == RANGE_SELECTIVITY
    assert selectivity(In(x, (five, five, five, five)), nothing) == pytest.approx(4 * EQUALITY_SELECTIVITY)
    assert selectivity(Not(Comparison("=", x, five)), nothing) == pytest.approx(1 - EQUALITY_SELECTIVITY)
    assert selectivity(IsNull(x), nothing) == 0.05 and selectivity(IsNotNull(x), nothing) == 1.0
    assert selectivity(Or(Comparison("=", x, five), Comparison("<", y, five)), nothing) == pytest.approx(
        0.1 + 1 / 3 - 0.1 / 3)
    assert selectivity(Literal(True, T.BooleanType()), nothing) == 1.0
    assert selectivity(Literal(False, T.BooleanType()), nothing) == 0.0
    # a column with a range but no width (low == high) cannot place a bound
    flat = Estimate(100, 800, {x.expr_id: ColumnEstimate(1, 7.0, 7.0)})
    assert selectivity(Comparison("<", x, five), flat) == RANGE_SELECTIVITY
    assert selectivity(Comparison("=", x, five), flat) == 1.0
    # anything else, e.g. a boolean column as a condition
    flag = AttributeRef("flag", T.BooleanType(), expr_id=10_003)
    assert selectivity(flag, nothing) == FILTER_SELECTIVITY


# ---------------------------------------------------------------- operators


def test_filter_scales_rows_and_caps_distinct_counts(orders):
    est = estimate(orders.filter(F.col("id") < 10)._plan)
    rows = int(ROWS * 10 / 999)  # 10
    assert est.rows == rows == 10
    assert est.size_bytes == rows * ORDERS_WIDTH
    assert est.columns[_attr(orders, "grp").expr_id].ndv == 10  # 40 groups cannot survive in 10 rows
    assert est.columns[_attr(orders, "id").expr_id].ndv == 10


def test_projection_keeps_column_estimates_through_aliases(orders):
    q = orders.select(F.col("grp").alias("g"), "price")
    est = estimate(q._plan)
    assert est.rows == ROWS and est.size_bytes == ROWS * (8 + 8)
    g = _attr(q, "g")
    assert est.columns[g.expr_id] == ColumnEstimate(40, 100.0, 139.0)


def test_aggregate_groups(orders):
    one = estimate(orders.groupBy("grp").count()._plan)
    assert one.rows == 40 and one.size_bytes == 40 * (8 + 8)
    # the product of distinct counts, capped by the input rows
    assert estimate(orders.groupBy("grp", "id").count()._plan).rows == ROWS
    # no distinct count (double) or a computed key: sqrt(rows)
    assert estimate(orders.groupBy("price").count()._plan).rows == int(ROWS ** 0.5)
    assert estimate(orders.groupBy((F.col("id") * 7).alias("m")).count()._plan).rows == int(ROWS ** 0.5)
    # x % m has at most m values
    assert estimate(orders.groupBy((F.col("id") % 7).alias("m")).count()._plan).rows == 7
    # after a filter, distinct counts shrink with the rows
    assert estimate(orders.filter(F.col("id") < 10).groupBy("grp").count()._plan).rows == 10
    assert estimate(orders.agg(F.sum("price"))._plan).rows == 1


def test_aliased_grouping_column_keeps_its_distinct_count(orders):
    q = orders.groupBy(F.col("grp").alias("g")).count()
    est = estimate(q._plan)
    assert est.rows == 40  # as groupBy("grp"), not sqrt(1000)
    assert est.columns[_attr(q, "g").expr_id] == ColumnEstimate(40, 100.0, 139.0)


def test_limit_and_union(orders):
    assert estimate(orders.limit(10)._plan).rows == 10
    assert estimate(orders.limit(5000)._plan).rows == ROWS
    assert estimate(orders.union(orders)._plan).rows == 2 * ROWS


# ---------------------------------------------------------------- joins


def test_key_foreign_key_join_keeps_the_fact_rows(orders, groups):
    q = orders.join(groups, orders["grp"] == groups["g_key"])
    est = estimate(q._plan)
    # |orders| * |groups| / max(ndv(grp) = 40, ndv(g_key) = 40)
    assert est.rows == ROWS * 40 // 40
    assert est.size_bytes == ROWS * (ORDERS_WIDTH + 8 + 20)
    # a dimension filtered to 10 keys: 1000 * 10 / max(40, 10)
    small = groups.filter(F.col("g_key") < 110)
    small_rows = int(40 * 10 / 39)  # g_key spans 100..139: 10/39 of 40 rows
    assert estimate(small._plan).rows == small_rows
    assert estimate(orders.join(small, orders["grp"] == groups["g_key"])._plan).rows == int(ROWS * small_rows / 40)


def test_join_rows_formula():
    a_x, a_y = AttributeRef("ax", T.LongType(), expr_id=1), AttributeRef("ay", T.LongType(), expr_id=2)
    b_x, b_y = AttributeRef("bx", T.LongType(), expr_id=3), AttributeRef("by", T.LongType(), expr_id=4)
    a = Estimate(100, 0, {1: ColumnEstimate(10), 2: ColumnEstimate(20)})
    b = Estimate(50, 0, {3: ColumnEstimate(5), 4: ColumnEstimate(5)})
    assert join_rows(a, b, []) == 100 * 50
    assert join_rows(a, b, [(a_x, b_x)]) == 100 * 50 / 10
    # composite keys: 10*20 = 200 distinct pairs capped at 100 rows; 5*5 = 25 on the right
    assert join_rows(a, b, [(a_x, b_x), (a_y, b_y)]) == 100 * 50 / 100
    # a key without a distinct count counts every row as distinct
    c = AttributeRef("c", T.LongType(), expr_id=9)
    assert join_rows(a, b, [(c, b_x)]) == 100 * 50 / 100


def test_equi_keys_orients_pairs_and_skips_other_conditions():
    l1, l2 = AttributeRef("l1", T.LongType(), expr_id=1), AttributeRef("l2", T.LongType(), expr_id=2)
    r1, r2 = AttributeRef("r1", T.LongType(), expr_id=3), AttributeRef("r2", T.LongType(), expr_id=4)
    from quiver.engine.core.expressions import And
    cond = And(And(Comparison("=", r1, l1), Comparison("<=>", l2, r2)), Comparison("<", l1, r2))
    assert equi_keys(cond, {1, 2}, {3, 4}) == [(l1, r1), (l2, r2)]
    assert equi_keys(Comparison("=", l1, l2), {1, 2}, {3, 4}) == []
    assert equi_keys(None, {1}, {3}) == []


@pytest.mark.parametrize("how,rows", [
    ("inner", 100 * 10 // 100),   # no column statistics: ndv = rows, so |L||R|/max(|L|,|R|)
    ("left", 100),                # at least every left row
    ("right", 10),
    ("full", 100),
    ("left_semi", 10),            # the right's 10 keys among the left's 100: a tenth of the left
    ("left_anti", 100),           # an anti join keeps the left estimate
])
def test_join_types(spark, how, rows):
    left = spark.createDataFrame(pa.table({"x": pa.array(range(100), pa.int64())}))
    right = spark.createDataFrame(pa.table({"y": pa.array(range(10), pa.int64())}))
    assert estimate(left.join(right, left["x"] == right["y"], how)._plan).rows == rows


def test_cross_join_and_unknown_sides(spark, tmp_path):
    left = spark.createDataFrame(pa.table({"x": pa.array(range(100), pa.int64())}))
    right = spark.createDataFrame(pa.table({"y": pa.array(range(10), pa.int64())}))
    cross = estimate(left.crossJoin(right)._plan)
    assert (cross.rows, cross.size_bytes) == (1000, 1000 * 16)
    path = tmp_path / "u.csv"
    path.write_text("y\n1\n2\n")
    unknown = spark.read.csv(str(path), header=True, inferSchema=True)
    assert estimate(left.join(unknown, left["x"] == unknown["y"])._plan) == Estimate(-1, -1)
    assert estimate(left.union(left.select(F.col("x")).limit(3)).union(left)._plan).rows == 203
    assert estimate(left.union(unknown)._plan) == Estimate(-1, -1)


def test_a_cached_relation_is_sized_by_what_it_holds(spark):
    """Once materialized, a cache's rows and bytes are known, so joins over it are sized (broadcast or not)."""
    small = spark.range(50).withColumnRenamed("id", "k").cache()
    small.count()
    plan = spark.range(1000).join(small, F.col("id") == F.col("k"))._execution().optimized
    cached = next(n for n in plan.walk() if isinstance(n, L.InMemoryRelation))
    assert estimate(cached).rows == 50
    assert 0 < estimate(cached).size_bytes < 50 * 64
    small.unpersist()
