"""Quiver: a heterogeneous dataflow engine with a PySpark-shaped API.

    import quiver
    from quiver import functions as F, types as T, Window
    spark = quiver.Session.builder.master("local[2]").getOrCreate()
"""
from quiver.engine.execution.memory import keep_freed_memory

keep_freed_memory()  # before anything imports pyarrow: mimalloc reads its options when Arrow loads

from quiver import functions, types  # noqa: E402
from quiver.engine.api.column import Column  # noqa: E402
from quiver.engine.api.dataframe import DataFrame, StorageLevel  # noqa: E402
from quiver.engine.core.errors import AnalysisException, ParseException, QuiverError  # noqa: E402
from quiver.engine.api.grouped import GroupedData  # noqa: E402
from quiver.engine.core.row import Row  # noqa: E402
from quiver.engine.api.session import Session  # noqa: E402
from quiver.engine.api.window import Window, WindowSpec  # noqa: E402
from quiver.engine.api.udf import udf  # noqa: E402
from quiver import resource  # noqa: E402
from quiver.pyspark_modules import use_as_pyspark  # noqa: E402

SparkSession = Session

__all__ = [
    "Session", "SparkSession", "DataFrame", "Column", "GroupedData", "Row", "Window", "WindowSpec",
    "StorageLevel", "functions", "types", "AnalysisException", "ParseException", "QuiverError",
    "udf", "resource", "use_as_pyspark",
]
