"""Fixtures shared by every test package: one Quiver session, and a shuffle-partition count."""
from __future__ import annotations

import contextlib
import os

import pytest

import quiver


@pytest.fixture(scope="session")
def spark():
    """The Quiver session every public-API test runs on: local[2], as in the docs, or the master
    QUIVER_TEST_MASTER names (`make test` runs the compat and e2e tests again on `ray`); QUIVER_TEST_NATIVE
    (`duckdb`) runs every fragment that translates on that native engine, however little it reads or reduces."""
    builder = quiver.Session.builder.master(os.environ.get("QUIVER_TEST_MASTER", "local[2]"))
    native = os.environ.get("QUIVER_TEST_NATIVE")
    if native:
        builder = (builder.config("quiver.native.engine", native).config("quiver.native.maxOutputShare", "1")
                   .config("quiver.native.minScanBytes", "0"))
    return builder.getOrCreate()


@pytest.fixture(params=[1, 3, 8], ids=lambda n: f"{n}parts")
def partitions(request, spark):
    """Run the test once per `spark.sql.shuffle.partitions` value, restoring the previous value after."""
    previous = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", request.param)
    yield request.param
    spark.conf.set("spark.sql.shuffle.partitions", previous)


@pytest.fixture(scope="session")
def pyspark_legacy():
    """Real PySpark with ANSI off and UTC, the reference for kernels and casts (Quiver's non-ANSI semantics)."""
    from pyspark.sql import SparkSession

    base = (SparkSession.builder.master("local[1]").appName("quiver-reference")
            .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC").getOrCreate())
    session = base.newSession()
    session.conf.set("spark.sql.ansi.enabled", "false")
    session.conf.set("spark.sql.session.timeZone", "UTC")
    # a few rows per query: interpreting beats compiling the generated code
    session.conf.set("spark.sql.codegen.wholeStage", "false")
    session.conf.set("spark.sql.codegen.factoryMode", "NO_CODEGEN")
    return session


@pytest.fixture
def conf_override(spark):
    """`with conf_override({"quiver.devices": "cpu,gpu:emulated"}):` sets conf keys for a block and
    restores each one's previous value (or unsets it) after."""
    @contextlib.contextmanager
    def override(values: dict):
        previous = {k: spark.conf.get(k, None) for k in values}
        for k, v in values.items():
            spark.conf.set(k, v)
        try:
            yield
        finally:
            for k, v in previous.items():
                if v is None:
                    spark.conf.unset(k)
                else:
                    spark.conf.set(k, v)
    return override
