"""quiver/planners/cost.py: profiles round-trip through JSON, the shipped ones load and are sane, costs follow
the linear formula, and a bad profile is refused with an error naming the file and the field."""
from __future__ import annotations

import json
import math

import pytest

from quiver.engine.core.errors import ConfigurationError
from quiver.planners.cost import (
    OPERATORS,
    DeviceProfile,
    OperatorCost,
    load_profile,
    shipped_profiles,
)

SHIPPED = ("cpu-generic", "nvidia-h100", "nvidia-h200", "ascend-910b")


def _profile(kind: str = "gpu") -> DeviceProfile:
    return DeviceProfile(
        name="test-device", kind=kind, memory_bytes=16 << 30, launch_overhead_s=5e-6,
        host_to_device_bytes_per_s=20e9, device_to_host_bytes_per_s=10e9, transfer_latency_s=1e-5,
        operators={op: OperatorCost(1e-5 * (i + 1), 1e-9, 2e-10, 3e-8 if op == "aggregate" else 0.0,
                                    4e-9 if op == "join_probe" else 0.0)
                   for i, op in enumerate(OPERATORS)},
        source="unit test", notes={"why": "round trip"})


def _doc(**changes) -> dict:
    doc = json.loads(_profile().to_json())
    doc.update(changes)
    return doc


def test_json_round_trip_keeps_every_field_and_the_notes():
    p = _profile()
    back = DeviceProfile.from_json(p.to_json())
    assert back == p
    assert back.notes == {"why": "round trip"}
    assert back.operators["aggregate"].per_group == 3e-8
    assert json.loads(p.to_json())["_notes"] == {"why": "round trip"}


def test_operator_seconds_is_the_linear_terms_without_the_per_batch_launch():
    p = _profile()
    agg = p.operators["aggregate"]
    want = agg.fixed + agg.per_row * 1e6 + agg.per_byte * 3e7 + agg.per_group * 1e4
    assert p.operator_seconds("aggregate", 1e6, 3e7, groups=1e4) == pytest.approx(want)
    probe = p.operators["join_probe"]
    want = probe.fixed + probe.per_row * 1e5 + probe.per_byte * 1e6 + probe.per_build_row * 2e4
    assert p.operator_seconds("join_probe", 1e5, 1e6, build_rows=2e4) == pytest.approx(want)
    with pytest.raises(ConfigurationError, match="no cost for operator 'window'.*join_probe"):
        p.operator_seconds("window", 1, 1)


def test_transfer_seconds_by_direction_and_zero_on_the_cpu():
    gpu = _profile("gpu")
    assert gpu.transfer_seconds(20e9, to_device=True) == pytest.approx(1e-5 + 1.0)
    assert gpu.transfer_seconds(20e9, to_device=False) == pytest.approx(1e-5 + 2.0)
    assert gpu.transfer_seconds(0, to_device=True) == 0.0
    assert _profile("cpu").transfer_seconds(20e9, to_device=True) == 0.0


def test_the_shipped_profiles_are_listed_and_load():
    assert set(SHIPPED) <= set(shipped_profiles())
    for name in SHIPPED:
        p = load_profile(name)
        assert p.name == name
        assert set(p.operators) == set(OPERATORS)
        assert p.source and p.notes, f"{name} must say where its numbers come from"
        for op in OPERATORS:
            seconds = p.operator_seconds(op, 1e6, 3e7, groups=1e4, build_rows=1e5)
            assert 0 < seconds < 10, f"{name} {op}: {seconds} s for a million rows"


@pytest.mark.parametrize("name", ["nvidia-h100", "nvidia-h200", "ascend-910b"])
def test_accelerators_pay_launches_and_a_link_slower_than_their_memory(name):
    p = load_profile(name)
    assert p.kind in ("gpu", "npu")
    assert p.launch_overhead_s > 0
    link_per_byte = 1 / p.host_to_device_bytes_per_s
    assert link_per_byte > 10 * p.operators["scan"].per_byte
    assert p.transfer_seconds(1e9, to_device=True) > p.operator_seconds("scan", 1e9 / 30, 1e9)
    assert p.operators["sort"].fixed > p.launch_overhead_s  # a radix sort is many kernels


def test_datasheet_figures_order_the_devices():
    cpu, h100, h200, npu = (load_profile(n) for n in SHIPPED)
    assert h200.memory_bytes > h100.memory_bytes > npu.memory_bytes
    assert h200.operators["scan"].per_byte < h100.operators["scan"].per_byte < npu.operators["scan"].per_byte
    assert npu.launch_overhead_s > h100.launch_overhead_s
    assert cpu.kind == "cpu" and cpu.transfer_seconds(1e9, True) == 0.0
    # a big sort is much cheaper on a GPU than on two CPU cores, even after moving the data there and back
    rows, bytes_ = 1e7, 3e8
    gpu_total = (h200.transfer_seconds(bytes_, True) + h200.operator_seconds("sort", rows, bytes_)
                 + h200.transfer_seconds(bytes_, False))
    assert gpu_total < cpu.operator_seconds("sort", rows, bytes_) / 10
    # and a tiny filter is cheaper where the data already is
    assert cpu.operator_seconds("filter", 100, 800) < h200.operator_seconds("filter", 100, 800) + \
        h200.transfer_seconds(800, True)


def test_load_profile_reads_a_path(tmp_path):
    path = tmp_path / "mine.json"
    path.write_text(_profile().to_json())
    assert load_profile(str(path)) == _profile()


def test_unknown_name_lists_the_shipped_profiles():
    with pytest.raises(ConfigurationError, match="no device profile named 'nvidia-h300'.*nvidia-h200"):
        load_profile("nvidia-h300")


def _error(tmp_path, doc) -> str:
    path = tmp_path / "bad.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    with pytest.raises(ConfigurationError) as e:
        load_profile(str(path))
    assert str(path) in str(e.value), "the error must name the file"
    return str(e.value)


def test_a_missing_field_is_named(tmp_path):
    doc = _doc()
    del doc["launch_overhead_s"]
    assert "missing field 'launch_overhead_s'" in _error(tmp_path, doc)
    doc = _doc()
    del doc["operators"]["sort"]["per_row"]
    assert "missing field 'operators.sort.per_row'" in _error(tmp_path, doc)
    doc = _doc()
    del doc["operators"]["topk"]
    assert "missing field 'operators.topk'" in _error(tmp_path, doc)


def test_a_negative_or_non_numeric_value_is_named(tmp_path):
    doc = _doc()
    doc["operators"]["filter"]["per_byte"] = -1e-9
    assert "'operators.filter.per_byte' must be a finite number >= 0" in _error(tmp_path, doc)
    assert "'transfer_latency_s' must be a number" in _error(tmp_path, _doc(transfer_latency_s="fast"))
    assert "'memory_bytes'" in _error(tmp_path, _doc(memory_bytes=-5))


def test_unknown_operators_kinds_and_fields_are_named_with_the_valid_ones(tmp_path):
    doc = _doc()
    doc["operators"]["window"] = {"fixed": 0, "per_row": 0, "per_byte": 0}
    message = _error(tmp_path, doc)
    assert "unknown operator 'operators.window'" in message and "join_build" in message
    doc = _doc()
    doc["operators"]["sort"]["per_key"] = 1.0
    assert "unknown field 'operators.sort.per_key'" in _error(tmp_path, doc)
    assert "valid kinds: cpu, gpu, npu" in _error(tmp_path, _doc(kind="tpu"))
    assert "unknown field 'launch_overhead'" in _error(tmp_path, _doc(launch_overhead=1e-5))
    assert "'host_to_device_bytes_per_s' must be positive" in _error(tmp_path, _doc(host_to_device_bytes_per_s=0))


def test_bad_json_names_the_line(tmp_path):
    assert "not valid JSON (line 2" in _error(tmp_path, '{\n  "name": nope\n}')


def test_operator_costs_are_finite_floats():
    for name in SHIPPED:
        for cost in load_profile(name).operators.values():
            assert all(isinstance(v, float) and math.isfinite(v) and v >= 0
                       for v in (cost.fixed, cost.per_row, cost.per_byte, cost.per_group, cost.per_build_row))
