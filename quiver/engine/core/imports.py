"""Modules imported on first use: what `import quiver` must not pay for (pandas under pyarrow.dataset,
sqlglot, numba) is reached through a `LazyModule` where a module needs it only inside functions."""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


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
