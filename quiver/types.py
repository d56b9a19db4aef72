"""`from quiver import types as T`: the same names as `pyspark.sql.types`."""
from quiver.engine.core.row import Row  # noqa: F401
from quiver.engine.core.types import *  # noqa: F401,F403
from quiver.engine.core.types import (  # noqa: F401
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    NullType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)
