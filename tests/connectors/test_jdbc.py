"""quiver/connectors/jdbc.py (and its helpers): PostgreSQL reads and writes against a throw-away server
that scripts/postgres starts for this module; results are compared with what the database holds,
read over a separate ADBC connection."""
from __future__ import annotations

import datetime
import decimal
import glob
import math
import re
import shutil
import socket
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from quiver import functions as F
from quiver.connectors.jdbc import JdbcSplit
from quiver.connectors.jdbc_partitions import bound_value, stride_clauses
from quiver.connectors.postgres_connection import JdbcError, postgres_target
from quiver.connectors.registry import table_source
from quiver.engine.api.session import Session
from quiver.engine.core.errors import AnalysisException, ConfigurationError, TaskFailedError

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "postgres"
HAS_SERVER = bool(shutil.which("initdb") or glob.glob("/usr/lib/postgresql/*/bin/initdb"))
pytestmark = pytest.mark.skipif(not HAS_SERVER, reason="the PostgreSQL server (initdb, pg_ctl) is not installed")

NUMBERS = 200  # rows of table 'numbers': id 0..199, k = id - 50 or NULL every 17th row


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Database:
    """The test server: its jdbc url, and SQL run over a plain ADBC connection."""

    def __init__(self, port: int):
        self.port = port
        self.url = f"jdbc:postgresql://127.0.0.1:{port}/postgres?user=postgres"
        self.uri = f"postgresql://postgres@127.0.0.1:{port}/postgres"

    def run(self, *statements: str) -> None:
        import adbc_driver_postgresql.dbapi as dbapi

        with dbapi.connect(self.uri, autocommit=True) as connection, connection.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement)

    def ingest(self, table: str, data: pa.Table) -> None:
        import adbc_driver_postgresql.dbapi as dbapi

        with dbapi.connect(self.uri, autocommit=True) as connection, connection.cursor() as cursor:
            cursor.adbc_ingest(table, data, mode="append")

    def fetch(self, query: str) -> pa.Table:
        import adbc_driver_postgresql.dbapi as dbapi

        with dbapi.connect(self.uri + "?options=-c%20TimeZone%3DUTC", autocommit=True) as connection, \
                connection.cursor() as cursor:
            cursor.execute(query)
            return cursor.fetch_arrow_table()

    def rows(self, query: str) -> list[tuple]:
        return [tuple(r.values()) for r in self.fetch(query).to_pylist()]


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Any:
    folder = tmp_path_factory.mktemp("postgres")
    port = _free_port()
    try:
        subprocess.run([str(SCRIPT), "start", str(folder), str(port)], check=True, timeout=120,
                       capture_output=True, text=True)
        database = Database(port)
        database.run(
            "CREATE TABLE types (id int, i int, b bigint, n numeric(12,3), nn numeric, t text, v varchar(8), "
            "d date, ts timestamp, tz timestamptz, bo boolean, f double precision, r real, by bytea, u uuid)",
            "INSERT INTO types VALUES "
            "(1, 7, 9000000000, 12.5, 1.25, 'it''s', 'abc', '2024-02-29', '2024-02-29 13:14:15.123456', "
            "'2024-02-29 13:14:15+02', true, 1.5, 2.25, '\\x00ff', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'), "
            "(2, -1, -2, -0.001, 123456789.123456789, '', 'é', '1970-01-01', '1900-01-01 00:00:00', "
            "'1999-12-31 23:59:59.999999+00', false, 'NaN', '-Infinity', '', NULL), "
            "(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
            f"CREATE TABLE numbers AS SELECT g AS id, CASE WHEN g % 17 = 0 THEN NULL ELSE g - 50 END AS k, "
            "DATE '2024-01-01' + g AS d, TIMESTAMP '2024-01-01' + g * INTERVAL '1 hour' AS ts, "
            f"'s' || g AS s, g * 0.5 AS f FROM generate_series(0, {NUMBERS - 1}) AS g",
            "CREATE VIEW guarded AS SELECT id, 1 / (id - id) AS boom FROM numbers",
        )
        yield database
    finally:
        subprocess.run([str(SCRIPT), "stop", str(folder)], timeout=120, capture_output=True)


@pytest.fixture(scope="module")
def session() -> Session:
    return Session.builder.master("local[2]").appName("jdbc-tests").getOrCreate()


def _expected(db: Database, query: str) -> list[dict]:
    """Rows of `query` as the database holds them, in Quiver's types: numeric text as decimals,
    timestamptz as UTC timestamps, uuid as text."""
    table = db.fetch(query)
    numeric = {f.name for f in table.schema if (f.metadata or {}).get(b"POSTGRESQL:type") == b"numeric"}
    rows = table.to_pylist()
    for row in rows:
        for name, value in row.items():
            if value is None:
                continue
            if isinstance(value, datetime.datetime) and value.tzinfo is not None:
                row[name] = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
            elif name in numeric:
                row[name] = decimal.Decimal(value)
            elif isinstance(value, uuid.UUID):
                row[name] = str(value)
    return rows


def _same(a: Any, b: Any) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


def _assert_rows(actual: list[dict], expected: list[dict]) -> None:
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        assert got.keys() == want.keys()
        assert all(_same(got[k], want[k]) for k in got), (got, want)


# ------------------------------------------------------------------ reads


def test_read_gives_the_tables_rows_and_types(db, session):
    df = session.read.jdbc(db.url, "types")
    assert df.dtypes == [
        ("id", "int"), ("i", "int"), ("b", "bigint"), ("n", "decimal(12,3)"), ("nn", "decimal(38,18)"),
        ("t", "string"), ("v", "string"), ("d", "date"), ("ts", "timestamp"), ("tz", "timestamp"),
        ("bo", "boolean"), ("f", "double"), ("r", "float"), ("by", "binary"), ("u", "string")]
    _assert_rows([r.asDict() for r in df.orderBy("id").collect()], _expected(db, "SELECT * FROM types ORDER BY id"))
    assert df.filter(F.col("tz") == datetime.datetime(2024, 2, 29, 11, 14, 15)).count() == 1


def test_format_jdbc_with_postgresql_url_and_user_option(db, session):
    df = (session.read.format("jdbc").option("url", f"postgresql://127.0.0.1:{db.port}/postgres")
          .option("user", "postgres").option("dbtable", "public.numbers").option("fetchsize", 50).load())
    assert df.count() == NUMBERS
    props = {"user": "postgres", "driver": "org.postgresql.Driver"}
    url = f"jdbc:postgresql://127.0.0.1:{db.port}/postgres"
    assert session.read.jdbc(url, "numbers", properties=props).agg(F.sum("id")).collect()[0][0] == sum(range(NUMBERS))


def test_schema_comes_without_reading_rows_and_only_needed_columns_are_read(db, session):
    # Every row of the view divides by zero in column 'boom': reading a row of it fails.
    df = session.read.jdbc(db.url, "guarded")
    assert df.dtypes == [("id", "int"), ("boom", "int")]
    assert sorted(r.id for r in df.select("id").collect()) == list(range(NUMBERS))
    with pytest.raises((JdbcError, TaskFailedError), match="division by zero"):
        df.collect()


def test_query_option(db, session):
    query = "SELECT k % 3 AS m, count(*) AS c, sum(f) AS total FROM numbers GROUP BY 1"
    df = session.read.format("jdbc").option("url", db.url).option("query", query).load()
    assert df.dtypes == [("m", "int"), ("c", "bigint"), ("total", "decimal(38,18)")]
    got = sorted((r.m, r.c, r.total) for r in df.collect() if r.m is not None)
    want = sorted((m, c, decimal.Decimal(t)) for m, c, t in db.rows(query) if m is not None)
    assert got == want


def _partitions(source) -> list[list[Any]]:
    """The 'k' values each split of `source` reads."""
    return [[v for b in source.read(split, ["k"], None) for v in b.column(0).to_pylist()]
            for split in source.splits(8)]


@pytest.mark.parametrize("lower, upper, count, expected_count", [
    (0, 100, 4, 4),        # rows below 0 (k from -50) and above 100 (to 149) lie outside the bounds
    (-50, 150, 7, 7),
    (10, 13, 10, 3),       # fewer values between the bounds than partitions: Spark cuts the count
    (-1000, 1000, 3, 3),   # bounds far outside the data
    (5, 5, 4, 1),          # equal bounds: one partition
    (0, 100, 1, 1),
    (-2 ** 63, 2 ** 63 - 1, 3, 3),
])
def test_partitioned_read_reads_every_row_once(db, session, lower, upper, count, expected_count):
    options = {"url": db.url, "dbtable": "numbers", "partitionColumn": "k", "lowerBound": lower,
               "upperBound": upper, "numPartitions": count}
    parts = _partitions(table_source("jdbc", options))
    assert len(parts) == expected_count
    everything = [v for part in parts for v in part]
    assert sorted(everything, key=lambda v: (v is not None, v)) == \
        sorted((r[0] for r in db.rows("SELECT k FROM numbers")), key=lambda v: (v is not None, v))
    assert None not in [v for part in parts[1:] for v in part], "NULLs belong to the first partition"
    assert {v for v in everything if v is not None and v < lower} <= set(parts[0]), "below the bounds: first"
    assert {v for v in everything if v is not None and v >= upper} <= set(parts[-1]), "above the bounds: last"
    for before, after in zip(parts, parts[1:]):
        if [v for v in before if v is not None] and after:
            assert max(v for v in before if v is not None) < min(after), "partitions are ordered strides"
    df = session.read.jdbc(db.url, "numbers", column="k", lowerBound=lower, upperBound=upper, numPartitions=count)
    assert sorted(r.id for r in df.collect()) == list(range(NUMBERS))


@pytest.mark.parametrize("column, lower, upper", [
    ("d", "2024-02-01", "2024-05-01"),
    ("ts", "2024-01-02 00:00:00", "2024-01-05 12:30:00.5"),
    ("f", "10", "60"),
])
def test_partitioned_read_on_date_timestamp_and_double_columns(db, session, column, lower, upper):
    df = (session.read.format("jdbc").option("url", db.url).option("dbtable", "numbers")
          .option("partitionColumn", column).option("lowerBound", lower).option("upperBound", upper)
          .option("numPartitions", 5).load())
    assert "splits=5" in _explain(df)
    assert sorted(r.id for r in df.collect()) == list(range(NUMBERS))


def _explain(df) -> str:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        df.explain()
    return out.getvalue()


def test_stride_clauses_match_spark():
    # Spark's JDBCSuite (SPARK-34843): 1000 date partitions realign the first and last stride.
    kind_bounds = [bound_value(v, "date", "b", "PartitionColumn") for v in ("1930-01-01", "2020-12-31")]
    clauses = stride_clauses('"PartitionColumn"', "date", *kind_bounds, 1000)
    assert len(clauses) == 1000
    assert clauses[0] == """"PartitionColumn" < '1930-06-02' or "PartitionColumn" is null"""
    assert clauses[-1] == """"PartitionColumn" >= '2020-08-02'"""
    assert stride_clauses('"id"', "number", 1, 5, 10) == [
        '"id" < 2 or "id" is null', '"id" >= 2 AND "id" < 3', '"id" >= 3 AND "id" < 4', '"id" >= 4']
    assert stride_clauses('"id"', "number", 0, 4, 0) == [None]


def test_predicates_make_one_partition_each(db, session):
    predicates = ["k < 0", "k >= 0 AND k < 100", "k >= 100 OR k IS NULL"]
    source = table_source("jdbc", {"url": db.url, "dbtable": "numbers"}, predicates)
    assert [s.where for s in source.splits(1)] == predicates
    df = session.read.jdbc(db.url, "numbers", predicates=predicates)
    assert sorted(r.id for r in df.collect()) == list(range(NUMBERS))
    overlapping = session.read.jdbc(db.url, "numbers", predicates=["id < 10", "id < 5"])
    assert sorted(r.id for r in overlapping.collect()) == sorted(list(range(10)) + list(range(5)))


FILTERS = [
    (F.col("k") > 20) & (F.col("s") != "s99"),
    F.col("k").isNull() | (F.col("id") < 3),
    ~((F.col("k") >= 0) & (F.col("k") < 140)),
    F.col("s").isin("s1", "s10", "it's"),
    (F.col("d") >= datetime.date(2024, 3, 1)) & (F.col("ts") < datetime.datetime(2024, 1, 3, 5)),
    F.col("f") <= 3.5,
    F.col("s") > "s5",
    F.col("k").isNotNull() & (F.col("k") % 7 == 0),
]


@pytest.mark.parametrize("condition", FILTERS, ids=range(len(FILTERS)))
def test_filters_pushed_into_sql_keep_the_same_rows(db, session, condition):
    pushed = session.read.jdbc(db.url, "numbers").filter(condition)
    kept = (session.read.format("jdbc").option("url", db.url).option("dbtable", "numbers")
            .option("pushDownPredicate", False).load().filter(condition))
    assert sorted(r.id for r in pushed.collect()) == sorted(r.id for r in kept.collect())


def _scan_filters(df) -> tuple:
    """The filter expressions the planner pushed into `df`'s one scan."""
    from quiver.planners.physical.nodes import ScanExec

    (scan,) = [n for n in df._execution().physical.walk() if isinstance(n, ScanExec)]
    return scan.filters


def test_select_statement_carries_columns_and_translated_filters_with_literals_as_parameters(db, session):
    source = table_source("jdbc", {"url": db.url, "dbtable": "types"})
    df = session.read.jdbc(db.url, "types")

    def filters(condition):
        return _scan_filters(df.filter(condition))

    def statement(columns, condition, where=None):
        return source.select_statement(JdbcSplit(0, where), columns, filters(condition))

    condition = ((F.col("i") > 3) & F.col("t").isin("a'b", "c")) | F.col("d").isNull()
    sql, parameters = statement(["id", "nn"], condition, '"id" < 5')
    assert sql == ('SELECT "id", CAST("nn" AS numeric(38, 18)) AS "nn" FROM types WHERE ("id" < 5) AND '
                   '((("i" > $1::int8) AND ("t" COLLATE "C" IN ($2::text COLLATE "C", $3::text COLLATE "C"))) OR '
                   '("d" IS NULL))')
    assert parameters == ("3", "a'b", "c")
    # A value that would end a literal (with standard_conforming_strings off) stays out of the SQL text.
    evil = "x\\' OR 1=1 --"
    sql, parameters = statement(["t"], F.col("t") == evil)
    assert sql == 'SELECT "t" FROM types WHERE ("t" COLLATE "C" = $1::text COLLATE "C")' and parameters == (evil,)
    sql, parameters = statement(["d", "tz"], (F.col("d") >= datetime.date(2024, 1, 2))
                                & (F.col("tz") < datetime.datetime(2024, 1, 3, 4, 5, 6)))
    assert sql.endswith('WHERE (("d" >= $1::date) AND ("tz" < $2::timestamptz))')
    assert parameters == ("2024-01-02", "2024-01-03 04:05:06+00")
    # A filter on a column read through a cast (numeric without precision) stays in the engine.
    assert "WHERE" not in statement(["nn"], F.col("nn") > 1)[0]
    assert statement(["f"], F.col("f") == float("nan"))[1] == ("NaN",)
    # Only what translates exactly goes under NOT; a function of a column stays in the engine.
    assert "WHERE" not in statement(["i"], ~(F.abs(F.col("i")) > 3))[0]


def test_pushed_literals_cannot_inject_sql_with_standard_conforming_strings_off(db, session):
    """With standard_conforming_strings off a backslash escapes a quote, so a literal quoted by doubling
    its quotes would end early and its tail run as SQL (here a division by zero the server would fail)."""
    evil = "x\\' OR 1/0 = 1 --"
    db.run("CREATE TABLE quoted (id int, s text)")
    db.ingest("quoted", pa.table({"id": pa.array([1, 2], pa.int32()), "s": [evil, "other"]}))
    off = {"options": "-c standard_conforming_strings=off"}
    assert db.rows("SELECT count(*) FROM quoted") == [(2,)]
    df = session.read.jdbc(db.url, "quoted", properties=off)
    assert [r.id for r in df.filter(F.col("s") == evil).collect()] == [1]
    assert [r.id for r in df.filter(F.col("s").isin(evil, "x\\")).collect()] == [1]
    assert sorted(r.id for r in df.filter(F.col("s") != "x\\' OR 1=1 --").collect()) == [1, 2]


def test_nan_and_infinity_filters(db, session):
    df = session.read.jdbc(db.url, "types")
    assert sorted(r.id for r in df.filter(F.col("f") > 1.0).collect()) == [1, 2]
    assert [r.id for r in df.filter(F.isnan("f")).collect()] == [2]
    assert [r.id for r in df.filter(F.col("f") == float("nan")).collect()] == [2]
    assert [r.id for r in df.filter(F.col("r") < 0).collect()] == [2]


# ------------------------------------------------------------------ writes


def _frame(session, start: int, count: int, partitions: int = 3):
    rows = [(i, f"name {i}", decimal.Decimal(i) / 4, datetime.date(2024, 1, 1) + datetime.timedelta(days=i),
             datetime.datetime(2024, 1, 1, 6) + datetime.timedelta(minutes=i), i % 2 == 0, i * 0.5,
             None if i % 5 == 0 else i)
            for i in range(start, start + count)]
    schema = "id long, name string, amount decimal(10,2), day date, at timestamp, even boolean, f double, maybe int"
    return session.createDataFrame(rows, schema).repartition(partitions)


def _table_rows(db: Database, table: str) -> list[tuple]:
    return db.rows(f"SELECT * FROM {table} ORDER BY id")


def _staging_tables(db: Database) -> list[tuple]:
    return db.rows("SELECT relname::text FROM pg_class WHERE relname::text LIKE 'quiver\\_staging\\_%'")


def test_write_then_read_round_trips_and_matches_the_frame(db, session):
    df = _frame(session, 0, 40)
    df.write.jdbc(db.url, "written")
    types = db.rows("SELECT column_name::text, data_type::text FROM information_schema.columns "
                    "WHERE table_name = 'written' ORDER BY ordinal_position")
    assert types == [("id", "bigint"), ("name", "text"), ("amount", "numeric"), ("day", "date"),
                     ("at", "timestamp with time zone"), ("even", "boolean"), ("f", "double precision"),
                     ("maybe", "integer")]
    stored = _expected(db, "SELECT * FROM written ORDER BY id")
    assert stored == [r.asDict() for r in df.orderBy("id").collect()]
    back = session.read.jdbc(db.url, "written").orderBy("id").collect()
    assert back == df.orderBy("id").collect()
    assert _staging_tables(db) == []


def test_save_modes(db, session):
    url = db.url
    _frame(session, 0, 10).write.format("jdbc").option("url", url).option("dbtable", "modes").save()
    with pytest.raises(AnalysisException, match="'modes' already exists"):
        _frame(session, 100, 5).write.jdbc(url, "modes")
    assert len(_table_rows(db, "modes")) == 10
    _frame(session, 100, 5).write.jdbc(url, "modes", mode="ignore")
    assert [r[0] for r in _table_rows(db, "modes")] == list(range(10))
    _frame(session, 10, 5).write.jdbc(url, "modes", mode="append")
    assert [r[0] for r in _table_rows(db, "modes")] == list(range(15))
    _frame(session, 50, 3).write.mode("overwrite").format("jdbc").options(url=url, dbtable="modes").save()
    assert [r[0] for r in _table_rows(db, "modes")] == [50, 51, 52]
    _frame(session, 7, 2).write.jdbc(url, "modes_new", mode="ignore")
    assert [r[0] for r in _table_rows(db, "modes_new")] == [7, 8]


def test_overwrite_drops_and_recreates_unless_truncate(db, session):
    db.run("CREATE TABLE kept (id bigint, name varchar(20), extra int DEFAULT 7, amount numeric(10,2), day date, "
           "at timestamp, even boolean, f real, maybe bigint)",
           "INSERT INTO kept (id, name) VALUES (-1, 'old')")
    _frame(session, 0, 4).write.jdbc(db.url, "kept", mode="overwrite", properties={"truncate": "true"})
    rows = _table_rows(db, "kept")
    assert [(r[0], r[2]) for r in rows] == [(0, 7), (1, 7), (2, 7), (3, 7)], "truncate keeps the definition"
    _frame(session, 0, 4).write.jdbc(db.url, "kept", mode="overwrite")
    columns = [r[0] for r in db.rows("SELECT column_name::text FROM information_schema.columns "
                                     "WHERE table_name = 'kept' ORDER BY ordinal_position")]
    assert columns == ["id", "name", "amount", "day", "at", "even", "f", "maybe"], "drop and recreate"


def test_append_matches_columns_by_name(db, session):
    db.run('CREATE TABLE by_name ("MAYBE" int, id bigint, name text, amount numeric(10,2), day date, '
           'at timestamptz, even boolean, f float8)')
    _frame(session, 0, 6).write.jdbc(db.url, "by_name", mode="append")
    assert db.rows("SELECT id, \"MAYBE\" FROM by_name ORDER BY id") == [
        (0, None), (1, 1), (2, 2), (3, 3), (4, 4), (5, None)]
    with pytest.raises(AnalysisException, match="column 'zz' of the DataFrame does not exist in JDBC table 'by_name'"):
        session.createDataFrame([(1,)], "zz int").write.jdbc(db.url, "by_name", mode="append")


@pytest.mark.parametrize("mode", ["overwrite", "append", "error"])
def test_failed_write_leaves_the_table_unchanged(db, session, mode):
    table = f"failing_{mode}"
    if mode != "error":
        _frame(session, 0, 10).write.jdbc(db.url, table)
    before = _table_rows(db, table) if mode != "error" else None

    @F.udf("long")
    def explode_on_77(x):
        if x == 77:
            raise ValueError("no 77 please")
        return x

    df = _frame(session, 60, 30, partitions=4).withColumn("id", explode_on_77("id"))
    with pytest.raises(TaskFailedError, match="no 77 please"):
        df.write.jdbc(db.url, table, mode=mode)
    if mode == "error":
        assert db.rows(f"SELECT to_regclass('{table}') IS NULL") == [(True,)]
    else:
        assert _table_rows(db, table) == before
    assert _staging_tables(db) == []


def test_write_options_numpartitions_and_unsupported_types(db, session):
    _frame(session, 0, 12, partitions=6).write.jdbc(db.url, "few_tasks", properties={"numPartitions": "2",
                                                                                      "batchsize": "100"})
    assert len(_table_rows(db, "few_tasks")) == 12
    with pytest.raises(AnalysisException, match="Can't get JDBC type for map<string,int> \\(column 'm'\\)"):
        session.createDataFrame([(1, {"a": 1})], "x int, m map<string,int>").write.jdbc(db.url, "maps")
    with pytest.raises(ConfigurationError, match="'query' cannot be used for writing"):
        _frame(session, 0, 1).write.format("jdbc").option("url", db.url).option("query", "SELECT 1").save()
    with pytest.raises(ConfigurationError, match="'numPartitions' must be at least 1"):
        _frame(session, 0, 1).write.jdbc(db.url, "zero", properties={"numPartitions": 0})


# ------------------------------------------------------------------ errors


def test_unreachable_server_names_host_and_port(session):
    port = _free_port()
    with pytest.raises(JdbcError, match=f"could not connect to PostgreSQL at 127.0.0.1:{port}.*Connection refused"):
        session.read.jdbc(f"jdbc:postgresql://127.0.0.1:{port}/postgres", "t")


def test_bad_credentials_and_missing_database(db, session):
    with pytest.raises(JdbcError, match=f"127.0.0.1:{db.port} rejected the credentials of user 'nobody'"):
        session.read.jdbc(f"jdbc:postgresql://127.0.0.1:{db.port}/postgres", "numbers",
                          properties={"user": "nobody", "password": "secret"})
    with pytest.raises(JdbcError, match="database 'nowhere' does not exist"):
        session.read.jdbc(f"jdbc:postgresql://127.0.0.1:{db.port}/nowhere?user=postgres", "numbers")


def test_missing_table_is_named(db, session):
    with pytest.raises(AnalysisException, match="JDBC table 'no_such_table' does not exist"):
        session.read.jdbc(db.url, "no_such_table")


TABLE = {"url": "URL", "dbtable": "numbers"}
STRIDES = {**TABLE, "partitionColumn": "k", "numPartitions": 2}


@pytest.mark.parametrize("options, message", [
    ({"dbtable": "numbers"}, "JDBC option 'url' is required. Valid options: url, dbtable, query"),
    ({"url": "URL"}, "'dbtable' or 'query' is required. Valid options"),
    ({**TABLE, "query": "SELECT 1"}, "'dbtable' and 'query' cannot both be set"),
    ({**TABLE, "partitionColum": "k"},
     "unknown JDBC option 'partitioncolum' for reading. Did you mean 'partitionColumn'"),
    ({"url": "URL", "query": "SELECT 1 AS k", "partitionColumn": "k", "lowerBound": 0, "upperBound": 1,
      "numPartitions": 2}, "'query' and 'partitionColumn' cannot be used together"),
    ({**TABLE, "partitionColumn": "k", "lowerBound": 0}, "needs 'upperBound', 'numPartitions'"),
    ({**TABLE, "lowerBound": 0, "upperBound": 5}, "need 'partitionColumn'"),
    ({**STRIDES, "lowerBound": 9, "upperBound": 2},
     'lower bound of partition column "k" is larger than the upper bound: lowerBound = 9, upperBound = 2'),
    ({**STRIDES, "lowerBound": "1.5", "upperBound": 2},
     "option 'lowerBound' must be an integer for partition column 'k'"),
    ({**STRIDES, "partitionColumn": "d", "lowerBound": "soon", "upperBound": "2024-01-01"}, "must be a date"),
    ({**TABLE, "driver": "com.mysql.jdbc.Driver"}, "driver 'com.mysql.jdbc.Driver' is not supported"),
    ({**TABLE, "sslmod": "require"}, "Did you mean 'sslmode'"),
])
def test_option_errors_say_what_is_valid(db, session, options, message):
    options = {k: db.url if v == "URL" else v for k, v in options.items()}
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        session.read.format("jdbc").options(**options).load()


def test_partition_column_must_exist_and_be_numeric_date_or_timestamp(db, session):
    with pytest.raises(AnalysisException, match="partitionColumn 's' has type text \\(string\\); it must be numeric"):
        session.read.jdbc(db.url, "numbers", column="s", lowerBound=0, upperBound=9, numPartitions=3)
    with pytest.raises(AnalysisException, match="partitionColumn 'nope' is not a column.*id, k, d, ts, s, f"):
        session.read.jdbc(db.url, "numbers", column="nope", lowerBound=0, upperBound=9, numPartitions=3)
    df = session.read.jdbc(db.url, "numbers", column='"K"'.lower(), lowerBound=0, upperBound=9, numPartitions=3)
    assert df.count() == NUMBERS


def test_urls_and_properties_become_one_libpq_uri():
    target = postgres_target("jdbc:postgresql://db.example:6543/sales?user=ann&ssl=true&ApplicationName=q",
                             {"password": "p&w d", "currentSchema": "s1"})
    assert str(target) == "postgresql://db.example:6543/sales"
    assert target.uri.startswith("postgresql://db.example:6543/sales?")
    for part in ("user=ann", "sslmode=require", "application_name=q", "password=p%26w%20d",
                 "options=-c%20search_path%3Ds1%20-c%20TimeZone%3DUTC", "connect_timeout=10"):
        assert part in target.uri
    assert str(postgres_target("postgresql://bob:pw@localhost/db", {})) == "postgresql://localhost:5432/db"
    with pytest.raises(ConfigurationError, match="not a PostgreSQL url") as error:
        postgres_target("jdbc:mysql://h/db?password=secret", {})
    assert "secret" not in str(error.value)
    with pytest.raises(ConfigurationError, match="unknown PostgreSQL url parameter 'foo'"):
        postgres_target("jdbc:postgresql://h/db?foo=1", {})
