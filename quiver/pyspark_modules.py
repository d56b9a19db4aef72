"""`import pyspark...` answered by Quiver, so an unchanged PySpark program runs on Quiver.

`quiver-submit` installs these modules before it runs an application, as `spark-submit` hands
its applications pyspark; `quiver.use_as_pyspark()` does the same in a script or notebook.
`pyspark`, `pyspark.sql` and the modules programs import from (`functions`, `types`,
`window`, `utils`, `errors`, ...) become Quiver's; a part of PySpark Quiver does not provide
(`pyspark.ml`, `pyspark.streaming`, the RDD API) fails to import with a message naming it.
"""
from __future__ import annotations

import importlib.abc
import sys
import types
from typing import Any

from quiver import functions
from quiver import types as qtypes
from quiver.engine.api.column import Column
from quiver.engine.api.dataframe import DataFrame, StorageLevel
from quiver.engine.api.grouped import GroupedData
from quiver.engine.api.readwriter import DataFrameReader, DataFrameWriter
from quiver.engine.api.session import Catalog, SparkContextShim
from quiver.engine.api.session import Session as SparkSession
from quiver.engine.api.window import Window, WindowSpec
from quiver.engine.core import errors
from quiver.engine.core.row import Row

# The PySpark release whose DataFrame API Quiver follows (programs sometimes compare versions).
PYSPARK_API_VERSION = "4.0.0"


class SparkConf:
    """PySpark's SparkConf: key-value settings handed to `SparkSession.builder.config(conf=...)`."""

    def __init__(self, loadDefaults: bool = True, _jvm: Any = None, _jconf: Any = None):
        self._values: dict[str, str] = {}

    def set(self, key: str, value: Any) -> SparkConf:
        self._values[key] = "true" if value is True else "false" if value is False else str(value)
        return self

    def setIfMissing(self, key: str, value: Any) -> SparkConf:
        if key not in self._values:
            self.set(key, value)
        return self

    def setAll(self, pairs: Any) -> SparkConf:
        for key, value in pairs:
            self.set(key, value)
        return self

    def setMaster(self, value: str) -> SparkConf:
        return self.set("spark.master", value)

    def setAppName(self, value: str) -> SparkConf:
        return self.set("spark.app.name", value)

    def get(self, key: str, defaultValue: str | None = None) -> str | None:
        return self._values.get(key, defaultValue)

    def getAll(self) -> list[tuple[str, str]]:
        return list(self._values.items())

    def contains(self, key: str) -> bool:
        return key in self._values

    def toDebugString(self) -> str:
        return "\n".join(f"{k}={v}" for k, v in self._values.items())


def _module(name: str, doc: str, package: bool = False, **attrs: Any) -> types.ModuleType:
    module = types.ModuleType(name, doc)
    if package:
        module.__path__ = []  # a package, so `import pyspark.sql.functions` looks for submodules
    module.__dict__.update(attrs)
    module.__all__ = [k for k in attrs if not k.startswith("_")]
    return module


def pyspark_modules() -> dict[str, types.ModuleType]:
    """Module name -> the Quiver module that stands for it."""
    exceptions = {"AnalysisException": errors.AnalysisException, "ParseException": errors.ParseException,
                  "PySparkException": errors.QuiverError, "IllegalArgumentException": errors.ConfigurationError,
                  "PythonException": errors.QuiverError, "SparkRuntimeException": errors.SparkRuntimeException,
                  "ArithmeticException": errors.ArithmeticException,
                  "NumberFormatException": errors.NumberFormatException,
                  "DateTimeException": errors.DateTimeException,
                  "ArrayIndexOutOfBoundsException": errors.ArrayIndexOutOfBoundsException,
                  "PySparkNotImplementedError": errors.QuiverNotSupported}
    window = _module("pyspark.sql.window", "Window specifications.", Window=Window, WindowSpec=WindowSpec)
    sql = _module(
        "pyspark.sql", "Quiver's PySpark SQL API.", package=True, SparkSession=SparkSession,
        DataFrame=DataFrame, Column=Column, Row=Row, GroupedData=GroupedData,
        Window=Window, WindowSpec=WindowSpec, DataFrameReader=DataFrameReader,
        DataFrameWriter=DataFrameWriter, Catalog=Catalog, functions=functions, types=qtypes, window=window)
    modules = {
        "pyspark": _module("pyspark", "Quiver standing in for PySpark.", package=True, __version__=PYSPARK_API_VERSION,
                           SparkConf=SparkConf, SparkContext=SparkContextShim, StorageLevel=StorageLevel,
                           sql=sql),
        "pyspark.sql": sql,
        "pyspark.sql.functions": functions,
        "pyspark.sql.types": qtypes,
        "pyspark.sql.window": window,
        "pyspark.sql.session": _module("pyspark.sql.session", "", SparkSession=SparkSession),
        "pyspark.sql.dataframe": _module("pyspark.sql.dataframe", "", DataFrame=DataFrame),
        "pyspark.sql.column": _module("pyspark.sql.column", "", Column=Column),
        "pyspark.sql.group": _module("pyspark.sql.group", "", GroupedData=GroupedData),
        "pyspark.sql.readwriter": _module("pyspark.sql.readwriter", "", DataFrameReader=DataFrameReader,
                                          DataFrameWriter=DataFrameWriter),
        "pyspark.sql.catalog": _module("pyspark.sql.catalog", "", Catalog=Catalog),
        "pyspark.sql.utils": _module("pyspark.sql.utils", "", **exceptions),
        "pyspark.errors": _module("pyspark.errors", "", package=True, **exceptions),
        "pyspark.errors.exceptions": _module("pyspark.errors.exceptions", "", package=True),
        "pyspark.errors.exceptions.base": _module("pyspark.errors.exceptions.base", "", **exceptions),
        "pyspark.errors.exceptions.captured": _module("pyspark.errors.exceptions.captured", "", **exceptions),
        "pyspark.storagelevel": _module("pyspark.storagelevel", "", StorageLevel=StorageLevel),
        "pyspark.conf": _module("pyspark.conf", "", SparkConf=SparkConf),
        "pyspark.context": _module("pyspark.context", "", SparkContext=SparkContextShim),
    }
    modules["pyspark"].conf = modules["pyspark.conf"]
    modules["pyspark"].errors = modules["pyspark.errors"]
    return modules


class _MissingPySpark(importlib.abc.MetaPathFinder):
    """Answers an import of a part of PySpark Quiver does not provide with an error that names it."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if fullname == "pyspark" or fullname.startswith("pyspark."):
            raise ModuleNotFoundError(
                f"{fullname} is not part of Quiver's PySpark API (pyspark imports run on Quiver here): Quiver "
                "provides pyspark.sql (SparkSession, DataFrame, functions, types, Window) and pyspark.errors; "
                "quiver-submit --pyspark-api pyspark runs the application on real PySpark instead", name=fullname)
        return None


def use_as_pyspark() -> None:
    """From now on, `import pyspark` and `from pyspark.sql import ...` in this process give Quiver's API."""
    present = sys.modules.get("pyspark")
    if present is not None:
        if getattr(present, "SparkConf", None) is SparkConf:
            return
        raise ImportError("real PySpark is already imported in this process; call quiver.use_as_pyspark() before "
                          "anything imports pyspark")
    sys.modules.update(pyspark_modules())
    if not any(isinstance(f, _MissingPySpark) for f in sys.meta_path):
        sys.meta_path.insert(0, _MissingPySpark())


__all__ = ["PYSPARK_API_VERSION", "SparkConf", "pyspark_modules", "use_as_pyspark"]
