"""README.md's claims of what Quiver supports, checked against the code.

- The generated table (between `<!-- support-table:start -->` and `<!-- support-table:end -->`)
  must equal what `scripts/support-table` prints now; the test also recomputes the headline
  counts itself (functions, DataFrame, Column) rather than trusting the script alone.
- The hand-written table of areas (between `<!-- support-areas:start -->` and `:end -->`) must
  name the status each area's probes give: every probe in `works` must run, every probe in
  `fails` must raise. Supported = only works, Not supported = only fails, Partial = both.
- Every conf key the code reads must be in the README.
"""
from __future__ import annotations

import difflib
import importlib.machinery
import importlib.util
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SCRIPT = ROOT / "scripts" / "support-table"
REGENERATE = ".venv/bin/python scripts/support-table --write"


def _readme() -> str:
    return README.read_text()


def _section(name: str) -> str:
    text = _readme()
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    assert start in text and end in text, f"README.md lacks the {start} ... {end} markers"
    return text[text.index(start) + len(start):text.index(end)].strip("\n") + "\n"


def _script() -> Any:
    """scripts/support-table as a module (it has no .py suffix)."""
    if "support_table" not in sys.modules:
        loader = importlib.machinery.SourceFileLoader("support_table", str(SCRIPT))
        module = importlib.util.module_from_spec(importlib.util.spec_from_loader("support_table", loader))
        sys.modules["support_table"] = module  # dataclasses look their module up while the class is made
        loader.exec_module(module)
    return sys.modules["support_table"]


# ---------------------------------------------------------------- the generated table


def test_generated_table_is_current():
    pytest.importorskip("pyspark.sql", reason="the table compares against PySpark's API")
    run = subprocess.run([sys.executable, str(SCRIPT)], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    readme = _section("support-table")
    if readme != run.stdout:
        diff = "".join(difflib.unified_diff(readme.splitlines(True), run.stdout.splitlines(True), "README.md",
                                            "scripts/support-table"))
        pytest.fail(f"README.md's support table is out of date; run `{REGENERATE}`:\n{diff}")


def _row(label: str) -> tuple[int, int]:
    m = re.search(rf"^\| {re.escape(label)} \| (\d+) of (\d+) \|$", _section("support-table"), re.MULTILINE)
    assert m, f"README.md's support table has no row {label!r}"
    return int(m.group(1)), int(m.group(2))


def _missing(label: str) -> list[str]:
    m = re.search(rf"^- {re.escape(label)} \(\d+\): (.*)$", _section("support-table"), re.MULTILINE)
    assert m, f"README.md's list of missing names has no entry {label!r}"
    return [] if m.group(1) == "none" else re.findall(r"`([^`]+)`", m.group(1))


def _works(obj: Any, script: Any) -> bool:
    return obj is not None and not script.only_raises(obj)


def test_function_counts_recomputed():
    PF = pytest.importorskip("pyspark.sql.functions")
    from quiver import functions as QF

    script = _script()
    names = list(PF.__all__)
    missing = [n for n in names if not _works(getattr(QF, n, None), script)]
    assert _row("`pyspark.sql.functions`, all") == (len(names) - len(missing), len(names)), REGENERATE
    listed = [n for line in re.findall(r"^- functions: .*$", _section("support-table"), re.MULTILINE)
              for n in re.findall(r"`([^`]+)`", line.split(":", 2)[2])]
    assert sorted(listed) == sorted(missing), REGENERATE


@pytest.mark.parametrize("name", ["DataFrame", "Column", "GroupedData"])
def test_class_counts_recomputed(name):
    ps = pytest.importorskip("pyspark.sql")
    import quiver

    script = _script()
    theirs = sorted(n for n in dir(getattr(ps, name)) if not n.startswith("_"))
    ours = getattr(quiver, name)
    missing = [n for n in theirs if n not in dir(ours) or script.only_raises(vars(ours).get(n))]
    assert _row(f"`{name}`") == (len(theirs) - len(missing), len(theirs)), REGENERATE
    assert _missing(f"`{name}`") == missing, REGENERATE


def test_a_method_that_only_raises_counts_as_missing():
    script = _script()

    class Theirs:
        def a(self): ...
        def b(self): ...
        def c(self): ...
        def d(self): ...

    class Ours:
        def a(self):
            return 1

        def b(self):
            """Documented, but only raises."""
            raise NotImplementedError("no")

        def c(self, x=None):
            if x is None:
                raise ValueError("x")
            return x

        @property
        def d(self):
            message = "not supported"
            raise NotImplementedError(message)

    area = script.class_area("Theirs", Theirs, Ours)
    assert area.missing == ["b", "d"] and area.supported == 2
    assert script.class_area("Theirs", Theirs, None).supported == 0


# ---------------------------------------------------------------- the areas table, by probes


@pytest.fixture(scope="module")
def views(spark):
    spark.createDataFrame([(1, "a", 10.0), (2, "b", 20.0), (3, "a", 30.0)], "id int, k string, v double") \
        .createOrReplaceTempView("readme_t")
    spark.createDataFrame([(1, "x"), (2, "y")], "id int, s string").createOrReplaceTempView("readme_u")
    yield spark
    for view in ("readme_t", "readme_u", "readme_w"):
        spark.catalog.dropTempView(view)


def _sql(text: str) -> Callable[[Any], Any]:
    def probe(spark):
        result = spark.sql(text)
        return result.collect() if hasattr(result, "collect") else result
    probe.__name__ = text
    return probe


def _df(spark):
    return spark.table("readme_t")


def _nested(spark):
    return spark.createDataFrame([(1, [1, 2], {"a": 1}, (5, "x"))],
                                 "id int, arr array<int>, m map<string,int>, s struct<p:int,q:string>")


def _F():
    from quiver import functions as F
    return F


def _window():
    from quiver import Window
    return Window


def _ansi_division_by_zero_raises(spark):
    d = spark.createDataFrame([(1, 0)], "a int, z int")
    try:
        d.select(d.a / d.z).collect()
    except Exception:  # noqa: BLE001 — any error means ANSI errors are raised
        return
    raise AssertionError("1 / 0 gave NULL under spark.sql.ansi.enabled=true")


def _ansi_float_int_is_double(spark):
    d = spark.createDataFrame([(1.5, 2)], "f float, i int")
    assert d.select(d.f + d.i).dtypes[0][1] == "double"


def _numba_udf(spark):
    import quiver
    double = quiver.udf(lambda x: x * 2.0, "double", engine="numba")
    return _df(spark).select(double("v")).collect()


def _pandas_iter_udf(spark):
    def plus_one(batches: Iterator[pd.Series]) -> Iterator[pd.Series]:
        for s in batches:
            yield s + 1

    return _df(spark).select(_F().pandas_udf(plus_one, "double")("v")).collect()


def _pandas_grouped_agg_udf(spark):
    def mean(s: pd.Series) -> float:
        return float(s.mean())

    return _df(spark).groupBy("k").agg(_F().pandas_udf(mean, "double")("v")).collect()


def _roundtrip(fmt: str) -> Callable[[Any], Any]:
    def probe(spark):
        import tempfile

        with tempfile.TemporaryDirectory(prefix=f"readme-{fmt}-") as folder:
            path = str(Path(folder) / "out")
            _df(spark).write.format(fmt).save(path)
            return spark.read.format(fmt).load(path).collect()
    probe.__name__ = f"write and read {fmt}"
    return probe


def _read(fmt: str) -> Callable[[Any], Any]:
    def probe(spark):
        return spark.read.format(fmt).load(str(README)).collect()
    probe.__name__ = f"read {fmt}"
    return probe


# area -> (probes that must run, probes that must raise). Add a row to README.md and here together.
AREAS: dict[str, tuple[list[Callable[[Any], Any]], list[Callable[[Any], Any]]]] = {
    "SQL queries": ([
        _sql("SELECT k, sum(v) AS s FROM readme_t WHERE id > 0 GROUP BY k HAVING s > 5 ORDER BY k LIMIT 5 OFFSET 1"),
        _sql("SELECT * FROM readme_t SORT BY k"),
        _sql("SELECT * FROM VALUES (1, 'a'), (2, 'b') AS v(x, y)"),
        _sql("SELECT * FROM range(3)"),
        _sql("SELECT CASE WHEN v > 10 THEN 'x' ELSE 'y' END, CAST(v AS int), DATE'2020-01-01' + INTERVAL 3 DAYS "
             "FROM readme_t"),
    ], []),
    "Joins": ([
        _sql("SELECT * FROM readme_t LEFT SEMI JOIN readme_u ON readme_t.id = readme_u.id"),
        _sql("SELECT * FROM readme_t LEFT ANTI JOIN readme_u ON readme_t.id = readme_u.id"),
        _sql("SELECT * FROM readme_t FULL OUTER JOIN readme_u ON readme_t.id = readme_u.id"),
        _sql("SELECT * FROM readme_t RIGHT JOIN readme_u USING (id)"),
        _sql("SELECT * FROM readme_t NATURAL JOIN readme_u"),
        _sql("SELECT * FROM readme_t CROSS JOIN readme_u"),
        _sql("SELECT /*+ BROADCAST(readme_u) */ * FROM readme_t JOIN readme_u ON readme_t.id = readme_u.id"),
        lambda spark: _df(spark).join(spark.table("readme_u"), "id", "left_anti").collect(),
        lambda spark: _df(spark).join(_F().broadcast(spark.table("readme_u")), "id").collect(),
    ], []),
    "Set operations": ([
        _sql("SELECT k FROM readme_t UNION SELECT s FROM readme_u"),
        _sql("SELECT k FROM readme_t INTERSECT ALL SELECT k FROM readme_t"),
        _sql("SELECT k FROM readme_t EXCEPT ALL SELECT k FROM readme_t WHERE id = 1"),
        lambda spark: _df(spark).unionByName(_df(spark)).intersect(_df(spark)).subtract(_df(spark)).collect(),
    ], []),
    "Common table expressions": ([
        _sql("WITH c AS (SELECT * FROM readme_t), d AS (SELECT k FROM c) SELECT count(*) FROM d"),
    ], [
        _sql("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r"),
    ]),
    "Subqueries": ([
        _sql("SELECT (SELECT max(v) FROM readme_t) AS m"),
        _sql("SELECT * FROM readme_t WHERE id IN (SELECT id FROM readme_u)"),
        _sql("SELECT * FROM readme_t WHERE EXISTS (SELECT 1 FROM readme_u WHERE readme_u.id = readme_t.id)"),
        _sql("SELECT id, (SELECT max(s) FROM readme_u WHERE readme_u.id = readme_t.id) FROM readme_t"),
    ], [
        _sql("SELECT * FROM readme_t WHERE id = ANY (SELECT id FROM readme_u)"),
        _sql("SELECT * FROM readme_t WHERE id > ALL (SELECT id FROM readme_u)"),
    ]),
    "Window functions": ([
        _sql("SELECT id, sum(v) OVER (PARTITION BY k ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW), "
             "lag(v) OVER (ORDER BY id), ntile(2) OVER (ORDER BY id) FROM readme_t"),
        _sql("SELECT id, sum(v) OVER (ORDER BY id RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM readme_t"),
        _sql("SELECT id, rank() OVER w FROM readme_t WINDOW w AS (ORDER BY v)"),
        _sql("SELECT id FROM readme_t QUALIFY row_number() OVER (ORDER BY id) = 1"),
        lambda spark: _df(spark).withColumn(
            "r", _F().row_number().over(_window().partitionBy("k").orderBy("v"))).collect(),
    ], [
        _sql("SELECT sum(x) OVER (ORDER BY d RANGE BETWEEN INTERVAL 1 DAY PRECEDING AND CURRENT ROW) "
             "FROM (SELECT DATE'2020-01-01' AS d, 1 AS x)"),
    ]),
    "GROUPING SETS, ROLLUP, CUBE": ([
        _sql("SELECT k, id, sum(v) FROM readme_t GROUP BY GROUPING SETS ((k), (id))"),
        _sql("SELECT k, sum(v) FROM readme_t GROUP BY ROLLUP(k)"),
        _sql("SELECT k, sum(v) FROM readme_t GROUP BY CUBE(k)"),
        lambda spark: _df(spark).rollup("k").count().collect(),
        lambda spark: _df(spark).cube("k").count().collect(),
    ], []),
    "Pivot": ([
        lambda spark: _df(spark).groupBy("id").pivot("k").sum("v").collect(),
        lambda spark: _df(spark).groupBy("id").pivot("k", ["a"]).agg(_F().max("v")).collect(),
        _sql("SELECT * FROM readme_t PIVOT (sum(v) FOR k IN ('a', 'b'))"),
        _sql("SELECT * FROM (SELECT k, id, v FROM readme_t) PIVOT (sum(v) FOR k IN ('a', 'b'))"),
    ], [
        _sql("SELECT * FROM readme_t PIVOT (sum(v) FOR (id, k) IN ((1, 'a') AS one))"),
    ]),
    "Unpivot": ([], [
        _sql("SELECT * FROM readme_u UNPIVOT (val FOR col IN (s))"),
        lambda spark: _df(spark).unpivot("id", ["v"], "col", "val").collect(),
        lambda spark: _df(spark).melt("id", ["v"], "col", "val").collect(),
    ]),
    "Generators": ([
        lambda spark: _nested(spark).select(_F().explode("arr")).collect(),
        lambda spark: _nested(spark).select(_F().posexplode("arr")).collect(),
        lambda spark: _nested(spark).selectExpr("explode(arr)").collect(),
        lambda spark: _nested(spark).select(_F().inline(_F().array(_F().struct("id")))).collect(),
        _sql("SELECT id, x FROM (SELECT 1 AS id) LATERAL VIEW explode(sequence(1, 2)) e AS x"),
        _sql("SELECT id, x FROM (SELECT 1 AS id) LATERAL VIEW OUTER explode(array()) e AS x"),
    ], [
        _sql("SELECT stack(2, 1, 2)"),
    ]),
    "Higher-order functions": ([], [
        lambda spark: _nested(spark).selectExpr("transform(arr, x -> x + 1)").collect(),
        lambda spark: _nested(spark).select(_F().transform("arr", lambda x: x + 1)).collect(),
        lambda spark: _nested(spark).select(_F().aggregate("arr", _F().lit(0), lambda a, x: a + x)).collect(),
    ]),
    "DISTRIBUTE BY, CLUSTER BY": ([], [
        _sql("SELECT * FROM readme_t DISTRIBUTE BY k"),
        _sql("SELECT * FROM readme_t CLUSTER BY k"),
    ]),
    "Sampling": ([
        lambda spark: _df(spark).sample(0.5).collect(),
        lambda spark: [d.collect() for d in _df(spark).randomSplit([0.5, 0.5])],
    ], [
        _sql("SELECT * FROM readme_t TABLESAMPLE (50 PERCENT)"),
    ]),
    "SQL statements": ([
        _sql("CREATE OR REPLACE TEMP VIEW readme_w AS SELECT * FROM readme_t"),
        _sql("CACHE TABLE readme_w"),
        _sql("UNCACHE TABLE readme_w"),
        _sql("DROP VIEW readme_w"),
    ], [
        _sql("CREATE TABLE readme_tt (a int) USING parquet"),
        _sql("INSERT INTO readme_t VALUES (4, 'c', 1.0)"),
        _sql("SHOW TABLES"),
        _sql("DESCRIBE readme_t"),
        _sql("SET spark.sql.shuffle.partitions=4"),
        _sql("EXPLAIN SELECT * FROM readme_t"),
    ]),
    "Tables and catalog": ([
        lambda spark: (spark.table("readme_t").collect(), spark.catalog.listTables(),
                       spark.catalog.tableExists("readme_t")),
    ], [
        lambda spark: _df(spark).write.saveAsTable("readme_saved"),
        lambda spark: _df(spark).write.insertInto("readme_t"),
        lambda spark: spark.catalog.listDatabases(),
    ]),
    "Nested types": ([
        lambda spark: _nested(spark).select(_F().col("arr")[0], _F().col("m")["a"], "s.p",
                                            _F().size("arr"), _F().array_contains("arr", 1)).collect(),
        lambda spark: _nested(spark).select(_F().array("id"), _F().struct("id"), _F().create_map("id", "id"),
                                            _F().element_at("arr", 1), _F().array_distinct("arr"),
                                            _F().slice("arr", 1, 1), _F().map_keys("m")).collect(),
        lambda spark: _nested(spark).join(spark.table("readme_u"), "id").collect(),
    ], [
        lambda spark: _nested(spark).withColumn("k", _F().lit("x")).join(
            spark.table("readme_u").withColumnRenamed("s", "k"), "k").collect(),
    ]),
    "UDFs": ([
        lambda spark: _df(spark).select(_F().udf(lambda x: x * 2, "double")("v")).collect(),
        lambda spark: _df(spark).select(_F().pandas_udf(lambda s: s * 2, "double")("v")).collect(),
        _pandas_iter_udf,
        _numba_udf,
        lambda spark: _df(spark).mapInPandas(lambda it: it, _df(spark).schema).collect(),
        lambda spark: _df(spark).mapInArrow(lambda it: it, _df(spark).schema).collect(),
        lambda spark: (spark.udf.register("readme_double", lambda x: x * 2, "double"),
                       spark.sql("SELECT readme_double(v) FROM readme_t").collect()),
    ], [
        _pandas_grouped_agg_udf,
        lambda spark: _df(spark).groupBy("k").applyInPandas(lambda pdf: pdf, _df(spark).schema).collect(),
        lambda spark: _df(spark).groupBy("k").cogroup(_df(spark).groupBy("k")),
        lambda spark: _F().udtf(returnType="x int"),
    ]),
    "ANSI mode": ([_ansi_float_int_is_double, _ansi_division_by_zero_raises], []),
    "Data sources": ([_roundtrip("parquet"), _roundtrip("csv"), _roundtrip("json"), _roundtrip("arrow")],
                     [_read("orc"), _read("text"), _read("xml"), _read("avro")]),
    "Structured Streaming": ([], [
        lambda spark: spark.readStream,
        lambda spark: _df(spark).writeStream,
    ]),
    "RDD API": ([], [
        lambda spark: _df(spark).rdd,
        lambda spark: spark.sparkContext.parallelize([1, 2]),
    ]),
    "MLlib": ([], [lambda spark: importlib.import_module("quiver.ml")]),
    "pandas API on Spark": ([], [
        lambda spark: _df(spark).pandas_api(),
        lambda spark: importlib.import_module("quiver.pandas"),
    ]),
}


def _status(works: list, fails: list) -> str:
    return "Partial" if works and fails else "Supported" if works else "Not supported"


def _area_rows() -> dict[str, str]:
    rows = {}
    for line in _section("support-areas").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0] not in ("area", "---"):
            rows[cells[0]] = cells[1]
    return rows


def test_areas_table_names_the_probed_areas():
    assert list(_area_rows()) == list(AREAS), "README.md's areas table and AREAS here must list the same areas, " \
                                              "in the same order"


def _raises(probe: Callable[[Any], Any], spark: Any) -> bool:
    """Whether `probe` fails: any error means the feature is still not supported."""
    try:
        probe(spark)
    except Exception:  # noqa: BLE001
        return True
    return False


def _probe_name(probe: Callable) -> str:
    return probe.__name__ if probe.__name__ != "<lambda>" else f"lambda at line {probe.__code__.co_firstlineno}"


@pytest.mark.parametrize("area", list(AREAS))
def test_area_status_matches_probes(area, views):
    spark = views
    works, fails = AREAS[area]
    expected = _status(works, fails)
    assert _area_rows().get(area) == expected, f"README.md says {area!r} is {_area_rows().get(area)!r}; " \
                                               f"its probes say {expected!r}"
    for probe in works:
        probe(spark)  # must run
    now_working = [_probe_name(probe) for probe in fails if not _raises(probe, spark)]
    assert not now_working, (f"{area}: these probes now work, so README.md claims too little; move them to the "
                             f"working probes here and update the README row: {now_working}")


# ---------------------------------------------------------------- conf keys


def _code_conf_keys() -> set[str]:
    from quiver.engine.core import conf

    keys = set(conf.DEFAULTS) | set(conf._VALIDATORS) | set(conf.ALIASES.values())
    keys |= {k for k in conf.ALIASES if k.startswith("spark.")}
    sources = list((ROOT / "quiver").rglob("*.py"))
    text = "\n".join(p.read_text() for p in sources)
    loggers = set(re.findall(r"getLogger\([\"']([^\"']+)[\"']\)", text))
    for key in re.findall(r"[\"'](quiver\.[A-Za-z0-9_.]+)[\"']", text):
        try:
            is_module = importlib.util.find_spec(key) is not None
        except ModuleNotFoundError:
            is_module = False
        if not is_module and key not in loggers:
            keys.add(key)
    return keys


def test_every_conf_key_is_documented():
    readme = _readme()
    undocumented = sorted(k for k in _code_conf_keys() if f"`{k}`" not in readme)
    assert not undocumented, f"conf keys the code reads but README.md's Configuration section lacks: {undocumented}"


def test_generated_missing_api_module_is_current():
    """quiver/engine/api/missing_api.py, which makes `df.rdd` raise QuiverNotSupported, lists what the table
    lists as missing."""
    pytest.importorskip("pyspark.sql", reason="the module compares against PySpark's API")
    generated = _script().missing_module()
    written = (ROOT / "quiver" / "engine" / "api" / "missing_api.py").read_text()
    assert written == generated, f"quiver/engine/api/missing_api.py is out of date; run `{REGENERATE}`"


def test_readme_examples_and_notebooks_start_a_session_by_one_name():
    # A newcomer reading README then a notebook should not meet two names for one class: `SparkSession`, as in
    # PySpark (`quiver.Session` stays an alias).
    texts = {path: path.read_text() for path in [ROOT / "README.md", *sorted((ROOT / "examples").glob("*.py")),
                                                 *sorted((ROOT / "notebooks").glob("*.ipynb"))]}
    assert all("quiver.Session.builder" not in text for text in texts.values()), \
        [str(p) for p, t in texts.items() if "quiver.Session.builder" in t]
    assert sum("quiver.SparkSession.builder" in text for text in texts.values()) >= 5
