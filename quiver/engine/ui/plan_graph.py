"""The stage DAG as a picture: `explain(mode="graph")` draws each operator coloured by its device.

One cluster per stage (its id, task count and how its output is cut), the stage's physical
operators inside with edges from child to parent, and one edge per exchange from the stage that
writes it to each operator that reads it, labelled with its kind (shuffle, broadcast, range).
Devices come from the session's placer, exactly as `explain()`'s placement section shows them.
"""
from __future__ import annotations

import os
import re
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import graphviz

from quiver.engine.core.errors import QuiverError
from quiver.engine.execution.query_execution import QueryExecution
from quiver.engine.ui.device_colours import DEVICE_COLOURS
from quiver.executors.base import Device
from quiver.planners.physical import nodes as P

# The placement section's own number formats, so the picture and explain()'s text agree.
from quiver.planners.placement import (
    OperatorPlacement,
    StagePlacement,
    bytes_text,
    cost_text,
    count_text,
    seconds_text,
)
from quiver.planners.stages import Stage

GRAPH_DIR_KEY = "quiver.ui.graphDir"
PNG_PREFIX = "quiver-plan-"

_LINE_WIDTH = 44
_MAX_LINES = 3
_EXPR_ID = re.compile(r"#\d+")


class GraphvizNotInstalled(QuiverError):
    """Drawing the plan needs Graphviz's `dot` program, which is not on PATH."""


@dataclass(frozen=True)
class _Placed:
    """One operator of a stage with its graph node id and where the placer put it."""

    node: P.PhysicalPlan
    node_id: str
    placement: OperatorPlacement


def plan_graph(qe: QueryExecution) -> graphviz.Digraph:
    """The stage DAG of `qe`, each operator filled with its device's colour (`df.explain(mode="graph")` draws it
    for a query planned with `describe_only=True`, so a cache not yet filled stays unfilled).

    Needs no `dot` executable: `.source` is the DOT text; rendering it is what needs Graphviz.
    """
    if not isinstance(qe, QueryExecution):
        raise TypeError(f"plan_graph takes a QueryExecution, got {type(qe).__name__}")
    try:
        return _draw(qe)
    finally:
        qe.release()


def _draw(qe: QueryExecution) -> graphviz.Digraph:
    candidates = qe.context.placement_candidates()
    mode = str(qe.context.conf.get("quiver.placement"))
    graph = graphviz.Digraph("quiver_plan", graph_attr={
        "rankdir": "TB", "fontname": "Helvetica", "fontsize": "12", "labelloc": "t", "newrank": "true",
        "label": graphviz.escape(f"Quiver plan (placement: {mode}; devices: {', '.join(c.label for c in candidates)})"),
    }, node_attr={"shape": "box", "style": "rounded,filled", "fontname": "Helvetica", "fontsize": "10"},
        edge_attr={"fontname": "Helvetica", "fontsize": "9", "color": "#555555"})
    placed_by_stage = {}
    for stage in qe.stages.stages:
        placement = qe.context.place(stage.id, stage.root)
        placed_by_stage[stage.id] = list(_placed_operators(stage, placement))
        _draw_stage(graph, stage, placement, placed_by_stage[stage.id])
    _draw_exchanges(graph, qe.stages.stages, placed_by_stage)
    _draw_legend(graph, [c.device for c in candidates])
    return graph


def explain_graph(qe: QueryExecution, path: str | os.PathLike | None = None) -> Path:
    """Write the plan picture as a PNG (to `path`, or a new numbered file in `quiver.ui.graphDir`),
    print where, and show it as SVG when running in a notebook; returns the PNG's path."""
    graph = plan_graph(qe)
    target = write_png(graph, qe.context.conf.get(GRAPH_DIR_KEY), path)
    print(f"plan graph written to {target}")
    show_inline(graph)
    return target


def render(graph: graphviz.Digraph, fmt: str) -> bytes:
    """The picture in `fmt` (png, svg, ...), drawn by Graphviz's `dot`."""
    try:
        return graph.pipe(format=fmt)
    except graphviz.ExecutableNotFound as exc:
        raise GraphvizNotInstalled(
            "drawing the plan needs Graphviz's `dot` program, which is not on PATH; install Graphviz "
            "(apt-get install graphviz, brew install graphviz or conda install graphviz). "
            "Without it, quiver.engine.ui.plan_graph.plan_graph(query_execution).source still gives the DOT text."
        ) from exc


def write_png(graph: graphviz.Digraph, directory: str | os.PathLike = ".",
              path: str | os.PathLike | None = None) -> Path:
    """Render `graph` to `path`, or to `quiver-plan-<N>.png` in `directory` with N one past the highest there."""
    data = render(graph, "png")
    if path is not None:
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        return target
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    n = _highest_png_number(folder) + 1
    while True:
        target = folder / f"{PNG_PREFIX}{n}.png"
        try:
            # exclusive creation: two explains at once never write the same file
            with open(target, "xb") as out:
                out.write(data)
            return target
        except FileExistsError:
            n += 1


def _highest_png_number(folder: Path) -> int:
    """The largest N of the quiver-plan-<N>.png files in `folder`, 0 if none."""
    numbers = [int(m.group(1)) for f in folder.glob(f"{PNG_PREFIX}*.png")
               if (m := re.fullmatch(rf"{PNG_PREFIX}(\d+)\.png", f.name))]
    return max(numbers, default=0)


def show_inline(graph: graphviz.Digraph) -> bool:
    """Display the picture as SVG when an IPython kernel that shows SVG (Jupyter) runs us; True if shown."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    if shell is None or not _shows_svg(shell):
        return False
    from IPython.display import SVG, display

    display(SVG(data=render(graph, "svg").decode("utf-8")))
    return True


def _shows_svg(shell: Any) -> bool:
    """A Jupyter kernel's shell (it has a kernel; a terminal IPython, which cannot draw SVG, has not)."""
    return type(shell).__name__ == "ZMQInteractiveShell" or getattr(shell, "kernel", None) is not None


def _placed_operators(stage: Stage, placement: StagePlacement) -> Iterator[_Placed]:
    """Each distinct operator node of the stage (a node held twice is drawn once) with its placement."""
    by_path = {op.path: op for op in placement.operators}
    seen: set[int] = set()

    def walk(node: P.PhysicalPlan, path: tuple[int, ...]) -> Iterator[_Placed]:
        if id(node) in seen:
            return
        seen.add(id(node))
        yield _Placed(node, f"s{stage.id}" + "".join(f"_{i}" for i in path), by_path[path])
        for i, child in enumerate(node.children()):
            yield from walk(child, path + (i,))

    yield from walk(stage.root, ())


def _draw_stage(graph: graphviz.Digraph, stage: Stage, placement: StagePlacement, placed: list[_Placed]) -> None:
    """One cluster holding the stage's operators, with an edge from each child to its parent."""
    ids = {id(p.node): p.node_id for p in placed}
    kind = "result" if stage.output is None else f"map → {_shorten(stage.output.describe(), 1)}"
    label = f"Stage {stage.id} · {stage.num_partitions} tasks · est. {seconds_text(placement.seconds)}\n{kind}"
    with graph.subgraph(name=f"cluster_stage_{stage.id}") as cluster:
        cluster.attr(label=_escaped(label, "\\l"), style="rounded", color="#333333",
                     penwidth="2" if stage.output is None else "1", labeljust="l",
                     tooltip=_escaped(stage.describe()))
        for p in placed:
            cluster.node(p.node_id, **_operator_attrs(p))
        for p in placed:
            for child in p.node.children():
                cluster.edge(ids[id(child)], p.node_id)


def _operator_attrs(p: _Placed) -> dict[str, str]:
    """Label, fill colour, border and tooltip of one operator's node."""
    device = p.placement.device
    size = _size_text(p.node)
    lines = [*_wrapped(_EXPR_ID.sub("", p.node.node_string())), f"on {device}" + (f" · {size}" if size else "")]
    attrs = {
        "label": _escaped("\n".join(lines)),
        "fillcolor": DEVICE_COLOURS[device.kind],
        "fontcolor": _text_colour(DEVICE_COLOURS[device.kind]),
        "tooltip": _escaped(_tooltip(p)),
    }
    if device.emulated:
        attrs.update(style="rounded,filled,dashed", penwidth="2")
    return attrs


def _tooltip(p: _Placed) -> str:
    """The full operator line, its estimated output, and the placer's cost on every candidate."""
    op = p.placement
    lines = [p.node.node_string(), f"estimated output: {_size_text(p.node) or 'size unknown'}",
             f"placed on {op.device}" + (f" ({op.note})" if op.note else "")]
    lines += [f"  {cost_text(c)}" for c in op.costs]
    return "\n".join(lines)


def _draw_exchanges(graph: graphviz.Digraph, stages: tuple[Stage, ...], placed: dict[int, list[_Placed]]) -> None:
    """An edge from each map stage's root to every operator of a later stage that reads its output."""
    roots = {s.id: placed[s.id][0].node_id for s in stages}
    outputs = {s.id: s.output for s in stages}
    for stage in stages:
        for p in placed[stage.id]:
            if isinstance(p.node, P.ShuffleReadExec):
                kind, detail = _exchange_kind(outputs[p.node.stage_id])
                # left-justified and indented, so the label's text stands clear of the edge it labels
                graph.edge(roots[p.node.stage_id], p.node_id, label=_escaped(f"  {kind}\n  {detail}", "\\l"),
                           penwidth="2.5", color="#000000", style="dashed" if kind == "broadcast" else "solid",
                           tooltip=_escaped(f"{kind}: stage {p.node.stage_id} → stage {stage.id}"))


def _exchange_kind(partitioning: Any) -> tuple[str, str]:
    """(kind, what it partitions by) of the exchange a map stage writes."""
    if isinstance(partitioning, P.BroadcastPartitioning):
        return "broadcast", "to every task"
    if isinstance(partitioning, P.RangePartitioning):
        orders = ", ".join(_EXPR_ID.sub("", o.sql()) for o in partitioning.orders)
        return "range", _shorten(f"{orders} → {partitioning.num_partitions}", 1)
    if isinstance(partitioning, P.HashPartitioning):
        keys = ", ".join(_EXPR_ID.sub("", k.sql()) for k in partitioning.keys)
        return "shuffle", _shorten(f"hash({keys}) → {partitioning.num_partitions}", 1)
    if isinstance(partitioning, P.RoundRobinPartitioning):
        return "round-robin", f"→ {partitioning.num_partitions}"
    return "gather", "→ 1"


def _draw_legend(graph: graphviz.Digraph, devices: list[Device]) -> None:
    """A box per candidate device in its colour and border, so a reader can tell them apart."""
    with graph.subgraph(name="cluster_legend") as legend:
        legend.attr(label="devices", style="rounded", color="#999999", labeljust="l", rank="same")
        for i, device in enumerate(devices):
            attrs = {"fillcolor": DEVICE_COLOURS[device.kind], "fontcolor": _text_colour(DEVICE_COLOURS[device.kind])}
            if device.emulated:
                attrs.update(style="rounded,filled,dashed", penwidth="2")
            legend.node(f"legend_{i}", label=_escaped(str(device)), **attrs)
            if i:
                # an invisible edge keeps the boxes left to right in the order quiver.devices lists them
                legend.edge(f"legend_{i - 1}", f"legend_{i}", style="invis")


def _text_colour(fill: str) -> str:
    """Black or white, whichever contrasts more with the `#rrggbb` fill (WCAG relative luminance)."""
    channels = [int(fill[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    luminance = 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    return "black" if (luminance + 0.05) / 0.05 >= 1.05 / (luminance + 0.05) else "white"


def _size_text(node: P.PhysicalPlan) -> str:
    size = P.estimated_size(node)
    return f"≈{count_text(size[0])} rows, {bytes_text(size[1])}" if size is not None else ""


def _wrapped(text: str) -> list[str]:
    lines = textwrap.wrap(text, _LINE_WIDTH, break_on_hyphens=False) or [""]
    if len(lines) > _MAX_LINES:
        lines = lines[:_MAX_LINES]
        lines[-1] = lines[-1][:_LINE_WIDTH - 1] + "…"
    return lines


def _shorten(text: str, max_lines: int) -> str:
    text = _EXPR_ID.sub("", text)
    return text if len(text) <= _LINE_WIDTH * max_lines else text[:_LINE_WIDTH * max_lines - 1] + "…"


def _escaped(text: str, line_end: str = "\\n") -> str:
    """`text` as a Graphviz label with backslashes taken literally; `line_end` "\\n" centres each
    line, "\\l" left-justifies it (and must end the last line too)."""
    body = line_end.join(t.replace("\\", "\\\\") for t in text.split("\n"))
    return graphviz.nohtml(body + "\\l" if line_end == "\\l" else body)


__all__ = [
    "GRAPH_DIR_KEY",
    "GraphvizNotInstalled",
    "explain_graph",
    "plan_graph",
    "render",
    "show_inline",
    "write_png",
]
