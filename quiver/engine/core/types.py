"""Spark SQL data types, their Spark names (`df.dtypes`) and their Arrow layouts.

Names and equality follow `pyspark.sql.types`, so programs that build schemas with
`T.StructType([...])` or compare `df.schema` run unchanged.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

import numpy as np
import pyarrow as pa

from quiver.engine.core.errors import ParseException

# Whether the analyzer applies ANSI type coercion (`spark.sql.ansi.enabled`); the session sets it while
# analysing, and it is off for code that works on types outside a session.
ANSI_TYPE_COERCION: ContextVar[bool] = ContextVar("ansi_type_coercion", default=False)


class DataType:
    """Base of all Spark data types; instances compare by value."""

    def simpleString(self) -> str:
        return self.typeName()

    @classmethod
    def typeName(cls) -> str:
        return cls.__name__[:-4].lower()

    def jsonValue(self) -> Any:
        """The type as PySpark writes it in JSON: a name for an atomic type, a dict for arrays, maps and structs."""
        return self.typeName()

    def json(self) -> str:
        """`jsonValue()` as compact JSON text with sorted keys, as PySpark's `DataType.json()`."""
        import json

        return json.dumps(self.jsonValue(), separators=(",", ":"), sort_keys=True)

    def to_arrow(self) -> pa.DataType:
        raise NotImplementedError(type(self).__name__)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(sorted(self.__dict__.items(), key=lambda kv: kv[0]))))

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class NullType(DataType):
    def simpleString(self) -> str:
        return "void"

    @classmethod
    def typeName(cls) -> str:
        return "void"

    def to_arrow(self) -> pa.DataType:
        return pa.null()


class StringType(DataType):
    def to_arrow(self) -> pa.DataType:
        return pa.string()


class BinaryType(DataType):
    def to_arrow(self) -> pa.DataType:
        return pa.binary()


class BooleanType(DataType):
    def to_arrow(self) -> pa.DataType:
        return pa.bool_()


class DateType(DataType):
    def to_arrow(self) -> pa.DataType:
        return pa.date32()


class TimestampType(DataType):
    def to_arrow(self) -> pa.DataType:
        return pa.timestamp("us")


class TimestampNTZType(DataType):
    def simpleString(self) -> str:
        return "timestamp_ntz"

    @classmethod
    def typeName(cls) -> str:
        return "timestamp_ntz"

    def to_arrow(self) -> pa.DataType:
        return pa.timestamp("us")


class NumericType(DataType):
    pass


class IntegralType(NumericType):
    pass


class FractionalType(NumericType):
    pass


class ByteType(IntegralType):
    def simpleString(self) -> str:
        return "tinyint"

    def to_arrow(self) -> pa.DataType:
        return pa.int8()


class ShortType(IntegralType):
    def simpleString(self) -> str:
        return "smallint"

    def to_arrow(self) -> pa.DataType:
        return pa.int16()


class IntegerType(IntegralType):
    def simpleString(self) -> str:
        return "int"

    @classmethod
    def typeName(cls) -> str:
        return "integer"

    def to_arrow(self) -> pa.DataType:
        return pa.int32()


class LongType(IntegralType):
    def simpleString(self) -> str:
        return "bigint"

    def to_arrow(self) -> pa.DataType:
        return pa.int64()


class FloatType(FractionalType):
    def to_arrow(self) -> pa.DataType:
        return pa.float32()


class DoubleType(FractionalType):
    def to_arrow(self) -> pa.DataType:
        return pa.float64()


class DecimalType(FractionalType):
    MAX_PRECISION = 38

    def __init__(self, precision: int = 10, scale: int = 0):
        self.precision = precision
        self.scale = scale

    def simpleString(self) -> str:
        return f"decimal({self.precision},{self.scale})"

    def jsonValue(self) -> Any:
        return self.simpleString()

    def to_arrow(self) -> pa.DataType:
        return pa.decimal128(self.precision, self.scale)

    def __repr__(self) -> str:
        return f"DecimalType({self.precision},{self.scale})"


class ArrayType(DataType):
    def __init__(self, elementType: DataType, containsNull: bool = True):
        self.elementType = elementType
        self.containsNull = containsNull

    def simpleString(self) -> str:
        return f"array<{self.elementType.simpleString()}>"

    def jsonValue(self) -> Any:
        return {"type": "array", "elementType": self.elementType.jsonValue(), "containsNull": self.containsNull}

    @classmethod
    def fromJson(cls, json: dict[str, Any]) -> ArrayType:
        """The ArrayType of its PySpark JSON form (`jsonValue()`), to rebuild a saved schema."""
        return ArrayType(parse_json_value(json["elementType"]), bool(json["containsNull"]))

    def to_arrow(self) -> pa.DataType:
        return pa.list_(self.elementType.to_arrow())

    def __repr__(self) -> str:
        return f"ArrayType({self.elementType!r}, {self.containsNull})"


class MapType(DataType):
    def __init__(self, keyType: DataType, valueType: DataType, valueContainsNull: bool = True):
        self.keyType = keyType
        self.valueType = valueType
        self.valueContainsNull = valueContainsNull

    def simpleString(self) -> str:
        return f"map<{self.keyType.simpleString()},{self.valueType.simpleString()}>"

    def jsonValue(self) -> Any:
        return {"type": "map", "keyType": self.keyType.jsonValue(), "valueType": self.valueType.jsonValue(),
                "valueContainsNull": self.valueContainsNull}

    @classmethod
    def fromJson(cls, json: dict[str, Any]) -> MapType:
        """The MapType of its PySpark JSON form (`jsonValue()`), to rebuild a saved schema."""
        return MapType(parse_json_value(json["keyType"]), parse_json_value(json["valueType"]),
                       bool(json["valueContainsNull"]))

    def to_arrow(self) -> pa.DataType:
        return pa.map_(self.keyType.to_arrow(), self.valueType.to_arrow())

    def __repr__(self) -> str:
        return f"MapType({self.keyType!r}, {self.valueType!r}, {self.valueContainsNull})"


class StructField(DataType):
    def __init__(self, name: str, dataType: DataType, nullable: bool = True, metadata: dict | None = None):
        self.name = name
        self.dataType = dataType
        self.nullable = nullable
        self.metadata = metadata or {}

    def simpleString(self) -> str:
        return f"{self.name}:{self.dataType.simpleString()}"

    def jsonValue(self) -> Any:
        return {"name": self.name, "type": self.dataType.jsonValue(), "nullable": self.nullable,
                "metadata": self.metadata}

    @classmethod
    def fromJson(cls, json: dict[str, Any]) -> StructField:
        """The StructField of its PySpark JSON form (`jsonValue()`), to rebuild a saved schema."""
        return StructField(json["name"], parse_json_value(json["type"]), bool(json.get("nullable", True)),
                           json.get("metadata") or {})

    def __hash__(self) -> int:
        return hash((self.name, self.dataType, self.nullable))

    def __repr__(self) -> str:
        return f"StructField('{self.name}', {self.dataType!r}, {self.nullable})"

    def to_arrow_field(self) -> pa.Field:
        return pa.field(self.name, self.dataType.to_arrow(), self.nullable)


class StructType(DataType):
    def __init__(self, fields: list[StructField] | None = None):
        self.fields = list(fields or [])

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.fields]

    def fieldNames(self) -> list[str]:
        return self.names

    def add(self, field: str | StructField, data_type: DataType | str | None = None,
            nullable: bool = True) -> StructType:
        if isinstance(field, StructField):
            self.fields.append(field)
        else:
            if data_type is None:
                raise TypeError(f"StructType.add({field!r}): a field given by name needs its data type")
            dtype = parse_data_type(data_type) if isinstance(data_type, str) else data_type
            self.fields.append(StructField(field, dtype, nullable))
        return self

    def simpleString(self) -> str:
        return "struct<" + ",".join(f.simpleString() for f in self.fields) + ">"

    def jsonValue(self) -> Any:
        return {"type": "struct", "fields": [f.jsonValue() for f in self.fields]}

    @classmethod
    def fromJson(cls, json: dict[str, Any]) -> StructType:
        """The StructType of its PySpark JSON form (`jsonValue()`), to rebuild a saved schema."""
        return StructType([StructField.fromJson(f) for f in json["fields"]])

    def __iter__(self) -> Iterator[StructField]:
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    def __getitem__(self, key: int | str) -> StructField:
        if isinstance(key, int):
            return self.fields[key]
        for f in self.fields:
            if f.name == key:
                return f
        raise KeyError(f"No StructField named {key!r}; fields are {', '.join(self.names)}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StructType) and self.fields == other.fields

    def __hash__(self) -> int:
        return hash(tuple(self.fields))

    def __repr__(self) -> str:
        return f"StructType([{', '.join(repr(f) for f in self.fields)}])"

    def to_arrow(self) -> pa.DataType:
        return pa.struct([f.to_arrow_field() for f in self.fields])

    def to_arrow_schema(self) -> pa.Schema:
        return pa.schema([f.to_arrow_field() for f in self.fields])

    def treeString(self) -> str:
        """The text `printSchema()` prints: one line per field, nested types indented under their parent."""
        lines = ["root"]
        for f in self.fields:
            _tree_lines(lines, " |", f.name, f.dataType, f"nullable = {str(f.nullable).lower()}")
        return "\n".join(lines) + "\n"


def _tree_lines(lines: list[str], prefix: str, name: str, dtype: DataType, note: str | None) -> None:
    suffix = f" ({note})" if note else ""
    lines.append(f"{prefix}-- {name}: {_tree_type_name(dtype)}{suffix}")
    inner = prefix + "    |"
    if isinstance(dtype, ArrayType):
        _tree_lines(lines, inner, "element", dtype.elementType, f"containsNull = {str(dtype.containsNull).lower()}")
    elif isinstance(dtype, MapType):
        _tree_lines(lines, inner, "key", dtype.keyType, None)
        _tree_lines(lines, inner, "value", dtype.valueType,
                    f"valueContainsNull = {str(dtype.valueContainsNull).lower()}")
    elif isinstance(dtype, StructType):
        for f in dtype.fields:
            _tree_lines(lines, inner, f.name, f.dataType, f"nullable = {str(f.nullable).lower()}")


def from_arrow(t: pa.DataType) -> DataType:
    """The Spark type that holds values of Arrow type `t`."""
    if pa.types.is_int8(t):
        return ByteType()
    if pa.types.is_int16(t) or pa.types.is_uint8(t):
        return ShortType()
    if pa.types.is_int32(t) or pa.types.is_uint16(t):
        return IntegerType()
    if pa.types.is_int64(t) or pa.types.is_uint32(t) or pa.types.is_uint64(t):
        return LongType()
    if pa.types.is_float32(t):
        return FloatType()
    if pa.types.is_float16(t) or pa.types.is_float64(t):
        return DoubleType()
    if pa.types.is_boolean(t):
        return BooleanType()
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return StringType()
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return BinaryType()
    if pa.types.is_date(t):
        return DateType()
    if pa.types.is_timestamp(t):
        return TimestampType()
    if pa.types.is_decimal(t):
        return DecimalType(min(t.precision, 38), t.scale)
    if pa.types.is_dictionary(t):
        return from_arrow(t.value_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return ArrayType(from_arrow(t.value_type))
    if pa.types.is_map(t):
        return MapType(from_arrow(t.key_type), from_arrow(t.item_type))
    if pa.types.is_struct(t):
        return StructType([StructField(f.name, from_arrow(f.type), f.nullable) for f in t])
    if pa.types.is_null(t):
        return NullType()
    if pa.types.is_time(t) or pa.types.is_duration(t):
        return LongType()
    raise TypeError(f"Arrow type {t} has no Spark equivalent")


def schema_from_arrow(schema: pa.Schema) -> StructType:
    """Spark schema of an Arrow schema (Arrow fields are nullable unless marked)."""
    return StructType([StructField(f.name, from_arrow(f.type), f.nullable) for f in schema])


_SIMPLE_TYPES: dict[str, type[DataType]] = {
    "string": StringType, "varchar": StringType, "char": StringType, "text": StringType,
    "binary": BinaryType,
    "boolean": BooleanType, "bool": BooleanType,
    "date": DateType,
    "timestamp": TimestampType, "timestamp_ltz": TimestampType, "timestamp_ntz": TimestampNTZType,
    "tinyint": ByteType, "byte": ByteType,
    "smallint": ShortType, "short": ShortType,
    "int": IntegerType, "integer": IntegerType,
    "bigint": LongType, "long": LongType,
    "float": FloatType, "real": FloatType,
    "double": DoubleType,
    "void": NullType, "null": NullType,
}

_TOKEN = re.compile(r"\s*(?:(`[^`]*`)|([A-Za-z_][A-Za-z0-9_]*)|(\d+)|([<>(),:]))")


class _TypeParser:
    """Recursive-descent parser for Spark DDL type strings and schema strings."""

    def __init__(self, text: str):
        self.text = text
        self.tokens: list[tuple[str, int]] = []
        pos = 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            m = _TOKEN.match(text, pos)
            if not m:
                raise ParseException(f"cannot parse type string {text!r} at position {pos}: unexpected "
                                     f"{text[pos:pos + 10]!r}")
            tok = next(g for g in m.groups() if g is not None)
            assert m.lastindex is not None  # a token matched, so one of its groups did
            self.tokens.append((tok, m.start(m.lastindex)))
            pos = m.end()
        self.i = 0

    def peek(self) -> str | None:
        return self.tokens[self.i][0] if self.i < len(self.tokens) else None

    def take_int(self) -> int:
        tok = self.take("a number")
        if not tok.isdigit():
            raise ParseException(f"cannot parse type string {self.text!r}: expected a number, found {tok!r}")
        return int(tok)

    def take(self, expected: str | None = None) -> str:
        if self.i >= len(self.tokens):
            raise ParseException(f"cannot parse type string {self.text!r}: unexpected end, expected "
                                 f"{expected or 'a type'}")
        tok, pos = self.tokens[self.i]
        if expected is not None and expected != "a number" and tok.lower() != expected:
            raise ParseException(f"cannot parse type string {self.text!r} at position {pos}: expected {expected!r}, "
                                 f"found {tok!r}")
        self.i += 1
        return tok

    def data_type(self) -> DataType:
        name = self.take().lower()
        if name in ("decimal", "dec", "numeric"):
            if self.peek() == "(":
                self.take("(")
                p = self.take_int()
                s = 0
                if self.peek() == ",":
                    self.take(",")
                    s = self.take_int()
                self.take(")")
                return DecimalType(p, s)
            return DecimalType(10, 0)
        if name in ("varchar", "char") and self.peek() == "(":
            self.take("(")
            self.take()
            self.take(")")
            return StringType()
        if name == "array":
            self.take("<")
            elem = self.data_type()
            self.take(">")
            return ArrayType(elem)
        if name == "map":
            self.take("<")
            k = self.data_type()
            self.take(",")
            v = self.data_type()
            self.take(">")
            return MapType(k, v)
        if name == "struct":
            self.take("<")
            fields = []
            if self.peek() != ">":
                fields.append(self.field(colon_optional=True))
                while self.peek() == ",":
                    self.take(",")
                    fields.append(self.field(colon_optional=True))
            self.take(">")
            return StructType(fields)
        if name in _SIMPLE_TYPES:
            return _SIMPLE_TYPES[name]()
        raise ParseException(
            f"unknown data type {name!r} in {self.text!r}; valid types are "
            f"{', '.join(sorted(set(_SIMPLE_TYPES) | {'decimal(p,s)', 'array<t>', 'map<k,v>', 'struct<...>'}))}"
        )

    def field(self, colon_optional: bool) -> StructField:
        name = self.take()
        if name.startswith("`"):
            name = name[1:-1]
        if self.peek() == ":":
            self.take(":")
        dtype = self.data_type()
        nullable = True
        if (self.peek() or "").lower() == "not":
            self.take("not")
            self.take("null")
            nullable = False
        return StructField(name, dtype, nullable)

    def at_end(self) -> bool:
        return self.i >= len(self.tokens)


def _atomic_types() -> dict[str, type[DataType]]:
    found: dict[str, type[DataType]] = {}
    pending = list(DataType.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls not in (ArrayType, MapType, StructType, StructField, DecimalType) and not cls.__subclasses__():
            found[cls.typeName()] = cls
    return found


def parse_json_value(value: Any) -> DataType:
    """A type from its PySpark JSON form (`DataType.jsonValue()`): `"integer"`, `"decimal(10,2)"`, or a dict of
    an array, a map or a struct.

    >>> parse_json_value({"type": "array", "elementType": "long", "containsNull": False})
    ArrayType(LongType(), False)
    """
    if isinstance(value, dict):
        kinds: dict[str, Any] = {"array": ArrayType, "map": MapType, "struct": StructType}
        kind = value.get("type")
        if kind not in kinds:
            raise ParseException(f"not a Spark data type in JSON: {value!r}; expected a 'type' of array, map or struct")
        return kinds[kind].fromJson(value)
    text = str(value)
    decimal = re.fullmatch(r"decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)", text)
    if decimal:
        return DecimalType(int(decimal.group(1)), int(decimal.group(2)))
    if text == "decimal":
        return DecimalType()
    atomic = _atomic_types().get(text)
    if atomic is None:
        raise ParseException(f"not a Spark data type in JSON: {text!r}; atomic types are "
                             f"{', '.join(sorted(_atomic_types()))}, or decimal(p,s)")
    return atomic()


def parse_data_type(text: str) -> DataType:
    """Parse `'int'`, `'decimal(10,2)'`, `'array<string>'` or a schema `'a INT, b STRING'`."""
    parser = _TypeParser(text)
    try:
        dtype = parser.data_type()
        if parser.at_end():
            return dtype
    except ParseException:
        pass
    return parse_schema(text)


def parse_schema(text: str) -> StructType:
    """Parse a DDL schema string such as `'name STRING, age INT'` or `'name: string, age: int'`."""
    parser = _TypeParser(text)
    if (parser.peek() or "").lower() == "struct" and len(parser.tokens) > 1 and parser.tokens[1][0] == "<":
        dtype = parser.data_type()
        if not isinstance(dtype, StructType):
            raise ParseException(f"{text!r} is not a struct type")
        return dtype
    fields = []
    if not parser.at_end():
        fields.append(parser.field(colon_optional=True))
        while not parser.at_end():
            parser.take(",")
            fields.append(parser.field(colon_optional=True))
    if not fields:
        raise ParseException(f"schema string {text!r} declares no columns; write it as 'name STRING, age INT'")
    return StructType(fields)


def common_numeric_type(a: DataType, b: DataType) -> DataType:
    """Spark's wider type for binary arithmetic and comparison between numerics."""
    if a == b:
        return a
    if isinstance(a, NullType):
        return b
    if isinstance(b, NullType):
        return a
    if isinstance(a, DecimalType) and isinstance(b, DecimalType):
        return _wider_decimal(a, b)
    if isinstance(a, DecimalType) and isinstance(b, IntegralType):
        return common_numeric_type(a, _decimal_for_integral(b))
    if isinstance(b, DecimalType) and isinstance(a, IntegralType):
        return common_numeric_type(_decimal_for_integral(a), b)
    order = [ByteType, ShortType, IntegerType, LongType, FloatType, DoubleType]
    if isinstance(a, DecimalType) or isinstance(b, DecimalType):
        return DoubleType()
    ia = next((i for i, t in enumerate(order) if isinstance(a, t)), None)
    ib = next((i for i, t in enumerate(order) if isinstance(b, t)), None)
    if ia is None or ib is None:
        raise TypeError(f"no common numeric type for {a.simpleString()} and {b.simpleString()}")
    if ANSI_TYPE_COERCION.get() and {type(a), type(b)} & {FloatType} and (
            isinstance(a, IntegralType) or isinstance(b, IntegralType)):
        # ANSI type coercion (Spark 4's default): a float cannot hold every integer, so float with one is double.
        return DoubleType()
    return order[max(ia, ib)]()


def _wider_decimal(a: DecimalType, b: DecimalType) -> DecimalType:
    """Spark's `DecimalPrecision.widerDecimalType`: room for both integral parts and both scales.

    Past 38 digits the integral digits are kept and the scale gives way (Spark's
    `DecimalType.boundedPreferIntegralDigits`), so decimal(38,20) and bigint widen to decimal(38,18).
    """
    scale = max(a.scale, b.scale)
    precision = max(a.precision - a.scale, b.precision - b.scale) + scale
    if precision <= DecimalType.MAX_PRECISION:
        return DecimalType(precision, scale)
    return DecimalType(DecimalType.MAX_PRECISION, max(0, scale - (precision - DecimalType.MAX_PRECISION)))


def _decimal_for_integral(t: DataType) -> DecimalType:
    widths: dict[type[DataType], DecimalType] = {ByteType: DecimalType(3, 0), ShortType: DecimalType(5, 0),
                                                 IntegerType: DecimalType(10, 0), LongType: DecimalType(20, 0)}
    return widths[type(t)]


def decimal_for_integral(t: DataType) -> DecimalType:
    """The decimal type that holds every value of integral type `t` (Spark's widening rule)."""
    return _decimal_for_integral(t)


def _tree_type_name(dt: DataType) -> str:
    return dt.simpleString() if isinstance(dt, DecimalType) else dt.typeName()


# The numpy dtype each Spark type is computed in by compiled (numba) code; other types have none.
NUMPY_DTYPES: dict[type, np.dtype] = {
    ByteType: np.dtype(np.int8), ShortType: np.dtype(np.int16), IntegerType: np.dtype(np.int32),
    LongType: np.dtype(np.int64), FloatType: np.dtype(np.float32), DoubleType: np.dtype(np.float64),
    BooleanType: np.dtype(np.bool_),
}


def numpy_dtype(t: DataType) -> np.dtype | None:
    """The numpy dtype numba computes a column of Spark type `t` in; None where numba cannot."""
    return NUMPY_DTYPES.get(type(t))
