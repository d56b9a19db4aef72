"""Live progress of running jobs: per stage, tasks done of total, rows, bytes, devices and time.

In a terminal it is a rich live display on stderr; in a Jupyter kernel, an HTML table updated in
place under the running cell. Like Spark's console progress bar it appears only for a job that
runs longer than `quiver.ui.progress.delayMs` (500 ms), and it stays quiet when stderr is not a
terminal (logs, pipes, CI) or when `quiver.ui.progress` is false.
"""
from __future__ import annotations

import html
import sys
import threading
import time
from typing import Any

from rich.console import Console, Group
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from quiver.engine.execution.scheduler import JobListener, JobMetrics, StageMetrics, TaskMetrics
from quiver.engine.ui.device_colours import DEVICE_COLOURS, device_kind


def format_bytes(n: float) -> str:
    """A byte count as people read it: 512 B, 3.2 KiB, 1.5 GiB."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:,.1f} TiB"


def format_rows(n: int) -> str:
    """A row count in short form: 950, 12.3K, 4.1M, 2.0B."""
    for limit, unit in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if n >= limit:
            return f"{n / limit:.1f}{unit}"
    return str(n)


def _stage_seconds(stage: StageMetrics) -> float:
    return stage.seconds if stage.seconds else max(0.0, time.time() - stage.started)


def _devices(stage: StageMetrics) -> str:
    return ", ".join(stage.devices)


class TerminalProgress:
    """A rich live display of a job's stages on a terminal, drawn after the job has run `delay` seconds."""

    def __init__(self, console: Console, delay: float):
        self.console = console
        self.delay = delay
        self._job: JobMetrics | None = None
        self._live: Any = None
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()

    def start(self, job: JobMetrics) -> None:
        self._job = job
        self._timer = threading.Timer(self.delay, self._show)
        self._timer.daemon = True
        self._timer.start()

    def _show(self) -> None:
        from rich.live import Live

        with self._lock:
            if self._job is None or self._live is not None:
                return
            self._live = Live(console=self.console, refresh_per_second=4, transient=True,
                              redirect_stdout=False, redirect_stderr=False, get_renderable=self.render)
            self._live.start()

    def update(self) -> None:
        """Tasks are drawn by the live display's own refresh; nothing to do per event."""

    def finish(self, job: JobMetrics) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            shown, self._live = self._live, None
            self._job = None
        if shown is not None:
            shown.stop()
            self.console.print(summary_line(job), highlight=False)

    def render(self) -> Any:
        """The job's stages as a table: one row per stage with its bar, counts, devices and time."""
        job = self._job
        if job is None:
            return Text("")
        grid = Table.grid(padding=(0, 1))
        for _ in range(8):
            grid.add_column()
        for stage in list(job.stages):
            kind = device_kind(stage.devices[-1])
            bar = ProgressBar(total=max(stage.tasks, 1), completed=stage.tasks_done, width=28,
                              complete_style=DEVICE_COLOURS[kind], finished_style=DEVICE_COLOURS[kind])
            grid.add_row(Text(f"Stage {stage.stage_id}", style="bold"), bar,
                         Text(f"{stage.tasks_done}/{stage.tasks} tasks"), Text(f"{format_rows(stage.rows)} rows"),
                         Text(format_bytes(stage.bytes)), Text(_devices(stage), style=DEVICE_COLOURS[kind]),
                         Text(f"{_stage_seconds(stage):.1f} s"),
                         Text(f"{format_bytes(stage.spilled_bytes)} spilled" if stage.spilled_bytes else "",
                              style="yellow"))
        elapsed = time.time() - job.started
        return Group(Text(f"Job {job.job_id} · {elapsed:.1f} s", style="dim"), grid)


class NotebookProgress:
    """An HTML table of a job's stages under the running Jupyter cell, updated in place as tasks end."""

    min_interval = 0.25

    def __init__(self, display: Any, html_type: Any, delay: float):
        self._display = display
        self._html = html_type
        self.delay = delay
        self._job: JobMetrics | None = None
        self._handle: Any = None
        self._last = 0.0

    def start(self, job: JobMetrics) -> None:
        self._job, self._handle, self._last = job, None, 0.0

    def update(self, force: bool = False) -> None:
        job = self._job
        if job is None:
            return
        now = time.time()
        if not force and (now - job.started < self.delay or now - self._last < self.min_interval):
            return
        self._last = now
        content = self._html(progress_html(job))
        if self._handle is None:
            self._handle = self._display(content, display_id=True)
        else:
            self._handle.update(content)

    def finish(self, job: JobMetrics) -> None:
        if self._handle is not None:
            self.update(force=True)
        self._job = None


def progress_html(job: JobMetrics) -> str:
    """The job's stages as an HTML table with a bar per stage, coloured by the stage's device."""
    rows = []
    for stage in list(job.stages):
        colour = DEVICE_COLOURS[device_kind(stage.devices[-1])]
        pct = 100.0 * stage.tasks_done / max(stage.tasks, 1)
        bar = (f'<div style="width:160px;background:#eee;height:10px"><div style="width:{pct:.0f}%;'
               f'background:{colour};height:10px"></div></div>')
        rows.append(f"<tr><td>Stage {stage.stage_id}</td><td>{bar}</td><td>{stage.tasks_done}/{stage.tasks}</td>"
                    f"<td>{format_rows(stage.rows)}</td><td>{format_bytes(stage.bytes)}</td>"
                    f"<td>{html.escape(_devices(stage))}</td><td>{_stage_seconds(stage):.1f} s</td>"
                    f"<td>{format_bytes(stage.spilled_bytes) if stage.spilled_bytes else '—'}</td></tr>")
    state = "failed" if job.error else ("done" if job.seconds else "running")
    head = ("<tr><th>stage</th><th>progress</th><th>tasks</th><th>rows</th><th>bytes</th><th>devices</th>"
            "<th>time</th><th>spilled</th></tr>")
    elapsed = job.seconds or time.time() - job.started
    return (f'<div class="quiver-progress"><b>Job {job.job_id}</b> · {state} · {elapsed:.1f} s'
            f'<table style="font-size:12px">{head}{"".join(rows)}</table></div>')


def summary_line(job: JobMetrics) -> str:
    """One line a finished job leaves on the terminal: its stages, tasks, time and bytes shuffled."""
    attempts = len(job.tasks)
    failed = sum(1 for t in job.tasks if t.error)
    state = f"failed ({job.error})" if job.error else "done"
    retried = f", {failed} failed attempt(s)" if failed else ""
    spilled = f", {format_bytes(job.spilled_bytes)} spilled" if job.spilled_bytes else ""
    return (f"Job {job.job_id} {state} in {job.seconds:.1f} s: {len(job.stages)} stages, {attempts} tasks{retried}, "
            f"{format_bytes(job.bytes_shuffled)} shuffled{spilled}")


def _jupyter_display() -> tuple[Any, Any] | None:
    """IPython's display function and HTML type when running in a Jupyter kernel, else None. A kernel has
    imported IPython before any user code runs; a process that has not is no kernel, and is spared the
    import's time and memory."""
    if "IPython" not in sys.modules:
        return None
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    if shell is None or not hasattr(shell, "kernel"):
        return None
    from IPython.display import HTML, display

    return display, HTML


class ProgressListener(JobListener):
    """Chooses, as each job starts, where its progress goes (terminal, notebook or nowhere) from the conf."""

    def __init__(self, conf: Any, console: Console | None = None):
        self.conf = conf
        self._console = console
        self._view: Any = None
        # Jobs started and not yet ended: a job run from inside another (a cache filled mid-job) adds to the
        # outer one's display.
        self._depth = 0

    def _choose(self) -> Any:
        if str(self.conf.get("quiver.ui.progress")).strip().lower() == "false":
            return None
        delay = max(0.0, float(self.conf.get("quiver.ui.progress.delayMs"))) / 1000.0
        notebook = _jupyter_display()
        if notebook is not None:
            return NotebookProgress(*notebook, delay)
        console = self._console or Console(stderr=True)
        return TerminalProgress(console, delay) if console.is_terminal else None

    def on_job_start(self, job: JobMetrics) -> None:
        self._depth += 1
        if self._depth > 1:
            return
        self._view = self._choose()
        if self._view is not None:
            self._view.start(job)

    def on_stage_start(self, job: JobMetrics, stage: StageMetrics) -> None:
        if self._view is not None:
            self._view.update()

    def on_task_end(self, job: JobMetrics, stage: StageMetrics, task: TaskMetrics) -> None:
        if self._view is not None:
            self._view.update()

    def on_job_end(self, job: JobMetrics) -> None:
        self._depth = max(0, self._depth - 1)
        if self._depth:
            return
        view, self._view = self._view, None
        if view is not None:
            view.finish(job)


__all__ = ["NotebookProgress", "ProgressListener", "TerminalProgress", "format_bytes", "progress_html",
           "summary_line"]
