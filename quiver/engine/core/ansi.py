"""ANSI mode at run time: whether the query now running raises on a bad value or gives NULL (or wraps).

`spark.sql.ansi.enabled` (on by default, as in Spark 4) decides, for each query, what integer overflow,
division by zero, a malformed or overflowing cast, a decimal that needs more digits than its type and an
array index out of bounds do: under ANSI they raise Spark's error (core/errors.py), otherwise they give
Spark 3's NULL, or wrap as Java's integers do. The try_* functions give NULL in both modes.

The mode is part of the query, not of an expression: the query's execution runs under `running_ansi`, and
each task carries the mode to wherever it runs (a thread, a Ray worker), so the kernels of every executor
read one value through `ansi_enabled()`.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_ANSI: ContextVar[bool] = ContextVar("quiver_ansi_mode", default=False)
_TRY: ContextVar[bool] = ContextVar("quiver_try_mode", default=False)


def ansi_enabled() -> bool:
    """Whether the query running in this thread is in ANSI mode (False outside any query)."""
    return _ANSI.get()


@contextmanager
def running_ansi(enabled: bool) -> Iterator[None]:
    """Run the block in ANSI mode (`enabled`) or not."""
    token = _ANSI.set(enabled)
    try:
        yield
    finally:
        _ANSI.reset(token)


def try_mode() -> bool:
    """Whether the expression being evaluated is a try_* form (TRY_CAST, try_add, ...): NULL for every value
    the plain form would refuse under ANSI mode, including those it wraps without ANSI (an overflowing cast)."""
    return _TRY.get()


@contextmanager
def running_try() -> Iterator[None]:
    """Evaluate the block as a try_* form: no ANSI errors, NULL instead."""
    ansi, tried = _ANSI.set(False), _TRY.set(True)
    try:
        yield
    finally:
        _TRY.reset(tried)
        _ANSI.reset(ansi)


__all__ = ["ansi_enabled", "running_ansi", "try_mode", "running_try"]
