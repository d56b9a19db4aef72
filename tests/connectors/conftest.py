"""Fixtures for connector tests: one local PySpark session to compare against."""
from __future__ import annotations

import os
import shutil

import pytest


@pytest.fixture(scope="session")
def spark():
    """One PySpark session (local[1], UTC) for every connector test that compares with Spark."""
    pyspark_sql = pytest.importorskip("pyspark.sql", reason="PySpark is needed for the differential tests")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("PySpark needs a Java runtime and none is installed")
    # Tiny inputs: a C1-only JVM and interpreted plans start and answer in about half the time.
    session = (pyspark_sql.SparkSession.builder.master("local[1]").appName("quiver-connector-tests")
               .config("spark.ui.enabled", "false").config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.shuffle.partitions", "1")
               .config("spark.driver.extraJavaOptions", "-XX:+UseSerialGC -XX:TieredStopAtLevel=1")
               .config("spark.sql.codegen.wholeStage", "false")
               .config("spark.sql.codegen.factoryMode", "NO_CODEGEN")
               .config("spark.sql.adaptive.enabled", "false")
               .getOrCreate())
    session.sparkContext.setLogLevel("OFF")
    yield session
    session.stop()
