"""SQL PIVOT against real PySpark: the grouping columns Spark infers, the names it gives, and the rows."""
from __future__ import annotations

import pytest

import quiver
from quiver.engine.core.errors import ParseException

ROWS = [(1, "a", 10, 1.5), (1, "b", 20, None), (2, "a", 5, 2.0), (2, "c", 7, 0.5), (1, "a", 1, None), (3, None, 4, 1.0)]
SCHEMA = "id INT, k STRING, v INT, w DOUBLE"

QUERIES = [
    "SELECT * FROM t PIVOT (sum(v) FOR k IN ('a', 'b'))",
    "SELECT * FROM (SELECT k, id, v FROM t) PIVOT (sum(v) AS s, max(v) FOR k IN ('a' AS x, 'b'))",
    "SELECT p.* FROM (SELECT id, k, v FROM t) PIVOT (count(*) FOR k IN ('a', 'c')) AS p",
    "SELECT * FROM (SELECT id, k, w FROM t) PIVOT (avg(w) AS mean, count(w) AS n FOR k IN ('a', 'b', 'c'))",
    "SELECT id, a + b AS ab FROM (SELECT id, k, v FROM t) PIVOT (sum(v) FOR k IN ('a', 'b')) WHERE id < 3",
    "SELECT * FROM (SELECT id, v FROM t) PIVOT (sum(v) FOR id IN (1 AS one, 2 AS two))",
]


@pytest.fixture(scope="module")
def views(pyspark_session):
    spark = quiver.Session.builder.master("local[2]").getOrCreate()
    spark.createDataFrame(ROWS, SCHEMA).createOrReplaceTempView("t")
    pyspark_session.createDataFrame(ROWS, SCHEMA).createOrReplaceTempView("t")
    return spark, pyspark_session


def _key(row) -> tuple:
    return tuple((v is None, str(v)) for v in row)


@pytest.mark.parametrize("query", QUERIES)
def test_pivot_matches_pyspark(views, query):
    ours, theirs = (s.sql(query) for s in views)
    assert ours.columns == theirs.columns
    assert [f.dataType.simpleString() for f in ours.schema.fields] == \
           [f.dataType.simpleString() for f in theirs.schema.fields]
    assert sorted(map(tuple, ours.collect()), key=_key) == sorted(map(tuple, theirs.collect()), key=_key)


def test_unpivot_and_multi_column_pivot_say_they_are_not_supported(views):
    spark, _ = views
    with pytest.raises(ParseException, match="UNPIVOT"):
        spark.sql("SELECT * FROM t UNPIVOT (x FOR c IN (v, w))")
    with pytest.raises(ParseException, match="several columns"):
        spark.sql("SELECT * FROM t PIVOT (sum(v) FOR (id, k) IN ((1, 'a') AS one))")


def test_dataframe_pivot_count_is_null_where_a_group_has_no_rows_of_a_value(views, pyspark_session):
    spark, _ = views
    ours = spark.table("t").groupBy("id").pivot("k", ["a", "b", "c"]).count().orderBy("id").collect()
    theirs = pyspark_session.table("t").groupBy("id").pivot("k", ["a", "b", "c"]).count().orderBy("id").collect()
    assert [tuple(r) for r in ours] == [tuple(r) for r in theirs]
    assert tuple(ours[1]) == (2, 1, None, 1)
