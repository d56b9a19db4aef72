"""Reading a whole `FileSource` and comparing it with what PySpark reads from the same files."""
from __future__ import annotations

import math
from typing import Any

import pyarrow as pa

from quiver.connectors.files import FileSource
from quiver.engine.core.types import schema_from_arrow
from quiver.executors.cpu.dictionary_eval import decode_dictionaries


def read_all(source: FileSource, columns: list[str] | None = None, predicate: Any = None, target: int = 3) -> pa.Table:
    """Every batch of every split of `source`, as one table (dictionary-encoded strings decoded, as
    the executor does: a source may hand them on encoded)."""
    batches = [decode_dictionaries(b) for s in source.splits(target) for b in source.read(s, columns, predicate)]
    schema = source.schema() if columns is None else pa.schema([source.schema().field(c) for c in columns])
    return pa.Table.from_batches(batches, schema=schema)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, list) and isinstance(b, dict) and all(isinstance(x, tuple) for x in a):
        return _same(dict(a), b)
    if isinstance(a, dict) and hasattr(b, "asDict"):
        return _same(a, b.asDict())
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if hasattr(a, "asDict") or hasattr(b, "asDict"):
        return _same(a.asDict() if hasattr(a, "asDict") else a, b.asDict() if hasattr(b, "asDict") else b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def assert_matches_spark(source: FileSource, spark_df: Any, ordered: bool = True) -> None:
    """Same column names, Spark types and rows (NaN equal to NaN) as what PySpark read."""
    ours = [(f.name, f.dataType.simpleString()) for f in schema_from_arrow(source.schema())]
    assert ours == spark_df.dtypes
    got = [tuple(r.values()) for r in read_all(source).to_pylist()]
    want = [tuple(r) for r in spark_df.collect()]
    if not ordered:
        got, want = sorted(got, key=repr), sorted(want, key=repr)
    assert _same(got, want), f"\nquiver: {got}\nspark:  {want}"
