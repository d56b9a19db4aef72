"""`SessionCatalog`: the names a session's queries can use — its temp views and its registered functions.

The DataFrame API (`createOrReplaceTempView`, `spark.table`, `spark.udf.register`, `spark.catalog`) and
the SQL front end (`FROM v`, `CREATE VIEW`, `DROP VIEW`, `CACHE TABLE`, `my_udf(x)`) read and change one
catalog, so both see one set of names, as in Spark, where the session's `SessionCatalog` holds both.
The catalog lives below the SQL front end and the execution layer: caching a view goes through the
`PlanCache` it was given, which the execution layer's cache manager implements.

While a session analyzes (`analyzing_with`), its catalog is the active one: the analyzer resolves a
call of a name no built-in function has, such as `F.expr("my_udf(x)")`, against it.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol

from quiver.engine.core.errors import AnalysisException
from quiver.engine.core.expressions import Expr
from quiver.engine.core.plan import LogicalPlan


class RegisteredFunction(Protocol):
    """A function registered by name (`spark.udf.register`): applied to argument expressions, its call."""

    def call(self, args: tuple[Expr, ...]) -> Expr:
        ...


class PlanCache(Protocol):
    """The session's cache of analyzed plans, as the catalog asks it to cache and uncache views."""

    def register(self, plan: LogicalPlan, storage_level: str) -> None:
        """Cache `plan` at `storage_level`, filled the first time a job needs it."""
        ...

    def unregister(self, plan: LogicalPlan) -> None:
        """Stop caching `plan` and free what was kept; nothing happens for a plan not cached."""
        ...

    def is_cached(self, plan: LogicalPlan) -> bool:
        ...

    def materialize(self, plan: LogicalPlan) -> None:
        """Fill the cache of `plan` now (an eager CACHE TABLE)."""
        ...

    def clear(self) -> None:
        """Uncache every plan (`spark.catalog.clearCache()`)."""
        ...


class SessionCatalog:
    """One session's temporary views (name -> analyzed plan) and registered functions, by case-insensitive
    name, as Spark matches them."""

    def __init__(self, cache: PlanCache):
        self.cache = cache
        self._views: dict[str, LogicalPlan] = {}
        self._functions: dict[str, RegisteredFunction] = {}

    # ---------------------------------------------------------- views

    def view_names(self) -> list[str]:
        """The temp views' names (lower case), sorted."""
        return sorted(self._views)

    def has_view(self, name: str) -> bool:
        return name.lower() in self._views

    def view(self, name: str) -> LogicalPlan:
        """The analyzed plan of the temp view `name`; an AnalysisException listing the views if there is none."""
        plan = self._views.get(name.lower())
        if plan is None:
            raise AnalysisException(f"table or view '{name}' not found. Registered temp views: "
                                    f"{', '.join(self.view_names()) or '(none)'}")
        return plan

    def register_view(self, name: str, plan: LogicalPlan, replace: bool) -> None:
        """Make `plan` (analyzed) the temp view `name`; without `replace`, an existing view is an error."""
        key = name.lower()
        if key in self._views and not replace:
            raise AnalysisException(f"temp view '{name}' already exists; use createOrReplaceTempView to replace it")
        self._views[key] = plan

    def drop_view(self, name: str) -> bool:
        """Drop the temp view `name` and uncache it, as Spark's DROP VIEW does; False if there was none."""
        plan = self._views.pop(name.lower(), None)
        if plan is None:
            return False
        self.cache.unregister(plan)
        return True

    # ---------------------------------------------------------- caching views

    def cache_view(self, name: str, storage_level: str, eager: bool) -> None:
        """Cache the temp view `name` (CACHE TABLE); `eager` fills the cache now, as Spark does without LAZY."""
        plan = self.view(name)
        self.cache.register(plan, storage_level)
        if eager:
            self.cache.materialize(plan)

    def uncache_view(self, name: str) -> None:
        self.cache.unregister(self.view(name))

    def is_view_cached(self, name: str) -> bool:
        return self.cache.is_cached(self.view(name))

    # ---------------------------------------------------------- functions

    def register_function(self, name: str, function: RegisteredFunction) -> None:
        """Register `function` as `name`, replacing any function of that name (as spark.udf.register does)."""
        self._functions[name.lower()] = function

    def function(self, name: str) -> RegisteredFunction | None:
        """The function registered as `name`, or None."""
        return self._functions.get(name.lower())

    def function_names(self) -> list[str]:
        return sorted(self._functions)


_ACTIVE: ContextVar[SessionCatalog | None] = ContextVar("quiver_active_catalog", default=None)


@contextmanager
def analyzing_with(catalog: SessionCatalog) -> Iterator[None]:
    """Within this block, `catalog` is the one the analyzer resolves registered functions in."""
    token = _ACTIVE.set(catalog)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def active_catalog() -> SessionCatalog | None:
    """The catalog of the session analyzing now, if any."""
    return _ACTIVE.get()


__all__ = ["SessionCatalog", "RegisteredFunction", "PlanCache", "analyzing_with", "active_catalog"]
