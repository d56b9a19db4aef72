"""quiver/connectors/object_store.py: `qs.read` and `df.write` reach every file system pyarrow or fsspec
opens by URI, not only local paths and s3://: fsspec's in-memory file system (listing, globs, partitioned
folders, a write and its read back), a file served over http:// on loopback, and pyarrow's own GCS file
system for gs:// (opened, not reached: no network here)."""
from __future__ import annotations

import functools
import http.server
import io
import os
import threading
import uuid

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from quiver import Session
from quiver.connectors import object_store
from quiver.engine.core.errors import AnalysisException

fsspec = pytest.importorskip("fsspec")


@pytest.fixture(scope="module")
def qs() -> Session:
    return Session.builder.master("local[2]").getOrCreate()


@pytest.fixture
def memory_root():
    root = f"memory://quiver-test-{uuid.uuid4().hex[:8]}"
    memory = fsspec.filesystem("memory")
    yield root, memory
    if memory.exists(root.removeprefix("memory://")):
        memory.rm(root.removeprefix("memory://"), recursive=True)


def test_parquet_csv_and_json_read_from_fsspecs_memory_file_system(qs, memory_root):
    root, memory = memory_root
    bucket = root.removeprefix("memory://")
    with memory.open(f"{bucket}/t/part-0.parquet", "wb") as f:
        pq.write_table(pa.table({"k": [1, 2], "v": ["a", "b"]}), f)
    with memory.open(f"{bucket}/t/part-1.parquet", "wb") as f:
        pq.write_table(pa.table({"k": [3], "v": ["c"]}), f)
    with memory.open(f"{bucket}/c/x.csv", "wb") as f:
        f.write(b"k,v\n1,a\n2,b\n")
    with memory.open(f"{bucket}/j/x.json", "wb") as f:
        f.write(b'{"k": 1}\n{"k": 5}\n')
    assert sorted(qs.read.parquet(f"{root}/t").collect()) == [(1, "a"), (2, "b"), (3, "c")]
    assert qs.read.parquet(f"{root}/t/part-*.parquet").count() == 3
    assert qs.read.option("header", True).csv(f"{root}/c").collect() == [("1", "a"), ("2", "b")]
    assert sorted(r.k for r in qs.read.json(f"{root}/j/x.json").collect()) == [1, 5]


def test_a_partitioned_write_to_memory_reads_back(qs, memory_root):
    root, _ = memory_root
    df = qs.createDataFrame([(1, "x"), (2, "y"), (3, "x")], ["n", "part"])
    df.write.partitionBy("part").mode("overwrite").parquet(f"{root}/out")
    back = qs.read.parquet(f"{root}/out")
    assert sorted(back.collect()) == [(1, "x"), (2, "y"), (3, "x")]
    assert sorted(back.columns) == ["n", "part"]


def test_a_missing_path_on_another_file_system_names_it(qs, memory_root):
    root, _ = memory_root
    with pytest.raises(AnalysisException, match=rf"PATH_NOT_FOUND.*{root}/nothing.*memory://"):
        qs.read.parquet(f"{root}/nothing").collect()


class RangeHandler(http.server.SimpleHTTPRequestHandler):
    """A static file server that answers byte ranges, as object stores and CDNs do (Parquet reads its footer
    first)."""

    def send_head(self):  # noqa: D102 - http.server's hook
        spec = self.headers.get("Range", "")
        path = self.translate_path(self.path)
        if not spec.startswith("bytes=") or not os.path.isfile(path):
            return super().send_head()
        data = open(path, "rb").read()
        first, _, last = spec[len("bytes="):].partition("-")
        start = int(first) if first else len(data) - int(last)
        end = min(int(last), len(data) - 1) if first and last else len(data) - 1
        self.send_response(206)
        self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
        self.send_header("Content-Length", str(end - start + 1))
        self.end_headers()
        return io.BytesIO(data[start:end + 1])


@pytest.fixture
def http_folder(tmp_path):
    pytest.importorskip("aiohttp", reason="fsspec's HTTP file system needs aiohttp")
    pq.write_table(pa.table({"city": ["Oslo", "Lima"], "n": [3, 4]}), tmp_path / "cities.parquet")
    (tmp_path / "cities.csv").write_text("city,n\nOslo,3\nLima,4\n")
    handler = functools.partial(RangeHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_file_served_over_http_reads_like_a_local_one(qs, http_folder):
    assert sorted(qs.read.parquet(f"{http_folder}/cities.parquet").collect()) == [("Lima", 4), ("Oslo", 3)]
    rows = qs.read.option("header", True).option("inferSchema", True).csv(f"{http_folder}/cities.csv")
    assert sorted(rows.collect()) == [("Lima", 4), ("Oslo", 3)]


def test_gs_opens_pyarrows_gcs_file_system_and_unknown_schemes_are_refused():
    fs, path = object_store.resolve("gs://some-bucket/a/b.parquet")
    assert isinstance(fs, pafs.GcsFileSystem) and path == "some-bucket/a/b.parquet"
    assert object_store.is_object_path("abfs://c@acct.dfs.core.windows.net/x")
    assert not object_store.is_object_path("C:/data/x.parquet") and not object_store.is_object_path("/tmp/x")
