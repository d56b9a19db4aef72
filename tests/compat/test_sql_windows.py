"""Window functions and QUALIFY in `spark.sql`, run on real PySpark and on Quiver and compared.

Every query reads the same temp views on both engines; column names (Spark's names for
unaliased windows included), Spark type names and rows must agree. Orderings that could
tie are broken by `order_id`, so each engine's answer is the only right one.
"""
from __future__ import annotations

import pytest

from .data import depts, people, sales
from .harness import assert_both_raise, assert_same


def _register(spark) -> None:
    sales(spark).createOrReplaceTempView("win_sales")
    people(spark).createOrReplaceTempView("win_people")
    depts(spark).createOrReplaceTempView("win_depts")


def _sql(query: str):
    def program(spark, F, T, Window):
        _register(spark)
        return spark.sql(query)
    program.__name__ = f"sql: {query}"
    return program


def _both(spark, query: str) -> None:
    _register(spark)
    spark.sql(query).collect()


# ---------------------------------------------------------------- queries, unordered results

QUERIES = [
    # ranking functions: ties, nulls in the key and a null partition
    "SELECT order_id, region, row_number() OVER (PARTITION BY region ORDER BY qty DESC NULLS LAST, order_id) "
    "FROM win_sales",
    "SELECT order_id, rank() OVER (PARTITION BY region ORDER BY qty), dense_rank() OVER (PARTITION BY region "
    "ORDER BY qty), percent_rank() OVER (PARTITION BY region ORDER BY qty), cume_dist() OVER (PARTITION BY region "
    "ORDER BY qty) FROM win_sales",
    "SELECT order_id, rank() OVER (ORDER BY qty DESC NULLS FIRST) AS r, dense_rank() OVER (ORDER BY category) AS d, "
    "ntile(3) OVER (ORDER BY order_id) AS t3, ntile(4) OVER (PARTITION BY category ORDER BY order_id) AS t4 "
    "FROM win_sales",
    # lag / lead with offsets and defaults of other types
    "SELECT order_id, lag(qty) OVER (PARTITION BY region ORDER BY order_id), lag(qty, 2) OVER (ORDER BY order_id), "
    "lead(price, 1, 0.0) OVER (ORDER BY order_id), lead(product, 2, 'none') OVER (PARTITION BY category "
    "ORDER BY order_id) AS nxt, lag(qty, 1, 0) OVER (ORDER BY order_id) AS prev FROM win_sales",
    # first/last values over the default and whole-partition frames
    "SELECT order_id, first_value(qty) OVER (PARTITION BY category ORDER BY order_id), last_value(qty) OVER "
    "(PARTITION BY category ORDER BY order_id), first(product) OVER (PARTITION BY region ORDER BY order_id), "
    "last(price) OVER (PARTITION BY category ORDER BY order_id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED "
    "FOLLOWING) FROM win_sales",
    # aggregates over a partition (no ORDER BY: the whole partition)
    "SELECT order_id, sum(qty) OVER (PARTITION BY region), avg(price) OVER (PARTITION BY category), "
    "min(day) OVER (PARTITION BY category), max(product) OVER (), count(*) OVER (PARTITION BY region), "
    "count(qty) OVER (PARTITION BY region), mean(qty) OVER () FROM win_sales",
    # running aggregates: the default RANGE frame includes the current row's peers (ties on qty)
    "SELECT order_id, sum(price) OVER (ORDER BY qty), count(*) OVER (PARTITION BY category ORDER BY qty), "
    "max(order_id) OVER (ORDER BY qty NULLS LAST) FROM win_sales",
    # ROWS frames, written every way Spark accepts
    "SELECT order_id, sum(qty) OVER (ORDER BY order_id ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING) AS a, "
    "sum(qty) OVER (ORDER BY order_id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS b, "
    "avg(price) OVER (PARTITION BY category ORDER BY order_id ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS c, "
    "min(qty) OVER (ORDER BY order_id ROWS UNBOUNDED PRECEDING) AS d, max(qty) OVER (ORDER BY order_id ROWS "
    "CURRENT ROW) AS e, count(qty) OVER (ORDER BY order_id ROWS BETWEEN 3 PRECEDING AND 1 PRECEDING) AS f "
    "FROM win_sales",
    # unaliased ROWS / RANGE frames keep the SQL spelling in the column name
    "SELECT sum(qty) OVER (ORDER BY order_id ROWS BETWEEN 1 PRECEDING AND 2 FOLLOWING), "
    "sum(qty) OVER (ORDER BY order_id RANGE BETWEEN 2 PRECEDING AND CURRENT ROW), "
    "count(*) OVER (PARTITION BY region ORDER BY order_id ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING) FROM win_sales",
    # RANGE frames: value offsets over an ascending key without nulls, peers, the whole partition
    "SELECT order_id, sum(price) OVER (ORDER BY order_id RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS a, "
    "count(*) OVER (PARTITION BY category ORDER BY order_id RANGE BETWEEN 3 PRECEDING AND CURRENT ROW) AS b, "
    "sum(order_id) OVER (ORDER BY qty RANGE CURRENT ROW) AS c, "
    "sum(qty) OVER (ORDER BY qty RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS d FROM win_sales",
    # named windows: OVER w, OVER (w), a window defined as another
    "SELECT order_id, sum(qty) OVER w, rank() OVER w, lag(price) OVER (w), count(*) OVER whole FROM win_sales "
    "WINDOW w AS (PARTITION BY region ORDER BY order_id), whole AS w",
    "SELECT order_id, avg(qty) OVER running AS r FROM win_sales "
    "WINDOW running AS (ORDER BY order_id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW), unused AS (PARTITION BY region)",
    # windows inside expressions, and two specifications in one select list
    "SELECT order_id, (rank() OVER (ORDER BY qty)) * 10, qty - avg(qty) OVER (PARTITION BY category) AS diff, "
    "CASE WHEN row_number() OVER (PARTITION BY category ORDER BY price DESC, order_id) = 1 THEN 'top' END AS top "
    "FROM win_sales",
    "SELECT order_id, sum(qty) OVER (PARTITION BY region ORDER BY order_id) + sum(qty) OVER (PARTITION BY category) "
    "FROM win_sales",
    # computed partition and order keys
    "SELECT order_id, row_number() OVER (PARTITION BY region IS NULL, category ORDER BY qty * price DESC, order_id) "
    "AS rn, sum(qty) OVER (PARTITION BY upper(category)) AS s FROM win_sales",
    # windows over aggregates in a GROUP BY query, named as Spark names them
    "SELECT region, sum(qty), rank() OVER (ORDER BY sum(qty) DESC) FROM win_sales GROUP BY region",
    "SELECT category, count(*) AS n, sum(sum(qty)) OVER () AS total, sum(qty) / sum(sum(qty)) OVER () AS share "
    "FROM win_sales GROUP BY category",
    "SELECT category, region, max(price) AS top, dense_rank() OVER (PARTITION BY category ORDER BY max(price) DESC) "
    "AS r, lag(region) OVER (PARTITION BY category ORDER BY region) AS prev FROM win_sales GROUP BY category, region",
    "SELECT region, count(*), sum(count(*)) OVER (ORDER BY region ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) "
    "FROM win_sales GROUP BY region",
    "SELECT category, region, lag(sum(qty), 1, 0) OVER (PARTITION BY category ORDER BY region) FROM win_sales "
    "GROUP BY ALL",
    # HAVING drops a group before the windows rank what is left
    "SELECT region, sum(qty) AS s, rank() OVER (ORDER BY sum(qty)) AS r, count(*) OVER () AS groups "
    "FROM win_sales GROUP BY region HAVING sum(qty) > 5",
    # the top rows of each group, through a subquery and through QUALIFY
    "SELECT * FROM (SELECT order_id, region, qty, row_number() OVER (PARTITION BY region ORDER BY qty DESC, order_id) "
    "AS rn FROM win_sales) WHERE rn <= 2",
    "SELECT order_id, region, qty FROM win_sales QUALIFY row_number() OVER (PARTITION BY region ORDER BY qty DESC, "
    "order_id) = 1",
    "SELECT order_id, category, dense_rank() OVER (PARTITION BY category ORDER BY price DESC NULLS LAST) AS dr "
    "FROM win_sales QUALIFY dr <= 2 AND order_id > 1",
    "SELECT category, sum(qty) AS s FROM win_sales GROUP BY category, region QUALIFY rank() OVER "
    "(PARTITION BY category ORDER BY s DESC) = 1",
    "SELECT order_id, qty FROM win_sales WHERE price > 1 QUALIFY sum(qty) OVER (PARTITION BY category) > 8",
    # DISTINCT over window results, windows over a join and inside a CTE
    "SELECT DISTINCT category, count(*) OVER (PARTITION BY category) AS n FROM win_sales",
    "SELECT p.name, d.dept_name, rank() OVER (PARTITION BY d.dept_name ORDER BY p.salary DESC NULLS LAST) AS r "
    "FROM win_people p JOIN win_depts d ON p.dept_id = d.dept_id",
    "WITH ranked AS (SELECT name, city, age, row_number() OVER (PARTITION BY city ORDER BY age, id) AS rn "
    "FROM win_people) SELECT city, name FROM ranked WHERE rn = 1",
    "SELECT category, avg(price) AS a, avg(avg(price)) OVER () AS overall FROM win_sales GROUP BY category "
    "HAVING a > 1",
    # windows over no rows, inside a scalar subquery, and under a unary minus
    "SELECT count(*) OVER (), row_number() OVER (ORDER BY order_id) FROM win_sales WHERE false",
    "SELECT order_id, -sum(qty) OVER (PARTITION BY region) AS neg, (SELECT max(rn) FROM (SELECT row_number() "
    "OVER (ORDER BY dept_id) AS rn FROM win_depts)) AS m FROM win_sales",
    # integral and decimal running sums keep Spark's types
    "SELECT order_id, sum(qty) OVER (ORDER BY order_id) AS s, sum(CAST(price AS DECIMAL(10,2))) OVER "
    "(ORDER BY order_id) AS d, avg(qty) OVER (ORDER BY order_id) AS a FROM win_sales",
    # windows through Spark's other spellings: DISTRIBUTE BY / SORT BY inside OVER
    "SELECT order_id, sum(qty) OVER (DISTRIBUTE BY category SORT BY order_id) FROM win_sales",
]


@pytest.mark.parametrize("query", QUERIES)
def test_window_query(query):
    assert_same(_sql(query))


ORDERED = [
    "SELECT order_id, region, row_number() OVER (PARTITION BY region ORDER BY order_id DESC) AS rn "
    "FROM win_sales ORDER BY rn, order_id",
    "SELECT order_id, rank() OVER (ORDER BY qty DESC NULLS LAST) AS r FROM win_sales ORDER BY 2, 1 LIMIT 4",
    "SELECT region, sum(qty) AS s, rank() OVER (ORDER BY sum(qty) DESC) AS r FROM win_sales GROUP BY region "
    "ORDER BY r, region",
]


@pytest.mark.parametrize("query", ORDERED)
def test_window_query_ordered(query):
    assert_same(_sql(query), ordered=True)


def test_window_in_select_expr():
    def program(spark, F, T, Window):
        return sales(spark).selectExpr(
            "order_id", "row_number() OVER (PARTITION BY category ORDER BY order_id) AS rn",
            "sum(qty) OVER (PARTITION BY category ORDER BY order_id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)")
    assert_same(program)


def test_sql_window_matches_the_dataframe_window():
    """The same window written in SQL and with Window.partitionBy(..) gives the same column."""
    def program(spark, F, T, Window):
        _register(spark)
        w = Window.partitionBy("region").orderBy(F.col("qty").desc(), "order_id")
        api = sales(spark).select("order_id", F.rank().over(w).alias("r"), F.sum("qty").over(w).alias("s"))
        sql = spark.sql("SELECT order_id, rank() OVER w AS r, sum(qty) OVER w AS s FROM win_sales "
                        "WINDOW w AS (PARTITION BY region ORDER BY qty DESC, order_id)")
        return api.union(sql)
    assert_same(program)


# ---------------------------------------------------------------- IGNORE NULLS, RANGE over descending keys with nulls


def test_first_and_last_value_ignore_nulls():
    assert_same(_sql(
        "SELECT order_id, first_value(price) IGNORE NULLS OVER (PARTITION BY region ORDER BY order_id DESC) AS f, "
        "last_value(qty) IGNORE NULLS OVER (ORDER BY order_id) AS l, last(qty, true) OVER (PARTITION BY region "
        "ORDER BY order_id) AS l2 FROM win_sales"))


def test_range_frame_over_a_descending_key_with_nulls():
    assert_same(_sql(
        "SELECT order_id, sum(order_id) OVER (ORDER BY qty DESC RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) AS a, "
        "count(*) OVER (ORDER BY qty RANGE BETWEEN CURRENT ROW AND 2 FOLLOWING) AS b FROM win_sales"))


# ---------------------------------------------------------------- errors both engines raise


def _analysis_exception():
    from quiver.engine.core.errors import AnalysisException
    return AnalysisException


def _parse_exception():
    from quiver.engine.core.errors import ParseException
    return ParseException


@pytest.mark.parametrize("query, needles", [
    ("SELECT rank() FROM win_sales", ["rank", "OVER"]),
    ("SELECT sum(qty) OVER w FROM win_sales WINDOW v AS (ORDER BY qty)", ["'w'", "not defined", "v"]),
    ("SELECT row_number() OVER (ORDER BY qty ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM win_sales",
     ["row_number", "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"]),
    ("SELECT lag(qty) OVER (ORDER BY qty ROWS BETWEEN 1 PRECEDING AND 1 PRECEDING) FROM win_sales", ["lag", "frame"]),
    ("SELECT ntile(2) OVER (PARTITION BY region) FROM win_sales", ["ntile", "ORDER BY"]),
    ("SELECT count(DISTINCT qty) OVER (PARTITION BY region) FROM win_sales", ["DISTINCT", "window"]),
    ("SELECT order_id FROM win_sales WHERE row_number() OVER (ORDER BY qty) = 1", ["WHERE", "QUALIFY"]),
    ("SELECT region FROM win_sales GROUP BY region HAVING rank() OVER (ORDER BY region) = 1", ["HAVING"]),
    ("SELECT order_id FROM win_sales QUALIFY qty > 1", ["QUALIFY", "window function"]),
    ("SELECT sum(qty) OVER (ORDER BY qty, order_id RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM win_sales",
     ["RANGE", "one numeric ORDER BY"]),
    ("SELECT sum(qty) OVER (ORDER BY region RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM win_sales",
     ["RANGE", "string"]),
    ("SELECT sum(qty) OVER (ORDER BY qty ROWS BETWEEN 1 FOLLOWING AND 1 PRECEDING) FROM win_sales",
     ["lower bound"]),
    ("SELECT region, sum(qty) OVER (PARTITION BY region) FROM win_sales GROUP BY region",
     ["qty", "neither grouped nor aggregated"]),
    ("SELECT max(row_number() OVER (ORDER BY qty)) FROM win_sales", ["inside the aggregate function max()"]),
])
def test_window_errors(query, needles):
    assert_both_raise(lambda spark, F, T, Window: _both(spark, query), _analysis_exception(), match=needles)


@pytest.mark.parametrize("query, needles", [
    ("SELECT rank() OVER (w ORDER BY qty) FROM win_sales WINDOW w AS (PARTITION BY region)", ["window reference"]),
    ("SELECT sum(qty) OVER w FROM win_sales WINDOW w AS (ORDER BY qty), w AS (ORDER BY price)", ["defined twice"]),
])
def test_window_syntax_errors(query, needles):
    assert_both_raise(lambda spark, F, T, Window: _both(spark, query), _parse_exception(), match=needles)


def test_nth_value_in_sql_and_the_dataframe_api():
    def program(spark, F, T, Window):
        sales(spark).createOrReplaceTempView("win_sales")
        sql = spark.sql(
            "SELECT order_id, nth_value(price, 2) OVER (PARTITION BY region ORDER BY order_id) AS a, "
            "nth_value(price, 2) IGNORE NULLS OVER (PARTITION BY region ORDER BY order_id) AS b, "
            "nth_value(qty, 3) OVER (PARTITION BY region ORDER BY order_id "
            "ROWS BETWEEN 1 PRECEDING AND UNBOUNDED FOLLOWING) AS c FROM win_sales")
        w = Window.partitionBy("region").orderBy("order_id")
        api = sales(spark).select(
            "order_id", F.nth_value("price", 2).over(w).alias("a"),
            F.nth_value("price", 2, ignoreNulls=True).over(w).alias("b"),
            F.nth_value("qty", 3).over(w.rowsBetween(-1, Window.unboundedFollowing)).alias("c"))
        return sql.union(api)
    assert_same(program)


def test_nth_value_column_names():
    def program(spark, F, T, Window):
        w = Window.partitionBy("region").orderBy("order_id")
        return sales(spark).select("order_id", F.nth_value("price", 1).over(w),
                                   F.nth_value("price", 2, ignoreNulls=True).over(w))
    assert_same(program)


def test_running_and_whole_partition_min_max_restart_at_each_partition():
    def program(spark, F, T, Window):
        rows = [(k, i, v, s) for k, vals in [("a", [3, None, 1, 5]), ("b", [None, None]), ("c", [9, -2, 9]),
                                             ("d", [None, 4])]
                for i, (v, s) in enumerate(zip(vals, ["x", None, "b", "zz"]))]
        df = spark.createDataFrame(rows, "k string, i int, v int, s string")
        running = Window.partitionBy("k").orderBy("i").rowsBetween(Window.unboundedPreceding, Window.currentRow)
        whole = Window.partitionBy("k")
        return df.select("k", "i", F.max("v").over(running).alias("run_max"), F.min("v").over(running).alias("run_min"),
                         F.min("s").over(running).alias("run_min_s"), F.max("s").over(whole).alias("max_s"),
                         F.min("v").over(whole).alias("min_v"))
    assert_same(program)
