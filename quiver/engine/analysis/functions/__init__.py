"""The analyzer's view of each function, by domain: arity, implicit casts, result type and column name.

`catalog` holds `FunctionSpec`, the argument kinds, common types and the registry with its
`lookup`; each domain module registers its functions' specs there when it loads. This package
imports every domain, so the registry is complete whichever module a caller imports. The
domains have the same file names as the functions' API (quiver/engine/api/functions/) and CPU
kernels (quiver/executors/cpu/kernels/).
"""
from quiver.engine.analysis.functions import (  # noqa: F401 — imported for the specs they register
    aggregate,
    collection,
    conditional,
    datetime,
    generator,
    hashes,
    math,
    row_position,
    string,
)
