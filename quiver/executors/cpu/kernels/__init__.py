"""The CPU kernels of Spark's scalar functions, by domain, registered in one table by name.

Each domain module registers its kernels into `registry.KERNELS` when it loads; this package
imports every one of them, so `KERNELS` here is the full table. The domains have the same
file names as the functions' API (quiver/engine/api/functions/) and signatures
(quiver/engine/analysis/functions/).
"""
from quiver.executors.cpu.kernels import (  # noqa: F401 — imported for the kernels they register
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
from quiver.executors.cpu.kernels.registry import KERNELS

__all__ = ["KERNELS"]
