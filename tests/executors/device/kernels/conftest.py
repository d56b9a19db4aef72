"""The array namespaces the kernel tests run on: numpy always, and every other one installed here
(array_api_strict checks that kernels use nothing outside the standard; CuPy and torch run them on a device)."""
from __future__ import annotations

import importlib

import pytest

_CANDIDATES = ("array_api_compat.numpy", "array_api_strict", "array_api_compat.cupy", "array_api_compat.torch")


def _importable(name: str) -> bool:
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


@pytest.fixture(scope="module", params=[n for n in _CANDIDATES if _importable(n)],
                ids=lambda name: name.rsplit(".", 1)[-1])
def xp(request):
    """One array namespace; module-scoped so that hypothesis tests can use it."""
    return importlib.import_module(request.param)
