"""The 22 TPC-H queries with every operator the device supports forced onto an emulated GPU or NPU.

The emulated devices run the same array-API kernels a real GPU (CuPy) or NPU (torch) runs, with
numpy; their answers must be DuckDB's, as the CPU executor's are. The queries summing decimal
products (decimal(38,s) sums, whose values fit 64 bits at any practical scale) aggregate on the device
too, with no task falling back to the CPU.
"""
from __future__ import annotations

import pytest

from benchmarks.tpch.queries import QUERY_NUMBERS, sql_text

# Queries whose revenue-style sums (decimal(38,s)) must be computed on the device.
DEVICE_AGGREGATE_QUERIES = (1, 3, 5, 6, 10)


@pytest.fixture
def on_device(tpch_session, conf_override, request):
    """The emulated device named by the test's parameter, with every operator it can run forced onto it."""
    kind = request.param
    tpch_session.last_placements.clear()
    with conf_override({"quiver.devices": f"cpu,{kind}:emulated", "quiver.placement": kind}):
        yield kind


@pytest.mark.parametrize("on_device", ["gpu"], indirect=True)
@pytest.mark.parametrize("number", QUERY_NUMBERS, ids=lambda n: f"q{n:02d}")
def test_query_on_an_emulated_gpu_matches_duckdb(tpch_session, assert_matches_duckdb, on_device, number):
    assert_matches_duckdb(number, tpch_session.sql(sql_text(number)).toArrow())
    stages = tpch_session._context.scheduler.last_job.stages
    used = {d for s in stages for d in s.devices}
    assert "gpu:0 (emulated)" in used, f"Q{number} ran nothing on the emulated GPU: {used}"
    if number in DEVICE_AGGREGATE_QUERIES:
        # the executed stages' placements (the scheduler's, with actual sizes), and no task rerun on the CPU
        executed = {s.stage_id for s in stages}
        aggregates = [(p.stage_id, op.operator, str(op.device), op.note) for p in tpch_session.last_placements.values()
                      if p.stage_id in executed for op in p.operators if op.operator.startswith("HashAggregate")]
        assert any(device == "gpu:0 (emulated)" for _, _, device, _ in aggregates), \
            f"Q{number} aggregated nothing on the emulated GPU: {aggregates}"
        assert sum(s.fallbacks for s in stages) == 0, f"Q{number} fell back to the CPU: {stages}"


@pytest.mark.parametrize("on_device", ["npu"], indirect=True)
@pytest.mark.parametrize("number", [1, 3, 6, 12, 14], ids=lambda n: f"q{n:02d}")
def test_query_on_an_emulated_npu_matches_duckdb(tpch_session, assert_matches_duckdb, on_device, number):
    assert_matches_duckdb(number, tpch_session.sql(sql_text(number)).toArrow())
    used = {d for s in tpch_session._context.scheduler.last_job.stages for d in s.devices}
    assert "npu:0 (emulated)" in used
