"""quiver/connectors/json.py: Spark's JSON Lines inference, corrupt records, and the JSON writer."""
from __future__ import annotations

import datetime
import json
from decimal import Decimal

import pyarrow as pa
import pytest

from quiver.connectors.files import FileReadError
from quiver.connectors.json import JsonFormat
from quiver.connectors.json_schema import infer_value_type, merge_types
from quiver.connectors.registry import file_source
from quiver.connectors.sink import FileSink
from quiver.engine.core.errors import ConfigurationError
from tests.connectors.spark_compare import assert_matches_spark, read_all

MIXED = """\
{"z": 1, "a": 1.5, "s": "x", "b": true, "n": null, "o": {"y": 2, "x": "q"}, "arr": [1, 2]}
{"z": 3000000000, "a": 2, "extra": "e", "d": "2024-01-05", "o": {"w": [1, 2.5]}, "arr": []}

{"z": 12345678901234567890123, "s": 5, "b": false, "arr": [{"k": 1}]}
[{"z": 7}, {"s": "from an array"}]
{"o": "now a string", "e": {}}
"""
CORRUPT = '{"a": 1}\nnot json\n5\n{"a": 2, "b": "x"}\n'


def write(path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("text, options", [
    (MIXED, {}),
    (CORRUPT, {}),
    (CORRUPT, {"mode": "DROPMALFORMED"}),
    (CORRUPT, {"columnNameOfCorruptRecord": "bad"}),
], ids=["mixed types", "permissive corrupt", "dropmalformed", "corrupt column name"])
def test_matches_pyspark(tmp_path, spark, text, options):
    path = write(tmp_path / "f.json", text)
    assert_matches_spark(file_source("json", path, options), spark.read.options(**options).json(path))


def test_user_schema_with_dates_and_bad_values(tmp_path, spark):
    text = '{"a": 1, "t": "2024-01-05T10:00:00", "d": "2024-01-05"}\n{"a": "x", "t": null}\n'
    path = write(tmp_path / "f.json", text)
    schema = "a BIGINT, t TIMESTAMP, d DATE, missing STRING"
    assert_matches_spark(file_source("json", path, {}, schema), spark.read.schema(schema).json(path))


def test_failfast_names_file_and_line(tmp_path):
    path = write(tmp_path / "f.json", '{"a": 1}\n\n{"a": \n')
    with pytest.raises(FileReadError, match=f"file:{path} at line 3"):
        file_source("json", path, {"mode": "FAILFAST"}).schema()
    typed = file_source("json", write(tmp_path / "g.json", '{"a": 1}\n{"a": "x"}\n'), {"mode": "FAILFAST"}, "a INT")
    with pytest.raises(FileReadError, match="g.json at line 2: field 'a' value \"x\" does not fit type int"):
        read_all(typed)


def test_fast_reader_hands_over_to_python_mid_file(tmp_path):
    lines = [f'{{"a": {i}}}' for i in range(150_000)] + ['{"a": "x"}', '{"a": 7}']
    path = write(tmp_path / "f.json", "\n".join(lines) + "\n")
    source = file_source("json", path, {}, "a BIGINT")
    values = read_all(source).column("a").to_pylist()
    assert values == list(range(150_000)) + [None, 7]
    assert file_source("json", path).schema() == pa.schema([("a", pa.string())])


def test_huge_integers_inferred_as_decimal(tmp_path):
    path = write(tmp_path / "f.json", '{"a": 12345678901234567890123}\n{"a": 1}\n')
    source = file_source("json", path)
    assert source.schema() == pa.schema([("a", pa.decimal128(23, 0))])
    assert read_all(source).column("a").to_pylist() == [Decimal("12345678901234567890123"), Decimal(1)]


def test_multiline_not_supported_yet(tmp_path):
    path = write(tmp_path / "f.json", "[]")
    with pytest.raises(ConfigurationError, match="'multiLine'=true is not supported yet"):
        file_source("json", path, {"multiLine": True})


def test_inference_rules():
    assert infer_value_type({"b": 1, "a": [1, 2.5]}) == pa.struct([("a", pa.list_(pa.float64())), ("b", pa.int64())])
    assert merge_types(pa.int64(), pa.decimal128(25, 0)) == pa.decimal128(25, 0)
    assert merge_types(pa.bool_(), pa.int64()) == pa.string()
    assert merge_types(pa.null(), pa.list_(pa.null())) == pa.list_(pa.null())


def test_partitions_and_projection(tmp_path):
    write(tmp_path / "d=2024-01-05" / "f.json", '{"b": 1, "a": "x"}\n{"b": 2}\n')
    source = file_source("json", tmp_path)
    assert source.schema() == pa.schema([("a", pa.string()), ("b", pa.int64()), ("d", pa.date32())])
    assert read_all(source, ["d", "b"]).to_pylist() == [{"d": datetime.date(2024, 1, 5), "b": 1},
                                                        {"d": datetime.date(2024, 1, 5), "b": 2}]


WRITE_TABLE = pa.table({
    "i": pa.array([1, None], pa.int64()),
    "s": ['quote " and \\ and \t tab', None],
    "f": [float("nan"), 2.0],
    "dec": pa.array([Decimal("1.25"), None], pa.decimal128(5, 2)),
    "dt": pa.array([datetime.date(2024, 1, 5), None]),
    "ts": pa.array([datetime.datetime(2024, 1, 5, 10, 0), None], pa.timestamp("us")),
    "st": pa.array([{"x": 1, "y": None}, None], pa.struct([("x", pa.int64()), ("y", pa.string())])),
    "arr": pa.array([[1, None], []], pa.list_(pa.int64())),
})


def _write_json(path, table: pa.Table, options: dict | None = None) -> str:
    sink = FileSink(str(path), JsonFormat(), "error", (), options)
    assert sink.setup()
    sink.commit([sink.write_task(0, iter(table.to_batches()))])
    return str(path)


def test_writer_omits_nulls_like_spark(tmp_path):
    out = _write_json(tmp_path / "out", WRITE_TABLE)
    (part,) = [p for p in (tmp_path / "out").iterdir() if p.name.endswith(".json")]
    lines = [json.loads(line) for line in part.read_text().splitlines()]
    assert lines == [
        {"i": 1, "s": 'quote " and \\ and \t tab', "f": "NaN", "dec": 1.25, "dt": "2024-01-05",
         "ts": "2024-01-05T10:00:00", "st": {"x": 1}, "arr": [1, None]},
        {"f": 2.0, "arr": []},
    ]
    assert out


def test_written_json_reads_back_in_spark(tmp_path, spark):
    out = _write_json(tmp_path / "out", WRITE_TABLE)
    schema = ("i BIGINT, s STRING, f DOUBLE, dec DECIMAL(5,2), dt DATE, ts TIMESTAMP, "
              "st STRUCT<x: BIGINT, y: STRING>, arr ARRAY<BIGINT>")
    assert_matches_spark(file_source("json", out, {}, schema), spark.read.schema(schema).json(out))
    assert_matches_spark(file_source("json", out), spark.read.json(out))
