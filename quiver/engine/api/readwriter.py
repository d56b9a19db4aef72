"""`spark.read` and `df.write`: PySpark's DataFrameReader and DataFrameWriter over file connectors."""
from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from quiver.engine.api.unsupported import PySparkMembers
from quiver.engine.core.errors import AnalysisException
from quiver.engine.core.types import StructType, parse_schema
from quiver.engine.execution.jobs import action

if TYPE_CHECKING:
    from quiver.engine.api.dataframe import DataFrame
    from quiver.engine.api.session import Session

#: What the readers take as `path`: a file, folder or glob (local, `s3://`, or any URI pyarrow or fsspec opens), or
#: a list of them.
PathArg = str | os.PathLike | Sequence[str | os.PathLike]


def _option_value(value: Any) -> Any:
    """Spark keeps option values as strings; booleans become 'true'/'false'."""
    if isinstance(value, bool):
        return str(value).lower()
    return value


# The file formats whose timestamps are text, read in the `timeZone` option's zone.
TEXT_FORMATS = ("csv", "json")


class DataFrameReader(PySparkMembers):
    """Builds a file `Source` from a format, options and an optional schema, as `spark.read` does.

    >>> spark.read.format("csv").option("header", "true") is not None
    True
    """

    _pyspark_name = "DataFrameReader"

    def __init__(self, session: Session):
        self._session = session
        self._format = "parquet"
        self._options: dict[str, Any] = {}
        self._schema: StructType | None = None

    def format(self, source: str) -> DataFrameReader:
        """The data source format: parquet (the default), csv, json, arrow/ipc/feather, or jdbc.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "people.json")
        >>> df.write.json(path)
        >>> spark.read.format("json").load(path).orderBy("age").collect()
        [Row(age=2, name='Alice'), Row(age=5, name='Bob')]
        """
        self._format = source
        return self

    def option(self, key: str, value: Any) -> DataFrameReader:
        """One option of the format (`header`, `sep`, `mergeSchema`, ...); keys are case-insensitive and values kept as
        strings (a bool becomes "true"/"false"), as in Spark.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "people.csv")
        >>> df.write.option("header", True).csv(path)
        >>> spark.read.option("header", True).option("inferSchema", True).csv(path).dtypes
        [('age', 'int'), ('name', 'string')]
        """
        self._options[key.lower()] = _option_value(value)
        return self

    def options(self, **options: Any) -> DataFrameReader:
        """`option(key, value)` for each keyword; options whose value is None are skipped.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "people.csv")
        >>> df.write.csv(path, header=True)
        >>> spark.read.options(header=True, inferSchema=True).csv(path).orderBy("age").first()
        Row(age=2, name='Alice')
        """
        for key, value in options.items():
            if value is not None:
                self.option(key, value)
        return self

    def schema(self, schema: StructType | str) -> DataFrameReader:
        """The schema to read with, a StructType or a DDL string such as `"name STRING, age INT"`, instead of
        inferring one.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "people.csv")
        >>> df.write.csv(path)
        >>> spark.read.schema("age INT, name STRING").csv(path).orderBy("age").collect()
        [Row(age=2, name='Alice'), Row(age=5, name='Bob')]
        """
        if isinstance(schema, str):
            schema = parse_schema(schema)
        if not isinstance(schema, StructType):
            raise TypeError(f"schema must be a StructType or a DDL string, not {type(schema).__name__}")
        self._schema = schema
        return self

    def load(self, path: PathArg | None = None, format: str | None = None, schema: StructType | str | None = None,
             **options: Any) -> DataFrame:
        """Read `path` (a file, folder, glob or list of them; local, `s3://`, or any URI pyarrow or fsspec opens) in
        the format set by `format` (or given here), as a DataFrame. The files' schema is read at once; the rows
        when an action runs.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "people")
        >>> df.write.parquet(path)
        >>> spark.read.load(path, format="parquet").count()
        2
        """
        if format is not None:
            self.format(format)
        if schema is not None:
            self.schema(schema)
        self.options(**options)
        from quiver.connectors.registry import is_table_format  # connectors load with the first read or write

        if is_table_format(self._format):
            return self._load_table()
        if path is None:
            path = self._options.get("path")
        if path is None:
            raise AnalysisException(f"load() needs a path for data source '{self._format}'")
        from quiver.connectors.object_store import bind_settings
        from quiver.connectors.registry import file_source

        bind_settings(path, self._session.conf.getAll())
        options = dict(self._options)
        if self._format.lower() in TEXT_FORMATS:
            # Text without an offset is a wall-clock time in the session time zone, unless `timeZone` says another.
            options.setdefault("timezone", self._session.conf.session_time_zone())
        source = file_source(self._format, path, options, self._schema)
        return self._session._dataframe_from_source(source)

    def parquet(self, *paths: str | os.PathLike, **options: Any) -> DataFrame:
        """Read Parquet files; options such as mergeSchema, basePath, pathGlobFilter, recursiveFileLookup.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "people")
        >>> df.write.partitionBy("name").parquet(path)
        >>> spark.read.parquet(path).orderBy("age").collect()
        [Row(age=2, name='Alice'), Row(age=5, name='Bob')]
        """
        return self.format("parquet").load(_path_list(paths), **options)

    def csv(
        self, path: PathArg, schema: StructType | str | None = None, sep: str | None = None,
        encoding: str | None = None, quote: str | None = None, escape: str | None = None,
        comment: str | None = None, header: bool | str | None = None, inferSchema: bool | str | None = None,
        nullValue: str | None = None, mode: str | None = None, multiLine: bool | str | None = None,
        **options: Any,
    ) -> DataFrame:
        """Read CSV files with Spark's options (header, inferSchema, sep, quote, escape, comment, nullValue, mode,
        multiLine, encoding); without a schema or inferSchema every column is a string, as in Spark.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "people.csv")
        >>> df.write.csv(path, header=True)
        >>> spark.read.csv(path, header=True).orderBy("name").collect()
        [Row(age='2', name='Alice'), Row(age='5', name='Bob')]
        """
        self.options(sep=sep, encoding=encoding, quote=quote, escape=escape, comment=comment, header=header,
                     inferSchema=inferSchema, nullValue=nullValue, mode=mode, multiLine=multiLine)
        return self.format("csv").load(path, schema=schema, **options)

    def json(
        self, path: PathArg, schema: StructType | str | None = None, mode: str | None = None,
        columnNameOfCorruptRecord: str | None = None, multiLine: bool | str | None = None,
        encoding: str | None = None, **options: Any,
    ) -> DataFrame:
        """Read JSON Lines files (one object per line; `multiLine` for whole-file documents), inferring the schema as
        Spark does: fields sorted by name, integers as bigint.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "people.json")
        >>> df.write.json(path)
        >>> spark.read.json(path).dtypes
        [('age', 'bigint'), ('name', 'string')]
        """
        self.options(mode=mode, columnNameOfCorruptRecord=columnNameOfCorruptRecord, multiLine=multiLine,
                     encoding=encoding)
        return self.format("json").load(path, schema=schema, **options)

    def table(self, tableName: str) -> DataFrame:
        """The temp view `tableName`, as `spark.table`.

        >>> df.createOrReplaceTempView("people"); spark.read.table("people").count()
        2
        """
        return self._session.table(tableName)

    def jdbc(self, url: str, table: str, column: str | None = None, lowerBound: Any = None, upperBound: Any = None,
             numPartitions: int | None = None, predicates: Sequence[str] | None = None,
             properties: dict[str, Any] | None = None) -> DataFrame:
        """Read a PostgreSQL table (or `'(subquery) alias'`) through ADBC (the `postgres` extra): in strides of the
        numeric `column` from `lowerBound` to `upperBound` over `numPartitions` tasks, or one task per SQL predicate
        of `predicates`. `properties` holds `user`, `password` and other options. Only PostgreSQL URLs are read.

        >>> spark.read.jdbc("jdbc:postgresql://db:5432/shop", "orders", properties={"user": "me"})  # doctest: +SKIP
        """
        self.format("jdbc").options(**(properties or {}))
        self.options(url=url, dbtable=table, partitionColumn=column, lowerBound=lowerBound, upperBound=upperBound,
                     numPartitions=numPartitions)
        return self._load_table(predicates)

    def _load_table(self, predicates: Sequence[str] | None = None) -> DataFrame:
        if self._schema is not None:
            raise AnalysisException(f"data source '{self._format}' does not allow a user-specified schema")
        from quiver.connectors.registry import table_source

        return self._session._dataframe_from_source(table_source(self._format, self._options, predicates))


def _path_list(paths: Sequence[Any]) -> PathArg:
    if len(paths) == 1:
        return paths[0]
    return list(paths)


class DataFrameWriter(PySparkMembers):
    """Builds a file `Sink` from a format, save mode, options and partition columns, as `df.write` does.

    >>> df.write.mode("overwrite").format("parquet") is not None
    True
    """

    _pyspark_name = "DataFrameWriter"

    def __init__(self, df: DataFrame):
        self._df = df
        self._format = "parquet"
        self._mode: str | None = None
        self._options: dict[str, Any] = {}
        self._partition_by: tuple[str, ...] = ()

    def mode(self, saveMode: str | None) -> DataFrameWriter:
        """What `save` does when the output exists: append, overwrite, error/errorifexists (the default) or ignore.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "people")
        >>> df.write.parquet(path); df.write.mode("append").parquet(path)
        >>> spark.read.parquet(path).count()
        4
        """
        if saveMode is not None:
            self._mode = saveMode
        return self

    def format(self, source: str) -> DataFrameWriter:
        """The output format: parquet (the default), csv, json, arrow/ipc/feather, or jdbc.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "people")
        >>> df.write.format("json").save(path)
        >>> spark.read.json(path).count()
        2
        """
        self._format = source
        return self

    def option(self, key: str, value: Any) -> DataFrameWriter:
        """One option of the format (`compression`, `header`, `sep`, ...); keys are case-insensitive, as in Spark.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "people")
        >>> df.write.option("compression", "zstd").parquet(path)
        >>> spark.read.parquet(path).count()
        2
        """
        self._options[key.lower()] = _option_value(value)
        return self

    def options(self, **options: Any) -> DataFrameWriter:
        """`option(key, value)` for each keyword; options whose value is None are skipped.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "people")
        >>> df.write.options(header=True, sep=";").csv(path)
        >>> spark.read.options(header=True, sep=";").csv(path).columns
        ['age', 'name']
        """
        for key, value in options.items():
            if value is not None:
                self.option(key, value)
        return self

    def partitionBy(self, *cols: str | Sequence[str]) -> DataFrameWriter:
        """Write one Hive-style folder `col=value` per distinct value of `cols`; the columns leave the files and come
        back from the folder names when read.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "people")
        >>> df.write.partitionBy("name").parquet(path)
        >>> sorted(n for n in os.listdir(path) if "=" in n)
        ['name=Alice', 'name=Bob']
        """
        if len(cols) == 1 and isinstance(cols[0], (list, tuple)):
            self._partition_by = tuple(cols[0])
        else:
            self._partition_by = cast("tuple[str, ...]", cols)  # names, when not one list of them
        return self

    def save(self, path: str | os.PathLike | None = None, format: str | None = None, mode: str | None = None,
             partitionBy: str | Sequence[str] | None = None, **options: Any) -> None:
        """Write the DataFrame under `path` in the format set by `format` (or given here); the output appears all at
        once or not at all (a failed job leaves nothing behind).

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "people")
        >>> df.write.save(path, format="parquet", mode="overwrite")
        >>> spark.read.parquet(path).count()
        2
        """
        if format is not None:
            self.format(format)
        self.mode(mode)
        if partitionBy is not None:
            self.partitionBy(partitionBy if isinstance(partitionBy, str) else tuple(partitionBy))
        self.options(**options)
        from quiver.connectors.object_store import bind_settings  # connectors load with the first read or write
        from quiver.connectors.registry import file_sink, is_table_format

        with action(f"write.{self._format}"):
            if is_table_format(self._format):
                self._save_table()
                return
            if path is None:
                path = self._options.get("path")
            if path is None:
                raise AnalysisException(f"save() needs a path for data source '{self._format}'")
            bind_settings(path, self._df._session.conf.getAll())
            sink = file_sink(self._format, path, self._mode, self._partition_by, self._options,
                             self._df.schema.to_arrow_schema())
            self._df._session._execute_write(self._df, sink)

    def parquet(self, path: str | os.PathLike, mode: str | None = None,
                partitionBy: str | Sequence[str] | None = None, compression: str | None = None) -> None:
        """Write Parquet files under `path`; `compression` is snappy (the default), zstd, gzip, lz4, brotli or none.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "people")
        >>> df.write.parquet(path, mode="overwrite", compression="zstd")
        >>> spark.read.parquet(path).count()
        2
        """
        self.options(compression=compression)
        self.format("parquet").save(path, mode=mode, partitionBy=partitionBy)

    def csv(self, path: str | os.PathLike, mode: str | None = None, compression: str | None = None,
            sep: str | None = None, quote: str | None = None, escape: str | None = None,
            header: bool | str | None = None, nullValue: str | None = None, **options: Any) -> None:
        """Write CSV files under `path` with Spark's options (header, sep, quote, escape, nullValue, compression).

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "people")
        >>> df.write.csv(path, header=True)
        >>> spark.read.csv(path, header=True, inferSchema=True).orderBy("age").collect()
        [Row(age=2, name='Alice'), Row(age=5, name='Bob')]
        """
        self.options(compression=compression, sep=sep, quote=quote, escape=escape, header=header,
                     nullValue=nullValue, **options)
        self.format("csv").save(path, mode=mode)

    def json(self, path: str | os.PathLike, mode: str | None = None, compression: str | None = None,
             ignoreNullFields: bool | str | None = None, **options: Any) -> None:
        """Write JSON Lines files under `path`; null fields are left out unless `ignoreNullFields` is false.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "people")
        >>> df.write.json(path)
        >>> spark.read.json(path).orderBy("age").collect()
        [Row(age=2, name='Alice'), Row(age=5, name='Bob')]
        """
        self.options(compression=compression, ignoreNullFields=ignoreNullFields, **options)
        self.format("json").save(path, mode=mode)

    def jdbc(self, url: str, table: str, mode: str | None = None, properties: dict[str, Any] | None = None) -> None:
        """Write into the PostgreSQL table `table` (the `postgres` extra); the rows appear in one transaction or not
        at all. `mode` and `properties` as for `save` and `DataFrameReader.jdbc`.

        >>> df.write.jdbc("jdbc:postgresql://db:5432/shop", "people", mode="append")  # doctest: +SKIP
        """
        self.options(**(properties or {}))
        self.format("jdbc").options(url=url, dbtable=table).save(mode=mode)

    def _save_table(self) -> None:
        """Write through a table sink, in at most its `max_tasks` tasks (jdbc's numPartitions)."""
        if self._partition_by:
            raise AnalysisException(f"data source '{self._format}' does not support partitionBy")
        from quiver.connectors.registry import table_sink

        sink = table_sink(self._format, self._mode, self._options, self._df.schema)
        df = self._df if sink.max_tasks is None else self._df.coalesce(sink.max_tasks)
        self._df._session._execute_write(df, sink)
