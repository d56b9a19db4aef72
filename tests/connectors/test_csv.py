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
    ({"encoding": "latin1"}, "only utf-8"),
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
