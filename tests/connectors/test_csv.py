"""quiver/connectors/csv.py: Spark's CSV options, inference and malformed-row modes; the CSV writer."""
from __future__ import annotations

import datetime
import gzip

import pyarrow as pa
import pytest

from quiver.connectors import csv as csv_connector
from quiver.connectors.csv import CsvFormat, header_names
from quiver.connectors.files import FileReadError
from quiver.connectors.registry import file_source
from quiver.connectors.sink import FileSink
from quiver.engine.core.errors import AnalysisException, ConfigurationError
from tests.connectors.spark_compare import assert_matches_spark, read_all

TYPES_CSV = """\
id,name,amount,flag,day,ts,big,mixed,empty,huge,loose
1,alice,1.5,true,2024-01-05,2024-01-05 10:00:00,3000000000,1,,12345678901234567890,2024-1-5
2,,2,False,2024-01-06,2024-01-06T11:30:00.25,4,x,,1, 7
3,"bob, jr",,TRUE,2024-01-07,2024-01-07T12:00:00Z,5,2.5,,2,Inf
"""
MALFORMED_CSV = "a,b,c\n1,2,3\n4,5\n6,7,8,9\nq,r,s\n"


def write(path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


CASES = {
    "inferred types": (TYPES_CSV, {"header": True, "inferSchema": True}, None),
    "all strings by default": (TYPES_CSV, {"header": True}, None),
    "no header names _c0..": (TYPES_CSV, {}, None),
    "quoted empty is null": ('a,b,c\n"",,x\n', {"header": True}, None),
    "nullValue": ('a,b,c\nNA,,x\nx,"NA",y\n', {"header": True, "nullValue": "NA"}, None),
    "sep quote escape": ("a;b\n'x;y';'it\\'s'\n2;3\n",
                         {"header": True, "sep": ";", "quote": "'", "inferSchema": True}, None),
    "unsafe header names": ("a,,a,A,b\n1,2,3,4,5\n", {"header": True}, None),
    "permissive pads and truncates": (MALFORMED_CSV, {"header": True}, None),
    "dropmalformed": (MALFORMED_CSV, {"header": True, "mode": "DROPMALFORMED"}, None),
    "schema, bad values null": ("1,x,3\n2,3,4\n", {}, "a INT, b INT, c INT"),
    "schema, dropmalformed": ("1,x,3\n2,3,4\n5,6\n", {"mode": "DROPMALFORMED"}, "a INT, b INT, c INT"),
    "corrupt record column": ("a,b\n1,2\n3,4,5\nx,4\n6\n", {"header": True, "columnNameOfCorruptRecord": "_bad"},
                              "a INT, b INT, _bad STRING"),
    "corrupt record column, default name, pruned": ("1,x\n2,3\n4\n", {}, "a INT, _corrupt_record STRING, b INT"),
    "schema narrower than file": ("a,b,c\n1,2,3\n", {"header": True}, "a STRING, b STRING"),
    "schema types": ("1,2024-01-05,2024-01-05 10:00:00,1.25,true,7\n", {},
                     "a BIGINT, d DATE, t TIMESTAMP, x DECIMAL(10,2), b BOOLEAN, s SMALLINT"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_matches_pyspark(tmp_path, spark, case):
    text, options, schema = CASES[case]
    path = write(tmp_path / "f.csv", text)
    reader = spark.read.options(**options)
    if schema is not None:
        reader = reader.schema(schema)
    assert_matches_spark(file_source("csv", path, options, schema), reader.csv(path))


def test_inference_is_consistent_across_files(tmp_path):
    write(tmp_path / "d" / "a.csv", "x,y\n1,2024-01-05\n2,2024-01-06\n")
    write(tmp_path / "d" / "b.csv", "x,y\n2.5,2024-01-07 10:00:00\n")
    source = file_source("csv", tmp_path / "d", {"header": "true", "inferSchema": "true"})
    assert source.schema() == pa.schema([("x", pa.float64()), ("y", pa.timestamp("us"))])
    assert read_all(source).column("x").to_pylist() == [1.0, 2.0, 2.5]


@pytest.mark.parametrize("block_size", [64, 4096])
def test_permissive_keeps_malformed_rows_in_place_across_blocks(tmp_path, monkeypatch, block_size):
    monkeypatch.setattr(csv_connector, "_BLOCK_SIZE", block_size)
    lines, expected = ["a,b,c"], []
    for i in range(500):
        if i % 7 == 3:
            lines.append(f"{i},x")
            expected.append({"a": i, "c": None})
        elif i % 11 == 5:
            lines.append(f"{i},y,z,w")
            expected.append({"a": i, "c": "z"})
        else:
            lines.append(f"{i},b,c{i}")
            expected.append({"a": i, "c": f"c{i}"})
    path = write(tmp_path / "f.csv", "\n".join(lines) + "\n")
    source = file_source("csv", path, {"header": True}, "a INT, b STRING, c STRING")
    assert read_all(source, ["a", "c"]).to_pylist() == expected


def test_failfast_names_file_and_line_for_wrong_field_count(tmp_path):
    path = write(tmp_path / "bad.csv", "a,b\n1,2\n\n3\n")
    source = file_source("csv", path, {"header": True, "mode": "FAILFAST"})
    with pytest.raises(FileReadError, match=f"file:{path} at line 4: expected 2 fields, found 1"):
        read_all(source)


def test_failfast_names_file_line_and_column_for_bad_value(tmp_path):
    path = write(tmp_path / "bad.csv", "a,b\n1,2\n3,four\n")
    source = file_source("csv", path, {"header": True, "mode": "failfast"}, "a INT, b INT")
    with pytest.raises(FileReadError, match=r"bad.csv at line 3: cannot parse 'four' as int for column 'b'"):
        read_all(source)


@pytest.mark.parametrize("options, message", [
    ({"mode": "bogus"}, "valid values are PERMISSIVE, DROPMALFORMED, FAILFAST"),
    ({"header": "yes"}, "option 'header' must be 'true' or 'false'"),
    ({"encoding": "latin1"}, "valid values are us-ascii, iso-8859-1, utf-8, utf-16be, utf-16le, utf-16, utf-32"),
    ({"charset": "cp1252"}, "invalid value 'cp1252'"),
    ({"sep": "ab"}, "option 'sep' must be a single character"),
    ({"dateFormat": "dd/MM/yyyy"}, "'dateFormat'='dd/MM/yyyy' is not supported yet"),
])
def test_bad_options_are_configuration_errors(tmp_path, options, message):
    path = write(tmp_path / "f.csv", "a\n1\n")
    with pytest.raises(ConfigurationError, match=message):
        file_source("csv", path, options)


def test_projection_in_requested_order_and_count(tmp_path):
    path = write(tmp_path / "k=7" / "f.csv", "a,b,c\n1,2,3\n4,5,6\n")
    source = file_source("csv", tmp_path, {"header": True, "inferSchema": True})
    assert source.schema().names == ["a", "b", "c", "k"]
    assert read_all(source, ["k", "c"]).to_pylist() == [{"k": 7, "c": 3}, {"k": 7, "c": 6}]
    assert sum(b.num_rows for s in source.splits(1) for b in source.read(s, [], None)) == 2
    assert path


def test_nested_schema_rejected_like_spark(tmp_path):
    path = write(tmp_path / "f.csv", "1\n")
    with pytest.raises(AnalysisException, match="doesn't support the column `a` of the type \"ARRAY<INT>\""):
        read_all(file_source("csv", path, {}, "a ARRAY<INT>"))


def test_gzip_and_empty_files(tmp_path):
    (tmp_path / "d").mkdir()
    with gzip.open(tmp_path / "d" / "a.csv.gz", "wt") as f:
        f.write("x,y\n1,a\n")
    write(tmp_path / "d" / "b.csv", "")
    source = file_source("csv", tmp_path / "d", {"header": True, "inferSchema": True})
    assert read_all(source).to_pylist() == [{"x": 1, "y": "a"}]


def test_header_names_follow_spark():
    assert header_names(["a", "", "a", "A", "b", None]) == ["a0", "_c1", "a2", "A3", "b", "_c5"]


def _write_csv(path, table: pa.Table, options: dict) -> str:
    sink = FileSink(str(path), CsvFormat(), "error", (), options)
    assert sink.setup()
    sink.commit([sink.write_task(0, iter(table.to_batches()))])
    return str(path)


WRITE_TABLE = pa.table({
    "i": pa.array([1, None, 3], pa.int32()),
    "s": ['q"x,y', "", None],
    "d": [1.0, float("nan"), None],
    "dt": pa.array([datetime.date(2024, 1, 5), None, None], pa.date32()),
    "ts": pa.array([datetime.datetime(2024, 1, 5, 10, 0, 0, 250000), None, None], pa.timestamp("us")),
    "b": [True, False, None],
    "w": ["back\\slash", " padded ", "multi\nline"],
})


def test_writer_text_matches_spark_conventions(tmp_path):
    out = _write_csv(tmp_path / "out", WRITE_TABLE, {"header": True})
    (part,) = [p for p in (tmp_path / "out").iterdir() if p.name.endswith(".csv")]
    assert part.read_text().splitlines()[:3] == [
        "i,s,d,dt,ts,b,w",
        '1,"q\\"x,y",1.0,2024-01-05,2024-01-05T10:00:00.25,true,"back\\\\slash"',
        ',"",NaN,,,false," padded "',
    ]
    assert out


def test_written_csv_reads_back_in_quiver_and_spark(tmp_path, spark):
    out = _write_csv(tmp_path / "out", WRITE_TABLE, {"header": True})
    schema = "i INT, s STRING, d DOUBLE, dt DATE, ts TIMESTAMP, b BOOLEAN, w STRING"
    options = {"header": True, "multiLine": True}
    source = file_source("csv", out, options, schema)
    got = read_all(source).to_pylist()
    assert got[0] == {"i": 1, "s": 'q"x,y', "d": 1.0, "dt": datetime.date(2024, 1, 5),
                      "ts": datetime.datetime(2024, 1, 5, 10, 0, 0, 250000), "b": True, "w": "back\\slash"}
    assert got[2]["w"] == "multi\nline"
    assert_matches_spark(source, spark.read.options(**options).schema(schema).csv(out))


def _thousand_rows_one_open_quote() -> str:
    lines = [f"{i},v{i}" for i in range(1000)]
    lines[10] = '10,"oops'
    return "\n".join(lines) + "\n"


EDGE_QUOTES = ('a"b,c\n"ab"c,d\n"ab""c",d\n"a\\"b",c\n  "ab",c\n"ab"  ,c\n"",x\n" ",x\nx,""\n1,"\n'
               'x\\y,z\n2,"y\n')
SPARK_CASES = {
    "open quote ends with its line": (_thousand_rows_one_open_quote(), {}, None),
    "open quote ends with its line, failfast": (_thousand_rows_one_open_quote(), {"mode": "FAILFAST"}, None),
    "open quote runs to the end with multiLine": (_thousand_rows_one_open_quote(), {"multiLine": True}, None),
    "quoted line breaks with multiLine": (
        'a,b\n1,"x\ny"\n2,"p\r\nq"\n3,z\n', {"header": True, "multiLine": True}, None),
    "quoted line breaks without multiLine": ('a,b\n1,"x\ny"\n2,"p\r\nq"\n3,z\n', {"header": True}, None),
    "quoted line breaks without multiLine, corrupt record": (
        'a,b\n1,"x\ny"\n3,z\n', {"header": True}, "a INT, b STRING, _corrupt_record STRING"),
    "open quote, corrupt record, multiLine": (
        'a,b\n1,x\n2,"y\n3,z\n', {"header": True, "multiLine": True}, "a INT, b STRING, _corrupt_record STRING"),
    "open quote inside a line, too few fields": ('a,b,c\n1,"x,y\n2,q,r\n', {"header": True}, None),
    "quote and escape rules within a line": (EDGE_QUOTES, {}, None),
    "quote and escape rules, multiLine": (EDGE_QUOTES.replace('2,"y\n', ""), {"multiLine": True}, None),
    "whitespace lines and line endings": ("a,b\r\n1,2\r\n   \r\n\t\r\n3,4\r5,6\n", {"header": True}, None),
    "whitespace lines, one column": ('a\n1\n   \n"  "\n\n2\n', {"header": True}, None),
    "whitespace line kept with multiLine": ("a,b\n1,2\n  \n3,4\n", {"header": True, "multiLine": True}, None),
    "header after blank lines": ("\n\na,b\n1,2\n", {"header": True}, None),
    "empty file": ("", {}, None),
    "empty file, header": ("", {"header": True}, None),
    "empty file, header, inferSchema": ("", {"header": True, "inferSchema": True}, None),
    "empty file, schema": ("", {}, "a INT"),
    "blank lines only, header": ("\n\n  \n", {"header": True}, None),
    "header only": ("a,b\n", {"header": True}, None),
}


@pytest.mark.parametrize("case", list(SPARK_CASES))
def test_quoting_and_empty_files_match_pyspark(tmp_path, spark, case):
    text, options, schema = SPARK_CASES[case]
    path = tmp_path / "f.csv"
    path.write_bytes(text.encode())
    reader = spark.read.options(**options)
    if schema is not None:
        reader = reader.schema(schema)
    assert_matches_spark(file_source("csv", str(path), options, schema), reader.csv(str(path)))


@pytest.mark.parametrize("options", [{"encoding": "iso-8859-1"}, {"charset": "ISO-8859-1"},
                                     {"encoding": "iso-8859-1", "multiLine": True}])
def test_encoding_matches_pyspark(tmp_path, spark, options):
    path = tmp_path / "latin.csv"
    path.write_bytes("a,b\n1,caf\xe9\n2,\xfcber\n".encode("latin-1"))
    options = {"header": True, **options}
    assert_matches_spark(file_source("csv", str(path), options), spark.read.options(**options).csv(str(path)))


@pytest.mark.parametrize("block_size", [32, 1 << 20])
@pytest.mark.parametrize("mode", ["PERMISSIVE", "FAILFAST", "DROPMALFORMED"])
def test_open_quote_loses_no_rows(tmp_path, monkeypatch, block_size, mode):
    monkeypatch.setattr(csv_connector, "_BLOCK_SIZE", block_size)
    path = write(tmp_path / "f.csv", _thousand_rows_one_open_quote())
    got = read_all(file_source("csv", path, {"mode": mode}, "a INT, b STRING"))
    assert got.column("a").to_pylist() == list(range(1000))
    assert got.column("b").to_pylist()[9:12] == ["v9", "oops", "v11"]


@pytest.mark.parametrize("block_size", [32, 1 << 20])
def test_switch_to_python_reader_mid_file_keeps_every_record_once(tmp_path, monkeypatch, block_size):
    """Malformed rows before and after a line pyarrow cannot be trusted with: all in place, once."""
    monkeypatch.setattr(csv_connector, "_BLOCK_SIZE", block_size)
    lines, expected = ["a,b,c"], []
    for i in range(300):
        if i == 150:
            lines.append(f'{i},"ab"c,z')
            expected.append((i, '"ab"c', "z"))
        elif i % 7 == 3:
            lines.append(f"{i},x")
            expected.append((i, "x", None))
        else:
            lines.append(f"{i},b{i},c")
            expected.append((i, f"b{i}", "c"))
    path = write(tmp_path / "f.csv", "\n".join(lines) + "\n")
    got = read_all(file_source("csv", path, {"header": True}, "a INT, b STRING, c STRING"), ["a", "b", "c"])
    assert [tuple(r.values()) for r in got.to_pylist()] == expected
    dropped = read_all(file_source("csv", path, {"header": True, "mode": "DROPMALFORMED"}, "a INT, b STRING, c STRING"))
    assert dropped.column("a").to_pylist() == [i for i, _, c in expected if c is not None]


def test_failfast_after_switch_names_the_right_line(tmp_path, monkeypatch):
    monkeypatch.setattr(csv_connector, "_BLOCK_SIZE", 32)
    lines = ["a,b"] + [f"{i},v" for i in range(100)]
    lines[20] = '19,"open'
    lines[60] = "59"
    path = write(tmp_path / "bad.csv", "\n".join(lines) + "\n")
    with pytest.raises(FileReadError, match=r"bad.csv at line 61: expected 2 fields, found 1: '59'"):
        read_all(file_source("csv", path, {"header": True, "mode": "FAILFAST"}))


@pytest.mark.parametrize("multiline", [False, True])
def test_ten_megabyte_cell_reads(tmp_path, multiline):
    cell = "x" * 10_000_000
    path = write(tmp_path / "big.csv", f'a,b\n1,"{cell}"\n2,y\n3,{cell}\n')
    got = read_all(file_source("csv", path, {"header": True, "multiLine": multiline}, "a INT, b STRING"))
    assert got.column("a").to_pylist() == [1, 2, 3]
    assert [len(v) for v in got.column("b").to_pylist()] == [10_000_000, 1, 10_000_000]


@pytest.mark.parametrize("options", [{"header": True}, {"header": True, "mode": "FAILFAST"}, {"multiLine": True}])
def test_undecodable_bytes_name_file_and_line(tmp_path, options):
    path = tmp_path / "latin.csv"
    path.write_bytes("a,b\n1,x\n2,caf\xe9\n".encode("latin-1"))
    with pytest.raises(FileReadError, match=r"latin.csv is not valid utf-8 text: byte 13 \(line 3\).*"
                                            r"Set the CSV option 'encoding'.*iso-8859-1"):
        read_all(file_source("csv", str(path), options))


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16le", "utf-32", "us-ascii"])
def test_encodings_read_in_both_readers(tmp_path, encoding):
    text = "a,b\n1,caf\u00e9\n2,\"x\ny\"\n" if encoding != "us-ascii" else "a,b\n1,cafe\n2,\"x\ny\"\n"
    path = tmp_path / "f.csv"
    path.write_bytes(text.encode(encoding))
    got = read_all(file_source("csv", str(path), {"header": True, "encoding": encoding, "multiLine": True}))
    assert got.to_pylist() == [{"a": "1", "b": text.split("\n")[1][2:]}, {"a": "2", "b": "x\ny"}]
    got = read_all(file_source("csv", str(path), {"header": True, "encoding": encoding}))
    assert got.column("a").to_pylist() == ["1", "2", 'y"']


def test_empty_file_is_an_empty_dataframe(tmp_path):
    import quiver

    path = write(tmp_path / "empty.csv", "")
    spark = quiver.SparkSession.builder.getOrCreate()
    for options in ({"header": True}, {}):
        df = spark.read.options(**options).csv(path)
        assert df.columns == []
        assert df.count() == 0
        assert df.collect() == []
