"""The analyzer's view of Spark's array, map and struct functions (array, struct, element_at, size, ...).

Types follow Spark's non-ANSI rules: the arguments of `array(...)` and `map(...)` meet at their wider
common type (strings win over numbers), element and key arguments are cast to the
collection's element type, and a struct's field names come from the `named_struct`
literal names.
"""
from __future__ import annotations

from typing import Any

from quiver.engine.analysis.functions.catalog import (
    BOOLEAN,
    COLLECTION,
    INT,
    NOT_LITERAL,
    STRING,
    check_arguments,
    common_type,
    register,
    returns,
    same_as_first,
    shown_with_defaults,
    takes,
)
from quiver.engine.core import types as T
from quiver.engine.core.errors import AnalysisException

DataType = T.DataType


def _array_arg(name: str, t: DataType, position: str = "first") -> T.ArrayType:
    if isinstance(t, T.NullType):
        return T.ArrayType(T.NullType())
    if not isinstance(t, T.ArrayType):
        raise AnalysisException(f"function {name}: the {position} argument must be ARRAY, but it is {t.simpleString()}")
    return t


def _map_arg(name: str, t: DataType) -> T.MapType:
    if not isinstance(t, T.MapType):
        raise AnalysisException(f"function {name}: the argument must be MAP, but it is {t.simpleString()}")
    return t


def _cast_to(t: DataType, target: DataType) -> DataType | None:
    return None if t == target else target


def _common(name: str, types: list[DataType]) -> DataType:
    return common_type(name, types, True)


# ---------------------------------------------------------------- constructors

def _array_type(types: list[DataType]) -> DataType:
    return T.ArrayType(_common("array", types))


def _array_inputs(types: list[DataType]) -> list[DataType | None]:
    target = _common("array", types)
    return [_cast_to(t, target) for t in types]


def _struct_type(types: list[DataType], literals: list[Any]) -> DataType:
    """named_struct(name1, value1, ...): the names are literals."""
    if len(types) % 2:
        raise AnalysisException("function named_struct takes pairs of a field name and a value, "
                                f"but got {len(types)} arguments")
    fields = []
    for i in range(0, len(types), 2):
        field = literals[i]
        if not isinstance(field, str):
            raise AnalysisException(f"function named_struct: field name {i // 2 + 1} must be a string literal")
        fields.append(T.StructField(field, types[i + 1], True))
    return T.StructType(fields)


def _struct_pretty(name: str):
    """`struct(a, b AS x, (a + 1))`: the values, with `AS name` where a name was given explicitly."""
    def pretty(args: list[str]) -> str:
        if name == "named_struct":
            return f"named_struct({', '.join(args)})"
        shown = []
        for i in range(0, len(args), 2):
            field, value = args[i], args[i + 1]
            implicit = value == field or value.endswith("." + field) or field == f"col{i // 2 + 1}"
            shown.append(value if implicit else f"{value} AS {field}")
        return f"struct({', '.join(shown)})"
    return pretty


def _map_pairs(name: str, types: list[DataType]) -> tuple[DataType, DataType]:
    if len(types) % 2:
        raise AnalysisException(f"function {name} takes pairs of a key and a value, but got {len(types)} arguments")
    key = _common(name, types[0::2])
    value = _common(name, types[1::2])
    if isinstance(key, T.MapType):
        raise AnalysisException(f"function {name}: a map key cannot be a MAP")
    return key, value


def _map_type(types: list[DataType]) -> DataType:
    key, value = _map_pairs("map", types)
    return T.MapType(key, value)


def _map_inputs(types: list[DataType]) -> list[DataType | None]:
    key, value = _map_pairs("map", types)
    return [_cast_to(t, key if i % 2 == 0 else value) for i, t in enumerate(types)]


def _map_from_arrays_type(types: list[DataType]) -> DataType:
    keys = _array_arg("map_from_arrays", types[0])
    values = _array_arg("map_from_arrays", types[1], "second")
    return T.MapType(keys.elementType, values.elementType)


def _sequence_inputs(types: list[DataType]) -> list[DataType | None]:
    for t in types:
        if not isinstance(t, (T.IntegralType, T.NullType)):
            raise AnalysisException(f"function sequence: start, stop and step must be integers, "
                                    f"but one is {t.simpleString()}")
    target = _common("sequence", types)
    if isinstance(target, T.NullType):
        target = T.IntegerType()
    return [_cast_to(t, target) for t in types]


def _sequence_type(types: list[DataType]) -> DataType:
    target = _common("sequence", types)
    return T.ArrayType(T.IntegerType() if isinstance(target, T.NullType) else target)


# ---------------------------------------------------------------- access

def _element_at_inputs(name: str):
    def rule(types: list[DataType]) -> list[DataType | None]:
        t = types[0]
        if isinstance(t, T.MapType):
            return [None, _cast_to(types[1], t.keyType)]
        _array_arg(name, t)
        return [None] + check_arguments(name, [INT], types[1:])
    return rule


def _element_at_type(types: list[DataType]) -> DataType:
    t = types[0]
    if isinstance(t, T.MapType):
        return t.valueType
    return t.elementType if isinstance(t, T.ArrayType) else T.NullType()


def _map_keys_type(types: list[DataType]) -> DataType:
    return T.ArrayType(_map_arg("map_keys", types[0]).keyType)


def _map_values_type(types: list[DataType]) -> DataType:
    return T.ArrayType(_map_arg("map_values", types[0]).valueType)


def _map_entries_type(types: list[DataType]) -> DataType:
    m = _map_arg("map_entries", types[0])
    return T.ArrayType(T.StructType([T.StructField("key", m.keyType, False),
                                     T.StructField("value", m.valueType, True)]))


def _map_key_inputs(name: str):
    def rule(types: list[DataType]) -> list[DataType | None]:
        m = _map_arg(name, types[0])
        return [None, _cast_to(types[1], m.keyType)]
    return rule


# ---------------------------------------------------------------- array functions

def _array_only(name: str):
    def rule(types: list[DataType]) -> list[DataType | None]:
        _array_arg(name, types[0])
        return [None] * len(types)
    return rule


def _array_first(types: list[DataType]) -> DataType:
    t = types[0]
    return t if isinstance(t, T.ArrayType) else T.ArrayType(T.NullType())


def _element_of_first(types: list[DataType]) -> DataType:
    t = types[0]
    return t.elementType if isinstance(t, T.ArrayType) else T.NullType()


def _two_arrays(name: str):
    """Both arrays cast to arrays of their common element type."""
    def rule(types: list[DataType]) -> list[DataType | None]:
        a, b = (_array_arg(name, t, p) for t, p in zip(types, ("first", "second")))
        target = T.ArrayType(_common(name, [a.elementType, b.elementType]))
        return [_cast_to(t, target) for t in types]
    return rule


def _two_arrays_type(name: str):
    def rule(types: list[DataType]) -> DataType:
        a, b = (_array_arg(name, t) for t in types)
        return T.ArrayType(_common(name, [a.elementType, b.elementType]))
    return rule


def _array_and_element(name: str):
    """An array and a value of its element type (the wider of the two, as Spark's casts go)."""
    def rule(types: list[DataType]) -> list[DataType | None]:
        a = _array_arg(name, types[0])
        element = _common(name, [a.elementType, types[1]])
        return [_cast_to(types[0], T.ArrayType(element)), _cast_to(types[1], element)]
    return rule


def _array_and_element_type(name: str):
    def rule(types: list[DataType]) -> DataType:
        a = _array_arg(name, types[0])
        return T.ArrayType(_common(name, [a.elementType, types[1]]))
    return rule


def _array_join_inputs(types: list[DataType]) -> list[DataType | None]:
    a = _array_arg("array_join", types[0])
    first = None if isinstance(a.elementType, T.StringType) else T.ArrayType(T.StringType())
    return [first] + check_arguments("array_join", [STRING, STRING], types[1:])


def _flatten_type(types: list[DataType]) -> DataType:
    a = _array_arg("flatten", types[0])
    if isinstance(a.elementType, T.NullType):
        return T.ArrayType(T.NullType())
    if not isinstance(a.elementType, T.ArrayType):
        raise AnalysisException("function flatten: the argument must be an ARRAY of ARRAYs, but it is "
                                f"{a.simpleString()}")
    return a.elementType


def _arrays_zip_type(types: list[DataType], literals: list[Any]) -> DataType:
    """arrays_zip(names..., arrays...): the field names are the leading literals (filled in by F.arrays_zip)."""
    n = len(types) // 2
    fields = []
    for name, t in zip(literals[:n], types[n:]):
        a = _array_arg("arrays_zip", t)
        fields.append(T.StructField(str(name), a.elementType, True))
    return T.ArrayType(T.StructType(fields))


def _arrays_zip_pretty(args: list[str]) -> str:
    return f"arrays_zip({', '.join(args[len(args) // 2:])})"


def _slice_inputs(types: list[DataType]) -> list[DataType | None]:
    _array_arg("slice", types[0])
    return [None] + check_arguments("slice", [INT, INT], types[1:])


def _array_repeat_inputs(types: list[DataType]) -> list[DataType | None]:
    return [None] + check_arguments("array_repeat", [INT], types[1:])


def _array_repeat_type(types: list[DataType]) -> DataType:
    return T.ArrayType(types[0])


# Spark fills in array_sort's default comparator, and the column name shows it.
_DEFAULT_COMPARATOR = (
    "lambdafunction((IF(((namedlambdavariable() IS NULL) AND (namedlambdavariable() IS NULL)), 0, "
    "(IF((namedlambdavariable() IS NULL), 1, (IF((namedlambdavariable() IS NULL), -1, "
    "(IF((namedlambdavariable() < namedlambdavariable()), -1, (IF((namedlambdavariable() > namedlambdavariable()), "
    "1, 0)))))))))), namedlambdavariable(), namedlambdavariable())"
)


def _array_sort_pretty(args: list[str]) -> str:
    return f"array_sort({args[0]}, {_DEFAULT_COMPARATOR})"


def _element_type(types: list[DataType]) -> DataType:
    t = types[0]
    if isinstance(t, T.ArrayType):
        return t.elementType
    if isinstance(t, T.MapType):
        return t.valueType
    return T.NullType()


def _array_contains_inputs(types: list[DataType]) -> list[DataType | None]:
    array, value = types
    if not isinstance(array, T.ArrayType):
        raise AnalysisException("function array_contains: the first argument must be ARRAY, but it is "
                                f"{array.simpleString()}")
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
        raise AnalysisException("function sort_array: the first argument must be ARRAY, but it is "
                                f"{types[0].simpleString()}")
    return [None] + check_arguments("sort_array", [BOOLEAN], types[1:])


def _field_type(types: list[DataType], literals: list[Any]) -> DataType:
    """A struct field's type by its (literal) name, or a map's value type."""
    t, key = types[0], literals[1] if len(literals) > 1 else NOT_LITERAL
    if isinstance(t, T.MapType):
        return t.valueType
    if not isinstance(t, T.StructType):
        raise AnalysisException("function get_field: the first argument must be STRUCT or MAP, but it is "
                                f"{t.simpleString()}")
    if not isinstance(key, str):
        # also what a caller sees that types get_field through `result_type` alone, which
        # cannot see the name: the type must come from result_type_of(name, args)
        raise AnalysisException("function get_field: the field name must be a string literal "
                                "(a struct field's type is found with catalog.result_type_of)")
    for f in t.fields:
        if f.name == key:
            return f.dataType
    matches = [f for f in t.fields if f.name.lower() == key.lower()]
    if len(matches) == 1:
        return matches[0].dataType
    raise AnalysisException(f"field '{key}' does not exist in {t.simpleString()}; fields are {', '.join(t.names)}")


def _get_field(args: list[str]) -> str:
    return f"{args[0]}.{args[1]}"


def _element_at_index(args: list[str]) -> str:
    return f"{args[0]}[{args[1]}]"


register("array", 0, None, _array_type, _array_inputs)
register("named_struct", 0, None, lambda types: _struct_type(types, [NOT_LITERAL] * len(types)), None,
         _struct_pretty("named_struct"), _struct_type)
register("struct", 0, None, lambda types: _struct_type(types, [NOT_LITERAL] * len(types)), None,
         _struct_pretty("struct"), _struct_type)
register("map", 0, None, _map_type, _map_inputs)
register("map_from_arrays", 2, 2, _map_from_arrays_type, None)
register("array_repeat", 2, 2, _array_repeat_type, _array_repeat_inputs)
register("sequence", 2, 3, _sequence_type, _sequence_inputs)
for _name in ("element_at", "try_element_at"):
    register(_name, 2, 2, _element_at_type, _element_at_inputs(_name))
register("get", 2, 2, _element_at_type, _element_at_inputs("get"))
register("map_keys", 1, 1, _map_keys_type)
register("map_values", 1, 1, _map_values_type)
register("map_entries", 1, 1, _map_entries_type)
register("map_contains_key", 2, 2, lambda types: T.BooleanType(), _map_key_inputs("map_contains_key"))
register("array_size", 1, 1, lambda types: T.IntegerType(), _array_only("array_size"))
register("array_distinct", 1, 1, _array_first, _array_only("array_distinct"))
register("array_sort", 1, 1, _array_first, _array_only("array_sort"), _array_sort_pretty)
register("array_compact", 1, 1, _array_first, _array_only("array_compact"))
register("array_max", 1, 1, _element_of_first, _array_only("array_max"))
register("array_min", 1, 1, _element_of_first, _array_only("array_min"))
for _name in ("array_union", "array_intersect", "array_except"):
    register(_name, 2, 2, _two_arrays_type(_name), _two_arrays(_name))
register("arrays_overlap", 2, 2, lambda types: T.BooleanType(), _two_arrays("arrays_overlap"))
register("array_join", 2, 3, lambda types: T.StringType(), _array_join_inputs)
register("array_position", 2, 2, lambda types: T.LongType(), _array_and_element("array_position"))
for _name in ("array_remove", "array_append", "array_prepend"):
    register(_name, 2, 2, _array_and_element_type(_name), _array_and_element(_name))
register("slice", 3, 3, _array_first, _slice_inputs)
register("flatten", 1, 1, _flatten_type, _array_only("flatten"))
register("arrays_zip", 0, None, lambda types: _arrays_zip_type(types, [str(i) for i in range(len(types))]), None,
         _arrays_zip_pretty, _arrays_zip_type)
register("size", 1, 1, returns(T.IntegerType()), takes("size", COLLECTION))
register("cardinality", 1, 1, returns(T.IntegerType()), takes("cardinality", COLLECTION))
register("array_contains", 2, 2, returns(T.BooleanType()), _array_contains_inputs)
register("sort_array", 1, 2, same_as_first, _sort_array_inputs, shown_with_defaults("sort_array", 2, ("true",)))
register("get_field", 2, 2, lambda types: _field_type(types, [NOT_LITERAL] * len(types)), None, _get_field, _field_type)
register("element_at_index", 2, 2, _element_type, None, _element_at_index)

del _name
