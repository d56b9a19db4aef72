"""The package's layering, checked on its import graph: no cycles, no import from a lower layer into a
higher one, no Quiver module imported inside a function, no private name imported across modules.

The graph is read from the source with `ast` (imports at module level, inside functions and under
`TYPE_CHECKING` alike), so an import hidden in a function to dodge a cycle counts as much as one at
the top. An import under `if TYPE_CHECKING:` never runs: it may not reach up a layer, but two classes of
one layer that name each other in annotations (a DataFrame's `groupBy` returns GroupedData, whose `agg`
returns a DataFrame) are not a cycle. docs/ARCHITECTURE.md explains the layers; `LAYERS` is the rule.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "quiver"

# Lowest first. A module belongs to the layer of the longest prefix that names it (`quiver` itself is the
# public facade: quiver, quiver.functions, quiver.types, quiver.resource) and may import only from its own
# layer or a lower one.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("quiver.engine.core",),
    ("quiver.engine.analysis",),
    ("quiver.engine.sql",),
    ("quiver.connectors",),
    ("quiver.planners.physical.nodes",),
    ("quiver.executors",),
    ("quiver.planners",),
    ("quiver.engine.execution",),
    ("quiver.engine.ui",),
    ("quiver.engine.api",),
    ("quiver",),
    ("quiver.engine.tools",),
)

# Quiver modules that may be imported inside a function, and why: none dodges a cycle.
FUNCTION_LEVEL_ALLOWED: dict[str, str] = {}
# The public API defers the layers below it to first use, so `import quiver` loads only what a program
# touches (the engine with the first session, connectors with the first read, the SQL front end with the
# first SQL text; benchmarks.startup measures it). Such an import only ever reaches strictly down a layer, so
# it cannot hide a cycle.
DEFERRING_LAYERS = ("quiver.engine.api", "quiver")

@dataclass(frozen=True)
class Import:
    """One import statement's target, as the importing module sees it."""

    source: str
    target: str
    line: int
    in_function: bool
    names: tuple[str, ...] = ()
    type_only: bool = False


def module_name(path: Path, root: Path) -> str:
    """`quiver.engine.core.types` for root/engine/core/types.py (root being the `quiver` folder)."""
    parts = ("quiver",) + path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def read_imports(root: Path) -> tuple[set[str], list[Import]]:
    """Every module under `root` and every import of a Quiver module they make."""
    paths = {module_name(p, root): p for p in root.rglob("*.py")}
    modules = set(paths)
    found: list[Import] = []
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found += _imports_of(name, package, ast.parse(path.read_text(), str(path)), modules)
    return modules, found


def _imports_of(name: str, package: str, tree: ast.AST, modules: set[str]) -> list[Import]:
    out: list[Import] = []

    def visit(node: ast.AST, in_function: bool, type_only: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                out.extend(Import(name, a.name, child.lineno, in_function, (), type_only) for a in child.names
                           if a.name.split(".")[0] == "quiver")
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                if base.split(".")[0] == "quiver":
                    for alias in child.names:
                        sub = f"{base}.{alias.name}"
                        target, names = (sub, ()) if sub in modules else (base, (alias.name,))
                        out.append(Import(name, target, child.lineno, in_function, names, type_only))
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)),
                  type_only or _is_type_checking_block(child))

    visit(tree, False, False)
    return out


def _is_type_checking_block(node: ast.AST) -> bool:
    """`if TYPE_CHECKING:` (or `typing.TYPE_CHECKING`): its body runs only under a type checker."""
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def layer_of(module: str, layers: tuple[tuple[str, ...], ...] = LAYERS) -> int:
    """The index in `layers` of the longest prefix naming `module`."""
    best, best_len = -1, -1
    for index, prefixes in enumerate(layers):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    if best < 0:
        raise ValueError(f"module {module} is in no layer; add it to LAYERS")
    return best


def upward_imports(imports: list[Import], layers: tuple[tuple[str, ...], ...] = LAYERS) -> list[str]:
    """Each import from a lower layer into a higher one, described."""
    return [f"{i.source}:{i.line} imports {i.target} (layer {layer_of(i.target, layers)} > "
            f"{layer_of(i.source, layers)})"
            for i in imports if layer_of(i.target, layers) > layer_of(i.source, layers)]


def import_cycles(imports: list[Import]) -> list[list[str]]:
    """The strongly connected components of more than one module among the imports that run (Tarjan's
    algorithm, iterative); imports under `TYPE_CHECKING` take no part."""
    graph: dict[str, set[str]] = {}
    for i in imports:
        if i.target != i.source and not i.type_only:
            graph.setdefault(i.source, set()).add(i.target)
            graph.setdefault(i.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    cycles: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph[succ]))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        cycles.append(sorted(component))
    return cycles


def private_imports(imports: list[Import]) -> list[str]:
    """Each `_name` imported from another Quiver module."""
    return [f"{i.source}:{i.line} imports {name} from {i.target}" for i in imports for name in i.names
            if name.startswith("_") and not name.startswith("__")]


def function_level_imports(imports: list[Import], allowed: dict[str, str] = FUNCTION_LEVEL_ALLOWED) -> list[str]:
    """Each Quiver module imported inside a function, unless `allowed` names it with a reason or the public
    API defers a lower layer (DEFERRING_LAYERS)."""
    deferring = {layer_of(prefix) for prefix in DEFERRING_LAYERS}
    return [f"{i.source}:{i.line} imports {i.target} inside a function" for i in imports
            if i.in_function and i.target not in allowed
            and not (layer_of(i.source) in deferring and layer_of(i.target) < layer_of(i.source))]


@pytest.fixture(scope="module")
def graph() -> tuple[set[str], list[Import]]:
    return read_imports(PACKAGE)


def test_every_module_is_in_a_layer(graph):
    modules, _ = graph
    for module in modules:
        layer_of(module)


def test_no_import_reaches_up_a_layer(graph):
    assert upward_imports(graph[1]) == []


def test_no_import_cycle(graph):
    assert import_cycles(graph[1]) == []


def test_no_quiver_module_is_imported_inside_a_function(graph):
    assert function_level_imports(graph[1]) == []


def test_no_private_name_is_imported_across_modules(graph):
    assert private_imports(graph[1]) == []


def test_the_checks_catch_a_made_up_graph_that_breaks_them(tmp_path):
    """The checks can fail: a tiny package whose core imports its api, with a cycle hidden in a function."""
    root = tmp_path / "quiver"
    for path, text in {
        "__init__.py": "",
        "engine/__init__.py": "",
        "engine/core/__init__.py": "",
        "engine/core/types.py": "from quiver.engine.api.session import Session\n",
        "engine/core/plan.py": "def f():\n    from quiver.engine.core.rows import _row\n",
        "engine/core/rows.py": "from quiver.engine.core import plan\n_row = 1\n",
        "engine/api/__init__.py": "",
        "engine/api/session.py": "from quiver.engine.core import types as T\nclass Session: ...\n",
        "engine/core/hints.py": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                 "    from quiver.engine.api import session\n"),
        "engine/api/frame.py": "from quiver.engine.api.grouped import Grouped\nclass Frame: ...\n",
        "engine/api/grouped.py": ("import typing\nif typing.TYPE_CHECKING:\n"
                                  "    from quiver.engine.api.frame import Frame\n"),
    }.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    modules, imports = read_imports(root)
    assert "quiver.engine.core.rows" in modules
    assert sorted(upward_imports(imports)) == [
        "quiver.engine.core.hints:3 imports quiver.engine.api.session (layer 9 > 0)",
        "quiver.engine.core.types:1 imports quiver.engine.api.session (layer 9 > 0)"]
    # frame <-> grouped is no cycle: grouped names Frame only for the type checker
    assert sorted(import_cycles(imports)) == [
        ["quiver.engine.api.session", "quiver.engine.core.types"],
        ["quiver.engine.core.plan", "quiver.engine.core.rows"]]
    assert function_level_imports(imports) == ["quiver.engine.core.plan:2 imports quiver.engine.core.rows inside a "
                                               "function"]
    assert private_imports(imports) == ["quiver.engine.core.plan:2 imports _row from quiver.engine.core.rows"]
    with pytest.raises(ValueError, match="in no layer"):
        layer_of("elsewhere.module")
