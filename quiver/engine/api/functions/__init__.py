"""`quiver.functions` (imported as `F`): the same names as `pyspark.sql.functions`.

The functions live by domain in the modules of this package, which have the same file names
as their signatures (quiver/engine/analysis/functions/) and CPU kernels
(quiver/executors/cpu/kernels/): columns (col, lit, expr, asc, desc, broadcast), string, math,
datetime, collection (arrays, maps, structs), hashes, conditional (when, coalesce, nvl, ...),
aggregate, window, generator and row_position (rand, monotonically_increasing_id, ...).
`calls` holds what their wrappers share. This module re-exports every domain and the UDF
constructors, so `F.upper` and `F.sum` come from one namespace, as in PySpark.
"""
from typing import TYPE_CHECKING

from quiver.engine.api.column import Column
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

# The names `from quiver.functions import *` gives: each domain's `__all__` and the UDF constructors (no
# module names, so the star import shadows no `datetime` or `math` of the caller). Type checkers read the
# star imports above instead, which they follow where they cannot evaluate a computed `__all__`.
if not TYPE_CHECKING:
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

    __all__ = ["Column", "PandasUDFType", "UserDefinedFunction", "pandas_udf", "udf"]
    for _domain in (columns, string, math, datetime, collection, hashes, conditional, aggregate, window, generator,
                    row_position):
        __all__ += _domain.__all__
    del _domain
