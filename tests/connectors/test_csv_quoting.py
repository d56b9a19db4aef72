"""quiver/connectors/csv_quoting.py: bytes it calls clean parse the same in pyarrow as in the
Python reader (Spark's rules), fed whole or cut anywhere."""
from __future__ import annotations

import io
import random

import pyarrow as pa
import pyarrow.csv as pcsv
import pytest

from quiver.connectors.csv_quoting import QuotingCheck
from quiver.connectors.csv_records import Quoting, parse_record, physical_lines

ALPHABET = ["a", "b", ",", '"', "\\", " ", "\n", "\r\n", "\r", "x"]
WEIGHTS = [6, 3, 3, 2, 0.5, 1, 1.5, 0.3, 0.2, 2]


def _check(data: bytes, multiline: bool, cut: int | None = None) -> bool:
    check = QuotingCheck(",", '"', "\\", multiline)
    for part in ([data] if cut is None else [data[:cut], data[cut:]]):
        check.feed(part)
    check.finish()
    return check.clean


def _python_rows(text: str, multiline: bool) -> list[list[str | None]]:
    quoting = Quoting(multiline=multiline)
    lines = physical_lines(iter([text]))
    rows = []
    for line, end in lines:
        if (not line) if multiline else not line.strip("".join(chr(c) for c in range(33))):
            continue
        (fields, _), _ = parse_record(line, end, lines, quoting)
        rows.append([None if f == "" else f for f in fields])
    return rows


def _pyarrow_rows(data: bytes, multiline: bool, width: int) -> tuple[list[list[str | None]], int]:
    """pyarrow's rows of exactly `width` fields, and how many others it saw (whitespace lines, which
    Spark and the reader skip without multiLine, left out)."""
    invalid: list[str] = []
    names = [f"c{i}" for i in range(width)]
    table = pcsv.read_csv(
        io.BytesIO(data),
        read_options=pcsv.ReadOptions(column_names=names, use_threads=False),
        parse_options=pcsv.ParseOptions(escape_char=False, double_quote=False, newlines_in_values=multiline,
                                        invalid_row_handler=lambda row: invalid.append(row.text) or "skip"),
        convert_options=pcsv.ConvertOptions(column_types={n: pa.string() for n in names}, null_values=[""],
                                            strings_can_be_null=True, quoted_strings_can_be_null=True))
    rows = [list(r.values()) for r in table.to_pylist()]
    if not multiline:
        rows = [r for r in rows if not (width == 1 and r[0] is not None and _blank(r[0]))]
        invalid = [t for t in invalid if not _blank(t)]
    return rows, len(invalid)


def _blank(text: str) -> bool:
    return not text.strip("".join(chr(c) for c in range(33)))


@pytest.mark.parametrize("multiline", [False, True])
def test_clean_bytes_parse_the_same_in_pyarrow_and_python(multiline):
    rng = random.Random(18)
    clean = 0
    for _ in range(3000):
        text = "".join(rng.choices(ALPHABET, WEIGHTS, k=rng.randint(1, 40)))
        data = text.encode()
        verdicts = {_check(data, multiline, cut) for cut in [None, *range(1, len(data))]}
        assert len(verdicts) == 1, f"verdict depends on where {text!r} is cut"
        if verdicts.pop():
            clean += 1
            want = _python_rows(text, multiline)
            for width in {len(r) for r in want}:
                rows, others = _pyarrow_rows(data, multiline, width)
                assert rows == [r for r in want if len(r) == width], text
                assert others == sum(len(r) != width for r in want), text
    assert clean > 500  # the check must not call everything unclean


@pytest.mark.parametrize("text, multiline", [
    ('10,"oops\n11,x\n', False), ('"ab"c,d\n', False), ('"ab"  ,c\n', False), ('"a\\"b",c\n', False),
    ('1,"x\ny"\n', False), ('1,"x\ny\n', True), ('1,"x\ny"z\n', True),
])
def test_unclean_shapes(text, multiline):
    assert not _check(text.encode(), multiline)


def test_a_delimiter_of_several_bytes_is_never_checked_clean():
    assert not QuotingCheck("€", '"', "\\", False).clean
