"""Temp views and table caching in `spark.sql`: CREATE / DROP VIEW, CACHE / UNCACHE TABLE.

These statements act on the session's catalog when `spark.sql` runs them, as Spark's do, and
their result is an empty DataFrame with no columns. A view stores the analyzed plan of its
query in the `SessionCatalog`, exactly what `df.createOrReplaceTempView(name)` stores, so SQL
and the DataFrame API see one set of views.
"""
from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
from sqlglot import exp

from quiver.engine.analysis.analyzer import analyze
from quiver.engine.analysis.catalog import SessionCatalog
from quiver.engine.core import types as T
from quiver.engine.core.errors import AnalysisException, ParseException
from quiver.engine.core.expressions import Alias, AttributeRef, new_expr_id
from quiver.engine.core.plan import LocalRelation, LogicalPlan, Project
from quiver.engine.core.storage_level import STORAGE_LEVEL_NAMES

# Plans the query of a statement (CREATE VIEW v AS <query>) with the caller's SQL front end.
PlanQuery = Callable[[exp.Expression], LogicalPlan]

# Temp views may be named plainly or, when global, in Spark's global_temp database.
_GLOBAL_DATABASE = "global_temp"
# Properties a CREATE TEMPORARY VIEW may carry; COMMENT is accepted and, like Spark's temp views, not kept.
_VIEW_PROPERTIES = (exp.TemporaryProperty, exp.GlobalProperty, exp.SchemaCommentProperty)

STATEMENTS = (exp.Create, exp.Drop, exp.Cache, exp.Uncache)


def run_statement(catalog: SessionCatalog, node: exp.Expression, plan_query: PlanQuery) -> LogicalPlan:
    """Run one CREATE VIEW / DROP VIEW / CACHE TABLE / UNCACHE TABLE statement; its (empty) result plan."""
    if isinstance(node, exp.Create):
        _create_view(catalog, node, plan_query)
    elif isinstance(node, exp.Drop):
        _drop_views(catalog, node)
    elif isinstance(node, exp.Cache):
        _cache_table(catalog, node, plan_query)
    else:
        _uncache_table(catalog, node)
    return empty_result()


def empty_result() -> LogicalPlan:
    """No rows and no columns: what Spark returns for a DDL statement."""
    placeholder = AttributeRef("_", T.NullType(), True, new_expr_id())
    return Project(LocalRelation(pa.table({"_": pa.array([], pa.null())}), (placeholder,)), ())


# ---------------------------------------------------------------- CREATE / DROP VIEW


def _create_view(catalog: SessionCatalog, node: exp.Create, plan_query: PlanQuery) -> None:
    """CREATE [OR REPLACE] [GLOBAL] TEMPORARY VIEW name [(c1, c2)] AS query."""
    statement = node.sql(dialect="spark")
    kind = node.text("kind").upper()
    properties = list(node.args["properties"].expressions) if node.args.get("properties") else []
    temporary = any(isinstance(p, exp.TemporaryProperty) for p in properties)
    if kind != "VIEW" or not temporary:
        what = "CREATE VIEW without TEMPORARY (a persistent view)" if kind == "VIEW" else f"CREATE {kind}"
        raise ParseException(f"{what} is not supported in Quiver SQL: {statement!r}; Quiver keeps views per session: "
                             "write CREATE [OR REPLACE] TEMPORARY VIEW name AS SELECT ...")
    extra = [p for p in properties if not isinstance(p, _VIEW_PROPERTIES)]
    if extra or node.args.get("expression") is None:
        raise ParseException(f"only CREATE TEMPORARY VIEW name AS <query> is supported in Quiver SQL, not "
                             f"{statement!r}; to read files use spark.read, then df.createOrReplaceTempView(name)")
    if node.args.get("exists"):
        raise ParseException(f"IF NOT EXISTS is not allowed for temporary views (as in Spark): {statement!r}; "
                             "use CREATE OR REPLACE TEMPORARY VIEW")
    target = node.this
    table = target.this if isinstance(target, exp.Schema) else target
    name = _view_name(table, is_global=any(isinstance(p, exp.GlobalProperty) for p in properties))
    columns = [c.name for c in target.expressions] if isinstance(target, exp.Schema) else None
    if catalog.has_view(name) and not node.args.get("replace"):
        raise AnalysisException(f"cannot create the temporary view '{name}' because it already exists; "
                                f"use CREATE OR REPLACE TEMPORARY VIEW {name} AS ... to replace it")
    plan = _with_column_names(plan_query(node.expression), columns, name)
    catalog.register_view(name, plan, replace=True)


def _view_name(table: exp.Table, is_global: bool) -> str:
    """The name of a temp view; only a global one may be qualified, and only with global_temp."""
    database = table.text("db")
    if table.text("catalog") or (database and not (is_global and database.lower() == _GLOBAL_DATABASE)):
        raise AnalysisException(
            f"a temporary view cannot be qualified with a database: {table.sql(dialect='spark')!r}; "
            f"name it plainly (or {_GLOBAL_DATABASE}.name for a GLOBAL TEMPORARY VIEW)"
        )
    return table.name


def _with_column_names(plan: LogicalPlan, columns: list[str] | None, view: str) -> LogicalPlan:
    """The view's query under the names `CREATE VIEW v (c1, c2)` gives, checking they are distinct."""
    names = columns if columns is not None else [a.name for a in plan.output]
    if len(names) != len(plan.output):
        raise AnalysisException(
            f"cannot create view '{view}': it names {len(names)} columns ({', '.join(names)}) but its query returns "
            f"{len(plan.output)} ({', '.join(a.name for a in plan.output)})"
        )
    seen: set[str] = set()
    for n in names:
        if n.lower() in seen:
            raise AnalysisException(f"cannot create view '{view}': the column '{n}' appears twice in "
                                    f"({', '.join(names)}); alias the columns so each name is unique")
        seen.add(n.lower())
    if columns is None:
        return plan
    return analyze(Project(plan, tuple(Alias(a, n) for a, n in zip(plan.output, names))))


def _drop_views(catalog: SessionCatalog, node: exp.Drop) -> None:
    """DROP VIEW [IF EXISTS] v (and DROP TABLE v, which drops a temp view of that name in Spark)."""
    kind = node.text("kind").upper()
    if kind not in ("VIEW", "TABLE"):
        raise ParseException(f"DROP {kind} is not supported in Quiver SQL: {node.sql(dialect='spark')!r}; "
                             "DROP VIEW [IF EXISTS] name drops a temporary view")
    for table in node.args.get("tables") or []:
        key = _existing_view(catalog, table, missing_ok=bool(node.args.get("exists")), what=f"DROP {kind}")
        if key is not None:
            catalog.drop_view(key)


def _existing_view(catalog: SessionCatalog, table: exp.Table, missing_ok: bool, what: str) -> str | None:
    """The catalog key of the temp view `table` names; None, or an error naming the views, when there is none."""
    database = table.text("db")
    key = table.name.lower()
    if catalog.has_view(key) and (not database or database.lower() == _GLOBAL_DATABASE) and not table.text("catalog"):
        return key
    if missing_ok:
        return None
    views = ", ".join(catalog.view_names()) or "(none)"
    raise AnalysisException(f"{what}: table or view '{table.sql(dialect='spark')}' not found. "
                            f"Registered temp views: {views}. Add IF EXISTS to ignore a missing one.")


# ---------------------------------------------------------------- CACHE / UNCACHE TABLE


def _cache_table(catalog: SessionCatalog, node: exp.Cache, plan_query: PlanQuery) -> None:
    """CACHE [LAZY] TABLE v [OPTIONS ('storageLevel' 'DISK_ONLY')] [[AS] query]; eager unless LAZY, as in Spark."""
    table = node.this
    level = _storage_level(node)
    if node.args.get("expression") is not None:
        name = _view_name(table, is_global=False)
        if catalog.has_view(name):
            raise AnalysisException(f"cannot create the temporary view '{name}' because it already exists; "
                                    f"DROP VIEW {name} first, or CACHE TABLE {name} to cache the existing one")
        catalog.register_view(name, _with_column_names(plan_query(node.expression), None, name), replace=False)
    key = _existing_view(catalog, table, missing_ok=False, what="CACHE TABLE")
    assert key is not None, "_existing_view raises for a missing view unless missing_ok"
    catalog.cache_view(key, level, eager=not node.args.get("lazy"))


def _storage_level(node: exp.Cache) -> str:
    options = node.args.get("options") or []
    pairs = dict(zip((o.name.lower() for o in options[::2]), (o.name for o in options[1::2])))
    unknown = sorted(set(pairs) - {"storagelevel"})
    if unknown:
        raise ParseException(f"CACHE TABLE takes only the option 'storageLevel', got {', '.join(unknown)}")
    level = pairs.get("storagelevel", "MEMORY_AND_DISK").upper()
    if level not in STORAGE_LEVEL_NAMES:
        raise ParseException(f"unknown storageLevel '{level}' in CACHE TABLE; valid: {', '.join(STORAGE_LEVEL_NAMES)}")
    return level


def _uncache_table(catalog: SessionCatalog, node: exp.Uncache) -> None:
    """UNCACHE TABLE [IF EXISTS] v."""
    key = _existing_view(catalog, node.this, missing_ok=bool(node.args.get("exists")), what="UNCACHE TABLE")
    if key is not None:
        catalog.uncache_view(key)


__all__ = ["STATEMENTS", "run_statement", "empty_result"]
