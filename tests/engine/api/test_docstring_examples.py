"""The public API's docstrings: every member has one with a `>>>` example, and every example in them is true.

The public API is what the API reference (docs/api) documents: the classes below and every function of
`quiver.functions`. The examples run as doctests on the test session, each in a fresh copy of the names
the reference's examples assume (`spark`, `F`, `T`, `Window`, `Row`, and `df`, PySpark's two-row frame of
`age` and `name`).
"""
from __future__ import annotations

import doctest
import inspect
from collections.abc import Iterator
from typing import Any

import pytest

import quiver
from quiver import Row, Window, types
from quiver import functions as F
from quiver.engine.api.column import Column
from quiver.engine.api.dataframe import DataFrame, DataFrameNaFunctions
from quiver.engine.api.grouped import GroupedData
from quiver.engine.api.readwriter import DataFrameReader, DataFrameWriter
from quiver.engine.api.sampling import DataFrameStatFunctions
from quiver.engine.api.session import Catalog, Session, SparkContextShim, _Builder
from quiver.engine.api.udf import PandasUDFType, UDFRegistration, UserDefinedFunction
from quiver.engine.api.window import WindowSpec
from quiver.engine.core.conf import RuntimeConfig

# Every public member of these classes is documented (and checked here).
CLASSES: list[type] = [
    DataFrame, Column, GroupedData, Window, WindowSpec, DataFrameReader, DataFrameWriter, DataFrameNaFunctions,
    DataFrameStatFunctions, Session, _Builder, Catalog, SparkContextShim, UDFRegistration, UserDefinedFunction,
]
# Of these, only PySpark's members: the rest are the engine's own (conf parsing) and stay out of the reference.
PYSPARK_MEMBERS: dict[type, tuple[str, ...]] = {
    RuntimeConfig: ("get", "set", "unset", "getAll", "isModifiable"),
}
# The members that begin with an underscore and still belong to the API.
DUNDER_MEMBERS = {"__getitem__", "__getattr__", "__arrow_c_stream__", "__arrow_c_schema__", "__enter__", "__exit__"}
# Classes named only by their own docstring (constants, no methods to document).
CONSTANT_CLASSES: list[type] = [PandasUDFType]


def _members(cls: type) -> Iterator[tuple[str, Any]]:
    """The public functions and properties `cls` defines itself (not those of `object`)."""
    names = PYSPARK_MEMBERS.get(cls)
    for klass in cls.__mro__:
        if klass is object or klass.__module__.split(".")[0] != "quiver":
            continue
        for name, value in vars(klass).items():
            if names is not None and name not in names:
                continue
            if name.startswith("_") and name not in DUNDER_MEMBERS:
                continue
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if inspect.isfunction(value) or isinstance(value, property):
                yield name, value


def public_api() -> list[tuple[str, Any]]:
    """(name, object) of everything the API reference documents, each object once (aliases share one)."""
    found: list[tuple[str, Any]] = []
    for cls in [*CLASSES, *PYSPARK_MEMBERS, *CONSTANT_CLASSES]:
        found.append((cls.__qualname__, cls))
        seen: set[str] = set()
        for name, member in _members(cls):
            if name not in seen:
                seen.add(name)
                found.append((f"{cls.__qualname__}.{name}", member))
    for name in F.__all__:
        obj = getattr(F, name)
        if not inspect.isclass(obj):
            found.append((f"functions.{name}", obj))
    return found


def _unique_docstrings() -> list[tuple[str, Any]]:
    seen: set[int] = set()
    unique = []
    for name, obj in public_api():
        if id(obj) not in seen:
            seen.add(id(obj))
            unique.append((name, obj))
    return unique


def _doc(obj: Any) -> str | None:
    return obj.fget.__doc__ if isinstance(obj, property) else obj.__doc__


@pytest.mark.parametrize("name,obj", public_api(), ids=[n for n, _ in public_api()])
def test_has_docstring(name: str, obj: Any) -> None:
    doc = _doc(obj)
    assert doc and doc.strip(), f"{name} has no docstring: say what it does and why, with a >>> example"


@pytest.mark.parametrize("name,obj", public_api(), ids=[n for n, _ in public_api()])
def test_has_example(name: str, obj: Any) -> None:
    """The issue asks for an example each: a reader learns a member fastest from a call and its result, and
    the example, run below, keeps the docstring true. Aliases share their function's docstring and example."""
    assert ">>>" in (_doc(obj) or ""), f"{name} has no >>> example: add a short call and the output it gives"


EXAMPLES = [(n, o) for n, o in _unique_docstrings() if ">>>" in (_doc(o) or "")]


@pytest.fixture(scope="module")
def doctest_globals(spark) -> dict[str, Any]:
    df = spark.createDataFrame([(2, "Alice"), (5, "Bob")], ["age", "name"])
    return {"spark": spark, "F": F, "T": types, "Window": Window, "Row": Row, "quiver": quiver, "df": df}


@pytest.mark.parametrize("name,obj", EXAMPLES, ids=[n for n, _ in EXAMPLES])
def test_examples(name: str, obj: Any, doctest_globals: dict[str, Any]) -> None:
    test = doctest.DocTestParser().get_doctest(_doc(obj) or "", dict(doctest_globals), name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    failures: list[str] = []
    runner.run(test, out=failures.append)
    assert runner.failures == 0, "".join(failures)
