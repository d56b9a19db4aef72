"""Immutable expression trees: what a Column holds before and after analysis.

Unresolved nodes (`UnresolvedColumn`, `UnresolvedStar`) name columns by text; the analyzer
replaces them with `AttributeRef`s that carry a unique id, a type and nullability, so two
columns called `id` on the two sides of a self-join stay distinct.
"""
from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Protocol

from quiver.engine.core import types as T
from quiver.engine.core.errors import AnalysisException, QuiverError
from quiver.engine.core.tree import TreeNode

_ids = itertools.count(1)


def new_expr_id() -> int:
    """A process-wide unique id for a new attribute (like Catalyst's ExprId)."""
    return next(_ids)


@dataclass(frozen=True, eq=False)
class Expr(TreeNode["Expr"]):
    """Base of all expressions; subclasses are frozen dataclasses compared by value."""

    folded: bool = field(default=False, init=False, compare=False, hash=False, repr=False)
    """True once constant folding found nothing left to fold in this expression, so the optimizer's
    later passes over the same tree skip it. A memo: any rebuilt expression starts without it, as a
    changed one (an attribute replaced by a literal) may fold further."""

    @cached_property
    def resolved(self) -> bool:
        return all(c.resolved for c in self.children())

    @cached_property
    def has_subquery(self) -> bool:
        """Whether a subquery expression is in this tree; the optimizer asks it of every expression in every pass."""
        return any(c.has_subquery for c in self.children())

    @property
    def dtype(self) -> T.DataType:
        raise AnalysisException(f"expression {self.sql()} has no type before analysis")

    @property
    def nullable(self) -> bool:
        return any(c.nullable for c in self.children())

    @property
    def deterministic(self) -> bool:
        return all(c.deterministic for c in self.children())

    def sql(self) -> str:
        """The text Spark shows for this expression; also the default column name."""
        raise NotImplementedError(type(self).__name__)

    def __str__(self) -> str:
        return self.sql()

    def references(self) -> frozenset[int]:
        """Ids of the attributes this expression reads."""
        return frozenset(a.expr_id for a in self.walk() if isinstance(a, AttributeRef))


def transform_expr(expr: Expr, fn: Callable[[Expr], Expr]) -> Expr:
    """Rebuild `expr` bottom-up, applying `fn` to every node after its children."""
    return expr.transform_up(fn)


def transform_expr_down(expr: Expr, fn: Callable[[Expr], Expr]) -> Expr:
    """Apply `fn` top-down; children of the node `fn` returns are visited next."""
    return expr.transform_down(fn)


# ---------------------------------------------------------------- leaves


@dataclass(frozen=True)
class UnresolvedColumn(Expr):
    """A column named by text: `"age"`, `"d.grp"` (qualified) or `` "`a.b`" `` (quoted)."""

    parts: tuple[str, ...]

    @property
    def resolved(self) -> bool:
        return False

    @property
    def nullable(self) -> bool:
        return True

    def sql(self) -> str:
        return self.parts[-1]

    @staticmethod
    def parse(name: str) -> UnresolvedColumn:
        return UnresolvedColumn(tuple(split_name(name)))


def split_name(name: str) -> list[str]:
    """Split `a.b` into parts, honouring backquotes: `` `a.b`.c `` -> ['a.b', 'c']."""
    parts, cur, quoted, i = [], "", False, 0
    while i < len(name):
        ch = name[i]
        if ch == "`":
            if quoted and i + 1 < len(name) and name[i + 1] == "`":
                cur += "`"
                i += 2
                continue
            quoted = not quoted
        elif ch == "." and not quoted:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
        i += 1
    parts.append(cur)
    return parts


@dataclass(frozen=True)
class UnresolvedStar(Expr):
    """`*` or `d.*` in a select list; expanded by the analyzer."""

    qualifier: str | None = None

    @property
    def resolved(self) -> bool:
        return False

    def sql(self) -> str:
        return f"{self.qualifier}.*" if self.qualifier else "*"


@dataclass(frozen=True)
class ColumnOrigin:
    """Where a column taken from a DataFrame came from: the DataFrame's plan id and the column's position in
    its output (Spark Connect's plan id and Spark's column position)."""

    plan_id: int
    position: int


@dataclass(frozen=True)
class AttributeRef(Expr):
    """A resolved column: a name, a type and the id that makes it unique within a plan."""

    name: str
    data_type: T.DataType = field(compare=True)
    is_nullable: bool = True
    expr_id: int = 0
    qualifier: tuple[str, ...] = ()
    origin: ColumnOrigin | None = field(default=None, compare=False, hash=False, repr=False, kw_only=True)
    """An annotation: the DataFrame this column was taken from (`df.v`, `df["v"]`, `df[1]`), until the
    analyzer has resolved it against the plan it is used in; None for every resolved attribute."""

    @property
    def resolved(self) -> bool:
        return True

    @property
    def dtype(self) -> T.DataType:
        return self.data_type

    @property
    def nullable(self) -> bool:
        return self.is_nullable

    def sql(self) -> str:
        return self.name

    @property
    def internal_name(self) -> str:
        """The column name this attribute has inside Arrow batches: its id only, so renaming costs nothing."""
        return f"#{self.expr_id}"

    @property
    def display_name(self) -> str:
        """`name#id`, as explain() shows attributes."""
        return f"{self.name}#{self.expr_id}"

    def with_qualifier(self, qualifier: tuple[str, ...]) -> AttributeRef:
        return replace(self, qualifier=qualifier)

    def with_nullability(self, nullable: bool) -> AttributeRef:
        return replace(self, is_nullable=nullable)


@dataclass(frozen=True)
class Literal(Expr):
    """A constant with a Spark type.

    A TIMESTAMP's value is a naive datetime in UTC; `wall_clock` marks one written as a wall-clock time (`TIMESTAMP
    '2024-01-31 10:00'` in SQL, a naive Python datetime), which the analyzer turns into the instant it is in the
    session time zone (analysis/time_zones.py).
    """

    value: Any
    data_type: T.DataType
    wall_clock: bool = False

    @property
    def resolved(self) -> bool:
        return True

    @property
    def dtype(self) -> T.DataType:
        return self.data_type

    @property
    def nullable(self) -> bool:
        return self.value is None

    def sql(self) -> str:
        v = self.value
        if v is None:
            return "NULL"
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, float):
            return format_double(v)
        if isinstance(self.data_type, T.DateType):
            return f"DATE '{v.isoformat()}'"
        if isinstance(self.data_type, T.TimestampType):
            return f"TIMESTAMP '{v.isoformat(sep=' ')}'"
        if isinstance(v, (list, tuple)) and isinstance(self.data_type, T.ArrayType):
            element = self.data_type.elementType
            return f"array({', '.join(Literal(x, element).sql() for x in v)})"
        return str(v)

    @staticmethod
    def of(value: Any) -> Literal:
        return Literal(value, infer_literal_type(value))

    def __hash__(self) -> int:
        # array, map and struct literals hold lists and dicts, which do not hash
        try:
            return hash((self.value, self.data_type))
        except TypeError:
            return hash((repr(self.value), self.data_type))


def format_double(v: float) -> str:
    """Java's Double.toString, which Spark uses to print doubles (1.0, 1.0E20, 1.0E-4)."""
    if v != v:
        return "NaN"
    if v in (float("inf"), float("-inf")):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0:
        return "-0.0" if str(v).startswith("-") else "0.0"
    if abs(v) == 5e-324:
        return "-4.9E-324" if v < 0 else "4.9E-324"  # Java prints the smallest subnormal with two digits
    text = repr(v)
    if 1e-3 <= abs(v) < 1e7:
        return text if "." in text else text + ".0"
    sign, digits, exponent = _decimal.Decimal(text).as_tuple()
    assert isinstance(exponent, int)  # v is finite: NaN and the infinities returned above
    sci_exp = len(digits) + exponent - 1
    tail = "".join(map(str, digits[1:])).rstrip("0") or "0"
    return f"{'-' if sign else ''}{digits[0]}.{tail}E{sci_exp}"


def infer_literal_type(value: Any) -> T.DataType:
    """Spark's type for a Python literal: int -> int (bigint if it does not fit), float -> double."""
    if value is None:
        return T.NullType()
    if isinstance(value, bool):
        return T.BooleanType()
    if isinstance(value, int):
        return T.IntegerType() if -(2**31) <= value < 2**31 else T.LongType()
    if isinstance(value, float):
        return T.DoubleType()
    if isinstance(value, str):
        return T.StringType()
    if isinstance(value, _dt.datetime):
        return T.TimestampType()
    if isinstance(value, _dt.date):
        return T.DateType()
    if isinstance(value, _decimal.Decimal):
        t = value.as_tuple()
        scale = max(0, -t.exponent) if isinstance(t.exponent, int) else 0
        precision = max(len(t.digits), scale, 1)
        return T.DecimalType(precision, scale)
    if isinstance(value, (bytes, bytearray)):
        return T.BinaryType()
    if isinstance(value, (list, tuple)):
        elems = [infer_literal_type(v) for v in value if v is not None]
        return T.ArrayType(elems[0] if elems else T.NullType())
    raise AnalysisException(
        f"unsupported literal {value!r} of type {type(value).__name__}; "
        "valid literals are None, bool, int, float, str, date, datetime, Decimal, bytes and lists of those"
    )


# ---------------------------------------------------------------- naming


@dataclass(frozen=True)
class Alias(Expr):
    """`expr AS name`: gives a computed column its name and attribute id."""

    child: Expr
    name: str
    expr_id: int = field(default_factory=new_expr_id)

    @property
    def dtype(self) -> T.DataType:
        return self.child.dtype

    def sql(self) -> str:
        return self.name

    def to_attribute(self) -> AttributeRef:
        return AttributeRef(self.name, self.child.dtype, self.child.nullable, self.expr_id)


# ---------------------------------------------------------------- operators


ARITHMETIC_OPS = ("+", "-", "*", "/", "%")
COMPARISON_OPS = ("=", "<", "<=", ">", ">=", "<=>")


@dataclass(frozen=True)
class BinaryArithmetic(Expr):
    """`left op right` with Spark's result types; `/` is always fractional division. `is_try` is try_add,
    try_subtract, try_multiply, try_divide or try_mod: NULL where the plain operator under ANSI mode raises
    (overflow, a zero divisor)."""

    op: str
    left: Expr
    right: Expr
    is_try: bool = False

    @cached_property
    def dtype(self) -> T.DataType:
        lt, rt = self.left.dtype, self.right.dtype
        if self.op == "/":
            if isinstance(lt, T.DecimalType) and isinstance(rt, T.DecimalType):
                return decimal_divide_type(lt, rt)
            return T.DoubleType()
        if isinstance(lt, T.DecimalType) and isinstance(rt, T.DecimalType):
            return decimal_arithmetic_type(self.op, lt, rt)
        return T.common_numeric_type(lt, rt)

    @property
    def nullable(self) -> bool:
        return self.is_try or self.op in ("/", "%") or self.left.nullable or self.right.nullable

    def sql(self) -> str:
        if self.is_try:
            return f"{TRY_ARITHMETIC_NAMES[self.op]}({self.left.sql()}, {self.right.sql()})"
        return f"({self.left.sql()} {self.op} {self.right.sql()})"


# The try_* function of each operator: NULL where the operator under ANSI mode raises.
TRY_ARITHMETIC_NAMES = {"+": "try_add", "-": "try_subtract", "*": "try_multiply", "/": "try_divide", "%": "try_mod"}


def decimal_arithmetic_type(op: str, a: T.DecimalType, b: T.DecimalType) -> T.DecimalType:
    """Spark's result precision and scale for decimal +, -, *, % (bounded to 38 as Spark does)."""
    p1, s1, p2, s2 = a.precision, a.scale, b.precision, b.scale
    if op in ("+", "-"):
        scale = max(s1, s2)
        precision = max(p1 - s1, p2 - s2) + scale + 1
    elif op == "*":
        precision, scale = p1 + p2 + 1, s1 + s2
    else:
        scale = max(s1, s2)
        precision = min(p1 - s1, p2 - s2) + scale
    return _bounded_decimal(precision, scale)


def decimal_divide_type(a: T.DecimalType, b: T.DecimalType) -> T.DecimalType:
    """Spark's result type of decimal division."""
    p1, s1, p2, s2 = a.precision, a.scale, b.precision, b.scale
    scale = max(6, s1 + p2 + 1)
    precision = p1 - s1 + s2 + scale
    return _bounded_decimal(precision, scale)


def _bounded_decimal(precision: int, scale: int) -> T.DecimalType:
    if precision <= 38:
        return T.DecimalType(precision, scale)
    int_digits = precision - scale
    min_scale = min(scale, 6)
    scale = max(38 - int_digits, min_scale)
    return T.DecimalType(38, scale)


@dataclass(frozen=True)
class Negate(Expr):
    """Unary minus; SQL text `-x` is shown as `(- x)`, the DataFrame's `-col` as `negative(x)`, as Spark does."""

    child: Expr
    sql_operator: bool = False

    @property
    def dtype(self) -> T.DataType:
        return self.child.dtype

    def sql(self) -> str:
        if self.sql_operator:
            return f"(- {self.child.sql()})"
        return f"negative({self.child.sql()})"


@dataclass(frozen=True)
class Comparison(Expr):
    """`left op right`; null when either side is null, except `<=>` (null-safe equality)."""

    op: str
    left: Expr
    right: Expr

    @property
    def dtype(self) -> T.DataType:
        return T.BooleanType()

    @property
    def nullable(self) -> bool:
        return self.op != "<=>" and (self.left.nullable or self.right.nullable)

    def sql(self) -> str:
        return f"({self.left.sql()} {self.op} {self.right.sql()})"


@dataclass(frozen=True)
class And(Expr):
    left: Expr
    right: Expr

    @property
    def dtype(self) -> T.DataType:
        return T.BooleanType()

    def sql(self) -> str:
        return f"({self.left.sql()} AND {self.right.sql()})"


@dataclass(frozen=True)
class Or(Expr):
    left: Expr
    right: Expr

    @property
    def dtype(self) -> T.DataType:
        return T.BooleanType()

    def sql(self) -> str:
        return f"({self.left.sql()} OR {self.right.sql()})"


@dataclass(frozen=True)
class Not(Expr):
    child: Expr

    @property
    def dtype(self) -> T.DataType:
        return T.BooleanType()

    def sql(self) -> str:
        return f"(NOT {self.child.sql()})"


@dataclass(frozen=True)
class IsNull(Expr):
    child: Expr

    @property
    def dtype(self) -> T.DataType:
        return T.BooleanType()

    @property
    def nullable(self) -> bool:
        return False

    def sql(self) -> str:
        return f"({self.child.sql()} IS NULL)"


@dataclass(frozen=True)
class IsNotNull(Expr):
    child: Expr

    @property
    def dtype(self) -> T.DataType:
        return T.BooleanType()

    @property
    def nullable(self) -> bool:
        return False

    def sql(self) -> str:
        return f"({self.child.sql()} IS NOT NULL)"


@dataclass(frozen=True)
class In(Expr):
    """`child IN (values...)` with SQL's three-valued logic."""

    child: Expr
    values: tuple[Expr, ...]

    @property
    def dtype(self) -> T.DataType:
        return T.BooleanType()

    def sql(self) -> str:
        return f"({self.child.sql()} IN ({', '.join(v.sql() for v in self.values)}))"


@dataclass(frozen=True)
class Cast(Expr):
    """CAST(child AS to); `is_try` is TRY_CAST, which gives NULL where CAST under ANSI mode raises.

    `time_zone` is the session's, bound by the analyzer (analysis/time_zones.py) where the cast crosses between
    an instant (TIMESTAMP) and a wall-clock time (a string, DATE, TIMESTAMP_NTZ); None is UTC.
    """

    child: Expr
    to: T.DataType
    is_try: bool = False
    time_zone: str | None = None

    @property
    def dtype(self) -> T.DataType:
        return self.to

    @property
    def nullable(self) -> bool:
        return self.child.nullable or _cast_can_make_null(self.child.dtype, self.to)

    def sql(self) -> str:
        return f"{'TRY_CAST' if self.is_try else 'CAST'}({self.child.sql()} AS {self.to.simpleString().upper()})"


def _cast_can_make_null(source: T.DataType, target: T.DataType) -> bool:
    """Casts that turn some non-null values into null (unparseable strings, overflowing numbers)."""
    if isinstance(source, T.StringType):
        return not isinstance(target, (T.StringType, T.BinaryType))
    if isinstance(target, T.DecimalType) or isinstance(source, T.DecimalType) and isinstance(target, T.IntegralType):
        return True
    if isinstance(source, T.FractionalType) and isinstance(target, T.IntegralType):
        return True
    if isinstance(source, T.IntegralType) and isinstance(target, T.IntegralType):
        return T.common_numeric_type(source, target) != target
    return isinstance(target, (T.DateType, T.TimestampType)) and not isinstance(source, (T.DateType, T.TimestampType))


@dataclass(frozen=True)
class CaseWhen(Expr):
    """`CASE WHEN c1 THEN v1 ... ELSE e END`; a missing ELSE is NULL."""

    conditions: tuple[Expr, ...]
    values: tuple[Expr, ...]
    else_value: Expr | None = None

    @cached_property
    def dtype(self) -> T.DataType:
        types = [v.dtype for v in self.values]
        if self.else_value is not None:
            types.append(self.else_value.dtype)
        return wider_type_of(types, "CASE WHEN branches")

    @property
    def nullable(self) -> bool:
        return self.else_value is None or any(v.nullable for v in self.values) or self.else_value.nullable

    def sql(self) -> str:
        parts = ["CASE"]
        for c, v in zip(self.conditions, self.values):
            parts.append(f"WHEN {c.sql()} THEN {v.sql()}")
        if self.else_value is not None:
            parts.append(f"ELSE {self.else_value.sql()}")
        parts.append("END")
        return " ".join(parts)


class FunctionSignatures(Protocol):
    """What an expression needs to know of the scalar functions: a call's result type and how it is shown.

    The analysis layer owns the signatures (engine/analysis/functions/) and registers them with
    `use_function_signatures` when it is imported, so expressions stay below the analyzer.
    """

    def result_type(self, name: str, args: Sequence[Expr]) -> T.DataType:
        """The type of `name(args)`; AnalysisException for an unknown function or a wrong argument."""
        ...

    def shown(self, name: str, args: list[str]) -> str | None:
        """How Spark writes `name(args)` in a column name, where it differs from `name(a, b)`."""
        ...


_signatures: list[FunctionSignatures] = []


def use_function_signatures(signatures: FunctionSignatures) -> None:
    """Make `signatures` the one every ScalarFunction asks (called once, by engine/analysis/functions)."""
    _signatures[:] = [signatures]


def function_signatures() -> FunctionSignatures:
    """The registered signatures; a QuiverError if the analysis layer was never imported."""
    if not _signatures:
        raise QuiverError("no function signatures are registered: import quiver (or quiver.engine.analysis) first")
    return _signatures[0]


@dataclass(frozen=True)
class ScalarFunction(Expr):
    """A named scalar function from the function catalog, e.g. `upper(name)`."""

    name: str
    args: tuple[Expr, ...] = ()

    @cached_property
    def dtype(self) -> T.DataType:
        return function_signatures().result_type(self.name, self.args)

    @property
    def nullable(self) -> bool:
        if self.name in ("coalesce", "ifnull", "nvl"):
            return all(a.nullable for a in self.args)
        # size is null for a null collection under ANSI mode (Spark's sizeOfNull is off there), so it follows its input.
        if self.name in ("concat_ws", "isnull", "isnan", "isnotnull", "current_date", "current_timestamp"):
            return False
        if self.name in NULL_PRODUCING_FUNCTIONS:
            return True
        return any(a.nullable for a in self.args)

    @property
    def deterministic(self) -> bool:
        return self.name not in NONDETERMINISTIC_FUNCTIONS and super().deterministic

    def sql(self) -> str:
        args = [a.sql() for a in self.args]
        if self.name == "get_field" and len(args) == 2 and self.args[0].resolved \
                and isinstance(self.args[0].dtype, T.MapType):
            # A map's value by key is shown m[key], a struct's field s.field (Spark's GetMapValue, GetStructField).
            return f"{args[0]}[{args[1]}]"
        shown = function_signatures().shown(self.name, args)
        return shown if shown is not None else f"{self.name}({', '.join(args)})"


# How an executor calls a PythonUDF (its `kind`): once per row, once per batch on pandas Series, or compiled.
ROW_UDF, PANDAS_UDF, PANDAS_ITER_UDF, NUMBA_UDF = "row", "pandas", "pandas_iter", "numba"


@dataclass(frozen=True)
class PythonUDF(Expr):
    """A call of a user-defined function (`F.udf`, `F.pandas_udf`, `quiver.udf(..., engine="numba")`).

    `function` is the `UserDefinedFunction` (quiver/engine/api/udf.py) holding the code and, for numba, its
    compiled kernels; `kind` says how an executor calls it: once per row ("row"), once per batch on
    pandas Series ("pandas", "pandas_iter"), or compiled over whole columns ("numba"). User code
    runs in tasks only: constant folding never evaluates a UDF, and a nondeterministic one
    (`asNondeterministic()`) is never moved by the optimizer.
    """

    name: str
    function: Any
    return_type: T.DataType
    args: tuple[Expr, ...] = ()
    kind: str = "row"
    is_deterministic: bool = True

    @property
    def dtype(self) -> T.DataType:
        return self.return_type

    @property
    def nullable(self) -> bool:
        return True

    @property
    def deterministic(self) -> bool:
        return self.is_deterministic and super().deterministic

    def sql(self) -> str:
        return f"{self.name}({', '.join(a.sql() for a in self.args)})"


# Functions that can return null for non-null input (unparseable dates, log of a negative, ...).
NULL_PRODUCING_FUNCTIONS = frozenset({
    "to_date", "to_timestamp", "unix_timestamp", "from_unixtime", "date_format", "nullif", "element_at",
    "element_at_index", "get_field", "log", "ln", "log10", "log2", "log1p", "try_divide", "from_json",
    "make_date", "next_day", "nvl2", "if", "months_between", "add_months", "trunc", "date_trunc",
    "get_json_object", "regexp_extract", "nanvl", "greatest", "least", "split_part", "try_cast", "parse_url",
    "try_element_at", "get", "array_max", "array_min", "arrays_overlap",
})

# The aggregate functions a window frame evaluates (executors/cpu/window.py); the analyzer refuses others.
WINDOW_AGGREGATES = ("count", "sum", "avg", "min", "max", "first", "last", "any_value")

NONDETERMINISTIC_FUNCTIONS = frozenset({"rand", "random", "randn", "uuid", "monotonically_increasing_id",
                                        "spark_partition_id"})


AGGREGATE_FUNCTIONS = (
    "count", "sum", "avg", "min", "max", "first", "last", "stddev", "stddev_samp", "stddev_pop",
    "variance", "var_samp", "var_pop", "collect_list", "collect_set", "count_distinct", "any_value",
    "sum_distinct", "bool_and", "bool_or", "product", "median",
)


@dataclass(frozen=True)
class AggregateFunction(Expr):
    """An aggregate such as `sum(x)`, `count(DISTINCT x)` or `first(x, ignorenulls)`. `is_try` is try_sum or
    try_avg: NULL where the total overflows, in either ANSI mode."""

    name: str
    args: tuple[Expr, ...] = ()
    distinct: bool = False
    ignore_nulls: bool = False
    display: str | None = None
    is_try: bool = False

    @cached_property
    def dtype(self) -> T.DataType:
        return aggregate_result_type(self.name, [a.dtype for a in self.args])

    @property
    def nullable(self) -> bool:
        return self.name not in ("count", "collect_list", "collect_set")

    def sql(self) -> str:
        name = self.display or self.name
        if self.name == "count" and not self.args:
            return "count(1)"
        inner = ", ".join(a.sql() for a in self.args)
        if self.distinct and self.display is None:
            inner = "DISTINCT " + inner
        return f"{name}({inner})"


def aggregate_result_type(name: str, args: list[T.DataType]) -> T.DataType:
    """Spark's result type of an aggregate over arguments of the given types."""
    if name in ("count", "count_distinct"):
        return T.LongType()
    arg = args[0] if args else T.NullType()
    if name in ("sum", "sum_distinct"):
        if isinstance(arg, T.DecimalType):
            return T.DecimalType(min(38, arg.precision + 10), arg.scale)
        if isinstance(arg, T.IntegralType):
            return T.LongType()
        if isinstance(arg, (T.NumericType, T.NullType)):
            return T.DoubleType()
        if isinstance(arg, T.StringType):
            return T.DoubleType()
        raise AnalysisException(f"sum() needs a numeric column, got {arg.simpleString()}")
    if name == "avg":
        if isinstance(arg, T.DecimalType):
            return _bounded_decimal(arg.precision + 4, arg.scale + 4)
        if isinstance(arg, (T.NumericType, T.NullType, T.StringType)):
            return T.DoubleType()
        raise AnalysisException(f"avg() needs a numeric column, got {arg.simpleString()}")
    if name in ("stddev", "stddev_samp", "stddev_pop", "variance", "var_samp", "var_pop", "median", "product"):
        if not isinstance(arg, (T.NumericType, T.NullType, T.StringType)):
            raise AnalysisException(f"{name}() needs a numeric column, got {arg.simpleString()}")
        return T.DoubleType()
    if name in ("min", "max", "first", "last", "any_value"):
        return arg
    if name in ("collect_list", "collect_set"):
        return T.ArrayType(arg, False)
    if name in ("bool_and", "bool_or"):
        return T.BooleanType()
    raise AnalysisException(f"unknown aggregate function '{name}'; known: {', '.join(AGGREGATE_FUNCTIONS)}")


@dataclass(frozen=True)
class SortOrder(Expr):
    """A sort key with direction and null placement (Spark: nulls first when ascending)."""

    child: Expr
    ascending: bool = True
    nulls_first: bool | None = None

    @property
    def effective_nulls_first(self) -> bool:
        return self.ascending if self.nulls_first is None else self.nulls_first

    @property
    def dtype(self) -> T.DataType:
        return self.child.dtype

    def sql(self) -> str:
        direction = "ASC" if self.ascending else "DESC"
        nulls = "NULLS FIRST" if self.effective_nulls_first else "NULLS LAST"
        return f"{self.child.sql()} {direction} {nulls}"


def wider_type_of(types: list[T.DataType], what: str) -> T.DataType:
    """The common type of several values (CASE branches, union columns, coalesce args)."""
    out: T.DataType = T.NullType()
    for t in types:
        out = wider_type(out, t, what)
    return out


def wider_type(a: T.DataType, b: T.DataType, what: str = "values") -> T.DataType:
    """Spark's wider common type of two types, or an AnalysisException naming both."""
    if a == b:
        return a
    if isinstance(a, T.NullType):
        return b
    if isinstance(b, T.NullType):
        return a
    if isinstance(a, T.NumericType) and isinstance(b, T.NumericType):
        return T.common_numeric_type(a, b)
    if isinstance(a, T.StringType) or isinstance(b, T.StringType):
        return T.StringType()
    if {type(a), type(b)} == {T.DateType, T.TimestampType}:
        return T.TimestampType()
    if isinstance(a, T.ArrayType) and isinstance(b, T.ArrayType):
        return T.ArrayType(wider_type(a.elementType, b.elementType, what))
    raise AnalysisException(
        f"cannot find a common type for {what}: {a.simpleString()} and {b.simpleString()}"
    )


def strip_alias(e: Expr) -> Expr:
    while isinstance(e, Alias):
        e = e.child
    return e


def contains_aggregate(e: Expr) -> bool:
    """True if `e` has an aggregate outside any window expression (which aggregates per row)."""
    if isinstance(e, AggregateFunction):
        return True
    if isinstance(e, WindowExpression):
        return False
    return any(contains_aggregate(c) for c in e.children())


def contains_window(e: Expr) -> bool:
    return any(isinstance(x, WindowExpression) for x in e.walk())


WINDOW_FUNCTIONS = ("row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead",
                    "nth_value")
RANKING_FUNCTIONS = ("row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile")
# Window functions that read the window's frame, as aggregates do (default: RANGE UNBOUNDED..CURRENT ROW).
FRAMED_WINDOW_FUNCTIONS = ("nth_value",)


@dataclass(frozen=True)
class WindowFunction(Expr):
    """A function defined only over a window: row_number(), rank(), lag(x, 1, default), nth_value(x, n), ..."""

    name: str
    args: tuple[Expr, ...] = ()
    ignore_nulls: bool = False

    @cached_property
    def dtype(self) -> T.DataType:
        if self.name in ("row_number", "rank", "dense_rank", "ntile"):
            return T.IntegerType()
        if self.name in ("percent_rank", "cume_dist"):
            return T.DoubleType()
        return self.args[0].dtype

    @property
    def nullable(self) -> bool:
        return self.name in ("lag", "lead", "nth_value")

    def sql(self) -> str:
        name = self.name.upper() if self.name in _UPPER_CASE_WINDOW_FUNCTIONS else self.name
        return f"{name}({', '.join(a.sql() for a in self.args)}){' ignore nulls' if self.ignore_nulls else ''}"


# Spark shows these three in upper case in column names (RANK() OVER ...), the others as written.
_UPPER_CASE_WINDOW_FUNCTIONS = frozenset({"rank", "dense_rank", "percent_rank"})


@dataclass(frozen=True)
class WindowExpression(Expr):
    """`function OVER (PARTITION BY ... ORDER BY ... frame)`; frame is (kind, start, end) or None for the default."""

    function: Expr
    partition_by: tuple[Expr, ...] = ()
    order_by: tuple[Expr, ...] = ()
    frame: tuple[str, int, int] | None = None

    @property
    def dtype(self) -> T.DataType:
        return self.function.dtype

    @property
    def nullable(self) -> bool:
        return self.function.nullable

    @property
    def effective_frame(self) -> tuple[str, int, int]:
        """Spark's default: whole partition without ORDER BY, else RANGE UNBOUNDED PRECEDING..CURRENT ROW."""
        if self.frame is not None:
            return self.frame
        if self.order_by:
            return ("range", UNBOUNDED, 0)
        return ("rows", UNBOUNDED, -UNBOUNDED)

    def sql(self) -> str:
        parts = []
        kind, lo, hi = self._display_frame()
        if self.partition_by:
            parts.append("PARTITION BY " + ", ".join(p.sql() for p in self.partition_by))
        if self.order_by:
            parts.append("ORDER BY " + ", ".join(o.sql() for o in self.order_by))
        parts.append(f"{kind.upper()} BETWEEN {_bound_sql(lo)} AND {_bound_sql(hi)}")
        return f"{self.function.sql()} OVER ({' '.join(parts)})"


    def _display_frame(self) -> tuple[str, int, int]:
        """The frame Spark prints: ranking functions run over ROWS up to the current row (cume_dist over
        RANGE), lag/lead over one row."""
        f = self.function
        if self.frame is None and isinstance(f, WindowFunction) and f.name not in FRAMED_WINDOW_FUNCTIONS:
            if f.name in ("lag", "lead"):
                offset = int(f.args[1].value) if isinstance(f.args[1], Literal) else 1
                k = -offset if f.name == "lag" else offset
                return ("rows", k, k)
            return ("range" if f.name == "cume_dist" else "rows", UNBOUNDED, 0)
        return self.effective_frame


UNBOUNDED = -(1 << 63)


def _bound_sql(v: int) -> str:
    if v <= UNBOUNDED:
        return "UNBOUNDED PRECEDING"
    if v >= -UNBOUNDED - 1:
        return "UNBOUNDED FOLLOWING"
    if v == 0:
        return "CURRENT ROW"
    return f"{v} FOLLOWING"


def output_name(e: Expr) -> str:
    """The column name Spark gives a select-list expression (a cast column keeps its name, as in Spark 4)."""
    if isinstance(e, (Alias, AttributeRef)):
        return e.name
    if isinstance(e, Cast) and isinstance(e.child, (AttributeRef, UnresolvedColumn)):
        return e.child.sql()
    return e.sql()


def split_conjuncts(e: Expr | None) -> list[Expr]:
    """`a AND b AND c` -> [a, b, c]; None -> []."""
    if e is None:
        return []
    if isinstance(e, And):
        return split_conjuncts(e.left) + split_conjuncts(e.right)
    return [e]


def conjoin(parts: list[Expr]) -> Expr | None:
    """[a, b, c] -> `a AND b AND c`; [] -> None."""
    out: Expr | None = None
    for p in parts:
        out = p if out is None else And(out, p)
    return out


def substitute_attributes(e: Expr, mapping: dict[int, Expr]) -> Expr:
    """Replace attributes by id with the given expressions (e.g. a projection's definitions)."""
    return transform_expr(e, lambda x: mapping.get(x.expr_id, x) if isinstance(x, AttributeRef) else x)
