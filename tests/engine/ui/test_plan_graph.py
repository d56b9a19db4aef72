"""explain(mode="graph"): the stage DAG drawn with each operator coloured by its device.

The DOT text is read back into nodes and edges, so each check is on what the picture shows: a
cluster per stage, an edge per exchange, and each operator's fill colour against its placement.
"""
from __future__ import annotations

import re
import struct
import sys
import types

import pytest

from quiver import functions as F
from quiver.engine.core.errors import ConfigurationError
from quiver.engine.execution.query_execution import QueryExecution
from quiver.engine.ui.device_colours import DEVICE_COLOURS
from quiver.engine.ui.plan_graph import GraphvizNotInstalled, plan_graph
from quiver.planners.physical.nodes import ShuffleReadExec
from quiver.planners.placement import device_paths

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_STATEMENT = re.compile(r"^\s*(\w+)(?: -> (\w+))?(?: \[(.*)\])?$")
_ATTR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^\s"]+)')


def planned(df) -> QueryExecution:
    """`df`'s query planned as explain() plans it: without running anything."""
    return QueryExecution(df._session._context, df._plan, describe_only=True)


def statements(graph) -> tuple[dict[str, dict[str, str]], list[tuple[str, str, dict[str, str]]]]:
    """({node id: attributes}, [(tail, head, attributes)]) of the graph's DOT text."""
    nodes: dict[str, dict[str, str]] = {}
    edges: list[tuple[str, str, dict[str, str]]] = []
    for line in graph.source.splitlines():
        m = _STATEMENT.match(line)
        if not m or m.group(1) in ("graph", "node", "edge"):
            continue
        attrs = {k: v[1:-1] if v.startswith('"') else v for k, v in _ATTR.findall(m.group(3) or "")}
        if m.group(2):
            edges.append((m.group(1), m.group(2), attrs))
        else:
            nodes[m.group(1)] = attrs
    return nodes, edges


def exchange_kind(edge: dict[str, str]) -> str:
    """The first word of an exchange edge's label: shuffle, broadcast, range, ..."""
    return edge["label"].split()[0].split("\\")[0]


def operators(nodes: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    return {k: v for k, v in nodes.items() if not k.startswith("legend")}


def join_aggregate(spark):
    """A TPC-H-shaped query: lineitem joined to orders, summed per customer, ordered by revenue."""
    orders = spark.range(0, 1000).withColumn("o_custkey", F.col("id") % 50).withColumnRenamed("id", "o_orderkey")
    lineitem = spark.range(0, 5000).withColumn("l_orderkey", F.col("id") % 1000).withColumn("price", F.col("id") * 1.5)
    return (lineitem.join(orders, lineitem.l_orderkey == orders.o_orderkey)
            .groupBy("o_custkey").agg(F.sum("price").alias("rev")).orderBy(F.desc("rev")))


@pytest.fixture
def shuffled_join(spark, conf_override):
    """Broadcast joins off, so the join shuffles both sides."""
    with conf_override({"spark.sql.autoBroadcastJoinThreshold": "-1", "spark.sql.shuffle.partitions": "4"}):
        yield


def test_each_stage_is_a_cluster_and_each_exchange_an_edge_between_stages(spark, shuffled_join):
    df = join_aggregate(spark)
    graph = plan_graph(planned(df))
    stages = df._execution().stages.stages
    clusters = re.findall(r"subgraph cluster_stage_(\d+)", graph.source)
    assert sorted(map(int, clusters)) == [s.id for s in stages]
    for s in stages:
        assert re.search(rf"label=\"Stage {s.id} · {s.num_partitions} tasks", graph.source), s.id

    nodes, edges = statements(graph)
    exchanges = [(t, h, a) for t, h, a in edges if a.get("label")]
    kinds = sorted(exchange_kind(a) for _, _, a in exchanges)
    reads = sum(isinstance(n, ShuffleReadExec) for s in stages for n in {id(n): n for n in s.root.walk()}.values())
    assert len(exchanges) == reads
    # both join sides and the aggregate shuffle by hash; the ordering shuffles by range
    assert kinds.count("shuffle") >= 3 and kinds.count("range") == 1, kinds
    for tail, head, _ in exchanges:
        assert tail.split("_")[0] != head.split("_")[0], (tail, head)
        assert nodes[head]["label"].startswith("ShuffleRead")
    # inside a stage, data flows from each child to its parent
    inner = [(t, h) for t, h, a in edges if not a.get("label") and a.get("style") != "invis"]
    assert inner and all(h == t.rsplit("_", 1)[0] for t, h in inner), inner


def test_a_broadcast_join_draws_a_broadcast_edge(spark):
    small = spark.range(0, 10).withColumnRenamed("id", "k")
    df = spark.range(0, 1000).join(small, F.col("id") == F.col("k")).groupBy("k").count()
    _, edges = statements(plan_graph(planned(df)))
    broadcasts = [a for _, _, a in edges if a.get("label") and exchange_kind(a) == "broadcast"]
    assert len(broadcasts) == 1 and broadcasts[0]["style"] == "dashed"


@pytest.mark.parametrize("kind", ["gpu", "npu"])
def test_operators_are_filled_with_the_colour_of_the_device_they_are_placed_on(spark, conf_override, kind):
    df = join_aggregate(spark)
    with conf_override({"quiver.devices": f"cpu,{kind}:emulated", "quiver.placement": kind}):
        nodes = operators(statements(plan_graph(planned(df)))[0])
        qe = df._execution()
        expected = {}
        for stage in qe.stages.stages:
            for node, device in device_paths(stage.root, spark.place(stage.id, stage.root)):
                expected.setdefault(node.node_string().split(" ")[0], set()).add(device.kind)

    assert DEVICE_COLOURS["cpu"] != DEVICE_COLOURS[kind]
    drawn: dict[str, set[str]] = {}
    for attrs in nodes.values():
        colour = attrs["fillcolor"]
        drawn.setdefault(attrs["label"].split(" ")[0], set()).add(colour)
        on_device = f"on {kind}:0 (emulated)" in attrs["label"]
        assert colour == DEVICE_COLOURS[kind if on_device else "cpu"], attrs["label"]
        # an emulated device's operators are marked as such by a dashed border
        assert ("dashed" in attrs.get("style", "")) == on_device, attrs
    colours = {name: {DEVICE_COLOURS[k] for k in kinds} for name, kinds in expected.items()}
    assert drawn == colours
    assert colours["HashAggregate(partial)"] == {DEVICE_COLOURS[kind]}
    assert colours["Range"] == {DEVICE_COLOURS["cpu"]}


def test_with_only_the_cpu_every_operator_is_cpu_coloured_with_sizes_and_costs_in_its_tooltip(spark):
    nodes = operators(statements(plan_graph(planned(join_aggregate(spark))))[0])
    assert {a["fillcolor"] for a in nodes.values()} == {DEVICE_COLOURS["cpu"]}
    tooltip = next(a["tooltip"] for a in nodes.values() if a["label"].startswith("Range (0, 5000"))
    assert "estimated output: ≈5.0k rows" in tooltip and "placed on cpu:0" in tooltip and "cpu:0 " in tooltip


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk."""
    assert data[:8] == PNG_SIGNATURE and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_explain_graph_writes_numbered_pngs_into_the_graph_dir(spark, conf_override, tmp_path, capsys):
    folder = tmp_path / "plans"
    df = join_aggregate(spark)
    with conf_override({"quiver.ui.graphDir": str(folder), "quiver.devices": "cpu,gpu:emulated"}):
        df.explain(mode="graph")
        df.explain("graph")
    first, second = folder / "quiver-plan-1.png", folder / "quiver-plan-2.png"
    printed = capsys.readouterr().out.splitlines()
    assert printed == [f"plan graph written to {first}", f"plan graph written to {second}"]
    data = first.read_bytes()
    width, height = png_size(data)
    assert len(data) > 20_000 and width > 400 and height > 400
    assert second.read_bytes()[:8] == PNG_SIGNATURE


def test_explain_graph_writes_to_an_explicit_path(spark, tmp_path, capsys):
    target = tmp_path / "q.png"
    spark.range(0, 10).groupBy((F.col("id") % 2).alias("g")).count().explain(mode="graph", path=str(target))
    assert png_size(target.read_bytes())[0] > 100
    assert str(target) in capsys.readouterr().out
    with pytest.raises(ConfigurationError, match="mode='graph'"):
        spark.range(3).explain(mode="cost", path=str(target))


@pytest.mark.parametrize("call", [{"mode": "bogus"}, {"extended": "bogus"}], ids=["mode", "extended"])
def test_an_unknown_explain_mode_names_the_valid_ones(spark, call):
    with pytest.raises(ConfigurationError, match="unknown explain mode 'bogus'; valid modes are "
                                                 "simple, extended, codegen, cost, formatted, graph"):
        spark.range(3).explain(**call)


@pytest.mark.parametrize("mode", ["simple", "extended", "codegen", "cost", "formatted", "FORMATTED"])
def test_the_text_modes_still_print_the_plan(spark, capsys, mode):
    spark.range(3).explain(mode=mode)
    assert "== Physical Plan" in capsys.readouterr().out


def fake_ipython(monkeypatch, shell) -> list:
    """Install a stand-in IPython whose get_ipython() is `shell`; returns the list display() fills."""
    shown: list = []
    ipython = types.ModuleType("IPython")
    ipython.get_ipython = lambda: shell
    display = types.ModuleType("IPython.display")
    display.SVG = type("SVG", (), {"__init__": lambda self, data: setattr(self, "data", data)})
    display.display = shown.append
    ipython.display = display
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", display)
    return shown


def test_in_a_jupyter_kernel_the_picture_is_also_shown_inline_as_svg(spark, conf_override, tmp_path, monkeypatch):
    shown = fake_ipython(monkeypatch, type("ZMQInteractiveShell", (), {})())
    with conf_override({"quiver.ui.graphDir": str(tmp_path)}):
        join_aggregate(spark).explain(mode="graph")
    assert len(shown) == 1
    svg = shown[0].data
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and "Stage 0" in svg
    assert (tmp_path / "quiver-plan-1.png").exists()


def test_a_terminal_ipython_shell_gets_only_the_png(spark, conf_override, tmp_path, monkeypatch):
    formatter = types.SimpleNamespace(active_types=["text/plain"])
    shown = fake_ipython(monkeypatch, type("TerminalInteractiveShell", (), {"display_formatter": formatter})())
    with conf_override({"quiver.ui.graphDir": str(tmp_path)}):
        spark.range(5).explain(mode="graph")
    assert shown == [] and (tmp_path / "quiver-plan-1.png").exists()


def test_without_graphviz_explain_graph_says_how_to_install_it_and_dot_source_still_works(
        spark, conf_override, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    df = join_aggregate(spark)
    with conf_override({"quiver.ui.graphDir": str(tmp_path)}), \
            pytest.raises(GraphvizNotInstalled, match="apt-get install graphviz"):
        df.explain(mode="graph")
    assert list(tmp_path.glob("*.png")) == []
    assert "cluster_stage_0" in plan_graph(planned(df)).source
