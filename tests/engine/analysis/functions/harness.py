"""The shared half of the function-signature tests, which check each domain's F wrappers and catalog
entries against PySpark: column names and result types.

Each case calls the same function with the same arguments through `pyspark.sql.functions`
and `quiver.functions`; the PySpark column name and Spark type (from one select over a
typed, empty DataFrame) are the expected values, so the table is PySpark's, not ours.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

from quiver import functions as QF
from quiver.engine.analysis.functions.catalog import lookup, result_type_of
from quiver.engine.core import types as T
from quiver.engine.core.expressions import Cast, Expr, ScalarFunction, UnresolvedColumn

os.environ["TZ"] = "UTC"
time.tzset()

SCHEMA = {
    "s": T.StringType(), "s2": T.StringType(), "pat": T.StringType(), "i": T.IntegerType(), "l": T.LongType(),
    "d": T.DoubleType(), "dec": T.DecimalType(5, 2), "t": T.DateType(), "ts": T.TimestampType(),
    "arr": T.ArrayType(T.StringType()), "b": T.BooleanType(), "f": T.FloatType(),
}


def case_id(case: tuple[str, tuple]) -> str:
    """The test id of a case: the call as it reads."""
    return f"{case[0]}({', '.join(map(repr, case[1]))})"


def pyspark_columns(spark: Any, cases: list[tuple[str, tuple]]) -> list[tuple[str, str]]:
    """(name, Spark type) PySpark gives each case, from one select over an empty typed DataFrame."""
    from pyspark.sql import functions as PF

    df = spark.createDataFrame([], ", ".join(f"{n} {t.simpleString()}" for n, t in SCHEMA.items()))
    selected = df.select(*[getattr(PF, name)(*args) for name, args in cases])
    return list(zip(selected.columns, [t for _, t in selected.dtypes]))


@dataclass(frozen=True)
class TypedColumn(Expr):
    """A resolved column for typing without a plan: a name and a type."""

    name: str
    data_type: T.DataType

    @property
    def dtype(self) -> T.DataType:
        return self.data_type

    def sql(self) -> str:
        return self.name


def analyze(expr: Expr) -> Expr:
    """What the analyzer does for scalar functions: resolve columns, insert the catalog's casts."""
    if isinstance(expr, UnresolvedColumn):
        return TypedColumn(expr.parts[-1], SCHEMA[expr.parts[-1]])
    if isinstance(expr, ScalarFunction):
        args = [analyze(a) for a in expr.args]
        spec = lookup(expr.name)
        if spec.input_types is not None:
            targets = spec.input_types([a.dtype for a in args])
            args = [a if t is None else Cast(a, t) for a, t in zip(args, targets)]
        return ScalarFunction(expr.name, tuple(args))
    return expr


def assert_name_and_type_match(case: tuple[str, tuple], cases: list[tuple[str, tuple]],
                               columns: list[tuple[str, str]]) -> None:
    """F's column name and the catalog's type for `case` are PySpark's (`columns`, from `pyspark_columns(cases)`)."""
    name, args = case
    expected_name, expected_type = columns[cases.index(case)]
    column = getattr(QF, name)(*args)
    assert column.expr.sql() == expected_name
    analyzed = analyze(column.expr)
    assert result_type_of(analyzed.name, analyzed.args).simpleString() == expected_type
