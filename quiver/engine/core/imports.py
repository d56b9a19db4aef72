"""Modules imported on first use: what `import quiver` must not pay for (pandas under pyarrow.dataset,
sqlglot, numba) is reached through a `LazyModule` where a module needs it only inside functions."""
from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any

from quiver.engine.core.errors import MissingDependency

# The distribution name a missing optional library's extra is installed under.
DISTRIBUTION = "quiver-dataflow"


def optional_module(name: str, extra: str, needed_for: str) -> ModuleType:
    """The module `name`, which only `needed_for` needs and the extra `extra` installs; `MissingDependency`
    naming the pip command when it is not installed.

    >>> optional_module("json", "none", "reading JSON").__name__
    'json'
    """
    try:
        return importlib.import_module(name)
    except ImportError as error:
        raise MissingDependency(
            f"{needed_for} needs {name}, which Quiver's core install leaves out; install it with "
            f"pip install '{DISTRIBUTION}[{extra}]' (or pip install {name})") from error


def loaded_module(name: str) -> ModuleType | None:
    """The module `name` if something imported it already, else None: a value of one of its types can only exist
    once it is, so an isinstance check needs no import (pandas costs a quarter of a second)."""
    return sys.modules.get(name)


class LazyModule:
    """Stands for the module `name` and imports it at the first attribute read.

    >>> acero = LazyModule("pyarrow.acero")   # nothing imported yet
    >>> acero.Declaration                      # imports pyarrow.acero now
    <class 'pyarrow._acero.Declaration'>
    """

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}{'' if self._module is None else ' (imported)'}>"
