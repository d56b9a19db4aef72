"""Live progress of running jobs, as Spark's console progress bar and rich draw it: per stage, tasks done and
running of total (`( 2 +  2) / 16`), the percentage, rows and rows per second, bytes, an ETA from the finished
tasks, devices and time; the action that started the job (collect, count, write.parquet) in the header.

In a terminal it is a rich live display on stderr; in a Jupyter kernel, an HTML table updated in
place under the running cell. It moves as tasks start and end (the scheduler's `on_task_start` and
`on_task_end`). Like Spark's console progress bar it appears only for a job that runs longer than
`quiver.ui.progress.delayMs` (500 ms), and it stays quiet when stderr is not a terminal (logs, pipes,
CI) or when `quiver.ui.progress` is false. Every number is padded to a fixed width (counts to the
width of the largest stage's task count), so the columns stay put as the numbers grow.
"""
from __future__ import annotations

import html
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import astuple, dataclass
from typing import Any

from rich.console import Console, Group
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from quiver.engine.execution.scheduler import JobListener, JobMetrics, StageMetrics, TaskMetrics
from quiver.engine.ui.device_colours import DEVICE_COLOURS, device_kind

# The widths of format_rows's and format_bytes's longest answers ("999.9K", "1,023.9 KiB").
_ROWS_WIDTH = 6
_BYTES_WIDTH = 11


def format_bytes(n: float) -> str:
    """A byte count as people read it: 512 B, 3.2 KiB, 1.5 GiB."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:,.1f} TiB"


def format_rows(n: float) -> str:
    """A row count in short form: 950, 12.3K, 4.1M, 2.0B."""
    for limit, unit in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if n >= limit:
            return f"{n / limit:.1f}{unit}"
    return str(int(n))


def format_duration(seconds: float) -> str:
    """Seconds as rich's time columns show them, h:mm:ss (0:00:07, 1:02:03): one width below 10 hours."""
    whole = max(0, int(round(seconds)))
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


@dataclass(frozen=True)
class StageCells:
    """One stage's progress as fixed-width text cells, shared by the terminal and the notebook views."""

    tasks: str      # done + running / total, as Spark: "( 2 +  2) / 16"
    percent: str    # of the tasks done: " 12%"
    rows: str       # rows the finished tasks produced: " 12.3K rows"
    rate: str       # those rows per second of the stage's time: "  4.1K rows/s"
    bytes: str
    eta: str        # from the finished tasks' pace: "eta 0:00:07", "eta -:--:--" before any, "done" after all
    elapsed: str    # "   2.1 s"
    devices: str
    spilled: str    # "" when nothing spilled


def stage_seconds(stage: StageMetrics, now: float) -> float:
    """The stage's time: its whole run once finished, else the time since it started."""
    return stage.seconds if stage.seconds else max(0.0, now - stage.started)


def stage_cells(stage: StageMetrics, now: float, digits: int | None = None) -> StageCells:
    """`stage`'s cells at time `now` (seconds since the epoch), its task counts padded to `digits` (default:
    the width of its task count). The ETA is the stage's time per finished task times the tasks left, as
    rich's ETA reads the rate of completion, so it allows for the tasks running side by side."""
    total, done, running = stage.tasks, stage.tasks_done, stage.tasks_running
    width = max(digits or 0, len(str(total)))
    seconds = stage_seconds(stage, now)
    percent = 100 * done // max(total, 1)
    rate = stage.rows / seconds if seconds > 0 else 0.0
    if done >= total:
        eta = "done"
    elif done == 0:
        eta = "eta -:--:--"
    else:
        eta = "eta " + format_duration(seconds / done * (total - done))
    return StageCells(
        tasks=f"({done:>{width}} + {running:>{width}}) / {total:>{width}}",
        percent=f"{percent:>3}%",
        rows=f"{format_rows(stage.rows):>{_ROWS_WIDTH}} rows",
        rate=f"{format_rows(rate):>{_ROWS_WIDTH}} rows/s",
        bytes=f"{format_bytes(stage.bytes):>{_BYTES_WIDTH}}",
        eta=f"{eta:<11}",
        elapsed=f"{seconds:>6.1f} s",
        devices=", ".join(stage.devices),
        spilled=f"{format_bytes(stage.spilled_bytes)} spilled" if stage.spilled_bytes else "",
    )


def task_digits(stages: Sequence[StageMetrics]) -> int:
    """The width every stage's task counts are padded to: that of the largest task count."""
    return max((len(str(s.tasks)) for s in stages), default=1)


def job_header(job: JobMetrics, now: float, state: str = "") -> str:
    """`Job 3 · collect · 1.2 s`: the job, the action that started it (where one did), `state` (where
    given) and its time so far."""
    elapsed = job.seconds or max(0.0, now - job.started)
    return " · ".join(part for part in (f"Job {job.job_id}", job.action, state, f"{elapsed:.1f} s") if part)


def stage_line(stage: StageMetrics, now: float, digits: int | None = None, id_width: int = 1) -> str:
    """One stage as a line of text, the bar left out: `Stage 1  (2 + 2) / 8   25%  ...`."""
    cells = [c for c in astuple(stage_cells(stage, now, digits)) if c]
    return f"Stage {stage.stage_id:<{id_width}}  " + "  ".join(cells)


def progress_text(job: JobMetrics, now: float) -> str:
    """The job's header and a line per stage, as the terminal shows them, without the bars."""
    stages = list(job.stages)
    digits, id_width = task_digits(stages), max((len(str(s.stage_id)) for s in stages), default=1)
    return "\n".join([job_header(job, now), *(stage_line(s, now, digits, id_width) for s in stages)])


class TerminalProgress:
    """A rich live display of a job's stages on a terminal, drawn after the job has run `delay` seconds.
    `clock` gives the time the display is drawn at (a test passes a fake one)."""

    min_interval = 0.1

    def __init__(self, console: Console, delay: float, clock: Callable[[], float] = time.time):
        self.console = console
        self.delay = delay
        self.clock = clock
        self._job: JobMetrics | None = None
        self._live: Any = None
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()
        self._drawn = 0.0

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
        """A task started or ended: redraw now rather than at the live display's next refresh (4 a second), at
        most every `min_interval` seconds, so a stage of many short tasks does not redraw per task."""
        live, now = self._live, time.monotonic()
        if live is not None and now - self._drawn >= self.min_interval:
            self._drawn = now
            live.refresh()

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
        """The job's header, then one row per stage: its bar, then `stage_cells`."""
        job = self._job
        if job is None:
            return Text("")
        now = self.clock()
        stages = list(job.stages)
        digits = task_digits(stages)
        id_width = max((len(str(s.stage_id)) for s in stages), default=1)
        grid = Table.grid(padding=(0, 1))
        for _ in range(11):
            grid.add_column(no_wrap=True)
        for stage in stages:
            kind = device_kind(stage.devices[-1])
            bar = ProgressBar(total=max(stage.tasks, 1), completed=stage.tasks_done, width=28,
                              complete_style=DEVICE_COLOURS[kind], finished_style=DEVICE_COLOURS[kind])
            c = stage_cells(stage, now, digits)
            grid.add_row(Text(f"Stage {stage.stage_id:<{id_width}}", style="bold"), bar, Text(c.tasks),
                         Text(c.percent), Text(c.rows), Text(c.rate), Text(c.bytes), Text(c.eta, style="cyan"),
                         Text(c.elapsed), Text(c.devices, style=DEVICE_COLOURS[kind]), Text(c.spilled, style="yellow"))
        return Group(Text(job_header(job, now), style="dim"), grid)


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


def progress_html(job: JobMetrics, now: float | None = None) -> str:
    """The job's stages as an HTML table with a bar per stage, coloured by the stage's device, and the same
    cells as the terminal's (`stage_cells`), at time `now` (default: the clock's)."""
    now = time.time() if now is None else now
    stages = list(job.stages)
    digits = task_digits(stages)
    rows = []
    for stage in stages:
        colour = DEVICE_COLOURS[device_kind(stage.devices[-1])]
        pct = 100.0 * stage.tasks_done / max(stage.tasks, 1)
        bar = (f'<div style="width:160px;background:#eee;height:10px"><div style="width:{pct:.0f}%;'
               f'background:{colour};height:10px"></div></div>')
        c = stage_cells(stage, now, digits)
        cells = [c.tasks, c.percent, c.rows.removesuffix(" rows"), c.rate.removesuffix(" rows/s"), c.bytes, c.eta,
                 c.elapsed, c.devices, c.spilled.removesuffix(" spilled") or "—"]
        rows.append(f"<tr><td>Stage {stage.stage_id}</td><td>{bar}</td>"
                    + "".join(f"<td>{html.escape(cell.strip())}</td>" for cell in cells) + "</tr>")
    state = "failed" if job.error else ("done" if job.seconds else "running")
    head = "".join(f"<th>{h}</th>" for h in ("stage", "progress", "tasks (done + running) / total", "%", "rows",
                                              "rows/s", "bytes", "eta", "time", "devices", "spilled"))
    return (f'<div class="quiver-progress"><b>{html.escape(job_header(job, now, state))}</b>'
            f'<table style="font-size:12px;font-family:monospace"><tr>{head}</tr>{"".join(rows)}</table></div>')


def summary_line(job: JobMetrics) -> str:
    """One line a finished job leaves on the terminal: its stages, tasks, time and bytes shuffled."""
    attempts = len(job.tasks)
    failed = sum(1 for t in job.tasks if t.error)
    state = f"failed ({job.error})" if job.error else "done"
    retried = f", {failed} failed attempt(s)" if failed else ""
    spilled = f", {format_bytes(job.spilled_bytes)} spilled" if job.spilled_bytes else ""
    action = f" ({job.action})" if job.action else ""
    return (f"Job {job.job_id}{action} {state} in {job.seconds:.1f} s: {len(job.stages)} stages, {attempts} tasks"
            f"{retried}, {format_bytes(job.bytes_shuffled)} shuffled{spilled}")


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

    def on_task_start(self, job: JobMetrics, stage: StageMetrics, partition: int) -> None:
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


__all__ = ["NotebookProgress", "ProgressListener", "StageCells", "TerminalProgress", "format_bytes",
           "format_duration", "format_rows", "job_header", "progress_html", "progress_text", "stage_cells",
           "stage_line", "summary_line"]
