"""quiver/connectors/sink.py (FileSink): save modes, staging, Hive folders, atomic commit and abort."""
from __future__ import annotations

import datetime
import os
import re
from collections.abc import Iterator

import pyarrow as pa
import pytest

from quiver.connectors.base import Sink
from quiver.connectors.registry import file_sink, file_source
from quiver.connectors.sink import FileSink
from quiver.engine.core.errors import AnalysisException, ConfigurationError
from tests.connectors.spark_compare import assert_matches_spark, read_all

TABLE = pa.table({
    "k": pa.array([1, 2, 1, None], pa.int32()),
    "day": pa.array([datetime.date(2024, 1, 5)] * 3 + [None], pa.date32()),
    "s": ["a", "b/c", "d", "e"],
    "v": [1.5, 2.5, 3.5, 4.5],
})


def tree(root) -> list[str]:
    """Every file under `root`, relative, sorted; part file ids replaced by <id>."""
    found = []
    for folder, _, names in os.walk(root):
        for name in names:
            rel = os.path.relpath(os.path.join(folder, name), root)
            found.append(re.sub(r"part-(\d{5})-[0-9a-f]{32}", r"part-\1-<id>", rel))
    return sorted(found)


def run_job(sink: FileSink, tasks: list[Iterator[pa.RecordBatch]]) -> bool:
    """What the driver does: setup, one write_task per partition, commit, or abort on failure."""
    if not sink.setup():
        return False
    try:
        results = [sink.write_task(p, batches) for p, batches in enumerate(tasks)]
        sink.commit(results)
    except BaseException:
        sink.abort()
        raise
    return True


def two_tasks() -> list[Iterator[pa.RecordBatch]]:
    return [iter(TABLE.slice(0, 2).to_batches()), iter(TABLE.slice(2).to_batches())]


def test_sink_protocol_and_file_names(tmp_path):
    sink = file_sink("parquet", tmp_path / "out")
    assert isinstance(sink, Sink)
    assert run_job(sink, two_tasks())
    assert tree(tmp_path / "out") == ["_SUCCESS", "_quiver_commit", "part-00000-<id>.c000.snappy.parquet",
                                      "part-00001-<id>.c000.snappy.parquet"]
    assert read_all(file_source("parquet", tmp_path / "out")).equals(TABLE)
    assert os.listdir(tmp_path) == ["out"]


def test_staging_folder_sits_next_to_the_destination(tmp_path):
    sink = file_sink("csv", tmp_path / "out")
    sink.setup()
    assert os.path.dirname(sink.staging) == str(tmp_path)
    assert os.path.basename(sink.staging).startswith(".out.quiver-staging-")
    output = sink.write_task(3, iter(TABLE.to_batches()))
    assert not os.path.exists(tmp_path / "out")
    assert [os.path.basename(f) for f in output.files][0].startswith("part-00003-")
    sink.abort()
    assert os.listdir(tmp_path) == []


def test_partition_by_writes_hive_folders_without_the_columns(tmp_path):
    assert run_job(file_sink("json", tmp_path / "out", partition_by=["k", "day"]), two_tasks())
    assert tree(tmp_path / "out") == [
        "_SUCCESS",
        "_quiver_commit",
        "k=1/day=2024-01-05/part-00000-<id>.c000.json",
        "k=1/day=2024-01-05/part-00001-<id>.c000.json",
        "k=2/day=2024-01-05/part-00000-<id>.c000.json",
        "k=__HIVE_DEFAULT_PARTITION__/day=__HIVE_DEFAULT_PARTITION__/part-00001-<id>.c000.json",
    ]
    first = (tmp_path / "out" / "k=2" / "day=2024-01-05").iterdir().__next__().read_text()
    assert first == '{"s":"b/c","v":2.5}\n'
    back = read_all(file_source("json", tmp_path / "out"), ["s", "v", "k", "day"])
    assert sorted(back.to_pylist(), key=lambda r: r["s"]) == TABLE.select(["s", "v", "k", "day"]).to_pylist()


def test_partitioned_output_reads_back_in_spark(tmp_path, spark):
    assert run_job(file_sink("parquet", tmp_path / "out", partition_by=["k"]), two_tasks())
    path = str(tmp_path / "out")
    assert_matches_spark(file_source("parquet", path), spark.read.parquet(path), ordered=False)


def test_error_mode_refuses_existing_data_and_names_the_path(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("old")
    with pytest.raises(AnalysisException, match=f"Path file:{tmp_path}/out already exists"):
        run_job(file_sink("csv", tmp_path / "out"), two_tasks())
    assert tree(tmp_path / "out") == ["keep.txt"]
    assert os.listdir(tmp_path) == ["out"]


def test_error_mode_accepts_an_empty_folder(tmp_path):
    (tmp_path / "out").mkdir()
    assert run_job(file_sink("csv", tmp_path / "out", "errorifexists"), two_tasks())
    assert "_SUCCESS" in os.listdir(tmp_path / "out")


def test_ignore_mode_skips_the_job(tmp_path):
    (tmp_path / "out").mkdir()
    sink = file_sink("csv", tmp_path / "out", "ignore")
    assert sink.setup() is False
    assert os.listdir(tmp_path) == ["out"]
    assert run_job(file_sink("csv", tmp_path / "new", "ignore"), two_tasks())


def test_overwrite_replaces_everything(tmp_path):
    assert run_job(file_sink("parquet", tmp_path / "out", partition_by=["k"]), two_tasks())
    assert run_job(file_sink("parquet", tmp_path / "out", "overwrite"), [iter(TABLE.slice(0, 1).to_batches())])
    assert tree(tmp_path / "out") == ["_SUCCESS", "_quiver_commit", "part-00000-<id>.c000.snappy.parquet"]
    assert os.listdir(tmp_path) == ["out"]


def test_append_adds_files(tmp_path):
    assert run_job(file_sink("parquet", tmp_path / "out"), two_tasks())
    assert run_job(file_sink("parquet", tmp_path / "out", "append"), two_tasks())
    assert read_all(file_source("parquet", tmp_path / "out")).num_rows == 2 * TABLE.num_rows
    assert len(tree(tmp_path / "out")) == 6
    assert os.listdir(tmp_path) == ["out"]


def failing_task() -> Iterator[pa.RecordBatch]:
    yield from TABLE.slice(0, 2).to_batches()
    raise RuntimeError("task blew up mid-write")


@pytest.mark.parametrize("mode, existing", [("error", False), ("overwrite", True), ("append", True)])
def test_failure_mid_job_leaves_no_partial_output(tmp_path, mode, existing):
    if existing:
        assert run_job(file_sink("parquet", tmp_path / "out", partition_by=["k"]), two_tasks())
    before = tree(tmp_path / "out") if existing else None
    sink = file_sink("parquet", tmp_path / "out", mode, partition_by=["k"])
    with pytest.raises(RuntimeError, match="blew up"):
        run_job(sink, [iter(TABLE.to_batches()), failing_task()])
    assert os.listdir(tmp_path) == (["out"] if existing else [])
    if existing:
        assert tree(tmp_path / "out") == before


def test_files_of_a_failed_attempt_are_not_committed(tmp_path):
    sink = file_sink("csv", tmp_path / "out")
    sink.setup()
    with pytest.raises(RuntimeError):
        sink.write_task(1, failing_task())
    retried = sink.write_task(1, iter(TABLE.slice(2).to_batches()))
    sink.commit([sink.write_task(0, iter(TABLE.slice(0, 2).to_batches())), retried])
    assert tree(tmp_path / "out") == ["_SUCCESS", "_quiver_commit", "part-00000-<id>.c000.csv",
                                      "part-00001-<id>.c000.csv"]
    assert read_all(file_source("csv", tmp_path / "out")).num_rows == TABLE.num_rows


def test_empty_result_still_writes_the_schema(tmp_path):
    sink = file_sink("parquet", tmp_path / "out", schema=TABLE.schema)
    assert run_job(sink, [iter([]), iter(TABLE.slice(0, 0).to_batches())])
    source = file_source("parquet", tmp_path / "out")
    assert source.schema().names == TABLE.schema.names and read_all(source).num_rows == 0


@pytest.mark.parametrize("kwargs, error, message", [
    ({"mode": "bogus"}, ConfigurationError, "valid values are append, overwrite, error, errorifexists, ignore"),
    ({"partition_by": ["nope"]}, AnalysisException, "partition column 'nope' does not exist"),
    ({"partition_by": ["k", "day", "s", "v"]}, AnalysisException, "Cannot use all columns"),
    ({"options": {"compression": "lzo"}}, ConfigurationError, "'compression' has invalid value 'lzo'"),
])
def test_bad_sink_arguments(tmp_path, kwargs, error, message):
    with pytest.raises(error, match=message):
        file_sink("parquet", tmp_path / "out", schema=TABLE.schema, **kwargs)


@pytest.mark.parametrize("fmt, options, message", [
    ("csv", {"quoteAll": True}, "CSV write option 'quoteAll'='true' is not supported yet"),
    ("csv", {"sep": "ab"}, "option 'sep' must be a single character"),
    ("json", {"ignoreNullFields": "maybe"}, "option 'ignoreNullFields' must be 'true' or 'false'"),
])
def test_write_options_checked_before_the_job_runs(tmp_path, fmt, options, message):
    with pytest.raises(ConfigurationError, match=message):
        file_sink(fmt, tmp_path / "out", options=options)
    assert os.listdir(tmp_path) == []


def test_csv_cannot_write_nested_columns(tmp_path):
    schema = pa.schema([("a", pa.list_(pa.int64()))])
    with pytest.raises(AnalysisException, match="CSV datasource doesn't support the column `a`"):
        file_sink("csv", tmp_path / "out", schema=schema)
