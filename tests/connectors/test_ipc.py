"""quiver/connectors/ipc.py: Arrow IPC / Feather files, memory-mapped and split by record batch."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.ipc as ipc
import pytest

from quiver.connectors import files
from quiver.connectors.files import FileReadError
from quiver.connectors.ipc import IpcFormat
from quiver.connectors.registry import file_source
from quiver.connectors.sink import FileSink
from tests.connectors.spark_compare import read_all

SCHEMA = pa.schema([("x", pa.int64()), ("y", pa.float64())])


def table(n: int) -> pa.Table:
    return pa.table({"x": pa.array(range(n), pa.int64()), "y": pa.array([i * 0.5 for i in range(n)], pa.float64())})


def test_feather_file_schema_rows_and_statistics(tmp_path):
    feather.write_feather(table(10), tmp_path / "t.feather", compression="uncompressed")
    source = file_source("feather", tmp_path / "t.feather")
    assert source.schema() == SCHEMA
    assert read_all(source).equals(table(10))
    assert source.statistics().num_rows == 10
    assert source.describe().startswith("arrow [")


def test_read_is_zero_copy_from_the_memory_map(tmp_path):
    n = 1_000_000
    feather.write_feather(table(n), tmp_path / "t.arrow", compression="uncompressed")
    source = file_source("arrow", tmp_path / "t.arrow")
    before = pa.total_allocated_bytes()
    batches = list(source.read(source.splits(1)[0], ["x", "y"], None))
    assert sum(b.num_rows for b in batches) == n
    # 16 MB of column data were read without being copied into Arrow's memory pool.
    assert pa.total_allocated_bytes() - before < 1_000_000


def test_split_by_record_batch_keeps_order(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "MIN_PIECE_BYTES", 1)
    with ipc.new_file(str(tmp_path / "t.arrow"), SCHEMA) as writer:
        for i in range(8):
            writer.write_table(pa.table({"x": pa.array(range(i * 100, i * 100 + 100), pa.int64()),
                                         "y": pa.array([0.0] * 100)}, schema=SCHEMA))
    source = file_source("ipc", tmp_path / "t.arrow")
    splits = source.splits(4)
    assert len(splits) == 4
    assert [v for s in splits for b in source.read(s, ["x"], None) for v in b.column(0).to_pylist()] == list(range(800))


def test_stream_format_and_partitions(tmp_path):
    (tmp_path / "k=a").mkdir()
    with ipc.new_stream(str(tmp_path / "k=a" / "s.arrows"), SCHEMA) as writer:
        writer.write_table(table(3))
    source = file_source("arrow", tmp_path)
    assert read_all(source, ["k", "x"]).to_pylist() == [{"k": "a", "x": 0}, {"k": "a", "x": 1}, {"k": "a", "x": 2}]
    assert source.statistics().num_rows is None


def test_not_an_ipc_file_names_it(tmp_path):
    (tmp_path / "bad.arrow").write_bytes(b"nope")
    with pytest.raises(FileReadError, match=f"file:{tmp_path}/bad.arrow is not an Arrow IPC file"):
        file_source("arrow", tmp_path / "bad.arrow").schema()


def test_sink_writes_ipc_files_that_read_back(tmp_path):
    sink = FileSink(str(tmp_path / "out"), IpcFormat(), "error", (), {"compression": "zstd"})
    assert sink.setup()
    sink.commit([sink.write_task(0, iter(table(5).to_batches()))])
    written = [p.name for p in (tmp_path / "out").iterdir() if not p.name.startswith("_")]
    assert [name.endswith(".zstd.arrow") for name in written] == [True]
    assert read_all(file_source("arrow", tmp_path / "out")).equals(table(5))
