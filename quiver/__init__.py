"""Quiver: a heterogeneous dataflow engine with a PySpark-shaped API.

    import quiver
    from quiver import functions as F, types as T, Window
    spark = quiver.Session.builder.master("local[2]").getOrCreate()
"""
from quiver import functions, types
from quiver.engine.column import Column
from quiver.engine.dataframe import DataFrame, StorageLevel
from quiver.engine.errors import AnalysisException, ParseException, QuiverError
from quiver.engine.grouped import GroupedData
from quiver.engine.row import Row
from quiver.engine.session import Session
from quiver.engine.window import Window, WindowSpec

SparkSession = Session

__all__ = [
    "Session", "SparkSession", "DataFrame", "Column", "GroupedData", "Row", "Window", "WindowSpec",
    "StorageLevel", "functions", "types", "AnalysisException", "ParseException", "QuiverError",
]
