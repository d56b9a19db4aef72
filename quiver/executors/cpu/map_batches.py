"""mapInArrow / mapInPandas on the CPU: the user's function over one partition's batches.

The function gets an iterator of the partition's batches under the DataFrame's column names
(pyarrow.RecordBatch, or pandas.DataFrame for mapInPandas) and yields batches of the same kind.
Each output batch is checked against the declared schema by column name (by position for a
pandas DataFrame whose labels are not strings, as PySpark does) and converted to its types; a
missing, unexpected or mistyped column fails the task with an error that names it.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from quiver.engine.core.errors import PythonException
from quiver.engine.core.expressions import AttributeRef
from quiver.engine.core.imports import loaded_module, optional_module
from quiver.executors.cpu.worker_pool import WORKERS


@dataclass(frozen=True)
class MapFunction:
    """What running mapInArrow / mapInPandas needs, without the plan around it: picklable into a worker."""

    function: Any
    kind: str
    inputs: tuple[AttributeRef, ...]
    attributes: tuple[AttributeRef, ...]

    @property
    def method(self) -> str:
        return "mapInArrow" if self.kind == "arrow" else "mapInPandas"

    @property
    def name(self) -> str:
        return getattr(self.function, "__name__", type(self.function).__name__)


def map_partition(plan: Any, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Run `plan.function` over `batches` (internal column names) and yield its checked output: in a
    Python worker process (worker_pool.py) when the session runs user code there, else on this thread."""
    spec = MapFunction(plan.function, plan.kind, tuple(plan.child.output), tuple(plan.attributes))
    if not WORKERS.enabled:
        return map_in_process(spec, batches)
    return WORKERS.stream("map", plan, lambda: spec, f"the function {spec.name} given to {spec.method}", batches)


def map_in_process(spec: MapFunction, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """`spec.function` over `batches`, on this thread."""
    method, name, child = spec.method, spec.name, spec.inputs
    schema = pa.schema([pa.field(a.name, a.dtype.to_arrow()) for a in child])
    upstream: list[BaseException] = []
    if spec.kind == "pandas":
        optional_module("pandas", "pandas", f"{method}")

    def inputs() -> Iterator[Any]:
        try:
            for b in batches:
                batch = pa.RecordBatch.from_arrays([b.column(a.internal_name) for a in child], schema=schema)
                yield batch.to_pandas() if spec.kind == "pandas" else batch
        except BaseException as exc:
            upstream.append(exc)  # an error of the operators below: passed on as it is, not blamed on the function
            raise

    where = f"the function {name} given to {method}"

    def blamed(exc: Exception) -> Exception:
        """The exception to raise: the function's own wrapped as a PythonException naming it, an
        error of the operators below (or an already wrapped one) as it is."""
        if isinstance(exc, PythonException) or any(exc is e for e in upstream):
            return exc
        return PythonException(f"{where} raised {type(exc).__name__}: {exc}")

    try:
        produced = iter(_checked_iterable(spec.function(inputs()), spec.kind, where))
    except Exception as exc:  # noqa: BLE001
        error = blamed(exc)
        if error is exc:
            raise
        raise error from exc
    names = [a.internal_name for a in spec.attributes]
    while True:
        try:
            out = next(produced)
        except StopIteration:
            return
        except Exception as exc:  # noqa: BLE001
            error = blamed(exc)
            if error is exc:
                raise
            raise error from exc
        for arrays in _conformed(out, spec.kind, spec.attributes, where):
            if arrays and len(arrays[0]):
                yield pa.RecordBatch.from_arrays(arrays, names=names)


def _checked_iterable(results: Any, kind: str, where: str) -> Iterable[Any]:
    pd = loaded_module("pandas")
    frames = (pd.DataFrame,) if pd is not None else ()
    wanted = "pyarrow.RecordBatch" if kind == "arrow" else "pandas.DataFrame"
    if results is None or isinstance(results, (pa.RecordBatch, pa.Table, *frames, str, bytes)) \
            or not hasattr(results, "__iter__"):
        raise PythonException(
            f"{where} must return an iterator of {wanted}, but returned {type(results).__name__}; "
            f"write it as a generator: def f(batches): for b in batches: yield ...")
    return results


def _conformed(out: Any, kind: str, attributes: tuple[AttributeRef, ...], where: str) -> Iterator[list[pa.Array]]:
    """The columns of one output batch in the schema's order and types."""
    if kind == "arrow":
        if isinstance(out, pa.Table):
            for batch in out.to_batches():
                yield _arrow_columns(batch, attributes, where)
            return
        if not isinstance(out, pa.RecordBatch):
            raise PythonException(f"{where} must yield pyarrow.RecordBatch, but yielded {type(out).__name__}")
        yield _arrow_columns(out, attributes, where)
        return
    pd = loaded_module("pandas")
    if pd is None or not isinstance(out, pd.DataFrame):
        raise PythonException(f"{where} must yield pandas.DataFrame, but yielded {type(out).__name__}")
    yield _pandas_columns(out, attributes, where)


def _expected(attributes: tuple[AttributeRef, ...]) -> str:
    return ", ".join(f"{a.name} {a.dtype.simpleString()}" for a in attributes)


def _match_names(names: list[str], attributes: tuple[AttributeRef, ...], where: str, shown: str) -> None:
    wanted = [a.name for a in attributes]
    missing = [n for n in wanted if n not in names]
    unexpected = [n for n in names if n not in wanted]
    if missing or unexpected:
        parts = []
        if missing:
            parts.append(f"missing column(s) {', '.join(repr(n) for n in missing)}")
        if unexpected:
            parts.append(f"unexpected column(s) {', '.join(repr(n) for n in unexpected)}")
        raise PythonException(f"the output of {where} does not match its schema: {'; '.join(parts)}.\n"
                              f"Output columns: {shown}\nSchema: {_expected(attributes)}")


def _arrow_columns(batch: pa.RecordBatch, attributes: tuple[AttributeRef, ...], where: str) -> list[pa.Array]:
    if batch.num_columns == 0 and batch.num_rows == 0:
        return [pa.array([], a.dtype.to_arrow()) for a in attributes]
    shown = ", ".join(f"{f.name} {f.type}" for f in batch.schema)
    _match_names(batch.schema.names, attributes, where, shown)
    out = []
    for a in attributes:
        column = batch.column(batch.schema.get_field_index(a.name))
        target = a.dtype.to_arrow()
        if column.type != target:
            if not _castable(column.type, target):
                raise PythonException(f"column '{a.name}' in the output of {where} is {column.type}, but the schema "
                                      f"says {a.dtype.simpleString()} ({target}).\nSchema: {_expected(attributes)}")
            try:
                column = column.cast(target, safe=True)
            except (pa.ArrowException, ValueError) as exc:
                raise PythonException(f"column '{a.name}' in the output of {where} does not fit "
                                      f"{a.dtype.simpleString()}: {exc}") from exc
        out.append(column)
    return out


def _castable(source: pa.DataType, target: pa.DataType) -> bool:
    """Whether an output column of type `source` is taken as `target`: the same kind of value, wider or
    narrower (int64 as int, large_string as string), never a reinterpretation (strings as numbers)."""
    t = pa.types
    if t.is_null(source):
        return True
    families = (
        lambda x: t.is_integer(x),
        lambda x: t.is_floating(x) or t.is_integer(x),
        lambda x: t.is_decimal(x) or t.is_integer(x),
        lambda x: t.is_string(x) or t.is_large_string(x),
        lambda x: t.is_binary(x) or t.is_large_binary(x) or t.is_fixed_size_binary(x),
        lambda x: t.is_timestamp(x),
        lambda x: t.is_date(x),
        lambda x: t.is_boolean(x),
        lambda x: t.is_list(x) or t.is_large_list(x),
        lambda x: t.is_struct(x),
        lambda x: t.is_map(x),
    )
    for family in families:
        if family(target):
            return family(source)
    return False


def _pandas_columns(frame: Any, attributes: tuple[AttributeRef, ...], where: str) -> list[pa.Array]:
    if len(frame.columns) == 0 and len(frame) == 0:
        return [pa.array([], a.dtype.to_arrow()) for a in attributes]
    labels = list(frame.columns)
    if all(isinstance(c, str) for c in labels):
        shown = ", ".join(f"{c} {frame[c].dtype}" for c in labels)
        _match_names(labels, attributes, where, shown)
        series = [frame[a.name] for a in attributes]
    else:
        if len(labels) != len(attributes):
            raise PythonException(f"the output of {where} has {len(labels)} columns and the schema {len(attributes)}; "
                                  f"columns without string labels are matched by position.\n"
                                  f"Schema: {_expected(attributes)}")
        series = [frame.iloc[:, i] for i in range(len(labels))]
    out = []
    for a, s in zip(attributes, series):
        try:
            out.append(pa.Array.from_pandas(s, type=a.dtype.to_arrow(), safe=True))
        except (pa.ArrowException, TypeError, ValueError) as exc:
            raise PythonException(f"column '{a.name}' in the output of {where} has dtype {s.dtype}, which does not "
                                  f"fit {a.dtype.simpleString()}: {exc}.\nSchema: {_expected(attributes)}") from exc
    return out
