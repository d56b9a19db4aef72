"""Catalog entries for Spark's string functions: case, trimming, slicing, concatenation, regex, padding,
search, LIKE, formatting (format_string, format_number), base64 and distances (levenshtein, soundex)."""
from __future__ import annotations

from collections.abc import Callable

from quiver.engine.analysis.functions.catalog import (
    BINARY,
    INT,
    NUMERIC,
    STRING,
    STRING_OR_ARRAY,
    STRING_OR_BINARY,
    DataType,
    check_arguments,
    register,
    returns,
    shown_as,
    shown_with_defaults,
    takes,
    unary,
)
from quiver.engine.core import types as T


def _concat_type(types: list[DataType]) -> DataType:
    return T.BinaryType() if types and all(isinstance(t, T.BinaryType) for t in types) else T.StringType()


def _concat_inputs(types: list[DataType]) -> list[DataType | None]:
    """concat keeps binaries only when every argument is binary; otherwise all become strings."""
    if types and all(isinstance(t, T.BinaryType) for t in types):
        return [None] * len(types)
    return takes("concat", STRING, rest=STRING)(types)


def _like(args: list[str]) -> str:
    text = f"{args[0]} LIKE {args[1]}"
    return text + (f" ESCAPE '{args[2]}'" if len(args) > 2 else "")


def _trim(side: str, name: str) -> Callable[[list[str]], str]:
    def pretty(args: list[str]) -> str:
        if len(args) == 1:
            return f"{name}({args[0]})"
        return f"TRIM({side} {args[1]} FROM {args[0]})"
    return pretty


def _format_number_inputs(types: list[DataType]) -> list[DataType | None]:
    out = check_arguments("format_number", [NUMERIC], types[:1])
    second = types[1]
    if isinstance(second, T.StringType):
        return out + [None]
    return out + check_arguments("format_number", [INT], [second])


unary(["upper", "lower", "ucase", "lcase", "initcap"], STRING, T.StringType())
unary(["length", "char_length", "character_length", "len", "octet_length", "bit_length"], STRING_OR_BINARY,
      T.IntegerType())
unary(["ascii"], STRING, T.IntegerType())
for _name, _side in (("trim", "BOTH"), ("ltrim", "LEADING"), ("rtrim", "TRAILING")):
    register(_name, 1, 2, returns(T.StringType()), takes(_name, STRING, STRING), _trim(_side, _name))
register("btrim", 1, 2, returns(T.StringType()), takes("btrim", STRING, STRING))
for _name in ("substring", "substr"):
    register(_name, 2, 3, lambda types: T.BinaryType() if isinstance(types[0], T.BinaryType) else T.StringType(),
             takes(_name, STRING_OR_BINARY, INT, INT), shown_with_defaults(_name, 3, ("2147483647",)))
register("concat", 0, None, _concat_type, _concat_inputs)
register("concat_ws", 1, None, returns(T.StringType()), takes("concat_ws", STRING, rest=STRING_OR_ARRAY))
register("regexp_replace", 3, 4, returns(T.StringType()), takes("regexp_replace", STRING, STRING, STRING, INT),
         shown_with_defaults("regexp_replace", 4, ("1",)))
register("regexp_extract", 2, 3, returns(T.StringType()), takes("regexp_extract", STRING, STRING, INT),
         shown_with_defaults("regexp_extract", 3, ("1",)))
for _name in ("lpad", "rpad"):
    register(_name, 2, 3, returns(T.StringType()), takes(_name, STRING, INT, STRING),
             shown_with_defaults(_name, 3, (" ",)))
register("instr", 2, 2, returns(T.IntegerType()), takes("instr", STRING, STRING))
for _name in ("locate", "position"):
    register(_name, 2, 3, returns(T.IntegerType()), takes(_name, STRING, STRING, INT),
             shown_with_defaults(_name, 3, ("1",)))
register("reverse", 1, 1, lambda types: types[0] if isinstance(types[0], T.ArrayType) else T.StringType(),
         lambda types: [None] if isinstance(types[0], T.ArrayType) else check_arguments("reverse", [STRING], types))
register("repeat", 2, 2, returns(T.StringType()), takes("repeat", STRING, INT))
register("translate", 3, 3, returns(T.StringType()), takes("translate", STRING, STRING, STRING))
register("split", 2, 3, returns(T.ArrayType(T.StringType())), takes("split", STRING, STRING, INT),
         shown_with_defaults("split", 3, ("-1",)))
for _name in ("startswith", "endswith", "contains"):
    register(_name, 2, 2, returns(T.BooleanType()), takes(_name, STRING, STRING))
register("like", 2, 3, returns(T.BooleanType()), takes("like", STRING, STRING, STRING), _like)
register("ilike", 2, 3, returns(T.BooleanType()), takes("ilike", STRING, STRING, STRING))
for _name, _shown in (("rlike", "RLIKE"), ("regexp", "REGEXP"), ("regexp_like", "REGEXP_LIKE")):
    register(_name, 2, 2, returns(T.BooleanType()), takes(_name, STRING, STRING), shown_as(_shown))
for _name in ("format_string", "printf"):
    register(_name, 1, None, returns(T.StringType()),
             (lambda n: lambda types: check_arguments(n, [STRING], types[:1]) + [None] * (len(types) - 1))(_name))
register("base64", 1, 1, returns(T.StringType()), takes("base64", BINARY))
register("unbase64", 1, 1, returns(T.BinaryType()), takes("unbase64", STRING))
register("levenshtein", 2, 3, returns(T.IntegerType()), takes("levenshtein", STRING, STRING, INT))
register("soundex", 1, 1, returns(T.StringType()), takes("soundex", STRING))
register("regexp_extract_all", 2, 3, returns(T.ArrayType(T.StringType())),
         takes("regexp_extract_all", STRING, STRING, INT), shown_with_defaults("regexp_extract_all", 3, ("1",)))
register("format_number", 2, 2, returns(T.StringType()), _format_number_inputs)
register("substring_index", 3, 3, returns(T.StringType()), takes("substring_index", STRING, STRING, INT))
register("left", 2, 2, returns(T.StringType()), takes("left", STRING, INT))
register("right", 2, 2, returns(T.StringType()), takes("right", STRING, INT))
register("split_part", 3, 3, returns(T.StringType()), takes("split_part", STRING, STRING, INT))
register("replace", 2, 3, returns(T.StringType()), takes("replace", STRING, STRING, STRING),
         shown_with_defaults("replace", 3, ("",)))

del _name
