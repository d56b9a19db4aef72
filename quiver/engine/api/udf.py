"""User-defined functions, shaped like PySpark's: `F.udf`, `F.pandas_udf`, `spark.udf.register`, and
`quiver.udf(fn, returnType, engine="numba")` for numeric functions numba compiles.

    @F.udf(returnType="int")
    def plus_one(x): return None if x is None else x + 1
    df.select(plus_one("a"))                       # column `plus_one(a)`, as in PySpark

A call builds a `PythonUDF` expression; the CPU executor evaluates it over whole batches
(quiver/executors/cpu/python_udf.py): a row UDF on Python values with PySpark's conversion of the result
(a value the declared type cannot hold becomes null), a pandas UDF once per batch on Series, a
numba UDF compiled once per argument signature over numpy columns.
"""
from __future__ import annotations

import typing
from collections.abc import Callable, Iterable
from typing import Any

from quiver.engine.analysis.catalog import SessionCatalog
from quiver.engine.api.column import Column, to_expr
from quiver.engine.core import plan as L
from quiver.engine.core import types as T
from quiver.engine.core.errors import AnalysisException, ConfigurationError
from quiver.engine.core.expressions import NUMBA_UDF as NUMBA
from quiver.engine.core.expressions import PANDAS_ITER_UDF as PANDAS_ITER
from quiver.engine.core.expressions import PANDAS_UDF as PANDAS
from quiver.engine.core.expressions import ROW_UDF as ROW
from quiver.engine.core.expressions import Expr, PythonUDF
from quiver.engine.core.resources import requested_device

ENGINES = ("python", "numba")


class PythonEvalType:
    """PySpark's codes for how a UDF is evaluated (the `evalType` of a UDF)."""

    SQL_BATCHED_UDF = 100
    SQL_SCALAR_PANDAS_UDF = 200
    SQL_GROUPED_MAP_PANDAS_UDF = 201
    SQL_GROUPED_AGG_PANDAS_UDF = 202
    SQL_WINDOW_AGG_PANDAS_UDF = 203
    SQL_SCALAR_PANDAS_ITER_UDF = 204


class PandasUDFType:
    """`functionType` values of `pandas_udf`, as `pyspark.sql.functions.PandasUDFType`.

    >>> F.PandasUDFType.SCALAR
    200
    """

    SCALAR = PythonEvalType.SQL_SCALAR_PANDAS_UDF
    SCALAR_ITER = PythonEvalType.SQL_SCALAR_PANDAS_ITER_UDF
    GROUPED_MAP = PythonEvalType.SQL_GROUPED_MAP_PANDAS_UDF
    GROUPED_AGG = PythonEvalType.SQL_GROUPED_AGG_PANDAS_UDF


_EVAL_TYPES = {ROW: PythonEvalType.SQL_BATCHED_UDF, PANDAS: PandasUDFType.SCALAR,
               PANDAS_ITER: PandasUDFType.SCALAR_ITER, NUMBA: PythonEvalType.SQL_BATCHED_UDF}


def _data_type(value: T.DataType | str, what: str) -> T.DataType:
    if isinstance(value, T.DataType):
        return value
    if isinstance(value, str):
        return T.parse_data_type(value)
    raise TypeError(f"{what} must be a DataType or a DDL type string such as 'int' or 'array<string>', "
                    f"got {type(value).__name__}: {value!r}")


class UserDefinedFunction:
    """A Python function with a declared result type; calling it on columns gives a Column.

    `func`, `returnType`, `evalType`, `deterministic` and `asNondeterministic()` are PySpark's names.

    >>> shout = F.udf(lambda s: s.upper() + "!", "string")
    >>> df.select(shout("name").alias("s")).collect()
    [Row(s='ALICE!'), Row(s='BOB!')]
    """

    def __init__(self, func: Callable, returnType: T.DataType | str = T.StringType(), name: str | None = None,
                 kind: str = ROW, deterministic: bool = True):
        if not callable(func):
            raise TypeError(f"a UDF wraps a function, got {type(func).__name__}: {func!r}")
        self.func = func
        self._return_type = _data_type(returnType, "returnType")
        self._name = name or getattr(func, "__name__", None) or type(func).__name__
        self.kind = kind
        self.deterministic = deterministic
        for attr in ("__module__", "__doc__"):
            value = getattr(func, attr, None)
            if value is not None:
                setattr(self, attr, value)
        self.__name__ = self._name
        if kind == NUMBA:
            from quiver.executors.cpu.numba_udf import NumbaKernels  # numba, only for a numba UDF

            self._kernels = NumbaKernels(func, self._return_type, self._name)

    @property
    def returnType(self) -> T.DataType:
        """The declared type of the function's results (a DDL string given to `udf` is parsed into a DataType).

        >>> F.udf(lambda x: x + 1, "int").returnType
        IntegerType()
        """
        return self._return_type

    @property
    def evalType(self) -> int:
        """PySpark's code for how the function is evaluated (`PythonEvalType`): 100 for a row-at-a-time `udf`
        (a numba one too), 200 for a scalar `pandas_udf`, 204 for an iterator-of-batches one; code that
        dispatches on PySpark's codes reads them unchanged.

        >>> F.udf(lambda x: x + 1, "int").evalType
        100
        >>> F.pandas_udf(lambda s: s + 1, "long").evalType
        200
        """
        return _EVAL_TYPES[self.kind]

    def __repr__(self) -> str:
        return f"UserDefinedFunction({self._name}, {self._return_type.simpleString()}, {self.kind})"

    def __call__(self, *cols: Any) -> Column:
        return Column(self.call(tuple(to_expr(c) for c in cols)))

    def call(self, args: tuple[Expr, ...]) -> PythonUDF:
        """The expression of this function applied to `args` (what calling it on columns wraps).

        >>> inc = F.udf(lambda x: x + 1, "int")
        >>> df.select(quiver.Column(inc.call((F.col("age").expr,))).alias("n")).collect()
        [Row(n=3), Row(n=6)]
        """
        return PythonUDF(self._name, self, self._return_type, args, self.kind, self.deterministic)

    def asNondeterministic(self) -> UserDefinedFunction:
        """Mark the function nondeterministic (as PySpark, in place): calls are then never moved,
        duplicated or merged by the optimizer.

        >>> f = F.udf(lambda x: x, "int").asNondeterministic()
        >>> f.deterministic
        False
        """
        self.deterministic = False
        return self

    def renamed(self, name: str) -> UserDefinedFunction:
        """The same function under another name (what `spark.udf.register(name, udf)` returns).

        >>> inc = F.udf(lambda x: x + 1, "int")
        >>> df.select(inc.renamed("inc")("age")).collect()
        [Row(inc(age)=3), Row(inc(age)=6)]
        """
        out = UserDefinedFunction(self.func, self._return_type, name, self.kind, self.deterministic)
        if self.kind == NUMBA:
            out._kernels = self._kernels
        return out

    # ---------------------------------------------------------- numba (engine="numba")

    @property
    def compilations(self) -> int:
        """How many argument signatures numba compiled this function for (numba UDFs only).

        >>> f = F.udf(lambda x: x + 1.0, "double", engine="numba")
        >>> float(f.compiled("float64")(1.5))
        2.5
        >>> f.compilations
        1
        """
        return self._numba().compilations

    def compiled(self, *arg_types: Any) -> Callable:
        """The numba ufunc for these argument dtypes, compiled on first use and cached.

        >>> import numpy as np
        >>> f = F.udf(lambda x: x * 2.0, "double", engine="numba")
        >>> f.compiled("float64")(np.array([1.0, 2.5]))
        array([2., 5.])
        """
        return self._numba().vectorized(arg_types)

    def cuda_kernel(self, *arg_types: Any) -> Any:
        """The elementwise numba.cuda kernel for these argument dtypes (compiled once; needs
        `numba.cuda.is_available()`, which the CUDA simulator, NUMBA_ENABLE_CUDASIM=1, also gives).

        >>> import numpy as np
        >>> from numba import cuda
        >>> f = F.udf(lambda x: x + 1.0, "double", engine="numba")
        >>> kernel = f.cuda_kernel("float64") if cuda.is_available() else None
        >>> kernel is None or kernel(np.array([1.0, 2.0])).tolist() == [2.0, 3.0]
        True
        """
        return self._numba().cuda(arg_types)

    def _numba(self) -> Any:
        if self.kind != NUMBA:
            raise AttributeError(f"UDF {self._name} is not a numba UDF; create it with "
                                 f"quiver.udf(fn, returnType, engine='numba')")
        return self._kernels


def udf(f: Callable | T.DataType | str | None = None, returnType: T.DataType | str = T.StringType(), *,
        useArrow: bool | None = None, engine: str | None = None) -> Any:
    """A UDF from `f`, or a decorator when `f` is omitted or is the return type (`@udf("int")`).

    The default engine calls `f` once per row on Python values (None for null), as PySpark does;
    `engine="numba"` compiles `f` (numbers in, a number out) and runs it over whole columns.

    >>> @F.udf("int")
    ... def double(x):
    ...     return x * 2
    >>> df.select(double("age").alias("d")).collect()
    [Row(d=4), Row(d=10)]
    """
    engine = (engine or "python").lower()
    if engine not in ENGINES:
        raise ConfigurationError(f"udf engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    if f is None or isinstance(f, (T.DataType, str)):
        declared = returnType if f is None else f
        return lambda fn: _make_udf(fn, declared, engine)
    return _make_udf(f, returnType, engine)


def _make_udf(fn: Callable, returnType: T.DataType | str, engine: str) -> UserDefinedFunction:
    if engine == "numba":
        return UserDefinedFunction(fn, returnType, kind=NUMBA)
    return UserDefinedFunction(fn, returnType, kind=ROW)


def pandas_udf(f: Callable | T.DataType | str | None = None, returnType: T.DataType | str | None = None,
               functionType: int | None = None) -> Any:
    """A vectorized UDF: `f` takes pandas Series (one per argument) and returns a Series of the same
    length; `Iterator[pd.Series] -> Iterator[pd.Series]` is also accepted. As a decorator:
    `@pandas_udf("double")`, `@pandas_udf(returnType=T.DoubleType())`.

    >>> @F.pandas_udf("long")
    ... def plus_one(s):
    ...     return s + 1
    >>> df.select(plus_one("age").alias("p")).collect()
    [Row(p=3), Row(p=6)]
    """
    if f is None or isinstance(f, (T.DataType, str)):
        declared = returnType if f is None else f
        if f is not None and isinstance(returnType, int) and functionType is None:
            functionType = returnType  # @pandas_udf("double", PandasUDFType.SCALAR)
        return lambda fn: _make_pandas_udf(fn, declared, functionType)
    return _make_pandas_udf(f, returnType, functionType)


def _make_pandas_udf(fn: Callable, returnType: T.DataType | str | None,
                     functionType: int | None) -> UserDefinedFunction:
    if returnType is None:
        raise TypeError(f"pandas_udf {getattr(fn, '__name__', fn)!r} needs a returnType, e.g. @pandas_udf('double')")
    kind = _pandas_kind(fn, functionType)
    return UserDefinedFunction(fn, returnType, kind=kind)


_SUPPORTED_PANDAS = ("Series -> Series (PandasUDFType.SCALAR) and Iterator[Series] -> Iterator[Series] "
                     "(PandasUDFType.SCALAR_ITER)")


def _pandas_kind(fn: Callable, functionType: int | None) -> str:
    if functionType is not None:
        if functionType == PandasUDFType.SCALAR:
            return PANDAS
        if functionType == PandasUDFType.SCALAR_ITER:
            return PANDAS_ITER
        raise NotImplementedError(f"pandas_udf functionType {functionType} is not supported; Quiver runs "
                                  f"{_SUPPORTED_PANDAS}. For grouped maps use mapInPandas, "
                                  "for aggregates groupBy().agg()")
    hints = _type_hints(fn)
    returned = hints.get("return")
    if returned is None:
        return PANDAS
    if _is_iterator_hint(returned):
        return PANDAS_ITER
    if _is_pandas_hint(returned):
        return PANDAS
    raise NotImplementedError(
        f"pandas_udf {getattr(fn, '__name__', fn)!r} returns {returned!r}: a grouped aggregate (Series -> scalar) "
        f"pandas UDF, which Quiver does not run yet; it runs {_SUPPORTED_PANDAS}")


def _type_hints(fn: Callable) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn)
    except Exception:  # noqa: BLE001 — unresolvable hints (forward references) count as none
        return dict(getattr(fn, "__annotations__", {}) or {})


def _is_iterator_hint(hint: Any) -> bool:
    import collections.abc

    origin = typing.get_origin(hint)
    return origin in (collections.abc.Iterator, collections.abc.Iterable, collections.abc.Generator)


def _is_pandas_hint(hint: Any) -> bool:
    if isinstance(hint, str):
        return "Series" in hint or "DataFrame" in hint
    module = getattr(hint, "__module__", "") or ""
    return module.startswith("pandas")


# ---------------------------------------------------------- spark.udf


class UDFRegistration:
    """`spark.udf`: `register(name, f, returnType)` makes a Python function callable from SQL.

    >>> spark.udf.register("plus_one", lambda x: x + 1, "int") is not None
    True
    >>> spark.sql("SELECT plus_one(41) AS v").collect()
    [Row(v=42)]
    """

    def __init__(self, catalog: SessionCatalog):
        self._catalog = catalog

    def register(self, name: str, f: Callable | UserDefinedFunction,
                 returnType: T.DataType | str | None = None) -> UserDefinedFunction:
        """Register `f` (a function, or a UDF made by udf/pandas_udf) as `name`; returns the UDF.

        >>> twice = spark.udf.register("twice", lambda x: x * 2, "int")
        >>> spark.sql("SELECT twice(21) AS v").collect()
        [Row(v=42)]
        >>> df.select(twice("age").alias("t")).collect()
        [Row(t=4), Row(t=10)]
        """
        if isinstance(f, UserDefinedFunction):
            if returnType is not None:
                raise TypeError(f"register({name!r}, ...): the return type comes from the UDF itself "
                                f"({f.returnType.simpleString()}); drop returnType=")
            registered = f.renamed(name)
        else:
            registered = UserDefinedFunction(f, returnType if returnType is not None else T.StringType(), name)
        self._catalog.register_function(name, registered)
        return registered

    def registerJavaFunction(self, name: str, javaClassName: str, returnType: Any = None) -> None:
        """PySpark's registration of a Java UDF by class name; Quiver runs no JVM, so it raises
        NotImplementedError saying to register a Python function with `register` instead.

        >>> spark.udf.registerJavaFunction("f", "com.example.F")
        Traceback (most recent call last):
            ...
        NotImplementedError: Quiver runs no JVM: register a Python function with spark.udf.register instead
        """
        raise NotImplementedError("Quiver runs no JVM: register a Python function with spark.udf.register instead")


# ---------------------------------------------------------- mapInArrow / mapInPandas


def map_in_batches(plan: Any, func: Callable[[Iterable[Any]], Iterable[Any]], schema: T.StructType | str,
                   kind: str, profile: Any = None, barrier: bool = False) -> Any:
    """The logical node of `df.mapInArrow` (kind "arrow") or `df.mapInPandas` (kind "pandas")."""
    method = "mapInArrow" if kind == "arrow" else "mapInPandas"
    if not callable(func):
        raise TypeError(f"{method}() takes a function of an iterator of batches, got {type(func).__name__}")
    if barrier:
        raise NotImplementedError(f"{method}(barrier=True): barrier execution (all tasks started together) is not "
                                  "supported; Quiver runs the tasks of a stage as threads become free")
    if isinstance(func, UserDefinedFunction):
        func = func.func
    try:
        out_schema = _data_type(schema, f"the schema of {method}()")
    except Exception as exc:
        raise AnalysisException(f"{method}(): cannot parse schema {schema!r}: {exc}") from exc
    if not isinstance(out_schema, T.StructType):
        raise AnalysisException(f"{method}() needs a struct schema such as 'id long, name string', "
                                f"got {out_schema.simpleString()}")
    return L.MapInBatches(plan, func, kind, L.attributes_of(out_schema), requested_device(profile))


__all__ = [
    "UserDefinedFunction", "udf", "pandas_udf", "PandasUDFType", "PythonEvalType", "UDFRegistration",
    "map_in_batches",
]
