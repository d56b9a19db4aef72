"""Move DataFrames between Quiver and PySpark through Arrow, never through pandas or Python rows.

`from_pyspark` collects a PySpark DataFrame with `DataFrame.toArrow()`; `to_pyspark` hands a
Quiver result to `SparkSession.createDataFrame(pyarrow.Table)` (both PySpark 4). Each passes the
other side's schema along, so types stay exact: decimals keep precision and scale, nested arrays,
maps and structs keep their shape, and `timestamp` (an instant) stays apart from `timestamp_ntz`
(a wall-clock time), which share one Arrow layout. Quiver holds `timestamp` values as UTC
instants, so they arrive in PySpark as the same instants whatever its session time zone.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from quiver.engine.core import types as T
from quiver.engine.core.errors import AnalysisException

if TYPE_CHECKING:
    from quiver.engine.api.dataframe import DataFrame
    from quiver.engine.api.session import Session

_ATOMIC = ("NullType", "StringType", "BinaryType", "BooleanType", "DateType", "TimestampType", "TimestampNTZType",
           "ByteType", "ShortType", "IntegerType", "LongType", "FloatType", "DoubleType")
# PySpark's char(n) and varchar(n) arrive from Arrow as plain strings.
_AS_STRING = ("CharType", "VarcharType")


def from_pyspark(spark: Session, pyspark_df: Any) -> DataFrame:
    """A Quiver DataFrame with the columns, types and rows of `pyspark_df`, collected as Arrow."""
    if not hasattr(pyspark_df, "toArrow"):
        raise AnalysisException("from_pyspark needs PySpark 4.0 or later (DataFrame.toArrow); "
                                f"got {type(pyspark_df).__module__}.{type(pyspark_df).__name__}")
    schema = T.StructType([
        T.StructField(f.name, _quiver_type(f.dataType, f.name), f.nullable) for f in pyspark_df.schema.fields])
    return spark.createDataFrame(pyspark_df.toArrow(), schema)


def to_pyspark(quiver_df: DataFrame, pyspark_session: Any) -> Any:
    """A PySpark DataFrame with the columns, types and rows of `quiver_df`, handed over as Arrow."""
    from pyspark.sql import types as PT

    schema = quiver_df.schema
    table = quiver_df.toArrow()
    arrow_schema = pa.schema([pa.field(f.name, _spark_arrow_type(f.dataType), True) for f in schema.fields])
    table = pa.Table.from_arrays([c.cast(f.type) for c, f in zip(table.columns, arrow_schema)], schema=arrow_schema)
    spark_schema = PT.StructType([PT.StructField(f.name, _pyspark_type(f.dataType), f.nullable) for f in schema.fields])
    return pyspark_session.createDataFrame(table, schema=spark_schema)


def _quiver_type(dtype: Any, column: str) -> T.DataType:
    """The Quiver type of a PySpark type (the two mirror each other's class names)."""
    name = type(dtype).__name__
    if name == "ArrayType":
        return T.ArrayType(_quiver_type(dtype.elementType, column), dtype.containsNull)
    if name == "MapType":
        return T.MapType(_quiver_type(dtype.keyType, column), _quiver_type(dtype.valueType, column),
                         dtype.valueContainsNull)
    if name == "StructType":
        return T.StructType([T.StructField(f.name, _quiver_type(f.dataType, column), f.nullable) for f in dtype.fields])
    if name == "DecimalType":
        return T.DecimalType(dtype.precision, dtype.scale)
    if name in _AS_STRING:
        return T.StringType()
    if name in _ATOMIC:
        return getattr(T, name)()
    raise AnalysisException(
        f"column '{column}' has PySpark type {dtype.simpleString()}, which Quiver has no type for; "
        "cast or drop it before from_pyspark")


def _pyspark_type(dtype: T.DataType) -> Any:
    """The PySpark type of a Quiver type."""
    from pyspark.sql import types as PT

    if isinstance(dtype, T.ArrayType):
        return PT.ArrayType(_pyspark_type(dtype.elementType), dtype.containsNull)
    if isinstance(dtype, T.MapType):
        return PT.MapType(_pyspark_type(dtype.keyType), _pyspark_type(dtype.valueType), dtype.valueContainsNull)
    if isinstance(dtype, T.StructType):
        return PT.StructType([PT.StructField(f.name, _pyspark_type(f.dataType), f.nullable) for f in dtype.fields])
    if isinstance(dtype, T.DecimalType):
        return PT.DecimalType(dtype.precision, dtype.scale)
    return getattr(PT, type(dtype).__name__)()


def _spark_arrow_type(dtype: T.DataType) -> pa.DataType:
    """The Arrow type PySpark reads as `dtype`: Quiver's layout, with `timestamp` marked as UTC."""
    if isinstance(dtype, T.TimestampType):
        return pa.timestamp("us", "UTC")
    if isinstance(dtype, T.ArrayType):
        return pa.list_(_spark_arrow_type(dtype.elementType))
    if isinstance(dtype, T.MapType):
        return pa.map_(_spark_arrow_type(dtype.keyType), _spark_arrow_type(dtype.valueType))
    if isinstance(dtype, T.StructType):
        return pa.struct([pa.field(f.name, _spark_arrow_type(f.dataType), True) for f in dtype.fields])
    return dtype.to_arrow()
