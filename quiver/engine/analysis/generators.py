"""Generators (explode, posexplode, inline and their _outer forms): one input row, many output rows.

A generator is written like a function in a select list (`df.select("a", F.explode("xs"))`,
`SELECT explode(xs) AS (x)`) or as `LATERAL VIEW [OUTER] explode(xs) t AS x`. The analyzer
lifts it out of the select list into a `Generate` node, whose output is its child's columns
plus the generated ones, and projects the select list over that, as Spark does. The
generated columns are named as Spark names them: `col` for an array's elements, `key` and
`value` for a map's entries, `pos` before them for posexplode, the struct's fields for inline.
"""
from __future__ import annotations

from dataclasses import dataclass

from quiver.engine.core import types as T
from quiver.engine.core.errors import AnalysisException
from quiver.engine.core.expressions import (
    Alias,
    AttributeRef,
    Expr,
    ScalarFunction,
    new_expr_id,
)

GENERATORS = frozenset({"explode", "explode_outer", "posexplode", "posexplode_outer", "inline", "inline_outer"})


@dataclass(frozen=True)
class MultiAlias(Expr):
    """`F.posexplode(m).alias("p", "k", "v")` / `SELECT explode(m) AS (k, v)`: names for each generated column."""

    child: Expr
    names: tuple[str, ...]

    def sql(self) -> str:
        return f"{self.child.sql()} AS ({', '.join(self.names)})"


def is_generator(e: Expr) -> bool:
    return isinstance(e, ScalarFunction) and e.name in GENERATORS


def contains_generator(e: Expr) -> bool:
    return any(is_generator(x) for x in e.walk())


def generator_columns(function: str, input_type: T.DataType) -> list[tuple[str, T.DataType]]:
    """The default names and types of the columns `function` makes from a value of `input_type`."""
    base = function.removesuffix("_outer")
    if base == "inline":
        element = input_type.elementType if isinstance(input_type, T.ArrayType) else T.NullType()
        if not isinstance(element, T.StructType):
            raise AnalysisException(f"inline() needs an ARRAY of STRUCTs, but got {input_type.simpleString()}")
        return [(f.name, f.dataType) for f in element.fields]
    if isinstance(input_type, T.MapType):
        columns = [("key", input_type.keyType), ("value", input_type.valueType)]
    elif isinstance(input_type, T.ArrayType):
        columns = [("col", input_type.elementType)]
    elif isinstance(input_type, T.NullType):
        columns = [("col", T.NullType())]
    else:
        raise AnalysisException(f"{base}() needs an ARRAY or MAP, but got {input_type.simpleString()}")
    if base == "posexplode":
        columns.insert(0, ("pos", T.IntegerType()))
    return columns


def split_generator(e: Expr) -> tuple[ScalarFunction, tuple[str, ...] | None] | None:
    """(the generator call, the names given to its columns or None) if `e` is a select-list generator."""
    names: tuple[str, ...] | None = None
    if isinstance(e, MultiAlias):
        names, e = e.names, e.child
    elif isinstance(e, Alias):
        names, e = (e.name,), e.child
    if is_generator(e):
        return e, names
    return None


def generated_attributes(call: ScalarFunction, names: tuple[str, ...] | None) -> tuple[AttributeRef, ...]:
    """Fresh attributes for the columns a resolved generator call makes."""
    columns = generator_columns(call.name, call.args[0].dtype)
    if names is not None and len(names) != len(columns):
        raise AnalysisException(
            f"{call.sql()} makes {len(columns)} columns ({', '.join(n for n, _ in columns)}), "
            f"but {len(names)} names were given: {', '.join(names)}"
        )
    return tuple(AttributeRef(n, t, True, new_expr_id())
                 for n, t in zip(names or [c for c, _ in columns], (t for _, t in columns)))


def check_no_nested_generator(e: Expr) -> None:
    if contains_generator(e):
        inner = next(x for x in e.walk() if is_generator(x))
        raise AnalysisException(
            f"the generator {inner.sql()} cannot be nested inside another expression ({e.sql()}); "
            "select it on its own, e.g. df.select(F.explode(...).alias('x')) and compute on x after"
        )


__all__ = ["GENERATORS", "MultiAlias", "is_generator", "contains_generator", "generator_columns",
           "split_generator", "generated_attributes", "check_no_nested_generator"]
