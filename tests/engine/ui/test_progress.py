"""Live progress: a rich display on a terminal, updating HTML in Jupyter, quiet otherwise."""
from __future__ import annotations

import io
import re
import subprocess
import sys
import time
import types

import pytest
from rich.console import Console

import quiver
from quiver import functions as F
from quiver.engine.core.errors import ConfigurationError
from quiver.engine.ui.progress import ProgressListener, _jupyter_display, format_bytes, progress_html


@pytest.fixture
def session():
    spark = quiver.Session.builder.master("local[2]").getOrCreate()
    listeners = list(spark._context.scheduler.listeners)
    saved = {k: spark.conf.get(k) for k in ("quiver.ui.progress", "quiver.ui.progress.delayMs")}
    yield spark
    spark._context.scheduler.listeners[:] = listeners
    for k, v in saved.items():
        spark.conf.set(k, v)


def _slow_job(spark, seconds: float = 0.15):
    def slow(batches):
        for b in batches:
            time.sleep(seconds)
            yield b

    return (spark.range(0, 40_000, numPartitions=4).mapInArrow(slow, "id long")
            .groupBy((F.col("id") % 7).alias("k")).count())


def _terminal(spark, force_terminal: bool = True) -> io.StringIO:
    out = io.StringIO()
    console = Console(file=out, force_terminal=force_terminal, width=140, color_system="truecolor")
    spark._context.scheduler.listeners[:] = [ProgressListener(spark.conf, console)]
    return out


def test_a_long_job_draws_each_stage_on_a_terminal_then_leaves_one_summary_line(session):
    session.conf.set("quiver.ui.progress.delayMs", "0")
    out = _terminal(session)
    _slow_job(session).collect()
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue()).replace("\r", "\n")
    assert "Stage 0" in text and "/4 tasks" in text and "cpu:0" in text
    job = session.lastJob()
    summary = [line for line in text.splitlines() if line.strip().startswith(f"Job {job.job_id} done in")]
    assert len(summary) == 1 and f"{len(job.stages)} stages, {len(job.tasks)} tasks" in summary[0]


def test_a_job_shorter_than_the_delay_draws_nothing(session):
    session.conf.set("quiver.ui.progress.delayMs", "60000")
    out = _terminal(session)
    session.range(10).collect()
    assert out.getvalue() == ""


def test_quiet_when_not_a_terminal_or_when_turned_off(session):
    session.conf.set("quiver.ui.progress.delayMs", "0")
    out = _terminal(session, force_terminal=False)
    _slow_job(session, 0.05).collect()
    assert out.getvalue() == ""
    session.conf.set("quiver.ui.progress", "false")
    out = _terminal(session)
    _slow_job(session, 0.05).collect()
    assert out.getvalue() == ""


def test_progress_conf_is_validated(session):
    with pytest.raises(ConfigurationError, match="quiver.ui.progress must be true or false"):
        session.conf.set("quiver.ui.progress", "sometimes")
    with pytest.raises(ConfigurationError, match="delayMs"):
        session.conf.set("quiver.ui.progress.delayMs", "-5")


class _Handle:
    def __init__(self, log):
        self.log = log

    def update(self, content):
        self.log.append(("update", content))


def test_in_jupyter_one_html_display_is_updated_in_place(session, monkeypatch):
    shown: list = []

    def display(content, display_id=False):
        assert display_id is True
        shown.append(("display", content))
        return _Handle(shown)

    monkeypatch.setattr("quiver.engine.ui.progress._jupyter_display", lambda: (display, lambda html: html))
    session.conf.set("quiver.ui.progress.delayMs", "0")
    _slow_job(session).collect()
    assert [kind for kind, _ in shown].count("display") == 1
    final = shown[-1][1]
    job = session.lastJob()
    assert f"Job {job.job_id}" in final and "done" in final
    for stage in job.stages:
        assert f"<td>Stage {stage.stage_id}</td>" in final and f"<td>{stage.tasks}/{stage.tasks}</td>" in final


def test_stage_metrics_count_each_partition_once_with_its_rows(session):
    session.conf.set("quiver.ui.progress", "false")
    df = session.range(0, 1000, numPartitions=4).filter(F.col("id") % 2 == 0).repartition(3)
    assert df.count() == 500
    job = session.lastJob()
    first = job.stages[0]
    assert first.tasks_done == first.tasks == 4 and first.rows == 500
    assert all(s.tasks_done == s.tasks for s in job.stages)
    assert "running" not in progress_html(job) and "done" in progress_html(job)


def test_format_bytes():
    assert format_bytes(512) == "512 B"
    assert format_bytes(3 * 1024 + 300) == "3.3 KiB"
    assert format_bytes(5 << 30) == "5.0 GiB"


def test_a_process_that_is_no_notebook_never_imports_ipython():
    """A job's progress asks whether it runs in a Jupyter kernel; outside one that must not cost IPython's
    import on a script's first job."""
    code = ("import sys, quiver; s = quiver.Session.builder.master('local[1]').getOrCreate(); "
            "s.range(10).count(); print('IPython' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    assert out.stdout.strip().splitlines()[-1] == "False"


def test_a_jupyter_kernel_is_recognised_by_its_shell(monkeypatch):
    shown = types.SimpleNamespace(display=lambda *a, **k: None, HTML=str)
    ipython = types.ModuleType("IPython")
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", shown)
    ipython.get_ipython = lambda: types.SimpleNamespace(kernel=object())
    assert _jupyter_display() == (shown.display, shown.HTML)
    ipython.get_ipython = lambda: types.SimpleNamespace()  # a terminal IPython shell: no kernel
    assert _jupyter_display() is None
