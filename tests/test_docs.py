"""The API reference (docs/api, built by `make docs`) documents every name of `quiver.functions`.

The functions page is a fixed list of autodoc directives grouped like PySpark's reference, so a function added
to `quiver.functions` without a line there would be missing from the reference: this test names it.
"""
from __future__ import annotations

import importlib
import re
from pathlib import Path

from quiver import functions as F

DOCS = Path(__file__).resolve().parents[1] / "docs" / "api"
DIRECTIVE = re.compile(r"^\.\. (currentmodule|autofunction|autoclass|autodata)::\s*(\S+)\s*$", re.MULTILINE)


def documented_objects() -> list[tuple[str, object]]:
    """(qualified name, object) of every autofunction, autoclass and autodata directive of the .rst pages."""
    found = []
    for page in sorted(DOCS.glob("*.rst")):
        module = None
        for directive, target in DIRECTIVE.findall(page.read_text()):
            if directive == "currentmodule":
                module = target
                continue
            path = target if "." in target or module is None else f"{module}.{target}"
            module_name, _, attribute = path.rpartition(".")
            found.append((path, getattr(importlib.import_module(module_name), attribute)))
    return found


def test_every_function_is_in_the_reference() -> None:
    documented = documented_objects()
    names = {path for path, _ in documented}
    objects = [obj for _, obj in documented]
    missing = [name for name in F.__all__
               if f"quiver.functions.{name}" not in names and not any(obj is getattr(F, name) for obj in objects)]
    assert not missing, f"add these names of quiver.functions to docs/api/functions.rst: {missing}"


def test_every_directive_names_an_object() -> None:
    """Each directive's object imports: a renamed or removed function fails here, not only in `make docs`."""
    for path, obj in documented_objects():
        assert obj is not None, path
