"""quiver/engine/tools/submit.py: `quiver-submit` runs an application with the master and conf of its command line,
runs SQL files, and fails with a one-line reason and a non-zero status. Each run is a fresh interpreter,
as from a terminal."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow

import quiver
from quiver.engine.tools.submit import sql_statements

REPO = Path(__file__).resolve().parents[3]

APP = textwrap.dedent("""
    import sys
    import quiver
    from quiver import functions as F

    spark = quiver.Session.builder.appName("from-the-app").getOrCreate()
    print("master", spark.sparkContext.master)
    print("conf master", spark.conf.get("spark.master"))
    print("partitions", spark.conf.get("spark.sql.shuffle.partitions"))
    print("name", spark.conf.get("spark.app.name"))
    print("args", sys.argv[1:])
    rows = spark.range(0, 100).groupBy((F.col("id") % 3).alias("k")).count().orderBy("k").collect()
    print("rows", [(r.k, r["count"]) for r in rows])
    if "--fail" in sys.argv:
        spark.sql("SELECT no_such_column FROM range(3)").collect()
""")


def submit(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "quiver.engine.tools.submit", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=180)


def test_the_application_gets_master_and_conf_from_the_command_line(tmp_path):
    app = tmp_path / "app.py"
    app.write_text(APP)
    out = submit("--master", "local[2]", "--conf", "spark.sql.shuffle.partitions=3", "--name", "ignored",
                 str(app), "one", "--two")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "master local[2]" in lines and "conf master local[2]" in lines and "partitions 3" in lines
    assert "name from-the-app" in lines  # what the application sets itself wins, as with spark-submit
    assert "args ['one', '--two']" in lines
    assert "rows [(0, 34), (1, 33), (2, 33)]" in lines


def test_an_application_that_sets_no_master_reads_the_one_it_runs_on(tmp_path):
    app = tmp_path / "app.py"
    app.write_text(APP)
    env = {k: v for k, v in os.environ.items() if k != "QUIVER_MASTER"}
    out = subprocess.run([sys.executable, "-m", "quiver.engine.tools.submit", str(app)], cwd=REPO,
                         capture_output=True, text=True, timeout=180, env=env)
    assert out.returncode == 0, out.stderr
    assert "conf master local[*]" in out.stdout.splitlines()


def test_a_sql_file_runs_each_statement_and_prints_results(tmp_path):
    script = tmp_path / "q.sql"
    script.write_text("CREATE OR REPLACE TEMP VIEW t AS SELECT id, id % 2 AS odd FROM range(6);\n"
                      "-- a comment; with a semicolon\n"
                      "SELECT odd, count(*) AS n, 'a;b' AS s FROM t GROUP BY odd ORDER BY odd;\n")
    out = submit("--master", "local[1]", str(script))
    assert out.returncode == 0, out.stderr
    assert "|odd|n  |s  |" in out.stdout and "|0  |3  |a;b|" in out.stdout and "|1  |3  |a;b|" in out.stdout


def test_bad_input_exits_non_zero_with_one_line(tmp_path):
    missing = submit("--master", "local[1]", str(tmp_path / "nope.py"))
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines() == [
        f"quiver-submit: error: the application '{tmp_path / 'nope.py'}' does not exist (or is not a file)"]
    unknown = submit("--no-such-option", "x.py")
    assert unknown.returncode == 2
    assert unknown.stderr.strip().splitlines()[-1] == "quiver-submit: error: unrecognized arguments: --no-such-option"
    bad_conf = submit("--conf", "novalue", "x.py")
    assert bad_conf.returncode == 2 and "--conf: expected KEY=VALUE, got 'novalue'" in bad_conf.stderr


def test_no_application_is_a_usage_error_saying_one_is_needed():
    for args in ((), ("--master", "local[2]")):
        out = submit(*args)
        assert out.returncode == 2 and out.stdout == ""
        assert out.stderr.strip().splitlines() == [
            "usage: quiver-submit [options] <app.py | query.sql> [app arguments]",
            "quiver-submit: error: an application is needed: a Python file (app.py) or a SQL file (query.sql); "
            "quiver-submit --help lists the options"]


def test_a_master_quiver_has_no_runtime_for_exits_2_naming_the_valid_masters(tmp_path):
    app = tmp_path / "app.py"
    app.write_text(APP)
    out = submit("--master", "yarn", str(app))
    assert out.returncode == 2 and out.stdout == ""
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("quiver-submit: error: argument --master: master 'yarn' is not a master; valid masters "
                           "are local, local[N], local[*]") and "ray://host:port" in last


def test_version_names_quiver_python_and_pyarrow():
    out = submit("--version")
    assert out.returncode == 0
    lines = out.stdout.splitlines()
    assert lines[0] == f"quiver {quiver.__version__}" and lines[1].startswith("Python 3.")
    assert lines[2] == f"pyarrow {pyarrow.__version__}"


def test_a_failed_job_exits_1_with_its_reason_and_the_traceback_only_when_verbose(tmp_path):
    app = tmp_path / "app.py"
    app.write_text(APP)
    quiet = submit("--master", "local[1]", str(app), "--fail")
    assert quiet.returncode == 1
    assert quiet.stderr.strip().splitlines()[-1].startswith("quiver-submit: app.py failed: ")
    assert "no_such_column" in quiet.stderr and "Traceback" not in quiet.stderr
    verbose = submit("--verbose", "--master", "local[1]", str(app), "--fail")
    assert verbose.returncode == 1 and "Traceback" in verbose.stderr


def test_sql_statements_are_cut_at_semicolons_outside_strings_and_comments():
    text = "SELECT 'x;y' AS a;\n/* c; */ SELECT 2 -- d; e\n;\n\n;"
    assert sql_statements(text) == ["SELECT 'x;y' AS a", "/* c; */ SELECT 2 -- d; e"]
    assert sql_statements("SELECT 1;\n-- the end; nothing more\n") == ["SELECT 1"]
    assert sql_statements("  /* only a comment */ ") == []


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "quiver.engine.tools.cli", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=180)


def test_quiver_sql_explain_and_version():
    out = cli("sql", "SELECT 1 AS a; SELECT 'x;y' AS s", "--master", "local[1]")
    assert out.returncode == 0, out.stderr
    assert "|a  |" in out.stdout and "|x;y|" in out.stdout
    failed = cli("sql", "SELECT nope", "--master", "local[1]")
    assert failed.returncode == 1
    assert failed.stderr.strip().splitlines()[-1].startswith("quiver sql: UnresolvedColumnError: column 'nope'")
    plan = cli("explain", "SELECT id FROM range(3) WHERE id > 1", "--master", "local[1]", "--mode", "cost")
    assert plan.returncode == 0 and "== Physical Plan (estimated rows and bytes" in plan.stdout
    version = cli("version")
    assert version.returncode == 0 and version.stdout.startswith("quiver 0.1.0")


PYSPARK_APP = textwrap.dedent("""
    import sys
    import tempfile

    from pyspark import SparkConf
    from pyspark.sql import Row, SparkSession, Window
    from pyspark.sql import functions as F
    from pyspark.sql.types import DoubleType, IntegerType, StringType, StructField, StructType
    from pyspark.sql.utils import AnalysisException

    conf = SparkConf().setAppName("unchanged-pyspark").set("spark.sql.shuffle.partitions", "3")
    spark = SparkSession.builder.config(conf=conf).getOrCreate()
    print("engine", type(spark).__module__.split(".")[0], file=sys.stderr)
    schema = StructType([StructField("city", StringType()), StructField("year", IntegerType()),
                         StructField("amount", DoubleType())])
    sales = spark.createDataFrame([("Oslo", 2024, 120.0), ("Lima", 2024, 80.5), ("Oslo", 2025, 99.0),
                                   ("Pune", 2025, None), ("Lima", 2025, 42.25)], schema)
    folder = tempfile.mkdtemp()
    sales.write.mode("overwrite").option("header", True).csv(folder + "/sales")
    back = spark.read.option("header", True).schema(schema).csv(folder + "/sales")
    graded = back.withColumn("band", F.when(F.col("amount") >= 100, "high").when(F.col("amount").isNull(), "none")
                             .otherwise("low"))
    w = Window.partitionBy("city").orderBy(F.col("year"))
    graded = graded.withColumn("running", F.sum(F.coalesce("amount", F.lit(0.0))).over(w))
    cities = spark.createDataFrame([Row(city="Oslo", country="NO"), Row(city="Lima", country="PE")])
    joined = graded.join(cities, "city", "left").orderBy("city", "year")
    for row in joined.collect():
        print(row.city, row.year, row.amount, row.band, row.running, row.country)
    totals = joined.groupBy("country").agg(F.round(F.sum("amount"), 2).alias("total"), F.count("*").alias("n"))
    totals.orderBy(F.col("country").asc_nulls_first()).show()
    spark.sql("SELECT 1 AS one").show()
    try:
        sales.select("no_such_column")
    except AnalysisException:
        print("AnalysisException caught")
    spark.stop()
""")


def test_an_unchanged_pyspark_application_runs_on_quiver_with_pysparks_output(tmp_path):
    app = tmp_path / "pyspark_app.py"
    app.write_text(PYSPARK_APP)
    ours = submit("--master", "local[2]", str(app))
    assert ours.returncode == 0, ours.stderr
    assert "engine quiver" in ours.stderr
    theirs = subprocess.run([sys.executable, str(app)], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                            env={**os.environ, "PYSPARK_SUBMIT_ARGS": "--master local[2] pyspark-shell"})
    assert theirs.returncode == 0, theirs.stderr[-2000:]
    assert "engine pyspark" in theirs.stderr
    assert ours.stdout.splitlines() == theirs.stdout.splitlines()


def test_a_part_of_pyspark_quiver_lacks_fails_naming_it(tmp_path):
    app = tmp_path / "ml_app.py"
    app.write_text("from pyspark.sql import SparkSession\nfrom pyspark.ml.feature import VectorAssembler\n")
    out = submit(str(app))
    assert out.returncode == 1
    assert "pyspark.ml is not part of Quiver's PySpark API" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    real = submit("--pyspark-api", "pyspark", str(app))
    assert real.returncode == 0, real.stderr
