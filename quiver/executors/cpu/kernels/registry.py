"""The scalar-kernel registry (`KERNELS` and the `kernel` decorator) and helpers shared by its kernels.

Kept apart from the kernel modules so that each can register into `KERNELS` without
importing `scalar_kernels`, which imports them all.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from quiver.engine.core import types as T
from quiver.engine.core.errors import QuiverError
from quiver.executors.cpu.cast import cast_array

Value = pa.Array | pa.Scalar
Kernel = Callable[[Sequence[Value], T.DataType], Value]

KERNELS: dict[str, Kernel] = {}


def kernel(*names: str, data: tuple[int, ...] | str = (0,)) -> Callable[[Callable], Callable]:
    """Register a kernel under `names`; `data` lists the argument positions that hold values.

    When every argument is a literal the value arguments are lifted to one-row arrays,
    the kernel runs once and the single result comes back as a scalar.
    """
    def register(fn: Callable[[list[Value], T.DataType], Value]) -> Callable:
        def run(args: Sequence[Value], result_type: T.DataType) -> Value:
            args = [a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a for a in args]
            if all(isinstance(a, pa.Scalar) for a in args):
                lifted = [
                    pa.array([a.as_py()], a.type) if (data == "all" or i in data) else a
                    for i, a in enumerate(args)
                ]
                out = fn(lifted, result_type)
                return out[0] if isinstance(out, (pa.Array, pa.ChunkedArray)) else out
            return fn(list(args), result_type)

        run.__name__ = fn.__name__
        run.__doc__ = fn.__doc__
        for n in names:
            KERNELS[n] = run
        return fn
    return register


# ---------------------------------------------------------------- helpers

def _constant(arg: Value, function: str, what: str) -> Any:
    """The value of an argument Spark requires to be a literal."""
    if isinstance(arg, pa.Scalar):
        return arg.as_py()
    raise QuiverError(f"{function}: the {what} must be a literal value, not a column")


def _null(t: pa.DataType) -> pa.Scalar:
    return pa.scalar(None, t)


def _length_of(args: Sequence[Value]) -> int:
    return next(len(a) for a in args if isinstance(a, pa.Array))


def _as_array(value: Value, length: int) -> pa.Array:
    if isinstance(value, pa.Array):
        return value
    return pa.nulls(length, value.type) if not value.is_valid else pa.repeat(value, length)


def _all_null(length: int, t: T.DataType) -> pa.Array:
    return pa.nulls(length, t.to_arrow())


def _mask_null(values: pa.Array, null_where: pa.Array | np.ndarray) -> pa.Array:
    """`values` with nulls where `null_where` is true."""
    mask = pa.array(null_where) if isinstance(null_where, np.ndarray) else pc.fill_null(null_where, False)
    return pc.if_else(mask, _null(values.type), values)


def _per_constant(data: list[pa.Array], params: list[Value], apply: Callable[[list[pa.Array], list[Any]], pa.Array],
                  out_type: pa.DataType) -> pa.Array:
    """Run `apply(data, constants)` once per distinct combination of `params` values.

    Arrow kernels take patterns and widths as constants; when a query passes a column
    there, rows are grouped by its distinct values so each group is still vectorised.
    """
    length = _length_of(list(data) + list(params))
    data = [_as_array(d, length) for d in data]
    if all(isinstance(p, pa.Scalar) for p in params):
        consts = [p.as_py() for p in params]
        if any(v is None for v in consts):
            return pa.nulls(length, out_type)
        return apply(data, consts)
    columns = {f"p{i}": _as_array(p, length) for i, p in enumerate(params)}
    distinct = pa.table(columns).group_by(list(columns), use_threads=False).aggregate([]).to_pylist()
    out = pa.nulls(length, out_type)
    for combo in distinct:
        rows = pa.array(np.ones(length, dtype=bool))
        for name, value in combo.items():
            col = columns[name]
            rows = pc.and_(rows, pc.is_null(col) if value is None else pc.fill_null(pc.equal(col, pa.scalar(value, col.type)), False))
        if any(v is None for v in combo.values()):
            continue
        part = apply([d.filter(rows) for d in data], list(combo.values()))
        out = pc.replace_with_mask(out, rows, part.cast(out_type))
    return out


def _offsets(lists: pa.Array) -> pa.Array:
    """Offsets of a list array, rebased to start at 0 (for rebuilding it over new values)."""
    return pc.subtract(lists.offsets, lists.offsets[0])


def _values(lists: pa.Array) -> pa.Array:
    """The values spanned by a (possibly sliced) list array, aligned with `_offsets`."""
    start = lists.offsets[0].as_py()
    return lists.values.slice(start, lists.offsets[-1].as_py() - start)


def _typed(value: Value, rt: T.DataType) -> Value:
    """A null literal (type null) given the result type, so Arrow kernels see matching types."""
    target = rt.to_arrow()
    if value.type == target:
        return value
    if pa.types.is_null(value.type):
        return _null(target) if isinstance(value, pa.Scalar) else pa.nulls(len(value), target)
    return cast_array(value, rt)
