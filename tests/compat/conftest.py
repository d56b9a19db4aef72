"""Fixtures for the differential suite; the harness itself lives in harness.py."""
from __future__ import annotations

import pytest

from .harness import TIMINGS, pyspark_engine, quiver_engine


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "beyond_contract: PySpark API used by ordinary programs but not named in the compat contract")


@pytest.fixture(scope="session")
def pyspark_session():
    """The reference SparkSession: local[2], UTC, 4 shuffle partitions, no UI, quiet logs."""
    return pyspark_engine().spark


@pytest.fixture(scope="session")
def quiver_session():
    """The Quiver session under test (imported lazily; QUIVER_COMPAT_ENGINE=pyspark swaps in PySpark)."""
    return quiver_engine().spark


@pytest.fixture(scope="session")
def quiver_api():
    """The (spark, F, T, Window) a program gets on the engine under test."""
    engine = quiver_engine()
    return engine.spark, engine.F, engine.T, engine.Window


@pytest.fixture(scope="session")
def pyspark_api():
    engine = pyspark_engine()
    return engine.spark, engine.F, engine.T, engine.Window


def pytest_terminal_summary(terminalreporter):
    if TIMINGS:
        spent = ", ".join(f"{name} {seconds:.1f}s" for name, seconds in sorted(TIMINGS.items()))
        terminalreporter.write_line(f"compat: time spent running programs: {spent}")
