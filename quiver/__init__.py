"""Quiver: a heterogeneous dataflow engine with a PySpark-shaped API.

    import quiver
    from quiver import functions as F, types as T, Window
    spark = quiver.Session.builder.master("local[2]").getOrCreate()
"""
import os

if os.environ.get("QUIVER_TUNE_ALLOCATOR") == "1":  # asked for: before pyarrow loads, as mimalloc needs
    from quiver.engine.execution.memory import tune_allocator

    tune_allocator()

from quiver import functions, resource, types
from quiver.engine.api.column import Column
from quiver.engine.api.dataframe import DataFrame, StorageLevel
from quiver.engine.api.grouped import GroupedData
from quiver.engine.api.session import Session
from quiver.engine.api.udf import udf
from quiver.engine.api.window import Window, WindowSpec
from quiver.engine.core.errors import AnalysisException, ParseException, QuiverError
from quiver.engine.core.row import Row
from quiver.engine.core.version import __version__
from quiver.pyspark_modules import use_as_pyspark

SparkSession = Session

__all__ = [
    "Session", "SparkSession", "DataFrame", "Column", "GroupedData", "Row", "Window", "WindowSpec",
    "StorageLevel", "functions", "types", "AnalysisException", "ParseException", "QuiverError",
    "udf", "resource", "use_as_pyspark", "__version__",
]
