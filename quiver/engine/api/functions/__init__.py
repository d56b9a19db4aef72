"""`quiver.functions` (imported as `F`): the same names as `pyspark.sql.functions`.

The functions live by domain in the modules of this package, which have the same file names
as their signatures (quiver/engine/analysis/functions/) and CPU kernels
(quiver/executors/cpu/kernels/): columns (col, lit, expr, asc, desc, broadcast), string, math,
datetime, collection (arrays, maps, structs), hashes, conditional (when, coalesce, nvl, ...),
aggregate, window, generator and row_position (rand, monotonically_increasing_id, ...).
`calls` holds what their wrappers share. This module re-exports every domain and the UDF
constructors, so `F.upper` and `F.sum` come from one namespace, as in PySpark.
"""
from quiver.engine.api.column import Column
from quiver.engine.api.functions import (
    aggregate,
    collection,
    columns,
    conditional,
    datetime,
    generator,
    hashes,
    math,
    row_position,
    string,
    window,
)
from quiver.engine.api.functions.aggregate import *  # noqa: F401,F403
from quiver.engine.api.functions.collection import *  # noqa: F401,F403
from quiver.engine.api.functions.columns import *  # noqa: F401,F403
from quiver.engine.api.functions.conditional import *  # noqa: F401,F403
from quiver.engine.api.functions.datetime import *  # noqa: F401,F403
from quiver.engine.api.functions.generator import *  # noqa: F401,F403
from quiver.engine.api.functions.hashes import *  # noqa: F401,F403
from quiver.engine.api.functions.math import *  # noqa: F401,F403
from quiver.engine.api.functions.row_position import *  # noqa: F401,F403
from quiver.engine.api.functions.string import *  # noqa: F401,F403
from quiver.engine.api.functions.window import *  # noqa: F401,F403
from quiver.engine.api.udf import PandasUDFType, UserDefinedFunction, pandas_udf, udf

# Spelled as += so that type checkers follow it too (a starred list hides the names from them).
__all__ = ["Column", "PandasUDFType", "UserDefinedFunction", "pandas_udf", "udf"]
__all__ += columns.__all__
__all__ += string.__all__
__all__ += math.__all__
__all__ += datetime.__all__
__all__ += collection.__all__
__all__ += hashes.__all__
__all__ += conditional.__all__
__all__ += aggregate.__all__
__all__ += window.__all__
__all__ += generator.__all__
__all__ += row_position.__all__
