"""The table every kernel case runs on, built once per test module."""
from __future__ import annotations

import pyarrow as pa
import pytest

from tests.executors.cpu.kernels.harness import source_table


@pytest.fixture(scope="module")
def table() -> pa.Table:
    return source_table()
