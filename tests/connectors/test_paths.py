"""quiver/connectors/paths.py: listing files and inferring Hive partition columns like Spark."""
from __future__ import annotations

import datetime
import os
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from quiver.connectors.commit import is_hidden
from quiver.connectors.paths import escape_partition_value, list_files
from quiver.connectors.registry import file_source
from quiver.engine.core.errors import AnalysisException
from tests.connectors.spark_compare import assert_matches_spark


def touch(path, data: bytes = b"x") -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    return str(path)


def write_parquet(path) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    pq.write_table(pa.table({"v": [1, 2]}), path)
    return str(path)


def test_folder_skips_markers_checksums_and_hidden_folders(tmp_path):
    keep = [touch(tmp_path / "d" / "part-0.csv"), touch(tmp_path / "d" / "sub" / "part-1.csv")]
    for name in ["_SUCCESS", ".part-0.csv.crc", "_temporary/x.csv", ".staging/y.csv", "z.csv._COPYING_"]:
        touch(tmp_path / "d" / name)
    listing = list_files(tmp_path / "d")
    assert [f.path for f in listing.files] == sorted(keep)
    assert [f.size for f in listing.files] == [1, 1]


def test_file_glob_and_list_of_paths(tmp_path):
    a, b, c = (touch(tmp_path / n) for n in ["a.json", "b.json", "c.csv"])
    assert [f.path for f in list_files(str(tmp_path / "*.json")).files] == [a, b]
    assert [f.path for f in list_files([c, a]).files] == [a, c]
    assert [f.path for f in list_files(c).files] == [c]


@pytest.mark.parametrize("path", ["missing", "missing/*.parquet"])
def test_missing_path_is_analysis_exception_like_spark(tmp_path, path):
    with pytest.raises(AnalysisException, match=re.escape(f"Path does not exist: file:{tmp_path}/{path}")):
        list_files(str(tmp_path / path))


@pytest.mark.parametrize("values, expected", [
    (["1", "2", "-7", "01"], pa.int32()),
    (["1", "3000000000"], pa.int64()),
    (["1", "12345678901234567890"], pa.decimal128(20, 0)),
    (["1", "1.5"], pa.float64()),
    (["2024-01-05", "2024-01-06"], pa.date32()),
    (["2024-01-05", "2024-01-05 10:00:00"], pa.timestamp("us")),
    (["true", "false"], pa.string()),
    (["1", "a"], pa.string()),
    ([None, "5"], pa.int32()),
    ([None], pa.string()),
])
def test_partition_value_types(tmp_path, values, expected):
    for i, v in enumerate(values):
        folder = escape_partition_value(v)
        touch(tmp_path / f"k={folder}" / f"f{i}.csv")
    schema = list_files(tmp_path).partition_schema
    assert schema.names == ["k"] and schema.field("k").type == expected


def test_partition_scalars_unescape_and_null(tmp_path):
    f1 = touch(tmp_path / "t=2024-01-05 10%3A00%3A00" / "s=a%2Fb" / "x.csv")
    f2 = touch(tmp_path / "t=2024-01-06 00%3A00%3A00" / "s=__HIVE_DEFAULT_PARTITION__" / "y.csv")
    listing = list_files(tmp_path)
    by_path = {f.path: listing.partition_scalars(f) for f in listing.files}
    assert by_path[f1]["t"].as_py() == datetime.datetime(2024, 1, 5, 10, 0)
    assert by_path[f1]["s"].as_py() == "a/b"
    assert by_path[f2]["s"].as_py() is None


def test_conflicting_layouts_name_the_files(tmp_path):
    touch(tmp_path / "k=1" / "a.csv")
    touch(tmp_path / "b.csv")
    with pytest.raises(AnalysisException, match="Conflicting directory structures") as info:
        list_files(tmp_path)
    assert "b.csv" in str(info.value) and "k=1" in str(info.value)


def test_base_path_recursive_lookup_and_glob_filter(tmp_path):
    touch(tmp_path / "k=1" / "s=a" / "a.csv")
    touch(tmp_path / "k=1" / "s=a" / "a.txt")
    assert list_files(tmp_path / "k=1").partition_schema.names == ["s"]
    assert list_files(tmp_path / "k=1", base_path=str(tmp_path)).partition_schema.names == ["k", "s"]
    assert list_files(tmp_path, recursive_lookup=True).partition_schema.names == []
    assert [os.path.basename(f.path) for f in list_files(tmp_path, name_filter="*.csv").files] == ["a.csv"]


def test_hidden_names_follow_spark():
    assert is_hidden("_SUCCESS") and is_hidden(".x.crc") and is_hidden("_temporary")
    assert not is_hidden("_k=1") and not is_hidden("part-0.parquet")


def test_partition_inference_matches_spark(tmp_path, spark):
    for folder in ["i=1/d=2024-01-05/s=a", "i=2/d=2024-01-06/s=__HIVE_DEFAULT_PARTITION__",
                   "i=3000000000/d=2024-01-07/s=1.5", "i=4/d=2024-01-08/s=x%2Fy"]:
        write_parquet(tmp_path / "t" / folder / "part.parquet")
    path = str(tmp_path / "t")
    assert_matches_spark(file_source("parquet", path), spark.read.parquet(path), ordered=False)


# Values with every character Spark's escapePathName escapes, and some it keeps (non-ASCII, <>|&$ ...).
AWKWARD_VALUES = ["a/b", "../../up", "q'[]^{é<>|&$!+,;@~`#%= *:?\"\\", "tab\there", "100%", "x=y"]


def _folders(root) -> list[str]:
    return sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))


def test_partition_names_and_values_are_escaped_as_spark_does_and_stay_inside_the_destination(tmp_path, spark):
    from quiver.engine.api.session import Session

    rows = [(i, v) for i, v in enumerate(AWKWARD_VALUES)]
    session = Session.builder.master("local[1]").appName("paths-tests").getOrCreate()
    ours, theirs = tmp_path / "quiver" / "out", tmp_path / "spark" / "out"
    for name in ("../../evil", "k=v/é"):
        session.createDataFrame(rows, ["x", name]).write.mode("overwrite").partitionBy(name).parquet(str(ours))
        spark.createDataFrame(rows, ["x", name]).write.mode("overwrite").partitionBy(name).parquet(str(theirs))
        assert _folders(ours) == _folders(theirs) and len(_folders(ours)) == len(AWKWARD_VALUES)
        assert os.listdir(tmp_path / "quiver") == ["out"] and os.listdir(tmp_path) == ["quiver", "spark"]
    # Read back through the escaped folders (basePath: a folder whose name starts with '.' is hidden).
    back = session.read.option("basePath", str(ours)).parquet(*(str(ours / f) for f in _folders(ours)))
    assert sorted(tuple(r) for r in back.collect()) == sorted(rows)
