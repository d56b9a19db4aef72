"""quiver/connectors/parquet.py: schema, splits by row group, pushdown, statistics, bad files."""
from __future__ import annotations

import datetime
import decimal
import os
import re

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from quiver.connectors import files
from quiver.connectors.files import FileReadError
from quiver.connectors.parquet import ParquetFormat
from quiver.connectors.registry import file_source
from quiver.connectors.sink import FileSink
from quiver.engine.core.errors import AnalysisException
from tests.connectors.spark_compare import assert_matches_spark, read_all


def write(path, table: pa.Table, **kwargs) -> str:
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    pq.write_table(table, str(path), **kwargs)
    return str(path)


def numbers(lo: int, hi: int) -> pa.Table:
    return pa.table({"x": pa.array(range(lo, hi), pa.int64()), "s": [f"v{i}" for i in range(lo, hi)]})


def test_schema_rows_and_describe(tmp_path):
    write(tmp_path / "d" / "a.parquet", numbers(0, 5))
    write(tmp_path / "d" / "b.parquet", numbers(5, 8))
    source = file_source("parquet", tmp_path / "d")
    assert source.schema() == pa.schema([("x", pa.int64()), ("s", pa.string())])
    assert read_all(source).column("x").to_pylist() == list(range(8))
    assert source.describe() == f"parquet [{tmp_path}/d] 2 files"
    stats = source.statistics()
    assert stats.num_rows == 8
    assert stats.size_bytes == sum(os.path.getsize(tmp_path / "d" / n) for n in ["a.parquet", "b.parquet"])


def test_large_file_is_cut_by_row_groups_and_every_row_read_once(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "MIN_PIECE_BYTES", 1)
    write(tmp_path / "big.parquet", numbers(0, 20_000), row_group_size=1000, compression="none")
    source = file_source("parquet", tmp_path / "big.parquet")
    splits = source.splits(4)
    assert 3 <= len(splits) <= 6
    assert all(p.row_groups for s in splits for p in s.pieces)
    seen = [v for s in splits for b in source.read(s, ["x"], None) for v in b.column(0).to_pylist()]
    assert seen == list(range(20_000))
    assert len(source.splits(1)) == 1


def test_reads_stream_batches_not_one_table(tmp_path):
    write(tmp_path / "f.parquet", numbers(0, 300_000), row_group_size=100_000)
    source = file_source("parquet", tmp_path / "f.parquet")
    batches = list(source.read(source.splits(1)[0], ["x"], None))
    assert len(batches) >= 3 and all(isinstance(b, pa.RecordBatch) for b in batches)


def test_a_large_row_group_is_decoded_a_batch_at_a_time(tmp_path, monkeypatch):
    """A scan holds one bounded batch of a row group whose columns exceed SCAN_ROW_GROUP_BYTES, every row
    once, in order; a row group under the bound is read whole."""
    from quiver.connectors import parquet

    write(tmp_path / "f.parquet", numbers(0, 50_000), row_group_size=25_000)
    source = file_source("parquet", tmp_path / "f.parquet")
    whole = list(source.read(source.splits(1)[0], ["x", "s"], None))
    assert [b.num_rows for b in whole] == [25_000, 25_000]
    monkeypatch.setattr(parquet, "SCAN_ROW_GROUP_BYTES", 100_000)
    monkeypatch.setattr(parquet, "SCAN_BATCH_ROWS", 4096)
    batches = list(source.read(source.splits(1)[0], ["x", "s"], None))
    assert max(b.num_rows for b in batches) == 4096 and len(batches) == 2 * 7
    assert pa.Table.from_batches(batches).equals(pa.Table.from_batches(whole))
    # Only the columns read count: x alone (8 bytes a row) stays under a bound that x and s exceed.
    monkeypatch.setattr(parquet, "SCAN_ROW_GROUP_BYTES", 300_000)
    assert [b.num_rows for b in source.read(source.splits(1)[0], ["x"], None)] == [25_000, 25_000]


def _corrupt_row_group(path: str, row_group: int) -> None:
    """Overwrite the data pages of one row group, so reading it would fail."""
    meta = pq.read_metadata(path)
    with open(path, "r+b") as f:
        for c in range(meta.num_columns):
            chunk = meta.row_group(row_group).column(c)
            f.seek(chunk.dictionary_page_offset or chunk.data_page_offset)
            f.write(b"\xff" * chunk.total_compressed_size)


def test_predicate_skips_row_groups_by_statistics(tmp_path):
    path = write(tmp_path / "f.parquet", numbers(0, 4000), row_group_size=1000)
    _corrupt_row_group(path, 3)
    source = file_source("parquet", path)
    with pytest.raises(FileReadError):
        read_all(source)
    # Row group 3 holds x in [3000, 4000): statistics rule it out, so its broken pages are never read.
    # The predicate is a hint that prunes whole row groups; rows within a kept group are the plan's to filter.
    got = read_all(source, ["s", "x"], pc.field("x") < 1500)
    assert got.column_names == ["s", "x"]
    assert got.column("x").to_pylist() == list(range(2000))


def test_partition_columns_appended_and_pruned_by_predicate(tmp_path):
    write(tmp_path / "t" / "k=1" / "a.parquet", numbers(0, 3))
    write(tmp_path / "t" / "k=2" / "a.parquet", numbers(3, 6))
    (tmp_path / "t" / "k=3").mkdir()
    (tmp_path / "t" / "k=3" / "broken.parquet").write_bytes(b"not parquet")
    source = file_source("parquet", tmp_path / "t", {"pathGlobFilter": "a.parquet"})
    assert source.schema().names == ["x", "s", "k"]
    assert read_all(source, ["k", "x"]).to_pylist()[:2] == [{"k": 1, "x": 0}, {"k": 1, "x": 1}]
    everything = file_source("parquet", tmp_path / "t")
    # k=3 holds a broken file; a predicate on the partition column means it is never opened.
    got = read_all(everything, ["x", "k"], (pc.field("k") == 2) & (pc.field("x") > 3))
    assert got.to_pylist() == [{"x": 3, "k": 2}, {"x": 4, "k": 2}, {"x": 5, "k": 2}]


def test_count_reads_no_columns(tmp_path):
    write(tmp_path / "k=1" / "a.parquet", numbers(0, 7))
    source = file_source("parquet", tmp_path)
    assert sum(b.num_rows for s in source.splits(2) for b in source.read(s, [], None)) == 7


def test_corrupt_file_names_the_file(tmp_path):
    write(tmp_path / "d" / "good.parquet", numbers(0, 2))
    (tmp_path / "d" / "bad.parquet").write_bytes(b"PAR1 definitely not parquet")
    with pytest.raises(FileReadError, match=f"file:{tmp_path}/d/bad.parquet"):
        file_source("parquet", tmp_path / "d").statistics()
    bad = file_source("parquet", tmp_path / "d" / "bad.parquet", schema="x bigint, s string")
    with pytest.raises(FileReadError, match="bad.parquet"):
        read_all(bad)


def test_empty_folder_needs_a_schema(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(AnalysisException, match="UNABLE_TO_INFER_SCHEMA"):
        file_source("parquet", tmp_path / "empty").schema()
    source = file_source("parquet", tmp_path / "empty", schema="a INT, b STRING")
    assert len(source.splits(4)) == 1
    table = read_all(source)
    assert table.num_rows == 0 and table.schema.names == ["a", "b"]
    assert source.statistics().num_rows == 0


def test_types_normalized_to_spark_arrow_types(tmp_path):
    table = pa.table({
        "ts": pa.array([datetime.datetime(2024, 1, 5, 10)], pa.timestamp("ns", "UTC")),
        "u": pa.array([7], pa.uint32()),
        "d": pa.array(["a"]).dictionary_encode(),
        "big": pa.array(["b"], pa.large_string()),
    })
    source = file_source("parquet", write(tmp_path / "f.parquet", table))
    assert source.schema() == pa.schema([("ts", pa.timestamp("us")), ("u", pa.int64()), ("d", pa.string()),
                                         ("big", pa.string())])
    assert read_all(source).to_pylist() == [{"ts": datetime.datetime(2024, 1, 5, 10), "u": 7, "d": "a", "big": "b"}]


def test_merge_schema_option(tmp_path):
    write(tmp_path / "a.parquet", pa.table({"x": [1]}))
    write(tmp_path / "b.parquet", pa.table({"x": [2], "y": ["b"]}))
    assert file_source("parquet", tmp_path).schema().names == ["x"]
    merged = file_source("parquet", tmp_path, {"mergeSchema": True})
    assert read_all(merged).to_pylist() == [{"x": 1, "y": None}, {"x": 2, "y": "b"}]


def test_spark_written_parquet_reads_the_same(tmp_path, spark):
    path = str(tmp_path / "spark")
    (spark.createDataFrame(
        [(1, "a", 1.5, datetime.date(2024, 1, 5), datetime.datetime(2024, 1, 5, 10, 0), [1, 2], {"k": 1}),
         (2, None, None, None, None, None, None)],
        "i int, s string, d double, dt date, ts timestamp, arr array<int>, m map<string,int>")
     .write.partitionBy("i").parquet(path))
    assert_matches_spark(file_source("parquet", path), spark.read.parquet(path), ordered=False)


def test_spark_reads_what_the_sink_wrote(tmp_path, spark):
    table = pa.table({"k": [1, 1, 2], "ts": pa.array([datetime.datetime(2024, 1, 5, 10)] * 3, pa.timestamp("us")),
                      "v": [0.5, None, 2.0]})
    sink = FileSink(str(tmp_path / "out"), ParquetFormat(), "error", ["k"])
    assert sink.setup()
    sink.commit([sink.write_task(0, iter(table.to_batches()))])
    path = str(tmp_path / "out")
    assert spark.read.parquet(path).dtypes == [("ts", "timestamp"), ("v", "double"), ("k", "int")]
    assert_matches_spark(file_source("parquet", path), spark.read.parquet(path), ordered=False)


LITERALS = {"tinyint": "1", "smallint": "1", "int": "1", "bigint": "1", "float": "1.5", "double": "1.5",
            "decimal(5,2)": "1.5", "decimal(20,2)": "1.5", "string": "'1'", "binary": "cast('1' as binary)",
            "boolean": "true", "date": "date'2024-01-02'", "timestamp": "timestamp'2024-01-02 03:04:05'"}
# (type in the file, type in the user schema): Spark refuses these.
REFUSED = [("bigint", "string"), ("bigint", "int"), ("bigint", "double"), ("bigint", "decimal(20,2)"),
           ("int", "string"), ("int", "float"), ("int", "decimal(5,2)"), ("double", "float"), ("double", "bigint"),
           ("string", "int"), ("boolean", "int"), ("decimal(20,2)", "decimal(5,2)"), ("timestamp", "date"),
           ("date", "string")]
# Spark widens these, and Quiver reads the same values.
WIDENED = [("int", "bigint"), ("tinyint", "int"), ("smallint", "bigint"), ("int", "double"), ("float", "double"),
           ("int", "decimal(20,2)"), ("decimal(5,2)", "decimal(20,2)"), ("string", "binary"), ("binary", "string"),
           ("int", "smallint")]
# Spark reads these by reinterpreting the stored bits (a date as its day number, a decimal's unscaled
# value): other values than the cast a user would expect, so Quiver refuses them too.
REINTERPRETED = [("date", "int"), ("decimal(5,2)", "int"), ("int", "date")]


def _spark_file(spark, tmp_path, kind: str) -> str:
    path = str(tmp_path / "spark" / kind.replace("(", "_").replace(",", "_").replace(")", ""))
    if not os.path.exists(path):
        spark.sql(f"SELECT cast({LITERALS[kind]} AS {kind}) AS a, 7 AS other").write.parquet(path)
    return path


@pytest.mark.parametrize("stored, wanted", REFUSED + REINTERPRETED, ids=lambda t: t)
def test_a_user_schema_the_files_type_does_not_widen_to_is_refused_as_spark_does(tmp_path, spark, stored, wanted):
    path = _spark_file(spark, tmp_path, stored)
    if (stored, wanted) in REFUSED:
        with pytest.raises(Exception, match="PARQUET_COLUMN_DATA_TYPE_MISMATCH|mismatch|not support|Unable"):
            spark.read.schema(f"a {wanted}, other int").parquet(path).collect()
    source = file_source("parquet", path, schema=f"a {wanted}, other int")
    message = (r"\[FAILED_READ_FILE.PARQUET_COLUMN_DATA_TYPE_MISMATCH\] .*file:.*\.parquet\. Data type mismatches "
               rf"when reading Parquet column \[a\]\. Expected Spark type {re.escape(wanted)}, actual Parquet type "
               rf"[A-Z_0-9]+ \({re.escape(stored)}\)\. Give column 'a' the type {re.escape(stored)}")
    with pytest.raises(AnalysisException, match=message):
        read_all(source)
    assert read_all(file_source("parquet", path, schema="other int")).to_pylist() == [{"other": 7}]


@pytest.mark.parametrize("stored, wanted", WIDENED, ids=lambda t: t)
def test_a_user_schema_spark_widens_to_reads_the_same_values(tmp_path, spark, stored, wanted):
    path = _spark_file(spark, tmp_path, stored)
    assert_matches_spark(file_source("parquet", path, schema=f"a {wanted}, other int"),
                         spark.read.schema(f"a {wanted}, other int").parquet(path))


def test_a_mismatched_user_schema_fails_the_query_with_the_analysis_error(tmp_path):
    from quiver.engine.api.session import Session

    path = write(tmp_path / "d" / "f.parquet", pa.table({"a": pa.array([1, 2], pa.int64())}))
    session = Session.builder.master("local[1]").appName("parquet-tests").getOrCreate()
    with pytest.raises(AnalysisException, match=r"column \[a\]\. Expected Spark type string, actual Parquet type "
                                                r"INT64 \(bigint\)"):
        session.read.schema("a string").parquet(os.path.dirname(path)).collect()
    widened = session.read.schema("a decimal(25,0)").parquet(os.path.dirname(path)).collect()
    assert [r.a for r in widened] == [decimal.Decimal(1), decimal.Decimal(2)]
