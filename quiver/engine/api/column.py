"""`Column`: the PySpark-shaped wrapper users combine into expressions."""
from __future__ import annotations

import datetime
from collections.abc import Iterable
from typing import Any

from quiver.engine.analysis import builder
from quiver.engine.analysis.builder import WindowDefinition
from quiver.engine.analysis.generators import MultiAlias
from quiver.engine.api.unsupported import missing_member
from quiver.engine.core import types as T
from quiver.engine.core.errors import AnalysisException
from quiver.engine.core.expressions import (
    Alias,
    And,
    BinaryArithmetic,
    CaseWhen,
    Cast,
    Comparison,
    Expr,
    In,
    IsNotNull,
    IsNull,
    Literal,
    Negate,
    Not,
    Or,
    ScalarFunction,
    SortOrder,
    UnresolvedColumn,
)


def to_expr(value: Any) -> Expr:
    """A column name (str) becomes a column reference, a Column its expression, anything else a literal."""
    if isinstance(value, Column):
        return value.expr
    if isinstance(value, str):
        return UnresolvedColumn.parse(value)
    return python_literal(value)


def literal_expr(value: Any) -> Expr:
    """A Column stays as it is; any other Python value becomes a literal (strings too)."""
    if isinstance(value, Column):
        return value.expr
    return python_literal(value)


def python_literal(value: Any) -> Literal:
    """A Python value as a literal; a naive datetime is a wall-clock time in the machine's zone, as PySpark takes
    one (Python's `astimezone`)."""
    if isinstance(value, datetime.datetime) and value.tzinfo is None:
        return Literal(value.astimezone(datetime.timezone.utc).replace(tzinfo=None), T.TimestampType())
    return Literal.of(value)


def lit(value: Any) -> Column:
    """A literal column, as `F.lit`.

    >>> df.select(F.lit(1).alias("one"), F.lit("x").alias("x")).collect()
    [Row(one=1, x='x'), Row(one=1, x='x')]
    """
    if isinstance(value, Column):
        return value
    return Column(python_literal(value))


def _type(value: T.DataType | str) -> T.DataType:
    return T.parse_data_type(value) if isinstance(value, str) else value


class Column:
    """An expression over the columns of a DataFrame; immutable, combined with operators.

    >>> df.select((df.age + 1).alias("next")).collect()
    [Row(next=3), Row(next=6)]
    """

    __slots__ = ("expr",)

    def __init__(self, expr: Expr):
        self.expr = expr

    def __repr__(self) -> str:
        return f"Column<'{self.expr.sql()}'>"

    def __bool__(self) -> bool:
        raise ValueError(
            "Cannot convert column into bool: please use '&' for 'and', '|' for 'or', "
            "'~' for 'not' when building DataFrame boolean expressions."
        )

    __hash__ = None  # type: ignore[assignment]

    def _bin(self, op: str, other: Any, reverse: bool = False) -> Column:
        left, right = self.expr, literal_expr(other)
        if reverse:
            left, right = right, left
        if op in ("+", "-", "*", "/", "%"):
            return Column(BinaryArithmetic(op, left, right))
        return Column(Comparison(op, left, right))

    def __add__(self, o: Any) -> Column: return self._bin("+", o)
    def __radd__(self, o: Any) -> Column: return self._bin("+", o)  # PySpark names 1 + x as (x + 1)
    def __sub__(self, o: Any) -> Column: return self._bin("-", o)
    def __rsub__(self, o: Any) -> Column: return self._bin("-", o, True)
    def __mul__(self, o: Any) -> Column: return self._bin("*", o)
    def __rmul__(self, o: Any) -> Column: return self._bin("*", o)
    def __truediv__(self, o: Any) -> Column: return self._bin("/", o)
    def __rtruediv__(self, o: Any) -> Column: return self._bin("/", o, True)
    def __mod__(self, o: Any) -> Column: return self._bin("%", o)
    def __rmod__(self, o: Any) -> Column: return self._bin("%", o, True)
    def __neg__(self) -> Column: return Column(Negate(self.expr))
    def __pow__(self, o: Any) -> Column: return Column(ScalarFunction("power", (self.expr, literal_expr(o))))
    def __rpow__(self, o: Any) -> Column: return Column(ScalarFunction("power", (literal_expr(o), self.expr)))

    def __eq__(self, o: Any) -> Column:  # type: ignore[override]
        return self._bin("=", o)

    def __ne__(self, o: Any) -> Column:  # type: ignore[override]
        return Column(Not(Comparison("=", self.expr, literal_expr(o))))

    def __lt__(self, o: Any) -> Column: return self._bin("<", o)
    def __le__(self, o: Any) -> Column: return self._bin("<=", o)
    def __gt__(self, o: Any) -> Column: return self._bin(">", o)
    def __ge__(self, o: Any) -> Column: return self._bin(">=", o)

    def eqNullSafe(self, o: Any) -> Column:
        """Equality that treats two nulls as equal and a null and a value as unequal (SQL's `<=>`), never null.
        PySpark names the parameter `other`.

        >>> nulls = spark.createDataFrame([(None,), (1,)], "x int")
        >>> nulls.select(nulls.x.eqNullSafe(None).alias("is_null"), (nulls.x == None).alias("eq")).collect()
        [Row(is_null=True, eq=None), Row(is_null=False, eq=None)]
        """
        return self._bin("<=>", o)

    def __and__(self, o: Any) -> Column: return Column(And(self.expr, literal_expr(o)))
    def __rand__(self, o: Any) -> Column: return Column(And(literal_expr(o), self.expr))
    def __or__(self, o: Any) -> Column: return Column(Or(self.expr, literal_expr(o)))
    def __ror__(self, o: Any) -> Column: return Column(Or(literal_expr(o), self.expr))
    def __invert__(self) -> Column: return Column(Not(self.expr))

    def isNull(self) -> Column:
        """True where the value is null.

        >>> spark.createDataFrame([(None,), (1,)], "x int").filter(F.col("x").isNull()).count()
        1
        """
        return Column(IsNull(self.expr))

    def isNotNull(self) -> Column:
        """True where the value is not null.

        >>> spark.createDataFrame([(None,), (1,)], "x int").filter(F.col("x").isNotNull()).count()
        1
        """
        return Column(IsNotNull(self.expr))

    def isin(self, *values: Any) -> Column:
        """True where the value equals one of the values (given one by one or as one list), as SQL's IN.

        >>> df.filter(df.name.isin("Bob", "Carol")).collect()
        [Row(age=5, name='Bob')]
        """
        if len(values) == 1 and isinstance(values[0], (list, tuple, set)):
            values = tuple(values[0])
        return Column(In(self.expr, tuple(literal_expr(v) for v in values)))

    def between(self, lower: Any, upper: Any) -> Column:
        """`lowerBound <= self <= upperBound`, both ends included. PySpark names the parameters `lowerBound` and
        `upperBound` (Quiver's are `lower` and `upper`).

        >>> df.select(df.name, df.age.between(2, 4).alias("young")).collect()
        [Row(name='Alice', young=True), Row(name='Bob', young=False)]
        """
        return (self >= lower) & (self <= upper)

    def like(self, pattern: str) -> Column:
        """SQL LIKE: `%` matches any run of characters, `_` one character. PySpark names the parameter `other`.

        >>> df.filter(df.name.like("A%")).count()
        1
        """
        return Column(ScalarFunction("like", (self.expr, Literal.of(pattern))))

    def rlike(self, pattern: str) -> Column:
        """True where a Java regular expression matches part of the string. PySpark names the parameter `other`.

        >>> df.filter(df.name.rlike("^B.b$")).count()
        1
        """
        return Column(ScalarFunction("rlike", (self.expr, Literal.of(pattern))))

    def ilike(self, pattern: str) -> Column:
        """Case-insensitive LIKE. PySpark names the parameter `other`.

        >>> df.filter(df.name.ilike("a%")).count()
        1
        """
        return Column(ScalarFunction("ilike", (self.expr, Literal.of(pattern))))

    def startswith(self, other: Any) -> Column:
        """True where the string starts with `other` (a string or a Column).

        >>> df.filter(df.name.startswith("Al")).count()
        1
        """
        return Column(ScalarFunction("startswith", (self.expr, literal_expr(other))))

    def endswith(self, other: Any) -> Column:
        """True where the string ends with `other` (a string or a Column).

        >>> df.filter(df.name.endswith("ob")).count()
        1
        """
        return Column(ScalarFunction("endswith", (self.expr, literal_expr(other))))

    def contains(self, other: Any) -> Column:
        """True where the string contains `other` (a string or a Column).

        >>> df.filter(df.name.contains("li")).count()
        1
        """
        return Column(ScalarFunction("contains", (self.expr, literal_expr(other))))

    def substr(self, startPos: Any, length: Any) -> Column:
        """`length` characters from the 1-based position `startPos` (both ints or both Columns).

        >>> df.select(df.name.substr(1, 3).alias("s")).collect()
        [Row(s='Ali'), Row(s='Bob')]
        """
        return Column(ScalarFunction("substr", (self.expr, literal_expr(startPos), literal_expr(length))))

    def cast(self, dataType: T.DataType | str) -> Column:
        """This column as `dataType` (a DataType or a DDL string such as "int"); `astype` is the same. Under ANSI mode
        (on by default, as in Spark 4) a value that does not convert raises; `try_cast` gives NULL instead.

        >>> df.select(df.age.cast("string").alias("a")).dtypes
        [('a', 'string')]
        """
        return Column(Cast(self.expr, _type(dataType)))

    astype = cast

    def try_cast(self, dataType: T.DataType | str) -> Column:
        """This column as `dataType`, NULL where a value does not convert (in either ANSI mode).

        >>> spark.createDataFrame([("1",), ("x",)], "s string").select(F.col("s").try_cast("int").alias("i")).collect()
        [Row(i=1), Row(i=None)]
        """
        return Column(Cast(self.expr, _type(dataType), is_try=True))

    def alias(self, *alias: str, **kwargs: Any) -> Column:
        """This column under a new name; `name` is the same. Several names name the columns of a generator
        (`F.posexplode(m).alias("pos", "key", "value")`). `metadata` is accepted and ignored.

        >>> df.select(df.age.alias("years")).columns
        ['years']
        """
        if len(alias) > 1:
            # several names: one per column a generator makes (posexplode(m).alias("p", "k", "v"))
            return Column(MultiAlias(self.expr, tuple(alias)))
        if len(alias) != 1:
            raise AnalysisException(f"alias() takes exactly one name for a scalar column, got {len(alias)}")
        return Column(Alias(self.expr, alias[0]))

    name = alias

    def asc(self) -> Column:
        """Ascending sort order, nulls first (for `orderBy`).

        >>> spark.createDataFrame([(2,), (None,), (1,)], "x int").orderBy(F.col("x").asc()).collect()
        [Row(x=None), Row(x=1), Row(x=2)]
        """
        return Column(SortOrder(self.expr, True, True))
    def asc_nulls_first(self) -> Column:
        """Ascending sort order, nulls first.

        >>> spark.createDataFrame([(2,), (None,), (1,)], "x int").orderBy(F.col("x").asc_nulls_first()).collect()
        [Row(x=None), Row(x=1), Row(x=2)]
        """
        return Column(SortOrder(self.expr, True, True))
    def asc_nulls_last(self) -> Column:
        """Ascending sort order, nulls last.

        >>> spark.createDataFrame([(2,), (None,), (1,)], "x int").orderBy(F.col("x").asc_nulls_last()).collect()
        [Row(x=1), Row(x=2), Row(x=None)]
        """
        return Column(SortOrder(self.expr, True, False))
    def desc(self) -> Column:
        """Descending sort order, nulls last.

        >>> spark.createDataFrame([(2,), (None,), (1,)], "x int").orderBy(F.col("x").desc()).collect()
        [Row(x=2), Row(x=1), Row(x=None)]
        """
        return Column(SortOrder(self.expr, False, False))
    def desc_nulls_first(self) -> Column:
        """Descending sort order, nulls first.

        >>> spark.createDataFrame([(2,), (None,), (1,)], "x int").orderBy(F.col("x").desc_nulls_first()).collect()
        [Row(x=None), Row(x=2), Row(x=1)]
        """
        return Column(SortOrder(self.expr, False, True))
    def desc_nulls_last(self) -> Column:
        """Descending sort order, nulls last.

        >>> spark.createDataFrame([(2,), (None,), (1,)], "x int").orderBy(F.col("x").desc_nulls_last()).collect()
        [Row(x=2), Row(x=1), Row(x=None)]
        """
        return Column(SortOrder(self.expr, False, False))

    def when(self, condition: Column, value: Any) -> Column:
        """Another branch of a `F.when(...)` chain: `value` where `condition` holds and no earlier branch did.

        >>> df.select(F.when(df.age < 3, "young").when(df.age < 6, "middle").alias("band")).collect()
        [Row(band='young'), Row(band='middle')]
        """
        e = self.expr
        if not isinstance(e, CaseWhen) or e.else_value is not None:
            raise AnalysisException("when() can only be applied on a Column built by functions.when() and not yet "
                                    "given otherwise()")
        return Column(CaseWhen(e.conditions + (condition.expr,), e.values + (literal_expr(value),), None))

    def otherwise(self, value: Any) -> Column:
        """The value of a `F.when(...)` chain where no branch holds (NULL without it).

        >>> df.select(F.when(df.age < 3, "young").otherwise("old").alias("band")).collect()
        [Row(band='young'), Row(band='old')]
        """
        e = self.expr
        if not isinstance(e, CaseWhen) or e.else_value is not None:
            raise AnalysisException("otherwise() can only be applied once on a Column built by functions.when()")
        return Column(CaseWhen(e.conditions, e.values, literal_expr(value)))

    def over(self, window: Any) -> Column:
        """This aggregate or window function evaluated per row over `window`, a `WindowSpec`.

        >>> w = Window.orderBy("age")
        >>> df.select("name", F.row_number().over(w).alias("n"), F.sum("age").over(w).alias("running")).collect()
        [Row(name='Alice', n=1, running=2), Row(name='Bob', n=2, running=7)]
        """
        if not isinstance(window, WindowDefinition):
            raise AnalysisException(
                f"over() takes a WindowSpec such as Window.partitionBy('k'), got {type(window).__name__}")
        return Column(builder.window_expression(self.expr, window.partition_by, window.order_by, window.frame))

    def __getattr__(self, item: str) -> Column:
        """`col.field`: a struct's field, as `getField` (names beginning with `__` are Python's).

        >>> spark.sql("SELECT named_struct('a', 1) AS s").select(F.col("s").a).collect()
        [Row(s.a=1)]
        """
        if item.startswith("__"):
            raise AttributeError(item)
        missing = missing_member("Column", item)
        if missing is not None:  # PySpark's method, not a struct field: col["isNaN"] reads a field so named
            raise missing
        return Column(ScalarFunction("get_field", (self.expr, Literal.of(item))))

    def getField(self, name: str) -> Column:
        """A struct's field by name.

        >>> spark.sql("SELECT named_struct('a', 1, 'b', 2) AS s").select(F.col("s").getField("b")).collect()
        [Row(s.b=2)]
        """
        return Column(ScalarFunction("get_field", (self.expr, Literal.of(name))))

    def __getitem__(self, key: Any) -> Column:
        """`col[key]`: a struct's field by name, a map's value by key, or an array's element at a 0-based index.

        >>> spark.sql("SELECT array(10, 20) AS a").select(F.col("a")[1]).collect()
        [Row(a[1]=20)]
        """
        if isinstance(key, str):
            return self.getField(key)
        return Column(ScalarFunction("element_at_index", (self.expr, Literal.of(key))))

    def getItem(self, key: Any) -> Column:
        """An array's element at a 0-based index (null past the end), a map's value by key (named `m[k]`, as Spark),
        or a struct's field by name (named `s.field`).

        >>> spark.sql("SELECT array(10, 20) AS a, map('k', 'v') AS m").select(
        ...     F.col("a").getItem(0), F.col("m").getItem("k")).collect()
        [Row(a[0]=10, m[k]='v')]
        """
        return self[key]

    def __iter__(self) -> Iterable:
        raise TypeError("Column is not iterable")
