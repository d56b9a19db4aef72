"""CPU kernels for Spark's string functions: case, trimming, slicing, regex, padding, search, formatting,
encodings (base64) and distances (levenshtein, soundex)."""
from __future__ import annotations

import base64 as _base64
import decimal
import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from quiver.engine.core import types as T
from quiver.engine.core.errors import QuiverError
from quiver.executors.cpu.kernels.registry import (
    Value,
    as_array,
    as_pylists,
    kernel,
    list_offsets,
    list_values,
    mask_null,
    null_scalar,
    per_constant,
    per_row,
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
    rebuilt = pa.ListArray.from_arrays(list_offsets(words), titled, mask=words.is_null())
    out = pc.binary_join(rebuilt, " ")
    mask = pc.fill_null(pc.match_substring_regex(strings, _SPECIAL_TITLE), False)
    if pc.any(mask).as_py():
        fixed = pa.array([_python_initcap(s) for s in strings.filter(mask).to_pylist()], pa.string())
        out = pc.replace_with_mask(out, mask, fixed)
    return out


# ---------------------------------------------------------------- trimming, length, slicing

def _trim_kernel(arrow_fn: Callable, function: str) -> Callable:
    def strip(data: list[pa.Array], chars: list[Any]) -> pa.Array:
        return data[0] if chars[0] == "" else arrow_fn(data[0], characters=chars[0])

    def trim(args: list[Value], rt: T.DataType) -> Value:
        if len(args) == 1:
            return arrow_fn(args[0], characters=" ")
        # The characters may differ per row (a column): each distinct set strips its rows at once.
        return per_constant([args[0]], [args[1]], strip, rt.to_arrow())
    trim.__doc__ = f"{function}: strip spaces (only ' ', as Spark) or the given characters (a value or a column)."
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
            return pc.if_else(pc.is_valid(d[0]), pa.scalar(b"" if binary else "", d[0].type), null_scalar(d[0].type))
        if binary:
            return pc.binary_slice(d[0], start, stop)
        return pc.utf8_slice_codeunits(d[0], start, stop)
    return per_constant([data], params, apply, data.type)


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
        return pc.if_else(pc.is_valid(as_array(sep, length)), "", null_scalar(pa.string()))
    pieces = []
    for part in parts:
        if pa.types.is_list(part.type) or pa.types.is_large_list(part.type):
            part = _join_list_skipping_nulls(as_array(part, length), sep)
        pieces.append(part)
    joined = pc.binary_join_element_wise(*pieces, sep, null_handling="skip")
    return mask_null(joined, pc.is_null(as_array(sep, length)))


def _join_list_skipping_nulls(lists: pa.Array, sep: Value) -> pa.Array:
    values = pc.list_flatten(lists)
    parents = pc.list_parent_indices(lists).to_numpy(zero_copy_only=False)
    keep = values.is_valid().to_numpy(zero_copy_only=False)
    counts = np.bincount(parents[keep], minlength=len(lists))
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    clean = pa.ListArray.from_arrays(pa.array(offsets), values.filter(pa.array(keep)), mask=lists.is_null())
    joined = pc.binary_join(clean, sep)
    return mask_null(joined, pa.array(counts == 0))


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
    return per_constant([strings], params, apply, pa.string())


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
        return pc.if_else(pc.is_valid(d[0]), pc.fill_null(pc.if_else(pc.is_valid(found), value, ""), ""),
                          null_scalar(pa.string()))
    return per_constant([strings], params, apply, pa.string())


@kernel("rlike", "regexp", "regexp_like")
def rlike(args: list[Value], rt: T.DataType) -> Value:
    """True when the regex matches anywhere in the string (Java's find)."""
    def apply(d: list[pa.Array], consts: list[Any]) -> pa.Array:
        try:
            return pc.match_substring_regex(d[0], consts[0])
        except pa.ArrowInvalid as err:
            raise _regex_error("rlike", consts[0], err) from err
    return per_constant([args[0]], [args[1]], apply, pa.bool_())


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
    return per_constant([strings], params, apply, pa.bool_())


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
        return per_constant([args[0]], [args[1]], apply, pa.bool_())
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
            return pc.if_else(pc.is_valid(strings), "", null_scalar(pa.string()))
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
    return per_constant([args[0]], params, apply, pa.string())


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
        return pa.array(_find(d[0], consts[0]).astype(np.int32), pa.int32(),
                        mask=d[0].is_null().to_numpy(zero_copy_only=False))
    return per_constant([args[0]], [args[1]], apply, pa.int32())


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
    return per_constant([strings], params, apply, pa.int32())


@kernel("reverse")
def reverse(args: list[Value], rt: T.DataType) -> Value:
    """Characters of a string, or elements of an array, in reverse order."""
    value = args[0]
    if not pa.types.is_list(value.type):
        return pc.utf8_reverse(value)
    offsets = list_offsets(value).to_numpy()
    lengths = np.diff(offsets)
    parents = np.repeat(np.arange(len(value)), lengths)
    positions = np.arange(len(parents))
    order = offsets[parents] + offsets[parents + 1] - 1 - positions
    values = pc.take(list_values(value), pa.array(order.astype(np.int64)))
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
    return per_constant([args[0]], args[1:], apply, pa.string())


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
    return per_constant([args[0]], params, apply, pa.list_(pa.string()))


def _split_chars(strings: pa.Array, max_splits: int | None) -> pa.Array:
    """split(s, ''): one element per character ('' stays ['']), the last taking the rest under a limit."""
    marked = pc.replace_substring_regex(strings, "(?s)(.)", "\\1\x00")
    marked = pc.if_else(pc.equal(strings, ""), "", pc.utf8_slice_codeunits(marked, 0, -1))
    pieces = pc.split_pattern(marked, "\x00", max_splits=max_splits)
    values = pc.replace_substring(pc.list_flatten(pieces), "\x00", "")
    return pa.ListArray.from_arrays(list_offsets(pieces), values, mask=pieces.is_null())


# ---------------------------------------------------------------- format_string / printf

_JAVA_SPEC = re.compile(r"%(?:(\d+)\$)?([-#+ 0,(<]*)(\d+)?(?:\.(\d+))?([a-zA-Z%])")


def _java_text(value: Any) -> str:
    """A value as Java's String.valueOf prints it (what %s shows)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _java_double(value)
    if isinstance(value, bytes):
        return "[B@" + format(id(value) & 0xFFFFFF, "x")
    return str(value)


def _java_double(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0:
        return "-0.0" if math.copysign(1, v) < 0 else "0.0"
    if 1e-3 <= abs(v) < 1e7:
        text = repr(v)
        return text if "." in text or "e" in text else text + ".0"
    _, digits, exponent = decimal.Decimal(repr(abs(v))).as_tuple()
    shown = "".join(map(str, digits)).rstrip("0") or "0"
    scientific = len(digits) + exponent - 1
    text = shown[0] + "." + (shown[1:] or "0") + "E" + str(scientific)
    return ("-" if v < 0 else "") + text


def java_format(fmt: str, values: list[Any], widths: list[int] | None = None) -> str:
    """Java's String.format for the common conversions: s S d x X o f e E g b c n %.

    `widths` gives each integer argument's bits (32 for an int), which %x and %o show negatives in."""
    out, pos, next_arg = [], 0, 0
    for m in _JAVA_SPEC.finditer(fmt):
        out.append(fmt[pos:m.start()])
        pos = m.end()
        index, flags, width, precision, conv = m.groups()
        if conv == "%":
            out.append("%")
            continue
        if conv == "n":
            out.append("\n")
            continue
        if index is not None:
            arg_i = int(index) - 1
        elif "<" in flags:
            arg_i = max(next_arg - 1, 0)
        else:
            arg_i, next_arg = next_arg, next_arg + 1
        if arg_i >= len(values):
            raise QuiverError(f"format_string: the format {fmt!r} needs more arguments than the {len(values)} given")
        value = values[arg_i]
        flags = flags.replace("<", "")
        text = _convert(conv, flags, precision, value, arg_i, widths)
        if width is not None and len(text) < int(width):
            pad = int(width) - len(text)
            if "-" in flags:
                text = text + " " * pad
            elif "0" in flags and conv in "dxXofeEg" and value is not None and not (
                    isinstance(value, float) and not math.isfinite(value)):
                sign = text[0] if text[:1] in "+- " else ""
                text = sign + "0" * pad + text[len(sign):]
            else:
                text = " " * pad + text
        out.append(text)
    out.append(fmt[pos:])
    return "".join(out)


def _convert(conv: str, flags: str, precision: str | None, value: Any, arg_i: int = 0,
             widths: list[int] | None = None) -> str:
    if conv in "sS":
        text = _java_text(value)
        if precision is not None:
            text = text[: int(precision)]
        return text.upper() if conv == "S" else text
    if conv in "bB":
        text = "false" if value is None or value is False else "true"
        return text.upper() if conv == "B" else text
    if value is None:
        return "null"[: int(precision)] if precision is not None else "null"
    if conv == "c":
        return chr(value) if isinstance(value, int) else str(value)[:1]
    if conv == "d":
        if not isinstance(value, (int, decimal.Decimal)) or isinstance(value, bool):
            raise QuiverError(f"format_string: %d cannot format {value!r} ({type(value).__name__})")
        spec = ("," if "," in flags else "") + "d"
        text = format(int(value), spec)
    elif conv in "xXo":
        if not isinstance(value, int) or isinstance(value, bool):
            raise QuiverError(f"format_string: %{conv} cannot format {value!r}")
        bits = widths[arg_i] if widths else 64
        text = format(value if value >= 0 else value & ((1 << bits) - 1), "o" if conv == "o" else "x")
        text = text.upper() if conv == "X" else text
        return text
    else:
        if not isinstance(value, (float, int, decimal.Decimal)) or isinstance(value, bool):
            raise QuiverError(f"format_string: %{conv} cannot format {value!r} ({type(value).__name__})")
        p = 6 if precision is None else int(precision)
        if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
            return _java_double(value)
        number = decimal.Decimal(value) if not isinstance(value, decimal.Decimal) else value
        if conv == "f":
            text = format(number.quantize(decimal.Decimal(1).scaleb(-p), rounding=decimal.ROUND_HALF_UP),
                          ("," if "," in flags else "") + f".{p}f")
        elif conv in "eE":
            text = format(float(value), f".{p}e")
            text = text.upper() if conv == "E" else text
        else:
            text = format(float(value), f".{p}g")
    if "+" in flags and not text.startswith("-"):
        text = "+" + text
    elif " " in flags and not text.startswith("-"):
        text = " " + text
    if "(" in flags and text.startswith("-"):
        text = "(" + text[1:] + ")"
    return text


@kernel("format_string", "printf", data="all")
def format_string(args: list[Value], rt: T.DataType) -> Value:
    """Java-style printf formatting; null only when the format is null."""
    columns = as_pylists(args)
    widths = [a.type.bit_width if pa.types.is_integer(a.type) else 64 for a in args[1:]]
    out = [None if row[0] is None else java_format(row[0], list(row[1:]), widths) for row in zip(*columns)]
    return pa.array(out, pa.string())


# ---------------------------------------------------------------- base64

@kernel("base64")
def base64(args: list[Value], rt: T.DataType) -> Value:
    return per_row([args[0].cast(pa.binary())], lambda b: _base64.b64encode(b).decode("ascii"), pa.string())


def _unbase64(text: str) -> bytes | None:
    cleaned = re.sub(r"\s", "", text)
    cleaned += "=" * (-len(cleaned) % 4)
    try:
        return _base64.b64decode(cleaned, validate=True)
    except ValueError:
        return None


@kernel("unbase64")
def unbase64(args: list[Value], rt: T.DataType) -> Value:
    return per_row([args[0]], _unbase64, pa.binary())


# ---------------------------------------------------------------- more strings

def _levenshtein(a: str, b: str, threshold: int | None = None) -> int:
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    distance = previous[-1]
    return -1 if threshold is not None and distance > threshold else distance


@kernel("levenshtein", data="all")
def levenshtein(args: list[Value], rt: T.DataType) -> Value:
    """Edit distance; with a threshold, -1 where it is larger."""
    return per_row(args, _levenshtein, pa.int32())


_SOUNDEX = "01230127022455012623017202"


def _soundex(text: str) -> str:
    """Spark's soundex: the input unchanged unless it starts with an ASCII letter; H and W do not separate codes."""
    if not text:
        return ""
    first = text[0].upper()
    if not ("A" <= first <= "Z"):
        return text
    out, last = [first], _SOUNDEX[ord(first) - 65]
    for ch in text[1:]:
        c = ch.upper()
        if not ("A" <= c <= "Z"):
            continue
        code = _SOUNDEX[ord(c) - 65]
        if code == "7":
            continue
        if code != "0" and code != last:
            out.append(code)
            if len(out) > 3:
                break
        last = code
    return "".join(out).ljust(4, "0")


@kernel("soundex")
def soundex(args: list[Value], rt: T.DataType) -> Value:
    return per_row([args[0]], _soundex, pa.string())


@kernel("regexp_extract_all")
def regexp_extract_all(args: list[Value], rt: T.DataType) -> Value:
    """Group `idx` of every match, as an array (null group -> '')."""
    params = args[1:] + ([pa.scalar(1, pa.int32())] if len(args) < 3 else [])

    def apply(d: list[pa.Array], consts: list[Any]) -> pa.Array:
        pattern, idx = consts
        try:
            regex = re.compile(pattern)
        except re.error as err:
            raise QuiverError(f"regexp_extract_all: {pattern!r} is not a valid regex: {err}") from err
        if idx < 0 or idx > regex.groups:
            raise QuiverError(f"regexp_extract_all: the regex {pattern!r} has {regex.groups} groups, so the "
                              f"group index must be between 0 and {regex.groups}, not {idx}")
        out = [None if s is None else [m.group(idx) or "" for m in regex.finditer(s)] for s in d[0].to_pylist()]
        return pa.array(out, pa.list_(pa.string()))
    return per_constant([args[0]], params, apply, pa.list_(pa.string()))


def _format_number(value: Any, places: Any) -> str | None:
    if isinstance(places, str):
        raise QuiverError("format_number: a format pattern is not supported; pass the number of decimal places")
    if places < 0:
        return None
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "\u221e" if value > 0 else "-\u221e"
    number = decimal.Decimal(value)
    rounded = number.quantize(decimal.Decimal(1).scaleb(-places), rounding=decimal.ROUND_HALF_EVEN)
    text = format(rounded, f",.{places}f")
    if isinstance(value, float) and math.copysign(1.0, value) < 0 and not text.startswith("-"):
        text = "-" + text
    return text


@kernel("format_number", data="all")
def format_number(args: list[Value], rt: T.DataType) -> Value:
    """'#,###,##0.00'-style text with `d` places, rounded HALF_EVEN (Java's DecimalFormat)."""
    return per_row(args, _format_number, pa.string())


def _substring_index(text: str, delim: str, count: int) -> str:
    if count == 0 or delim == "":
        return ""
    if count > 0:
        parts = text.split(delim)
        return delim.join(parts[:count]) if len(parts) > count else text
    parts = text.split(delim)
    return delim.join(parts[count:]) if len(parts) > -count else text


@kernel("substring_index", data="all")
def substring_index(args: list[Value], rt: T.DataType) -> Value:
    return per_row(args, _substring_index, pa.string())


@kernel("left", data="all")
def left(args: list[Value], rt: T.DataType) -> Value:
    return per_row(args, lambda s, n: s[:n] if n > 0 else "", pa.string())


@kernel("right", data="all")
def right(args: list[Value], rt: T.DataType) -> Value:
    return per_row(args, lambda s, n: s[-n:] if n > 0 else "", pa.string())


def _split_part(text: str, delim: str, part: int) -> str:
    if part == 0:
        raise QuiverError("split_part: the part number must not be 0 (parts count from 1, or from -1 at the end)")
    pieces = [text] if delim == "" else text.split(delim)
    index = part - 1 if part > 0 else len(pieces) + part
    return pieces[index] if 0 <= index < len(pieces) else ""


@kernel("split_part", data="all")
def split_part(args: list[Value], rt: T.DataType) -> Value:
    return per_row(args, _split_part, pa.string())


@kernel("replace", data="all")
def replace(args: list[Value], rt: T.DataType) -> Value:
    """Every occurrence of `search` replaced (removed without a replacement); an empty search changes nothing."""
    if len(args) == 2:
        args = list(args) + [pa.scalar("", pa.string())]
    return per_row(args, lambda s, f, r: s if f == "" else s.replace(f, r), pa.string())
