"""`spark.sql(text)`: a Spark SQL query as a logical plan.

sqlglot parses the text (the dialect and the expression half live in `sql.expressions`);
this module turns the query tree into plan nodes: FROM with joins, WHERE, GROUP BY and
HAVING, the select list with its windows (`sql.windows`), QUALIFY, DISTINCT, ORDER BY, LIMIT,
set operations and WITH. Temp-view statements are run by `sql.views`. Names (temp views,
registered functions) come from the session's `SessionCatalog`. Joins, set operations,
aggregates, sorts and limits are built by `analysis.builder`, as the DataFrame API builds them.

Each clause's plan is analyzed as soon as it is built, so the clause above it sees real
columns: USING joins need both sides' keys, ordinals and select-list aliases need the select
list's output, and INTERSECT needs both inputs' columns. `analyze` leaves resolved subtrees as
they are, so the session re-analyzing the result costs nothing.
"""
from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from sqlglot import exp

from quiver.engine.analysis import builder
from quiver.engine.analysis.analyzer import (
    analyze,
    lateral_view,
    outer_scope,
    resolve_expression,
    resolve_name,
    without_outer_scope,
)
from quiver.engine.analysis.catalog import SessionCatalog
from quiver.engine.analysis.generators import MultiAlias, is_generator
from quiver.engine.analysis.grouping_sets import grouping_sets_sql
from quiver.engine.core.errors import AnalysisException, ParseException
from quiver.engine.core.expressions import (
    AggregateFunction,
    Alias,
    AttributeRef,
    Expr,
    SortOrder,
    UnresolvedColumn,
    UnresolvedStar,
    WindowExpression,
    contains_aggregate,
    contains_window,
    strip_alias,
    substitute_attributes,
)
from quiver.engine.core.plan import Filter, LogicalPlan, Project, SubqueryAlias, Union
from quiver.engine.sql.display import display_name, name_select_item
from quiver.engine.sql.expressions import ExpressionTranslator, parse_expression, parse_sql, sort_order
from quiver.engine.sql.pivot import pivot_relation
from quiver.engine.sql.views import STATEMENTS, run_statement
from quiver.engine.sql.windows import WindowInputs, aggregates_rows

# Scopes of WITH names, innermost last: each maps a lower-case CTE name to its analyzed plan.
Scopes = tuple[dict[str, LogicalPlan], ...]

# Select clauses Quiver does not run yet, and what the user can do instead.
_UNSUPPORTED_CLAUSES = {
    "distribute": ("DISTRIBUTE BY", "use df.repartition(...)"),
    "cluster": ("CLUSTER BY", "use df.repartition(...).sortWithinPartitions(...)"),
}

# Hidden columns carry HAVING and QUALIFY conditions and ORDER BY keys the select list does not show.
_HAVING_COLUMN = "__quiver_having"
_QUALIFY_COLUMN = "__quiver_qualify"
_SORT_COLUMN = "__quiver_sort_{}"


def sql_to_plan(catalog: SessionCatalog, query: str) -> LogicalPlan:
    """The plan of one Spark SQL query (SELECT, WITH, VALUES, set operations) over the catalog's temp views.

    A temp-view statement (CREATE VIEW, DROP VIEW, CACHE TABLE, ...) runs now and gives an empty plan.
    """
    nodes = parse_sql(query, "SQL query")
    if len(nodes) != 1:
        raise ParseException(f"spark.sql() runs one statement at a time, but got {len(nodes)}: {query!r}")
    node = nodes[0]
    if isinstance(node, STATEMENTS):
        return run_statement(catalog, node, lambda q: QueryTranslator(catalog, query).query(q, ()))
    if not isinstance(node, (exp.Query, exp.Values)):
        raise ParseException(
            f"only queries (SELECT, WITH, VALUES, UNION/INTERSECT/EXCEPT) and temp-view statements (CREATE/DROP "
            f"TEMPORARY VIEW, CACHE/UNCACHE TABLE) are supported, not a {node.key.upper()} statement: {query!r}; "
            "register data with df.createOrReplaceTempView(name)"
        )
    return QueryTranslator(catalog, query).query(node, ())


class QueryTranslator:
    """Turns the sqlglot tree of one query into an analyzed logical plan."""

    def __init__(self, catalog: SessionCatalog, text: str):
        self.catalog = catalog
        self.exprs = ExpressionTranslator(text, self._subquery, catalog.function)
        # The clause being translated: its input columns and WITH scopes, which a subquery in it can see.
        self._clause: tuple[tuple[AttributeRef, ...], Scopes] = ((), ())
        # Inside a subquery, tables get fresh column ids: a decorrelated subquery is joined to
        # the query around it, which may read the same view.
        self._subquery_depth = 0

    @contextmanager
    def _in_clause(self, inputs: tuple[AttributeRef, ...], scopes: Scopes) -> Iterator[None]:
        saved, self._clause = self._clause, (inputs, scopes)
        try:
            yield
        finally:
            self._clause = saved

    def _subquery(self, node: exp.Expression) -> LogicalPlan:
        """The plan of a subquery inside an expression; names it does not define may be the clause's columns."""
        inputs, scopes = self._clause
        self._subquery_depth += 1
        try:
            with outer_scope(inputs), self._in_clause((), scopes):
                return self.query(node, scopes)
        finally:
            self._subquery_depth -= 1

    # ---------------------------------------------------------- queries

    def query(self, node: exp.Expression, scopes: Scopes) -> LogicalPlan:
        """Any query expression: SELECT, a set operation, VALUES or a parenthesized query."""
        scopes = self._with(node, scopes)
        if isinstance(node, exp.Select):
            return self._select(node, scopes)
        if isinstance(node, exp.SetOperation):
            return self._set_operation(node, scopes)
        if isinstance(node, exp.Subquery):
            plan = self.query(node.this, scopes)
            return self._limit(self._order_output(plan, node), node)
        if isinstance(node, exp.Values):
            return self._values(node)
        raise self.exprs.unsupported(node, "this kind of query")

    def _with(self, node: exp.Expression, scopes: Scopes) -> Scopes:
        """Add the node's WITH names: each CTE sees the ones before it, the query sees all."""
        with_ = node.args.get("with_") or node.args.get("with")
        if with_ is None:
            return scopes
        if with_.args.get("recursive"):
            raise self.exprs.unsupported(with_, "WITH RECURSIVE")
        scope: dict[str, LogicalPlan] = {}
        inner = scopes + (scope,)
        for cte in with_.expressions:
            plan = self.query(cte.this, inner)
            scope[cte.alias.lower()] = self._rename_columns(plan, cte.args.get("alias"), f"WITH {cte.alias}")
        return inner

    def _select(self, node: exp.Select, scopes: Scopes) -> LogicalPlan:
        for arg, (what, hint) in _UNSUPPORTED_CLAUSES.items():
            if node.args.get(arg):
                raise self.exprs.unsupported(node, what, hint)
        distinct = node.args.get("distinct")
        if distinct is not None and distinct.args.get("on"):
            raise self.exprs.unsupported(node, "DISTINCT ON")
        has_from = (node.args.get("from_") or node.args.get("from")) is not None
        child = self._from(node, scopes) if has_from else self._one_row()
        for lateral in node.args.get("laterals") or []:
            child = self._lateral_view(child, lateral, scopes)
        with self.exprs.window_clause(node.args.get("windows") or []):
            where = node.args.get("where")
            if where is not None:
                with self._in_clause(child.output, scopes):
                    condition = self.exprs.clean(where.this)
                    _no_window_in(condition, "WHERE", "filter on a window function with QUALIFY")
                    child = analyze(Filter(child, condition))
            with self._in_clause(child.output, scopes):
                return self._select_list(node, child, has_from, distinct)

    def _select_list(self, node: exp.Select, child: LogicalPlan, has_from: bool, distinct: exp.Expression | None
                     ) -> LogicalPlan:
        """The select list, GROUP BY, HAVING, ORDER BY and LIMIT over the FROM/WHERE plan `child`."""
        items = self._select_items(node, child.output, has_from)
        order_node = node.args.get("order") or node.args.get("sort")
        orders = list(order_node.expressions) if order_node is not None else []
        group, having = node.args.get("group"), node.args.get("having")
        order_exprs = [self.exprs.clean(o.this) for o in orders]
        is_aggregate = (group is not None or having is not None or any(aggregates_rows(i) for i in items)
                        or any(aggregates_rows(o) for o in order_exprs))
        # SORT BY sorts within each partition; ORDER BY sorts globally.
        is_global = node.args.get("order") is not None
        select = _SelectBuilder(self, child, tuple(items), distinct is not None, is_global)
        qualify = node.args.get("qualify")
        condition = select.qualify(qualify, is_aggregate) if qualify is not None else None
        windowed = condition is not None or any(contains_window(e) for e in items + order_exprs)
        plan = (select.aggregate(group, having, orders, condition, windowed) if is_aggregate
                else select.project(orders, condition))
        return self._limit(plan, node)

    def _select_items(self, node: exp.Select, inputs: tuple[AttributeRef, ...], has_from: bool) -> list[Expr]:
        items: list[Expr] = []
        for e in node.expressions:
            if isinstance(e, exp.Aliases):
                call = self.exprs.clean(e.this)
                if not is_generator(call):
                    raise self.exprs.unsupported(e, "a multi-column alias AS (a, b) on anything but a generator")
                items.append(MultiAlias(call, tuple(i.name for i in e.expressions)))
                continue
            if isinstance(e, exp.Alias):
                items.append(Alias(self.exprs.clean(e.this), e.alias))
                continue
            item = self.exprs.translate(e)
            if isinstance(item, UnresolvedStar) and not has_from:
                raise AnalysisException(f"'{item.sql()}' needs a FROM clause: SELECT * without FROM has no columns")
            items.append(name_select_item(item, inputs))
        return items

    def _limit(self, plan: LogicalPlan, node: exp.Expression) -> LogicalPlan:
        """LIMIT n and OFFSET m, the offset first: LIMIT 10 OFFSET 5 returns rows 6 to 15."""
        offset, limit = node.args.get("offset"), node.args.get("limit")
        if offset is not None:
            plan = builder.offset(plan, _row_count(offset.expression, "OFFSET"))
        if limit is not None:
            plan = builder.limit(plan, _row_count(limit.expression, "LIMIT"))
        return plan

    def _order_output(self, plan: LogicalPlan, node: exp.Expression) -> LogicalPlan:
        """ORDER BY over a query's output only (set operations, parenthesized queries)."""
        order = node.args.get("order")
        if order is None:
            return plan
        orders = [self.order_key(o, plan.output, "the query's output") for o in order.expressions]
        if any(o is None for o in orders):
            bad = next(o.this for o, r in zip(order.expressions, orders) if r is None)
            raise AnalysisException(
                f"ORDER BY {bad.sql(dialect='spark')} must name a column of the query's output: "
                f"{', '.join(a.name for a in plan.output)}"
            )
        return builder.sort(plan, orders)

    def order_key(self, node: exp.Ordered, output: tuple[AttributeRef, ...], where: str) -> SortOrder | None:
        """An ORDER BY item (a position, a name or an expression) over `output`; None where it needs other columns."""
        ordinal = _ordinal(node.this)
        if ordinal is not None:
            return sort_order(_by_position(ordinal, output, "ORDER BY", where), node)
        e = self.exprs.clean(node.this)
        if contains_aggregate(e) or contains_window(e):
            return None
        try:
            # Not an enclosing query's column yet: the caller first looks below the select list.
            with without_outer_scope():
                return sort_order(resolve_expression(e, output), node)
        except AnalysisException:
            return None

    def _lateral_view(self, child: LogicalPlan, lateral: exp.Lateral, scopes: Scopes) -> LogicalPlan:
        """`LATERAL VIEW [OUTER] explode(xs) t AS a, b`: the generated columns join each row of `child`."""
        if not lateral.args.get("view"):
            raise self.exprs.unsupported(lateral, "LATERAL (subquery)", "use LATERAL VIEW explode(...) or a join")
        alias = lateral.args.get("alias")
        names = tuple(c.name for c in alias.columns) if alias is not None and alias.columns else None
        with self._in_clause(child.output, scopes):
            call = self.exprs.clean(lateral.this)
        return lateral_view(child, call, names, bool(lateral.args.get("outer")),
                            alias.name if alias is not None and alias.name else None)

    # ---------------------------------------------------------- FROM

    def _from(self, node: exp.Select, scopes: Scopes) -> LogicalPlan:
        from_ = node.args.get("from_") or node.args.get("from")
        plan = self._relation(from_.this, scopes)
        for join in node.args.get("joins") or []:
            plan = self._join(plan, join, scopes)
        return plan

    def _relation(self, node: exp.Expression, scopes: Scopes) -> LogicalPlan:
        """One FROM item: a temp view or CTE, a subquery, VALUES or range(...)."""
        alias = node.args.get("alias")
        name = alias.name if alias is not None and alias.name else None
        if isinstance(node, exp.Table):
            for arg, what in (("sample", "TABLESAMPLE"), ("laterals", "LATERAL VIEW")):
                if node.args.get(arg):
                    raise self.exprs.unsupported(node, what)
            if isinstance(node.this, exp.Anonymous):
                plan = self._table_function(node.this)
            else:
                plan = self._table(node, scopes)
                name = name or node.name
        elif isinstance(node, exp.Subquery):
            plan = self._limit(self._order_output(self.query(node.this, scopes), node), node)
        elif isinstance(node, exp.Values):
            plan = self._values(node)
        else:
            raise self.exprs.unsupported(node, "this kind of FROM item")
        plan = self._rename_columns(plan, alias, name or "subquery")
        plan = analyze(SubqueryAlias(plan, name)) if name else plan
        for pivot in node.args.get("pivots") or []:
            plan = pivot_relation(plan, pivot, self.exprs.translate, self.exprs.unsupported)
            pivot_alias = pivot.args.get("alias")
            if pivot_alias is not None and pivot_alias.name:
                plan = analyze(SubqueryAlias(plan, pivot_alias.name))
        return plan

    def _table(self, node: exp.Table, scopes: Scopes) -> LogicalPlan:
        plan = self._named_plan(node, scopes)
        if self._subquery_depth:
            plan = analyze(Project(plan, tuple(Alias(a.with_qualifier(()), a.name) for a in plan.output)))
        return plan

    def _named_plan(self, node: exp.Table, scopes: Scopes) -> LogicalPlan:
        """The plan a table name stands for: a WITH name in scope, else a temp view."""
        name = node.name
        full = ".".join(p.name for p in node.parts)
        if len(node.parts) == 1:
            for scope in reversed(scopes):
                if name.lower() in scope:
                    return scope[name.lower()]
        if self.catalog.has_view(name) and (len(node.parts) == 1 or node.text("db").lower() == "global_temp"):
            return self.catalog.view(name)
        views = self.catalog.view_names()
        ctes = sorted({n for scope in scopes for n in scope})
        close = difflib.get_close_matches(name.lower(), views + ctes, n=1, cutoff=0.6)
        raise AnalysisException(
            f"table or view '{full}' not found." + (f" Did you mean '{close[0]}'?" if close else "")
            + f"\nRegistered temp views: {', '.join(views) or '(none)'}"
            + (f"\nWITH names in scope: {', '.join(ctes)}" if ctes else "")
            + "\nRegister a DataFrame with df.createOrReplaceTempView(name)."
        )

    def _table_function(self, call: exp.Anonymous) -> LogicalPlan:
        name = call.name.lower()
        args = call.expressions
        if name != "range":
            raise self.exprs.unsupported(call, f"the table function {name}()", "range(start, end[, step]) is supported")
        if not 1 <= len(args) <= 4 or not all(isinstance(a, (exp.Literal, exp.Neg)) for a in args):
            raise ParseException(f"range() takes 1 to 4 integer literals (end | start, end[, step[, partitions]]), "
                                 f"got {call.sql(dialect='spark')!r}")
        values = [int(a.sql(dialect="spark")) for a in args]
        return analyze(builder.range_relation(*values))

    def _rename_columns(self, plan: LogicalPlan, alias: exp.Expression | None, what: str) -> LogicalPlan:
        """`t AS x(c1, c2)` / `WITH c(c1, c2) AS ...`: new names for the columns, by position."""
        columns = alias.args.get("columns") if alias is not None else None
        if not columns:
            return plan
        names = [c.name for c in columns]
        if len(names) != len(plan.output):
            raise AnalysisException(
                f"{what} names {len(names)} columns ({', '.join(names)}) but its query has {len(plan.output)}: "
                f"{', '.join(a.name for a in plan.output)}"
            )
        return analyze(Project(plan, tuple(Alias(a, n) for a, n in zip(plan.output, names))))

    def _one_row(self) -> LogicalPlan:
        """The single row a SELECT without FROM computes its list over."""
        return analyze(builder.range_relation(0, 1, 1, 1))

    def _values(self, node: exp.Values) -> LogicalPlan:
        rows = [row.expressions if isinstance(row, exp.Tuple) else [row] for row in node.expressions]
        width = len(rows[0])
        if any(len(r) != width for r in rows):
            raise AnalysisException(f"every VALUES row needs the same number of values; got rows of "
                                    f"{sorted({len(r) for r in rows})} values")
        names = [f"col{i + 1}" for i in range(width)]
        one = self._one_row()
        inputs = tuple(analyze(Project(one, tuple(Alias(self.exprs.clean(v), n) for v, n in zip(row, names))))
                       for row in rows)
        return analyze(Union(inputs)) if len(inputs) > 1 else inputs[0]

    # ---------------------------------------------------------- joins

    def _join(self, left: LogicalPlan, join: exp.Join, scopes: Scopes) -> LogicalPlan:
        right = self._relation(join.this, scopes)
        how = _join_type(join, self.exprs)
        using = [c.name for c in join.args.get("using") or []]
        if join.text("method").upper() == "NATURAL":
            right_names = {a.name.lower() for a in right.output}
            using = [a.name for a in left.output if a.name.lower() in right_names]
        if using:
            return builder.using_join(left, right, using, how)
        on = join.args.get("on")
        return builder.join(left, right, how, self.exprs.clean(on) if on is not None else None)

    # ---------------------------------------------------------- set operations

    def _set_operation(self, node: exp.SetOperation, scopes: Scopes) -> LogicalPlan:
        left, right = self.query(node.this, scopes), self.query(node.expression, scopes)
        distinct = node.args.get("distinct") is not False
        if isinstance(node, exp.Union):
            plan = builder.union(left, right)
            plan = builder.distinct(plan) if distinct else plan
        elif isinstance(node, exp.Intersect):
            plan = builder.intersect(left, right, is_all=not distinct)
        else:
            plan = builder.except_(left, right, is_all=not distinct)
        return self._limit(self._order_output(plan, node), node)


class _SelectBuilder:
    """One SELECT block above its FROM/WHERE: projection or aggregation, HAVING, DISTINCT and ORDER BY.

    ORDER BY keys and HAVING conditions that the select list does not show are computed as
    hidden columns next to it, filtered or sorted on, then projected away, as Spark does.
    """

    def __init__(self, query: QueryTranslator, child: LogicalPlan, items: tuple[Expr, ...], distinct: bool,
                 is_global: bool):
        self.q = query
        self.child = child
        self.items = items
        self.distinct = distinct
        self.is_global = is_global
        self.aliases = {i.name.lower(): i.child for i in items if isinstance(i, Alias)}

    def project(self, orders: list[exp.Ordered], qualify: Alias | None) -> LogicalPlan:
        """A SELECT without grouping: the select list, windows included, over the FROM/WHERE rows."""
        def build(extra: tuple[Expr, ...]) -> LogicalPlan:
            return analyze(Project(self.child, self.items + extra))
        return self._finish(build, build(()), None, qualify, orders)

    def aggregate(self, group: exp.Group | None, having: exp.Having | None, orders: list[exp.Ordered],
                  qualify: Alias | None, windowed: bool) -> LogicalPlan:
        """A grouped SELECT; with windows, they run over the groups that HAVING keeps."""
        grouping_sets = self._grouping_sets(group)
        grouping = self._grouping(group) if grouping_sets is None else grouping_sets[0]
        condition = self._having(having) if having is not None else None
        if grouping_sets is not None:
            if windowed:
                raise AnalysisException("window functions over GROUP BY ROLLUP, CUBE or GROUPING SETS are not "
                                        "supported; compute the grouping sets in a subquery first")

            def build_sets(extra: tuple[Expr, ...]) -> LogicalPlan:
                return builder.aggregate(self.child, grouping, self.items + extra, grouping_sets[1])
            return self._finish(build_sets, build_sets(()), condition, None, orders)
        if windowed:
            def build_windowed(extra: tuple[Expr, ...]) -> LogicalPlan:
                return self._windowed_aggregate(grouping, condition, self.items + extra)
            return self._finish(build_windowed, build_windowed(()), None, qualify, orders)

        def build(extra: tuple[Expr, ...]) -> LogicalPlan:
            return builder.aggregate(self.child, grouping, self.items + extra)
        return self._finish(build, build(()), condition, None, orders)

    def qualify(self, node: exp.Qualify, is_aggregate: bool) -> Alias:
        """The QUALIFY condition as a hidden column; a grouped query reads select-list aliases first, like HAVING."""
        condition = self._with_aliases(self.q.exprs.clean(node.this), alias_first=is_aggregate)
        if not contains_window(condition) and not any(contains_window(i) for i in self.items):
            raise AnalysisException(
                f"QUALIFY {node.this.sql(dialect='spark')} needs a window function in the select list or in the "
                "QUALIFY condition; to filter rows without one, use WHERE (or HAVING after GROUP BY)"
            )
        return Alias(condition, _QUALIFY_COLUMN)

    def _having(self, node: exp.Having) -> Alias:
        condition = self._with_aliases(self.q.exprs.clean(node.this), alias_first=True)
        _no_window_in(condition, "HAVING", "filter on a window function with QUALIFY")
        return Alias(condition, _HAVING_COLUMN)

    def _windowed_aggregate(self, grouping: tuple[Expr, ...], having: Alias | None, items: tuple[Expr, ...]
                            ) -> LogicalPlan:
        """GROUP BY with windows: the aggregate, filtered by HAVING, computes what the windows read; a projection
        above it runs the windows over the groups, as Spark plans `rank() OVER (ORDER BY sum(v))`.
        """
        inputs = WindowInputs()
        plain: list[Expr] = []
        slots: list[int | Alias] = []
        for item in self._expand_stars(items):
            if contains_window(item):
                name = item.name if isinstance(item, Alias) else display_name(item, self.child.output)
                slots.append(Alias(inputs.lift(strip_alias(item)), name))
            else:
                slots.append(len(plain))
                plain.append(item)
        aggregates = tuple(plain) + tuple(inputs.columns) + ((having,) if having is not None else ())
        plan = builder.aggregate(self.child, grouping, aggregates)
        if having is not None:
            plan = analyze(Filter(plan, plan.output[-1]))
        return analyze(Project(plan, tuple(plan.output[s] if isinstance(s, int) else s for s in slots)))

    def _expand_stars(self, items: tuple[Expr, ...]) -> list[Expr]:
        out: list[Expr] = []
        for item in items:
            out.extend(analyze(Project(self.child, (item,))).output if isinstance(item, UnresolvedStar) else (item,))
        return out

    def _finish(self, build: Callable[[tuple[Expr, ...]], LogicalPlan], base: LogicalPlan, having: Alias | None,
                qualify: Alias | None, orders: list[exp.Ordered]) -> LogicalPlan:
        """Filter and sort on hidden columns as needed, then keep only the select list's columns.

        `base` is the select list alone; `build(extra)` rebuilds it with hidden columns appended.
        HAVING filters before QUALIFY, and both before DISTINCT and ORDER BY.
        """
        visible = base.output
        conditions: list[Expr] = [c for c in (having, qualify) if c is not None]
        hidden: list[Expr] = list(conditions)
        keys: list[SortOrder | int] = []
        for o in orders:
            key = self.q.order_key(o, visible, "the select list")
            if key is None:
                if self.distinct:
                    raise AnalysisException(
                        f"ORDER BY {o.this.sql(dialect='spark')} must be one of the selected columns when using "
                        f"SELECT DISTINCT; selected: {', '.join(a.name for a in visible)}"
                    )
                keys.append(len(hidden))
                hidden.append(Alias(self._with_aliases(self.q.exprs.clean(o.this), alias_first=False),
                                    _SORT_COLUMN.format(len(hidden))))
            else:
                keys.append(key)
        plan = base
        if hidden:
            plan = build(tuple(hidden))
            remap = {old.expr_id: new for old, new in zip(visible, plan.output)}
            extra = plan.output[len(visible):]
            visible = plan.output[:len(visible)]
            keys = [sort_order(extra[k], o) if isinstance(k, int) else
                    SortOrder(substitute_attributes(k.child, remap), k.ascending, k.nulls_first)
                    for k, o in zip(keys, orders)]
            for condition in extra[:len(conditions)]:
                plan = analyze(Filter(plan, condition))
        if self.distinct:
            plan = builder.distinct(analyze(Project(plan, visible)) if len(plan.output) > len(visible) else plan)
        if keys:
            plan = builder.sort(plan, keys, self.is_global)
        if len(plan.output) > len(visible):
            plan = analyze(Project(plan, visible))
        return plan

    def _grouping_sets(self, group: exp.Group | None) -> tuple[tuple[Expr, ...], list[tuple[int, ...]]] | None:
        """GROUP BY with ROLLUP, CUBE or GROUPING SETS: the grouping keys and each set's key positions;
        None for a plain GROUP BY. Plain keys next to them belong to every set (GROUP BY a, ROLLUP(b))."""
        if group is None:
            return None
        found = grouping_sets_sql(group)
        if found is None:
            return None
        members, sets = found
        return self._grouping(exp.Group(expressions=members)), sets

    def _grouping(self, group: exp.Group | None) -> tuple[Expr, ...]:
        if group is None:
            return ()
        for arg in ("rollup", "cube", "grouping_sets", "totals"):
            if group.args.get(arg):
                raise self.q.exprs.unsupported(group, f"GROUP BY {arg.upper().replace('_', ' ')}")
        if group.args.get("all"):
            return self._group_by_all()
        grouping: list[Expr] = []
        inputs = self.child.output
        for g in group.expressions:
            if isinstance(g, (exp.Rollup, exp.Cube, exp.GroupingSets)):
                raise self.q.exprs.unsupported(g, f"GROUP BY {type(g).__name__.upper()}")
            ordinal = _ordinal(g)
            if ordinal is not None:
                item = _item_at(ordinal, self.items, "GROUP BY")
                if contains_aggregate(item):
                    raise AnalysisException(
                        f"GROUP BY {ordinal} refers to {strip_alias(item).sql()}, an aggregate function; "
                        "GROUP BY positions must name non-aggregate select-list entries"
                    )
                grouping.append(strip_alias(item))
                continue
            e = self.q.exprs.clean(g)
            _no_window_in(e, "GROUP BY", "group by the window's input columns instead")
            # A select-list alias counts only where the name is not a column of the FROM clause (Spark's rule).
            if isinstance(e, UnresolvedColumn) and len(e.parts) == 1 and e.parts[0].lower() in self.aliases \
                    and not _resolves(e, inputs):
                e = self.aliases[e.parts[0].lower()]
            if contains_aggregate(e):
                raise AnalysisException(f"aggregate functions are not allowed in GROUP BY: {e.sql()}")
            grouping.append(e)
        return tuple(grouping)

    def _group_by_all(self) -> tuple[Expr, ...]:
        """GROUP BY ALL: every select-list entry without an aggregate function."""
        grouping: list[Expr] = []
        for item in self.items:
            if isinstance(item, UnresolvedStar):
                grouping.extend(analyze(Project(self.child, (item,))).output)
            elif not aggregates_rows(item) and not contains_window(item):
                grouping.append(strip_alias(item))
        return tuple(grouping)

    def _with_aliases(self, e: Expr, alias_first: bool) -> Expr:
        """Replace select-list aliases in `e` with what they stand for, outside aggregate functions.

        HAVING resolves a name against the select list first (`alias_first`); a hidden ORDER BY
        key reads the FROM clause's columns first and falls back to an alias.
        """
        inputs = self.child.output

        def visit(x: Expr) -> Expr:
            if isinstance(x, AggregateFunction):
                return x
            if isinstance(x, UnresolvedColumn) and len(x.parts) == 1 and x.parts[0].lower() in self.aliases:
                if alias_first or not _resolves(x, inputs):
                    return self.aliases[x.parts[0].lower()]
                return x
            kids = x.children()
            new = tuple(visit(k) for k in kids)
            return x.with_children(new) if any(a is not b for a, b in zip(new, kids)) else x
        return visit(e)


# ---------------------------------------------------------------- helpers


def _join_type(join: exp.Join, exprs: ExpressionTranslator) -> str:
    side, kind = join.text("side").upper(), join.text("kind").upper()
    if kind in ("SEMI", "ANTI"):
        if side not in ("", "LEFT"):
            raise exprs.unsupported(join, f"{side} {kind} JOIN", f"LEFT {kind} JOIN is supported")
        return "left_semi" if kind == "SEMI" else "left_anti"
    if side in ("LEFT", "RIGHT", "FULL"):
        return side.lower()
    return "cross" if kind == "CROSS" else "inner"


def _row_count(value: exp.Expression, clause: str) -> int:
    """The integer literal of LIMIT n / OFFSET n; the builder says that a negative one is invalid, as Spark does."""
    literal = value.this if isinstance(value, exp.Neg) else value
    if not (isinstance(literal, exp.Literal) and not literal.is_string and literal.this.isdigit()):
        raise ParseException(f"{clause} takes an integer literal, got {value.sql(dialect='spark')!r}")
    return -int(literal.this) if isinstance(value, exp.Neg) else int(literal.this)


def _ordinal(node: exp.Expression) -> int | None:
    """`1` in ORDER BY 1 / GROUP BY 1: an integer literal is a position in the select list."""
    if isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit():
        return int(node.this)
    return None


def _by_position(ordinal: int, columns: tuple[AttributeRef, ...], clause: str, where: str) -> AttributeRef:
    if not 1 <= ordinal <= len(columns):
        raise AnalysisException(
            f"{clause} position {ordinal} is not in {where} (valid positions are 1 to {len(columns)}: "
            f"{', '.join(a.name for a in columns)})"
        )
    return columns[ordinal - 1]


def _item_at(ordinal: int, items: tuple[Expr, ...], clause: str) -> Expr:
    if not 1 <= ordinal <= len(items) or any(isinstance(i, UnresolvedStar) for i in items[:ordinal]):
        raise AnalysisException(
            f"{clause} position {ordinal} is not in the select list (valid positions are 1 to {len(items)}"
            + ("; positions after a * are not supported" if any(isinstance(i, UnresolvedStar) for i in items) else "")
            + ")"
        )
    return items[ordinal - 1]


def _no_window_in(e: Expr, clause: str, hint: str) -> None:
    """Spark evaluates windows after WHERE, GROUP BY and HAVING, so none of those may contain one."""
    if contains_window(e):
        window = next(x for x in e.walk() if isinstance(x, WindowExpression))
        raise AnalysisException(f"window functions are not allowed in {clause}: {window.sql()}; {hint}")


def _resolves(e: UnresolvedColumn, inputs: tuple[AttributeRef, ...]) -> bool:
    try:
        resolve_name(e.parts, inputs)
        return True
    except AnalysisException:
        return False


__all__ = ["sql_to_plan", "parse_expression", "QueryTranslator"]
