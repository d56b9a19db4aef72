"""quiver/connectors/parquet.py's footer cache: one parse per version of a file; a rewritten file is read
afresh (its size or modification time changed), so statistics and row counts are never stale."""
from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq

from quiver.connectors import parquet
from quiver.connectors.paths import DataFile


def test_footer_is_parsed_once_and_reread_after_a_rewrite(tmp_path):
    path = str(tmp_path / "t.parquet")
    pq.write_table(pa.table({"x": [1, 2, 3]}), path)
    first = parquet.read_metadata(path)
    assert parquet.read_metadata(path) is first
    assert parquet._footer(path)[1]["x"] == [1, 3, 0, True]
    pq.write_table(pa.table({"x": [10, 20, 30, 40, None]}), path)
    os.utime(path, ns=(os.stat(path).st_atime_ns, os.stat(path).st_mtime_ns + 1_000_000))
    again = parquet.read_metadata(path)
    assert again is not first and again.num_rows == 5
    assert parquet._footer(path)[1]["x"] == [10, 40, 1, True]


def test_statistics_merge_across_files(tmp_path):
    files = []
    for i, values in enumerate(([5, 1], [7, None], [3])):
        path = str(tmp_path / f"p{i}.parquet")
        pq.write_table(pa.table({"x": pa.array(values, pa.int64())}), path)
        files.append(DataFile(path, os.path.getsize(path)))
    stats = parquet.ParquetFormat().column_statistics(files)["x"]
    assert (stats.min, stats.max, stats.null_count) == (1, 7, 1)
    assert parquet.ParquetFormat().count_rows(files) == 5
