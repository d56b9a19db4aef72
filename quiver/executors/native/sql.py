"""A stage fragment as one SQL query a native engine (DuckDB) runs: which fragments can be, and their text.

A fragment is a Parquet scan with the filters, projections, broadcast joins and partial aggregate stacked on
it in one task. Only what gives Spark's answer to the last bit is translated; everything else says why not (and the
fragment stays on Quiver's CPU executor, operator by operator):

- scans of local Parquet files whose stored types are the columns' own (a split's row groups are read as
  the ranges of `file_row_number` they cover, which DuckDB prunes whole row groups by);
- comparisons, AND/OR/NOT, IS [NOT] NULL and IN over integers, decimals, dates, booleans and strings
  (floats are left out: NaN's order and DuckDB's errors on infinities differ from Spark's), and CASE WHEN
  whose branches share its type;
- decimal +, - and * where Spark's result type keeps the exact scale, each pinned to that type with a cast
  (no rounding happens; a value past 38 digits raises in DuckDB and the task reruns on the CPU);
- widening casts that are exact (integer to a wider integer or a decimal that holds it, decimal to a
  decimal with at least as many digits on both sides of the point);
- a partial aggregate of count, sum and avg over decimals (or integers under ANSI mode, summed exactly), min
  and max over the types above, producing the states Quiver's final aggregate merges;
- a broadcast hash join (inner, semi, anti; no residual condition) on keys of one comparable type, whose
  probe side is a fragment and whose build side is the broadcast stage's rows, which the task registers
  with DuckDB as an Arrow table (`broadcast_relation`).

Names: each column is quoted under its attribute's internal name (`#12`), so nested fragments refer to
their child's output as Quiver's batches do.
"""
from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pyarrow as pa

from quiver.connectors.files import FileSource
from quiver.connectors.object_store import is_object_path
from quiver.connectors.parquet import ParquetFormat, read_metadata, read_schema
from quiver.engine.core import expressions as E
from quiver.engine.core import types as T
from quiver.planners.physical import nodes as P

COMPARABLE = (T.IntegralType, T.DecimalType, T.DateType, T.BooleanType, T.StringType)
ARITHMETIC_OPS = ("+", "-", "*")
COMPARISON_OPS = {"=": "=", "==": "=", "!=": "<>", "<>": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


class Untranslatable(Exception):
    """Why a fragment, or part of one, has no exact SQL translation."""


def quoted(name: str) -> str:
    """`name` as a DuckDB identifier."""
    return '"' + name.replace('"', '""') + '"'


def sql_type(dtype: T.DataType) -> str:
    """DuckDB's name for a Spark type the fragments carry."""
    if isinstance(dtype, T.DecimalType):
        return f"DECIMAL({dtype.precision}, {dtype.scale})"
    names = {T.ByteType: "TINYINT", T.ShortType: "SMALLINT", T.IntegerType: "INTEGER", T.LongType: "BIGINT",
             T.BooleanType: "BOOLEAN", T.DateType: "DATE", T.StringType: "VARCHAR", T.DoubleType: "DOUBLE",
             T.FloatType: "FLOAT"}
    for kind, name in names.items():
        if type(dtype) is kind:
            return name
    raise Untranslatable(f"type {dtype.simpleString()}")


def literal(value: Any, dtype: T.DataType) -> str:
    """A typed SQL literal with the value Spark's literal has."""
    if value is None:
        return f"CAST(NULL AS {sql_type(dtype)})"
    if isinstance(dtype, T.BooleanType):
        return "TRUE" if value else "FALSE"
    if isinstance(dtype, T.StringType):
        return "'" + str(value).replace("'", "''") + "'"
    if isinstance(dtype, T.DateType) and isinstance(value, dt.date):
        return f"DATE '{value.isoformat()}'"
    if isinstance(dtype, T.DecimalType) and isinstance(value, (decimal.Decimal, int)):
        return f"CAST('{value}' AS {sql_type(dtype)})"
    if isinstance(dtype, T.IntegralType) and isinstance(value, int) and not isinstance(value, bool):
        return f"CAST({value} AS {sql_type(dtype)})"
    raise Untranslatable(f"literal {value!r} of type {dtype.simpleString()}")


def expression(expr: E.Expr) -> str:
    """`expr` as SQL with Spark's value for every row, or Untranslatable."""
    if isinstance(expr, E.Alias):
        return expression(expr.child)
    if isinstance(expr, E.AttributeRef):
        sql_type(expr.dtype)  # a column of a type the fragments do not carry (timestamps, nested) stops here
        return quoted(expr.internal_name)
    if isinstance(expr, E.Literal):
        return literal(expr.value, expr.dtype)
    if isinstance(expr, E.Comparison):
        op = COMPARISON_OPS.get(expr.op)
        if op is None:
            raise Untranslatable(f"comparison {expr.op}")
        for side in (expr.left, expr.right):
            if not isinstance(side.dtype, COMPARABLE):
                raise Untranslatable(f"a comparison of {side.dtype.simpleString()}")
        return f"({expression(expr.left)} {op} {expression(expr.right)})"
    if isinstance(expr, (E.And, E.Or)):
        word = "AND" if isinstance(expr, E.And) else "OR"
        return f"({expression(expr.left)} {word} {expression(expr.right)})"
    if isinstance(expr, E.Not):
        return f"(NOT {expression(expr.child)})"
    if isinstance(expr, (E.IsNull, E.IsNotNull)):
        return f"({expression(expr.child)} IS {'' if isinstance(expr, E.IsNull) else 'NOT '}NULL)"
    if isinstance(expr, E.In):
        if not isinstance(expr.child.dtype, COMPARABLE) or not all(isinstance(v, E.Literal) for v in expr.values):
            raise Untranslatable("IN over anything but literals of comparable types")
        return f"({expression(expr.child)} IN ({', '.join(expression(v) for v in expr.values)}))"
    if isinstance(expr, E.BinaryArithmetic):
        return _decimal_arithmetic(expr)
    if isinstance(expr, E.Cast):
        return _exact_cast(expr)
    if isinstance(expr, E.CaseWhen):
        return _case_when(expr)
    raise Untranslatable(type(expr).__name__)


def _case_when(expr: E.CaseWhen) -> str:
    """CASE WHEN whose branches all have its own type (no branch is widened), pinned to that type: the first
    true condition's value, else the ELSE's (NULL without one), as in Spark."""
    values = [*expr.values, *([expr.else_value] if expr.else_value is not None else [])]
    if any(v.dtype != expr.dtype for v in values):
        raise Untranslatable("CASE WHEN whose branches differ in type")
    branches = " ".join(f"WHEN {expression(c)} THEN {expression(v)}" for c, v in zip(expr.conditions, expr.values))
    otherwise = f" ELSE {expression(expr.else_value)}" if expr.else_value is not None else ""
    return f"CAST(CASE {branches}{otherwise} END AS {sql_type(expr.dtype)})"


def _decimal_arithmetic(expr: E.BinaryArithmetic) -> str:
    left, right, out = expr.left.dtype, expr.right.dtype, expr.dtype
    if expr.is_try or expr.op not in ARITHMETIC_OPS:
        raise Untranslatable(f"arithmetic {expr.sql()}")
    if not all(isinstance(t, T.DecimalType) for t in (left, right, out)):
        raise Untranslatable(f"arithmetic on {left.simpleString()} and {right.simpleString()}")
    exact_scale = left.scale + right.scale if expr.op == "*" else max(left.scale, right.scale)
    # Where Spark's result keeps the exact result's scale, DuckDB's does too (its precision capped at 38, as
    # Spark's is) and both hold the exact value or overflow; where Spark gives up digits of scale it rounds,
    # which DuckDB does not do alike. An overflow raises in DuckDB, and the task reruns on the CPU.
    if out.scale != exact_scale:
        raise Untranslatable(f"{expr.sql()}, which Spark rounds to scale {out.scale}")
    return f"CAST(({expression(expr.left)} {expr.op} {expression(expr.right)}) AS {sql_type(out)})"


def _exact_cast(expr: E.Cast) -> str:
    source, target = expr.child.dtype, expr.to
    exact = False
    if isinstance(source, T.IntegralType) and isinstance(target, T.IntegralType):
        exact = T.common_numeric_type(source, target) == target
    elif isinstance(source, T.IntegralType) and isinstance(target, T.DecimalType):
        digits = {T.ByteType: 3, T.ShortType: 5, T.IntegerType: 10, T.LongType: 19}.get(type(source), 99)
        exact = target.precision - target.scale >= digits
    elif isinstance(source, T.DecimalType) and isinstance(target, T.DecimalType):
        exact = target.scale >= source.scale and target.precision - target.scale >= source.precision - source.scale
    elif source == target:
        exact = True
    if not exact:
        raise Untranslatable(f"cast from {source.simpleString()} to {target.simpleString()}")
    return f"CAST({expression(expr.child)} AS {sql_type(target)})"


def fragment(plan: P.PhysicalPlan, partition: int | None, state_schema: Any = None, ansi: bool = True) -> str:
    """The SQL of fragment `plan` for `partition` (None: any partition, to check that it translates).

    `state_schema` is the partial aggregate's output schema (`partial_state_schema`), whose columns the
    query's select list follows; `ansi` is the query's ANSI mode (an integer sum is exact only under it).
    """
    if isinstance(plan, P.ScanExec):
        return _scan(plan, partition)
    if isinstance(plan, P.FilterExec):
        if not plan.condition.deterministic:
            raise Untranslatable("a nondeterministic filter")
        return f"SELECT * FROM ({fragment(plan.child, partition)}) WHERE {expression(plan.condition)}"
    if isinstance(plan, P.ProjectExec):
        if not all(p.deterministic for p in plan.projections):
            raise Untranslatable("a nondeterministic projection")
        columns = ", ".join(f"{expression(p)} AS {quoted(a.internal_name)}"
                            for p, a in zip(plan.projections, plan.output))
        return f"SELECT {columns} FROM ({fragment(plan.child, partition)})"
    if isinstance(plan, P.HashAggregateExec) and plan.mode == "partial":
        return _partial_aggregate(plan, partition, state_schema, ansi)
    if isinstance(plan, P.HashJoinExec):
        return _broadcast_join(plan, partition)
    raise Untranslatable(f"operator {plan.node_string().split(' ', 1)[0]}")


# The joins a fragment may hold, as DuckDB writes them: Spark's semi and anti joins keep or drop each probe
# row by whether any build row has its keys, and a null key matches nothing, as in SQL.
JOINS = {"inner": "JOIN", "left_semi": "SEMI JOIN", "left_anti": "ANTI JOIN"}


def broadcast_relation(read: P.ShuffleReadExec) -> str:
    """The name under which a task registers the rows of broadcast `read` with DuckDB."""
    return f"broadcast_{read.stage_id}"


def broadcast_reads(plan: P.PhysicalPlan) -> list[P.ShuffleReadExec]:
    """The broadcast build sides of the joins in fragment `plan`, which its task registers before running it."""
    return [n for n in plan.walk() if isinstance(n, P.ShuffleReadExec) and n.broadcast]


def _broadcast_join(plan: P.HashJoinExec, partition: int | None) -> str:
    """A broadcast hash join whose build side is the broadcast stage's rows (registered by the task under
    `broadcast_relation`) and whose probe side is a fragment, on equal keys of one type."""
    read = plan.right
    if plan.strategy != "broadcast-right" or not isinstance(read, P.ShuffleReadExec) or not read.broadcast:
        raise Untranslatable("a join whose build side is not a broadcast")
    if plan.how not in JOINS:
        raise Untranslatable(f"a {plan.how} join")
    if plan.residual is not None:
        raise Untranslatable("a join with a residual condition")
    probe_names = {a.internal_name for a in plan.left.output}
    build_names = {a.internal_name for a in read.output}
    if probe_names & build_names:
        raise Untranslatable("a join whose sides share a column name")
    conditions = []
    for left, right in zip(plan.left_keys, plan.right_keys):
        if left.dtype != right.dtype or not isinstance(left.dtype, COMPARABLE):
            raise Untranslatable(f"join keys {left.sql()} and {right.sql()}")
        conditions.append(f"{expression(left)} = {expression(right)}")
    visible = probe_names if plan.how != "inner" else probe_names | build_names
    if any(a.internal_name not in visible for a in plan.output):
        raise Untranslatable("a join output that is not its sides' columns")
    columns = ", ".join(quoted(a.internal_name) for a in plan.output)
    return (f"SELECT {columns} FROM ({fragment(plan.left, partition)}) AS probe {JOINS[plan.how]} "
            f"{quoted(broadcast_relation(read))} AS build ON {' AND '.join(conditions)}")


def _scan(plan: P.ScanExec, partition: int | None) -> str:
    source = plan.source
    if not isinstance(source, FileSource) or not isinstance(source.format, ParquetFormat):
        raise Untranslatable(f"a scan of {type(source).__name__}")
    if any(a.name in source.listing.partition_schema.names for a in plan.attributes):
        raise Untranslatable("a partition column")
    splits = plan.splits if partition is None else (plan.splits[partition],)
    pieces = [piece for split in splits for piece in split.pieces]
    for piece in pieces:
        if is_object_path(piece.file.path):
            raise Untranslatable("a file in an object store")
        stored = read_schema(piece.file.path)
        for a in plan.attributes:
            if a.name not in stored.names or not _reads_as(stored.field(a.name).type, a.dtype):
                raise Untranslatable(f"column {a.name} as stored in {piece.file.path}")
    columns = ", ".join(f"{quoted(a.name)} AS {quoted(a.internal_name)}" for a in plan.attributes) or "1 AS _"
    if partition is None:
        return f"SELECT {columns}"
    selects = []
    for file_path, groups in _file_ranges(pieces):
        path = "'" + file_path.replace("'", "''") + "'"
        query = f"SELECT {columns} FROM read_parquet({path}, file_row_number = true)"
        if groups is not None:
            meta = read_metadata(file_path)
            starts = [0]
            for i in range(meta.num_row_groups):
                starts.append(starts[-1] + meta.row_group(i).num_rows)
            if not groups:
                continue
            query += f" WHERE file_row_number >= {starts[groups[0]]} AND file_row_number < {starts[groups[-1] + 1]}"
        selects.append(query)
    if not selects:
        empty = ", ".join(f"{literal(None, a.dtype)} AS {quoted(a.internal_name)}" for a in plan.attributes)
        return f"SELECT {empty or '1 AS _'} WHERE FALSE"
    return " UNION ALL ".join(selects)


def _file_ranges(pieces: list[Any]) -> list[tuple[str, list[int] | None]]:
    """The split's pieces as (file, its contiguous row groups; None: the whole file), a piece that continues
    the one before it in the same file merged into it, so DuckDB opens each file once per range."""
    ranges: list[tuple[str, list[int] | None]] = []
    for piece in pieces:
        groups = None if piece.row_groups is None else sorted(piece.row_groups)
        if groups and groups != list(range(groups[0], groups[-1] + 1)):
            raise Untranslatable("row groups that are not contiguous")
        if ranges and groups and ranges[-1][0] == piece.file.path:
            before = ranges[-1][1]
            if before and before[-1] + 1 == groups[0]:
                ranges[-1] = (piece.file.path, before + groups)
                continue
        ranges.append((piece.file.path, groups))
    return ranges


def _reads_as(stored: Any, dtype: T.DataType) -> bool:
    """Whether DuckDB reads a column stored as Arrow type `stored` with the values Spark type `dtype` has."""
    if isinstance(dtype, T.StringType):
        return stored in (pa.string(), pa.large_string(), pa.string_view())
    try:
        sql_type(dtype)
    except Untranslatable:
        return False
    return stored == dtype.to_arrow()


def _partial_aggregate(plan: P.HashAggregateExec, partition: int | None, state_schema: Any, ansi: bool) -> str:
    keys = []
    for expr, attr in plan.keys:
        if isinstance(attr.dtype, (T.FloatType, T.DoubleType)):
            raise Untranslatable("a floating-point grouping key")
        keys.append((expression(expr), attr.internal_name))
    states: list[tuple[str, str]] = []
    for i, call in enumerate(plan.calls):
        states.extend(_states(i, call.function, ansi))
    if state_schema is not None:
        produced = [name for _, name in keys] + [name for _, name in states]
        if list(state_schema.names) != produced:
            raise Untranslatable(f"partial states {produced}, where Quiver's are {list(state_schema.names)}")
    select = ", ".join([f"{sql} AS {quoted(name)}" for sql, name in keys + states])
    group = f" GROUP BY {', '.join(sql for sql, _ in keys)}" if keys else ""
    return f"SELECT {select} FROM ({fragment(plan.child, partition)}){group}"


def _states(i: int, f: E.AggregateFunction, ansi: bool) -> list[tuple[str, str]]:
    """The SQL of call i's partial states, named as Quiver's partial aggregate names them."""
    if f.distinct or f.is_try:
        raise Untranslatable(f"aggregate {f.sql()}")
    if f.name == "count" and not f.args:
        return [("count(*)", f"s{i}")]
    if len(f.args) != 1:
        raise Untranslatable(f"aggregate {f.sql()}")
    arg = f.args[0]
    value, kind = expression(arg), arg.dtype
    if f.name == "count":
        return [(f"count({value})", f"s{i}")]
    if f.name in ("min", "max") and isinstance(kind, COMPARABLE):
        return [(f"{f.name}({value})", f"s{i}")]
    if f.name in ("sum", "avg"):
        summed = None
        if isinstance(kind, T.DecimalType):
            summed = f"sum({value})"  # in 128 bits; the executor checks the 38 digits Spark's sum buffer has
        elif isinstance(kind, T.IntegralType) and f.name == "avg":
            summed = f"sum(CAST({value} AS DOUBLE))"
        elif isinstance(kind, T.IntegralType) and ansi:
            summed = f"sum({value})"  # exact (HUGEINT), checked against bigint by Quiver's final aggregate
        if summed is not None:
            if f.name == "sum":
                return [(summed, f"s{i}")]
            return [(summed, f"s{i}_sum"), (f"count({value})", f"s{i}_count")]
    raise Untranslatable(f"aggregate {f.sql()} over {kind.simpleString()}")
