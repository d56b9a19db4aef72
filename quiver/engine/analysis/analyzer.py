"""The analyzer: resolves column names to typed attributes and inserts Spark's implicit casts.

`analyze(plan)` walks bottom-up; each node's expressions are resolved against its
children's output. A name that matches nothing raises `AnalysisException` naming it, the
closest available column and all of them; a name that matches two columns (a join of two
tables that both have `id`) raises an ambiguity error that says how to qualify it.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace

from quiver.engine.analysis.catalog import active_catalog
from quiver.engine.analysis.column_origins import has_column_origins, resolve_origins, unplaced_references
from quiver.engine.analysis.functions.catalog import lookup
from quiver.engine.analysis.generators import (
    check_no_nested_generator,
    contains_generator,
    generated_attributes,
    is_generator,
    split_generator,
)
from quiver.engine.analysis.time_zones import bind_session_time_zone
from quiver.engine.core import types as T
from quiver.engine.core.errors import AnalysisException, QuiverNotSupported, UnresolvedColumnError, unknown_column
from quiver.engine.core.expressions import (
    NUMBA_UDF,
    UNBOUNDED,
    WINDOW_AGGREGATES,
    AggregateFunction,
    Alias,
    And,
    AttributeRef,
    BinaryArithmetic,
    CaseWhen,
    Cast,
    Comparison,
    Expr,
    In,
    Literal,
    Negate,
    Not,
    Or,
    PythonUDF,
    ScalarFunction,
    SortOrder,
    UnresolvedColumn,
    UnresolvedStar,
    WindowExpression,
    WindowFunction,
    contains_aggregate,
    contains_window,
    new_expr_id,
    output_name,
    transform_expr,
    wider_type,
)
from quiver.engine.core.plan import (
    Aggregate,
    Filter,
    Generate,
    Join,
    LogicalPlan,
    Project,
    Sort,
    SubqueryAlias,
    Union,
    Window,
    transform_up,
)
from quiver.engine.core.subqueries import OuterReference


def analyze(plan: LogicalPlan) -> LogicalPlan:
    """Resolve every name and type in `plan`, then bind the session time zone into it (time_zones.py);
    already-resolved subtrees are left as they are."""
    return bind_session_time_zone(transform_up(plan, _resolve_node))


def _resolve_node(node: LogicalPlan) -> LogicalPlan:
    if isinstance(node, Join):
        return _resolve_join(node)
    node = resolve_origins(node)
    if isinstance(node, Project):
        return _resolve_project(node)
    if isinstance(node, Filter):
        cond = resolve_expression(node.condition, node.child.output)
        _expect_boolean(cond, "filter condition")
        return replace(node, condition=cond)
    if isinstance(node, Aggregate):
        return _resolve_aggregate(node)
    if isinstance(node, Sort):
        return _resolve_sort(node)
    if isinstance(node, Union):
        return _resolve_union(node)
    if not node.resolved and node.children():
        inputs = tuple(a for c in node.children() for a in c.output)
        return node.map_expressions(lambda e: resolve_expression(e, inputs))
    return node


# ---------------------------------------------------------------- nodes


def _is_named(e: Expr) -> bool:
    return isinstance(e, (Alias, AttributeRef))


def _resolve_project(node: Project) -> LogicalPlan:
    if any(contains_generator(p) for p in node.projections):
        expanded = tuple(_expand_stars(node.projections, node.child.output))
        return _resolve_project(lift_generator(node.child, expanded))
    if node.resolved and all(_is_named(p) for p in node.projections) and not any(
            contains_aggregate(p) or contains_window(p) for p in node.projections) and _inputs_hold_references(node):
        # Resolved is not coerced: `SELECT 7 / 2` arrives resolved and named, and still needs its casts.
        coerced = tuple(coerce(p) for p in node.projections)
        if coerced == node.projections:
            return node
        return replace(node, projections=coerced)
    inputs = node.child.output
    named = tuple(_named(e, inputs) for e in _expand_stars(node.projections, inputs))
    if any(contains_aggregate(e) for e in named):
        return _check_aggregate(Aggregate(node.child, (), named))
    if any(contains_window(e) for e in named):
        return _extract_windows(node.child, named)
    return Project(node.child, named)


def _inputs_hold_references(node: LogicalPlan) -> bool:
    """Whether every attribute `node` refers to is one of its inputs' (a column taken from another DataFrame,
    or from a self-join's renamed side, is not, and must be matched again)."""
    inputs = {a.expr_id for c in node.children() for a in c.output}
    return all(ref in inputs for e in node.expressions() for ref in e.references())


def _extract_windows(child: LogicalPlan, projections: tuple[Expr, ...]) -> LogicalPlan:
    """Project(x, [.. f() OVER w ..]) -> Project(Window(x, [f() OVER w AS #n], w), [.. #n ..]).

    One Window node per distinct (PARTITION BY, ORDER BY); they are stacked in order of appearance.
    """
    found: dict[WindowExpression, Alias] = {}
    for p in projections:
        for e in p.walk():
            if isinstance(e, WindowExpression) and e not in found:
                _check_window(e)
                name = p.name if isinstance(p, Alias) and p.child == e else e.sql()
                found[e] = Alias(e, name)
    groups: dict[tuple, list[Alias]] = {}
    for e, alias in found.items():
        groups.setdefault((e.partition_by, e.order_by), []).append(alias)
    plan = child
    for (partition_by, order_by), aliases in groups.items():
        plan = Window(plan, tuple(aliases), partition_by, tuple(order_by))
    refs = {e: a.to_attribute() for e, a in found.items()}

    def swap(e: Expr) -> Expr:
        return refs.get(e, e) if isinstance(e, WindowExpression) else e

    out = []
    for p in projections:
        if isinstance(p, Alias):
            inner = transform_expr(p.child, swap)
            out.append(Alias(inner, p.name, p.expr_id))
        else:
            out.append(transform_expr(p, swap))
    return Project(plan, tuple(out))


def _check_window(e: WindowExpression) -> None:
    f = e.function
    if isinstance(f, AggregateFunction) and any(contains_aggregate(a) for a in f.args):
        raise AnalysisException(f"aggregate {f.sql()} over a window cannot contain another aggregate")
    if not isinstance(f, (AggregateFunction, WindowFunction)):
        raise AnalysisException(f"{f.sql()} cannot be used with OVER; use a window or aggregate function")
    if isinstance(f, AggregateFunction) and f.name not in WINDOW_AGGREGATES:
        raise QuiverNotSupported(
            f"{f.sql()} over a window is not supported yet; over a window Quiver computes "
            f"{', '.join(WINDOW_AGGREGATES)}; compute {f.name} with groupBy(...).agg(...) and join it back")
    if e.frame is not None and e.frame[0] == "range" and any(b not in _FRAME_EDGES for b in e.frame[1:]):
        if len(e.order_by) != 1 or not isinstance(e.order_by[0].dtype, T.NumericType):
            keys = ", ".join(f"{o.sql()} ({o.dtype.simpleString()})" for o in e.order_by) or "none"
            raise AnalysisException(
                f"a RANGE frame with offsets needs exactly one numeric ORDER BY key, got {keys}: {e.sql()}; "
                "use a ROWS frame to count rows instead"
            )


# Frame bounds that are not value offsets: UNBOUNDED PRECEDING, UNBOUNDED FOLLOWING, CURRENT ROW.
_FRAME_EDGES = (UNBOUNDED, -UNBOUNDED - 1, 0)


def _resolve_aggregate(node: Aggregate) -> LogicalPlan:
    if node.resolved and all(_is_named(a) for a in node.aggregates):
        return node
    inputs = node.child.output
    grouping = tuple(resolve_expression(e, inputs) for e in node.grouping)
    aggs = tuple(_named(e, inputs) for e in _expand_stars(node.aggregates, inputs))
    return _check_aggregate(Aggregate(node.child, grouping, aggs))


def _check_aggregate(node: Aggregate) -> Aggregate:
    """Every column an aggregate output reads outside an aggregate function must be grouped."""
    grouped = {e.expr_id for e in node.grouping if isinstance(e, AttributeRef)}
    grouped_exprs = [e for e in node.grouping if not isinstance(e, AttributeRef)]

    def check(e: Expr) -> None:
        if isinstance(e, AggregateFunction):
            for arg in e.args:
                if contains_aggregate(arg):
                    raise AnalysisException(f"aggregate function {e.sql()} contains another aggregate function")
            return
        if any(same_expr(e, g) for g in grouped_exprs):
            return
        if isinstance(e, AttributeRef):
            if e.expr_id not in grouped:
                raise AnalysisException(
                    f"column '{e.name}' is neither grouped nor aggregated; add it to groupBy() "
                    f"or wrap it in an aggregate such as first({e.name}). Grouped by: "
                    f"{', '.join(g.sql() for g in node.grouping) or '(nothing)'}"
                )
            return
        for c in e.children():
            check(c)

    for agg in node.aggregates:
        check(agg.child if isinstance(agg, Alias) else agg)
    return node


def same_expr(a: Expr, b: Expr) -> bool:
    return _strip_for_compare(a) == _strip_for_compare(b)


def _strip_for_compare(e: Expr) -> Expr:
    return transform_expr(e, lambda x: x.child if isinstance(x, Alias) else x)


def _resolve_sort(node: Sort) -> LogicalPlan:
    if node.resolved:
        return node
    inputs = node.child.output
    try:
        orders = tuple(_as_sort_order(resolve_expression(o, inputs)) for o in node.orders)
        return replace(node, orders=orders)
    except AnalysisException:
        child = node.child
        if not isinstance(child, Project):
            raise
    # Spark lets you sort by a column the projection dropped: resolve it below the
    # projection, carry it through, and project it away again above the sort.
    below = child.child.output
    orders = tuple(_as_sort_order(resolve_expression(o, inputs + below)) for o in node.orders)
    present = {a.expr_id for a in inputs}
    missing = [a for a in below if a.expr_id not in present and any(a.expr_id in o.references() for o in orders)]
    widened = Project(child.child, child.projections + tuple(missing))
    return Project(Sort(widened, orders, node.is_global), tuple(inputs))


def _as_sort_order(e: Expr) -> SortOrder:
    return e if isinstance(e, SortOrder) else SortOrder(e, True, None)


def _resolve_join(node: Join) -> LogicalPlan:
    left_ids = {a.expr_id for a in node.left.output}
    shared = left_ids & {a.expr_id for a in node.right.output}
    if node.resolved and not shared and not has_column_origins(node):
        return node
    if shared:
        node = replace(node, right=fresh_ids(node.right, shared))
    if node.condition is None:
        return resolve_origins(node)
    bound = unplaced_references(node) & shared
    if bound:
        raise AnalysisException(
            "join condition is ambiguous: both sides come from the same DataFrame, so a column such as "
            f"'{next(a.name for a in node.left.output if a.expr_id in bound)}' could be either side. "
            "Alias both sides (df.alias('a'), df2.alias('b')) and use F.col('a.x') == F.col('b.y')."
        )
    node = resolve_origins(node)  # `df.k == df2.k` with df2 derived from df: each to its own side
    assert node.condition is not None
    cond = resolve_expression(node.condition, node.left.output + node.right.output)
    _expect_boolean(cond, "join condition")
    return replace(node, condition=cond)


def fresh_ids(plan: LogicalPlan, ids: set[int] | None = None) -> LogicalPlan:
    """Re-expose `plan`'s columns with the ids in `ids` (all when None) under new ids, so a self-join's sides are
    distinct. The others keep their ids, so a column taken from the right side's DataFrame still finds it."""
    inner = plan.child if isinstance(plan, SubqueryAlias) else plan
    renamed = Project(inner, tuple(Alias(a.with_qualifier(()), a.name, new_expr_id())
                                   if ids is None or a.expr_id in ids else a.with_qualifier(())
                                   for a in inner.output), plan_id=inner.plan_id)
    # The renamed copy stands for the DataFrame it renames (as Spark's deduplicated copy of a relation keeps its
    # plan id), so a column taken from that DataFrame resolves to the renamed column.
    return replace(plan, child=renamed) if isinstance(plan, SubqueryAlias) else renamed


def _resolve_union(node: Union) -> LogicalPlan:
    return Union(widen_set_operation("UNION", node.inputs))


def widen_set_operation(operation: str, inputs: Sequence[LogicalPlan]) -> tuple[LogicalPlan, ...]:
    """The inputs of a set operation, matched by position, each column cast to its wider type over all inputs.

    Spark's WidenSetOperationTypes, with its errors: `operation` (UNION, INTERSECT ALL, ...) names the
    operation when the inputs differ in their number of columns or a column has no common type.
    """
    first = inputs[0].output
    for i, child in enumerate(inputs[1:], start=1):
        if len(child.output) != len(first):
            raise AnalysisException(
                f"{operation} can only be performed on inputs with the same number of columns, but the first "
                f"input has {len(first)} columns ({_names(first)}) and the {_ordinal(i)} input has "
                f"{len(child.output)} columns ({_names(child.output)})"
            )
    types = []
    for c, column in enumerate(first):
        widened = column.dtype
        for i, child in enumerate(inputs[1:], start=1):
            other = child.output[c].dtype
            try:
                widened = wider_type(widened, other)
            except AnalysisException as exc:
                raise AnalysisException(
                    f"{operation} can only be performed on tables with compatible column types. The "
                    f"{_ordinal(c)} column ('{column.name}') of the {_ordinal(i)} table is {other.simpleString()} "
                    f"type which is not compatible with {column.dtype.simpleString()} at the same column of the "
                    "first table; cast one of them first"
                ) from exc
        types.append(widened)
    return tuple(_cast_columns(child, types) for child in inputs)


def _cast_columns(plan: LogicalPlan, types: list[T.DataType]) -> LogicalPlan:
    if all(a.dtype == t for a, t in zip(plan.output, types)):
        return plan
    return Project(plan, tuple(a if a.dtype == t else Alias(Cast(a, t), a.name) for a, t in zip(plan.output, types)))


def _names(columns: Sequence[AttributeRef]) -> str:
    return ", ".join(a.name for a in columns)


def _ordinal(i: int) -> str:
    """0 -> "first", as Spark's error messages count columns and inputs."""
    return ("first", "second", "third")[i] if i < 3 else f"{i + 1}th"


# ---------------------------------------------------------------- expressions


def _expand_stars(exprs: tuple[Expr, ...], inputs: tuple[AttributeRef, ...]) -> list[Expr]:
    out: list[Expr] = []
    for e in exprs:
        if isinstance(e, UnresolvedColumn) and e.parts[-1] == "*":
            e = UnresolvedStar(".".join(e.parts[:-1]) or None)
        if isinstance(e, UnresolvedStar):
            if e.qualifier is None:
                out.extend(inputs)
            else:
                matched = [a for a in inputs if a.qualifier and a.qualifier[-1].lower() == e.qualifier.lower()]
                if not matched:
                    raise AnalysisException(
                        f"cannot resolve '{e.qualifier}.*': no input is aliased '{e.qualifier}'; aliases in scope: "
                        f"{', '.join(sorted({a.qualifier[-1] for a in inputs if a.qualifier})) or '(none)'}"
                    )
                out.extend(matched)
        else:
            out.append(e)
    return out


def _named(e: Expr, inputs: tuple[AttributeRef, ...]) -> Expr:
    """Resolve a select-list entry and give it a name (an alias unless it is a plain column)."""
    if isinstance(e, Alias):
        return Alias(resolve_expression(e.child, inputs), e.name, e.expr_id)
    resolved_refs = transform_expr(e, lambda x: _resolve_reference(x, inputs))
    name = output_name(resolved_refs)
    resolved = coerce(resolved_refs)
    if isinstance(resolved, AttributeRef):
        return resolved
    return Alias(resolved, name)


def resolve_expression(e: Expr, inputs: tuple[AttributeRef, ...]) -> Expr:
    """Resolve names in `e` against `inputs`, then insert Spark's implicit casts."""
    return coerce(transform_expr(e, lambda x: _resolve_reference(x, inputs)))


# The columns of the queries around a subquery being analyzed, innermost last.
_OUTER_SCOPES: ContextVar[tuple[tuple[AttributeRef, ...], ...]] = ContextVar("outer_scopes", default=())


@contextmanager
def outer_scope(inputs: tuple[AttributeRef, ...]) -> Iterator[None]:
    """Analyze a subquery inside this block: names it cannot resolve itself may refer to `inputs`."""
    token = _OUTER_SCOPES.set(_OUTER_SCOPES.get() + (inputs,))
    try:
        yield
    finally:
        _OUTER_SCOPES.reset(token)


@contextmanager
def without_outer_scope() -> Iterator[None]:
    """Resolve names against the given columns only: a first attempt whose fallback must come before
    an enclosing query's columns (ORDER BY reads the FROM columns the select list dropped)."""
    token = _OUTER_SCOPES.set(())
    try:
        yield
    finally:
        _OUTER_SCOPES.reset(token)


def _resolve_reference(e: Expr, inputs: tuple[AttributeRef, ...]) -> Expr:
    if isinstance(e, UnresolvedColumn):
        return _resolve_column(e.parts, inputs)
    if isinstance(e, AttributeRef):
        return _rebind(e, inputs)
    if isinstance(e, UnresolvedStar):
        raise AnalysisException(f"'{e.sql()}' is only allowed in a select list or count(*)")
    return e


def _resolve_column(parts: tuple[str, ...], inputs: tuple[AttributeRef, ...]) -> Expr:
    """A name of this query's input, else of an enclosing query's (a correlated reference)."""
    try:
        return resolve_name(parts, inputs)
    except UnresolvedColumnError:
        for scope in reversed(_OUTER_SCOPES.get()):
            try:
                found = resolve_name(parts, scope)
            except AnalysisException:
                continue
            if isinstance(found, AttributeRef):
                return OuterReference(found)
        raise


def _rebind(attr: AttributeRef, inputs: tuple[AttributeRef, ...]) -> AttributeRef:
    """A column taken from a DataFrame (`df.x`) is matched by id, else by its name."""
    for a in inputs:
        if a.expr_id == attr.expr_id:
            return a if a.name == attr.name else replace(a, name=attr.name)
    same = [a for a in inputs if a.name == attr.name]
    if len(same) == 1:
        return same[0]
    if not same:
        raise unknown_column(attr.name, [a.name for a in inputs])
    raise AnalysisException(
        f"column '{attr.name}' is ambiguous: it matches {len(same)} input columns. "
        "Alias the DataFrames (df.alias('a')) and refer to 'a.name', or rename one side first."
    )


def resolve_name(parts: tuple[str, ...], inputs: tuple[AttributeRef, ...]) -> Expr:
    """Find the attribute a (possibly qualified) name refers to; case-insensitive like Spark."""
    name = parts[-1]
    candidates: list[AttributeRef] = []
    if len(parts) == 1:
        candidates = [a for a in inputs if a.name == name] or [a for a in inputs if a.name.lower() == name.lower()]
    else:
        qual = [p.lower() for p in parts[:-1]]
        candidates = [
            a for a in inputs
            if a.name.lower() == name.lower() and [q.lower() for q in a.qualifier[-len(qual):]] == qual
        ]
        if not candidates:
            base = resolve_name(parts[:1], inputs) if any(a.name.lower() == parts[0].lower() for a in inputs) else None
            if base is not None and isinstance(base.dtype, (T.StructType, T.MapType)):
                # `s.a` reads a struct's field, `m.key` a map's value (Spark's ExtractValue).
                out: Expr = base
                for p in parts[1:]:
                    out = ScalarFunction("get_field", (out, Literal.of(p)))
                return out
    unique = {a.expr_id: a for a in candidates}
    if len(unique) == 1:
        found = next(iter(unique.values()))
        # Spark keeps the spelling the user wrote: select("NAME") on column `name` is named NAME.
        return found if found.name == name else replace(found, name=name)
    full = ".".join(parts)
    if not unique:
        shown = [".".join(a.qualifier + (a.name,)) if len(parts) > 1 and a.qualifier else a.name for a in inputs]
        raise unknown_column(full, shown)
    quals = sorted({".".join(a.qualifier) for a in unique.values() if a.qualifier})
    hint = (f" Qualify it: {', '.join(q + '.' + name for q in quals)}." if len(quals) > 1
            else " Alias the DataFrames (df.alias('a')) and refer to 'a." + name + "'.")
    raise AnalysisException(f"column '{full}' is ambiguous: it matches {len(unique)} input columns.{hint}")


def _expect_boolean(e: Expr, what: str) -> None:
    if not isinstance(e.dtype, (T.BooleanType, T.NullType)):
        raise AnalysisException(f"{what} must be boolean, but '{e.sql()}' is {e.dtype.simpleString()}")


# ---------------------------------------------------------------- implicit casts


def coerce(e: Expr) -> Expr:
    """Insert the casts Spark inserts implicitly, bottom-up."""
    return transform_expr(e, _coerce_node)


def _cast(e: Expr, t: T.DataType) -> Expr:
    if e.dtype == t:
        return e
    if isinstance(e, Literal) and e.value is None:
        return Literal(None, t)
    return Cast(e, t)


def _coerce_node(e: Expr) -> Expr:
    if not e.resolved:
        return e
    if isinstance(e, BinaryArithmetic):
        return _coerce_arithmetic(e)
    if isinstance(e, Comparison):
        lt, rt = _comparison_types(e.left.dtype, e.right.dtype, e.sql)
        return replace(e, left=_cast(e.left, lt), right=_cast(e.right, rt))
    if isinstance(e, (And, Or)):
        for side in (e.left, e.right):
            _expect_boolean(side, f"operand of {type(e).__name__.upper()}")
        return e
    if isinstance(e, Not):
        _expect_boolean(e.child, "operand of NOT")
        return e
    if isinstance(e, Negate):
        if isinstance(e.child.dtype, T.StringType):
            return Negate(Cast(e.child, T.DoubleType()))
        return e
    if isinstance(e, In):
        target = e.child.dtype
        for v in e.values:
            target, _ = _comparison_types(target, v.dtype, e.sql)
        return In(_cast(e.child, target), tuple(_cast(v, target) for v in e.values))
    if isinstance(e, CaseWhen):
        for c in e.conditions:
            _expect_boolean(c, "CASE WHEN condition")
        t = e.dtype
        return CaseWhen(e.conditions, tuple(_cast(v, t) for v in e.values),
                        _cast(e.else_value, t) if e.else_value is not None else None)
    if isinstance(e, ScalarFunction):
        return _coerce_function(e)
    if isinstance(e, PythonUDF):
        return check_udf_call(e)
    if isinstance(e, WindowFunction) and e.name in ("lag", "lead"):
        value, offset, default = e.args
        return WindowFunction(e.name, (value, offset, _cast(default, value.dtype)))
    if isinstance(e, AggregateFunction):
        if e.name in ("sum", "avg", "stddev", "stddev_samp", "stddev_pop", "variance", "var_samp",
                      "var_pop") and e.args:
            if isinstance(e.args[0].dtype, T.StringType):
                return replace(e, args=(Cast(e.args[0], T.DoubleType()),) + e.args[1:])
        e.dtype  # noqa: B018 — raises AnalysisException for unsupported argument types
        return e
    return e


def _coerce_arithmetic(e: BinaryArithmetic) -> Expr:
    lt, rt = e.left.dtype, e.right.dtype
    if isinstance(lt, T.StringType):
        lt = T.DoubleType()
    if isinstance(rt, T.StringType):
        rt = T.DoubleType()
    if isinstance(lt, T.NullType) and isinstance(rt, T.NullType):
        lt = rt = T.DoubleType()
    for t, side in ((lt, e.left), (rt, e.right)):
        if not isinstance(t, (T.NumericType, T.NullType)):
            raise AnalysisException(
                f"cannot apply '{e.op}' to {side.sql()} of type {side.dtype.simpleString()} in {e.sql()}; "
                "arithmetic needs numeric columns (cast strings with .cast('double'))"
            )
    if e.op == "/" and not (isinstance(lt, T.DecimalType) and isinstance(rt, T.DecimalType)):
        if isinstance(lt, T.DecimalType) and isinstance(rt, T.IntegralType):
            rt = _decimal_for_operand(e.right, rt)
        elif isinstance(rt, T.DecimalType) and isinstance(lt, T.IntegralType):
            lt = _decimal_for_operand(e.left, lt)
        else:
            lt = rt = T.DoubleType()
        return replace(e, left=_cast(e.left, lt), right=_cast(e.right, rt))
    if isinstance(lt, T.DecimalType) and isinstance(rt, T.IntegralType):
        rt = _decimal_for_operand(e.right, rt)
    elif isinstance(rt, T.DecimalType) and isinstance(lt, T.IntegralType):
        lt = _decimal_for_operand(e.left, lt)
    if isinstance(lt, T.DecimalType) and isinstance(rt, T.DecimalType):
        return replace(e, left=_cast(e.left, lt), right=_cast(e.right, rt))
    common = T.common_numeric_type(lt, rt)
    return replace(e, left=_cast(e.left, common), right=_cast(e.right, common))


def _decimal_for_operand(e: Expr, t: T.DataType) -> T.DecimalType:
    """An integer literal counts with its own digits (Spark: `price + 1` is decimal(p+1, s)), a column with
    its type's."""
    if isinstance(e, Literal) and isinstance(e.value, int):
        return T.DecimalType(max(1, len(str(abs(e.value)))), 0)
    return T.decimal_for_integral(t)


def _comparison_types(a: T.DataType, b: T.DataType, where: Callable[[], str]) -> tuple[T.DataType, T.DataType]:
    """The types both sides of a comparison are cast to; `where` renders the comparison for an error only,
    since rendering an IN list once per value made planning quadratic in its length."""
    if a == b:
        return a, b
    if isinstance(a, T.NullType):
        return b, b
    if isinstance(b, T.NullType):
        return a, a
    if isinstance(a, T.NumericType) and isinstance(b, T.NumericType):
        c = T.common_numeric_type(a, b)
        return c, c
    if isinstance(a, T.StringType) and not isinstance(b, T.StringType):
        return b, b
    if isinstance(b, T.StringType):
        return a, a
    try:
        c = wider_type(a, b, "a comparison")
        return c, c
    except AnalysisException:
        raise AnalysisException(
            f"cannot compare {a.simpleString()} with {b.simpleString()} in {where()}; cast one side first"
        ) from None


def _coerce_function(e: ScalarFunction) -> Expr:
    catalog = active_catalog()
    registered = catalog.function(e.name) if catalog is not None else None
    if registered is not None:  # spark.udf.register'ed functions come first, as Spark's temporary functions
        call = registered.call(e.args)
        return check_udf_call(call) if isinstance(call, PythonUDF) else call
    spec = lookup(e.name)
    n = len(e.args)
    if n < spec.min_args or (spec.max_args is not None and n > spec.max_args):
        want = (f"{spec.min_args}" if spec.max_args == spec.min_args
                else f"{spec.min_args} to {spec.max_args if spec.max_args is not None else 'any number of'}")
        raise AnalysisException(f"function {e.name} takes {want} arguments, but {n} were given: {e.sql()}")
    if spec.input_types is None:
        return e
    targets = spec.input_types([a.dtype for a in e.args])
    args = tuple(a if t is None else _cast(a, t) for a, t in zip(e.args, targets))
    return ScalarFunction(e.name, args)


__all__ = ["analyze", "resolve_expression", "resolve_name", "coerce", "fresh_ids", "widen_set_operation",
           "check_udf_call", "lift_generator", "lateral_view"]


def check_udf_call(e: PythonUDF) -> PythonUDF:
    """Analysis-time checks of a resolved UDF call: a numba UDF takes numeric and boolean columns
    only, and is compiled for their types now, so a bad argument fails on the line that names it."""
    if e.kind != NUMBA_UDF:
        return e
    dtypes = []
    for i, arg in enumerate(e.args, start=1):
        dtype = T.numpy_dtype(arg.dtype)
        if dtype is None:
            raise AnalysisException(
                f"argument {i} ({arg.sql()}) of the numba UDF {e.name} is {arg.dtype.simpleString()}; "
                "engine='numba' takes numeric and boolean columns (tinyint, smallint, int, bigint, float, double, "
                "boolean). Use the default engine for other types, or cast the column")
        dtypes.append(dtype)
    e.function.compiled(*dtypes)
    return e


# ---------------------------------------------------------------- generators


def lift_generator(child, projections: tuple[Expr, ...]):
    """Project(child, [a, explode(xs) AS x, b]) -> Project(Generate(child, explode(xs), [x]), [a, x, b]).

    `projections` have their stars expanded already (against `child`'s columns, not the generated ones).
    """
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
