"""CSV records by Spark's rules, parsed in Python: the reference that pyarrow's fast path is
checked against (`connectors.csv_quoting`) and falls back to where the two could differ.

Spark reads CSV with univocity; these are its rules for reading, with Spark's defaults:
- without `multiLine` a record is one line (`\\n`, `\\r\\n` or `\\r`), so a quote never spans
  lines: an unclosed quote ends with its line (`10,"oops` is `10` and `oops`); with `multiLine`
  a quoted field runs across lines, to the end of the file if it is never closed;
- lines that are empty (without `multiLine`: or only whitespace) are skipped; the header is the
  first other line;
- a field is quoted only if its first character is the quote; inside it the escape character
  escapes the quote (and itself); a closing quote may be followed by spaces before the
  delimiter, which are dropped; any other character after it makes the whole field literal
  text up to the next delimiter, quotes included (`"ab"c` is `"ab"c`);
- outside quotes the quote and escape characters are ordinary characters.
"""
from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from dataclasses import dataclass

from quiver.connectors.files import FileReadError
from quiver.connectors.object_store import open_binary
from quiver.connectors.paths import file_uri

SPARK_CHARSETS = {
    "us-ascii": "ascii", "iso-8859-1": "latin-1", "utf-8": "utf-8", "utf-16be": "utf-16-be",
    "utf-16le": "utf-16-le", "utf-16": "utf-16", "utf-32": "utf-32",
}
"""The charsets Spark 4 accepts for `encoding` (its CharsetProvider), by Python codec."""

_CHUNK_BYTES = 1 << 20
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# Java's String.trim: what Spark strips before deciding that a line is blank.
_JAVA_SPACE = "".join(chr(c) for c in range(33))


@dataclass(frozen=True)
class Quoting:
    """The characters that shape records: delimiter, quote ('' for none), escape ('' for none)."""

    sep: str = ","
    quote: str = '"'
    escape: str = "\\"
    multiline: bool = False


@dataclass(frozen=True)
class Record:
    """One record: its fields as written (no nulls yet), its text, and the line it starts on."""

    fields: list[str]
    text: str
    line: int


def is_blank(text: str) -> bool:
    """Whether Spark skips this line as empty (only characters up to the space)."""
    return not text.strip(_JAVA_SPACE)


def decoded_chunks(path: str, encoding: str, first_read: int = _CHUNK_BYTES) -> Iterator[str]:
    """The file's text in chunks (the first of `first_read` bytes), a leading byte-order mark dropped;
    bytes not valid in `encoding` raise `FileReadError` naming the file, the line and the byte offset."""
    decoder = codecs.getincrementaldecoder(encoding)("strict")
    offset, lines, first, size = 0, 1, True, first_read
    with open_binary(path) as stream:
        while True:
            data = stream.read(size)
            size = _CHUNK_BYTES
            try:
                text = decoder.decode(data, final=not data)
            except UnicodeDecodeError as e:
                good = data[:max(e.start, 0)]
                line = lines + len(_LINE_BREAK.findall(good.decode(encoding, "replace")))
                raise FileReadError(
                    f"{file_uri(path)} is not valid {encoding} text: byte {offset + e.start} (line {line}) is "
                    f"{data[e.start:e.start + 1]!r} ({e.reason}). Set the CSV option 'encoding' to the file's "
                    f"charset, one of {', '.join(SPARK_CHARSETS)}.") from e
            if first and text:
                text, first = text.removeprefix("\ufeff"), False
            if text:
                lines += len(_LINE_BREAK.findall(text))
                yield text
            if not data:
                return
            offset += len(data)


def physical_lines(chunks: Iterator[str]) -> Iterator[tuple[str, str]]:
    """Each line of the text with its terminator ('' for a last line without one)."""
    carry = ""
    for chunk in chunks:
        text = carry + chunk
        parts = _LINE_BREAK.split(text)
        breaks = _LINE_BREAK.findall(text)
        # A '\r' at the end may be the first half of '\r\n': keep it for the next chunk.
        if text.endswith("\r"):
            parts[-2] += "\r"
            parts.pop()
            breaks.pop()
        carry = parts.pop()
        yield from zip(parts, breaks)
    if carry:
        if carry.endswith("\r"):
            yield carry[:-1], "\r"
        else:
            yield carry, ""


def records(path: str, encoding: str, quoting: Quoting, first_read: int = _CHUNK_BYTES) -> Iterator[Record]:
    """Every record of the file (the header too), blank lines skipped, in order."""
    return _records(physical_lines(decoded_chunks(path, encoding, first_read)), quoting)


def parse_text(text: str, quoting: Quoting) -> list[str]:
    """The fields of the first record in `text` (one record's text, as pyarrow reports a bad row)."""
    return next(_records(physical_lines(iter([text])), quoting), Record([""], text, 1)).fields


def _records(lines: Iterator[tuple[str, str]], quoting: Quoting) -> Iterator[Record]:
    number = 0
    for text, end in lines:
        number += 1
        # Without multiLine Spark drops whitespace-only lines; with it, only empty ones.
        if not text if quoting.multiline else is_blank(text):
            continue
        record, used = parse_record(text, end, lines, quoting)
        yield Record(record[0], record[1], number)
        number += used


def parse_record(
    text: str, end: str, more: Iterator[tuple[str, str]], quoting: Quoting
) -> tuple[tuple[list[str], str], int]:
    """The fields and text of the record starting with line `text` (ended by `end`), and how many
    further lines (taken from `more`, only with `multiLine`) it used."""
    sep, q = quoting.sep, quoting.quote
    if not q or q not in text:
        return (text.split(sep), text), 0
    fields: list[str] = []
    whole = [text]
    line, pos, used = text, 0, 0
    while True:
        if line.startswith(q, pos):
            value, line, pos, extra = _quoted(line, end, pos, more, quoting)
            for t, t_end in extra:
                whole.extend((end, t))
                end = t_end
            used += len(extra)
        else:
            stop = line.find(sep, pos)
            stop = len(line) if stop < 0 else stop
            value, pos = line[pos:stop], stop
        fields.append(value)
        if pos >= len(line):
            break
        pos += len(sep)
    return (fields, "".join(whole)), used


def _quoted(
    line: str, end: str, start: int, more: Iterator[tuple[str, str]], quoting: Quoting
) -> tuple[str, str, int, list[tuple[str, str]]]:
    """A field that starts with the quote at `start`: its value, the line and position after it,
    and the lines it ran on to (multiLine)."""
    sep, q, e = quoting.sep, quoting.quote, quoting.escape
    out: list[str] = []
    raw = [line[start:]]  # the field's text so far, for a field that turns out literal
    extra: list[tuple[str, str]] = []
    i = start + 1
    while True:
        if i >= len(line):
            nxt = next(more, None) if quoting.multiline else None
            if nxt is None:
                # Unclosed: the value runs to the end of the line (or file); a lone quote is itself.
                if not out and not extra and i == start + 1:
                    return q, line, i, extra
                if quoting.multiline:
                    out.append(end)
                return "".join(out), line, i, extra
            out.append(end)
            line, end = nxt
            raw.extend((out[-1], line))
            extra.append(nxt)
            i = 0
            continue
        c = line[i]
        if e and c == e and e != q:
            if i + 1 < len(line) and line[i + 1] in (q, e):
                out.append(line[i + 1])
                i += 2
            elif i + 1 >= len(line):
                i += 1
            else:
                out.append(c)
                i += 1
            continue
        if c == q:
            if e == q and i + 1 < len(line) and line[i + 1] == q:
                out.append(q)
                i += 2
                continue
            after = i + 1
            while after < len(line) and line[after] in " \t" and not line.startswith(sep, after):
                after += 1
            if after >= len(line) or line.startswith(sep, after):
                return "".join(out), line, after, extra
            # A quote inside the value: the field is its literal text up to the next delimiter.
            stop = line.find(sep, after)
            stop = len(line) if stop < 0 else stop
            literal = "".join(raw[:-1]) + (raw[-1][:stop - start] if not extra else line[:stop])
            return literal, line, stop, extra
        out.append(c)
        i += 1
