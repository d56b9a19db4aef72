"""spark.lastJob(): the job's stages and task attempts, and its HTML timeline opened in a real browser."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import quiver
from quiver import functions as F
from quiver.engine.core.errors import QuiverError
from quiver.engine.ui.device_colours import DEVICE_COLOURS, FAILED_COLOUR


@pytest.fixture
def gpu_session():
    """local[2] with an emulated GPU that takes every operator it can."""
    spark = quiver.Session.builder.master("local[2]").getOrCreate()
    saved = {k: spark.conf.get(k) for k in ("quiver.devices", "quiver.placement", "quiver.ui.progress")}
    spark.conf.set("quiver.ui.progress", "false")
    yield spark
    for k, v in saved.items():
        spark.conf.set(k, v)


def _join_job(spark):
    facts = (spark.range(0, 200_000, numPartitions=4).withColumn("k", F.col("id") % 500)
             .withColumn("v", F.col("id") * 2.5))
    dims = spark.range(0, 500).withColumnRenamed("id", "k").withColumn("w", F.col("k") * 3)
    return facts.join(dims, "k").groupBy("k").agg(F.sum("v").alias("s")).orderBy("k")


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail("Chromium is not installed: scripts/system-packages installs it (Debian's chromium package)")
    return found


def _browser(*args: str, tmp: Path) -> subprocess.CompletedProcess:
    return subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           f"--user-data-dir={tmp / 'profile'}", *args], capture_output=True, text=True,
                          timeout=120, check=True)


def test_last_job_keeps_stages_tasks_devices_and_bytes_shuffled(gpu_session):
    spark = gpu_session
    spark.conf.set("quiver.devices", "cpu,gpu:emulated")
    spark.conf.set("quiver.placement", "gpu")
    rows = _join_job(spark).collect()
    assert len(rows) == 500
    job = spark.lastJob()
    assert [s.kind for s in job.stages][-1] == "result" and all(s.kind == "map" for s in job.stages[:-1])
    assert job.bytes_shuffled == sum(s.bytes_written for s in job.stages[:-1]) > 0
    done = {(t.stage_id, t.partition) for t in job.tasks if t.error is None}
    assert all((s.stage_id, p) in done for s in job.stages for p in range(s.tasks))
    assert any("gpu:0 (emulated)" in t.devices for t in job.tasks)
    assert all(t.worker.startswith("quiver-task_") or t.worker == "driver" for t in job.tasks)
    assert all(job.started <= t.started <= t.finished <= job.started + job.seconds + 1 for t in job.tasks)


def test_no_job_yet_says_what_to_do():
    spark = quiver.Session.builder.master("local[2]").getOrCreate()
    last = spark._context.scheduler.last_job
    spark._context.scheduler.last_job = None
    try:
        with pytest.raises(QuiverError, match="no job has run in this session yet"):
            spark.lastJob()
    finally:
        spark._context.scheduler.last_job = last


def test_failed_attempts_are_kept_and_marked(gpu_session, tmp_path):
    spark = gpu_session
    marker = tmp_path / "failed-once"

    def flaky(batches):
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL))  # only the first task to get here fails
        except FileExistsError:
            yield from batches
            return
        raise RuntimeError("first attempt fails")

    spark.range(0, 100, numPartitions=2).mapInArrow(flaky, "id long").collect()
    job = spark.lastJob()
    failed = [t for t in job.tasks if t.error]
    assert len(failed) == 1 and "first attempt fails" in failed[0].error
    page = Path(job.report(str(tmp_path / "job.html"))).read_text()
    assert f'stroke="{FAILED_COLOUR}"' in page and "failed attempt" in page


def test_report_must_be_an_html_path(gpu_session, tmp_path):
    gpu_session.range(3).collect()
    with pytest.raises(ValueError, match=r"ending in \.html"):
        gpu_session.lastJob().report(str(tmp_path / "job.png"))


def test_report_renders_every_task_in_headless_chromium(gpu_session, tmp_path):
    from PIL import Image

    spark = gpu_session
    spark.conf.set("quiver.devices", "cpu,gpu:emulated")
    spark.conf.set("quiver.placement", "cpu")
    _join_job(spark).collect()
    job = spark.lastJob()
    spark.conf.set("quiver.placement", "gpu")
    _join_job(spark).collect()
    gpu_job = spark.lastJob()
    for j, name in ((job, "cpu.html"), (gpu_job, "gpu.html")):
        path = Path(j.report(str(tmp_path / "reports" / name)))
        dom = _browser("--dump-dom", path.as_uri(), tmp=tmp_path).stdout
        bars = re.findall(r'<rect class="task" data-stage="(\d+)" data-partition="(\d+)"', dom)
        assert len(bars) == len(j.tasks) > 0
        assert {(int(s), int(p)) for s, p in bars} == {(t.stage_id, t.partition) for t in j.tasks}
        lanes = set(re.findall(r'<text class="lane"[^>]*>([^<]+)</text>', dom))
        assert lanes == {t.worker for t in j.tasks}
    for name, kind, other in (("cpu", "cpu", "gpu"), ("gpu", "gpu", None)):
        shot = tmp_path / f"{name}.png"
        _browser("--window-size=1300,900", f"--screenshot={shot}", (tmp_path / "reports" / f"{name}.html").as_uri(),
                 tmp=tmp_path)
        colours = Image.open(shot).convert("RGB").getcolors(maxcolors=1 << 20)
        drawn = {rgb for count, rgb in colours if count >= 20}
        assert _rgb(kind) in drawn, f"the {kind.upper()} tasks' bars are not on the rendered page"
        if other:
            assert _rgb(other) not in drawn


def _rgb(kind: str) -> tuple[int, int, int]:
    hex_colour = DEVICE_COLOURS[kind]
    return tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
