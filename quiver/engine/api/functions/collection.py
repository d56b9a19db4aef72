"""The array, map, struct and generator half of `quiver.functions` (F), as in `pyspark.sql.functions`.

Re-exported by `functions`. Arguments follow PySpark's reading: a str is a column name where
PySpark takes a column or name, and a Python value is a literal where it takes a value
(`F.array_position(c, 3)`, `F.element_at(m, "k")`).
"""
from __future__ import annotations

from typing import Any

from quiver.engine.api.column import Column, lit, to_expr
from quiver.engine.core.errors import AnalysisException
from quiver.engine.core.expressions import (
    Alias, AttributeRef, Expr, Literal, ScalarFunction, UnresolvedColumn,
)
from quiver.engine.core import types as T

ColumnOrName = Column | str


def _call(name: str, *args: Expr) -> Column:
    return Column(ScalarFunction(name, tuple(args)))


def _col(value: Any) -> Expr:
    return to_expr(value)


def _lit(value: Any) -> Expr:
    return lit(value).expr


def _many(cols: tuple) -> tuple:
    if len(cols) == 1 and isinstance(cols[0], (list, tuple, set)):
        cols = tuple(cols[0])
    return tuple(_col(c) for c in cols)


def field_name(e: Expr, position: int) -> str:
    """The field name Spark gives a struct(...) argument: its alias or column name, else `col<n>`."""
    if isinstance(e, Alias):
        return e.name
    if isinstance(e, (AttributeRef,)):
        return e.name
    if isinstance(e, UnresolvedColumn):
        return e.parts[-1]
    if isinstance(e, ScalarFunction) and e.name == "get_field" and isinstance(e.args[1], Literal):
        return str(e.args[1].value)
    return f"col{position + 1}"


def struct_call(values: tuple[Expr, ...]) -> ScalarFunction:
    """struct(a, b AS x, ...) as the pairs (name, value) the `struct` kernel takes."""
    args: list[Expr] = []
    for i, v in enumerate(values):
        args.append(Literal(field_name(v, i), T.StringType()))
        args.append(v.child if isinstance(v, Alias) else v)
    return ScalarFunction("struct", tuple(args))


def zip_call(values: tuple[Expr, ...]) -> ScalarFunction:
    """arrays_zip(a, b): the struct field names (the columns' names, else their positions) lead."""
    names = [Literal(v.name if isinstance(v, (Alias, AttributeRef)) else
                     v.parts[-1] if isinstance(v, UnresolvedColumn) else str(i), T.StringType())
             for i, v in enumerate(values)]
    return ScalarFunction("arrays_zip", tuple(names) + tuple(v.child if isinstance(v, Alias) else v for v in values))


# ---------------------------------------------------------------- constructors

def array(*cols: ColumnOrName) -> Column:
    """An array of the arguments (their common type), one per row."""
    return _call("array", *_many(cols))


def struct(*cols: ColumnOrName) -> Column:
    """A struct whose fields are named after the columns (or their aliases)."""
    return Column(struct_call(_many(cols)))


def named_struct(*cols: Any) -> Column:
    """named_struct(name1, value1, ...): names are literals (or lit columns)."""
    args = []
    for i, c in enumerate(cols):
        args.append(_lit(c) if i % 2 == 0 and not isinstance(c, Column) else _col(c))
    return _call("named_struct", *args)


def create_map(*cols: ColumnOrName) -> Column:
    """map(k1, v1, k2, v2, ...): one map per row."""
    return _call("map", *_many(cols))


def map_from_arrays(col1: ColumnOrName, col2: ColumnOrName) -> Column:
    return _call("map_from_arrays", _col(col1), _col(col2))


def array_repeat(col: ColumnOrName, count: ColumnOrName | int) -> Column:
    return _call("array_repeat", _col(col), _col(count))


def sequence(start: ColumnOrName, stop: ColumnOrName, step: ColumnOrName | None = None) -> Column:
    """Integers from start to stop inclusive, by step (default 1, or -1 counting down)."""
    args = (_col(start), _col(stop)) + (() if step is None else (_col(step),))
    return _call("sequence", *args)


# ---------------------------------------------------------------- access

def element_at(col: ColumnOrName, extraction: Any) -> Column:
    """Array element at a 1-based index (negative from the end; null past the end), or map value by key."""
    return _call("element_at", _col(col), _lit(extraction))


def try_element_at(col: ColumnOrName, extraction: Any) -> Column:
    return _call("try_element_at", _col(col), _lit(extraction))


def get(col: ColumnOrName, index: ColumnOrName | int) -> Column:
    """Array element at a 0-based index; null outside the array."""
    return _call("get", _col(col), _col(index))


def map_keys(col: ColumnOrName) -> Column:
    return _call("map_keys", _col(col))


def map_values(col: ColumnOrName) -> Column:
    return _call("map_values", _col(col))


def map_entries(col: ColumnOrName) -> Column:
    return _call("map_entries", _col(col))


def map_contains_key(col: ColumnOrName, value: Any) -> Column:
    return _call("map_contains_key", _col(col), _lit(value))


def array_size(col: ColumnOrName) -> Column:
    return _call("array_size", _col(col))


# ---------------------------------------------------------------- array functions

def array_distinct(col: ColumnOrName) -> Column:
    return _call("array_distinct", _col(col))


def array_union(col1: ColumnOrName, col2: ColumnOrName) -> Column:
    return _call("array_union", _col(col1), _col(col2))


def array_intersect(col1: ColumnOrName, col2: ColumnOrName) -> Column:
    return _call("array_intersect", _col(col1), _col(col2))


def array_except(col1: ColumnOrName, col2: ColumnOrName) -> Column:
    return _call("array_except", _col(col1), _col(col2))


def arrays_overlap(a1: ColumnOrName, a2: ColumnOrName) -> Column:
    return _call("arrays_overlap", _col(a1), _col(a2))


def array_join(col: ColumnOrName, delimiter: str, null_replacement: str | None = None) -> Column:
    """Elements as strings joined by `delimiter`; nulls skipped unless `null_replacement` is given."""
    args = (_col(col), _lit(delimiter)) + (() if null_replacement is None else (_lit(null_replacement),))
    return _call("array_join", *args)


def array_max(col: ColumnOrName) -> Column:
    return _call("array_max", _col(col))


def array_min(col: ColumnOrName) -> Column:
    return _call("array_min", _col(col))


def array_position(col: ColumnOrName, value: Any) -> Column:
    """1-based position of the first element equal to `value`; 0 if absent."""
    return _call("array_position", _col(col), _lit(value))


def array_remove(col: ColumnOrName, element: Any) -> Column:
    return _call("array_remove", _col(col), _lit(element))


def array_compact(col: ColumnOrName) -> Column:
    return _call("array_compact", _col(col))


def array_append(col: ColumnOrName, value: Any) -> Column:
    return _call("array_append", _col(col), _lit(value))


def array_prepend(col: ColumnOrName, value: Any) -> Column:
    return _call("array_prepend", _col(col), _lit(value))


def array_sort(col: ColumnOrName, comparator: Any = None) -> Column:
    """Ascending, nulls last. A comparator function (a lambda) is not supported yet."""
    if comparator is not None:
        raise AnalysisException("array_sort(col, comparator) with a comparator function is not supported yet; "
                                "use array_sort(col) or sort_array(col, asc)")
    return _call("array_sort", _col(col))


def slice(x: ColumnOrName, start: ColumnOrName | int, length: ColumnOrName | int) -> Column:  # noqa: A001
    """`length` elements from 1-based `start` (negative counts from the end)."""
    return _call("slice", _col(x), _col(start), _col(length))


def flatten(col: ColumnOrName) -> Column:
    return _call("flatten", _col(col))


def arrays_zip(*cols: ColumnOrName) -> Column:
    """Structs of the i-th elements of each array; shorter arrays give nulls."""
    return Column(zip_call(_many(cols)))


# ---------------------------------------------------------------- generators

def explode(col: ColumnOrName) -> Column:
    """One row per array element (`col`) or map entry (`key`, `value`); null and empty give no rows."""
    return _call("explode", _col(col))


def explode_outer(col: ColumnOrName) -> Column:
    """explode, but a null or empty array or map gives one row of nulls."""
    return _call("explode_outer", _col(col))


def posexplode(col: ColumnOrName) -> Column:
    """explode with the 0-based position first (`pos`)."""
    return _call("posexplode", _col(col))


def posexplode_outer(col: ColumnOrName) -> Column:
    return _call("posexplode_outer", _col(col))


def inline(col: ColumnOrName) -> Column:
    """One row per struct of an array of structs, one column per field."""
    return _call("inline", _col(col))


def inline_outer(col: ColumnOrName) -> Column:
    return _call("inline_outer", _col(col))


# ---------------------------------------------------------------- hints

def broadcast(df: Any) -> Any:
    """Mark a DataFrame to be broadcast in a join (Spark's broadcast hint): the planner builds the
    hash table from all of it in every task of the other side, whatever its estimated size."""
    return df.hint("broadcast")


__all__ = [
    "array", "struct", "named_struct", "create_map", "map_from_arrays", "array_repeat", "sequence",
    "element_at", "try_element_at", "get", "map_keys", "map_values", "map_entries", "map_contains_key",
    "array_size", "array_distinct", "array_union", "array_intersect", "array_except", "arrays_overlap",
    "array_join", "array_max", "array_min", "array_position", "array_remove", "array_compact", "array_append",
    "array_prepend", "array_sort", "slice", "flatten", "arrays_zip", "explode", "explode_outer", "posexplode",
    "posexplode_outer", "inline", "inline_outer", "broadcast",
]
