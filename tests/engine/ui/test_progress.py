"""Live progress: a rich display on a terminal, updating HTML in Jupyter, quiet otherwise; Spark's task counts,
a percentage, rows per second, an ETA and stable column widths, checked on the rendered text with fake task
events and a fake clock."""
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
from quiver.engine.execution.scheduler import JobMetrics, StageMetrics
from quiver.engine.ui.progress import (
    ProgressListener,
    TerminalProgress,
    _jupyter_display,
    format_bytes,
    format_duration,
    progress_html,
    progress_text,
    stage_cells,
    stage_line,
    summary_line,
)


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
    assert "Stage 0" in text and ") / 4" in text and "cpu:0" in text and "· collect ·" in text
    job = session.lastJob()
    summary = [line for line in text.splitlines() if line.strip().startswith(f"Job {job.job_id} (collect) done in")]
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
    assert f"<b>Job {job.job_id} · collect · done · " in final
    for stage in job.stages:
        assert f"<td>Stage {stage.stage_id}</td>" in final and f"<td>({stage.tasks} + 0) / {stage.tasks}</td>" in final
        assert "<td>100%</td><td>" in final


def test_stage_metrics_count_each_partition_once_with_its_rows(session):
    session.conf.set("quiver.ui.progress", "false")
    df = session.range(0, 1000, numPartitions=4).filter(F.col("id") % 2 == 0).repartition(3)
    assert df.count() == 500
    job = session.lastJob()
    first = job.stages[0]
    assert first.tasks_done == first.tasks == 4 and first.rows == 500
    assert all(s.tasks_done == s.tasks for s in job.stages)
    assert all(s.tasks_running == 0 for s in job.stages)
    assert " · running · " not in progress_html(job) and " · count · done · " in progress_html(job)


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


# ---------------------------------------------------------------- the rendered text, with fake events and clock

T0 = 1_000.0


class Stage:
    """A stage's metrics moved as the scheduler moves them on each task event."""

    def __init__(self, stage_id: int, tasks: int, started: float = T0):
        self.metrics = StageMetrics(stage_id, tasks, started=started)

    def start(self, n: int = 1) -> Stage:
        self.metrics.tasks_running += n
        return self

    def end(self, n: int = 1, rows: int = 0) -> Stage:
        self.metrics.tasks_running -= n
        self.metrics.tasks_done += n
        self.metrics.rows += rows
        return self


def test_tasks_are_counted_as_spark_counts_them_done_plus_running_of_total():
    stage = Stage(0, 8).start(4).end(2)
    stage.start(2)
    cells = stage_cells(stage.metrics, now=T0 + 1)
    assert cells.tasks == "(2 + 4) / 8"
    assert cells.percent == " 25%"


def test_counts_are_padded_to_the_width_of_the_total_so_columns_stay_put():
    stage = Stage(3, 200)
    lines = []
    for step in range(0, 201, 9):
        stage.metrics.tasks_done, stage.metrics.tasks_running = step, min(4, 200 - step)
        stage.metrics.rows = step * 12_345
        lines.append(stage_line(stage.metrics, now=T0 + 1 + step))
    stage.metrics.tasks_done, stage.metrics.tasks_running, stage.metrics.seconds = 200, 0, 250.0
    lines.append(stage_line(stage.metrics, now=T0 + 300))
    assert lines[0].startswith("Stage 3  (  0 +   4) / 200    0%") and "(  9 +   4) / 200    4%" in lines[1]
    assert lines[-1].startswith("Stage 3  (200 +   0) / 200  100%")
    # Every column starts where it started: the text up to each cell's start has one length in every line.
    assert len({len(line) for line in lines}) == 1
    for marker in (") /", "%", " rows ", " rows/s", " s  cpu:0"):
        assert len({line.index(marker) for line in lines}) == 1, marker


def test_stages_of_one_job_share_the_width_of_the_largest_task_count():
    job = JobMetrics(5, started=T0, action="count")
    job.stages += [Stage(0, 8).start(2).end(1).metrics, Stage(1, 1200).start(3).metrics]
    text = progress_text(job, now=T0 + 2)
    header, first, second = text.splitlines()
    assert header == "Job 5 · count · 2.0 s"
    assert "(   1 +    1) /    8" in first and "(   0 +    3) / 1200" in second
    assert first.index(") /") == second.index(") /") and first.index("%") == second.index("%")


def test_rate_is_rows_of_finished_tasks_per_second_of_the_stage():
    stage = Stage(0, 4).start(4).end(1, rows=50_000)
    cells = stage_cells(stage.metrics, now=T0 + 4)
    assert cells.rows == " 50.0K rows" and cells.rate == " 12.5K rows/s"
    assert cells.elapsed == "   4.0 s"


def test_eta_comes_from_the_finished_tasks_pace():
    stage = Stage(0, 10).start(4)
    assert stage_cells(stage.metrics, now=T0 + 3).eta.strip() == "eta -:--:--"  # nothing finished: no estimate
    stage.end(2)
    # 2 of 10 tasks in 5 s: 8 left take 20 s more.
    assert stage_cells(stage.metrics, now=T0 + 5).eta == "eta 0:00:20"
    stage.end(2).start(2)
    assert stage_cells(stage.metrics, now=T0 + 8).eta == "eta 0:00:12"
    stage.start(4).end(6)
    assert stage.metrics.tasks_done == 10 and stage_cells(stage.metrics, now=T0 + 9).eta.strip() == "done"
    assert format_duration(3723) == "1:02:03"


def test_the_terminal_draws_the_action_bar_and_counts_as_a_task_starts(monkeypatch):
    """Through the listener: a task's start alone moves the display (its running count), before any ends."""
    clock = [T0]
    console = Console(record=True, width=150, force_terminal=True, color_system=None)
    listener = ProgressListener(types.SimpleNamespace(get=lambda key: {"quiver.ui.progress": "true",
                                                                       "quiver.ui.progress.delayMs": "3600000"}[key]),
                                console)
    monkeypatch.setattr("quiver.engine.ui.progress._jupyter_display", lambda: None)
    job = JobMetrics(9, started=T0, action="write.parquet")
    listener.on_job_start(job)
    view = listener._view
    assert isinstance(view, TerminalProgress)
    view.clock = lambda: clock[0]
    stage = Stage(0, 16)
    job.stages.append(stage.metrics)
    listener.on_stage_start(job, stage.metrics)

    def drawn() -> str:
        console.print(view.render())
        return console.export_text()

    stage.start()
    listener.on_task_start(job, stage.metrics, 0)
    clock[0] = T0 + 1.5
    first = drawn()
    assert first.splitlines()[0] == "Job 9 · write.parquet · 1.5 s"
    assert "Stage 0" in first and "( 0 +  1) / 16   0%" in first and "eta -:--:--" in first
    stage.start(3).end(2, rows=2_000)
    clock[0] = T0 + 4
    second = drawn()
    assert "( 2 +  2) / 16  12%" in second and "500 rows/s" in second and "eta 0:00:28" in second
    row_of = [line for line in first.splitlines() if line.startswith("Stage 0")][0]
    row_now = [line for line in second.splitlines() if line.startswith("Stage 0")][0]
    assert len(row_of) == len(row_now) and row_of.index(") /") == row_now.index(") /")
    job.seconds = 4.0
    listener.on_job_end(job)


def test_the_summary_line_names_the_action():
    job = JobMetrics(4, started=T0, seconds=1.25, action="toPandas")
    job.stages.append(Stage(0, 2).end(2).metrics)
    assert summary_line(job).startswith("Job 4 (toPandas) done in 1.2 s: 1 stages, 0 tasks")
    job.action = ""
    assert summary_line(job).startswith("Job 4 done in 1.2 s")


def test_progress_html_has_the_same_cells():
    job = JobMetrics(2, started=T0, action="show")
    job.stages.append(Stage(0, 8).start(4).end(2, rows=900).metrics)
    page = progress_html(job, now=T0 + 2)
    assert "<b>Job 2 · show · running · 2.0 s</b>" in page
    assert "<td>(2 + 2) / 8</td><td>25%</td><td>900</td><td>450</td>" in page and "<td>eta 0:00:06</td>" in page


@pytest.mark.parametrize("name, act", [
    ("collect", lambda df, tmp: df.collect()),
    ("count", lambda df, tmp: df.count()),
    ("show", lambda df, tmp: df.show(3)),
    ("toPandas", lambda df, tmp: df.toPandas()),
    ("first", lambda df, tmp: df.first()),
    ("write.parquet", lambda df, tmp: df.write.parquet(str(tmp / "out"))),
    ("write.csv", lambda df, tmp: df.write.format("csv").save(str(tmp / "out"))),
])
def test_each_action_names_its_job(session, tmp_path, name, act):
    session.conf.set("quiver.ui.progress", "false")
    act(session.range(0, 50, numPartitions=2), tmp_path)
    assert session.lastJob().action == name
