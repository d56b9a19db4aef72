"""Array, map and struct functions of `quiver.functions` (F), as in `pyspark.sql.functions`.

Arguments follow PySpark's reading: a str is a column name where
PySpark takes a column or name, and a Python value is a literal where it takes a value
(`F.array_position(c, 3)`, `F.element_at(m, "k")`).
"""
from __future__ import annotations

from typing import Any

from quiver.engine.analysis.builder import struct_call, zip_call
from quiver.engine.api.column import Column, literal_expr, to_expr
from quiver.engine.api.functions.calls import ColumnOrName, call
from quiver.engine.core.errors import AnalysisException


def _many(cols: tuple) -> tuple:
    if len(cols) == 1 and isinstance(cols[0], (list, tuple, set)):
        cols = tuple(cols[0])
    return tuple(to_expr(c) for c in cols)


# ---------------------------------------------------------------- constructors

def array(*cols: ColumnOrName) -> Column:
    """An array of the arguments (their common type), one per row.

    >>> df.select(F.array("age", F.lit(0)).alias("a")).collect()
    [Row(a=[2, 0]), Row(a=[5, 0])]
    """
    return call("array", *_many(cols))


def struct(*cols: ColumnOrName) -> Column:
    """A struct whose fields are named after the columns (or their aliases).

    >>> df.select(F.struct("name", "age").alias("s")).collect()
    [Row(s=Row(name='Alice', age=2)), Row(s=Row(name='Bob', age=5))]
    """
    return Column(struct_call(_many(cols)))


def named_struct(*cols: Any) -> Column:
    """named_struct(name1, value1, ...): names are literals (or lit columns).

    >>> df.select(F.named_struct(F.lit("n"), "name").alias("s")).collect()
    [Row(s=Row(n='Alice')), Row(s=Row(n='Bob'))]
    """
    args = []
    for i, c in enumerate(cols):
        args.append(literal_expr(c) if i % 2 == 0 and not isinstance(c, Column) else to_expr(c))
    return call("named_struct", *args)


def create_map(*cols: ColumnOrName) -> Column:
    """map(k1, v1, k2, v2, ...): one map per row.

    >>> df.select(F.create_map("name", "age").alias("m")).collect()
    [Row(m={'Alice': 2}), Row(m={'Bob': 5})]
    """
    return call("map", *_many(cols))


def map_from_arrays(col1: ColumnOrName, col2: ColumnOrName) -> Column:
    """A map whose keys are the elements of array `col1` and values the same-position elements of array `col2`, for
    building a map from two parallel arrays.

    >>> m = spark.createDataFrame([(["a", "b"], [1, 2])], ["k", "v"])
    >>> m.select(F.map_from_arrays("k", "v").alias("m")).collect()
    [Row(m={'a': 1, 'b': 2})]
    """
    return call("map_from_arrays", to_expr(col1), to_expr(col2))


def array_repeat(col: ColumnOrName, count: ColumnOrName | int) -> Column:
    """An array holding `col` `count` times; `count` is a number or a column or name.

    >>> df.select(F.array_repeat("name", 2).alias("a")).collect()
    [Row(a=['Alice', 'Alice']), Row(a=['Bob', 'Bob'])]
    """
    return call("array_repeat", to_expr(col), to_expr(count))


def sequence(start: ColumnOrName, stop: ColumnOrName, step: ColumnOrName | None = None) -> Column:
    """Integers from start to stop inclusive, by step (default 1, or -1 counting down).

    >>> spark.range(1).select(F.sequence(F.lit(1), F.lit(4)).alias("s")).collect()
    [Row(s=[1, 2, 3, 4])]
    """
    args = (to_expr(start), to_expr(stop)) + (() if step is None else (to_expr(step),))
    return call("sequence", *args)


# ---------------------------------------------------------------- access

def element_at(col: ColumnOrName, extraction: Any) -> Column:
    """Array element at a 1-based index (negative from the end; null past the end), or map value by key.

    >>> frame = spark.createDataFrame([([1, 2, 3],)], ["a"])
    >>> frame.select(F.element_at("a", 1).alias("x"), F.element_at("a", -1).alias("y")).collect()
    [Row(x=1, y=3)]
    """
    return call("element_at", to_expr(col), literal_expr(extraction))


def try_element_at(col: ColumnOrName, extraction: Any) -> Column:
    """`element_at`, but null where the 1-based index is past either end of the array, where `element_at` raises an
    error under ANSI mode (a key absent from a map gives null in both).

    >>> a = spark.createDataFrame([([2, 3],)], ["y"])
    >>> a.select(F.try_element_at("y", 1).alias("first"), F.try_element_at("y", 5).alias("fifth")).collect()
    [Row(first=2, fifth=None)]
    """
    return call("try_element_at", to_expr(col), literal_expr(extraction))


def get(col: ColumnOrName, index: ColumnOrName | int) -> Column:
    """Array element at a 0-based index; null outside the array.

    >>> frame = spark.createDataFrame([([1, 2, 3],)], ["a"])
    >>> frame.select(F.get("a", 0).alias("x"), F.get("a", 5).alias("y")).collect()
    [Row(x=1, y=None)]
    """
    return call("get", to_expr(col), to_expr(index))


def map_keys(col: ColumnOrName) -> Column:
    """The keys of a map, as an array.

    >>> spark.createDataFrame([({"a": 1, "b": 2},)], ["m"]).select(F.map_keys("m").alias("k")).collect()
    [Row(k=['a', 'b'])]
    """
    return call("map_keys", to_expr(col))


def map_values(col: ColumnOrName) -> Column:
    """The values of a map, as an array, in the order of its entries (that of `map_keys`).

    >>> spark.createDataFrame([({"a": 1, "b": 2},)], ["m"]).select(F.map_values("m").alias("v")).collect()
    [Row(v=[1, 2])]
    """
    return call("map_values", to_expr(col))


def map_entries(col: ColumnOrName) -> Column:
    """The entries of a map, as an array of structs with fields `key` and `value`.

    >>> spark.createDataFrame([({"a": 1, "b": 2},)], ["m"]).select(F.map_entries("m").alias("e")).collect()
    [Row(e=[Row(key='a', value=1), Row(key='b', value=2)])]
    """
    return call("map_entries", to_expr(col))


def map_contains_key(col: ColumnOrName, value: Any) -> Column:
    """Whether the map has the key `value` (a literal, or a Column).

    >>> m = spark.createDataFrame([({"a": 1, "b": 2},)], ["m"])
    >>> m.select(F.map_contains_key("m", "a").alias("a"), F.map_contains_key("m", "z").alias("z")).collect()
    [Row(a=True, z=False)]
    """
    return call("map_contains_key", to_expr(col), literal_expr(value))


def array_size(col: ColumnOrName) -> Column:
    """Elements of an array, counting nulls; null for a null array (where `size` gives -1).

    >>> spark.createDataFrame([([1, 2, None],)], ["x"]).select(F.array_size("x").alias("n")).collect()
    [Row(n=3)]
    """
    return call("array_size", to_expr(col))


# ---------------------------------------------------------------- array functions

def array_distinct(col: ColumnOrName) -> Column:
    """The array without repeated elements, in the order each first appears; one null is kept.

    >>> spark.createDataFrame([([1, 2, 2, None],)], ["x"]).select(F.array_distinct("x").alias("d")).collect()
    [Row(d=[1, 2, None])]
    """
    return call("array_distinct", to_expr(col))


def array_union(col1: ColumnOrName, col2: ColumnOrName) -> Column:
    """The distinct elements of `col1` and then of `col2`, in the order they first appear.

    >>> a = spark.createDataFrame([([1, 2, 2, None], [2, 3])], ["x", "y"])
    >>> a.select(F.array_union("x", "y").alias("u")).collect()
    [Row(u=[1, 2, None, 3])]
    """
    return call("array_union", to_expr(col1), to_expr(col2))


def array_intersect(col1: ColumnOrName, col2: ColumnOrName) -> Column:
    """The distinct elements of `col1` that are also in `col2`, in `col1`'s order.

    >>> a = spark.createDataFrame([([1, 2, 2, None], [2, 3])], ["x", "y"])
    >>> a.select(F.array_intersect("x", "y").alias("i")).collect()
    [Row(i=[2])]
    """
    return call("array_intersect", to_expr(col1), to_expr(col2))


def array_except(col1: ColumnOrName, col2: ColumnOrName) -> Column:
    """The distinct elements of `col1` that are not in `col2`, in `col1`'s order.

    >>> a = spark.createDataFrame([([1, 2, 2, None], [2, 3])], ["x", "y"])
    >>> a.select(F.array_except("x", "y").alias("e")).collect()
    [Row(e=[1, None])]
    """
    return call("array_except", to_expr(col1), to_expr(col2))


def arrays_overlap(a1: ColumnOrName, a2: ColumnOrName) -> Column:
    """Whether the arrays share a non-null element; null, as in Spark, where they share none but either holds a null
    and neither is empty.

    >>> a = spark.createDataFrame([([1, 2], [2, 3], [4])], ["x", "y", "z"])
    >>> a.select(F.arrays_overlap("x", "y").alias("xy"), F.arrays_overlap("x", "z").alias("xz")).collect()
    [Row(xy=True, xz=False)]
    """
    return call("arrays_overlap", to_expr(a1), to_expr(a2))


def array_join(col: ColumnOrName, delimiter: str, null_replacement: str | None = None) -> Column:
    """Elements as strings joined by `delimiter`; nulls skipped unless `null_replacement` is given.

    >>> frame = spark.createDataFrame([(["a", None, "c"],)], ["a"])
    >>> frame.select(F.array_join("a", ",").alias("j"), F.array_join("a", ",", "-").alias("k")).collect()
    [Row(j='a,c', k='a,-,c')]
    """
    args = (to_expr(col), literal_expr(delimiter)) + (
        () if null_replacement is None else (literal_expr(null_replacement),))
    return call("array_join", *args)


def array_max(col: ColumnOrName) -> Column:
    """The largest element of the array, skipping nulls (null for an empty array).

    >>> spark.createDataFrame([([1, 5, None, 3],)], ["x"]).select(F.array_max("x").alias("m")).collect()
    [Row(m=5)]
    """
    return call("array_max", to_expr(col))


def array_min(col: ColumnOrName) -> Column:
    """The smallest element of the array, skipping nulls (null for an empty array).

    >>> spark.createDataFrame([([4, 1, None, 3],)], ["x"]).select(F.array_min("x").alias("m")).collect()
    [Row(m=1)]
    """
    return call("array_min", to_expr(col))


def array_position(col: ColumnOrName, value: Any) -> Column:
    """1-based position of the first element equal to `value`; 0 if absent.

    >>> spark.createDataFrame([([3, 1, 3],)], ["a"]).select(F.array_position("a", 3).alias("p")).collect()
    [Row(p=1)]
    """
    return call("array_position", to_expr(col), literal_expr(value))


def array_remove(col: ColumnOrName, element: Any) -> Column:
    """The array without every element equal to `element` (a literal, or a Column).

    >>> spark.createDataFrame([([1, 2, 2, 3],)], ["x"]).select(F.array_remove("x", 2).alias("r")).collect()
    [Row(r=[1, 3])]
    """
    return call("array_remove", to_expr(col), literal_expr(element))


def array_compact(col: ColumnOrName) -> Column:
    """The array without its null elements.

    >>> spark.createDataFrame([([1, None, 2],)], ["x"]).select(F.array_compact("x").alias("c")).collect()
    [Row(c=[1, 2])]
    """
    return call("array_compact", to_expr(col))


def array_append(col: ColumnOrName, value: Any) -> Column:
    """The array with `value` (a literal, or a Column) added at the end.

    >>> spark.createDataFrame([([2, 3],)], ["y"]).select(F.array_append("y", 4).alias("a")).collect()
    [Row(a=[2, 3, 4])]
    """
    return call("array_append", to_expr(col), literal_expr(value))


def array_prepend(col: ColumnOrName, value: Any) -> Column:
    """The array with `value` (a literal, or a Column) added at the start.

    >>> spark.createDataFrame([([2, 3],)], ["y"]).select(F.array_prepend("y", 1).alias("a")).collect()
    [Row(a=[1, 2, 3])]
    """
    return call("array_prepend", to_expr(col), literal_expr(value))


def array_sort(col: ColumnOrName, comparator: Any = None) -> Column:
    """Ascending, nulls last. A comparator function (a lambda) is not supported yet.

    >>> spark.createDataFrame([([3, None, 1],)], "a array<int>").select(F.array_sort("a").alias("s")).collect()
    [Row(s=[1, 3, None])]
    """
    if comparator is not None:
        raise AnalysisException("array_sort(col, comparator) with a comparator function is not supported yet; "
                                "use array_sort(col) or sort_array(col, asc)")
    return call("array_sort", to_expr(col))


def slice(x: ColumnOrName, start: ColumnOrName | int, length: ColumnOrName | int) -> Column:  # noqa: A001
    """`length` elements from 1-based `start` (negative counts from the end).

    >>> spark.createDataFrame([([1, 2, 3, 4],)], ["a"]).select(F.slice("a", 2, 2).alias("s")).collect()
    [Row(s=[2, 3])]
    """
    return call("slice", to_expr(x), to_expr(start), to_expr(length))


def flatten(col: ColumnOrName) -> Column:
    """An array of arrays made one array, the inner arrays in order; null if any inner array is null.

    >>> spark.createDataFrame([([[1, 2], [3]],)], ["n"]).select(F.flatten("n").alias("f")).collect()
    [Row(f=[1, 2, 3])]
    """
    return call("flatten", to_expr(col))


def arrays_zip(*cols: ColumnOrName) -> Column:
    """Structs of the i-th elements of each array; shorter arrays give nulls.

    >>> spark.createDataFrame([([1, 2], ["a"])], ["x", "y"]).select(F.arrays_zip("x", "y").alias("z")).collect()
    [Row(z=[Row(x=1, y='a'), Row(x=2, y=None)])]
    """
    return Column(zip_call(_many(cols)))


def size(col: ColumnOrName) -> Column:
    """Elements of an array or map; for a null one, null under ANSI mode (the default) and -1 without it, as Spark.

    >>> spark.createDataFrame([([1, 2],), ([],)], "a array<int>").select(F.size("a").alias("n")).collect()
    [Row(n=2), Row(n=0)]
    """
    return call("size", to_expr(col))


def cardinality(col: ColumnOrName) -> Column:
    """Elements of an array or map: `size` under Spark SQL's other name (null for a null one, as `size`).

    >>> spark.createDataFrame([([1, 2, None],)], ["x"]).select(F.cardinality("x").alias("n")).collect()
    [Row(n=3)]
    """
    return call("cardinality", to_expr(col))


def array_contains(col: ColumnOrName, value: Any) -> Column:
    """Whether the array holds `value` (a literal, or a Column).

    >>> spark.createDataFrame([([1, 2],)], ["a"]).select(F.array_contains("a", 2).alias("c")).collect()
    [Row(c=True)]
    """
    return call("array_contains", to_expr(col), literal_expr(value))


def sort_array(col: ColumnOrName, asc: bool = True) -> Column:
    """Each array sorted ascending (nulls first) or descending (nulls last).

    >>> frame = spark.createDataFrame([([3, None, 1],)], "a array<int>")
    >>> frame.select(F.sort_array("a").alias("up"), F.sort_array("a", asc=False).alias("down")).collect()
    [Row(up=[None, 1, 3], down=[3, 1, None])]
    """
    return call("sort_array", to_expr(col), literal_expr(asc))


__all__ = [
    "array", "struct", "named_struct", "create_map", "map_from_arrays", "array_repeat", "sequence", "element_at",
    "try_element_at", "get", "map_keys", "map_values", "map_entries", "map_contains_key", "array_size",
    "array_distinct", "array_union", "array_intersect", "array_except", "arrays_overlap", "array_join", "array_max",
    "array_min", "array_position", "array_remove", "array_compact", "array_append", "array_prepend", "array_sort",
    "slice", "flatten", "arrays_zip", "size", "cardinality", "array_contains", "sort_array",
]
