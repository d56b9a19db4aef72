"""The connector seam: a `Source` yields Arrow batches per split, a `Sink` writes them atomically.

The planner only talks to these protocols; file formats, object stores and databases
implement them and register in `connectors.registry`.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import pyarrow as pa
import pyarrow.compute as pc


@dataclass(frozen=True)
class ColumnStatistics:
    """What a source knows about one column: its range and nulls; None where unknown."""

    min: Any = None
    max: Any = None
    null_count: int | None = None
    distinct_count: int | None = None


@dataclass(frozen=True)
class SourceStatistics:
    """What a source knows about itself before reading: drives join order, broadcast and placement choices."""

    num_rows: int | None = None
    size_bytes: int | None = None
    columns: dict[str, ColumnStatistics] = field(default_factory=dict)


@runtime_checkable
class Source(Protocol):
    """A readable data set, cut into independent splits (one task each)."""

    def describe(self) -> str:
        """One line for explain(): format, location and what was pushed down."""

    def schema(self) -> pa.Schema:
        """Arrow schema of every column the source can produce (partition columns included)."""

    def statistics(self) -> SourceStatistics:
        """Row count and byte size estimates; None where unknown."""

    def splits(self, target: int) -> Sequence[Any]:
        """About `target` independent pieces of work (files, row-group ranges); at least one."""

    def read(
        self, split: Any, columns: Sequence[str] | None, predicate: pc.Expression | None
    ) -> Iterator[pa.RecordBatch]:
        """Batches of `split` with only `columns` (None = all), skipping data `predicate` rules out.

        The predicate is a hint: a source may return rows that fail it (the engine filters
        again), but must never drop rows that pass it. A string column may arrive
        dictionary-encoded over its type; the executor decodes it.

        A source whose class sets `filters_as = "expressions"` gets the scan's own filter
        expressions (a tuple of Quiver `Expr` conjuncts) instead of an Arrow predicate: a
        database translates them into its own query language.
        """


@runtime_checkable
class Sink(Protocol):
    """A destination written by many tasks and committed once, atomically, by the driver."""

    def setup(self) -> bool:
        """Prepare a job; returns False when save mode 'ignore' finds existing data (skip the job)."""

    def write_task(self, partition: int, batches: Iterator[pa.RecordBatch]) -> Any:
        """Write one task's batches into the job's staging area; returns what commit needs."""

    def commit(self, task_results: list[Any]) -> None:
        """Make every task's output visible at once (rename into place, `_SUCCESS` marker)."""

    def abort(self) -> None:
        """Remove the staging area after a failed job; the destination is left as it was."""


@dataclass(frozen=True)
class ReadOptions:
    """Options given to a file reader, case-insensitive keys as in Spark's `option()`."""

    values: dict[str, str] = field(default_factory=dict)

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key.lower(), default)
