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


def _parse_datatype_json_string(json_string: str) -> DataType:
    """A type from `DataType.json()` text, as PySpark's `pyspark.sql.types._parse_datatype_json_string` (which
    programs use to rebuild a schema they saved)."""
    import json

    from quiver.engine.core.types import parse_json_value

    return parse_json_value(json.loads(json_string))
