"""The analyzer's view of each scalar function: arity, implicit casts, result type, column name.

Types follow Spark's non-ANSI implicit casts (a string argument to `sqrt` is cast to
double, an int argument to `upper` to string) and each function's own result rule
(`round(decimal(5,2), 1)` is `decimal(5,1)`). Column names are the ones PySpark prints,
including the defaults Spark fills in (`round(x, 0)`, `regexp_replace(s, a, b, 1)`).
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from quiver.engine.core import types as T
from quiver.engine.core.errors import AnalysisException

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
    # get_field's name): (types, literal values with _NOT_LITERAL for columns) -> type.
    # `result_type` alone then gives a type that holds every possible result.
    literal_result_type: Callable[[list[DataType], list[Any]], DataType] | None = None


NOT_LITERAL = object()


# ---------------------------------------------------------------- argument kinds
# An argument kind maps the argument's type to the type it is implicitly cast to
# (None = leave it), or returns _REJECT. `label` names the valid types in errors.

_REJECT = object()


@dataclass(frozen=True)
class _Kind:
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
    if isinstance(t, T.TimestampType):
        return None
    if isinstance(t, (T.DateType, T.StringType, T.NullType, T.TimestampNTZType)):
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


STRING = _Kind("STRING", _string)
STRING_OR_BINARY = _Kind("STRING or BINARY", _string_or_binary)
BINARY = _Kind("BINARY (or STRING)", _binary)
DOUBLE = _Kind("DOUBLE (or any numeric or STRING)", _to(T.DoubleType()))
FRACTIONAL = _Kind("DOUBLE or FLOAT", _fractional)
NUMERIC = _Kind("NUMERIC", _numeric)
INT = _Kind("INT (or any numeric or STRING)", _to(T.IntegerType()))
BIGINT = _Kind("BIGINT (or any numeric or STRING)", _to(T.LongType()))
DAYS = _Kind("INT, SMALLINT or TINYINT", _days)
DATE = _Kind("DATE (or TIMESTAMP or STRING)", _date)
TIMESTAMP = _Kind("TIMESTAMP (or DATE or STRING)", _timestamp)
DATETIME_TEXT = _Kind("STRING, DATE or TIMESTAMP", _datetime_text)
BOOLEAN = _Kind("BOOLEAN", _boolean)
COLLECTION = _Kind("ARRAY or MAP", _collection)
STRING_OR_ARRAY = _Kind("STRING or ARRAY<STRING>", _split_part)

_ORDINALS = ["first", "second", "third", "fourth", "fifth"]


def _ordinal(i: int) -> str:
    return _ORDINALS[i] if i < len(_ORDINALS) else f"{i + 1}th"


def _check(name: str, kinds: list[_Kind], types: list[DataType]) -> list[DataType | None]:
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


def _inputs(name: str, *kinds: _Kind, rest: _Kind | None = None) -> Callable[[list[DataType]], list[DataType | None]]:
    """Fixed kinds for the leading arguments; `rest` for any further (variadic) ones."""
    def rule(types: list[DataType]) -> list[DataType | None]:
        wanted = list(kinds[: len(types)]) + [rest or kinds[-1]] * max(0, len(types) - len(kinds))
        return _check(name, wanted, types)
    return rule


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


def _same_type(name: str, string_promotion: bool, skip: int = 0) -> Callable[[list[DataType]], list[DataType | None]]:
    """Cast every argument after the first `skip` to their common type."""
    def rule(types: list[DataType]) -> list[DataType | None]:
        target = common_type(name, types[skip:], string_promotion)
        if isinstance(target, T.NullType):
            target = T.StringType() if name in ("greatest", "least") else T.NullType()
        return [None] * skip + [None if t == target else target for t in types[skip:]]
    return rule


def _result_common(name: str, string_promotion: bool, skip: int = 0) -> Callable[[list[DataType]], DataType]:
    return lambda types: common_type(name, types[skip:], string_promotion)


# ---------------------------------------------------------------- result rules

def _fixed(t: DataType) -> Callable[[list[DataType]], DataType]:
    return lambda types: t


def _first(types: list[DataType]) -> DataType:
    return types[0]


def _numeric_first(types: list[DataType]) -> DataType:
    t = types[0]
    return t if isinstance(t, T.NumericType) else T.DoubleType()


def _round_type(types: list[DataType], literals: list[Any]) -> DataType:
    """round/bround: same type, except a decimal keeps or lowers its scale (Spark's RoundBase)."""
    t = _numeric_first(types)
    if isinstance(t, T.DecimalType):
        scale = literals[1] if len(literals) > 1 else 0
        if not isinstance(scale, int):
            # a computed scale: a type wide enough for any rounding of this decimal
            return T.DecimalType(min(t.precision + 1, 38), t.scale)
        return _rounded_decimal(t, scale)
    return t


def _rounded_decimal(t: T.DecimalType, scale: int) -> T.DecimalType:
    integral = t.precision - t.scale + 1
    if scale < 0:
        return T.DecimalType(min(max(integral, -scale + 1), 38), 0)
    new_scale = min(t.scale, scale)
    return T.DecimalType(min(integral + new_scale, 38), new_scale)


def _floor_ceil_type(types: list[DataType], literals: list[Any]) -> DataType:
    """floor/ceil: bigint, a decimal's integral part, or with a scale a decimal (Spark's RoundCeil)."""
    t = _numeric_first(types)
    if len(types) > 1:
        if isinstance(t, T.IntegralType):
            t = T.decimal_for_integral(t)
        elif not isinstance(t, T.DecimalType):
            t = T.DecimalType(30, 15)
        scale = literals[1] if len(literals) > 1 else 0
        return _rounded_decimal(t, scale) if isinstance(scale, int) else T.DecimalType(min(t.precision + 1, 38), t.scale)
    if isinstance(t, T.DecimalType):
        return T.DecimalType(min(t.precision - t.scale + 1, 38), 0)
    return T.LongType()


def _nanvl_type(types: list[DataType]) -> DataType:
    return T.FloatType() if all(isinstance(t, T.FloatType) for t in types) else T.DoubleType()


def _concat_type(types: list[DataType]) -> DataType:
    return T.BinaryType() if types and all(isinstance(t, T.BinaryType) for t in types) else T.StringType()


def _element_type(types: list[DataType]) -> DataType:
    t = types[0]
    if isinstance(t, T.ArrayType):
        return t.elementType
    if isinstance(t, T.MapType):
        return t.valueType
    return T.NullType()


# ---------------------------------------------------------------- argument rules of single functions

def _concat_inputs(types: list[DataType]) -> list[DataType | None]:
    """concat keeps binaries only when every argument is binary; otherwise all become strings."""
    if types and all(isinstance(t, T.BinaryType) for t in types):
        return [None] * len(types)
    return _inputs("concat", STRING, rest=STRING)(types)


def _nullif_inputs(types: list[DataType]) -> list[DataType | None]:
    """nullif compares in the common type but returns its first argument's type, so nothing is cast here."""
    common_type("nullif", types, True)
    return [None, None]


def _array_contains_inputs(types: list[DataType]) -> list[DataType | None]:
    array, value = types
    if not isinstance(array, T.ArrayType):
        raise AnalysisException(f"function array_contains: the first argument must be ARRAY, but it is {array.simpleString()}")
    if isinstance(value, T.NullType):
        raise AnalysisException("function array_contains: the value to look for cannot be a NULL literal")
    element = array.elementType
    if value == element:
        return [None, None]
    if isinstance(value, T.NumericType) and isinstance(element, T.NumericType):
        wider = T.common_numeric_type(value, element)
        return [None if wider == element else T.ArrayType(wider), None if wider == value else wider]
    raise AnalysisException(
        f"function array_contains: the value must have the array's element type {element.simpleString()}, "
        f"but it is {value.simpleString()}"
    )


def _sort_array_inputs(types: list[DataType]) -> list[DataType | None]:
    if not isinstance(types[0], T.ArrayType):
        raise AnalysisException(f"function sort_array: the first argument must be ARRAY, but it is {types[0].simpleString()}")
    return [None] + _check("sort_array", [BOOLEAN], types[1:])


def _field_type(types: list[DataType], literals: list[Any]) -> DataType:
    """A struct field's type by its (literal) name, or a map's value type."""
    t, key = types[0], literals[1] if len(literals) > 1 else NOT_LITERAL
    if isinstance(t, T.MapType):
        return t.valueType
    if not isinstance(t, T.StructType):
        raise AnalysisException(f"function get_field: the first argument must be STRUCT or MAP, but it is {t.simpleString()}")
    if not isinstance(key, str):
        # also what a caller sees that types get_field through `result_type` alone, which
        # cannot see the name: the type must come from result_type_of(name, args)
        raise AnalysisException("function get_field: the field name must be a string literal "
                                "(a struct field's type is found with function_catalog.result_type_of)")
    for f in t.fields:
        if f.name == key:
            return f.dataType
    matches = [f for f in t.fields if f.name.lower() == key.lower()]
    if len(matches) == 1:
        return matches[0].dataType
    raise AnalysisException(f"field '{key}' does not exist in {t.simpleString()}; fields are {', '.join(t.names)}")


# ---------------------------------------------------------------- pretty names

def _call(name: str) -> Callable[[list[str]], str]:
    """`name(a, b)` under a display name that differs from the lookup name (SQRT, POWER)."""
    return lambda args: f"{name}({', '.join(args)})"


def _call_filling(name: str, arity: int, defaults: tuple[str, ...]) -> Callable[[list[str]], str]:
    """`name(...)` padded to `arity` arguments with the trailing `defaults`."""
    def pretty(args: list[str]) -> str:
        missing = arity - len(args)
        shown = list(args) + (list(defaults[len(defaults) - missing:]) if missing > 0 else [])
        return f"{name}({', '.join(shown)})"
    return pretty


def _like(args: list[str]) -> str:
    text = f"{args[0]} LIKE {args[1]}"
    return text + (f" ESCAPE '{args[2]}'" if len(args) > 2 else "")


def _trim(side: str, name: str) -> Callable[[list[str]], str]:
    def pretty(args: list[str]) -> str:
        if len(args) == 1:
            return f"{name}({args[0]})"
        return f"TRIM({side} {args[1]} FROM {args[0]})"
    return pretty


def _log(args: list[str]) -> str:
    return f"LOG({', '.join(['E()'] + args if len(args) == 1 else args)})"


def _unix_timestamp(name: str) -> Callable[[list[str]], str]:
    def pretty(args: list[str]) -> str:
        shown = list(args) or ["current_timestamp()"]
        if len(shown) == 1:
            shown.append("yyyy-MM-dd HH:mm:ss")
        return f"{name}({', '.join(shown)})"
    return pretty


def _get_field(args: list[str]) -> str:
    return f"{args[0]}.{args[1]}"


def _element_at_index(args: list[str]) -> str:
    return f"{args[0]}[{args[1]}]"


# ---------------------------------------------------------------- the catalog

SCALAR_FUNCTIONS: dict[str, FunctionSpec] = {}


def _register(name: str, min_args: int, max_args: int | None, result: Callable[[list[DataType]], DataType],
              inputs: Callable[[list[DataType]], list[DataType | None]] | None = None,
              pretty: Callable[[list[str]], str] | None = None,
              literal_result: Callable[[list[DataType], list[Any]], DataType] | None = None) -> None:
    if inputs is not None:
        raw_result, raw_literal = result, literal_result

        def result(types: list[DataType]) -> DataType:
            return raw_result(_coerced(inputs, types))

        if raw_literal is not None:
            def literal_result(types: list[DataType], literals: list[Any]) -> DataType:
                return raw_literal(_coerced(inputs, types), literals)
    SCALAR_FUNCTIONS[name] = FunctionSpec(name, min_args, max_args, result, inputs, pretty, literal_result)


def _unary(names: list[str], kind: _Kind, result: DataType | Callable[[list[DataType]], DataType],
           pretty: dict[str, str] | None = None) -> None:
    rule = result if callable(result) else _fixed(result)
    for n in names:
        shown = (pretty or {}).get(n)
        _register(n, 1, 1, rule, _inputs(n, kind), _call(shown) if shown else None)


# strings
_unary(["upper", "lower", "ucase", "lcase", "initcap"], STRING, T.StringType())
_unary(["length", "char_length", "character_length", "len", "octet_length", "bit_length"], STRING_OR_BINARY, T.IntegerType())
_unary(["ascii"], STRING, T.IntegerType())
for _name, _side in (("trim", "BOTH"), ("ltrim", "LEADING"), ("rtrim", "TRAILING")):
    _register(_name, 1, 2, _fixed(T.StringType()), _inputs(_name, STRING, STRING), _trim(_side, _name))
_register("btrim", 1, 2, _fixed(T.StringType()), _inputs("btrim", STRING, STRING))
for _name in ("substring", "substr"):
    _register(_name, 2, 3, lambda types: T.BinaryType() if isinstance(types[0], T.BinaryType) else T.StringType(),
              _inputs(_name, STRING_OR_BINARY, INT, INT), _call_filling(_name, 3, ("2147483647",)))
_register("concat", 0, None, _concat_type, _concat_inputs)
_register("concat_ws", 1, None, _fixed(T.StringType()), _inputs("concat_ws", STRING, rest=STRING_OR_ARRAY))
_register("regexp_replace", 3, 4, _fixed(T.StringType()), _inputs("regexp_replace", STRING, STRING, STRING, INT),
          _call_filling("regexp_replace", 4, ("1",)))
_register("regexp_extract", 2, 3, _fixed(T.StringType()), _inputs("regexp_extract", STRING, STRING, INT),
          _call_filling("regexp_extract", 3, ("1",)))
for _name in ("lpad", "rpad"):
    _register(_name, 2, 3, _fixed(T.StringType()), _inputs(_name, STRING, INT, STRING), _call_filling(_name, 3, (" ",)))
_register("instr", 2, 2, _fixed(T.IntegerType()), _inputs("instr", STRING, STRING))
for _name in ("locate", "position"):
    _register(_name, 2, 3, _fixed(T.IntegerType()), _inputs(_name, STRING, STRING, INT), _call_filling(_name, 3, ("1",)))
_register("reverse", 1, 1, lambda types: types[0] if isinstance(types[0], T.ArrayType) else T.StringType(),
          lambda types: [None] if isinstance(types[0], T.ArrayType) else _check("reverse", [STRING], types))
_register("repeat", 2, 2, _fixed(T.StringType()), _inputs("repeat", STRING, INT))
_register("translate", 3, 3, _fixed(T.StringType()), _inputs("translate", STRING, STRING, STRING))
_register("split", 2, 3, _fixed(T.ArrayType(T.StringType())), _inputs("split", STRING, STRING, INT),
          _call_filling("split", 3, ("-1",)))
for _name in ("startswith", "endswith", "contains"):
    _register(_name, 2, 2, _fixed(T.BooleanType()), _inputs(_name, STRING, STRING))
_register("like", 2, 3, _fixed(T.BooleanType()), _inputs("like", STRING, STRING, STRING), _like)
_register("ilike", 2, 3, _fixed(T.BooleanType()), _inputs("ilike", STRING, STRING, STRING))
for _name, _shown in (("rlike", "RLIKE"), ("regexp", "REGEXP"), ("regexp_like", "REGEXP_LIKE")):
    _register(_name, 2, 2, _fixed(T.BooleanType()), _inputs(_name, STRING, STRING), _call(_shown))
_unary(["md5", "sha1", "sha"], BINARY, T.StringType())
_register("sha2", 2, 2, _fixed(T.StringType()), _inputs("sha2", BINARY, INT))

# null handling and conditionals
_register("coalesce", 1, None, _result_common("coalesce", True), _same_type("coalesce", True))
for _name in ("ifnull", "nvl"):
    _register(_name, 2, 2, _result_common(_name, True), _same_type(_name, True))
_register("nvl2", 3, 3, _result_common("nvl2", True, skip=1), _same_type("nvl2", True, skip=1))
_register("if", 3, 3, _result_common("if", True, skip=1),
          lambda types: _check("if", [BOOLEAN], types[:1]) + _same_type("if", True, skip=1)(types)[1:],
          lambda args: f"(IF({', '.join(args)}))")
_register("nullif", 2, 2, _first, _nullif_inputs)
_register("isnull", 1, 1, _fixed(T.BooleanType()), None, lambda args: f"({args[0]} IS NULL)")
_register("isnotnull", 1, 1, _fixed(T.BooleanType()), None, lambda args: f"({args[0]} IS NOT NULL)")
_unary(["isnan"], FRACTIONAL, T.BooleanType())
_register("nanvl", 2, 2, _nanvl_type, _inputs("nanvl", FRACTIONAL, FRACTIONAL))

# math
_unary(["abs"], NUMERIC, _numeric_first)
_unary(["sqrt", "cbrt", "exp", "expm1", "ln", "log10", "log2", "log1p", "sin", "cos", "tan", "asin", "acos",
        "atan", "sinh", "cosh", "tanh", "degrees", "radians"], DOUBLE, T.DoubleType(),
       {n: n.upper() for n in ("sqrt", "cbrt", "exp", "expm1", "log10", "log2", "log1p", "sin", "cos", "tan",
                               "asin", "acos", "atan", "sinh", "cosh", "tanh", "degrees", "radians")})
_unary(["signum", "sign"], NUMERIC, T.DoubleType(), {"signum": "SIGNUM"})
_register("log", 1, 2, _fixed(T.DoubleType()), _inputs("log", DOUBLE, DOUBLE), _log)
_register("pow", 2, 2, _fixed(T.DoubleType()), _inputs("pow", DOUBLE, DOUBLE))
_register("power", 2, 2, _fixed(T.DoubleType()), _inputs("power", DOUBLE, DOUBLE), _call("POWER"))
_register("atan2", 2, 2, _fixed(T.DoubleType()), _inputs("atan2", DOUBLE, DOUBLE), _call("ATAN2"))
_register("hypot", 2, 2, _fixed(T.DoubleType()), _inputs("hypot", DOUBLE, DOUBLE), _call("HYPOT"))
for _name in ("round", "bround"):
    _register(_name, 1, 2, lambda types: _round_type(types, [NOT_LITERAL] * len(types)), _inputs(_name, NUMERIC, INT),
              _call_filling(_name, 2, ("0",)), _round_type)
for _name, _shown in (("floor", "FLOOR"), ("ceil", "CEIL"), ("ceiling", "ceiling")):
    _register(_name, 1, 2, lambda types: _floor_ceil_type(types, [NOT_LITERAL] * len(types)), _inputs(_name, NUMERIC, INT),
              (lambda shown, lower: lambda args: f"{shown if len(args) == 1 else lower}({', '.join(args)})")(_shown, _name),
              _floor_ceil_type)
for _name in ("greatest", "least"):
    _register(_name, 2, None, _result_common(_name, False), _same_type(_name, False))

# dates and times
_unary(["year", "month", "dayofmonth", "day", "dayofweek", "dayofyear", "quarter", "weekofyear", "weekday"],
       DATE, T.IntegerType())
_unary(["hour", "minute", "second"], TIMESTAMP, T.IntegerType())
_unary(["last_day"], DATE, T.DateType())
for _name in ("date_add", "date_sub", "dateadd"):
    _register(_name, 2, 2, _fixed(T.DateType()), _inputs(_name, DATE, DAYS),
              _call("date_add") if _name == "dateadd" else None)
_register("add_months", 2, 2, _fixed(T.DateType()), _inputs("add_months", DATE, DAYS))


def _interval_result(types: list[DataType], literals: list[Any]) -> DataType:
    """date +/- INTERVAL of whole days and months stays a date (Spark's DateAddInterval); else a timestamp."""
    if isinstance(types[0], (T.DateType, T.StringType)) and literals[3] == 0:
        return T.DateType()
    return T.TimestampType()


# interval_add(start, months, days, microseconds): what `start + INTERVAL ...` in SQL becomes.
_register("interval_add", 4, 4, lambda types: T.TimestampType(), literal_result=_interval_result)
for _name in ("datediff", "date_diff"):
    _register(_name, 2, 2, _fixed(T.IntegerType()), _inputs(_name, DATE, DATE))
_register("months_between", 2, 3, _fixed(T.DoubleType()), _inputs("months_between", TIMESTAMP, TIMESTAMP, BOOLEAN),
          _call_filling("months_between", 3, ("true",)))
_register("to_date", 1, 2, _fixed(T.DateType()), _inputs("to_date", DATETIME_TEXT, STRING))
_register("to_timestamp", 1, 2, _fixed(T.TimestampType()),
          lambda types: ([None] if isinstance(types[0], T.NumericType) else _check("to_timestamp", [DATETIME_TEXT], types[:1]))
          + _check("to_timestamp", [STRING], types[1:]))
_register("date_format", 2, 2, _fixed(T.StringType()), _inputs("date_format", TIMESTAMP, STRING))
_register("current_date", 0, 0, _fixed(T.DateType()))
_register("current_timestamp", 0, 0, _fixed(T.TimestampType()))
_register("now", 0, 0, _fixed(T.TimestampType()))
_register("date_trunc", 2, 2, _fixed(T.TimestampType()), _inputs("date_trunc", STRING, TIMESTAMP))
_register("trunc", 2, 2, _fixed(T.DateType()), _inputs("trunc", DATE, STRING))
for _name in ("unix_timestamp", "to_unix_timestamp"):
    _register(_name, 0 if _name == "unix_timestamp" else 1, 2, _fixed(T.LongType()),
              _inputs(_name, DATETIME_TEXT, STRING), _unix_timestamp(_name))
_register("from_unixtime", 1, 2, _fixed(T.StringType()), _inputs("from_unixtime", BIGINT, STRING),
          _call_filling("from_unixtime", 2, ("yyyy-MM-dd HH:mm:ss",)))

# collections and nested values
_register("size", 1, 1, _fixed(T.IntegerType()), _inputs("size", COLLECTION))
_register("cardinality", 1, 1, _fixed(T.IntegerType()), _inputs("cardinality", COLLECTION))
_register("array_contains", 2, 2, _fixed(T.BooleanType()), _array_contains_inputs)
_register("sort_array", 1, 2, _first, _sort_array_inputs, _call_filling("sort_array", 2, ("true",)))
_register("get_field", 2, 2, lambda types: _field_type(types, [NOT_LITERAL] * len(types)), None, _get_field, _field_type)
_register("element_at_index", 2, 2, _element_type, None, _element_at_index)

del _name


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
    from quiver.engine.core.expressions import Cast, Literal

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
    raise AnalysisException(f"undefined function '{name}'.{hint} Scalar functions are: {', '.join(sorted(SCALAR_FUNCTIONS))}")


# Array, map and struct functions register themselves here (kept in their own module).
from quiver.engine.analysis.functions import collection as collection_catalog  # noqa: E402,F401


# hash, random, partition-aware, grouping and further string/math/date functions register themselves
from quiver.engine.analysis.functions import misc as function_catalog_misc  # noqa: E402,F401
