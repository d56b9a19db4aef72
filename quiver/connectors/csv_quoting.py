"""Whether pyarrow parses a CSV file's bytes exactly as Spark would, checked as pyarrow reads them.

pyarrow's parser differs from Spark's (`connectors.csv_records`) only around quotes and escapes:
it lets a quoted field run past the end of its line even without `multiLine` (silently, in the
last block of a file), unescapes outside quotes, and drops the quotes of `"ab"c`. Bytes where
every quote opens a field (after a delimiter or a line break) or closes one (before a delimiter
or a line break), where quotes balance within each line (across lines with `multiLine`), and
where no escape character sits inside quotes, parse the same in both: pyarrow may read them.
Anything else sends the file to the Python reader. The check looks only at quote, escape and
line-break bytes, with numpy, so it costs little beside parsing.
"""
from __future__ import annotations

import numpy as np

_LF, _CR = 10, 13


class QuotingCheck:
    """Fed a file's UTF-8 bytes in order; `clean` stays True while pyarrow's parse is Spark's."""

    def __init__(self, sep: str, quote: str, escape: str, multiline: bool):
        self.multiline = multiline
        single = all(len(c.encode()) == 1 for c in (sep, quote, escape) if c)
        self.clean = single
        self.sep = sep.encode()[0] if sep else -1
        self.quote = quote.encode()[0] if quote else -1
        self.escape = escape.encode()[0] if escape and escape != quote else -1
        self.inside = False  # within quotes at the end of what was fed
        self.prev = _LF  # the last byte fed (a line break before the first)
        self.closing = False  # the last byte fed was a closing quote

    def feed(self, data: bytes) -> None:
        """Check the next bytes of the file."""
        if not self.clean or not data or self.quote < 0:
            return
        a = np.frombuffer(data, np.uint8)
        if self.closing and a[0] not in (self.sep, _LF, _CR):
            self.clean = False
            return
        self.closing = False
        quotes = np.flatnonzero(a == self.quote)
        has_escape = self.escape >= 0 and bytes((self.escape,)) in data
        if not len(quotes):
            # No quote: only a quote left open by earlier bytes, or an escape within it, matters.
            if self.inside and (has_escape or not self.multiline and (b"\n" in data or b"\r" in data)):
                self.clean = False
            self.prev = int(a[-1])
            return
        if self.multiline:
            breaks = np.empty(0, np.int64)
            rank = np.arange(len(quotes)) + int(self.inside)
        else:
            breaks = np.flatnonzero(a == _LF)
            if b"\r" in data:
                breaks = np.union1d(breaks, np.flatnonzero(a == _CR))
            # Quotes before each line's start, so a quote's rank within its line (the carried open
            # quote counts on the first line).
            starts = np.searchsorted(quotes, np.concatenate(([-1], breaks)))
            starts[1:] += int(self.inside)
            line = np.searchsorted(breaks, quotes)
            rank = np.arange(len(quotes)) + int(self.inside) - starts[line]
            ends = np.diff(np.append(starts, len(quotes) + int(self.inside)))[:-1]
            if (ends % 2).any():
                self.clean = False  # a line ends inside quotes
                return
        opening = rank % 2 == 0
        before = np.where(quotes > 0, a[np.maximum(quotes - 1, 0)], self.prev)[opening]
        if not ((before == self.sep) | (before == _LF) | (before == _CR)).all():
            self.clean = False
            return
        close = quotes[~opening]
        last = len(close) and close[-1] == len(a) - 1
        after = a[close[:-1] + 1] if last else a[close + 1]
        if not ((after == self.sep) | (after == _LF) | (after == _CR)).all():
            self.clean = False
            return
        if has_escape:
            escapes = np.flatnonzero(a == self.escape)
            before_escape = np.searchsorted(quotes, escapes) + int(self.inside)
            if not self.multiline:
                before_escape -= starts[np.searchsorted(breaks, escapes)]
            if (before_escape % 2).any():
                self.clean = False  # an escape inside quotes
                return
        if self.multiline:
            self.inside = bool((len(quotes) + int(self.inside)) % 2)
        else:
            self.inside = bool((len(quotes) + int(self.inside) - starts[-1]) % 2)
        self.closing = bool(last)
        self.prev = int(a[-1])

    def finish(self) -> None:
        """The end of the file: a quote still open means pyarrow and Spark may disagree."""
        if self.inside:
            self.clean = False
