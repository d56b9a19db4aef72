"""The exception types users catch: named after PySpark's so `except AnalysisException` works."""
from __future__ import annotations

import difflib
import os
import traceback
from collections.abc import Iterable

# Quiver's own package folder: frames in it are the engine's, not the user's.
_ENGINE_DIRS = (os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep,)


class QuiverError(Exception):
    """Base of every error Quiver raises on purpose."""

    def _render_traceback_(self) -> list[str]:
        """How IPython and Jupyter show this error: the user's own frames and the message, without the
        engine's internals (which `%xmode Verbose` or `traceback.print_exc()` still show)."""
        frames = [f for f in traceback.extract_tb(self.__traceback__) if not f.filename.startswith(_ENGINE_DIRS)]
        lines = traceback.format_list(frames) if frames else []
        head = ["Traceback (most recent call last, Quiver's internal frames hidden):\n"] if lines else []
        cause = self.__cause__
        because = [f"\nCaused by {type(cause).__name__}: {cause}"] if cause is not None else []
        return [line.rstrip("\n") for line in head + lines] + [f"{type(self).__name__}: {self}"] + because


class AnalysisException(QuiverError):
    """A plan refers to something that does not exist or mixes incompatible types."""


class UnresolvedColumnError(AnalysisException):
    """A column name that matches nothing in scope."""


class ParseException(AnalysisException):
    """SQL text, a type string or a schema string could not be parsed."""


class ConfigurationError(QuiverError, ValueError):
    """A conf key or option has a value outside what it accepts."""


class TaskFailedError(QuiverError):
    """A task failed on every allowed attempt; names the stage, task and partition."""

    def __init__(self, message: str, stage_id: int, partition: int, attempts: int):
        super().__init__(message)
        self.stage_id = stage_id
        self.partition = partition
        self.attempts = attempts


def unknown_column(name: str, available: Iterable[str], what: str = "column") -> UnresolvedColumnError:
    """An error naming the missing column, the closest available one and all of them."""
    available = list(dict.fromkeys(available))
    close = difflib.get_close_matches(name, available, n=1, cutoff=0.5)
    hint = f" Did you mean '{close[0]}'?" if close else ""
    return UnresolvedColumnError(
        f"{what} '{name}' does not exist.{hint}\nAvailable columns: {', '.join(available) or '(none)'}"
    )


class PythonException(QuiverError):
    """User Python code run by a task (a UDF, the function of mapInArrow / mapInPandas) raised, or
    returned something the declared type or schema cannot hold; names the function, with the
    original exception chained. PySpark's name for the same error."""
