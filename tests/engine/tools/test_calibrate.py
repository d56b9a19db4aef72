"""quiver/engine/tools/calibrate.py, quiver/engine/tools/calibrate_device.py and `quiver calibrate`: a quick
calibration writes a loadable CPU or (emulated) GPU profile, the held-out evaluators return finite errors, a
missing device fails with a message naming what is missing, and the fit recovers a known linear cost
exactly."""
from __future__ import annotations

import math

import numpy as np
import pytest

from quiver.engine.core.errors import ConfigurationError
from quiver.engine.tools import calibrate as C
from quiver.engine.tools import calibrate_device as D
from quiver.engine.tools.cli import main
from quiver.executors.device.gpu import GpuExecutor
from quiver.planners.cost import OPERATORS, OperatorCost, load_profile


@pytest.fixture(scope="module")
def quick_profile(tmp_path_factory):
    path = tmp_path_factory.mktemp("calibrate") / "cpu.json"
    assert main(["calibrate", "--quick", "--output", str(path)]) == 0
    return load_profile(str(path))


def test_quick_calibration_writes_a_loadable_cpu_profile(quick_profile):
    assert quick_profile.kind == "cpu"
    assert quick_profile.source.startswith("calibrated on ")
    assert set(quick_profile.operators) == set(OPERATORS)
    for op, cost in quick_profile.operators.items():
        assert cost.per_row + cost.per_byte > 0, f"{op}: a bigger input must cost more"
        assert quick_profile.operator_seconds(op, 1 << 20, 16 << 20, groups=1000, build_rows=1 << 16) > 0
    assert quick_profile.transfer_seconds(1e9, to_device=True) == 0.0


def test_held_out_evaluation_returns_finite_errors(quick_profile):
    report = C.evaluate_profile(quick_profile, sizes=(1 << 13,), repeats=1)
    assert set(report["per_operator"]) == set(OPERATORS)
    assert all(math.isfinite(e) and e >= 0 for e in report["per_operator"].values())
    assert math.isfinite(report["overall"])
    assert {m["rows"] for m in report["measurements"]} == {1 << 13}
    assert all(m["measured_s"] > 0 for m in report["measurements"])


def test_held_out_evaluation_refuses_a_device_profile():
    with pytest.raises(ConfigurationError, match="nvidia-h200' describes a gpu"):
        C.evaluate_profile(load_profile("nvidia-h200"), sizes=(1 << 10,), repeats=1)


def test_cli_check_prints_the_error_table(tmp_path, capsys):
    status = main(["calibrate", "--quick", "--repeats", "1", "--check", "--output", str(tmp_path / "p.json")])
    out = capsys.readouterr().out
    assert "median relative error" in out and "overall" in out
    assert all(op in out for op in OPERATORS)
    assert status in (0, 1)


def test_cli_refuses_a_bad_repeat_count(tmp_path, capsys):
    assert main(["calibrate", "--quick", "--repeats", "0", "--output", str(tmp_path / "p.json")]) == 2
    assert "--repeats" in capsys.readouterr().err
    assert not (tmp_path / "p.json").exists()


def test_nnls_meets_the_optimality_conditions():
    rng = np.random.default_rng(3)
    a = rng.random((40, 4))
    b = a @ np.array([2.0, -1.0, 0.5, 0.0]) + rng.normal(0, 0.01, 40)
    x = C.nnls(a, b)
    assert np.all(x >= 0)
    grad = a.T @ (a @ x - b)
    assert np.allclose(grad[x > 0], 0, atol=1e-8)  # free coefficients are at the least-squares optimum
    assert np.all(grad[x == 0] >= -1e-8)  # and moving a clamped one up would not help


def test_fit_recovers_a_known_linear_cost():
    truth = OperatorCost(fixed=2e-4, per_row=3e-9, per_byte=4e-10, per_group=5e-8)
    points = [C.Measurement("aggregate", "x", rows, rows * width, groups, 0, 0,
                            truth.seconds(rows, rows * width, groups))
              for rows in (1 << 12, 1 << 16, 1 << 20) for width, groups in ((8, 10), (24, 1000), (60, 50000))]
    fitted = C.fit_cost(points, C.TERMS["aggregate"])
    for field in ("fixed", "per_row", "per_byte", "per_group"):
        assert getattr(fitted, field) == pytest.approx(getattr(truth, field), rel=1e-6)


@pytest.fixture(scope="module")
def emulated_gpu():
    return GpuExecutor.open(emulated=True)


@pytest.fixture(scope="module")
def emulated_gpu_profile(tmp_path_factory, emulated_gpu):
    path = tmp_path_factory.mktemp("calibrate") / "gpu.json"
    D.calibrate_device("gpu", str(path), executor=emulated_gpu, sizes=(1 << 10, 1 << 15),
                       repeats=3)  # wide apart: slopes above timer noise
    return load_profile(str(path))


def test_emulated_gpu_calibration_writes_a_loadable_gpu_profile(emulated_gpu_profile):
    p = emulated_gpu_profile
    assert p.kind == "gpu" and p.name == "gpu-calibrated"
    assert "emulated" in p.source and D.EMULATED_NOTE in p.source
    assert p.notes["emulated"] == D.EMULATED_NOTE
    assert p.host_to_device_bytes_per_s > 0 and p.device_to_host_bytes_per_s > 0
    assert p.transfer_latency_s >= 0 and p.launch_overhead_s > 0
    assert p.memory_bytes > 0
    assert p.transfer_seconds(1 << 20, to_device=True) > p.transfer_seconds(1 << 10, to_device=True)
    assert set(p.operators) == set(OPERATORS)
    for op in set(OPERATORS) - {"scan"}:  # scan is what to_device costs beyond the link, which may be nothing
        cost = p.operators[op]
        assert cost.per_row + cost.per_byte > 0, f"{op}: a bigger input must cost more"


def test_device_calibration_refuses_an_executor_of_another_kind(emulated_gpu):
    with pytest.raises(ConfigurationError, match="calibrate_device\\('npu'\\) was given the executor of gpu:0"):
        D.calibrate_device("npu", None, executor=emulated_gpu, sizes=(1 << 10,), repeats=1)


def test_held_out_evaluation_of_the_emulated_gpu(emulated_gpu_profile, emulated_gpu):
    report = D.evaluate_device_profile(emulated_gpu_profile, emulated_gpu, sizes=(1 << 11,), repeats=1)
    assert set(report["per_operator"]) == set(OPERATORS)
    assert all(math.isfinite(e) and e >= 0 for e in report["per_operator"].values())
    assert {m["rows"] for m in report["measurements"]} == {1 << 11}
    assert all(m["measured_s"] > 0 for m in report["measurements"])
    with pytest.raises(ConfigurationError, match="describes a cpu"):
        D.evaluate_device_profile(load_profile("cpu-generic"), emulated_gpu, sizes=(1 << 10,), repeats=1)


def test_cli_calibrates_an_emulated_gpu_with_a_warning(tmp_path, capsys):
    path = tmp_path / "gpu.json"
    status = main(["calibrate", "--device", "gpu:emulated", "--quick", "--repeats", "1", "--check",
                   "--output", str(path)])
    captured = capsys.readouterr()
    assert status in (0, 1)
    assert D.EMULATED_NOTE in captured.err
    assert "host link" in captured.out and "median relative error" in captured.out
    profile = load_profile(str(path))
    assert profile.kind == "gpu" and "emulated" in profile.source


@pytest.mark.parametrize("kind, library", [("gpu", "CuPy"), ("npu", "torch")])
def test_cli_without_the_device_says_what_is_missing(kind, library, tmp_path, capsys):
    try:
        D.open_executor(kind)
    except ConfigurationError:
        pass
    else:
        pytest.skip(f"this machine has a {kind}")
    path = tmp_path / "p.json"
    assert main(["calibrate", "--device", kind, "--quick", "--output", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"cannot calibrate {kind}:0" in err and library in err
    assert f"quiver.profile.{kind}" in err
    assert ("nvidia-h200" if kind == "gpu" else "ascend-910b") in err
    assert not path.exists()


def test_cli_refuses_an_unknown_device(tmp_path, capsys):
    assert main(["calibrate", "--device", "tpu", "--output", str(tmp_path / "p.json")]) == 2
    assert "unknown device kind 'tpu'" in capsys.readouterr().err
