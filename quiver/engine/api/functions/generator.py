"""Generator functions of `quiver.functions` (F): explode, posexplode, inline and their _outer forms.

Each makes rows, not a value: the analyzer lifts it out of the select list into a `Generate` node.
"""
from __future__ import annotations

from quiver.engine.api.column import Column, to_expr
from quiver.engine.api.functions.calls import ColumnOrName, call


def explode(col: ColumnOrName) -> Column:
    """One row per array element (`col`) or map entry (`key`, `value`); null and empty give no rows.

    >>> spark.createDataFrame([([1, 2],), ([],)], "a array<int>").select(F.explode("a").alias("v")).collect()
    [Row(v=1), Row(v=2)]
    """
    return call("explode", to_expr(col))


def explode_outer(col: ColumnOrName) -> Column:
    """explode, but a null or empty array or map gives one row of nulls.

    >>> spark.createDataFrame([([1, 2],), ([],)], "a array<int>").select(F.explode_outer("a").alias("v")).collect()
    [Row(v=1), Row(v=2), Row(v=None)]
    """
    return call("explode_outer", to_expr(col))


def posexplode(col: ColumnOrName) -> Column:
    """explode with the 0-based position first (`pos`).

    >>> spark.createDataFrame([(["a", "b"],)], ["a"]).select(F.posexplode("a")).collect()
    [Row(pos=0, col='a'), Row(pos=1, col='b')]
    """
    return call("posexplode", to_expr(col))


def posexplode_outer(col: ColumnOrName) -> Column:
    """`posexplode`, but a null or empty array or map gives one row whose `pos` and `col` (or `key`, `value`) are
    null, so no input row is lost.

    >>> p = spark.createDataFrame([(1, ["a", "b"]), (2, None)], ["id", "xs"])
    >>> p.select("id", F.posexplode_outer("xs")).collect()
    [Row(id=1, pos=0, col='a'), Row(id=1, pos=1, col='b'), Row(id=2, pos=None, col=None)]
    """
    return call("posexplode_outer", to_expr(col))


def inline(col: ColumnOrName) -> Column:
    """One row per struct of an array of structs, one column per field.

    >>> spark.createDataFrame([([Row(x=1, y="a"), Row(x=2, y="b")],)], ["a"]).select(F.inline("a")).collect()
    [Row(x=1, y='a'), Row(x=2, y='b')]
    """
    return call("inline", to_expr(col))


def inline_outer(col: ColumnOrName) -> Column:
    """`inline`, but a null or empty array gives one row of nulls, so no input row is lost.

    >>> s = spark.createDataFrame([(1, [Row(a=1, b="x")]), (2, [])], "id int, s array<struct<a:int,b:string>>")
    >>> s.select("id", F.inline_outer("s")).collect()
    [Row(id=1, a=1, b='x'), Row(id=2, a=None, b=None)]
    """
    return call("inline_outer", to_expr(col))


__all__ = [
    "explode", "explode_outer", "posexplode", "posexplode_outer", "inline", "inline_outer",
]
