"""Date and time kernels (quiver/executors/cpu/kernels/datetime.py) against real PySpark."""
from __future__ import annotations

import pyarrow as pa
import pytest

from quiver.engine.core import types as T
from quiver.engine.core.errors import QuiverError
from quiver.executors.cpu.kernels import KERNELS
from tests.executors.cpu.kernels.harness import Lit, assert_matches_pyspark, c, case_id, pyspark_results

CASES: list[tuple[str, tuple]] = [
    ("year", c("dt")), ("month", c("dt")), ("dayofmonth", c("dt")), ("day", c("dt")), ("dayofweek", c("dt")),
    ("dayofyear", c("dt")), ("quarter", c("dt")), ("weekofyear", c("dt")), ("weekday", c("dt")),
    ("last_day", c("dt")), ("year", c("ts")), ("dayofweek", c("ts")), ("year", c("sd")), ("month", c("sd")),
    ("hour", c("ts")), ("minute", c("ts")), ("second", c("ts")), ("hour", c("dt")), ("hour", c("sd")),
    ("second", c("sd")), ("date_add", ("dt", Lit(1))), ("date_sub", ("dt", Lit(1))), ("date_add", ("dt", "n")),
    ("date_add", ("ts", Lit(1))), ("date_add", ("sd", Lit(-3))), ("dateadd", ("dt", Lit(40))),
    ("datediff", ("dt", Lit("2024-01-01"))), ("datediff", ("ts", "dt")), ("datediff", ("sd", "dt")),
    ("add_months", ("dt", Lit(1))), ("add_months", ("dt", Lit(-13))), ("add_months", ("dt", "n")),
    ("add_months", ("ts", Lit(1))), ("months_between", ("ts", "dt")), ("months_between", ("dt", Lit("2024-01-31"))),
    ("months_between", ("ts", "dt", Lit(False))), ("to_date", c("sd")), ("to_date", ("sd", Lit("dd/MM/yyyy"))),
    ("to_date", ("sd", Lit("d/M/yyyy"))), ("to_date", ("sd", Lit("yyyy-MM-dd"))),
    ("to_date", ("sd", Lit("MMM d yyyy"))), ("to_date", c("ts")), ("to_timestamp", c("sd")),
    ("to_timestamp", ("sd", Lit("yyyy-MM-dd HH:mm:ss"))),
    ("to_timestamp", ("sd", Lit("yyyy-MM-dd'T'HH:mm:ss.SSS"))),
    ("to_timestamp", ("sd", Lit("yyyy-MM-dd HH:mm:ssXXX"))), ("to_timestamp", c("dt")), ("to_timestamp", c("i")),
    ("to_timestamp", c("dec")), ("date_format", ("ts", Lit("yyyy-MM-dd"))),
    ("date_format", ("ts", Lit("dd/MM/yy HH:mm:ss.SSS"))), ("date_format", ("ts", Lit("h:mm a, EEE MMM d"))),
    ("date_format", ("ts", Lit("EEEE MMMM D Q"))), ("date_format", ("dt", Lit("yyyy/MM/dd HH"))),
    ("date_format", ("sd", Lit("HH:mm"))), ("date_format", ("ts", Lit("S SS SSSSSS k K"))),
    ("date_format", ("ts", Lit("yyyy-MM-dd'T'HH:mm:ssXXX"))), ("date_trunc", (Lit("month"), "ts")),
    ("date_trunc", (Lit("YEAR"), "ts")), ("date_trunc", (Lit("week"), "ts")),
    ("date_trunc", (Lit("quarter"), "ts")), ("date_trunc", (Lit("hour"), "ts")), ("date_trunc", (Lit("dd"), "ts")),
    ("date_trunc", (Lit("millisecond"), "ts")), ("date_trunc", (Lit("bogus"), "ts")),
    ("date_trunc", (Lit("mm"), "dt")), ("trunc", ("dt", Lit("MM"))), ("trunc", ("dt", Lit("year"))),
    ("trunc", ("dt", Lit("week"))), ("trunc", ("dt", Lit("quarter"))), ("trunc", ("dt", Lit("dd"))),
    ("trunc", ("ts", Lit("mon"))), ("unix_timestamp", c("ts")), ("unix_timestamp", c("dt")),
    ("unix_timestamp", c("sd")), ("unix_timestamp", ("sd", Lit("dd/MM/yyyy"))), ("from_unixtime", c("i")),
    ("from_unixtime", ("i", Lit("yyyy-MM-dd"))),
]


@pytest.fixture(scope="module")
def spark_results(pyspark_legacy):
    return pyspark_results(pyspark_legacy, CASES)


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_matches_pyspark(case, table, spark_results):
    assert_matches_pyspark(case, CASES, table, spark_results)


def test_zero_argument_functions_return_scalars():
    today = KERNELS["current_date"]([], T.DateType())
    now = KERNELS["current_timestamp"]([], T.TimestampType())
    assert today.type == pa.date32() and now.type == pa.timestamp("us")
    assert now.as_py().date() == today.as_py()
    assert KERNELS["unix_timestamp"]([], T.LongType()).as_py() == int(now.as_py().timestamp())


def test_a_column_where_spark_needs_a_literal_is_a_clear_error():
    with pytest.raises(QuiverError, match="date_format: the format must be a literal value, not a column"):
        KERNELS["date_format"]([pa.array([0], pa.timestamp("us")), pa.array(["yyyy"])], T.StringType())
