"""The e2e jobs reuse the differential harness and its sessions from tests/compat."""
from __future__ import annotations

import pytest

try:
    from ..compat.harness import pyspark_engine, quiver_engine
except ImportError:  # tests/ is not a package: compat/ and e2e/ are top-level packages
    from compat.harness import pyspark_engine, quiver_engine


@pytest.fixture(scope="session")
def pyspark_session():
    return pyspark_engine().spark


@pytest.fixture(scope="session")
def quiver_session():
    return quiver_engine().spark
