"""quiver/connectors/csv_records.py: Spark's record and field rules (each expectation read from
PySpark 4.3 on the same text), decoding errors, line numbers."""
from __future__ import annotations

import pytest

from quiver.connectors.csv_records import Quoting, parse_text, physical_lines, records
from quiver.connectors.files import FileReadError


@pytest.mark.parametrize("line, fields", [
    ('a"b,c', ['a"b', "c"]), ('"ab"c,d', ['"ab"c', "d"]), ('"ab""c",d', ['"ab""c"', "d"]),
    ('"a\\"b",c', ['a"b', "c"]), ('  "ab",c', ['  "ab"', "c"]), ('"ab"  ,c', ["ab", "c"]),
    ('"",x', ["", "x"]), ('10,"oops', ["10", "oops"]), ('1,"', ["1", '"']), ('1,"x\\', ["1", "x"]),
    ("1,x\\", ["1", "x\\"]), ("a,b,", ["a", "b", ""]), ('"x,y",z', ["x,y", "z"]),
])
def test_fields_of_a_line(line, fields):
    assert parse_text(line, Quoting()) == fields


def test_line_breaks_split_across_chunks():
    assert list(physical_lines(iter(["a\r", "\nb\rc\n", "\n", "d"]))) == [
        ("a", "\r\n"), ("b", "\r"), ("c", "\n"), ("", "\n"), ("d", "")]


def test_records_with_and_without_multiline(tmp_path):
    path = tmp_path / "f.csv"
    path.write_bytes(b'a,b\n1,"x\ny"\n\n  \n2,"open\n3,q\n')
    assert [(r.fields, r.line) for r in records(str(path), "utf-8", Quoting())] == [
        (["a", "b"], 1), (["1", "x"], 2), (['y"'], 3), (["2", "open"], 6), (["3", "q"], 7)]
    assert [(r.fields, r.text, r.line) for r in records(str(path), "utf-8", Quoting(multiline=True))] == [
        (["a", "b"], "a,b", 1), (["1", "x\ny"], '1,"x\ny"', 2), (["  "], "  ", 5),
        (["2", "open\n3,q\n"], '2,"open\n3,q', 6)]


def test_bom_dropped_and_bad_bytes_located(tmp_path):
    path = tmp_path / "f.csv"
    path.write_bytes("\ufeffa\n".encode() + b"x" * 70000 + b"\n\xff\n")
    rows = records(str(path), "utf-8", Quoting(), first_read=1024)
    assert next(rows).fields == ["a"]
    with pytest.raises(FileReadError, match=r"f.csv is not valid utf-8 text: byte 70006 \(line 3\)"):
        list(rows)
