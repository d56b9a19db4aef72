"""A job's timeline as one self-contained HTML page: one lane per worker, each task attempt a bar coloured by device.

`spark.lastJob().report("job.html")` writes it. The page has no scripts and loads nothing: the
timeline is inline SVG (hover a bar for the task's stage, partition, attempt, device, time, rows
and bytes), followed by a table of stages and one of every task attempt, so it opens the same in
any browser, attached to a ticket or a notebook, long after the session is gone.
"""
from __future__ import annotations

import html
import math
import re
import time
from pathlib import Path

from quiver.engine.execution.scheduler import JobMetrics, TaskMetrics
from quiver.engine.ui.device_colours import DEVICE_COLOURS, FAILED_COLOUR, task_kind
from quiver.engine.ui.progress import format_bytes, format_rows

LANE_HEIGHT = 22
LANE_GAP = 4
LABEL_WIDTH = 190
PLOT_WIDTH = 1000
AXIS_HEIGHT = 28

_STYLE = """
body { font: 13px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #222; }
h1 { font-size: 20px; margin: 0 0 4px; }
.summary { color: #555; margin-bottom: 16px; }
svg text { font: 11px system-ui, sans-serif; }
rect.task:hover { stroke: #000; stroke-width: 1.5; }
table { border-collapse: collapse; margin: 8px 0 20px; }
th, td { border-bottom: 1px solid #ddd; padding: 3px 10px; text-align: right; white-space: nowrap; }
th { background: #f4f4f4; }
td.text, th.text { text-align: left; }
details summary { cursor: pointer; font-weight: 600; margin: 8px 0; }
"""


class ReportedJob(JobMetrics):
    """A job's metrics that can draw themselves: what `spark.lastJob()` returns."""

    def report(self, path: str | Path) -> str:
        """Write a self-contained HTML timeline of this job (one lane per worker) to `path`; returns the path.

        >>> spark.range(10).count(); spark.lastJob().report("job.html")  # doctest: +SKIP
        """
        return write_job_report(self, path)

    def _repr_html_(self) -> str:
        """In a notebook, `spark.lastJob()` shows its summary, timeline and stages."""
        return job_summary_html(self)


def write_job_report(job: JobMetrics, path: str | Path) -> str:
    """Write `job`'s HTML report to `path` (parent folders made as needed); returns the path written."""
    target = Path(path)
    if target.suffix.lower() not in (".html", ".htm"):
        raise ValueError(f"a job report is an HTML page: give a path ending in .html, got {str(path)!r}")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(job_report_html(job), encoding="utf-8")
    return str(target)


def job_report_html(job: JobMetrics) -> str:
    """The report page: a summary, the timeline, the stage table and the task table."""
    title = f"Quiver job {job.job_id}"
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
            f"<style>{_STYLE}</style></head><body>\n<h1>{title}</h1>\n"
            f'<div class="summary">{html.escape(_summary(job))}</div>\n'
            f"{_legend(job)}\n{timeline_svg(job)}\n<h2>Stages</h2>\n{_stage_table(job)}\n{_adaptive(job)}"
            f"<details><summary>Task attempts ({len(job.tasks)})</summary>\n{_task_table(job)}</details>\n"
            "</body></html>\n")


def job_summary_html(job: JobMetrics) -> str:
    """The report's summary, timeline and stage table as one block for a notebook cell (no page styles)."""
    return (f'<div class="quiver-job"><b>Quiver job {job.job_id}</b>: {html.escape(_summary(job))}{_legend(job)}'
            f"{timeline_svg(job)}{_stage_table(job)}{_adaptive(job)}</div>")


def _adaptive(job: JobMetrics) -> str:
    """What adaptive execution changed in the job, and its stages as they ran; nothing when it changed nothing."""
    if not job.adaptive:
        return ""
    items = "".join(f"<li>{html.escape(line)}</li>" for line in job.adaptive)
    return (f'<h2>Adaptive execution</h2>\n<ul class="adaptive">{items}</ul>\n'
            f"<details><summary>Stages as they ran</summary><pre>{html.escape(job.final_stages)}</pre></details>\n")


def _summary(job: JobMetrics) -> str:
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(job.started)) if job.started else "?"
    state = f"failed: {job.error}" if job.error else "succeeded"
    failed = sum(1 for t in job.tasks if t.error)
    store = job.object_store
    spilled = f", {format_bytes(store['spilled_bytes'])} of blocks spilled" if store.get("spilled_bytes") else ""
    if job.spilled_bytes:
        spilled += f", {format_bytes(job.spilled_bytes)} of operator state spilled"
    adaptive = f" · {len(job.adaptive)} adaptive change{'s' if len(job.adaptive) != 1 else ''}" if job.adaptive \
        else ""
    return (f"{state} · started {started} · {job.seconds:.2f} s on {job.runtime or 'a runtime'} · "
            f"{len(job.stages)} stages, {len(job.tasks)} task attempts ({failed} failed) on {len(_lanes(job))} "
            f"workers · {format_bytes(job.bytes_shuffled)} shuffled{spilled}{adaptive}")


def _legend(job: JobMetrics) -> str:
    kinds = sorted({task_kind(t.devices) for t in job.tasks} or {"cpu"}, key=list(DEVICE_COLOURS).index)
    items = [_legend_item(f"background:{DEVICE_COLOURS[k]}", k.upper()) for k in kinds]
    if any(t.error for t in job.tasks):
        items.append(_legend_item(f"background:#fff;border:2px solid {FAILED_COLOUR}", "failed attempt"))
    return f'<div class="legend" style="margin:6px 0">{"".join(items)}</div>'


def _legend_item(swatch: str, label: str) -> str:
    return (f'<span style="display:inline-block;margin-right:16px"><i style="display:inline-block;width:12px;'
            f'height:12px;margin-right:4px;vertical-align:-1px;{swatch}"></i>{label}</span>')


def _natural(text: str) -> list:
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text)]


def _lanes(job: JobMetrics) -> list[str]:
    """The workers that ran the job's tasks, in natural order (driver first)."""
    workers = {t.worker for t in job.tasks}
    return sorted(workers, key=lambda w: (w != "driver", _natural(w)))


def _tick_step(span: float) -> float:
    """A round step (1, 2 or 5 times a power of ten) giving 5 to 10 ticks over `span` seconds."""
    raw = max(span, 1e-6) / 8
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def timeline_svg(job: JobMetrics) -> str:
    """The timeline: a lane per worker, a bar per task attempt from its start to its end."""
    lanes = _lanes(job)
    lane_of = {w: i for i, w in enumerate(lanes)}
    origin = job.started or min((t.started for t in job.tasks), default=0.0)
    span = max([job.seconds] + [t.finished - origin for t in job.tasks]) or 1e-3
    scale = PLOT_WIDTH / span
    height = AXIS_HEIGHT + len(lanes) * (LANE_HEIGHT + LANE_GAP) + 8
    width = LABEL_WIDTH + PLOT_WIDTH + 20
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="task timeline">']
    step = _tick_step(span)
    for k in range(int(span / step) + 1):
        x = LABEL_WIDTH + k * step * scale
        parts.append(f'<line x1="{x:.1f}" y1="{AXIS_HEIGHT - 6}" x2="{x:.1f}" y2="{height - 8}" stroke="#e4e4e4"/>'
                     f'<text x="{x:.1f}" y="{AXIS_HEIGHT - 10}" text-anchor="middle" fill="#666">'
                     f"{_seconds_label(k * step, step)}</text>")
    for worker, i in lane_of.items():
        y = AXIS_HEIGHT + i * (LANE_HEIGHT + LANE_GAP)
        parts.append(f'<text class="lane" x="{LABEL_WIDTH - 8}" y="{y + LANE_HEIGHT / 2 + 4:.1f}" text-anchor="end">'
                     f"{html.escape(worker)}</text>"
                     f'<rect x="{LABEL_WIDTH}" y="{y}" width="{PLOT_WIDTH}" height="{LANE_HEIGHT}" fill="#f7f7f7"/>')
    for task in job.tasks:
        parts.append(_task_bar(task, origin, scale, AXIS_HEIGHT + lane_of[task.worker] * (LANE_HEIGHT + LANE_GAP)))
    parts.append("</svg>")
    return "".join(parts)


def _seconds_label(value: float, step: float) -> str:
    digits = max(0, -math.floor(math.log10(step))) if step < 1 else 0
    return f"{value:.{digits}f} s"


def _task_bar(task: TaskMetrics, origin: float, scale: float, y: float) -> str:
    kind = task_kind(task.devices)
    x = LABEL_WIDTH + max(0.0, task.started - origin) * scale
    w = max(1.5, task.seconds * scale)
    fill = DEVICE_COLOURS[kind]
    stroke = f' stroke="{FAILED_COLOUR}" stroke-width="2"' if task.error else ' stroke="#fff" stroke-width="0.5"'
    tip = (f"stage {task.stage_id}, task {task.partition}, attempt {task.attempt + 1} on {', '.join(task.devices)} "
           f"({task.worker}): {task.seconds:.3f} s, {task.rows:,} rows, {format_bytes(task.bytes)}"
           + (f" — failed: {task.error}" if task.error else ""))
    label = f"{task.stage_id}.{task.partition}"
    text = (f'<text x="{x + 3:.1f}" y="{y + LANE_HEIGHT / 2 + 4:.1f}" fill="#fff" pointer-events="none">{label}</text>'
            if w > 7 * len(label) + 6 else "")
    return (f'<g><rect class="task" data-stage="{task.stage_id}" data-partition="{task.partition}" '
            f'data-attempt="{task.attempt}" data-device="{kind}" x="{x:.1f}" y="{y + 1}" width="{w:.1f}" '
            f'height="{LANE_HEIGHT - 2}" rx="2" '
            f'fill="{fill}"{stroke}><title>{html.escape(tip)}</title></rect>{text}</g>')


def _stage_table(job: JobMetrics) -> str:
    head = ("<tr><th>stage</th><th class='text'>kind</th><th>tasks</th><th>attempts</th><th class='text'>devices</th>"
            "<th>rows out</th><th>bytes out</th><th>shuffle written</th><th>time</th><th>fallbacks</th>"
            "<th>recomputed</th><th>spilled</th><th class='text'>root operator</th></tr>")
    rows = [f"<tr><td>{s.stage_id}</td><td class='text'>{s.kind}</td><td>{s.tasks}</td><td>{s.attempts}</td>"
            f"<td class='text'>{html.escape(', '.join(s.devices))}</td><td>{format_rows(s.rows)}</td>"
            f"<td>{format_bytes(s.bytes)}</td><td>{format_bytes(s.bytes_written) if s.kind == 'map' else '—'}</td>"
            f"<td>{s.seconds:.3f} s</td><td>{s.fallbacks}</td><td>{s.recomputed}</td>"
            f"<td title='{html.escape(_spills_text(s.spills))}'>{_spilled_cell(s.spills)}</td>"
            f"<td class='text'>{html.escape(s.description)}</td></tr>" for s in job.stages]
    return f"<table>{head}{''.join(rows)}</table>"


def _spilled_cell(spills: dict[str, tuple[int, int]]) -> str:
    total = sum(b for _, b in spills.values())
    return format_bytes(total) if total else "—"


def _spills_text(spills: dict[str, tuple[int, int]]) -> str:
    """Per operator: how often it spilled and how many bytes."""
    return "; ".join(f"{op}: {n} spill(s), {format_bytes(b)}" for op, (n, b) in sorted(spills.items()))


def _task_table(job: JobMetrics) -> str:
    origin = job.started
    head = ("<tr><th>stage</th><th>task</th><th>attempt</th><th class='text'>worker</th><th class='text'>devices</th>"
            "<th>start</th><th>time</th><th>rows</th><th>bytes</th><th class='text'>error</th></tr>")
    rows = [f"<tr><td>{t.stage_id}</td><td>{t.partition}</td><td>{t.attempt + 1}</td>"
            f"<td class='text'>{html.escape(t.worker)}</td><td class='text'>{html.escape(', '.join(t.devices))}</td>"
            f"<td>+{t.started - origin:.3f} s</td><td>{t.seconds:.3f} s</td><td>{t.rows:,}</td>"
            f"<td>{format_bytes(t.bytes)}</td><td class='text'>{html.escape(t.error or '')}</td></tr>"
            for t in job.tasks]
    return f"<table>{head}{''.join(rows)}</table>"


__all__ = ["job_report_html", "job_summary_html", "timeline_svg", "write_job_report"]
