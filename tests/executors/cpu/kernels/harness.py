"""The shared half of the kernel tests, which check each domain's CPU kernels against real PySpark:
the same function on the same values, with nulls.

Every case runs through the catalog's implicit casts and result type, then the kernel,
exactly as the analyzer and executor will; the reference is one Spark SQL query per test
module over the same rows (non-ANSI, UTC). Values and Spark type names must match.
"""
from __future__ import annotations

import datetime as dt
import math
import os
import time
from decimal import Decimal
from typing import Any

import pyarrow as pa

from quiver.engine.analysis.functions.catalog import NOT_LITERAL, lookup
from quiver.engine.core import types as T
from quiver.executors.cpu.cast import cast_array
from quiver.executors.cpu.kernels import KERNELS

os.environ["TZ"] = "UTC"
time.tzset()

D = Decimal
NAN, INF = float("nan"), float("inf")

SCHEMA = [
    ("s", T.StringType()), ("i", T.IntegerType()), ("l", T.LongType()), ("d", T.DoubleType()),
    ("dec", T.DecimalType(5, 2)), ("dt", T.DateType()), ("ts", T.TimestampType()), ("b", T.BooleanType()),
    ("arr", T.ArrayType(T.StringType())), ("sd", T.StringType()), ("n", T.IntegerType()), ("f", T.FloatType()),
]
COLUMNS = {
    "s": ["Ab c", None, "", "  x y  ", "\tx\n", "ß straße", "héllo wORLD foo-bar", "aB_cD", "😀x", "abcb",
          "a%", "a,b;c,,", "ΟΔΟΣ İ ǆ ﬁx ŉ", " 12 ", "1.5", "o'neil mc-donald"],
    "i": [15, 25, -15, None, -2147483648, 2147483647, 0, 1, -1, 7, 100, 3, 2, -7, 12, 5],
    "l": [-9223372036854775808, 5, -128, None, 9223372036854775807, 0, 15, -25, 1, 2, 3, 4, 10**12, -1, 6, 7],
    "d": [2.5, -2.5, 0.125, 1.005, -0.0, None, NAN, INF, -1.0, 0.0, 1e300, 15.0, 25.0, 2.675, 1e-5, -INF],
    "dec": [D("2.55"), D("-2.55"), D("999.99"), None, D("0.00"), D("1.25"), D("-1.25"), D("0.05"), D("12.34"),
            D("100.00"), D("-0.01"), D("5.55"), D("3.14"), D("9.99"), D("0.50"), D("-999.99")],
    "dt": [dt.date(2024, 1, 31), dt.date(2024, 2, 29), dt.date(2023, 12, 31), dt.date(2021, 1, 3), None,
           dt.date(1969, 12, 31), dt.date(2020, 12, 31), dt.date(2024, 3, 31), dt.date(2000, 1, 1),
           dt.date(1900, 3, 1), dt.date(2024, 12, 30), dt.date(2021, 1, 1), dt.date(2024, 6, 15),
           dt.date(1970, 1, 1), dt.date(2027, 1, 1), dt.date(2024, 1, 15)],
    "ts": [dt.datetime(2024, 5, 15, 13, 45, 59, 987654), None, dt.datetime(1969, 12, 31, 23, 59, 59, 500000),
           dt.datetime(2024, 1, 5), dt.datetime(2024, 2, 29, 23, 59, 59), dt.datetime(2000, 1, 1, 12),
           dt.datetime(2024, 12, 31, 0, 0, 0, 1000), dt.datetime(2024, 3, 15, 12),
           dt.datetime(1999, 12, 31, 23, 59, 59),
           dt.datetime(2024, 1, 31, 6, 30), dt.datetime(2021, 1, 3, 1, 2, 3), dt.datetime(2024, 2, 29, 0, 0, 1),
           dt.datetime(1970, 1, 1), dt.datetime(2024, 7, 4, 18, 0, 0, 123000), dt.datetime(2030, 10, 10, 10, 10, 10),
           dt.datetime(2024, 1, 1, 0, 0)],
    "b": [True, False, None, True, False, True, False, True, False, True, False, True, False, True, False, True],
    "arr": [["a", "b"], ["a", None], None, [], ["b"], ["x", "y", "z"], ["b", "b"], [None], ["c"], ["a"],
            ["", "b"], ["q"], ["b", None], ["r", "s"], ["t"], ["u", "v"]],
    "sd": ["2024-01-05", "2024-01-05 10:11:12", "bad", None, "05/01/2024", "2024-1-5", "2024-01-05T10:11:12.345",
           "2024-02-30", " 2024-03-01 ", "2024", "2024-01-05 10:11:12.3", "5/1/2024", "Jan 5 2024",
           "2024-01-05 10:00:00+01:00", "2024-12-31 23:59:59", "1999-01-01 00:00:00"],
    "n": [2, 0, -1, None, 1, 3, 5, 10, 2, 1, 4, -3, 2, 1, 100, 0],
    "f": [1.5, 1.25, None, -2.5, 0.1, 3.4e38, NAN, 1.1, 0.0, -0.0, 2.675, 16777216.0, 1e7, 1e-4, 123456.7, 0.3],
}
ROWS = len(COLUMNS["s"])

# A case is (function, arguments): a str naming a column of the table above, or Lit(value) for a literal


class Lit:
    """A literal argument, with its SQL type where the value alone does not say it (a typed NULL)."""

    def __init__(self, value: Any, sql_type: str | None = None):
        self.value, self.sql_type = value, sql_type


def c(*names: str) -> tuple[str, ...]:
    """Column arguments by name."""
    return names


def _sql_literal(lit: Lit) -> str:
    v = lit.value
    if v is None:
        return f"CAST(NULL AS {lit.sql_type})" if lit.sql_type else "NULL"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v) if -2**31 <= v < 2**31 else f"{v}L"
    if isinstance(v, float):
        return f"double('{v}')" if not math.isfinite(v) else f"{v!r}D"
    if isinstance(v, str):
        return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"
    raise TypeError(v)


def _arrow_literal(lit: Lit) -> pa.Scalar:
    v = lit.value
    if v is None:
        return pa.scalar(None, T.parse_data_type(lit.sql_type).to_arrow() if lit.sql_type else pa.null())
    if isinstance(v, bool):
        return pa.scalar(v, pa.bool_())
    if isinstance(v, int):
        return pa.scalar(v, pa.int32() if -2**31 <= v < 2**31 else pa.int64())
    if isinstance(v, float):
        return pa.scalar(v, pa.float64())
    return pa.scalar(v, pa.string())


def case_id(case: tuple[str, tuple]) -> str:
    """The test id of a case: the call as it reads."""
    name, args = case
    return f"{name}({', '.join(a if isinstance(a, str) else repr(a.value) for a in args)})"


def source_table() -> pa.Table:
    """The rows every case runs on, as an Arrow table."""
    return pa.table({name: pa.array(COLUMNS[name], t.to_arrow()) for name, t in SCHEMA})


def pyspark_results(spark: Any, cases: list[tuple[str, tuple]]) -> dict[int, tuple[list, str]]:
    """Every case in one Spark query: column k holds case k."""
    schema = ", ".join(f"{n} {t.simpleString()}" for n, t in SCHEMA)
    rows = [tuple(COLUMNS[n][r] for n, _ in SCHEMA) for r in range(ROWS)]
    spark.createDataFrame(rows, schema).createOrReplaceTempView("t")
    exprs = []
    for k, (name, args) in enumerate(cases):
        rendered = [a if isinstance(a, str) else _sql_literal(a) for a in args]
        if name == "trim" and len(args) == 2:
            # SQL's two-argument trim(a, b) trims a's characters from b; F.trim(col, chars) is the order we test
            exprs.append(f"TRIM(BOTH {rendered[1]} FROM {rendered[0]}) AS c{k}")
        else:
            exprs.append(f"`{name}`({', '.join(rendered)}) AS c{k}")
    df = spark.sql(f"SELECT {', '.join(exprs)} FROM t")
    collected = df.collect()
    return {k: ([row[k] for row in collected], df.dtypes[k][1]) for k in range(len(cases))}


def evaluate(name: str, args: tuple, table: pa.Table) -> tuple[list, T.DataType]:
    """What the analyzer and CPU executor do with a ScalarFunction: coerce, type, run the kernel."""
    values = [table.column(a).combine_chunks() if isinstance(a, str) else _arrow_literal(a) for a in args]
    spec = lookup(name)
    types = [T.from_arrow(v.type) for v in values]
    targets = spec.input_types(types) if spec.input_types else [None] * len(values)
    coerced = [v if t is None else cast_array(v, t) for v, t in zip(values, targets)]
    coerced_types = [T.from_arrow(v.type) if t is None else t for v, t in zip(values, targets)]
    literals = [a.value if isinstance(a, Lit) else NOT_LITERAL for a in args]
    if spec.literal_result_type is not None:
        result_type = spec.literal_result_type(coerced_types, literals)
    else:
        result_type = spec.result_type(coerced_types)
    out = KERNELS[name](coerced, result_type)
    if isinstance(out, pa.Scalar):
        out = pa.array([out.as_py()] * table.num_rows, out.type)
    assert out.type == result_type.to_arrow() or pa.types.is_null(out.type), (out.type, result_type)
    return out.to_pylist(), result_type


def same(a: Any, b: Any) -> bool:
    """Equal values of the same type; NaN equals NaN, doubles to 12 digits."""
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b or math.isclose(a, b, rel_tol=1e-12)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b if a is not None and b is not None else a is b


def assert_matches_pyspark(case: tuple[str, tuple], cases: list[tuple[str, tuple]], table: pa.Table,
                           results: dict[int, tuple[list, str]]) -> None:
    """The kernel's values and type for `case` are PySpark's (`results`, from `pyspark_results(cases)`)."""
    k = cases.index(case)
    expected, expected_type = results[k]
    actual, actual_type = evaluate(case[0], case[1], table)
    assert actual_type.simpleString() == expected_type
    mismatches = [(_row(r), e, a) for r, (e, a) in enumerate(zip(expected, actual)) if not same(e, a)]
    assert not mismatches, "row inputs, PySpark, Quiver:\n" + "\n".join(map(repr, mismatches))


def _row(r: int) -> dict:
    return {n: COLUMNS[n][r] for n, _ in SCHEMA}
