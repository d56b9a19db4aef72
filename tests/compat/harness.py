"""Differential harness: run one PySpark-shaped program on real PySpark and on Quiver, compare.

A *program* is a plain function ``program(spark, F, T, Window) -> DataFrame`` written only
against the public PySpark API. ``assert_same`` runs it once on PySpark (the reference) and
once per shuffle-partition count on Quiver, and checks that both give the same column names,
the same Spark type names and the same rows.

Set ``QUIVER_COMPAT_ENGINE=pyspark`` to run the "quiver" side on PySpark too: that validates
the programs and the harness themselves (every test must pass in that mode).
"""
from __future__ import annotations

import contextlib
import datetime as dt
import decimal
import difflib
import io
import math
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

# Both engines turn timestamps into naive Python datetimes in the process's local zone;
# pin it so the comparison does not depend on the machine.
os.environ["TZ"] = "UTC"
if hasattr(time, "tzset"):
    time.tzset()
# PySpark runs Python UDFs in worker processes of this interpreter (the default, `python3`, may lack pyarrow).
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

SHUFFLE_PARTITIONS_DEFAULT = 4
_CONF = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": str(SHUFFLE_PARTITIONS_DEFAULT),
}

Program = Callable[..., Any]


# --------------------------------------------------------------------------- sessions

@dataclass(frozen=True)
class Engine:
    """One side of the comparison: a session and the modules a program is given."""

    name: str
    spark: Any
    F: Any
    T: Any
    Window: Any

    def run(self, program: Program) -> Any:
        start = time.perf_counter()
        try:
            return program(self.spark, self.F, self.T, self.Window)
        finally:
            TIMINGS[self.name] = TIMINGS.get(self.name, 0.0) + time.perf_counter() - start


TIMINGS: dict[str, float] = {}
"""Seconds each engine spent running programs (including collect) in this process."""


_engines: dict[str, Engine] = {}


def pyspark_engine() -> Engine:
    """The reference: real PySpark, local[2], UTC, 4 shuffle partitions, quiet."""
    if "pyspark" not in _engines:
        import warnings

        warnings.filterwarnings("ignore", message=".*PySpark does not yet fully support pandas.*")
        from pyspark.sql import SparkSession, Window
        from pyspark.sql import functions as F
        from pyspark.sql import types as T

        builder = (
            SparkSession.builder.master("local[2]")
            .appName("quiver-compat-reference")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.memory", "2g")
            .config("spark.sql.warehouse.dir", os.path.join(_scratch_dir(), "spark-warehouse"))
            # tiny data on 2 cores: fixed shuffle partitions, and a JVM that compiles less
            .config("spark.sql.adaptive.enabled", "false")
            .config("spark.driver.extraJavaOptions",
                    f"-Duser.timezone=UTC -Dderby.system.home={_scratch_dir()} "
                    "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
        )
        for key, value in _CONF.items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        _engines["pyspark"] = Engine("pyspark", spark, F, T, Window)
    return _engines["pyspark"]


def spark_connect_engine() -> Engine:
    """A second reference: a Spark Connect client of Spark's own Connect server (connect_server.py), for
    what Connect resolves differently from classic PySpark (a DataFrame's column after a self-join)."""
    if "spark-connect" not in _engines:
        from pyspark.sql import types as T
        from pyspark.sql.connect import functions as F
        from pyspark.sql.connect.session import SparkSession as ConnectSession
        from pyspark.sql.connect.window import Window

        from .connect_server import spark_connect_url

        spark = ConnectSession.builder.remote(spark_connect_url(_CONF)).getOrCreate()
        _engines["spark-connect"] = Engine("spark-connect", spark, F, T, Window)
    return _engines["spark-connect"]


def session_master() -> str:
    """The master the Quiver side runs on: local[2], or what QUIVER_TEST_MASTER names (`make test` runs
    the compat and e2e tests again with `ray`)."""
    return os.environ.get("QUIVER_TEST_MASTER", "local[2]")


def quiver_engine() -> Engine:
    """The engine under test: Quiver, imported lazily so a missing engine fails each test."""
    if os.environ.get("QUIVER_COMPAT_ENGINE", "quiver") == "pyspark":
        ref = pyspark_engine()
        return Engine("pyspark-as-quiver", ref.spark, ref.F, ref.T, ref.Window)
    if "quiver" not in _engines:
        import quiver
        from quiver import Window
        from quiver import functions as F
        from quiver import types as T

        builder = quiver.Session.builder.master(session_master()).appName("quiver-compat")
        for key, value in _CONF.items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
        _engines["quiver"] = Engine("quiver", spark, F, T, Window)
    return _engines["quiver"]


def _scratch_dir() -> str:
    path = os.path.join("/tmp", f"quiver-compat-{os.getuid()}")
    os.makedirs(path, exist_ok=True)
    return path


@contextlib.contextmanager
def conf_shuffle_partitions(engine: Engine, n: int | None):
    """Run with ``spark.sql.shuffle.partitions = n`` and restore the default afterwards."""
    if n is None:
        yield
        return
    engine.spark.conf.set("spark.sql.shuffle.partitions", n)
    current = engine.spark.conf.get("spark.sql.shuffle.partitions")
    assert current == str(n), (
        f"{engine.name}: conf.get('spark.sql.shuffle.partitions') is {current!r} after set({n}); PySpark gives "
        f"{str(n)!r}")
    try:
        yield
    finally:
        engine.spark.conf.set("spark.sql.shuffle.partitions", SHUFFLE_PARTITIONS_DEFAULT)


@contextlib.contextmanager
def session_conf(engine: Engine, conf: dict[str, Any] | None):
    """Set ``conf`` on the engine's session for the duration, then put the old values back."""
    if not conf:
        yield
        return
    previous = {key: engine.spark.conf.get(key, None) for key in conf}
    for key, value in conf.items():
        engine.spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in previous.items():
            if value is None:
                engine.spark.conf.unset(key)
            else:
                engine.spark.conf.set(key, value)


# --------------------------------------------------------------------------- values

@dataclass(frozen=True)
class NRow:
    """A row normalized across engines: its field names and values (nested rows too)."""

    names: tuple[str, ...]
    values: tuple[Any, ...]

    def __repr__(self) -> str:
        return "Row(" + ", ".join(f"{n}={_show(v)}" for n, v in zip(self.names, self.values)) + ")"


def _row_names(row: Any) -> tuple[str, ...] | None:
    names = getattr(row, "__fields__", None)
    if names is None:
        names = getattr(row, "_fields", None)
    if names is None and hasattr(row, "asDict") and not isinstance(row, dict):
        names = list(row.asDict().keys())
    return tuple(names) if names is not None else None


def normalize(value: Any, sort_arrays: bool = False) -> Any:
    """Rows become NRow, maps become sorted item lists; everything else keeps its type."""
    if value is None:
        return None
    names = _row_names(value) if not isinstance(value, (str, bytes, bytearray, dict, list)) else None
    if names is not None:
        return NRow(names, tuple(normalize(v, sort_arrays) for v in tuple(value)))
    if isinstance(value, dict):
        items = [(normalize(k, sort_arrays), normalize(v, sort_arrays)) for k, v in value.items()]
        return _Map(tuple(sorted(items, key=lambda kv: sort_key(kv[0]))))
    if isinstance(value, (list, tuple)):
        items = [normalize(v, sort_arrays) for v in value]
        if sort_arrays:
            items.sort(key=sort_key)
        return items
    if isinstance(value, bytearray):
        return bytes(value)
    return value


@dataclass(frozen=True)
class _Map:
    items: tuple[tuple[Any, Any], ...]

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{_show(k)}: {_show(v)}" for k, v in self.items) + "}"


def _show(v: Any) -> str:
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    return repr(v)


_TYPE_RANK = {type(None): 0, bool: 1, int: 2, float: 2, decimal.Decimal: 2, str: 3,
              dt.date: 4, dt.datetime: 5, bytes: 6}


def sort_key(v: Any) -> tuple:
    """A total order over normalized values; floats are rounded so near-equal ones sort together."""
    if v is None:
        return (0,)
    if isinstance(v, bool):
        return (1, int(v))
    if isinstance(v, (int, float, decimal.Decimal)):
        f = float(v)
        if math.isnan(f):
            return (2, 1, 0.0)
        return (2, 0, float(f"{f:.6g}"))
    if isinstance(v, str):
        return (3, v)
    if isinstance(v, dt.datetime):
        return (5, v.isoformat())
    if isinstance(v, dt.date):
        return (4, v.isoformat())
    if isinstance(v, bytes):
        return (6, v)
    if isinstance(v, NRow):
        return (7, v.names, tuple(sort_key(x) for x in v.values))
    if isinstance(v, list):
        return (8, tuple(sort_key(x) for x in v))
    if isinstance(v, _Map):
        return (9, tuple((sort_key(k), sort_key(x)) for k, x in v.items))
    return (10, type(v).__name__, repr(v))


def values_equal(a: Any, b: Any, rel_tol: float = 1e-9) -> bool:
    """Equality of normalized values: floats to ``rel_tol``, NaN == NaN, same Python types."""
    if a is None or b is None:
        return a is None and b is None
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=rel_tol, abs_tol=1e-12)
    if isinstance(a, NRow):
        return a.names == b.names and len(a.values) == len(b.values) and all(
            values_equal(x, y, rel_tol) for x, y in zip(a.values, b.values))
    if isinstance(a, list):
        return len(a) == len(b) and all(values_equal(x, y, rel_tol) for x, y in zip(a, b))
    if isinstance(a, _Map):
        return len(a.items) == len(b.items) and all(
            values_equal(k1, k2, rel_tol) and values_equal(v1, v2, rel_tol)
            for (k1, v1), (k2, v2) in zip(a.items, b.items))
    return a == b


def _type_diff(a: Any, b: Any) -> str:
    if isinstance(a, NRow) and isinstance(b, NRow):
        for name, x, y in zip(a.names, a.values, b.values):
            if not values_equal(x, y):
                return f"field {name!r}: {_show(x)} ({type(x).__name__}) vs {_show(y)} ({type(y).__name__})"
        if a.names != b.names:
            return f"field names {a.names} vs {b.names}"
    return ""


# --------------------------------------------------------------------------- comparison

@dataclass
class Result:
    """What one engine produced for one program."""

    engine: str
    columns: list[str]
    dtypes: list[tuple[str, str]]
    rows: list[NRow]


def capture(engine: Engine, program: Program, sort_arrays: bool = False) -> Result:
    def run_and_collect(spark, F, T, Window):
        df = program(spark, F, T, Window)
        assert hasattr(df, "collect") and hasattr(df, "dtypes"), (
            f"program {program.__name__} must return a DataFrame, got {type(df).__name__}")
        return list(df.columns), [tuple(d) for d in df.dtypes], df.collect()

    columns, dtypes, rows = engine.run(run_and_collect)
    return Result(engine.name, columns, dtypes, [normalize(r, sort_arrays) for r in rows])


def compare_rows(expected: Sequence[Any], actual: Sequence[Any], ordered: bool,
                 rel_tol: float = 1e-9) -> str | None:
    """None when equal (as lists or multisets), else a readable description of the difference."""
    exp, act = list(expected), list(actual)
    if not ordered:
        exp.sort(key=sort_key)
        act.sort(key=sort_key)
    if len(exp) == len(act) and all(values_equal(x, y, rel_tol) for x, y in zip(exp, act)):
        return None
    lines = [f"row count: expected {len(exp)}, got {len(act)}"]
    if not ordered:
        missing, extra = _multiset_difference(exp, act, rel_tol)
        if not missing and not extra:
            return None
        lines.append(f"rows only in PySpark ({len(missing)}):")
        lines += [f"  - {r!r}" for r in missing[:10]] + (["  ..."] if len(missing) > 10 else [])
        lines.append(f"rows only in Quiver ({len(extra)}):")
        lines += [f"  + {r!r}" for r in extra[:10]] + (["  ..."] if len(extra) > 10 else [])
    first = next((i for i, (x, y) in enumerate(zip(exp, act)) if not values_equal(x, y, rel_tol)),
                 min(len(exp), len(act)))
    lines.append(f"first difference at {'position' if ordered else 'sorted position'} {first}:")
    for i in range(max(0, first - 2), min(max(len(exp), len(act)), first + 5)):
        x = exp[i] if i < len(exp) else "<none>"
        y = act[i] if i < len(act) else "<none>"
        mark = "  " if i < len(exp) and i < len(act) and values_equal(x, y, rel_tol) else "!!"
        lines.append(f" {mark} [{i}] pyspark: {x!r}")
        lines.append(f" {mark} [{i}] quiver:  {y!r}")
        if mark == "!!" and i < len(exp) and i < len(act):
            detail = _type_diff(x, y)
            if detail:
                lines.append(f"      {detail}")
    return "\n".join(lines)


def _multiset_difference(exp: list, act: list, rel_tol: float) -> tuple[list, list]:
    unmatched = list(act)
    missing = []
    for row in exp:
        for i, cand in enumerate(unmatched):
            if values_equal(row, cand, rel_tol):
                del unmatched[i]
                break
        else:
            missing.append(row)
    return missing, unmatched


def _schema_block(ref: Result, got: Result) -> str:
    return (f"PySpark schema: {_fmt_dtypes(ref.dtypes)}\n"
            f"Quiver schema:  {_fmt_dtypes(got.dtypes)}")


def _fmt_dtypes(dtypes: Iterable[tuple[str, str]]) -> str:
    return "[" + ", ".join(f"{n}: {t}" for n, t in dtypes) + "]"


def assert_same(program: Program, ordered: bool = False,
                shuffle_partitions: Sequence[int] = (1, 3, 8),
                sort_arrays: bool = False, rel_tol: float = 1e-9,
                conf: dict[str, Any] | None = None, reference: Engine | None = None) -> Result:
    """Run ``program`` on PySpark once and on Quiver once per shuffle-partition count; compare.

    Checks ``df.columns``, ``df.dtypes`` and ``collect()`` rows (multisets unless ``ordered``;
    floats to ``rel_tol``; NaN == NaN; Row field names). ``sort_arrays`` sorts every array
    value before comparing (for ``collect_list``/``collect_set``). ``conf`` is set on both
    sessions while the program runs (e.g. ``{"spark.sql.ansi.enabled": False}``). ``reference`` is the
    engine to compare with (classic PySpark unless given, e.g. ``spark_connect_engine()``).
    Returns the reference's result.
    """
    reference = reference or pyspark_engine()
    with session_conf(reference, conf):
        ref = capture(reference, program, sort_arrays)
    quiver = quiver_engine()
    for n in shuffle_partitions:
        with conf_shuffle_partitions(quiver, n), session_conf(quiver, conf):
            got = capture(quiver, program, sort_arrays)
        where = f"program {program.__name__!r}, Quiver with spark.sql.shuffle.partitions={n}"
        problems = []
        if got.columns != ref.columns:
            problems.append(f"columns differ:\n  pyspark: {ref.columns}\n  quiver:  {got.columns}")
        if got.dtypes != ref.dtypes:
            diffs = [f"  {a} vs {b}" for a, b in zip(ref.dtypes, got.dtypes) if a != b]
            problems.append("dtypes differ:\n" + "\n".join(diffs or ["  (different lengths)"]))
        row_diff = compare_rows(ref.rows, got.rows, ordered, rel_tol)
        if row_diff:
            problems.append("rows differ" + (" (ordered)" if ordered else " (as multisets)") + ":\n" + row_diff)
        if problems:
            raise AssertionError(f"{where}\n" + _schema_block(ref, got) + "\n" + "\n".join(problems))
    return ref


def assert_same_value(fn: Program, shuffle_partitions: Sequence[int] = (1, 3),
                      compare: Callable[[Any, Any], str | None] | None = None,
                      conf: dict[str, Any] | None = None) -> Any:
    """Run ``fn(spark, F, T, Window)`` (returning any plain value) on both engines; compare.

    The default comparison normalizes rows and compares with ``values_equal``; ``compare``
    may return a message describing the difference (or None when equal) instead.
    """
    reference = pyspark_engine()
    with session_conf(reference, conf):
        expected = reference.run(fn)
    quiver = quiver_engine()
    for n in shuffle_partitions:
        with conf_shuffle_partitions(quiver, n), session_conf(quiver, conf):
            actual = quiver.run(fn)
        where = f"{fn.__name__!r}, Quiver with spark.sql.shuffle.partitions={n}"
        if compare is not None:
            problem = compare(expected, actual)
        else:
            e, a = normalize(expected), normalize(actual)
            problem = None if values_equal(e, a) else f"pyspark: {e!r}\nquiver:  {a!r}"
        if problem:
            raise AssertionError(f"{where}\n{problem}")
    return expected


def compare_text(expected: str, actual: str) -> str | None:
    """None when equal, else a unified diff (for show() / printSchema() output)."""
    if expected == actual:
        return None
    diff = difflib.unified_diff(expected.splitlines(), actual.splitlines(),
                                "pyspark", "quiver", lineterm="")
    return "text differs:\n" + "\n".join(diff) + f"\n--- pyspark (raw) ---\n{expected}--- quiver (raw) ---\n{actual}"


def printed(action: Callable[[], Any]) -> str:
    """The text ``action`` prints to stdout."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        action()
    return buf.getvalue()


def assert_same_output(fn: Program, shuffle_partitions: Sequence[int] = (1, 3),
                       conf: dict[str, Any] | None = None) -> str:
    """``fn`` prints (show, printSchema); the captured stdout must match PySpark's exactly (``conf`` set on
    both sessions meanwhile)."""
    def run(spark, F, T, Window):
        return printed(lambda: fn(spark, F, T, Window))

    run.__name__ = fn.__name__
    return assert_same_value(run, shuffle_partitions, compare=compare_text, conf=conf)


def assert_both_raise(fn: Program, quiver_exc: type[BaseException] | tuple = Exception,
                      match: Sequence[str] = (), reference: Engine | None = None) -> BaseException:
    """``fn`` must raise on PySpark (any error; or on ``reference``) and raise ``quiver_exc`` on Quiver.

    Each string in ``match`` must appear (case-insensitively) in Quiver's message.
    Returns Quiver's exception for further checks.
    """
    ref = reference or pyspark_engine()
    try:
        _collected(ref.run(fn))  # Spark Connect analyzes a DataFrame only when it runs
    except Exception as exc:  # noqa: BLE001 - any PySpark error will do
        ref_error = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
    else:
        raise AssertionError(f"{fn.__name__}: PySpark did not raise; the test itself is wrong")
    quiver = quiver_engine()
    if quiver.name.startswith("pyspark"):
        from pyspark.errors import PySparkException

        quiver_exc = (PySparkException, Exception)
    try:
        returned = _collected(quiver.run(fn))
    except quiver_exc as exc:  # noqa: B030 - the caller chooses the type
        message = str(exc).lower()
        if not quiver.name.startswith("pyspark"):
            for needle in match:
                assert needle.lower() in message, (
                    f"{fn.__name__}: Quiver's message does not mention {needle!r}:\n{exc}")
        return exc
    shown = repr(normalize(returned))
    raise AssertionError(f"{fn.__name__}: PySpark raises ({ref_error}) but Quiver did not raise "
                         f"{quiver_exc}; it returned {shown[:500]}")


def _collected(value: Any) -> Any:
    """The rows of a DataFrame `value` (so that whatever its engine checks only when it runs is checked), else
    `value`."""
    return value.collect() if hasattr(value, "collect") and hasattr(value, "dtypes") else value


def _error_of(engine: Engine, fn: Program, conf: dict[str, Any] | None) -> BaseException | None:
    with session_conf(engine, conf):
        try:
            engine.run(fn)
        except Exception as exc:  # noqa: BLE001 - the caller compares what was raised
            return exc
    return None


def assert_same_error(fn: Program, conf: dict[str, Any] | None = None) -> BaseException:
    """``fn`` raises on both engines an error of the same kind (ArithmeticException, NumberFormatException,
    ...) with the same Spark error condition (``getCondition()``, e.g. ``DIVIDE_BY_ZERO``). Returns Quiver's."""
    ref = _error_of(pyspark_engine(), fn, conf)
    if ref is None:
        raise AssertionError(f"{fn.__name__}: PySpark did not raise; the test itself is wrong")
    got = _error_of(quiver_engine(), fn, conf)
    first = str(ref).splitlines()[0][:300]
    if got is None:
        raise AssertionError(f"{fn.__name__}: PySpark raises {type(ref).__name__} ({first}) but Quiver did not")
    want = (type(ref).__name__, ref.getCondition() if hasattr(ref, "getCondition") else None)
    have = (type(got).__name__, got.getCondition() if hasattr(got, "getCondition") else None)
    assert have == want, f"{fn.__name__}: PySpark raises {want} ({first}); Quiver raises {have}: {got}"
    return got
