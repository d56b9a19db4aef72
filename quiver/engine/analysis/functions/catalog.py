"""The analyzer's function catalog: `FunctionSpec`, the argument kinds, common types, and the registry.

Each scalar function is one `FunctionSpec` in `SCALAR_FUNCTIONS`: arity, implicit casts,
result type and column name. The specs are registered by domain in the modules beside this one
(string, math, datetime, collection, hashes, conditional, generator, aggregate,
row_position), which this package imports, so `lookup` sees every function.

Types follow Spark's non-ANSI implicit casts (a string argument to `sqrt` is cast to
double, an int argument to `upper` to string) and each function's own result rule
(`round(decimal(5,2), 1)` is `decimal(5,1)`). Column names are the ones PySpark prints,
including the defaults Spark fills in (`round(x, 0)`, `regexp_replace(s, a, b, 1)`).
"""
from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from quiver.engine.core import types as T
from quiver.engine.core.errors import AnalysisException
from quiver.engine.core.expressions import Cast, Expr, Literal, use_function_signatures

DataType = T.DataType


@dataclass(frozen=True)
class FunctionSpec:
    """One scalar function as the analyzer sees it."""

    name: str
    min_args: int
    max_args: int | None
    result_type: Callable[[list[DataType]], DataType]
    input_types: Callable[[list[DataType]], list[DataType | None]] | None = None
    pretty: Callable[[list[str]], str] | None = None
    # For the few functions whose type depends on a literal argument's value (round's scale,
    # get_field's name): (types, literal values with NOT_LITERAL for columns) -> type.
    # `result_type` alone then gives a type that holds every possible result.
    literal_result_type: Callable[[list[DataType], list[Any]], DataType] | None = None


NOT_LITERAL = object()


# ---------------------------------------------------------------- argument kinds
# An argument kind maps the argument's type to the type it is implicitly cast to
# (None = leave it), or returns _REJECT. `label` names the valid types in errors.

_REJECT = object()


@dataclass(frozen=True)
class Kind:
    """An argument kind: the implicit cast `target` of each argument type, and the `label` errors show."""

    label: str
    target: Callable[[DataType], object]


def _is_atomic(t: DataType) -> bool:
    return isinstance(t, (T.NumericType, T.StringType, T.BooleanType, T.DateType, T.TimestampType,
                          T.TimestampNTZType, T.BinaryType))


def _string(t: DataType) -> object:
    if isinstance(t, T.StringType):
        return None
    return T.StringType() if isinstance(t, T.NullType) or _is_atomic(t) else _REJECT


def _string_or_binary(t: DataType) -> object:
    return None if isinstance(t, T.BinaryType) else _string(t)


def _binary(t: DataType) -> object:
    if isinstance(t, T.BinaryType):
        return None
    return T.BinaryType() if isinstance(t, (T.StringType, T.NullType)) else _REJECT


def _to(target: DataType, *also: type) -> Callable[[DataType], object]:
    """Cast numerics, strings and nulls (and any `also` types) to `target`."""
    def rule(t: DataType) -> object:
        if t == target:
            return None
        if isinstance(t, (T.NumericType, T.StringType, T.NullType) + also):
            return target
        return _REJECT
    return rule


def _numeric(t: DataType) -> object:
    if isinstance(t, T.NumericType):
        return None
    return T.DoubleType() if isinstance(t, (T.StringType, T.NullType)) else _REJECT


def _fractional(t: DataType) -> object:
    """Double, keeping float as float (isnan, nanvl)."""
    return None if isinstance(t, (T.DoubleType, T.FloatType)) else _to(T.DoubleType())(t)


def _date(t: DataType) -> object:
    if isinstance(t, T.DateType):
        return None
    if isinstance(t, (T.TimestampType, T.TimestampNTZType, T.StringType, T.NullType)):
        return T.DateType()
    return _REJECT


def _timestamp(t: DataType) -> object:
    """An instant, or a wall-clock time (TIMESTAMP_NTZ) as it is: hour() and date_format read either's fields."""
    if isinstance(t, (T.TimestampType, T.TimestampNTZType)):
        return None
    if isinstance(t, (T.DateType, T.StringType, T.NullType)):
        return T.TimestampType()
    return _REJECT


def _datetime_text(t: DataType) -> object:
    """A string to parse, or a date/timestamp taken as it is (to_date, to_timestamp, unix_timestamp)."""
    if isinstance(t, (T.StringType, T.DateType, T.TimestampType, T.TimestampNTZType)):
        return None
    return T.StringType() if isinstance(t, T.NullType) else _REJECT


def _days(t: DataType) -> object:
    if isinstance(t, T.IntegerType):
        return None
    if isinstance(t, (T.ByteType, T.ShortType, T.StringType, T.NullType)):
        return T.IntegerType()
    return _REJECT


def _boolean(t: DataType) -> object:
    if isinstance(t, T.BooleanType):
        return None
    return T.BooleanType() if isinstance(t, T.NullType) else _REJECT


def _collection(t: DataType) -> object:
    return None if isinstance(t, (T.ArrayType, T.MapType, T.NullType)) else _REJECT


def _split_part(t: DataType) -> object:
    """concat_ws takes strings and arrays of strings."""
    if isinstance(t, T.ArrayType):
        return None if isinstance(t.elementType, T.StringType) else T.ArrayType(T.StringType())
    return _string(t)


STRING = Kind("STRING", _string)
STRING_OR_BINARY = Kind("STRING or BINARY", _string_or_binary)
BINARY = Kind("BINARY (or STRING)", _binary)
DOUBLE = Kind("DOUBLE (or any numeric or STRING)", _to(T.DoubleType()))
FRACTIONAL = Kind("DOUBLE or FLOAT", _fractional)
NUMERIC = Kind("NUMERIC", _numeric)
INT = Kind("INT (or any numeric or STRING)", _to(T.IntegerType()))
BIGINT = Kind("BIGINT (or any numeric or STRING)", _to(T.LongType()))
DAYS = Kind("INT, SMALLINT or TINYINT", _days)
DATE = Kind("DATE (or TIMESTAMP or STRING)", _date)
TIMESTAMP = Kind("TIMESTAMP (or DATE or STRING)", _timestamp)
DATETIME_TEXT = Kind("STRING, DATE or TIMESTAMP", _datetime_text)
BOOLEAN = Kind("BOOLEAN", _boolean)
COLLECTION = Kind("ARRAY or MAP", _collection)
STRING_OR_ARRAY = Kind("STRING or ARRAY<STRING>", _split_part)

_ORDINALS = ["first", "second", "third", "fourth", "fifth"]


def _ordinal(i: int) -> str:
    return _ORDINALS[i] if i < len(_ORDINALS) else f"{i + 1}th"


def check_arguments(name: str, kinds: list[Kind], types: list[DataType]) -> list[DataType | None]:
    """The implicit cast of each argument to its kind (None: none needed); an error names the argument."""
    out: list[DataType | None] = []
    for i, (kind, t) in enumerate(zip(kinds, types)):
        target = kind.target(t)
        if target is _REJECT:
            raise AnalysisException(
                f"function {name}: the {_ordinal(i)} argument must be {kind.label}, "
                f"but it is {t.simpleString()}"
            )
        out.append(target)  # type: ignore[arg-type]
    return out


def takes(name: str, *kinds: Kind, rest: Kind | None = None) -> Callable[[list[DataType]], list[DataType | None]]:
    """Fixed kinds for the leading arguments; `rest` for any further (variadic) ones."""
    def rule(types: list[DataType]) -> list[DataType | None]:
        wanted = list(kinds[: len(types)]) + [rest or kinds[-1]] * max(0, len(types) - len(kinds))
        return check_arguments(name, wanted, types)
    return rule


def any_arguments(types: list[DataType]) -> list[DataType | None]:
    """An input rule that takes arguments of any type, uncast (hash, grouping)."""
    return [None] * len(types)


def _coerced(kinds_rule: Callable[[list[DataType]], list[DataType | None]], types: list[DataType]) -> list[DataType]:
    """The argument types after implicit casts (result rules may see uncoerced types)."""
    try:
        targets = kinds_rule(types)
    except AnalysisException:
        return types
    return [t if target is None else target for t, target in zip(types, targets)]


# ---------------------------------------------------------------- common types

def common_type(name: str, types: list[DataType], string_promotion: bool) -> DataType:
    """Spark's wider common type of several arguments (coalesce, greatest, if branches).

    With `string_promotion` (coalesce, nvl, if) a string and an atomic value meet at
    string; without it (greatest, least) they are an error, as in Spark.
    """
    out: DataType = T.NullType()
    for t in types:
        out = _wider(name, out, t, string_promotion, types)
    return out


def _wider(name: str, a: DataType, b: DataType, string_promotion: bool, all_types: list[DataType]) -> DataType:
    if a == b or isinstance(b, T.NullType):
        return a
    if isinstance(a, T.NullType):
        return b
    if isinstance(a, T.NumericType) and isinstance(b, T.NumericType):
        return T.common_numeric_type(a, b)
    datetimes = (T.DateType, T.TimestampType, T.TimestampNTZType)
    if isinstance(a, datetimes) and isinstance(b, datetimes):
        return T.TimestampType()
    if isinstance(a, T.ArrayType) and isinstance(b, T.ArrayType):
        return T.ArrayType(_wider(name, a.elementType, b.elementType, string_promotion, all_types))
    if string_promotion and (isinstance(a, T.StringType) or isinstance(b, T.StringType)):
        other = b if isinstance(a, T.StringType) else a
        if _is_atomic(other) and not isinstance(other, (T.BooleanType, T.BinaryType)):
            return T.StringType()
    raise AnalysisException(
        f"function {name}: arguments must share a type, but they are "
        f"{', '.join(t.simpleString() for t in all_types)}; cast them to one type first"
    )


def to_common_type(name: str, string_promotion: bool,
                   skip: int = 0) -> Callable[[list[DataType]], list[DataType | None]]:
    """Cast every argument after the first `skip` to their common type."""
    def rule(types: list[DataType]) -> list[DataType | None]:
        target = common_type(name, types[skip:], string_promotion)
        if isinstance(target, T.NullType):
            target = T.StringType() if name in ("greatest", "least") else T.NullType()
        return [None] * skip + [None if t == target else target for t in types[skip:]]
    return rule


def common_result_type(name: str, string_promotion: bool, skip: int = 0) -> Callable[[list[DataType]], DataType]:
    """A result rule: the common type of the arguments after the first `skip` (coalesce, greatest)."""
    return lambda types: common_type(name, types[skip:], string_promotion)


# ---------------------------------------------------------------- result rules

def returns(t: DataType) -> Callable[[list[DataType]], DataType]:
    """A result rule: always `t`."""
    return lambda types: t


def same_as_first(types: list[DataType]) -> DataType:
    """A result rule: the first argument's type (nullif, sort_array)."""
    return types[0]


# ---------------------------------------------------------------- pretty names

def shown_as(name: str) -> Callable[[list[str]], str]:
    """`name(a, b)` under a display name that differs from the lookup name (SQRT, POWER)."""
    return lambda args: f"{name}({', '.join(args)})"


def shown_with_defaults(name: str, arity: int, defaults: tuple[str, ...]) -> Callable[[list[str]], str]:
    """`name(...)` padded to `arity` arguments with the trailing `defaults`."""
    def pretty(args: list[str]) -> str:
        missing = arity - len(args)
        shown = list(args) + (list(defaults[len(defaults) - missing:]) if missing > 0 else [])
        return f"{name}({', '.join(shown)})"
    return pretty


# ---------------------------------------------------------------- the catalog

SCALAR_FUNCTIONS: dict[str, FunctionSpec] = {}


def register(name: str, min_args: int, max_args: int | None, result: Callable[[list[DataType]], DataType],
             inputs: Callable[[list[DataType]], list[DataType | None]] | None = None,
             pretty: Callable[[list[str]], str] | None = None,
             literal_result: Callable[[list[DataType], list[Any]], DataType] | None = None) -> None:
    """Add function `name` to the catalog; with an input rule, the result rules see the cast argument types."""
    if inputs is not None:
        raw_result, raw_literal = result, literal_result

        def result(types: list[DataType]) -> DataType:
            return raw_result(_coerced(inputs, types))

        if raw_literal is not None:
            def literal_result(types: list[DataType], literals: list[Any]) -> DataType:
                return raw_literal(_coerced(inputs, types), literals)
    SCALAR_FUNCTIONS[name] = FunctionSpec(name, min_args, max_args, result, inputs, pretty, literal_result)


def unary(names: list[str], kind: Kind, result: DataType | Callable[[list[DataType]], DataType],
          pretty: dict[str, str] | None = None) -> None:
    """Register one-argument functions of one kind and result; `pretty` gives display names (SQRT)."""
    rule = result if callable(result) else returns(result)
    for n in names:
        shown = (pretty or {}).get(n)
        register(n, 1, 1, rule, takes(n, kind), shown_as(shown) if shown else None)


def result_type_of(name: str, args: Sequence[Any]) -> DataType:
    """Result type of `name` applied to expressions `args`, reading the literal arguments some rules need.

    `ScalarFunction.dtype` should call this rather than `spec.result_type`, so that
    round(decimal, 2) and struct.field get their exact types.
    """
    spec = lookup(name)
    types = [a.dtype for a in args]
    if spec.literal_result_type is None:
        return spec.result_type(types)
    return spec.literal_result_type(types, [literal_value(a) for a in args])


def literal_value(expr: Any) -> Any:
    """The Python value of a literal argument (through implicit casts), else NOT_LITERAL."""
    while isinstance(expr, Cast):
        expr = expr.child
    return expr.value if isinstance(expr, Literal) else NOT_LITERAL


def lookup(name: str) -> FunctionSpec:
    """The spec of scalar function `name` (case-insensitive); unknown names suggest close ones."""
    spec = SCALAR_FUNCTIONS.get(name.lower())
    if spec is not None:
        return spec
    close = difflib.get_close_matches(name.lower(), SCALAR_FUNCTIONS, n=3, cutoff=0.6)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise AnalysisException(f"undefined function '{name}'.{hint} Scalar functions are: "
                            f"{', '.join(sorted(SCALAR_FUNCTIONS))}")


class CatalogSignatures:
    """The catalog as `core.expressions.FunctionSignatures`: what ScalarFunction.dtype and .sql() ask."""

    def result_type(self, name: str, args: Sequence[Expr]) -> DataType:
        """`result_type_of`, for the expression layer."""
        return result_type_of(name, args)

    def shown(self, name: str, args: list[str]) -> str | None:
        """The function's `pretty` form of its argument texts, where it has one."""
        spec = SCALAR_FUNCTIONS.get(name)
        return spec.pretty(args) if spec is not None and spec.pretty is not None else None


use_function_signatures(CatalogSignatures())
