"""CPU kernels for Spark's scalar functions, vectorised on pyarrow.compute and numpy.

Calling convention: `KERNELS[name](args, result_type)`, where each argument is a
`pa.Array` (a column) or a `pa.Scalar` (a literal), already cast to the types the
catalog asked for. A kernel returns an array, or a scalar when every argument is a
scalar (constant folding). Arguments Spark requires to be constant (a regex, a format,
a scale) are read with `.as_py()`; given as a column they are evaluated once per
distinct value. Nulls propagate unless Spark says otherwise (coalesce, concat_ws, nvl2).
"""
from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from typing import Any, Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from quiver.engine import types as T
from quiver.engine.errors import QuiverError
from quiver.executors import datetime_format as dtf
from quiver.executors.cast import cast_array, round_decimal

Value = pa.Array | pa.Scalar
Kernel = Callable[[Sequence[Value], T.DataType], Value]

KERNELS: dict[str, Kernel] = {}


def kernel(*names: str, data: tuple[int, ...] | str = (0,)) -> Callable[[Callable], Callable]:
    """Register a kernel under `names`; `data` lists the argument positions that hold values.

    When every argument is a literal the value arguments are lifted to one-row arrays,
    the kernel runs once and the single result comes back as a scalar.
    """
    def register(fn: Callable[[list[Value], T.DataType], Value]) -> Callable:
        def run(args: Sequence[Value], result_type: T.DataType) -> Value:
            args = [a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a for a in args]
            if all(isinstance(a, pa.Scalar) for a in args):
                lifted = [
                    pa.array([a.as_py()], a.type) if (data == "all" or i in data) else a
                    for i, a in enumerate(args)
                ]
                out = fn(lifted, result_type)
                return out[0] if isinstance(out, (pa.Array, pa.ChunkedArray)) else out
            return fn(list(args), result_type)

        run.__name__ = fn.__name__
        run.__doc__ = fn.__doc__
        for n in names:
            KERNELS[n] = run
        return fn
    return register


# ---------------------------------------------------------------- helpers

def _constant(arg: Value, function: str, what: str) -> Any:
    """The value of an argument Spark requires to be a literal."""
    if isinstance(arg, pa.Scalar):
        return arg.as_py()
    raise QuiverError(f"{function}: the {what} must be a literal value, not a column")


def _null(t: pa.DataType) -> pa.Scalar:
    return pa.scalar(None, t)


def _length_of(args: Sequence[Value]) -> int:
    return next(len(a) for a in args if isinstance(a, pa.Array))


def _as_array(value: Value, length: int) -> pa.Array:
    if isinstance(value, pa.Array):
        return value
    return pa.nulls(length, value.type) if not value.is_valid else pa.repeat(value, length)


def _all_null(length: int, t: T.DataType) -> pa.Array:
    return pa.nulls(length, t.to_arrow())


def _mask_null(values: pa.Array, null_where: pa.Array | np.ndarray) -> pa.Array:
    """`values` with nulls where `null_where` is true."""
    mask = pa.array(null_where) if isinstance(null_where, np.ndarray) else pc.fill_null(null_where, False)
    return pc.if_else(mask, _null(values.type), values)


def _per_constant(data: list[pa.Array], params: list[Value], apply: Callable[[list[pa.Array], list[Any]], pa.Array],
                  out_type: pa.DataType) -> pa.Array:
    """Run `apply(data, constants)` once per distinct combination of `params` values.

    Arrow kernels take patterns and widths as constants; when a query passes a column
    there, rows are grouped by its distinct values so each group is still vectorised.
    """
    length = _length_of(list(data) + list(params))
    data = [_as_array(d, length) for d in data]
    if all(isinstance(p, pa.Scalar) for p in params):
        consts = [p.as_py() for p in params]
        if any(v is None for v in consts):
            return pa.nulls(length, out_type)
        return apply(data, consts)
    columns = {f"p{i}": _as_array(p, length) for i, p in enumerate(params)}
    distinct = pa.table(columns).group_by(list(columns), use_threads=False).aggregate([]).to_pylist()
    out = pa.nulls(length, out_type)
    for combo in distinct:
        rows = pa.array(np.ones(length, dtype=bool))
        for name, value in combo.items():
            col = columns[name]
            rows = pc.and_(rows, pc.is_null(col) if value is None else pc.fill_null(pc.equal(col, pa.scalar(value, col.type)), False))
        if any(v is None for v in combo.values()):
            continue
        part = apply([d.filter(rows) for d in data], list(combo.values()))
        out = pc.replace_with_mask(out, rows, part.cast(out_type))
    return out


def _utf8_buffers(strings: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, bytes) of a utf8 array, as numpy views (no copy)."""
    strings = strings.cast(pa.string())
    offsets = np.frombuffer(strings.buffers()[1], dtype=np.int32)[strings.offset: strings.offset + len(strings) + 1]
    data_buffer = strings.buffers()[2]
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    return offsets, data


def _chars_before(strings: pa.Array, byte_index: np.ndarray) -> np.ndarray:
    """Characters (code points) in the first `byte_index` bytes of each string."""
    offsets, data = _utf8_buffers(strings)
    lead = np.concatenate([[0], np.cumsum((data & 0xC0) != 0x80)])
    start = offsets[:-1]
    return lead[start + np.maximum(byte_index, 0)] - lead[start]


# ---------------------------------------------------------------- case mapping

# Characters whose upper/lower/title case is not one code point (ß -> SS) or depends on
# context (final sigma): Arrow's utf8proc maps them one-to-one, Java and Python do not.
_SPECIAL_UPPER = (
    r"[\x{00DF}\x{0149}\x{01F0}\x{0390}\x{03B0}\x{0587}\x{1E96}-\x{1E9A}\x{1F50}\x{1F52}\x{1F54}\x{1F56}"
    r"\x{1F80}-\x{1FAF}\x{1FB2}-\x{1FB4}\x{1FB6}\x{1FB7}\x{1FBC}\x{1FC2}-\x{1FC4}\x{1FC6}\x{1FC7}\x{1FCC}"
    r"\x{1FD2}\x{1FD3}\x{1FD6}\x{1FD7}\x{1FE2}-\x{1FE4}\x{1FE6}\x{1FE7}\x{1FF2}-\x{1FF4}\x{1FF6}\x{1FF7}"
    r"\x{1FFC}\x{FB00}-\x{FB06}\x{FB13}-\x{FB17}]"
)
_SPECIAL_LOWER = r"[\x{0130}\x{03A3}]"
_SPECIAL_TITLE = _SPECIAL_UPPER[:-1] + r"\x{01C4}-\x{01CC}\x{01F1}-\x{01F3}\x{0130}\x{03A3}]"


def _case_map(strings: pa.Array, arrow_fn: Callable[[pa.Array], pa.Array], python_fn: Callable[[str], str],
              special: str) -> pa.Array:
    """Arrow's case mapping, with the few rows holding special-cased characters mapped by Python."""
    out = arrow_fn(strings)
    mask = pc.fill_null(pc.match_substring_regex(strings, special), False)
    if not pc.any(mask).as_py():
        return out
    fixed = pa.array([python_fn(s) for s in strings.filter(mask).to_pylist()], pa.string())
    return pc.replace_with_mask(out, mask, fixed)


def _upper(strings: pa.Array) -> pa.Array:
    return _case_map(strings, pc.utf8_upper, str.upper, _SPECIAL_UPPER)


def _lower(strings: pa.Array) -> pa.Array:
    return _case_map(strings, pc.utf8_lower, str.lower, _SPECIAL_LOWER)


def _python_initcap(text: str) -> str:
    return " ".join(w[:1].title() + w[1:].lower() for w in text.split(" "))


@kernel("upper", "ucase")
def upper(args: list[Value], rt: T.DataType) -> Value:
    """Upper case with Java's full mappings ('ß' -> 'SS')."""
    return _upper(args[0])


@kernel("lower", "lcase")
def lower(args: list[Value], rt: T.DataType) -> Value:
    """Lower case with Java's full mappings (final sigma, dotted I)."""
    return _lower(args[0])


@kernel("initcap")
def initcap(args: list[Value], rt: T.DataType) -> Value:
    """Title-case each word's first character and lower-case the rest; words split on ' ' only, as Spark."""
    strings = args[0]
    words = pc.split_pattern(strings, " ")
    titled = pc.utf8_capitalize(pc.list_flatten(words))
    rebuilt = pa.ListArray.from_arrays(_offsets(words), titled, mask=words.is_null())
    out = pc.binary_join(rebuilt, " ")
    mask = pc.fill_null(pc.match_substring_regex(strings, _SPECIAL_TITLE), False)
    if pc.any(mask).as_py():
        fixed = pa.array([_python_initcap(s) for s in strings.filter(mask).to_pylist()], pa.string())
        out = pc.replace_with_mask(out, mask, fixed)
    return out


def _offsets(lists: pa.Array) -> pa.Array:
    """Offsets of a list array, rebased to start at 0 (for rebuilding it over new values)."""
    return pc.subtract(lists.offsets, lists.offsets[0])


def _values(lists: pa.Array) -> pa.Array:
    """The values spanned by a (possibly sliced) list array, aligned with `_offsets`."""
    start = lists.offsets[0].as_py()
    return lists.values.slice(start, lists.offsets[-1].as_py() - start)


# ---------------------------------------------------------------- trimming, length, slicing

def _trim_kernel(arrow_fn: Callable, function: str) -> Callable:
    def trim(args: list[Value], rt: T.DataType) -> Value:
        chars = " " if len(args) == 1 else _constant(args[1], function, "trim string")
        if chars is None:
            return _all_null(len(args[0]), rt)
        if chars == "":
            return args[0]
        return arrow_fn(args[0], characters=chars)
    trim.__doc__ = f"{function}: strip spaces (only ' ', as Spark) or the given characters."
    return trim


kernel("trim", "btrim")(_trim_kernel(pc.utf8_trim, "trim"))
kernel("ltrim")(_trim_kernel(pc.utf8_ltrim, "ltrim"))
kernel("rtrim")(_trim_kernel(pc.utf8_rtrim, "rtrim"))


@kernel("length", "char_length", "character_length", "len")
def length(args: list[Value], rt: T.DataType) -> Value:
    """Characters of a string, bytes of a binary."""
    value = args[0]
    if pa.types.is_binary(value.type) or pa.types.is_large_binary(value.type):
        return pc.binary_length(value).cast(pa.int32())
    return pc.utf8_length(value).cast(pa.int32())


@kernel("octet_length")
def octet_length(args: list[Value], rt: T.DataType) -> Value:
    return pc.binary_length(args[0].cast(pa.binary())).cast(pa.int32())


@kernel("bit_length")
def bit_length(args: list[Value], rt: T.DataType) -> Value:
    return pc.multiply(pc.binary_length(args[0].cast(pa.binary())), 8).cast(pa.int32())


@kernel("ascii")
def ascii_(args: list[Value], rt: T.DataType) -> Value:
    """Code point of the first character (0 for ''), decoded from the UTF-8 bytes."""
    strings = args[0].cast(pa.string())
    offsets, data = _utf8_buffers(strings)
    start, end = offsets[:-1], offsets[1:]
    padded = np.concatenate([data, np.zeros(4, np.uint8)])
    b0, b1, b2, b3 = (padded[start + k].astype(np.int64) for k in range(4))
    code = np.where(b0 < 0x80, b0,
           np.where(b0 < 0xE0, ((b0 & 0x1F) << 6) | (b1 & 0x3F),
           np.where(b0 < 0xF0, ((b0 & 0x0F) << 12) | ((b1 & 0x3F) << 6) | (b2 & 0x3F),
                    ((b0 & 0x07) << 18) | ((b1 & 0x3F) << 12) | ((b2 & 0x3F) << 6) | (b3 & 0x3F))))
    code = np.where(end > start, code, 0)
    return pa.array(code.astype(np.int32), pa.int32(), mask=strings.is_null().to_numpy(zero_copy_only=False))


def _slice_bounds(pos: int, count: int | None) -> tuple[int, int | None]:
    """Spark's 1-based substring(pos, len) as a Python slice (pos 0 = 1, negative from the end)."""
    if count is None or count >= 2**31 - 1:
        count = None
    if pos > 0:
        start = pos - 1
    elif pos < 0:
        start = pos
    else:
        start = 0
    if count is None:
        return start, None
    stop = start + count
    if start < 0 and stop >= 0:
        return start, None
    return start, stop


@kernel("substring", "substr")
def substring(args: list[Value], rt: T.DataType) -> Value:
    """1-based substring; a negative position counts from the end, a missing length means 'to the end'."""
    data = args[0]
    binary = pa.types.is_binary(data.type)
    params = args[1:] if len(args) == 3 else [args[1], pa.scalar(2**31 - 1, pa.int32())]

    def apply(d: list[pa.Array], consts: list[Any]) -> pa.Array:
        start, stop = _slice_bounds(consts[0], consts[1])
        if stop is not None and (stop <= start if start >= 0 or stop < 0 else False):
            return pc.if_else(pc.is_valid(d[0]), pa.scalar(b"" if binary else "", d[0].type), _null(d[0].type))
        if binary:
            return pc.binary_slice(d[0], start, stop)
        return pc.utf8_slice_codeunits(d[0], start, stop)
    return _per_constant([data], params, apply, data.type)


@kernel("concat", data="all")
def concat(args: list[Value], rt: T.DataType) -> Value:
    """Concatenation; any null argument makes the result null."""
    if not args:
        return pa.scalar("" if isinstance(rt, T.StringType) else b"", rt.to_arrow())
    if len(args) == 1:
        return args[0]
    return pc.binary_join_element_wise(*args, pa.scalar("" if isinstance(rt, T.StringType) else b"", rt.to_arrow()))


@kernel("concat_ws", data="all")
def concat_ws(args: list[Value], rt: T.DataType) -> Value:
    """Join with a separator, skipping nulls (and null elements of array arguments)."""
    sep, parts = args[0], args[1:]
    length = max((len(a) for a in args if isinstance(a, pa.Array)), default=1)
    if not parts:
        return pc.if_else(pc.is_valid(_as_array(sep, length)), "", _null(pa.string()))
    pieces = []
    for part in parts:
        if pa.types.is_list(part.type) or pa.types.is_large_list(part.type):
            part = _join_list_skipping_nulls(_as_array(part, length), sep)
        pieces.append(part)
    joined = pc.binary_join_element_wise(*pieces, sep, null_handling="skip")
    return _mask_null(joined, pc.is_null(_as_array(sep, length)))


def _join_list_skipping_nulls(lists: pa.Array, sep: Value) -> pa.Array:
    values = pc.list_flatten(lists)
    parents = pc.list_parent_indices(lists).to_numpy(zero_copy_only=False)
    keep = values.is_valid().to_numpy(zero_copy_only=False)
    counts = np.bincount(parents[keep], minlength=len(lists))
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    clean = pa.ListArray.from_arrays(pa.array(offsets), values.filter(pa.array(keep)), mask=lists.is_null())
    joined = pc.binary_join(clean, sep)
    return _mask_null(joined, pa.array(counts == 0))


# ---------------------------------------------------------------- regular expressions

def _java_replacement(replacement: str, function: str) -> str:
    """A java.util.regex replacement ('$1', '\\$') as an RE2 rewrite string ('\\1', '$')."""
    out, i = [], 0
    while i < len(replacement):
        ch = replacement[i]
        if ch == "\\":
            if i + 1 >= len(replacement):
                raise QuiverError(f"{function}: the replacement {replacement!r} ends with a lone backslash")
            nxt = replacement[i + 1]
            out.append("\\\\" if nxt == "\\" else nxt)
            i += 2
        elif ch == "$":
            j = i + 1
            while j < len(replacement) and replacement[j].isdigit():
                j += 1
            if j == i + 1:
                raise QuiverError(f"{function}: '$' in replacement {replacement!r} must be followed by a group number "
                                  "(write '\\$' for a dollar sign)")
            group = int(replacement[i + 1: j])
            if group > 9:
                raise QuiverError(f"{function}: group ${group} in {replacement!r}: only groups 0-9 can be referenced")
            out.append(f"\\{group}")
            i = j
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _regex_error(function: str, pattern: str, err: Exception) -> QuiverError:
    return QuiverError(
        f"{function}: cannot use regular expression {pattern!r}: {err}. Patterns run on RE2, which lacks "
        "Java's lookaround, backreferences and possessive quantifiers"
    )


@kernel("regexp_replace")
def regexp_replace(args: list[Value], rt: T.DataType) -> Value:
    """Replace every match of a Java-style regex, from 1-based `position` on."""
    strings = args[0]
    params = args[1:] + ([pa.scalar(1, pa.int32())] if len(args) < 4 else [])

    def apply(d: list[pa.Array], consts: list[Any]) -> pa.Array:
        pattern, replacement, position = consts
        rewrite = _java_replacement(replacement, "regexp_replace")
        try:
            if position <= 1:
                return pc.replace_substring_regex(d[0], pattern, rewrite)
            head = pc.utf8_slice_codeunits(d[0], 0, position - 1)
            tail = pc.replace_substring_regex(pc.utf8_slice_codeunits(d[0], position - 1), pattern, rewrite)
            return pc.binary_join_element_wise(head, tail, "")
        except pa.ArrowInvalid as err:
            raise _regex_error("regexp_replace", pattern, err) from err
    return _per_constant([strings], params, apply, pa.string())


def _name_groups(pattern: str) -> tuple[str, int]:
    """`pattern` with every capturing group named g1, g2, ... (Arrow's extract needs names), and their count."""
    out, i, count, in_class = [], 0, 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            out.append(pattern[i: i + 2])
            i += 2
            continue
        if in_class:
            if ch == "]":
                in_class = False
        elif ch == "[":
            in_class = True
            out.append(ch)
            i += 1
            if i < len(pattern) and pattern[i] == "^":
                out.append("^")
                i += 1
            if i < len(pattern) and pattern[i] == "]":
                out.append("]")
                i += 1
            continue
        elif ch == "(":
            if pattern.startswith("(?<", i) and not pattern.startswith("(?<=", i) and not pattern.startswith("(?<!", i):
                count += 1
                close = pattern.index(">", i)
                out.append(f"(?P<g{count}>")
                i = close + 1
                continue
            if pattern.startswith("(?P<", i):
                count += 1
                close = pattern.index(">", i)
                out.append(f"(?P<g{count}>")
                i = close + 1
                continue
            if not pattern.startswith("(?", i):
                count += 1
                out.append(f"(?P<g{count}>")
                i += 1
                continue
        out.append(ch)
        i += 1
    return "".join(out), count


@kernel("regexp_extract")
def regexp_extract(args: list[Value], rt: T.DataType) -> Value:
    """Group `idx` (default 1) of the first match; '' when nothing matches."""
    strings = args[0]
    params = args[1:] + ([pa.scalar(1, pa.int32())] if len(args) < 3 else [])

    def apply(d: list[pa.Array], consts: list[Any]) -> pa.Array:
        pattern, idx = consts
        named, groups = _name_groups(pattern)
        if idx < 0 or idx > groups:
            raise QuiverError(f"regexp_extract: the regex {pattern!r} has {groups} groups, "
                              f"so the group index must be between 0 and {groups}, not {idx}")
        try:
            found = pc.extract_regex(d[0], f"(?P<g0>{named})")
        except pa.ArrowInvalid as err:
            raise _regex_error("regexp_extract", pattern, err) from err
        value = found.field(f"g{idx}")
        return pc.if_else(pc.is_valid(d[0]), pc.fill_null(pc.if_else(pc.is_valid(found), value, ""), ""), _null(pa.string()))
    return _per_constant([strings], params, apply, pa.string())


@kernel("rlike", "regexp", "regexp_like")
def rlike(args: list[Value], rt: T.DataType) -> Value:
    """True when the regex matches anywhere in the string (Java's find)."""
    def apply(d: list[pa.Array], consts: list[Any]) -> pa.Array:
        try:
            return pc.match_substring_regex(d[0], consts[0])
        except pa.ArrowInvalid as err:
            raise _regex_error("rlike", consts[0], err) from err
    return _per_constant([args[0]], [args[1]], apply, pa.bool_())


def like_regex(pattern: str, escape: str = "\\") -> str:
    """A SQL LIKE pattern ('%', '_', escape char) as an anchored RE2 regex."""
    out, i = ["(?s)^"], 0
    specials = set(".^$*+?()[]{}|\\")
    while i < len(pattern):
        ch = pattern[i]
        if ch == escape:
            if i + 1 >= len(pattern) or pattern[i + 1] not in ("_", "%", escape):
                raise QuiverError(
                    f"like: the escape character {escape!r} in {pattern!r} must be followed by '_', '%' or itself")
            nxt = pattern[i + 1]
            out.append("\\" + nxt if nxt in specials else nxt)
            i += 2
            continue
        out.append(".*" if ch == "%" else "." if ch == "_" else ("\\" + ch if ch in specials else ch))
        i += 1
    out.append("$")
    return "".join(out)


def _like(args: list[Value], case_insensitive: bool) -> pa.Array:
    strings = _lower(args[0]) if case_insensitive else args[0]
    params = [args[1], args[2] if len(args) > 2 else pa.scalar("\\")]

    def apply(d: list[pa.Array], consts: list[Any]) -> pa.Array:
        pattern = consts[0].lower() if case_insensitive else consts[0]
        return pc.match_substring_regex(d[0], like_regex(pattern, consts[1]))
    return _per_constant([strings], params, apply, pa.bool_())


@kernel("like")
def like(args: list[Value], rt: T.DataType) -> Value:
    """SQL LIKE: '%' any run, '_' one character, '\\' (or ESCAPE) quotes them."""
    return _like(args, False)


@kernel("ilike")
def ilike(args: list[Value], rt: T.DataType) -> Value:
    """Case-insensitive LIKE (both sides lower-cased, as Spark does)."""
    return _like(args, True)


def _substring_test(arrow_fn: Callable, name: str) -> Callable:
    def test(args: list[Value], rt: T.DataType) -> Value:
        def apply(d: list[pa.Array], consts: list[Any]) -> pa.Array:
            return arrow_fn(d[0], consts[0])
        return _per_constant([args[0]], [args[1]], apply, pa.bool_())
    test.__doc__ = f"{name}: substring test; a null pattern gives null."
    return test


kernel("startswith")(_substring_test(pc.starts_with, "startswith"))
kernel("endswith")(_substring_test(pc.ends_with, "endswith"))
kernel("contains")(_substring_test(pc.match_substring, "contains"))


# ---------------------------------------------------------------- padding, search, misc strings

def _pad(args: list[Value], left: bool) -> pa.Array:
    params = [args[1], args[2] if len(args) > 2 else pa.scalar(" ")]

    def apply(d: list[pa.Array], consts: list[Any]) -> pa.Array:
        width, pad = consts
        strings = d[0]
        if width <= 0:
            return pc.if_else(pc.is_valid(strings), "", _null(pa.string()))
        cut = pc.utf8_slice_codeunits(strings, 0, width)
        if pad == "":
            return cut
        needed = pc.subtract(width, pc.utf8_length(cut)).fill_null(0).to_numpy(zero_copy_only=False)
        # only as many distinct pad prefixes as distinct shortfalls; each row takes one
        source = pad * (width // len(pad) + 1)
        lengths, index = np.unique(needed, return_inverse=True)
        prefixes = pc.take(pa.array([source[:n] for n in lengths]), pa.array(index.astype(np.int64)))
        parts = (prefixes, cut) if left else (cut, prefixes)
        return pc.binary_join_element_wise(*parts, "")
    return _per_constant([args[0]], params, apply, pa.string())


@kernel("lpad")
def lpad(args: list[Value], rt: T.DataType) -> Value:
    """Left-pad (or cut) to `len` characters with the repeated pad string."""
    return _pad(args, True)


@kernel("rpad")
def rpad(args: list[Value], rt: T.DataType) -> Value:
    """Right-pad (or cut) to `len` characters with the repeated pad string."""
    return _pad(args, False)


def _find(strings: pa.Array, needle: str) -> np.ndarray:
    """1-based character position of the first occurrence of `needle`, 0 when absent."""
    byte_index = pc.find_substring(strings, needle).fill_null(-1).to_numpy(zero_copy_only=False)
    chars = _chars_before(strings, byte_index)
    return np.where(byte_index >= 0, chars + 1, 0)


@kernel("instr")
def instr(args: list[Value], rt: T.DataType) -> Value:
    """1-based position of `substr` in the string, 0 if absent."""
    def apply(d: list[pa.Array], consts: list[Any]) -> pa.Array:
        return pa.array(_find(d[0], consts[0]).astype(np.int32), pa.int32(), mask=d[0].is_null().to_numpy(zero_copy_only=False))
    return _per_constant([args[0]], [args[1]], apply, pa.int32())


@kernel("locate", "position", data=(1,))
def locate(args: list[Value], rt: T.DataType) -> Value:
    """locate(substr, str, pos): 1-based position of substr at or after pos; 0 if absent or pos < 1."""
    strings = args[1]
    params = [args[0], args[2] if len(args) > 2 else pa.scalar(1, pa.int32())]

    def apply(d: list[pa.Array], consts: list[Any]) -> pa.Array:
        needle, start = consts
        nulls = d[0].is_null().to_numpy(zero_copy_only=False)
        if start < 1:
            return pa.array(np.zeros(len(d[0]), np.int32), pa.int32(), mask=nulls)
        if needle == "":
            return pa.array(np.ones(len(d[0]), np.int32), pa.int32(), mask=nulls)
        found = _find(pc.utf8_slice_codeunits(d[0], start - 1), needle)
        return pa.array(np.where(found > 0, found + start - 1, 0).astype(np.int32), pa.int32(), mask=nulls)
    return _per_constant([strings], params, apply, pa.int32())


@kernel("reverse")
def reverse(args: list[Value], rt: T.DataType) -> Value:
    """Characters of a string, or elements of an array, in reverse order."""
    value = args[0]
    if not pa.types.is_list(value.type):
        return pc.utf8_reverse(value)
    offsets = _offsets(value).to_numpy()
    lengths = np.diff(offsets)
    parents = np.repeat(np.arange(len(value)), lengths)
    positions = np.arange(len(parents))
    order = offsets[parents] + offsets[parents + 1] - 1 - positions
    values = pc.take(_values(value), pa.array(order.astype(np.int64)))
    return pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), values, type=value.type, mask=value.is_null())


@kernel("repeat")
def repeat(args: list[Value], rt: T.DataType) -> Value:
    """The string repeated n times ('' for n <= 0)."""
    count = args[1]
    count = pc.max_element_wise(count.cast(pa.int64()), pa.scalar(0, pa.int64()), skip_nulls=False)
    return pc.binary_repeat(args[0], count)


@kernel("translate")
def translate(args: list[Value], rt: T.DataType) -> Value:
    """Replace each character of `matching` by the same-position one of `replace` (dropped if none)."""
    def apply(d: list[pa.Array], consts: list[Any]) -> pa.Array:
        matching, replace = consts
        mapping: dict[str, str] = {}
        for k, ch in enumerate(matching):
            mapping.setdefault(ch, replace[k] if k < len(replace) else "")
        out = d[0]
        # two passes through private-use placeholders, so a character produced by one
        # mapping is never rewritten by a later one (translate('ab', 'ab', 'ba') = 'ba')
        placeholders = {ch: chr(0xF0000 + k) for k, ch in enumerate(mapping)}
        for ch, ph in placeholders.items():
            out = pc.replace_substring(out, ch, ph)
        for ch, ph in placeholders.items():
            out = pc.replace_substring(out, ph, mapping[ch])
        return out
    return _per_constant([args[0]], args[1:], apply, pa.string())


@kernel("split")
def split(args: list[Value], rt: T.DataType) -> Value:
    """Split around regex matches; limit > 0 caps the pieces, otherwise all are kept."""
    params = [args[1], args[2] if len(args) > 2 else pa.scalar(-1, pa.int32())]

    def apply(d: list[pa.Array], consts: list[Any]) -> pa.Array:
        pattern, limit = consts
        max_splits = limit - 1 if limit > 0 else None
        if pattern == "":
            return _split_chars(d[0], max_splits)
        try:
            return pc.split_pattern_regex(d[0], pattern, max_splits=max_splits)
        except pa.ArrowInvalid as err:
            raise _regex_error("split", pattern, err) from err
    return _per_constant([args[0]], params, apply, pa.list_(pa.string()))


def _split_chars(strings: pa.Array, max_splits: int | None) -> pa.Array:
    """split(s, ''): one element per character ('' stays ['']), the last taking the rest under a limit."""
    marked = pc.replace_substring_regex(strings, "(?s)(.)", "\\1\x00")
    marked = pc.if_else(pc.equal(strings, ""), "", pc.utf8_slice_codeunits(marked, 0, -1))
    pieces = pc.split_pattern(marked, "\x00", max_splits=max_splits)
    values = pc.replace_substring(pc.list_flatten(pieces), "\x00", "")
    return pa.ListArray.from_arrays(_offsets(pieces), values, mask=pieces.is_null())


def _digest(name: str, data: pa.Array) -> pa.Array:
    # Arrow has no digest kernels: hashlib per row (C code, but a Python loop)
    binary = data.cast(pa.binary())
    return pa.array([None if b is None else hashlib.new(name, b).hexdigest() for b in binary.to_pylist()], pa.string())


@kernel("md5")
def md5(args: list[Value], rt: T.DataType) -> Value:
    return _digest("md5", args[0])


@kernel("sha1", "sha")
def sha1(args: list[Value], rt: T.DataType) -> Value:
    return _digest("sha1", args[0])


@kernel("sha2")
def sha2(args: list[Value], rt: T.DataType) -> Value:
    """SHA-2 hex digest; bit length 224/256/384/512 (0 means 256), anything else gives null."""
    def apply(d: list[pa.Array], consts: list[Any]) -> pa.Array:
        bits = 256 if consts[0] == 0 else consts[0]
        if bits not in (224, 256, 384, 512):
            return _all_null(len(d[0]), T.StringType())
        return _digest(f"sha{bits}", d[0])
    return _per_constant([args[0]], [args[1]], apply, pa.string())


# ---------------------------------------------------------------- nulls and conditionals

@kernel("coalesce", "ifnull", "nvl", data="all")
def coalesce(args: list[Value], rt: T.DataType) -> Value:
    """The first non-null argument."""
    if len(args) == 1:
        return args[0]
    return pc.coalesce(*[_typed(a, rt) for a in args])


def _typed(value: Value, rt: T.DataType) -> Value:
    """A null literal (type null) given the result type, so Arrow kernels see matching types."""
    target = rt.to_arrow()
    if value.type == target:
        return value
    if pa.types.is_null(value.type):
        return _null(target) if isinstance(value, pa.Scalar) else pa.nulls(len(value), target)
    return cast_array(value, rt)


@kernel("nvl2", data="all")
def nvl2(args: list[Value], rt: T.DataType) -> Value:
    """`b` where `a` is not null, else `c`."""
    return pc.if_else(pc.is_valid(args[0]), _typed(args[1], rt), _typed(args[2], rt))


@kernel("if", data="all")
def if_(args: list[Value], rt: T.DataType) -> Value:
    """`b` where the condition is true; `c` where it is false or null."""
    condition = pc.fill_null(args[0], False) if not pa.types.is_null(args[0].type) else pa.scalar(False)
    return pc.if_else(condition, _typed(args[1], rt), _typed(args[2], rt))


@kernel("nullif", data="all")
def nullif(args: list[Value], rt: T.DataType) -> Value:
    """Null where a = b (compared in their common type), else a."""
    from quiver.engine.function_catalog import common_type

    a, b = args
    wider = common_type("nullif", [T.from_arrow(a.type), T.from_arrow(b.type)], True)
    if isinstance(wider, T.NullType):
        return _typed(a, rt)
    equal = pc.fill_null(pc.equal(cast_array(a, wider), cast_array(b, wider)), False)
    return pc.if_else(equal, _null(rt.to_arrow()), _typed(a, rt))


@kernel("isnull")
def isnull(args: list[Value], rt: T.DataType) -> Value:
    return pc.is_null(args[0])


@kernel("isnotnull")
def isnotnull(args: list[Value], rt: T.DataType) -> Value:
    return pc.is_valid(args[0])


@kernel("isnan")
def isnan(args: list[Value], rt: T.DataType) -> Value:
    """True for NaN; false for null, as in Spark."""
    value = args[0]
    if pa.types.is_null(value.type):
        return pc.fill_null(pc.is_valid(value), False)
    return pc.fill_null(pc.is_nan(value), False)


@kernel("nanvl", data="all")
def nanvl(args: list[Value], rt: T.DataType) -> Value:
    """`b` where `a` is NaN, else `a`."""
    a, b = (_typed(x, rt) for x in args)
    return pc.if_else(pc.fill_null(pc.is_nan(a), False), b, a)


# ---------------------------------------------------------------- math

@kernel("abs")
def abs_(args: list[Value], rt: T.DataType) -> Value:
    """Absolute value; integer minimums wrap as in Java."""
    return pc.abs(args[0])


def _double(value: Value) -> Value:
    return value.cast(pa.float64())


def _unary_math(fn: Callable[[Value], Value], name: str, domain: Callable[[Value], Value] | None = None) -> Callable:
    def run(args: list[Value], rt: T.DataType) -> Value:
        x = _double(args[0])
        out = fn(x)
        if domain is not None:
            out = _mask_null(out, domain(x))
        return out
    run.__doc__ = f"{name}, on doubles" + (" (null where Spark's domain check fails)" if domain else "")
    return run


def _numpy_math(fn: Callable[[np.ndarray], np.ndarray]) -> Callable[[pa.Array], pa.Array]:
    def run(x: pa.Array) -> pa.Array:
        values = x.fill_null(0.0).to_numpy(zero_copy_only=False)
        with np.errstate(all="ignore"):
            return pa.array(fn(values), pa.float64(), mask=x.is_null().to_numpy(zero_copy_only=False))
    return run


def _not_positive(x: Value) -> Value:
    return pc.less_equal(x, 0.0)


kernel("sqrt")(_unary_math(pc.sqrt, "sqrt"))
kernel("cbrt")(_unary_math(_numpy_math(np.cbrt), "cbrt"))
kernel("exp")(_unary_math(pc.exp, "exp"))
kernel("expm1")(_unary_math(_numpy_math(np.expm1), "expm1"))
kernel("ln")(_unary_math(pc.ln, "ln", _not_positive))
kernel("log10")(_unary_math(pc.log10, "log10", _not_positive))
kernel("log2")(_unary_math(pc.log2, "log2", _not_positive))
kernel("log1p")(_unary_math(pc.log1p, "log1p", lambda x: pc.less_equal(x, -1.0)))
kernel("sin")(_unary_math(pc.sin, "sin"))
kernel("cos")(_unary_math(pc.cos, "cos"))
kernel("tan")(_unary_math(pc.tan, "tan"))
kernel("asin")(_unary_math(pc.asin, "asin"))
kernel("acos")(_unary_math(pc.acos, "acos"))
kernel("atan")(_unary_math(pc.atan, "atan"))
kernel("sinh")(_unary_math(_numpy_math(np.sinh), "sinh"))
kernel("cosh")(_unary_math(_numpy_math(np.cosh), "cosh"))
kernel("tanh")(_unary_math(_numpy_math(np.tanh), "tanh"))
kernel("degrees")(_unary_math(_numpy_math(np.degrees), "degrees"))
kernel("radians")(_unary_math(_numpy_math(np.radians), "radians"))


@kernel("log", data="all")
def log(args: list[Value], rt: T.DataType) -> Value:
    """log(x) is ln(x); log(base, x) = ln(x) / ln(base); null when base or x <= 0."""
    if len(args) == 1:
        x = _double(args[0])
        return _mask_null(pc.ln(x), _not_positive(x))
    base, x = _double(args[0]), _double(args[1])
    out = pc.divide(pc.ln(x), pc.ln(base))
    return _mask_null(out, pc.or_(_not_positive(x), _not_positive(base)))


@kernel("pow", "power", data="all")
def power(args: list[Value], rt: T.DataType) -> Value:
    """Java's Math.pow: unlike C, 1^NaN and (+-1)^(+-inf) are NaN."""
    base, exponent = _double(args[0]), _double(args[1])
    out = pc.power(base, exponent)
    nan_cases = pc.or_(pc.is_nan(exponent),
                       pc.and_(pc.equal(pc.abs(base), 1.0), pc.is_inf(exponent)))
    return pc.if_else(pc.fill_null(nan_cases, False), float("nan"), out)


@kernel("atan2", data="all")
def atan2(args: list[Value], rt: T.DataType) -> Value:
    """atan2(y, x); like Spark, -0.0 arguments count as 0.0."""
    return pc.atan2(pc.add(_double(args[0]), 0.0), pc.add(_double(args[1]), 0.0))


@kernel("hypot", data="all")
def hypot(args: list[Value], rt: T.DataType) -> Value:
    """sqrt(a^2 + b^2) without intermediate overflow, as Java's Math.hypot."""
    length = _length_of(args)
    a, b = (_double(_as_array(x, length)) for x in args)
    values = np.hypot(a.fill_null(0.0).to_numpy(zero_copy_only=False), b.fill_null(0.0).to_numpy(zero_copy_only=False))
    mask = a.is_null().to_numpy(zero_copy_only=False) | b.is_null().to_numpy(zero_copy_only=False)
    return pa.array(values, pa.float64(), mask=mask)


@kernel("signum", "sign")
def signum(args: list[Value], rt: T.DataType) -> Value:
    """-1.0, 0.0 or 1.0 as a double (NaN stays NaN, -0.0 stays -0.0)."""
    x = args[0]
    if pa.types.is_floating(x.type):
        x = x.cast(pa.float64())
        return pc.if_else(pc.equal(x, 0.0), x, pc.sign(x).cast(pa.float64()))
    return pc.sign(x).cast(pa.float64())


def round_half(values: np.ndarray, scale: int, half_even: bool) -> np.ndarray:
    """Round doubles the way Spark does: on their shortest decimal text, HALF_UP (or HALF_EVEN).

    Scaling by 10^scale is exact enough except within a hair of a tie (2.675 is
    2.67499999... in binary yet rounds to 2.68 in Spark); those rows, and extreme scales,
    are redone with Python's decimal on the repr.
    """
    from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal

    with np.errstate(all="ignore"):
        factor = 10.0 ** scale
        scaled = values * factor if scale >= 0 else values / 10.0 ** (-scale)
        magnitude = np.abs(scaled)
        floor = np.floor(magnitude)
        fraction = magnitude - floor
        up = fraction > 0.5
        if half_even:
            up |= (fraction == 0.5) & (np.fmod(floor, 2) == 1)
        else:
            up |= fraction == 0.5
        rounded = np.copysign(floor + up, scaled)
        result = rounded / factor if scale >= 0 else rounded * 10.0 ** (-scale)
        result = result + 0.0  # -0.0 -> 0.0: BigDecimal has no negative zero
    finite = np.isfinite(values)
    near_tie = np.abs(fraction - 0.5) <= 1e-9 * np.maximum(magnitude, 1.0)
    exact_already = magnitude >= 2.0 ** 52
    redo = finite & ~exact_already & (near_tie | (abs(scale) > 22))
    result = np.where(finite & exact_already & (scale >= 0), values, result)
    result = np.where(finite, result, values)
    if redo.any():
        mode = ROUND_HALF_EVEN if half_even else ROUND_HALF_UP
        quantum = Decimal(1).scaleb(-scale)
        for i in np.flatnonzero(redo):
            result[i] = float(Decimal(repr(float(values[i]))).quantize(quantum, rounding=mode)) + 0.0
    return result


def _round(args: list[Value], rt: T.DataType, half_even: bool, function: str) -> Value:
    x = args[0]
    scale = 0 if len(args) < 2 else _constant(args[1], function, "scale")
    if scale is None:
        return _all_null(len(x), rt)
    if isinstance(rt, T.DecimalType):
        src = T.from_arrow(x.type)
        decimal = x if isinstance(src, T.DecimalType) else cast_array(x, T.DecimalType(38, 18))
        wide = decimal.cast(pa.decimal256(min(76, decimal.type.precision + 1), decimal.type.scale))
        mode = "half_to_even" if half_even else "half_towards_infinity"
        if scale < decimal.type.scale:
            wide = pc.round(wide, ndigits=scale, round_mode=mode)
        return round_decimal(wide, rt, mode)
    if isinstance(rt, T.IntegralType):
        return _round_integral(x, rt, scale, half_even)
    values = x.cast(pa.float64()).fill_null(0.0).to_numpy(zero_copy_only=False)
    out = round_half(values, scale, half_even)
    return pa.array(out, pa.float64(), mask=x.is_null().to_numpy(zero_copy_only=False)).cast(rt.to_arrow())


def _round_integral(x: pa.Array, rt: T.DataType, scale: int, half_even: bool) -> pa.Array:
    """Integers rounded to 10^-scale; like Spark's BigDecimal path, results wrap to the type."""
    if scale >= 0:
        return x
    values = x.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    if -scale > 19:
        out = np.zeros_like(values)
    else:
        step = np.uint64(10 ** (-scale))
        negative = values < 0
        magnitude = np.where(negative, (~values.view(np.uint64)) + np.uint64(1), values.view(np.uint64))
        quotient, remainder = magnitude // step, magnitude % step
        twice = remainder * np.uint64(2)
        up = (twice > step) | ((twice == step) & ((quotient % np.uint64(2) == 1) if half_even else True))
        rounded = (quotient + up.astype(np.uint64)) * step
        out = np.where(negative, (~rounded) + np.uint64(1), rounded).view(np.int64)
    width = {T.ByteType: np.int8, T.ShortType: np.int16, T.IntegerType: np.int32, T.LongType: np.int64}[type(rt)]
    return pa.array(out.astype(width), rt.to_arrow(), mask=x.is_null().to_numpy(zero_copy_only=False))


@kernel("round")
def round_(args: list[Value], rt: T.DataType) -> Value:
    """HALF_UP rounding to `scale` places (negative scales round left of the point)."""
    return _round(args, rt, False, "round")


@kernel("bround")
def bround(args: list[Value], rt: T.DataType) -> Value:
    """HALF_EVEN (banker's) rounding to `scale` places."""
    return _round(args, rt, True, "bround")


def _floor_ceil(args: list[Value], rt: T.DataType, up: bool, function: str) -> Value:
    x = args[0]
    if len(args) > 1:
        scale = _constant(args[1], function, "scale")
        src = T.from_arrow(x.type)
        if isinstance(src, T.IntegralType):
            decimal = cast_array(x, T.decimal_for_integral(src))
        elif isinstance(src, T.DecimalType):
            decimal = x
        else:
            decimal = cast_array(x, T.DecimalType(30, 15))
        wide = decimal.cast(pa.decimal256(min(76, decimal.type.precision + 1), decimal.type.scale))
        if scale < decimal.type.scale:
            wide = pc.round(wide, ndigits=scale, round_mode="up" if up else "down")
        return round_decimal(wide, rt, "up" if up else "down")
    if isinstance(rt, T.DecimalType):
        wide = x.cast(pa.decimal256(x.type.precision + 1, x.type.scale))
        return round_decimal(pc.ceil(wide) if up else pc.floor(wide), rt, "up" if up else "down")
    if pa.types.is_integer(x.type):
        return x.cast(pa.int64())
    return cast_array(pc.ceil(x) if up else pc.floor(x), T.LongType())


@kernel("floor")
def floor(args: list[Value], rt: T.DataType) -> Value:
    """Largest integer <= x, as bigint (NaN -> 0, saturating), or a decimal."""
    return _floor_ceil(args, rt, False, "floor")


@kernel("ceil", "ceiling")
def ceil(args: list[Value], rt: T.DataType) -> Value:
    """Smallest integer >= x, as bigint (NaN -> 0, saturating), or a decimal."""
    return _floor_ceil(args, rt, True, "ceil")


def _extreme(args: list[Value], rt: T.DataType, greatest: bool) -> Value:
    values = [_typed(a, rt) for a in args]
    floating = pa.types.is_floating(rt.to_arrow())
    result = values[0]
    for value in values[1:]:
        better = pc.greater(value, result) if greatest else pc.less(value, result)
        if floating:
            # Spark orders NaN above every number
            nan_v, nan_r = pc.is_nan(value), pc.is_nan(result)
            if greatest:
                better = pc.or_(better, pc.and_(nan_v, pc.invert(nan_r)))
            else:
                better = pc.or_(better, pc.and_(nan_r, pc.invert(nan_v)))
        take_new = pc.or_kleene(pc.is_null(result), pc.fill_null(better, False))
        take_new = pc.and_(take_new, pc.is_valid(value))
        result = pc.if_else(take_new, value, result)
    return result


@kernel("greatest", data="all")
def greatest(args: list[Value], rt: T.DataType) -> Value:
    """Largest non-null argument (NaN counts as largest)."""
    return _extreme(args, rt, True)


@kernel("least", data="all")
def least(args: list[Value], rt: T.DataType) -> Value:
    """Smallest non-null argument."""
    return _extreme(args, rt, False)


# ---------------------------------------------------------------- dates and times

def _as_date(value: pa.Array) -> pa.Array:
    return value if pa.types.is_date32(value.type) else cast_array(value, T.DateType())


def _as_timestamp(value: pa.Array) -> pa.Array:
    return value if value.type == pa.timestamp("us") else cast_array(value, T.TimestampType())


def _int32(value: pa.Array) -> pa.Array:
    return value.cast(pa.int32())


def _field(name: str, fn: Callable[[pa.Array], pa.Array], of: Callable[[pa.Array], pa.Array]) -> None:
    def run(args: list[Value], rt: T.DataType) -> Value:
        return _int32(fn(of(args[0])))
    run.__doc__ = f"{name}: a calendar field as int."
    kernel(name)(run)


for _name, _fn in (("year", pc.year), ("month", pc.month), ("dayofmonth", pc.day), ("day", pc.day),
                   ("dayofyear", pc.day_of_year), ("quarter", pc.quarter), ("weekofyear", pc.iso_week),
                   ("weekday", pc.day_of_week)):
    _field(_name, _fn, _as_date)
_field("dayofweek", lambda d: pc.day_of_week(d, count_from_zero=False, week_start=7), _as_date)
_field("hour", pc.hour, _as_timestamp)
_field("minute", pc.minute, _as_timestamp)
_field("second", pc.second, _as_timestamp)


def _days(dates: pa.Array) -> np.ndarray:
    return _as_date(dates).cast(pa.int32()).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)


def _date_result(days: np.ndarray, *sources: Value) -> pa.Array:
    mask = np.zeros(len(days), dtype=bool)
    for s in sources:
        if isinstance(s, pa.Array):
            mask |= s.is_null().to_numpy(zero_copy_only=False)
        elif not s.is_valid:
            mask[:] = True
    return pa.array(days.astype(np.int32), pa.date32(), mask=mask)


@kernel("last_day")
def last_day(args: list[Value], rt: T.DataType) -> Value:
    """The last day of the date's month."""
    year, month, _ = dtf.civil_from_days(_days(args[0]))
    last = dtf.days_from_civil(year, month, dtf.days_in_month(year, month))
    return _date_result(last, args[0])


def _shift_days(args: list[Value], sign: int) -> pa.Array:
    length = _length_of(args)
    dates = _as_array(args[0], length)
    count = _as_array(args[1], length)
    offset = count.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    return _date_result(_days(dates) + sign * offset, dates, count)


@kernel("date_add", "dateadd", data="all")
def date_add(args: list[Value], rt: T.DataType) -> Value:
    """The date `days` days later."""
    return _shift_days(args, 1)


@kernel("date_sub", data="all")
def date_sub(args: list[Value], rt: T.DataType) -> Value:
    """The date `days` days earlier."""
    return _shift_days(args, -1)


@kernel("datediff", "date_diff", data="all")
def datediff(args: list[Value], rt: T.DataType) -> Value:
    """Days from `start` to `end` (end - start)."""
    end, start = (_as_date(a) if isinstance(a, pa.Array) else cast_array(a, T.DateType()) for a in args)
    return pc.subtract(end.cast(pa.int32()), start.cast(pa.int32()))


@kernel("add_months", data="all")
def add_months(args: list[Value], rt: T.DataType) -> Value:
    """The date `n` months later, clamped to the end of a shorter month (Jan 31 + 1 = Feb 29)."""
    length = _length_of(args)
    dates, count = _as_array(args[0], length), _as_array(args[1], length)
    year, month, day = dtf.civil_from_days(_days(dates))
    total = year * 12 + (month - 1) + count.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    new_year, new_month = np.floor_divide(total, 12), total % 12 + 1
    new_day = np.minimum(day, dtf.days_in_month(new_year, new_month))
    return _date_result(dtf.days_from_civil(new_year, new_month, new_day), dates, count)


@kernel("months_between", data=(0, 1))
def months_between(args: list[Value], rt: T.DataType) -> Value:
    """Months from date2 to date1; whole when the days match or both are month ends, else by 31-day months."""
    round_off = True if len(args) < 3 else _constant(args[2], "months_between", "roundOff flag")
    length = _length_of(args[:2])
    first, second = (_as_timestamp(_as_array(a, length)) for a in args[:2])
    m1 = first.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    m2 = second.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    d1, d2 = np.floor_divide(m1, dtf.MICROS_PER_DAY), np.floor_divide(m2, dtf.MICROS_PER_DAY)
    y1, mo1, day1 = dtf.civil_from_days(d1)
    y2, mo2, day2 = dtf.civil_from_days(d2)
    months = ((y1 - y2) * 12 + (mo1 - mo2)).astype(np.float64)
    last1 = day1 == dtf.days_in_month(y1, mo1)
    last2 = day2 == dtf.days_in_month(y2, mo2)
    seconds1 = (m1 - d1 * dtf.MICROS_PER_DAY) // dtf.MICROS_PER_SECOND
    seconds2 = (m2 - d2 * dtf.MICROS_PER_DAY) // dtf.MICROS_PER_SECOND
    seconds = (day1 - day2) * 86_400 + (seconds1 - seconds2)
    diff = np.where((day1 == day2) | (last1 & last2), months, months + seconds / 2_678_400.0)
    if round_off:
        # Spark: Math.round(diff * 1e8) / 1e8
        diff = np.floor(diff * 1e8 + 0.5) / 1e8
    mask = first.is_null().to_numpy(zero_copy_only=False) | second.is_null().to_numpy(zero_copy_only=False)
    return pa.array(diff, pa.float64(), mask=mask)


@kernel("to_date")
def to_date(args: list[Value], rt: T.DataType) -> Value:
    """A date from text (CAST rules, or a Spark pattern such as 'dd/MM/yyyy'), a date or a timestamp."""
    value = args[0]
    if len(args) == 1 or not (pa.types.is_string(value.type) or pa.types.is_large_string(value.type)):
        return cast_array(value, T.DateType())
    fmt = _constant(args[1], "to_date", "format")
    if fmt is None:
        return _all_null(len(value), T.DateType())
    return dtf.parse_with_pattern(value, fmt, "to_date").cast(pa.date32())


@kernel("to_timestamp")
def to_timestamp(args: list[Value], rt: T.DataType) -> Value:
    """A timestamp from text (CAST rules or a Spark pattern), a date, or seconds since the epoch."""
    value = args[0]
    if len(args) == 1 or not (pa.types.is_string(value.type) or pa.types.is_large_string(value.type)):
        return cast_array(value, T.TimestampType())
    fmt = _constant(args[1], "to_timestamp", "format")
    if fmt is None:
        return _all_null(len(value), T.TimestampType())
    return dtf.parse_with_pattern(value, fmt, "to_timestamp")


@kernel("date_format")
def date_format(args: list[Value], rt: T.DataType) -> Value:
    """A timestamp printed with a Spark pattern ('yyyy-MM-dd HH:mm')."""
    fmt = _constant(args[1], "date_format", "format")
    if fmt is None:
        return _all_null(len(args[0]), T.StringType())
    return dtf.format_with_pattern(_as_timestamp(args[0]), fmt, "date_format")


def _epoch_seconds(timestamps: pa.Array) -> pa.Array:
    """Whole seconds since the epoch, truncated toward zero as Spark's unix_timestamp does."""
    micros = timestamps.cast(pa.int64())
    values = micros.fill_null(0).to_numpy(zero_copy_only=False)
    values = np.sign(values) * (np.abs(values) // dtf.MICROS_PER_SECOND)
    return pa.array(values, pa.int64(), mask=micros.is_null().to_numpy(zero_copy_only=False))


def _now_micros() -> int:
    now = datetime.now(timezone.utc)
    return int(now.timestamp()) * dtf.MICROS_PER_SECOND + now.microsecond


@kernel("unix_timestamp", "to_unix_timestamp")
def unix_timestamp(args: list[Value], rt: T.DataType) -> Value:
    """Seconds since the epoch of a timestamp, a date, or text in `format` (default yyyy-MM-dd HH:mm:ss)."""
    if not args:
        return pa.scalar(_now_micros() // dtf.MICROS_PER_SECOND, pa.int64())
    value = args[0]
    if pa.types.is_string(value.type) or pa.types.is_large_string(value.type):
        fmt = "yyyy-MM-dd HH:mm:ss" if len(args) < 2 else _constant(args[1], "unix_timestamp", "format")
        if fmt is None:
            return _all_null(len(value), T.LongType())
        value = dtf.parse_with_pattern(value, fmt, "unix_timestamp")
    return _epoch_seconds(_as_timestamp(value))


@kernel("from_unixtime")
def from_unixtime(args: list[Value], rt: T.DataType) -> Value:
    """Seconds since the epoch printed with `format` (default yyyy-MM-dd HH:mm:ss)."""
    fmt = "yyyy-MM-dd HH:mm:ss" if len(args) < 2 else _constant(args[1], "from_unixtime", "format")
    if fmt is None:
        return _all_null(len(args[0]), T.StringType())
    seconds = args[0].cast(pa.int64())
    micros = pc.multiply(seconds, dtf.MICROS_PER_SECOND).cast(pa.timestamp("us"))
    return dtf.format_with_pattern(micros, fmt, "from_unixtime")


@kernel("current_date")
def current_date(args: list[Value], rt: T.DataType) -> Value:
    """Today in the session time zone (UTC)."""
    return pa.scalar(_now_micros() // dtf.MICROS_PER_DAY, pa.int32()).cast(pa.date32())


@kernel("current_timestamp", "now")
def current_timestamp(args: list[Value], rt: T.DataType) -> Value:
    """Now, as a UTC wall-clock timestamp."""
    return pa.scalar(_now_micros(), pa.timestamp("us"))


_TRUNC_UNITS = {
    "year": "year", "yyyy": "year", "yy": "year", "quarter": "quarter", "month": "month", "mm": "month",
    "mon": "month", "week": "week", "day": "day", "dd": "day", "hour": "hour", "minute": "minute",
    "second": "second", "millisecond": "millisecond", "microsecond": "microsecond",
}
_DATE_UNITS = ("year", "quarter", "month", "week")


@kernel("date_trunc", data=(1,))
def date_trunc(args: list[Value], rt: T.DataType) -> Value:
    """The timestamp truncated to a unit ('year', 'month', 'week', 'hour', ...); unknown units give null."""
    unit = _constant(args[0], "date_trunc", "unit")
    ts = _as_timestamp(args[1])
    arrow_unit = _TRUNC_UNITS.get((unit or "").lower())
    if arrow_unit is None:
        return _all_null(len(ts), T.TimestampType())
    return pc.floor_temporal(ts, unit=arrow_unit, week_starts_monday=True)


@kernel("trunc")
def trunc(args: list[Value], rt: T.DataType) -> Value:
    """The date truncated to 'year', 'quarter', 'month' or 'week'; other units give null."""
    unit = _constant(args[1], "trunc", "unit")
    dates = _as_date(args[0])
    arrow_unit = _TRUNC_UNITS.get((unit or "").lower())
    if arrow_unit not in _DATE_UNITS:
        return _all_null(len(dates), T.DateType())
    return pc.floor_temporal(dates, unit=arrow_unit, week_starts_monday=True)


# ---------------------------------------------------------------- collections and nested values

@kernel("size", "cardinality")
def size(args: list[Value], rt: T.DataType) -> Value:
    """Number of elements; -1 for a null collection (Spark's non-ANSI legacy)."""
    value = args[0]
    if pa.types.is_null(value.type):
        return pa.array(np.full(len(value), -1, np.int32))
    return pc.fill_null(pc.list_value_length(value).cast(pa.int32()), -1)


@kernel("array_contains", data="all")
def array_contains(args: list[Value], rt: T.DataType) -> Value:
    """True if found; null if not found but the array holds a null; null for a null array or value."""
    length = _length_of(args)
    lists, needle = _as_array(args[0], length), args[1]
    element_type = lists.type.value_type
    values = pc.list_flatten(lists)
    parents = pc.list_parent_indices(lists).to_numpy(zero_copy_only=False)
    if isinstance(needle, pa.Scalar):
        target = needle.cast(element_type) if needle.is_valid else _null(element_type)
    else:
        target = pc.take(needle.cast(element_type), pa.array(parents, pa.int64()))
    hits = pc.fill_null(pc.equal(values, target), False).to_numpy(zero_copy_only=False)
    found = np.bincount(parents[hits], minlength=length) > 0
    has_null = np.bincount(parents[values.is_null().to_numpy(zero_copy_only=False)], minlength=length) > 0
    mask = lists.is_null().to_numpy(zero_copy_only=False) | (~found & has_null)
    mask |= _as_array(needle, length).is_null().to_numpy(zero_copy_only=False)
    return pa.array(found, pa.bool_(), mask=mask)


@kernel("sort_array")
def sort_array(args: list[Value], rt: T.DataType) -> Value:
    """Each array sorted: ascending with nulls first and NaN last, or the exact reverse of that."""
    lists = args[0]
    ascending = True if len(args) < 2 else _constant(args[1], "sort_array", "ascending flag")
    if ascending is None:
        return _all_null(len(lists), rt)
    offsets = _offsets(lists).to_numpy()
    values = _values(lists)
    parents = np.repeat(np.arange(len(lists)), np.diff(offsets))
    keys = {"parent": pa.array(parents)}
    if pa.types.is_floating(values.type):
        # Arrow sorts NaN next to nulls; Spark counts it above every number
        keys["nan"] = pc.is_nan(values)
    keys["value"] = values
    order = pc.sort_indices(pa.table(keys), sort_keys=[(k, "ascending", "at_start") for k in keys])
    ordered = pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), pc.take(values, order),
                                       type=lists.type, mask=lists.is_null())
    return ordered if ascending else KERNELS["reverse"]([ordered], rt)


@kernel("get_field")
def get_field(args: list[Value], rt: T.DataType) -> Value:
    """A struct's field by name (exact, then case-insensitive), or a map's value by key."""
    value = args[0]
    key = _constant(args[1], "get_field", "field name or key")
    if pa.types.is_map(value.type):
        return pc.map_lookup(value, pa.scalar(key, value.type.key_type), "first")
    names = [value.type.field(i).name for i in range(value.type.num_fields)]
    index = names.index(key) if key in names else [n.lower() for n in names].index(str(key).lower())
    field = pc.struct_field(value, [index])
    return _mask_null(field, value.is_null()) if value.null_count else field


@kernel("element_at_index")
def element_at_index(args: list[Value], rt: T.DataType) -> Value:
    """arr[i] (0-based, null when out of range) or map[key]."""
    value = args[0]
    key = _constant(args[1], "element_at_index", "index or key")
    if key is None:
        return _all_null(len(value), rt)
    if pa.types.is_map(value.type):
        return pc.map_lookup(value, pa.scalar(key, value.type.key_type), "first")
    offsets = _offsets(value).to_numpy()
    inside = (key >= 0) & (key < np.diff(offsets)) & value.is_valid().to_numpy(zero_copy_only=False)
    values = _values(value)
    if len(values) == 0:
        return _all_null(len(value), rt)
    positions = np.where(inside, offsets[:-1] + key, 0)
    return _mask_null(pc.take(values, pa.array(positions.astype(np.int64))), ~inside)

del _name, _fn
