"""Fixtures for this package's tests; the Quiver session and partition counts come from tests/conftest.py."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def pyspark_session():
    """Real PySpark (local[1], UTC), the reference for types, names, schemas and show() text."""
    import os
    import shutil

    pyspark_sql = pytest.importorskip("pyspark.sql", reason="PySpark is the reference for these tests")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("PySpark needs a Java runtime and none is installed")
    session = (pyspark_sql.SparkSession.builder.master("local[1]").appName("quiver-engine-tests")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.session.timeZone", "UTC").config("spark.sql.shuffle.partitions", "1")
               .getOrCreate())
    session.sparkContext.setLogLevel("OFF")
    return session


@pytest.fixture
def pyspark_non_ansi(pyspark_session):
    """PySpark with ANSI mode off for one test: the semantics Quiver follows (x / 0 is null,
    int + float is float). Restored after the test, as other suites share the JVM session."""
    previous = pyspark_session.conf.get("spark.sql.ansi.enabled")
    pyspark_session.conf.set("spark.sql.ansi.enabled", "false")
    yield pyspark_session
    pyspark_session.conf.set("spark.sql.ansi.enabled", previous)
