"""spark.sql() and SQL expression strings, checked against real PySpark.

Each query runs through `spark.sql` on PySpark and on Quiver over the same temp views;
column names, Spark type names and rows must agree (rows as multisets unless the query
orders them totally). Error tests check that Quiver names the problem and what is valid.
"""
from __future__ import annotations

import datetime as dt
import math
import os
import time
from decimal import Decimal
from typing import Any

import pytest

# Both engines hand back timestamps as naive datetimes in the process's zone: pin it.
os.environ["TZ"] = "UTC"
if hasattr(time, "tzset"):
    time.tzset()

from quiver.engine.core import types as T  # noqa: E402
from quiver.engine.core.errors import AnalysisException, ParseException  # noqa: E402
from quiver.engine.core.expressions import (  # noqa: E402
    AggregateFunction,
    Alias,
    And,
    CaseWhen,
    Cast,
    Comparison,
    In,
    IsNotNull,
    Literal,
    Not,
    ScalarFunction,
    UnresolvedColumn,
    UnresolvedStar,
)
from quiver.engine.sql.statements import parse_expression  # noqa: E402

PEOPLE = (
    [(1, "Alice", 34, "Paris", 5200.0, 10, dt.date(2020, 1, 15)),
     (2, "Bob", 45, "London", 4100.5, 20, dt.date(2019, 6, 1)),
     (3, "Carol", None, "Paris", 6100.0, 10, dt.date(2021, 3, 9)),
     (4, "Dan", 29, None, 3900.0, 30, None),
     (5, "Eve", 38, "Berlin", None, 20, dt.date(2018, 11, 30)),
     (6, "Frank", 45, "London", 4700.25, None, dt.date(2022, 2, 2)),
     (7, "Grace", 23, "Berlin", 3100.0, 10, dt.date(2023, 7, 4))],
    "id int, name string, age int, city string, salary double, dept_id int, hired date",
)
DEPTS = (
    [(10, "Engineering", "Paris"), (20, "Sales", "London"), (40, "Legal", "Rome"), (None, "Orphan", None)],
    "dept_id int, dept_name string, hq string",
)
PRICES = (
    [(1, Decimal("1.25"), 3), (2, Decimal("2.50"), None), (3, None, 7), (4, Decimal("10.00"), 1)],
    "item int, price decimal(10,2), qty bigint",
)
VIEWS = {"people": PEOPLE, "depts": DEPTS, "prices": PRICES}


@pytest.fixture(scope="session")
def pyspark_session():
    """Real PySpark: local[1], UTC, one shuffle partition (the data is tiny; Spark's per-task cost is not)."""
    pyspark_sql = pytest.importorskip("pyspark.sql")
    spark = (pyspark_sql.SparkSession.builder.master("local[1]").appName("quiver-sql-reference")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.session.timeZone", "UTC").config("spark.sql.shuffle.partitions", "1")
             .config("spark.default.parallelism", "1")
             .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


@pytest.fixture(scope="session")
def quiver_session():
    """Quiver with three shuffle partitions, so grouping, joins and DISTINCT really shuffle."""
    import quiver

    spark = quiver.Session.builder.master("local[2]").config("spark.sql.session.timeZone", "UTC").getOrCreate()
    spark.conf.set("spark.sql.shuffle.partitions", "3")
    return spark


def _register_views(spark):
    for name, (rows, schema) in VIEWS.items():
        spark.createDataFrame(rows, schema).createOrReplaceTempView(name)
    return spark


@pytest.fixture(scope="module")
def pyspark_sql(pyspark_session):
    """PySpark with this module's temp views (registered per module: other tests may reuse the names)."""
    return _register_views(pyspark_session)


@pytest.fixture(scope="module")
def quiver_sql(quiver_session):
    return _register_views(quiver_session)


# ---------------------------------------------------------------- comparison


def _normalize(value: Any) -> Any:
    if isinstance(value, (list, tuple)) and not hasattr(value, "__fields__"):
        return sorted((_normalize(v) for v in value), key=_sort_key)
    if isinstance(value, tuple):
        return tuple(_normalize(v) for v in value)
    return value


def _sort_key(v: Any) -> tuple:
    if v is None:
        return (0,)
    if isinstance(v, bool):
        return (1, v)
    if isinstance(v, (int, float, Decimal)):
        return (2, float(v))
    if isinstance(v, (list, tuple)):
        return (4, tuple(_sort_key(x) for x in v))
    return (3, type(v).__name__, str(v))


def _same_value(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b))
    return a == b


def assert_same_sql(pyspark_sql, quiver_sql, query: str, ordered: bool = False) -> None:
    """`query` gives the same columns, types and rows on PySpark and Quiver."""
    assert_same_frames(pyspark_sql.sql(query), quiver_sql.sql(query), query, ordered)


def assert_same_frames(ref: Any, got: Any, query: str, ordered: bool = False) -> None:
    """A PySpark and a Quiver DataFrame have the same columns, types and rows."""
    assert got.columns == ref.columns, f"{query}\ncolumns: pyspark {ref.columns}, quiver {got.columns}"
    assert got.dtypes == ref.dtypes, f"{query}\ndtypes: pyspark {ref.dtypes}, quiver {got.dtypes}"
    expected = [tuple(_normalize(v) for v in r) for r in ref.collect()]
    actual = [tuple(_normalize(v) for v in r) for r in got.collect()]
    if not ordered:
        expected.sort(key=_sort_key)
        actual.sort(key=_sort_key)
    assert len(actual) == len(expected) and all(_same_value(x, y) for x, y in zip(expected, actual)), (
        f"{query}\nrows ({'ordered' if ordered else 'as multisets'}):\n  pyspark {expected}\n  quiver  {actual}")


# ---------------------------------------------------------------- queries, run on both engines

UNORDERED = [
    # literals as Spark types them, and the names it gives them
    "SELECT 1, 2147483648, -2147483648, 1.5, 0.5, 100.0, 1.5D, 1e3, 10L, 1S, 1Y, 1.5BD, 'x', true, NULL",
    "SELECT DATE '2024-01-31' AS d, TIMESTAMP '2024-01-31 10:11:12' AS ts, DATE '2024-02-29' = hired AS same "
    "FROM people",
    "SELECT 1 + 1, 'a' AS s, -(2), 7 % 3",
    # arithmetic, comparison, logic, null tests
    "SELECT id, age + 1, age - id, salary * 2, salary / 4, id % 3, -age, age * 1.5 FROM people",
    "SELECT id, age = 34, age == 34, age != 34, age <> 34, age < 30, age <= 29, age > 40, age >= 45, "
    "city <=> 'Paris', city <=> NULL FROM people",
    "SELECT id FROM people WHERE (age > 30 AND city = 'Paris') OR NOT (dept_id = 10)",
    "SELECT id, age IS NULL, city IS NOT NULL, NOT (age > 30) FROM people",
    "SELECT id, dept_id IN (10, 30), dept_id NOT IN (10, 30), city IN ('Paris', 'Rome') FROM people",
    "SELECT id, age BETWEEN 30 AND 40, age NOT BETWEEN 30 AND 40 FROM people",
    "SELECT name FROM people WHERE name LIKE 'A%' OR name LIKE '_ob' OR name RLIKE '^Gr' OR name ILIKE 'c%'",
    "SELECT name, name NOT LIKE '%a%' FROM people",
    # casts and conditionals
    "SELECT CAST(age AS BIGINT), CAST(salary AS INT) AS s, CAST(id AS STRING), CAST('12' AS INT) AS n, "
    "CAST(salary AS DECIMAL(10,2)) AS dec, age::double FROM people",
    "SELECT id, CASE WHEN age > 40 THEN 'old' WHEN age > 30 THEN 'mid' ELSE 'young' END, "
    "CASE dept_id WHEN 10 THEN 'eng' WHEN 20 THEN 'sales' END AS dept FROM people",
    "SELECT id, IF(age > 30, 'old', 'young'), COALESCE(city, 'none'), nvl(age, 0) AS a FROM people",
    "SELECT item, price * qty, price + price, price > 2 FROM prices",
    # functions keep the name they were called by
    "SELECT upper(name), ucase(city), substr(name, 1, 3), substring(name, 2), length(name), "
    "concat(name, '-', city), round(salary / 3, 2), abs(-age) FROM people",
    "SELECT name || '!' AS shout, trim('  x  ') AS t, trim('x', 'xaxx'), ltrim('x', 'xaxx'), "
    "TRIM(TRAILING 'x' FROM 'xaxx'), TRIM(BOTH FROM ' b '), position('a' IN name), position('a', name), "
    "locate('a', name, 3) FROM people",
    # names: qualified, backquoted, aliased, stars
    "SELECT p.`name`, `p`.age, p.city AS `the city` FROM people AS p",
    "SELECT * FROM people",
    "SELECT p.*, d.dept_name FROM people p JOIN depts d ON p.dept_id = d.dept_id",
    # aggregates
    "SELECT count(*), count(1), count(age), count(DISTINCT city), sum(age), avg(salary), mean(salary), "
    "min(name), max(age) FROM people",
    "SELECT stddev(salary), stddev_samp(salary), stddev_pop(salary), variance(salary) FROM people",
    "SELECT id, first(name), last(age, true), first(city) IGNORE NULLS FROM people GROUP BY id",
    "SELECT city, collect_list(id), collect_set(dept_id) FROM people GROUP BY city",
    "SELECT sum(price), avg(price), max(price), sum(qty) FROM prices",
    "SELECT dept_id, sum(IF(age > 30, 1, 0)), count(age BETWEEN 30 AND 40) FROM people GROUP BY dept_id",
    # GROUP BY expressions, positions, aliases, ALL; HAVING on aliases, hidden aggregates and keys
    "SELECT dept_id % 20 AS bucket, count(*) FROM people GROUP BY dept_id % 20",
    "SELECT city, count(*) FROM people GROUP BY 1",
    "SELECT upper(city) AS c, sum(salary) FROM people GROUP BY c",
    "SELECT city, dept_id, count(*) AS n FROM people GROUP BY ALL",
    "SELECT city, count(*) AS n FROM people GROUP BY city HAVING n > 1",
    "SELECT city FROM people GROUP BY city HAVING max(age) > 40 AND city IS NOT NULL",
    "SELECT count(*) FROM people GROUP BY city HAVING city <> 'Paris'",
    "SELECT sum(age) FROM people HAVING count(*) > 3",
    "SELECT DISTINCT city FROM people",
    "SELECT DISTINCT dept_id % 20 AS m, city IS NULL FROM people",
    # joins of every kind
    "SELECT p.name, d.dept_name FROM people p JOIN depts d ON p.dept_id = d.dept_id",
    "SELECT p.name, d.dept_name FROM people p INNER JOIN depts d ON p.dept_id = d.dept_id AND d.hq = p.city",
    "SELECT p.name, d.dept_name FROM people p LEFT JOIN depts d ON p.dept_id = d.dept_id",
    "SELECT p.name, d.dept_name FROM people p RIGHT OUTER JOIN depts d ON p.dept_id = d.dept_id",
    "SELECT p.name, d.dept_name FROM people p FULL OUTER JOIN depts d ON p.dept_id = d.dept_id",
    "SELECT * FROM people p LEFT SEMI JOIN depts d ON p.dept_id = d.dept_id",
    "SELECT * FROM people p LEFT ANTI JOIN depts d ON p.dept_id = d.dept_id",
    "SELECT p.id, d.dept_name FROM people p CROSS JOIN depts d",
    "SELECT p.name, d.hq FROM people p, depts d WHERE p.dept_id = d.dept_id AND d.hq <> p.city",
    "SELECT * FROM people JOIN depts USING (dept_id)",
    "SELECT * FROM people LEFT JOIN depts USING (dept_id)",
    "SELECT * FROM people FULL JOIN depts USING (dept_id)",
    "SELECT * FROM people NATURAL JOIN depts",
    "SELECT a.name, b.name AS peer FROM people a JOIN people b ON a.dept_id = b.dept_id AND a.id < b.id",
    "SELECT p.name, d.dept_name, q.name FROM people p JOIN depts d ON p.dept_id = d.dept_id "
    "JOIN people q ON q.city = d.hq",
    # set operations
    "SELECT city FROM people UNION ALL SELECT hq FROM depts",
    "SELECT city FROM people UNION SELECT hq FROM depts",
    "SELECT dept_id FROM people INTERSECT SELECT dept_id FROM depts",
    "SELECT dept_id FROM people EXCEPT SELECT dept_id FROM depts",
    "SELECT id, age FROM people UNION ALL SELECT item, price FROM prices",
    "SELECT dept_id, city FROM people INTERSECT SELECT dept_id, hq FROM depts",
    # WITH, subqueries in FROM, VALUES, range, no FROM
    "WITH adults AS (SELECT * FROM people WHERE age >= 30), names AS (SELECT name, city FROM adults) "
    "SELECT * FROM names WHERE city IS NOT NULL",
    "WITH d(k, label) AS (SELECT dept_id, dept_name FROM depts) "
    "SELECT a.label, b.label FROM d a JOIN d b ON a.k = b.k",
    "WITH people AS (SELECT 1 AS id) SELECT * FROM people",
    "SELECT t.city, t.n FROM (SELECT city, count(*) AS n FROM people GROUP BY city) t WHERE t.n > 1",
    "SELECT * FROM (SELECT name, age FROM people WHERE age > 30) WHERE age < 40",
    "SELECT * FROM VALUES (1, 'a'), (2, 'b'), (3, NULL) AS v(x, y)",
    "SELECT x * 2 FROM VALUES (1), (2) AS v(x)",
    "SELECT id * 2 AS twice FROM range(5)",
    "SELECT * FROM people AS p(a, b, c, d, e, f, g) WHERE c > 30",
]

ORDERED = [
    "SELECT name, age FROM people ORDER BY age DESC NULLS LAST, name LIMIT 3",
    "SELECT name, age FROM people ORDER BY age, name",
    "SELECT name FROM people ORDER BY salary DESC NULLS FIRST",
    "SELECT name, age FROM people ORDER BY 2 DESC, 1",
    "SELECT name, age * 2 AS a2 FROM people ORDER BY a2 + id, name",
    "SELECT name AS n FROM people ORDER BY n DESC",
    "SELECT city, count(*) AS n FROM people GROUP BY city ORDER BY n DESC, city",
    "SELECT city FROM people GROUP BY city ORDER BY sum(salary) DESC NULLS LAST",
    "SELECT dept_id, max(age) FROM people GROUP BY dept_id HAVING count(*) > 1 ORDER BY dept_id",
    "SELECT dept_id FROM people GROUP BY dept_id ORDER BY min(id) DESC",
    "SELECT DISTINCT dept_id, city FROM people ORDER BY dept_id, city",
    "SELECT city FROM people UNION SELECT hq FROM depts ORDER BY 1 NULLS LAST",
    "SELECT id FROM people UNION ALL SELECT dept_id FROM depts ORDER BY id DESC LIMIT 4",
    "SELECT hq FROM depts WHERE hq IS NOT NULL ORDER BY length(hq), hq LIMIT 2",
]


def _query_id(query: str) -> str:
    return " ".join(query.split())[:70]


@pytest.mark.parametrize("query", UNORDERED, ids=_query_id)
def test_query_matches_pyspark(pyspark_sql, quiver_sql, query):
    assert_same_sql(pyspark_sql, quiver_sql, query)


@pytest.mark.parametrize("query", ORDERED, ids=_query_id)
def test_ordered_query_matches_pyspark(pyspark_sql, quiver_sql, query):
    assert_same_sql(pyspark_sql, quiver_sql, query, ordered=True)


def test_expression_strings_in_the_dataframe_api(pyspark_sql, quiver_sql):
    """selectExpr, filter("...") and F.expr go through parse_expression and name columns as Spark does."""
    from pyspark.sql import functions as PF

    from quiver import functions as QF

    def program(spark, F):
        df = spark.table("people").filter("age > 25 AND city IS NOT NULL")
        return (df.selectExpr("name", "age BETWEEN 30 AND 40", "cast(age AS bigint)", "salary * 2 AS double_pay")
                .join(df.groupBy("city").agg(F.expr("count(*)"), F.expr("avg(salary) AS pay"))
                      .selectExpr("city AS c", "pay"),
                      F.expr("1 = 1"), "cross"))
    assert_same_frames(program(pyspark_sql, PF), program(quiver_sql, QF), "selectExpr / filter / F.expr")


# ---------------------------------------------------------------- parse_expression's trees


@pytest.mark.parametrize("text, expected", [
    ("a != 1", Not(Comparison("=", UnresolvedColumn(("a",)), Literal(1, T.IntegerType())))),
    ("t.`my col` <=> NULL", Comparison("<=>", UnresolvedColumn(("t", "my col")), Literal(None, T.NullType()))),
    ("1.50", Literal(Decimal("1.50"), T.DecimalType(3, 2))),
    ("-10L", Literal(-10, T.LongType())),
    ("1e3", Literal(1000.0, T.DoubleType())),
    ("DATE '2024-02-29'", Literal(dt.date(2024, 2, 29), T.DateType())),
    ("count(*)", AggregateFunction("count", ())),
    ("count(DISTINCT a, b)", AggregateFunction("count", (UnresolvedColumn(("a",)), UnresolvedColumn(("b",))), True)),
    ("mean(x)", AggregateFunction("avg", (UnresolvedColumn(("x",)),), display="mean")),
    ("first(x, true)", AggregateFunction("first", (UnresolvedColumn(("x",)),), ignore_nulls=True)),
    ("ucase(s)", ScalarFunction("ucase", (UnresolvedColumn(("s",)),))),
    ("x IN (1, 2)", In(UnresolvedColumn(("x",)), (Literal(1, T.IntegerType()), Literal(2, T.IntegerType())))),
    ("x IS NOT NULL", IsNotNull(UnresolvedColumn(("x",)))),
    ("d.*", UnresolvedStar("d")),
])
def test_parse_expression_builds_engine_nodes(text, expected):
    parsed = parse_expression(text)
    # Entries that need no resolution come back named, as a select list needs them.
    if isinstance(parsed, Alias) and parsed.name == parsed.child.sql():
        parsed = parsed.child
    assert parsed == expected


def test_sql_only_syntax_computes_plain_nodes_under_spark_names():
    between = parse_expression("a BETWEEN 1 AND 3")
    assert isinstance(between, Alias) and between.name == "between(a, 1, 3)"
    assert isinstance(between.child, And)
    cond = parse_expression("IF(a > 1, 'x', 'y')")
    assert isinstance(cond, Alias) and cond.name == "(IF((a > 1), x, y))" and isinstance(cond.child, CaseWhen)
    cast = parse_expression("CAST(a AS decimal(10, 2))")
    assert (isinstance(cast, Alias) and cast.name == "a"
            and cast.child == Cast(UnresolvedColumn(("a",)), T.DecimalType(10, 2)))


# ---------------------------------------------------------------- errors


def _raises(spark, query: str, kind: type, *needles: str) -> str:
    with pytest.raises(kind) as info:
        spark.sql(query).collect()
    message = str(info.value)
    for needle in needles:
        assert needle.lower() in message.lower(), f"{query}: {needle!r} not in:\n{message}"
    return message


def test_syntax_error_names_the_position_and_the_text(quiver_sql):
    message = _raises(quiver_sql, "SELECT name\nFROM people WHERE age >", ParseException, "line 2", "column 23",
                      "expected")
    assert "FROM people WHERE age >" in message and "^" in message
    _raises(quiver_sql, "SELECT (1 + 2 FROM people", ParseException, "expecting )")
    _raises(quiver_sql, "SELECT 'unterminated FROM people", ParseException, "unterminated string")
    with pytest.raises(ParseException, match="line 1, column 7"):
        parse_expression("a + * 2")


def test_unknown_table_lists_the_temp_views(quiver_sql):
    message = _raises(quiver_sql, "SELECT * FROM peopel", AnalysisException, "'peopel'", "did you mean 'people'")
    listed = message.split("Registered temp views: ")[1].split("\n")[0].split(", ")
    assert {"depts", "people"} <= set(listed) and listed == sorted(listed)


def test_unknown_column_lists_the_columns(quiver_sql):
    _raises(quiver_sql, "SELECT nme FROM people", AnalysisException, "'nme'", "name", "salary")


@pytest.mark.parametrize("query, needles", [
    ("SELECT * FROM people WHERE dept_id > ANY (SELECT dept_id FROM depts)", ("ANY (subquery)", "not supported")),
    ("SELECT * FROM people WHERE age > ALL (SELECT age FROM people)", ("ALL (subquery)", "not supported")),
    ("SELECT name FROM people LIMIT 2.5", ("LIMIT", "integer literal")),
    ("SELECT first(age) FILTER (WHERE age > 1) FROM people", ("FILTER", "first", "IGNORE NULLS")),
    ("SELECT percentile(age, 0.5) FROM people", ("percentile", "supported aggregates")),
])
def test_unsupported_sql_says_so_and_what_to_do(quiver_sql, query, needles):
    _raises(quiver_sql, query, ParseException, *needles)


@pytest.mark.parametrize("query, needles", [
    ("SELECT name FROM people ORDER BY 3", ("ORDER BY position 3", "1 to 1")),
    ("SELECT count(*), city FROM people GROUP BY 1", ("GROUP BY 1", "aggregate")),
    ("SELECT DISTINCT city FROM people ORDER BY age", ("SELECT DISTINCT", "city")),
    ("SELECT name FROM people LIMIT 2 OFFSET -1", ("offset expression", "greater than 0", "-1")),
    ("SELECT id, name FROM people UNION SELECT dept_id FROM depts", ("same number of columns", "id, name")),
    ("SELECT * FROM people JOIN depts USING (hq)", ("USING column 'hq'", "left side", "both sides")),
    ("SELECT name, count(*) FROM people", ("name", "neither grouped nor aggregated")),
    ("SELECT 1; SELECT 2", ("one statement",)),
    ("SELECT *", ("FROM",)),
])
def test_invalid_queries_explain_what_is_valid(quiver_sql, query, needles):
    _raises(quiver_sql, query, AnalysisException, *needles)
