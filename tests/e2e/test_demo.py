"""`make demo`'s program runs from start to end: the result, the plans, the GPU placement and the job report."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_demo_runs_and_writes_its_job_report(tmp_path):
    out = subprocess.run([sys.executable, "-m", "examples.demo"], cwd=REPO, capture_output=True, text=True,
                         timeout=300, env={**os.environ, "QUIVER_DEMO_DATA": str(tmp_path / "demo")})
    assert out.returncode == 0, out.stderr[-3000:]
    assert "|  city|year|" in out.stdout and "== Physical Plan ==" in out.stdout
    assert "on gpu:0 (emulated)" in out.stdout
    report = tmp_path / "demo" / "job.html"
    assert f"job report: {report}" in out.stdout
    assert report.read_text().count('<rect class="task"') > 0
