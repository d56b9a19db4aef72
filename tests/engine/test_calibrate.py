"""engine/calibrate.py and `quiver calibrate`: a quick calibration writes a loadable CPU profile, the
held-out evaluator returns finite errors, and the fit recovers a known linear cost exactly."""
from __future__ import annotations

import math

import numpy as np
import pytest
from quiver.engine import calibrate as C
from quiver.engine.cli import main
from quiver.engine.errors import ConfigurationError
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
