"""The session catalog: temp views and registered functions by case-insensitive name, caching through the
cache it was given, and the active catalog the analyzer resolves registered functions in."""
from __future__ import annotations

import pyarrow as pa
import pytest

from quiver.engine.analysis.analyzer import analyze
from quiver.engine.analysis.catalog import SessionCatalog, active_catalog, analyzing_with
from quiver.engine.core import types as T
from quiver.engine.core.errors import AnalysisException
from quiver.engine.core.expressions import AttributeRef, Expr, Literal, ScalarFunction, new_expr_id, strip_alias
from quiver.engine.core.plan import LocalRelation, LogicalPlan, Project


class RecordingCache:
    """A PlanCache that records what the catalog asked of it."""

    def __init__(self) -> None:
        self.levels: dict[LogicalPlan, str] = {}
        self.materialized: list[LogicalPlan] = []

    def register(self, plan: LogicalPlan, storage_level: str) -> None:
        self.levels[plan] = storage_level

    def unregister(self, plan: LogicalPlan) -> None:
        self.levels.pop(plan, None)

    def is_cached(self, plan: LogicalPlan) -> bool:
        return plan in self.levels

    def materialize(self, plan: LogicalPlan) -> None:
        self.materialized.append(plan)

    def clear(self) -> None:
        self.levels.clear()


def _relation() -> LogicalPlan:
    attr = AttributeRef("n", T.LongType(), True, new_expr_id())
    return LocalRelation(pa.table({attr.internal_name: pa.array([1, 2], pa.int64())}), (attr,))


class Negated:
    """A registered function whose call is plain arithmetic, so no UDF machinery is involved."""

    def call(self, args: tuple[Expr, ...]) -> Expr:
        return ScalarFunction("negative", args)


def test_views_are_found_by_any_case_and_listed_lower_case():
    catalog = SessionCatalog(RecordingCache())
    plan = _relation()
    catalog.register_view("Sales", plan, replace=False)
    assert catalog.has_view("SALES") and catalog.view("sales") is plan
    assert catalog.view_names() == ["sales"]
    with pytest.raises(AnalysisException, match="already exists"):
        catalog.register_view("sales", plan, replace=False)


def test_a_missing_view_is_an_error_that_lists_the_views():
    catalog = SessionCatalog(RecordingCache())
    catalog.register_view("a", _relation(), replace=False)
    with pytest.raises(AnalysisException, match=r"table or view 'b' not found\. Registered temp views: a"):
        catalog.view("b")


def test_dropping_a_cached_view_uncaches_it():
    cache = RecordingCache()
    catalog = SessionCatalog(cache)
    plan = _relation()
    catalog.register_view("v", plan, replace=False)
    catalog.cache_view("v", "DISK_ONLY", eager=False)
    assert cache.levels == {plan: "DISK_ONLY"} and cache.materialized == []
    assert catalog.is_view_cached("v")
    assert catalog.drop_view("V") is True
    assert cache.levels == {} and not catalog.has_view("v")
    assert catalog.drop_view("v") is False


def test_an_eager_cache_fills_at_once():
    cache = RecordingCache()
    catalog = SessionCatalog(cache)
    plan = _relation()
    catalog.register_view("v", plan, replace=False)
    catalog.cache_view("v", "MEMORY_AND_DISK", eager=True)
    assert cache.materialized == [plan]
    catalog.uncache_view("v")
    assert not catalog.is_view_cached("v")


def test_the_analyzer_resolves_registered_functions_in_the_active_catalog_only():
    catalog = SessionCatalog(RecordingCache())
    catalog.register_function("Flip", Negated())
    child = _relation()
    query = Project(child, (ScalarFunction("flip", (child.output[0],)),))
    with pytest.raises(AnalysisException):
        analyze(query)  # no session analyzing: `flip` is no built-in function
    assert active_catalog() is None
    with analyzing_with(catalog):
        assert active_catalog() is catalog
        resolved = analyze(query)
    assert active_catalog() is None
    assert isinstance(resolved, Project)
    assert strip_alias(resolved.projections[0]) == ScalarFunction("negative", (child.output[0],))


def test_a_registered_function_shadows_a_built_in_one():
    catalog = SessionCatalog(RecordingCache())
    catalog.register_function("abs", Negated())
    child = _relation()
    with analyzing_with(catalog):
        resolved = analyze(Project(child, (ScalarFunction("abs", (Literal(3, T.IntegerType()),)),)))
    assert strip_alias(resolved.projections[0]) == ScalarFunction("negative", (Literal(3, T.IntegerType()),))
