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
    Alias, AttributeRef, Expr, ScalarFunction, new_expr_id,
)
from quiver.engine.core.plan import Generate, Project

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


def lift_generator(child, projections: tuple[Expr, ...]):
    """Project(child, [a, explode(xs) AS x, b]) -> Project(Generate(child, explode(xs), [x]), [a, x, b]).

    `projections` have their stars expanded already (against `child`'s columns, not the generated ones).
    """
    from quiver.engine.analysis.analyzer import resolve_expression
    found = [split_generator(p) for p in projections]
    calls = [(i, g) for i, g in enumerate(found) if g is not None]
    for p, g in zip(projections, found):
        if g is None:
            check_no_nested_generator(p)
        else:
            for a in g[0].args:
                check_no_nested_generator(a)
    # Several generators in one select (Spark 4 allows it) stack: this lifts the first, and
    # resolving the Project over it lifts the next, so each row meets every combination.
    index, (call, names) = calls[0]
    resolved = resolve_expression(call, child.output)
    attributes = generated_attributes(resolved, names)
    base = resolved.name.removesuffix("_outer")
    generate = Generate(child, ScalarFunction(base, resolved.args), resolved.name.endswith("_outer"), attributes)
    return Project(generate, projections[:index] + attributes + projections[index + 1:])


def lateral_view(child, call: Expr, names: tuple[str, ...] | None, outer: bool, alias: str | None):
    """`FROM child LATERAL VIEW [OUTER] explode(xs) alias AS names`: a Generate whose columns are
    qualified by the view's alias (`alias.name`, `alias.*`)."""
    from quiver.engine.analysis.analyzer import resolve_expression
    if not is_generator(call):
        raise AnalysisException(f"LATERAL VIEW needs a generator (explode, posexplode, inline, ...), got {call.sql()}")
    for a in call.args:
        check_no_nested_generator(a)
    resolved = resolve_expression(call, child.output)
    attributes = generated_attributes(resolved, names)
    if alias:
        attributes = tuple(a.with_qualifier((alias,)) for a in attributes)
    base = resolved.name.removesuffix("_outer")
    return Generate(child, ScalarFunction(base, resolved.args), outer or resolved.name.endswith("_outer"), attributes)
