"""User-defined functions (quiver/engine/api/udf.py, quiver/executors/cpu/python_udf.py,
quiver/executors/cpu/numba_udf.py) and mapInArrow / mapInPandas (quiver/executors/cpu/map_batches.py), through
the public API."""
from __future__ import annotations

import datetime as dt
import decimal
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator

import pandas as pd
import pyarrow as pa
import pytest

import quiver
from quiver import functions as F
from quiver import types as T
from quiver.engine.core import plan as L
from quiver.engine.core.errors import AnalysisException, ConfigurationError, PythonException, TaskFailedError
from quiver.engine.execution.query_execution import QueryExecution
from quiver.planners.physical import nodes as P
from quiver.resource import ExecutorResourceRequests, ResourceProfileBuilder, TaskResourceRequests


@pytest.fixture
def df(spark):
    return spark.createDataFrame([(1, "a", 1.5), (None, None, None), (3, "c", 2.0), (4, "d", -1.0)],
                                 "x int, s string, d double")


@pytest.fixture
def in_process(spark):
    """UDFs run on the task's thread: a test that watches calls through a list in this process needs
    that, since in a Python worker (the default, as in PySpark) the calls append to the worker's copy."""
    spark.conf.set("quiver.python.udf.inProcess", "true")
    yield
    spark.conf.unset("quiver.python.udf.inProcess")


@pytest.fixture
def one_attempt(spark):
    """Failing tasks fail at once instead of being retried (the default retries 4 times)."""
    previous = spark.conf.get("spark.task.maxFailures")
    spark.conf.set("spark.task.maxFailures", 1)
    yield
    spark.conf.set("spark.task.maxFailures", previous)


def values(frame, column: int = 0) -> list:
    return [r[column] for r in frame.collect()]


def optimized(frame) -> L.LogicalPlan:
    return QueryExecution(frame._execution().context, frame._plan, describe_only=True).optimized


def physical(frame) -> P.PhysicalPlan:
    return QueryExecution(frame._execution().context, frame._plan, describe_only=True).physical


# ---------------------------------------------------------------- row UDFs


def test_udf_gets_python_values_and_none_for_null(df, in_process):
    seen = []

    def describe(x, s):
        seen.append((x, s))
        return f"{x}:{s}"

    out = df.select(F.udf(describe)("x", F.col("s")))
    assert out.columns == ["describe(x, s)"]
    assert out.dtypes == [("describe(x, s)", "string")]
    assert values(out) == ["1:a", "None:None", "3:c", "4:d"]
    assert (None, None) in seen


def test_decorator_forms_and_ddl_return_types(df):
    @F.udf
    def as_text(x):
        return x

    @F.udf()
    def as_text2(x):
        return x

    @F.udf("int")
    def plus_one(x):
        return None if x is None else x + 1

    @F.udf(returnType=T.LongType())
    def times_two(x):
        return None if x is None else x * 2

    out = df.select(as_text("x"), as_text2("x"), plus_one("x"), times_two(F.col("x") + 1), plus_one(F.lit(41)))
    assert out.columns == ["as_text(x)", "as_text2(x)", "plus_one(x)", "times_two((x + 1))", "plus_one(41)"]
    assert [t for _, t in out.dtypes] == ["string", "string", "int", "bigint", "int"]
    assert out.collect()[0] == ("1", "1", 2, 4, 42)
    assert out.collect()[1] == (None, None, None, None, 42)
    assert plus_one.__name__ == "plus_one" and plus_one.returnType == T.IntegerType()


def test_nested_ddl_return_types(df):
    arr = F.udf(lambda x: [x, x], "array<int>")
    st = F.udf(lambda x, s: (x, s), "struct<a:int,b:string>")
    mp = F.udf(lambda s: {s: 1} if s else None, "map<string,int>")
    dec = F.udf(lambda d: decimal.Decimal(str(d)) if d is not None else None, "decimal(10,2)")
    out = df.select(arr("x").alias("arr"), st("x", "s").alias("st"), mp("s").alias("mp"), dec("d").alias("dec"))
    assert [t for _, t in out.dtypes] == ["array<int>", "struct<a:int,b:string>", "map<string,int>", "decimal(10,2)"]
    first = out.collect()[0]
    assert first.arr == [1, 1]
    assert (first.st.a, first.st.b) == (1, "a")
    assert first.mp == {"a": 1}
    assert first.dec == decimal.Decimal("1.50")


def test_struct_and_map_arguments_arrive_as_row_and_dict(spark):
    frame = spark.createDataFrame([((1, "x"), {"k": 2})], "st struct<a:int,b:string>, mp map<string,int>")
    got = frame.select(F.udf(lambda st, mp: f"{st.a}{st['b']}{mp['k']}")("st", "mp")).collect()[0][0]
    assert got == "1x2"


@pytest.mark.parametrize("result, dtype, expected", [
    ("5", T.IntegerType(), None),            # a str for an int UDF: null, as PySpark
    (1.5, T.IntegerType(), None),
    (True, T.IntegerType(), None),
    (1, T.DoubleType(), None),               # an int for a double UDF: null, as PySpark
    (decimal.Decimal("1.5"), T.DoubleType(), None),
    (1, T.BooleanType(), None),
    (2**33 + 5, T.IntegerType(), 5),         # Java's narrowing of a long
    (300, T.ByteType(), 44),
    (2**70, T.LongType(), None),
    (12, T.StringType(), "12"),
    (1.0, T.StringType(), "1.0"),
    (True, T.StringType(), "true"),
    ([1, 2], T.StringType(), "[1, 2]"),
    ("ab", T.ArrayType(T.IntegerType()), None),
    ([1, "a", None], T.ArrayType(T.IntegerType()), [1, None, None]),
    ((1, 2), T.ArrayType(T.IntegerType()), [1, 2]),
    (1.5, T.DecimalType(10, 2), None),
    (decimal.Decimal("1.234"), T.DecimalType(10, 2), decimal.Decimal("1.23")),
    ("ab", T.BinaryType(), b"ab"),
    (dt.datetime(2020, 1, 2, 3, 4), T.DateType(), dt.date(2020, 1, 2)),
    (float("nan"), T.DoubleType(), "nan"),
])
def test_results_the_type_cannot_hold_become_null(spark, result, dtype, expected):
    got = spark.range(2).select(F.udf(lambda _: result, dtype)("id")).collect()
    if expected == "nan":
        assert all(r[0] != r[0] for r in got)
    else:
        assert [r[0] for r in got] == [expected, expected]


def test_register_makes_the_function_callable_from_sql(spark, df):
    returned = spark.udf.register("plus_ten", lambda x: None if x is None else x + 10, "int")
    df.createOrReplaceTempView("udf_t")
    out = spark.sql("SELECT PLUS_TEN(x) AS y, plus_ten(x + 1) FROM udf_t WHERE plus_ten(x) > 12")
    assert out.columns == ["y", "plus_ten((x + 1))"]
    assert sorted(values(out)) == [13, 14]
    assert values(df.select(returned("x"))) == [11, None, 13, 14]
    assert df.select(returned("x")).columns == ["plus_ten(x)"]
    assert values(df.selectExpr("plus_ten(x) AS y")) == [11, None, 13, 14]
    assert values(df.select(F.expr("plus_ten(x) * 2"))) == [22, None, 26, 28]


def test_register_an_existing_udf(spark, df):
    upper = F.udf(lambda s: s.upper() if s else s)
    registered = spark.udf.register("shout", upper)
    df.createOrReplaceTempView("udf_t2")
    assert values(spark.sql("SELECT shout(s) FROM udf_t2")) == ["A", None, "C", "D"]
    assert registered.returnType == T.StringType()
    with pytest.raises(TypeError, match="return type comes from the UDF"):
        spark.udf.register("shout2", upper, "int")


def test_exception_fails_the_task_naming_the_udf(df, one_attempt):
    def explode(x):
        return 1 // (x - 3) if x is not None else None

    with pytest.raises(TaskFailedError) as info:
        df.select(F.udf(explode, "int")("x")).collect()
    err = info.value
    assert "explode" in str(err)
    assert isinstance(err.__cause__, PythonException)
    assert "explode" in str(err.__cause__) and "ZeroDivisionError" in str(err.__cause__)
    assert isinstance(err.__cause__.__cause__, ZeroDivisionError)


def test_udf_is_never_evaluated_at_planning_time(df, in_process):
    calls = []

    def tracked(x):
        calls.append(x)
        return x

    frame = df.select(F.udf(tracked, "int")(F.lit(7)).alias("c")).filter(F.col("c") > 0)
    optimized(frame)
    physical(frame)
    assert calls == []
    assert values(frame) == [7, 7, 7, 7]
    assert len(calls) >= 4


def test_deterministic_udf_filter_is_pushed_and_nondeterministic_one_is_not(df):
    det = F.udf(lambda x: x, "int")
    nondet = F.udf(lambda x: x, "int").asNondeterministic()
    assert det.deterministic and not nondet.deterministic

    pushed = optimized(df.select(det("x").alias("u"), "s").filter(F.col("u") > 1))
    assert isinstance(pushed, L.Project) and isinstance(pushed.child, L.Filter)

    kept = optimized(df.select(nondet("x").alias("u"), "s").filter(F.col("u") > 1))
    assert isinstance(kept, L.Filter) and isinstance(kept.child, L.Project)

    nondet_condition = optimized(df.select((F.col("x") + 1).alias("x1"), "s").filter(nondet("x1") > 1))
    assert isinstance(nondet_condition, L.Filter) and isinstance(nondet_condition.child, L.Project)
    det_condition = optimized(df.select((F.col("x") + 1).alias("x1"), "s").filter(det("x1") > 1))
    assert isinstance(det_condition, L.Project) and isinstance(det_condition.child, L.Filter)

    limited = optimized(df.select(nondet("x").alias("u")).limit(2))
    assert isinstance(limited, L.Limit) and isinstance(limited.child, L.Project)
    assert values(df.select(nondet("x").alias("u")).filter(F.col("u") > 1)) == [3, 4]


def test_zero_argument_udf_is_called_once_per_row(spark):
    assert values(spark.range(3).select(F.udf(lambda: "k")())) == ["k", "k", "k"]


def test_udf_in_filter_group_by_and_order_by(spark, partitions):
    frame = spark.range(20)
    bucket = F.udf(lambda i: i % 3, "long")
    out = (frame.filter(bucket("id") != 0).groupBy(bucket("id").alias("b")).agg(F.count("*").alias("n"))
           .orderBy(F.udf(lambda b: -b, "long")("b")))
    assert [tuple(r) for r in out.collect()] == [(2, 6), (1, 7)]


# ---------------------------------------------------------------- pandas UDFs


def test_pandas_udf_series_to_series(df):
    @F.pandas_udf("double")
    def scaled(x: pd.Series, d: pd.Series) -> pd.Series:
        return x * 10 + d

    out = df.select(scaled("x", "d"))
    assert out.columns == ["scaled(x, d)"] and out.dtypes[0][1] == "double"
    assert values(out) == [11.5, None, 32.0, 39.0]


def test_pandas_udf_without_hints_and_with_function_type(df):
    plus = F.pandas_udf(lambda s: s + 1, returnType=T.LongType())
    assert values(df.select(plus("x"))) == [2, None, 4, 5]
    upper = F.pandas_udf(lambda s: s.str.upper(), "string", F.PandasUDFType.SCALAR)
    assert values(df.select(upper("s"))) == ["A", None, "C", "D"]


def test_pandas_udf_iterator_form(df):
    @F.pandas_udf("long")
    def plus_one(batches: Iterator[pd.Series]) -> Iterator[pd.Series]:
        for s in batches:
            yield s + 1

    assert values(df.select(plus_one("x"))) == [2, None, 4, 5]


def test_pandas_udf_wrong_length_and_unsupported_forms(df, one_attempt):
    short = F.pandas_udf(lambda s: s.head(1), "long")
    with pytest.raises(TaskFailedError, match="returned 1 values"):
        df.select(short("x")).collect()

    def mean(s: pd.Series) -> float:
        return s.mean()

    with pytest.raises(NotImplementedError, match="grouped aggregate"):
        F.pandas_udf(mean, "double")
    with pytest.raises(NotImplementedError, match="SCALAR"):
        F.pandas_udf(lambda s: s, "long", F.PandasUDFType.GROUPED_MAP)


# ---------------------------------------------------------------- numba UDFs


def test_numba_udf_over_columns_with_nulls(spark):
    frame = spark.createDataFrame([(1, 2.0), (None, 1.0), (3, None), (4, 0.5)], "a int, b double")
    f = quiver.udf(lambda a, b: a * 2 + b, "double", engine="numba")
    out = frame.select(f("a", "b").alias("r"))
    assert out.dtypes == [("r", "double")]
    assert values(out) == [4.0, None, None, 8.5]
    flag = quiver.udf(lambda a: a > 2, T.BooleanType(), engine="numba")
    assert values(frame.select(flag("a"))) == [False, None, True, True]


def test_numba_udf_compiles_once_per_signature(spark):
    def poly(x):
        return x * x + 1

    f = quiver.udf(poly, "double", engine="numba")
    ints = spark.range(0, 5000, numPartitions=4).select(F.col("id").cast("int").alias("i"))
    assert f.compilations == 0
    query = ints.select(f("i"))
    assert f.compilations == 1  # at analysis, for (int32,)
    query.collect()
    ints.select(f("i").alias("again")).collect()
    assert f.compilations == 1
    assert sum(values(ints.select(f("i")))) == sum(float(i * i + 1) for i in range(5000))
    spark.range(3).select(f("id")).collect()
    assert f.compilations == 2  # (int64,)
    spark.range(3).select(f(F.col("id").cast("double"))).collect()
    assert f.compilations == 3
    assert f.compiled("float64") is f.compiled(T.DoubleType())
    assert f.compilations == 3


def test_numba_udf_rejects_strings_naming_the_argument(df):
    f = quiver.udf(lambda a, b: a + b, "double", engine="numba")
    with pytest.raises(AnalysisException, match=r"argument 2 \(s\).*string"):
        df.select(f("x", "s"))
    with pytest.raises(AnalysisException, match="returns numbers"):
        quiver.udf(lambda a: a, "string", engine="numba")
    with pytest.raises(ConfigurationError, match="engine"):
        quiver.udf(lambda a: a, "int", engine="cython")


def test_numba_udf_that_numba_cannot_compile_fails_at_analysis(df):
    f = quiver.udf(lambda a: {"not": a}, "double", engine="numba")
    with pytest.raises(AnalysisException, match="numba could not compile"):
        df.select(f("x"))


def test_numba_cuda_kernel_on_the_simulator():
    script = textwrap.dedent("""
        import numpy as np, quiver
        f = quiver.udf(lambda a, b: a * 2 + b, "double", engine="numba")
        k = f.cuda_kernel("int32", "float64")
        out = k(np.arange(5, dtype=np.int32), np.full(5, 0.5))
        assert out.tolist() == [0.5, 2.5, 4.5, 6.5, 8.5], out
        assert f.cuda_kernel(np.int32, np.float64) is k
        assert f._kernels.cuda_compilations == 1
        print("ok")
    """)
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "ok" in done.stdout


# ---------------------------------------------------------------- mapInArrow / mapInPandas


def test_map_in_arrow(spark, partitions):
    frame = spark.range(0, 100, numPartitions=3).withColumn("v", F.col("id") * 2)

    def double(batches):
        for b in batches:
            assert b.schema.names == ["id", "v"]
            yield pa.RecordBatch.from_pydict({"id": b.column("id"), "w": pa.compute.multiply(b.column("v"), 2)})

    out = frame.mapInArrow(double, "id long, w long")
    assert out.dtypes == [("id", "bigint"), ("w", "bigint")]
    rows = sorted(tuple(r) for r in out.collect())
    assert rows == [(i, 4 * i) for i in range(100)]
    filtered = out.filter(F.col("w") > 10).select("w")
    assert sorted(values(filtered)) == [4 * i for i in range(3, 100)]
    assert out.count() == 100


def test_map_in_pandas_with_struct_type_schema_and_filtering_function(df):
    def positive(frames):
        for pdf in frames:
            yield pdf[pdf.d > 0][["s", "d"]]

    schema = T.StructType([T.StructField("s", T.StringType()), T.StructField("d", T.DoubleType())])
    out = df.mapInPandas(positive, schema)
    assert sorted(tuple(r) for r in out.collect()) == [("a", 1.5), ("c", 2.0)]


def test_map_in_pandas_matches_unlabelled_columns_by_position_and_narrows_types(df):
    def renumbered(frames):
        for pdf in frames:
            yield pd.DataFrame({0: pdf.x.fillna(0).astype("int64"), 1: pdf.s})

    out = df.mapInPandas(renumbered, "n int, label string")
    assert sorted(values(out)) == [0, 1, 3, 4]
    assert out.dtypes == [("n", "int"), ("label", "string")]


def test_map_output_checked_against_schema(df, one_attempt):
    def missing(batches):
        for b in batches:
            yield pa.RecordBatch.from_pydict({"x": b.column("x")})

    with pytest.raises(TaskFailedError, match="missing column.*'y'") as info:
        df.mapInArrow(missing, "x int, y string").collect()
    assert isinstance(info.value.__cause__, PythonException)

    def mistyped(batches):
        for b in batches:
            yield pa.RecordBatch.from_pydict({"x": b.column("s")})

    with pytest.raises(TaskFailedError, match="column 'x'.*string.*int"):
        df.mapInArrow(mistyped, "x int").collect()

    def wrong_pandas(frames):
        for pdf in frames:
            yield pd.DataFrame({"x": ["not a number"] * len(pdf)})

    with pytest.raises(TaskFailedError, match="column 'x'"):
        df.mapInPandas(wrong_pandas, "x int").collect()

    with pytest.raises(TaskFailedError, match="must return an iterator of pyarrow.RecordBatch"):
        df.mapInArrow(lambda batches: None, "x int").collect()

    def raises(batches):
        for _ in batches:
            raise KeyError("boom")
        yield from ()

    with pytest.raises(TaskFailedError, match="raises.*KeyError") as info:
        df.mapInArrow(raises, "x int").collect()
    assert isinstance(info.value.__cause__.__cause__, KeyError)

    with pytest.raises(AnalysisException, match="struct schema"):
        df.mapInArrow(missing, "int")


def test_map_keeps_every_child_column_and_is_not_pushed_through(df):
    seen = []

    def passthrough(batches):
        for b in batches:
            seen.append(b.schema.names)
            yield pa.RecordBatch.from_pydict({"x": b.column("x")})

    out = df.mapInArrow(passthrough, "x int").filter(F.col("x") > 1).limit(5)
    plan = optimized(out)
    maps = [n for n in plan.walk() if isinstance(n, L.MapInBatches)]
    assert len(maps) == 1
    assert {a.name for a in maps[0].child.output} == {"x", "s", "d"}
    above = [n for n in plan.walk() if isinstance(n, L.Filter)]
    assert above and all(any(m is c for c in f.walk()) for f in above for m in maps)
    assert sorted(values(out)) == [3, 4]
    assert all(names == ["x", "s", "d"] for names in seen)


def test_map_with_gpu_resource_profile_pins_the_operator(df):
    profile = ResourceProfileBuilder().require(TaskResourceRequests().resource("gpu", 1)).build
    assert profile.taskResources["gpu"].amount == 1

    def ident(batches):
        yield from batches

    out = df.mapInArrow(ident, "x int, s string, d double", profile=profile)
    node = next(n for n in physical(out).walk() if isinstance(n, P.MapInBatchesExec))
    assert node.device_pin == "gpu" and node.device_pin == "gpu"
    assert len(out.collect()) == 4  # no GPU executor runs the map yet: the CPU does

    npu = ResourceProfileBuilder().require(TaskResourceRequests().cpus(1).resource("npu", 1)) \
        .require(ExecutorResourceRequests().cores(2).memory("4g")).build
    out = df.mapInPandas(lambda frames: frames, "x int, s string, d double", profile=npu)
    node = next(n for n in physical(out).walk() if isinstance(n, P.MapInBatchesExec))
    assert node.device_pin == "npu"
    plain = next(n for n in physical(df.mapInArrow(ident, "x int, s string, d double")).walk()
                 if isinstance(n, P.MapInBatchesExec))
    assert plain.device_pin is None


def test_resource_profile_errors(df):
    def ident(batches):
        yield from batches

    builder = ResourceProfileBuilder().require(TaskResourceRequests().resource("gpu", 1))
    with pytest.raises(ConfigurationError, match=r"\.build"):
        df.mapInArrow(ident, "x int", profile=builder)
    fpga = ResourceProfileBuilder().require(TaskResourceRequests().resource("fpga", 1)).build
    with pytest.raises(ConfigurationError, match="fpga"):
        df.mapInArrow(ident, "x int", profile=fpga)
