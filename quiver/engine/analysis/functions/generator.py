"""Catalog entries for the generators: explode, posexplode, inline and their _outer forms.

They are typed here, but the analyzer lifts them out of the select list into a `Generate` node
(quiver/engine/analysis/generators.py), which makes their rows.
"""
from __future__ import annotations

from quiver.engine.analysis.functions.catalog import DataType, register
from quiver.engine.core import types as T
from quiver.engine.core.errors import AnalysisException


def _generator_type(types: list[DataType]) -> DataType:
    """A generator's 'type' is its input's: Generate reads the columns it makes from that."""
    t = types[0]
    if not isinstance(t, (T.ArrayType, T.MapType, T.NullType)):
        raise AnalysisException(f"a generator's input must be ARRAY or MAP, but it is {t.simpleString()}")
    return t


def _inline_type(types: list[DataType]) -> DataType:
    t = types[0]
    if not (isinstance(t, T.ArrayType) and isinstance(t.elementType, (T.StructType, T.NullType))):
        raise AnalysisException("function inline: the argument must be an ARRAY of STRUCTs, but it is "
                                f"{t.simpleString()}")
    return t


for _name in ("explode", "explode_outer", "posexplode", "posexplode_outer"):
    register(_name, 1, 1, _generator_type)
for _name in ("inline", "inline_outer"):
    register(_name, 1, 1, _inline_type)

del _name
