"""PostgreSQL as a `Source` and a `Sink`, with PySpark's jdbc options, through the ADBC driver so
rows travel as Arrow both ways.

Reading: the schema comes from an empty result (`WHERE 1=0`); each split is one SELECT (a stride
of `partitionColumn`, or one of the `predicates`) run by its own task on its own connection, with
only the columns the plan needs and the filters that translate into SQL.

Writing: each task copies its rows into a staging table of its own; the driver's commit creates,
replaces or truncates the target as the save mode says and inserts every staged table in one
transaction, so readers see all the rows or none, and a failed job leaves the target as it was.
"""
from __future__ import annotations

import difflib
import uuid
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from quiver.connectors.base import ReadOptions, SourceStatistics
from quiver.connectors.jdbc_partitions import bound_value, stride_clauses
from quiver.connectors.options import option_bool, option_choice, read_options
from quiver.connectors.postgres_connection import (
    CONNECTION_PROPERTIES,
    JdbcError,
    PostgresTarget,
    execute,
    is_connection_property,
    postgres_target,
    quote_identifier,
    session,
    statement_error,
)
from quiver.connectors.postgres_types import ColumnRead, arrow_schema, column_reads, column_type, conform_batch
from quiver.connectors.sink import SAVE_MODES
from quiver.connectors.sql_filters import where_clause
from quiver.engine.core.errors import AnalysisException, ConfigurationError
from quiver.engine.core.expressions import Expr
from quiver.engine.core.types import StructType, from_arrow

READ_OPTIONS = ("url", "dbtable", "query", "driver", "partitionColumn", "lowerBound", "upperBound",
                "numPartitions", "fetchsize", "pushDownPredicate", "queryTimeout")
WRITE_OPTIONS = ("url", "dbtable", "driver", "numPartitions", "batchsize", "truncate", "createTableOptions",
                 "queryTimeout")
DRIVER = "org.postgresql.Driver"
_QUERY_ALIAS = "quiver_query"
_STAGING_PREFIX = "quiver_staging_"
_STRIDE_KINDS = {"int2": "number", "int4": "number", "int8": "number", "float4": "number", "float8": "number",
                 "numeric": "number", "date": "date", "timestamp": "timestamp", "timestamptz": "timestamp"}


def _check_options(options: ReadOptions, valid: Sequence[str], purpose: str) -> None:
    """Every key is a jdbc option for `purpose` or a connection property; say which are valid if not."""
    known = {name.lower() for name in valid}
    spelled = {name.lower(): name for name in (*valid, *CONNECTION_PROPERTIES)}
    for key in options.values:
        if key in known or is_connection_property(key):
            continue
        close = difflib.get_close_matches(key, list(spelled), n=1, cutoff=0.6)
        hint = f" Did you mean '{spelled[close[0]]}'?" if close else ""
        raise ConfigurationError(
            f"unknown JDBC option {key!r} for {purpose}.{hint} Valid options: {', '.join(valid)}, and the "
            f"connection properties {', '.join(CONNECTION_PROPERTIES)}")


def _required(options: ReadOptions, key: str, valid: Sequence[str]) -> str:
    value = options.get(key.lower())
    if value is None or str(value) == "":
        raise ConfigurationError(f"JDBC option '{key}' is required. Valid options: {', '.join(valid)}")
    return str(value)


def _integer(options: ReadOptions, key: str) -> int | None:
    value = options.get(key.lower())
    if value is None:
        return None
    try:
        return int(str(value).strip())
    except ValueError as e:
        raise ConfigurationError(f"JDBC option '{key}' must be an integer, got {value!r}") from e


def _target(options: ReadOptions, valid: Sequence[str]) -> PostgresTarget:
    """The server named by option 'url' with the connection properties among `options`."""
    driver = options.get("driver")
    if driver is not None and str(driver) != DRIVER:
        raise ConfigurationError(f"JDBC driver {driver!r} is not supported: Quiver's jdbc connector talks to "
                                 f"PostgreSQL only (through ADBC); use driver '{DRIVER}' or leave it out")
    properties = {k: v for k, v in options.values.items() if is_connection_property(k)}
    timeout = _integer(options, "queryTimeout")
    if timeout:
        properties["options"] = f"{properties.get('options', '')} -c statement_timeout={timeout * 1000}".strip()
    return postgres_target(_required(options, "url", valid), properties)


@dataclass(frozen=True)
class JdbcSplit:
    """One partition of a jdbc read: the WHERE clause that selects its rows (None: every row)."""

    index: int
    where: str | None


@dataclass(frozen=True)
class JdbcSource:
    """A table or query of a PostgreSQL database, read in the splits its options describe."""

    # The scan hands over its filter expressions, which `sql_filters` turns into the WHERE clause.
    filters_as = "expressions"

    target: PostgresTarget
    relation: str
    table: str | None
    reads: tuple[ColumnRead, ...]
    partitions: tuple[str | None, ...]
    push_down: bool = True
    stats: SourceStatistics = field(default_factory=SourceStatistics)

    def describe(self) -> str:
        what = f"table {self.table}" if self.table is not None else "query"
        return f"jdbc {self.target} {what} [{len(self.partitions)} partition(s)]"

    def schema(self) -> pa.Schema:
        return arrow_schema(list(self.reads))

    def statistics(self) -> SourceStatistics:
        return self.stats

    def splits(self, target: int) -> Sequence[JdbcSplit]:
        """One split per partition the options asked for, whatever `target` is (as Spark does)."""
        return [JdbcSplit(i, where) for i, where in enumerate(self.partitions)]

    def _columns(self, columns: Sequence[str] | None) -> list[ColumnRead]:
        by_name = {r.name: r for r in self.reads}
        return list(self.reads) if columns is None else [by_name[c] for c in columns]

    def select_statement(self, split: JdbcSplit, columns: Sequence[str] | None, filters: Sequence[Expr] | None
                         ) -> tuple[str, tuple[str, ...]]:
        """The SELECT that reads `columns` of `split`, with what translates of `filters` in its WHERE, and
        the values of that WHERE's parameters ($1, $2, ...): a filter's literals never enter the SQL text."""
        reads = self._columns(columns)
        by_name = {r.name: r for r in self.reads}
        select = ", ".join(r.select if r.select == quote_identifier(r.name)
                           else f"{r.select} AS {quote_identifier(r.name)}" for r in reads)
        pushed, parameters = where_clause(filters, by_name) if self.push_down else (None, ())
        where = " AND ".join(f"({c})" for c in (split.where, pushed) if c is not None)
        return f"SELECT {select} FROM {self.relation}" + (f" WHERE {where}" if where else ""), parameters

    def read(self, split: JdbcSplit, columns: Sequence[str] | None, filters: Sequence[Expr] | None
             ) -> Iterator[pa.RecordBatch]:
        reads = self._columns(columns)
        sql, parameters = self.select_statement(split, columns, filters)
        with session(self.target) as (_, cursor):
            execute(cursor, self.target, sql, list(parameters) or None, relation=self.table)
            for batch in cursor.fetch_record_batch():
                yield conform_batch(batch, reads) if reads else batch


def jdbc_source(options: Mapping[str, Any] | ReadOptions, predicates: Sequence[str] | None = None) -> JdbcSource:
    """A `JdbcSource` for Spark's jdbc reader options; one partition per entry of `predicates` if given.

    Connects once, to learn the schema (an empty result) and the table's size from the catalog, so
    a wrong url, credentials or table name fails here rather than in a task.
    """
    options = read_options(options)
    _check_options(options, READ_OPTIONS, "reading")
    table, query = options.get("dbtable"), options.get("query")
    if table is not None and query is not None:
        raise ConfigurationError("JDBC options 'dbtable' and 'query' cannot both be set; use one of them")
    if table is None and query is None:
        raise ConfigurationError(
            f"JDBC option 'dbtable' or 'query' is required. Valid options: {', '.join(READ_OPTIONS)}")
    if query is not None and options.get("partitioncolumn") is not None:
        raise ConfigurationError(
            "JDBC options 'query' and 'partitionColumn' cannot be used together: put the query in 'dbtable' "
            "as '(SELECT ...) AS alias' and qualify the partition column with that alias")
    _integer(options, "fetchsize")
    target = _target(options, READ_OPTIONS)
    relation = str(table) if table is not None else f"({query}) AS {_QUERY_ALIAS}"
    with session(target) as (_, cursor):
        execute(cursor, target, f"SELECT * FROM {relation} WHERE 1=0", relation=str(table) if table else None)
        reads = tuple(column_reads(cursor.fetch_arrow_table().schema))
        stats = _table_statistics(cursor, target, str(table)) if table is not None else SourceStatistics()
    if predicates is not None:
        partitions: tuple[str | None, ...] = tuple(str(p) for p in predicates) or (None,)
    else:
        partitions = tuple(_stride_partitions(options, reads))
    push_down = option_bool(options, "pushDownPredicate", True)
    return JdbcSource(target, relation, None if table is None else str(table), reads, partitions, push_down, stats)


def _stride_partitions(options: ReadOptions, reads: Sequence[ColumnRead]) -> list[str | None]:
    """The WHERE clause of each partition from partitionColumn, lowerBound, upperBound, numPartitions."""
    names = ("partitionColumn", "lowerBound", "upperBound", "numPartitions")
    column = options.get("partitioncolumn")
    if column is None:
        if options.get("lowerbound") is not None or options.get("upperbound") is not None:
            raise ConfigurationError("JDBC options 'lowerBound' and 'upperBound' need 'partitionColumn' and "
                                     "'numPartitions': give all four or none of them")
        return [None]
    if any(options.get(n.lower()) is None for n in names):
        missing = [n for n in names if options.get(n.lower()) is None]
        raise ConfigurationError(f"JDBC option 'partitionColumn' needs {', '.join(repr(m) for m in missing)}: "
                                 f"give all of {', '.join(names)} or none of them")
    wanted = str(column).strip()
    found = [r for r in reads if wanted.lower() in (r.name.lower(), quote_identifier(r.name).lower())]
    if not found:
        raise AnalysisException(f"partitionColumn {wanted!r} is not a column of the JDBC relation; its columns are: "
                                f"{', '.join(r.name for r in reads)}")
    read = found[0]
    kind = _STRIDE_KINDS.get(read.pg_type)
    if kind is None:
        raise AnalysisException(
            f"partitionColumn {read.name!r} has type {read.pg_type or 'unknown'} "
            f"({from_arrow(read.arrow_type).simpleString()}); it must be numeric, date or timestamp")
    quoted = quote_identifier(read.name)
    lower = bound_value(options.get("lowerbound"), kind, "lowerBound", read.name)
    upper = bound_value(options.get("upperbound"), kind, "upperBound", read.name)
    return stride_clauses(quoted, kind, lower, upper, _integer(options, "numPartitions") or 1)


def _table_statistics(cursor: Any, target: PostgresTarget, table: str) -> SourceStatistics:
    """Rows and bytes of `table` from the catalog, for the planner's estimates: its size on disk,
    and the row count of its last ANALYZE when that found rows (an empty count may be stale);
    unknown for a subquery."""
    if table.lstrip().startswith("("):
        return SourceStatistics()
    execute(cursor, target, "SELECT c.reltuples::float8, pg_table_size(c.oid)::int8 FROM pg_class c "
                            "WHERE c.oid = to_regclass($1)", [table])
    rows = cursor.fetchall()
    if not rows:
        return SourceStatistics()
    tuples, size = rows[0]
    return SourceStatistics(int(tuples) if tuples and tuples > 0 else None, int(size) if size else None)


@dataclass(frozen=True)
class StagedRows:
    """What one task's `write_task` made: its staging table and how many rows it holds."""

    table: str
    num_rows: int


class _Recorded:
    """An iterator of batches that remembers the exception its source raised, so the task fails
    with it (a UDF's error) rather than with the driver's report of a broken stream."""

    def __init__(self, batches: Iterator[pa.RecordBatch], schema: pa.Schema):
        self._batches = batches
        self._schema = schema
        self.error: BaseException | None = None

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        try:
            for batch in self._batches:
                yield batch if batch.schema.equals(self._schema) else batch.cast(self._schema)
        except BaseException as e:
            self.error = e
            raise


@dataclass
class JdbcSink:
    """A PostgreSQL table written by many tasks through staging tables, committed in one transaction."""

    target: PostgresTarget
    table: str
    mode: str
    schema: StructType
    truncate: bool = False
    create_options: str = ""
    max_tasks: int | None = None
    job: str = field(default_factory=lambda: uuid.uuid4().hex[:12])

    def __post_init__(self) -> None:
        self.column_types = [column_type(f.dataType, f.name) for f in self.schema.fields]
        self.arrow_schema = self.schema.to_arrow_schema()

    @property
    def staging_prefix(self) -> str:
        return f"{_STAGING_PREFIX}{self.job}_"

    def setup(self) -> bool:
        """Apply the save mode to what exists now; False when 'ignore' finds the table."""
        with session(self.target) as (_, cursor):
            exists = self._exists(cursor)
            if exists and self.mode == "ignore":
                return False
            if exists and self.mode in ("error", "errorifexists"):
                raise AnalysisException(
                    f"Table or view {self.table!r} already exists in {self.target}. SaveMode: ErrorIfExists. "
                    "Set mode 'overwrite', 'append' or 'ignore'.")
            if exists and (self.mode == "append" or self.truncate):
                self._target_columns(cursor)
        return True

    def write_task(self, partition: int, batches: Iterator[pa.RecordBatch]) -> StagedRows:
        """Copy one task's rows into a staging table of its own, committed only if all of them arrive."""
        name = f"{self.staging_prefix}{partition}_{uuid.uuid4().hex[:8]}"
        recorded = _Recorded(batches, self.arrow_schema)
        reader = pa.RecordBatchReader.from_batches(self.arrow_schema, iter(recorded))
        with session(self.target, autocommit=False) as (connection, cursor):
            try:
                rows = cursor.adbc_ingest(name, reader, mode="create")
            except Exception as e:
                if recorded.error is not None:
                    raise recorded.error from None
                raise statement_error(e, self.target, f"COPY INTO {name}", None) from e
            connection.commit()
        return StagedRows(name, rows if rows is not None and rows >= 0 else 0)

    def commit(self, task_results: list[StagedRows]) -> None:
        """In one transaction: create, drop and recreate, or truncate the target as the mode says, insert
        the staged rows of every successful task and drop this job's staging tables. A failure closes
        the connection uncommitted, which rolls all of it back."""
        with session(self.target, autocommit=False) as (connection, cursor):
            self._publish(cursor, [r for r in task_results if r is not None])
            connection.commit()

    def _publish(self, cursor: Any, staged: list[StagedRows]) -> None:
        exists = self._exists(cursor)
        if exists and self.mode in ("error", "errorifexists"):
            raise AnalysisException(f"Table or view {self.table!r} was created in {self.target} while the job ran")
        if not (exists and self.mode == "ignore"):
            if exists and self.mode == "overwrite" and self.truncate:
                self._run(cursor, f"TRUNCATE TABLE {self.table}")
            elif exists and self.mode == "overwrite":
                self._run(cursor, f"DROP TABLE {self.table}")
                exists = False
            if not exists:
                self._create(cursor)
                columns = [f.name for f in self.schema.fields]
            else:
                columns = self._target_columns(cursor)
            tables = self._staging_tables(cursor)
            into = ", ".join(quote_identifier(c) for c in columns)
            select = ", ".join(quote_identifier(f.name) for f in self.schema.fields)
            for result in staged:
                if result.table not in tables:
                    raise JdbcError(f"the staging table {result.table} of a finished task was dropped before commit")
                self._run(cursor, f"INSERT INTO {self.table} ({into}) SELECT {select} FROM {tables[result.table]}")
        for table in self._staging_tables(cursor).values():
            self._run(cursor, f"DROP TABLE {table}")

    def abort(self) -> None:
        """Drop this job's staging tables; the target was never touched."""
        try:
            with session(self.target) as (_, cursor):
                for table in self._staging_tables(cursor).values():
                    self._run(cursor, f"DROP TABLE IF EXISTS {table}")
        except (JdbcError, AnalysisException) as e:
            warnings.warn(f"could not drop the staging tables {self.staging_prefix}* of a failed jdbc write: {e}",
                          stacklevel=2)

    def _run(self, cursor: Any, sql: str) -> None:
        execute(cursor, self.target, sql, relation=self.table)

    def _exists(self, cursor: Any) -> bool:
        try:
            execute(cursor, self.target, "SELECT to_regclass($1) IS NOT NULL", [self.table])
        except AnalysisException as e:
            raise AnalysisException(f"JDBC table name {self.table!r} is not a valid table name: {e}") from e
        return bool(cursor.fetchall()[0][0])

    def _create(self, cursor: Any) -> None:
        columns = ", ".join(
            f"{quote_identifier(f.name)} {kind}{'' if f.nullable else ' NOT NULL'}"
            for f, kind in zip(self.schema.fields, self.column_types))
        self._run(cursor, f"CREATE TABLE {self.table} ({columns}) {self.create_options}".rstrip())

    def _target_columns(self, cursor: Any) -> list[str]:
        """The existing table's column for each DataFrame column, matched by name ignoring case."""
        self._run(cursor, f"SELECT * FROM {self.table} WHERE 1=0")
        existing = cursor.fetch_arrow_table().schema.names
        lowered = {name.lower(): name for name in existing}
        columns = []
        for f in self.schema.fields:
            if f.name.lower() not in lowered:
                raise AnalysisException(f"column {f.name!r} of the DataFrame does not exist in JDBC table "
                                        f"{self.table!r}; its columns are: {', '.join(existing)}")
            columns.append(lowered[f.name.lower()])
        return columns

    def _staging_tables(self, cursor: Any) -> dict[str, str]:
        """This job's staging tables, every attempt's: name -> schema-qualified name."""
        execute(cursor, self.target,
                "SELECT c.relname::text, quote_ident(n.nspname) || '.' || quote_ident(c.relname) FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE c.relkind = 'r' AND left(c.relname::text, $1::int) = $2::text",
                [len(self.staging_prefix), self.staging_prefix])
        return dict(cursor.fetchall())


def jdbc_sink(mode: str | None, options: Mapping[str, Any] | ReadOptions, schema: StructType) -> JdbcSink:
    """A `JdbcSink` writing a DataFrame of `schema` into option 'dbtable' with save `mode`."""
    options = read_options(options)
    if options.get("query") is not None:
        raise ConfigurationError("JDBC option 'query' cannot be used for writing: name the target table with 'dbtable'")
    _check_options(options, WRITE_OPTIONS, "writing")
    table = _required(options, "dbtable", WRITE_OPTIONS)
    save_mode = option_choice(ReadOptions({"mode": mode or "errorifexists"}), "mode", SAVE_MODES, "errorifexists")
    _integer(options, "batchsize")
    max_tasks = _integer(options, "numPartitions")
    if max_tasks is not None and max_tasks < 1:
        raise ConfigurationError(f"JDBC option 'numPartitions' must be at least 1 for writing, got {max_tasks}")
    return JdbcSink(_target(options, WRITE_OPTIONS), table, save_mode, schema,
                    option_bool(options, "truncate", False), str(options.get("createtableoptions") or ""), max_tasks)


__all__ = ["JdbcSource", "JdbcSink", "JdbcSplit", "JdbcError", "jdbc_source", "jdbc_sink", "READ_OPTIONS",
           "WRITE_OPTIONS"]
