"""The scalar-kernel registry (`KERNELS` and the `kernel` decorator) and helpers shared by its kernels.

Calling convention: `KERNELS[name](args, result_type)`, where each argument is a
`pa.Array` (a column) or a `pa.Scalar` (a literal), already cast to the types the
catalog asked for. A kernel returns an array, or a scalar when every argument is a
scalar (constant folding). Arguments Spark requires to be constant (a regex, a format,
a scale) are read with `.as_py()`; given as a column they are evaluated once per
distinct value. Nulls propagate unless Spark says otherwise (coalesce, concat_ws, nvl2).

The kernels live by domain in the modules beside this one, each registering into
`KERNELS`; the package (`quiver/executors/cpu/kernels/__init__.py`) imports them all, so
`from quiver.executors.cpu.kernels import KERNELS` is the full table.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

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

def constant(arg: Value, function: str, what: str) -> Any:
    """The value of an argument Spark requires to be a literal."""
    if isinstance(arg, pa.Scalar):
        return arg.as_py()
    raise QuiverError(f"{function}: the {what} must be a literal value, not a column")


def null_scalar(t: pa.DataType) -> pa.Scalar:
    """A null of Arrow type `t`."""
    return pa.scalar(None, t)


def length_of(args: Sequence[Value]) -> int:
    """The batch length: that of the first column among `args`."""
    return next(len(a) for a in args if isinstance(a, pa.Array))


def as_array(value: Value, length: int) -> pa.Array:
    """A column as it is; a literal repeated to `length` rows."""
    if isinstance(value, pa.Array):
        return value
    return pa.nulls(length, value.type) if not value.is_valid else pa.repeat(value, length)


def all_null(length: int, t: T.DataType) -> pa.Array:
    """`length` nulls of type `t`."""
    return pa.nulls(length, t.to_arrow())


def mask_null(values: pa.Array, null_where: pa.Array | np.ndarray) -> pa.Array:
    """`values` with nulls where `null_where` is true."""
    mask = pa.array(null_where) if isinstance(null_where, np.ndarray) else pc.fill_null(null_where, False)
    return pc.if_else(mask, null_scalar(values.type), values)


def per_constant(data: list[pa.Array], params: list[Value], apply: Callable[[list[pa.Array], list[Any]], pa.Array],
                 out_type: pa.DataType) -> pa.Array:
    """Run `apply(data, constants)` once per distinct combination of `params` values.

    Arrow kernels take patterns and widths as constants; when a query passes a column
    there, rows are grouped by its distinct values so each group is still vectorised.
    """
    length = length_of(list(data) + list(params))
    data = [as_array(d, length) for d in data]
    if all(isinstance(p, pa.Scalar) for p in params):
        consts = [p.as_py() for p in params]
        if any(v is None for v in consts):
            return pa.nulls(length, out_type)
        return apply(data, consts)
    columns = {f"p{i}": as_array(p, length) for i, p in enumerate(params)}
    distinct = pa.table(columns).group_by(list(columns), use_threads=False).aggregate([]).to_pylist()
    out = pa.nulls(length, out_type)
    for combo in distinct:
        rows = pa.array(np.ones(length, dtype=bool))
        for name, value in combo.items():
            col = columns[name]
            rows = pc.and_(rows, pc.is_null(col) if value is None
                           else pc.fill_null(pc.equal(col, pa.scalar(value, col.type)), False))
        if any(v is None for v in combo.values()):
            continue
        part = apply([d.filter(rows) for d in data], list(combo.values()))
        out = pc.replace_with_mask(out, rows, part.cast(out_type))
    return out


def list_offsets(lists: pa.Array) -> pa.Array:
    """Offsets of a list array, rebased to start at 0 (for rebuilding it over new values)."""
    return pc.subtract(lists.offsets, lists.offsets[0])


def list_values(lists: pa.Array) -> pa.Array:
    """The values spanned by a (possibly sliced) list array, aligned with `list_offsets`."""
    start = lists.offsets[0].as_py()
    return lists.values.slice(start, lists.offsets[-1].as_py() - start)


def to_result_type(value: Value, rt: T.DataType) -> Value:
    """A null literal (type null) given the result type, so Arrow kernels see matching types."""
    target = rt.to_arrow()
    if value.type == target:
        return value
    if pa.types.is_null(value.type):
        return null_scalar(target) if isinstance(value, pa.Scalar) else pa.nulls(len(value), target)
    return cast_array(value, rt)


def as_pylists(args: list[Value]) -> list[list[Any]]:
    """Each argument as a Python list of the batch's length (literals repeated)."""
    length = length_of(args)
    return [as_array(a, length).to_pylist() for a in args]


def per_row(args: list[Value], fn: Callable[..., Any], out: pa.DataType, nulls_propagate: bool = True) -> pa.Array:
    """fn over each row's Python values; a null argument gives null unless `nulls_propagate` is off."""
    columns = as_pylists(args)
    results = []
    for values in zip(*columns):
        results.append(None if nulls_propagate and any(v is None for v in values) else fn(*values))
    return pa.array(results, out)
