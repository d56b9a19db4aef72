"""String functions of `quiver.functions` (F): case, trimming, slicing, concatenation, regex, padding, search,
LIKE, formatting, base64 and distances, with PySpark's signatures."""
from __future__ import annotations

from typing import Any

from quiver.engine.api.column import Column, literal_expr, to_expr
from quiver.engine.api.functions.calls import ColumnOrName, call, column_args
from quiver.engine.core.errors import AnalysisException


def upper(col: ColumnOrName) -> Column:
    """Upper case.

    >>> df.select(F.upper("name")).collect()
    [Row(upper(name)='ALICE'), Row(upper(name)='BOB')]
    """
    return call("upper", to_expr(col))


def lower(col: ColumnOrName) -> Column:
    """Lower case.

    >>> df.select(F.lower("name")).collect()
    [Row(lower(name)='alice'), Row(lower(name)='bob')]
    """
    return call("lower", to_expr(col))


def ucase(str: ColumnOrName) -> Column:  # noqa: A002 — PySpark's parameter name
    """Upper case: `upper` under the name Spark SQL also knows it by (the column is named `ucase(...)`).

    >>> df.select(F.ucase("name")).collect()
    [Row(ucase(name)='ALICE'), Row(ucase(name)='BOB')]
    """
    return call("ucase", to_expr(str))


def lcase(str: ColumnOrName) -> Column:  # noqa: A002
    """Lower case: `lower` under the name Spark SQL also knows it by (the column is named `lcase(...)`).

    >>> df.select(F.lcase("name")).collect()
    [Row(lcase(name)='alice'), Row(lcase(name)='bob')]
    """
    return call("lcase", to_expr(str))


def initcap(col: ColumnOrName) -> Column:
    """First letter of each space-separated word upper case, the rest lower case.

    >>> spark.createDataFrame([("hello wORLD",)], ["s"]).select(F.initcap("s")).collect()
    [Row(initcap(s)='Hello World')]
    """
    return call("initcap", to_expr(col))


def _trim(name: str, col: ColumnOrName, trim: ColumnOrName | None) -> Column:
    return call(name, to_expr(col)) if trim is None else call(name, to_expr(col), to_expr(trim))


def trim(col: ColumnOrName, trim: ColumnOrName | None = None) -> Column:
    """Strip spaces (or the characters of `trim`, a column or name) from both ends.

    >>> spark.createDataFrame([("  hi  ",)], ["s"]).select(F.trim("s").alias("t")).collect()
    [Row(t='hi')]
    """
    return _trim("trim", col, trim)


def ltrim(col: ColumnOrName, trim: ColumnOrName | None = None) -> Column:
    """Strip spaces (or the characters of `trim`, a literal such as `F.lit("x")` or a column of them per row) from
    the start of the string.

    >>> spark.createDataFrame([("  hi  ",)], ["s"]).select(F.ltrim("s").alias("t")).collect()
    [Row(t='hi  ')]
    >>> spark.createDataFrame([("xxhixx",)], ["s"]).select(F.ltrim("s", F.lit("x")).alias("t")).collect()
    [Row(t='hixx')]
    """
    return _trim("ltrim", col, trim)


def rtrim(col: ColumnOrName, trim: ColumnOrName | None = None) -> Column:
    """Strip spaces (or the characters of `trim`, a literal such as `F.lit("x")` or a column of them per row) from
    the end of the string.

    >>> spark.createDataFrame([("  hi  ",)], ["s"]).select(F.rtrim("s").alias("t")).collect()
    [Row(t='  hi')]
    >>> spark.createDataFrame([("xxhixx",)], ["s"]).select(F.rtrim("s", F.lit("x")).alias("t")).collect()
    [Row(t='xxhi')]
    """
    return _trim("rtrim", col, trim)


def btrim(str: ColumnOrName, trim: ColumnOrName | None = None) -> Column:  # noqa: A002
    """Strip spaces (or the characters of `trim`, a literal or a column of them per row) from both ends of the
    string: `trim` under Spark SQL's other name.

    >>> spark.createDataFrame([("  hi  ",)], ["s"]).select(F.btrim("s")).collect()
    [Row(btrim(s)='hi')]
    >>> spark.createDataFrame([("xxhixx",)], ["s"]).select(F.btrim("s", F.lit("x"))).collect()
    [Row(btrim(s, x)='hi')]
    """
    return _trim("btrim", str, trim)


def length(col: ColumnOrName) -> Column:
    """Characters of a string, bytes of a binary.

    >>> df.select(F.length("name")).collect()
    [Row(length(name)=5), Row(length(name)=3)]
    """
    return call("length", to_expr(col))


def char_length(str: ColumnOrName) -> Column:  # noqa: A002
    """Characters of a string (bytes of a binary): `length` under the name Spark SQL also knows it by.

    >>> df.select(F.char_length("name")).collect()
    [Row(char_length(name)=5), Row(char_length(name)=3)]
    """
    return call("char_length", to_expr(str))


def character_length(str: ColumnOrName) -> Column:  # noqa: A002
    """Characters of a string (bytes of a binary): `length` under the name Spark SQL also knows it by.

    >>> df.select(F.character_length("name")).collect()
    [Row(character_length(name)=5), Row(character_length(name)=3)]
    """
    return call("character_length", to_expr(str))


def octet_length(col: ColumnOrName) -> Column:
    """Bytes of a string in UTF-8 (or of a binary), where `length` counts characters.

    >>> spark.createDataFrame([("é",)], ["s"]).select(F.octet_length("s"), F.length("s")).collect()
    [Row(octet_length(s)=2, length(s)=1)]
    """
    return call("octet_length", to_expr(col))


def bit_length(col: ColumnOrName) -> Column:
    """Bits of a string in UTF-8 (or of a binary): 8 times `octet_length`.

    >>> spark.createDataFrame([("é",)], ["s"]).select(F.bit_length("s")).collect()
    [Row(bit_length(s)=16)]
    """
    return call("bit_length", to_expr(col))


def ascii(col: ColumnOrName) -> Column:  # noqa: A001 — PySpark's name
    """Code point of the first character.

    >>> df.select(F.ascii("name")).collect()
    [Row(ascii(name)=65), Row(ascii(name)=66)]
    """
    return call("ascii", to_expr(col))


def substring(str: ColumnOrName, pos: ColumnOrName | int, len: ColumnOrName | int) -> Column:  # noqa: A002
    """`len` characters from 1-based `pos` (0 acts as 1; negative counts from the end).

    >>> df.select(F.substring("name", 1, 3).alias("s")).collect()
    [Row(s='Ali'), Row(s='Bob')]
    """
    return call("substring", to_expr(str), to_expr(pos), to_expr(len))


def substr(str: ColumnOrName, pos: ColumnOrName, len: ColumnOrName | None = None) -> Column:  # noqa: A002
    """substring with column (or name) arguments; without `len`, to the end.

    >>> df.select(F.substr("name", F.lit(2), F.lit(2)).alias("s")).collect()
    [Row(s='li'), Row(s='ob')]
    """
    if len is None:
        return call("substr", to_expr(str), to_expr(pos))
    return call("substr", to_expr(str), to_expr(pos), to_expr(len))


def concat(*cols: ColumnOrName) -> Column:
    """Concatenation; null if any argument is null.

    >>> df.select(F.concat("name", F.lit("!")).alias("c")).collect()
    [Row(c='Alice!'), Row(c='Bob!')]
    """
    return call("concat", *column_args("concat", cols))


def concat_ws(sep: str, *cols: ColumnOrName) -> Column:
    """Join with `sep`, skipping nulls.

    >>> df.select(F.concat_ws("-", "name", "age").alias("c")).collect()
    [Row(c='Alice-2'), Row(c='Bob-5')]
    """
    return call("concat_ws", literal_expr(sep), *column_args("concat_ws", cols))


def regexp_replace(string: ColumnOrName, pattern: str | Column, replacement: str | Column,
                   position: Column | int | None = None) -> Column:
    """Replace every match of a Java regex; `$1` in the replacement is group 1.

    >>> df.select(F.regexp_replace("name", "(l|o)", "<$1>").alias("r")).collect()
    [Row(r='A<l>ice'), Row(r='B<o>b')]
    """
    args = [to_expr(string), literal_expr(pattern), literal_expr(replacement)]
    if position is not None:
        args.append(literal_expr(position))
    return call("regexp_replace", *args)


def regexp_extract(str: ColumnOrName, pattern: str, idx: int) -> Column:  # noqa: A002
    """Group `idx` of the first match of a Java regex, '' when it does not match.

    >>> df.select(F.regexp_extract("name", "([a-z]+)e", 1).alias("r")).collect()
    [Row(r='lic'), Row(r='')]
    """
    return call("regexp_extract", to_expr(str), literal_expr(pattern), literal_expr(idx))


def lpad(col: ColumnOrName, len: Column | int, pad: Column | str) -> Column:  # noqa: A002
    """Left-pad with `pad` (or cut) to `len` characters.

    >>> df.select(F.lpad("name", 6, "*").alias("p")).collect()
    [Row(p='*Alice'), Row(p='***Bob')]
    """
    return call("lpad", to_expr(col), literal_expr(len), literal_expr(pad))


def rpad(col: ColumnOrName, len: Column | int, pad: Column | str) -> Column:  # noqa: A002
    """Right-pad with `pad` (or cut) to `len` characters.

    >>> df.select(F.rpad("name", 6, "*").alias("p")).collect()
    [Row(p='Alice*'), Row(p='Bob***')]
    """
    return call("rpad", to_expr(col), literal_expr(len), literal_expr(pad))


def instr(str: ColumnOrName, substr: Column | str, start: Any = None, occurrence: Any = None) -> Column:  # noqa: A002
    """1-based position of `substr` (a literal) in the string, 0 if absent.

    >>> df.select(F.instr("name", "b").alias("i")).collect()
    [Row(i=0), Row(i=3)]
    """
    if start is not None or occurrence is not None:
        raise AnalysisException("instr: the start and occurrence arguments are not supported; "
                                "use locate(substr, str, pos) to search from a position")
    return call("instr", to_expr(str), literal_expr(substr))


def locate(substr: str, str: ColumnOrName, pos: int = 1) -> Column:  # noqa: A002
    """1-based position of `substr` in the string at or after `pos`, 0 if absent.

    >>> df.select(F.locate("o", "name").alias("i")).collect()
    [Row(i=0), Row(i=2)]
    """
    return call("locate", literal_expr(substr), to_expr(str), literal_expr(pos))


def reverse(col: ColumnOrName) -> Column:
    """A string's characters, or an array's elements, reversed.

    >>> df.select(F.reverse("name").alias("r")).collect()
    [Row(r='ecilA'), Row(r='boB')]
    """
    return call("reverse", to_expr(col))


def repeat(col: ColumnOrName, n: ColumnOrName | int) -> Column:
    """The string repeated n times.

    >>> df.select(F.repeat("name", 2).alias("r")).collect()
    [Row(r='AliceAlice'), Row(r='BobBob')]
    """
    return call("repeat", to_expr(col), to_expr(n))


def translate(srcCol: ColumnOrName, matching: str, replace: str) -> Column:  # noqa: N803 — PySpark's name
    """Replace characters of `matching` by the same-position characters of `replace`.

    >>> df.select(F.translate("name", "ic", "IC").alias("t")).collect()
    [Row(t='AlICe'), Row(t='Bob')]
    """
    return call("translate", to_expr(srcCol), literal_expr(matching), literal_expr(replace))


def split(str: ColumnOrName, pattern: Column | str, limit: ColumnOrName | int = -1) -> Column:  # noqa: A002
    """Split around matches of a Java regex into array<string>.

    >>> spark.createDataFrame([("a1b22c",)], ["s"]).select(F.split("s", "[0-9]+").alias("p")).collect()
    [Row(p=['a', 'b', 'c'])]
    """
    return call("split", to_expr(str), literal_expr(pattern), to_expr(limit))


def startswith(str: ColumnOrName, prefix: ColumnOrName) -> Column:  # noqa: A002
    """Whether the string (or binary) begins with `prefix`. Both are columns or names, as in PySpark: a fixed prefix
    is `F.lit("...")`. Null if either is null.

    >>> df.select(F.startswith("name", F.lit("Al")).alias("al")).collect()
    [Row(al=True), Row(al=False)]
    """
    return call("startswith", to_expr(str), to_expr(prefix))


def endswith(str: ColumnOrName, suffix: ColumnOrName) -> Column:  # noqa: A002
    """Whether the string (or binary) ends with `suffix`. Both are columns or names, as in PySpark: a fixed suffix is
    `F.lit("...")`. Null if either is null.

    >>> df.select(F.endswith("name", F.lit("ob")).alias("ob")).collect()
    [Row(ob=False), Row(ob=True)]
    """
    return call("endswith", to_expr(str), to_expr(suffix))


def contains(left: ColumnOrName, right: ColumnOrName) -> Column:
    """Whether `right` occurs in `left` (strings or binaries). Both are columns or names, as in PySpark: a fixed
    substring is `F.lit("...")`. Null if either is null.

    >>> df.select(F.contains("name", F.lit("li")).alias("li")).collect()
    [Row(li=True), Row(li=False)]
    """
    return call("contains", to_expr(left), to_expr(right))


def like(str: ColumnOrName, pattern: ColumnOrName, escapeChar: Column | None = None) -> Column:  # noqa: A002,N803
    """SQL LIKE; `pattern` is a column or name (use F.lit for a fixed pattern).

    >>> df.select("name", F.like("name", F.lit("A%")).alias("a")).collect()
    [Row(name='Alice', a=True), Row(name='Bob', a=False)]
    """
    args = [to_expr(str), to_expr(pattern)] + ([literal_expr(escapeChar)] if escapeChar is not None else [])
    return call("like", *args)


def ilike(str: ColumnOrName, pattern: ColumnOrName, escapeChar: Column | None = None) -> Column:  # noqa: A002,N803
    """Case-insensitive SQL LIKE (`%` any characters, `_` one character); `pattern` is a column or name (use F.lit
    for a fixed pattern), `escapeChar` the escape character (default backslash).

    >>> df.select(F.ilike("name", F.lit("a%")).alias("a")).collect()
    [Row(a=True), Row(a=False)]
    """
    args = [to_expr(str), to_expr(pattern)] + ([literal_expr(escapeChar)] if escapeChar is not None else [])
    return call("ilike", *args)


def rlike(str: ColumnOrName, regexp: ColumnOrName) -> Column:  # noqa: A002
    """Whether a Java regular expression matches anywhere in the string; `regexp` is a column or name (use F.lit for
    a fixed pattern).

    >>> df.select(F.rlike("name", F.lit("^B")).alias("b")).collect()
    [Row(b=False), Row(b=True)]
    """
    return call("rlike", to_expr(str), to_expr(regexp))


def regexp(str: ColumnOrName, regexp: ColumnOrName) -> Column:  # noqa: A002
    """Whether a Java regular expression matches anywhere in the string: `rlike` under Spark SQL's other name.

    >>> df.select(F.regexp("name", F.lit("^B")).alias("b")).collect()
    [Row(b=False), Row(b=True)]
    """
    return call("regexp", to_expr(str), to_expr(regexp))


def regexp_like(str: ColumnOrName, regexp: ColumnOrName) -> Column:  # noqa: A002
    """Whether a Java regular expression matches anywhere in the string: `rlike` under Spark SQL's other name.

    >>> df.select(F.regexp_like("name", F.lit("^B")).alias("b")).collect()
    [Row(b=False), Row(b=True)]
    """
    return call("regexp_like", to_expr(str), to_expr(regexp))


def format_string(format: str, *cols: ColumnOrName) -> Column:  # noqa: A002
    """printf-style formatting (Java's Formatter: %s, %d, %5.2f, %x, %%).

    >>> df.select(F.format_string("%s is %d", "name", "age").alias("s")).collect()
    [Row(s='Alice is 2'), Row(s='Bob is 5')]
    """
    return call("format_string", literal_expr(format), *column_args("format_string", cols))


def printf(format: ColumnOrName, *cols: ColumnOrName) -> Column:  # noqa: A002
    """printf-style formatting (Java's Formatter: %s, %d, %5.2f, %x, %%) of `cols`; unlike `format_string`, the
    format is a column or name (use F.lit for a fixed format).

    >>> df.select(F.printf(F.lit("%s is %d"), "name", "age").alias("s")).collect()
    [Row(s='Alice is 2'), Row(s='Bob is 5')]
    """
    return call("printf", to_expr(format), *column_args("printf", cols))


def base64(col: ColumnOrName) -> Column:
    """The Base64 text of a binary (or of a string's UTF-8 bytes), for carrying bytes as text.

    >>> df.select(F.base64("name")).collect()
    [Row(base64(name)='QWxpY2U='), Row(base64(name)='Qm9i')]
    """
    return call("base64", to_expr(col))


def unbase64(col: ColumnOrName) -> Column:
    """The bytes that Base64 text spells, as a binary: the inverse of `base64`.

    >>> df.select(F.unbase64(F.base64("name")).alias("b")).collect()
    [Row(b=b'Alice'), Row(b=b'Bob')]
    """
    return call("unbase64", to_expr(col))


def levenshtein(left: ColumnOrName, right: ColumnOrName, threshold: int | None = None) -> Column:
    """Edit distance; with a threshold, -1 where the distance is above it.

    >>> spark.createDataFrame([("kitten", "sitting")], ["a", "b"]).select(F.levenshtein("a", "b").alias("d")).collect()
    [Row(d=3)]
    """
    args = [to_expr(left), to_expr(right)] + ([literal_expr(threshold)] if threshold is not None else [])
    return call("levenshtein", *args)


def soundex(col: ColumnOrName) -> Column:
    """The Soundex code of the string (a letter and three digits), so names that sound alike compare equal.

    >>> df.select(F.soundex("name")).collect()
    [Row(soundex(name)='A420'), Row(soundex(name)='B100')]
    """
    return call("soundex", to_expr(col))


def regexp_extract_all(str: ColumnOrName, regexp: ColumnOrName, idx: int | Column | None = None) -> Column:  # noqa: A002
    """Group `idx` (default 1) of every match of a Java regex, as array<string>.

    >>> frame = spark.createDataFrame([("a1 b22 c333",)], ["s"])
    >>> frame.select(F.regexp_extract_all("s", F.lit("[a-z]([0-9]+)")).alias("n")).collect()
    [Row(n=['1', '22', '333'])]
    """
    args = [to_expr(str), to_expr(regexp)] + ([literal_expr(idx)] if idx is not None else [])
    return call("regexp_extract_all", *args)


def format_number(col: ColumnOrName, d: int) -> Column:
    """The number with thousands separators and `d` decimal places (HALF_EVEN), e.g. '1,234.50'.

    >>> spark.createDataFrame([(1234.5,)], ["v"]).select(F.format_number("v", 2).alias("f")).collect()
    [Row(f='1,234.50')]
    """
    return call("format_number", to_expr(col), literal_expr(d))


def substring_index(str: ColumnOrName, delim: str, count: int) -> Column:  # noqa: A002
    """The part before the count-th `delim` (from the end when count is negative).

    >>> frame = spark.createDataFrame([("a.b.c",)], ["s"])
    >>> frame.select(F.substring_index("s", ".", 2).alias("i"), F.substring_index("s", ".", -1).alias("j")).collect()
    [Row(i='a.b', j='c')]
    """
    return call("substring_index", to_expr(str), literal_expr(delim), literal_expr(count))


def left(str: ColumnOrName, len: ColumnOrName) -> Column:  # noqa: A002
    """The leftmost `len` characters of the string (all of it when shorter, '' for `len` <= 0); `len` is a column or
    name, as in PySpark (use F.lit for a fixed length).

    >>> df.select(F.left("name", F.lit(3)).alias("l")).collect()
    [Row(l='Ali'), Row(l='Bob')]
    """
    return call("left", to_expr(str), to_expr(len))


def right(str: ColumnOrName, len: ColumnOrName) -> Column:  # noqa: A002
    """The rightmost `len` characters of the string (all of it when shorter, '' for `len` <= 0); `len` is a column or
    name, as in PySpark (use F.lit for a fixed length).

    >>> df.select(F.right("name", F.lit(2)).alias("r")).collect()
    [Row(r='ce'), Row(r='ob')]
    """
    return call("right", to_expr(str), to_expr(len))


def split_part(src: ColumnOrName, delimiter: ColumnOrName, partNum: ColumnOrName) -> Column:  # noqa: N803
    """The partNum-th (from 1; negative counts from the end) piece of splitting on a literal delimiter.

    >>> spark.createDataFrame([("a,b,c",)], ["s"]).select(F.split_part("s", F.lit(","), F.lit(2)).alias("p")).collect()
    [Row(p='b')]
    """
    return call("split_part", to_expr(src), to_expr(delimiter), to_expr(partNum))


def replace(src: ColumnOrName, search: ColumnOrName, replace: ColumnOrName | None = None) -> Column:
    """Every occurrence of the string `search` in `src` replaced by `replace` (removed without it); no regular
    expressions, unlike `regexp_replace`. The arguments are columns or names (use F.lit for fixed strings).

    >>> df.select(F.replace("name", F.lit("l"), F.lit("L")).alias("r")).collect()
    [Row(r='ALice'), Row(r='Bob')]
    >>> df.select(F.replace("name", F.lit("l")).alias("r")).collect()
    [Row(r='Aice'), Row(r='Bob')]
    """
    args = [to_expr(src), to_expr(search)] + ([to_expr(replace)] if replace is not None else [])
    return call("replace", *args)


__all__ = [
    "upper", "lower", "ucase", "lcase", "initcap", "trim", "ltrim", "rtrim", "btrim", "length", "char_length",
    "character_length", "octet_length", "bit_length", "ascii", "substring", "substr", "concat", "concat_ws",
    "regexp_replace", "regexp_extract", "lpad", "rpad", "instr", "locate", "reverse", "repeat", "translate",
    "split", "startswith", "endswith", "contains", "like", "ilike", "rlike", "regexp", "regexp_like",
    "format_string", "printf", "base64", "unbase64", "levenshtein", "soundex", "regexp_extract_all",
    "format_number", "substring_index", "left", "right", "split_part", "replace",
]
