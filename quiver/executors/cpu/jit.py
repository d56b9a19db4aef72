"""Numba kernels compiled on their first call, with numba itself imported only then.

`import numba` and its first kernel load (even from the disk cache) cost more than a whole small query,
which `import quiver` and a first small query should not pay: most small batches never reach a kernel (the
hashes of a few thousand rows are taken with numpy, `hashing.py`). `njit(...)` here stands in for
`numba.njit(...)`: it returns a `LazyKernel`, and the first call of any lazy kernel imports numba, wraps
every lazy kernel defined so far with the real `numba.njit` and puts the dispatchers where the proxies
were, in every Quiver module that holds one (a kernel calling another looks it up among its module's
globals when numba compiles it, so it must find a dispatcher there, not a proxy). Kernels defined after
that are wrapped at once.
"""
from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any

_lock = threading.RLock()
_pending: list[LazyKernel] = []
_numba: Any = None
_after_first_call: list[Callable[[], object]] = []


class LazyKernel:
    """A numba kernel not yet wrapped: calling it wraps all pending kernels and calls the real one."""

    def __init__(self, func: Callable[..., Any], options: dict[str, Any]) -> None:
        self.py_func = func
        self.options = options
        self.dispatcher: Any = None
        self.__name__ = func.__name__
        self.__qualname__ = func.__qualname__
        self.__module__ = func.__module__
        self.__doc__ = func.__doc__

    def __call__(self, *args: Any) -> Any:
        if self.dispatcher is not None:
            return self.dispatcher(*args)
        load_numba_kernels()
        result = self.dispatcher(*args)
        with _lock:
            hooks = list(_after_first_call)
            _after_first_call.clear()
        for hook in hooks:
            hook()
        return result

    def __repr__(self) -> str:
        return f"LazyKernel({self.__module__}.{self.__qualname__})"


def njit(func: Callable[..., Any] | None = None, **options: Any) -> Any:
    """`numba.njit`, deferred: `@njit(cache=True, nogil=True)` or `@njit`."""
    def wrap(f: Callable[..., Any]) -> Any:
        with _lock:
            if _numba is not None:
                return _numba.njit(**options)(f)
            kernel = LazyKernel(f, options)
            _pending.append(kernel)
            return kernel
    return wrap(func) if func is not None else wrap


def after_first_kernel_call(hook: Callable[[], object]) -> None:
    """Run `hook` once, after the first call of a lazy kernel has loaded (or compiled) it: the engine pages
    LLVM's code out of the process then (`engine/execution/memory.py`), as no later kernel load needs most
    of it."""
    with _lock:
        if hook not in _after_first_call:
            _after_first_call.append(hook)


def numba_loaded() -> bool:
    """Whether the lazy kernels have been wrapped (numba is imported and its compiler initialised)."""
    return _numba is not None


def load_numba_kernels() -> bool:
    """Import numba and replace every pending lazy kernel by its dispatcher; returns True."""
    global _numba
    with _lock:
        if _numba is not None:
            return True
        import numba

        dispatchers = {id(k): k for k in _pending}
        for kernel in _pending:
            kernel.dispatcher = numba.njit(**kernel.options)(kernel.py_func)
        for name, module in list(sys.modules.items()):
            if name == "quiver" or name.startswith("quiver."):
                namespace = getattr(module, "__dict__", {})
                for attr, value in list(namespace.items()):
                    if type(value) is LazyKernel and id(value) in dispatchers:
                        namespace[attr] = value.dispatcher
        _pending.clear()
        _numba = numba
        return True
