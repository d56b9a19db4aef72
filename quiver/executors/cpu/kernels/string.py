"""CPU kernels for Spark's string functions: case, trimming, slicing, regex, padding, search, digests."""
from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from quiver.engine.core import types as T
from quiver.engine.core.errors import QuiverError
from quiver.executors.cpu.kernels.registry import (
    Value,
    _all_null,
    _as_array,
    _constant,
    _mask_null,
    _null,
    _offsets,
    _per_constant,
    _values,
    kernel,
)


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


def like_segments(pattern: str, escape: str = "\\") -> list[str] | None:
    """The literal runs between a LIKE pattern's '%'s (escapes resolved), or None when it has a '_'."""
    segments, current, i = [], [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == escape and i + 1 < len(pattern) and pattern[i + 1] in ("_", "%", escape):
            current.append(pattern[i + 1])
            i += 2
            continue
        if ch == "_":
            return None
        if ch == "%":
            segments.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    segments.append("".join(current))
    return segments


def like_match(strings: pa.Array, pattern: str, escape: str = "\\") -> pa.Array:
    """SQL LIKE of each string against a constant pattern.

    Patterns of literals and '%' alone become equality, prefix, suffix or substring tests, or a regex
    anchored only where the pattern is (`%special%requests%` searches `special.*requests`), which
    RE2 scans far faster than the fully anchored form that '_' needs."""
    regex = like_regex(pattern, escape)  # also rejects a dangling escape, naming the pattern
    segments = like_segments(pattern, escape)
    if segments is None:
        return pc.match_substring_regex(strings, regex)
    if len(segments) == 1:
        return pc.equal(strings, pa.scalar(segments[0], strings.type))
    head, middle, tail = segments[0], [m for m in segments[1:-1] if m], segments[-1]
    if not middle:
        if not head and not tail:
            return pc.starts_with(strings, "")
        if not tail:
            return pc.starts_with(strings, head)
        if not head:
            return pc.ends_with(strings, tail)
    if len(segments) == 3 and not head and not tail:
        return pc.match_substring(strings, segments[1])
    specials = set(".^$*+?()[]{}|\\")
    quote = lambda text: "".join("\\" + c if c in specials else c for c in text)
    parts = [quote(p) for p in [head, *middle, tail]]
    # anchored at an end only where the pattern has no '%' there; 'ab%ab' stays one regex, so the
    # prefix and the suffix cannot overlap in a string like 'ab'
    regex = ("^" if head else "") + ".*".join(p for p in parts if p) + ("$" if tail else "")
    return pc.match_substring_regex(strings, "(?s)" + regex)


def _like(args: list[Value], case_insensitive: bool) -> pa.Array:
    strings = _lower(args[0]) if case_insensitive else args[0]
    params = [args[1], args[2] if len(args) > 2 else pa.scalar("\\")]

    def apply(d: list[pa.Array], consts: list[Any]) -> pa.Array:
        pattern = consts[0].lower() if case_insensitive else consts[0]
        return like_match(d[0], pattern, consts[1])
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
