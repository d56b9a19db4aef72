"""quiver/executors/native: stage fragments on DuckDB give exactly the CPU executor's answers (which the compat
suite holds to PySpark's), show where they ran, and hand back to the CPU what DuckDB cannot do as Spark does."""
from __future__ import annotations

import datetime as dt
import decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from quiver.engine.core.errors import ArithmeticException, ConfigurationError
from quiver.planners.physical import nodes as P

pytest.importorskip("duckdb")

ROWS = 20_000
NATIVE = "cpu:0 (duckdb)"


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> str:
    """Parquet with nulls in every column, several row groups (so each task reads a range of them)."""
    n = ROWS
    ids = list(range(n))
    data = pa.table({
        "id": pa.array(ids, pa.int64()),
        "small": pa.array([None if i % 17 == 0 else i % 100 for i in ids], pa.int32()),
        "price": pa.array([None if i % 13 == 0 else decimal.Decimal(i % 9973) / 100 for i in ids],
                          pa.decimal128(15, 2)),
        "rate": pa.array([decimal.Decimal(i % 11) / 100 for i in ids], pa.decimal128(15, 2)),
        "day": pa.array([None if i % 19 == 0 else dt.date(2020, 1, 1) + dt.timedelta(days=i % 700) for i in ids]),
        "tag": pa.array([None if i % 23 == 0 else f"t{i % 7}" for i in ids]),
        "flag": pa.array([None if i % 29 == 0 else i % 3 == 0 for i in ids]),
        "score": pa.array([float(i % 50) / 3 for i in ids]),
    })
    path = tmp_path_factory.mktemp("native") / "t.parquet"
    pq.write_table(data, path, row_group_size=2_500)
    return str(path)


@pytest.fixture(scope="module")
def dimension(tmp_path_factory) -> str:
    """A small table to broadcast: string and integer keys with duplicates and nulls, a decimal, a group."""
    rows = [(f"t{i % 9}" if i % 11 else None, i % 120 if i % 13 else None, decimal.Decimal(i) / 4, "ab"[i % 2])
            for i in range(60)]
    data = pa.table({"dtag": pa.array([r[0] for r in rows]), "dsmall": pa.array([r[1] for r in rows], pa.int32()),
                     "weight": pa.array([r[2] for r in rows], pa.decimal128(10, 2)),
                     "dgroup": pa.array([r[3] for r in rows])})
    path = tmp_path_factory.mktemp("native_dim") / "d.parquet"
    pq.write_table(data, path)
    return str(path)


@pytest.fixture
def native(spark, table, dimension):
    """The session with every translatable fragment on DuckDB; the tables as views `t` and `d`."""
    spark.read.parquet(table).createOrReplaceTempView("t")
    spark.read.parquet(dimension).createOrReplaceTempView("d")
    keys = ("quiver.native.engine", "quiver.native.maxOutputShare", "quiver.native.minScanBytes")
    previous = [spark.conf.get(k) for k in keys]
    spark.conf.set("quiver.native.minScanBytes", "0")
    yield spark
    for key, value in zip(keys, previous):
        spark.conf.set(key, value)


def _both(spark, query: str) -> tuple[pa.Table, pa.Table, set[str]]:
    spark.conf.set("quiver.native.engine", "none")
    cpu = spark.sql(query).toArrow()
    spark.conf.set("quiver.native.engine", "duckdb")
    spark.conf.set("quiver.native.maxOutputShare", "1")
    out = spark.sql(query).toArrow()
    devices = {d for s in spark.lastJob().stages for d in s.devices}
    return cpu, out, devices


def _sorted(t: pa.Table) -> list[tuple]:
    return sorted(zip(*[c.to_pylist() for c in t.columns]), key=lambda r: [(v is None, str(v)) for v in r])


QUERIES = [
    "SELECT id, price * rate AS cost, price + rate AS up, price - 1 AS down FROM t "
    "WHERE day >= DATE '2020-06-01' AND tag IN ('t1', 't3') AND small IS NOT NULL",
    "SELECT tag, count(*) AS n, count(price) AS priced, sum(price) AS total, avg(price) AS mean, "
    "min(day) AS first, max(tag) AS last_tag, sum(small) AS s, avg(small) AS a FROM t GROUP BY tag",
    "SELECT sum(price * (1 - rate)) AS revenue, count(*) AS n FROM t WHERE NOT flag OR flag IS NULL",
    "SELECT day, flag, sum(price) AS total FROM t WHERE small < 10 OR small > 90 GROUP BY day, flag",
    "SELECT count(*) AS n FROM t WHERE tag = 'nothing'",
    "SELECT small, max(price) AS top, min(rate) AS low FROM t WHERE id BETWEEN 100 AND 15000 GROUP BY small",
]


@pytest.mark.parametrize("query", QUERIES)
def test_a_fragment_on_duckdb_gives_the_cpu_executors_answer(native, query):
    cpu, out, devices = _both(native, query)
    assert NATIVE in devices, "the fragment should have run on DuckDB"
    assert out.schema.equals(cpu.schema)
    assert _sorted(out) == _sorted(cpu)


JOINS = [
    "SELECT t.id, t.price, d.weight FROM t JOIN d ON t.small = d.dsmall WHERE t.tag = 't1'",
    "SELECT d.dtag, count(*) AS n, max(t.day) AS last FROM t JOIN d ON t.tag = d.dtag GROUP BY d.dtag",
    "SELECT d.dgroup, sum(CASE WHEN t.flag THEN 1 ELSE 0 END) AS flagged, sum(t.price * d.weight) AS total, "
    "count(*) AS n FROM t JOIN d ON t.small = d.dsmall GROUP BY d.dgroup",
    "SELECT id, tag FROM t WHERE small IN (SELECT dsmall FROM d WHERE dgroup = 'a')",
    "SELECT id, small FROM t WHERE NOT EXISTS (SELECT 1 FROM d WHERE d.dsmall = t.small)",
]


@pytest.mark.parametrize("query", JOINS)
def test_a_broadcast_join_in_a_fragment_gives_the_cpu_executors_answer(native, query):
    native.conf.set("spark.sql.autoBroadcastJoinThreshold", "10m")
    cpu, out, _ = _both(native, query)
    ran = {m.stage_id: m.devices for m in native.lastJob().stages}  # the run on DuckDB
    joined = [s for s in native.sql(query)._execution().stages.stages
              if any(isinstance(n, P.HashJoinExec) and n.strategy == "broadcast-right" for n in s.root.walk())]
    assert joined and all(NATIVE in ran[s.id] for s in joined), "the join's stage should have run on DuckDB"
    assert out.schema.equals(cpu.schema)
    assert _sorted(out) == _sorted(cpu) != []


@pytest.mark.parametrize("query", [
    "SELECT id FROM t WHERE small NOT IN (SELECT dsmall FROM d WHERE dgroup = 'b' AND dsmall IS NOT NULL)",
    "SELECT id FROM t WHERE small NOT IN (SELECT dsmall FROM d WHERE dgroup = 'b')",  # a null: no rows
])
def test_not_in_keeps_sparks_null_semantics_with_fragments(native, query):
    native.conf.set("spark.sql.autoBroadcastJoinThreshold", "10m")
    cpu, out, _ = _both(native, query)
    assert _sorted(out) == _sorted(cpu)


@pytest.mark.parametrize("query", [
    "SELECT t.id, d.weight FROM t LEFT JOIN d ON t.tag = d.dtag",  # an outer join keeps unmatched rows
    "SELECT t.id FROM t JOIN d ON t.small = d.dsmall AND t.price > d.weight",  # a residual condition
])
def test_a_join_duckdb_would_not_run_as_spark_does_stays_on_the_cpu(native, query):
    cpu, out, _ = _both(native, query)
    assert _sorted(out) == _sorted(cpu) != []
    ran = {m.stage_id: m.devices for m in native.lastJob().stages}  # the run with fragments on
    joined = [s for s in native.sql(query)._execution().stages.stages
              if any(isinstance(n, P.HashJoinExec) for n in s.root.walk())]
    assert joined and all(NATIVE not in ran[s.id] for s in joined)


@pytest.mark.parametrize("query", [
    "SELECT sum(score) AS s FROM t WHERE score > 3.5",  # floats: NaN's order and infinities differ
    "SELECT price * rate * rate * rate * price * price AS p FROM t",  # a product Spark rounds to scale 6
])
def test_what_duckdb_would_do_otherwise_stays_on_the_cpu(native, query):
    cpu, out, devices = _both(native, query)
    assert NATIVE not in devices
    assert _sorted(out) == _sorted(cpu)


def test_an_integer_sum_without_ansi_wraps_on_the_cpu(native):
    native.conf.set("spark.sql.ansi.enabled", "false")
    try:
        cpu, out, devices = _both(native, "SELECT tag, sum(small) AS s FROM t GROUP BY tag")
    finally:
        native.conf.set("spark.sql.ansi.enabled", "true")
    assert NATIVE not in devices
    assert _sorted(out) == _sorted(cpu)


def test_a_decimal_sum_past_38_digits_overflows_as_on_the_cpu(native, tmp_path):
    big = decimal.Decimal("9" * 36 + ".99")
    path = tmp_path / "big.parquet"
    pq.write_table(pa.table({"v": pa.array([big] * 30, pa.decimal128(38, 2))}), path)
    native.read.parquet(str(path)).createOrReplaceTempView("big")
    native.conf.set("quiver.native.engine", "duckdb")
    native.conf.set("quiver.native.maxOutputShare", "1")
    with pytest.raises(ArithmeticException):
        native.sql("SELECT sum(v) FROM big").collect()


def test_the_settings_are_checked(spark):
    with pytest.raises(ConfigurationError, match="none or duckdb"):
        spark.conf.set("quiver.native.engine", "velox")
    with pytest.raises(ConfigurationError, match="between 0 and 1"):
        spark.conf.set("quiver.native.maxOutputShare", "2")


def test_a_fragment_that_keeps_most_of_its_scan_stays_on_quivers_reader(native):
    native.conf.set("quiver.native.engine", "duckdb")
    native.conf.set("quiver.native.maxOutputShare", "0.25")
    native.sql("SELECT id, tag, price FROM t WHERE id >= 0").toArrow()
    assert NATIVE not in {d for s in native.lastJob().stages for d in s.devices}
    native.sql("SELECT tag, count(*) FROM t GROUP BY tag").toArrow()
    assert NATIVE in {d for s in native.lastJob().stages for d in s.devices}


def test_under_a_small_budget_a_fragment_gives_the_same_answer_and_leaves_no_spill_files(native, tmp_path):
    import os

    n = 3_000_000
    path = tmp_path / "wide.parquet"
    pq.write_table(pa.table({"k": pa.array(range(n), pa.int64()), "v": pa.array([1] * n, pa.int64())}), path,
                   row_group_size=500_000)
    native.read.parquet(str(path)).createOrReplaceTempView("wide")
    query = "SELECT k % 1000003 AS g, count(*) AS c, min(v) AS m FROM wide WHERE k % 2 = 0 GROUP BY k % 1000003"
    native.conf.set("quiver.native.engine", "none")
    cpu = native.sql(query).toArrow()
    spill_root = tmp_path / "spill"
    native.conf.set("quiver.local.dir", str(spill_root))
    native.conf.set("quiver.memory.limit", "96m")
    native.conf.set("quiver.native.engine", "duckdb")
    native.conf.set("quiver.native.maxOutputShare", "1")
    try:
        out = native.sql(query).toArrow()
    finally:
        native.conf.unset("quiver.memory.limit")
        native.conf.unset("quiver.local.dir")
    assert _sorted(out) == _sorted(cpu)
    # DuckDB spills past its share of the budget into the task's spill folder, removed when the task ends
    # (the session folder's owner marker stays, for the sweep of folders that crashed processes left).
    left = [f for _, _, files in os.walk(spill_root) for f in files if f != "owner"]
    assert left == []


def test_a_fragments_connection_prints_nothing_of_its_own():
    from quiver.executors.native.executor import connection

    assert connection().execute("SELECT current_setting('enable_progress_bar')").fetchone()[0] is False
