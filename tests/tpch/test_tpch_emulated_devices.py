"""The 22 TPC-H queries with every operator the device supports forced onto an emulated GPU or NPU.

The emulated devices run the same array-API kernels a real GPU (CuPy) or NPU (torch) runs, with
numpy; their answers must be DuckDB's, as the CPU executor's are.
"""
from __future__ import annotations

import pytest

from benchmarks.tpch.queries import QUERY_NUMBERS, sql_text


@pytest.fixture
def on_device(tpch_session, request):
    kind = request.param
    conf = tpch_session.conf
    previous = {k: conf.get(k, None) for k in ("quiver.devices", "quiver.placement")}
    conf.set("quiver.devices", f"cpu,{kind}:emulated")
    conf.set("quiver.placement", kind)
    yield kind
    for k, v in previous.items():
        if v is None:
            conf.unset(k)
        else:
            conf.set(k, v)


@pytest.mark.parametrize("on_device", ["gpu"], indirect=True)
@pytest.mark.parametrize("number", QUERY_NUMBERS, ids=lambda n: f"q{n:02d}")
def test_query_on_an_emulated_gpu_matches_duckdb(tpch_session, assert_matches_duckdb, on_device, number):
    assert_matches_duckdb(number, tpch_session.sql(sql_text(number)).toArrow())
    used = {d for s in tpch_session._scheduler.last_job.stages for d in s.devices}
    assert "gpu:0 (emulated)" in used, f"Q{number} ran nothing on the emulated GPU: {used}"


@pytest.mark.parametrize("on_device", ["npu"], indirect=True)
@pytest.mark.parametrize("number", [1, 3, 6, 12, 14], ids=lambda n: f"q{n:02d}")
def test_query_on_an_emulated_npu_matches_duckdb(tpch_session, assert_matches_duckdb, on_device, number):
    assert_matches_duckdb(number, tpch_session.sql(sql_text(number)).toArrow())
    used = {d for s in tpch_session._scheduler.last_job.stages for d in s.devices}
    assert "npu:0 (emulated)" in used
