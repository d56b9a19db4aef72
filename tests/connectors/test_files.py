"""quiver/connectors/files.py (FileSource) and quiver/connectors/registry.py: what every file format shares."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from quiver.connectors.base import Source
from quiver.connectors.options import read_options
from quiver.connectors.registry import FILE_FORMATS, file_format, file_source
from quiver.engine.core.errors import AnalysisException, ConfigurationError
from quiver.engine.core.types import LongType, StringType, StructField, StructType
from tests.connectors.spark_compare import read_all


def many_files(tmp_path, n: int) -> None:
    for i in range(n):
        part = tmp_path / f"k={i % 2}"
        part.mkdir(exist_ok=True)
        pq.write_table(pa.table({"x": [i, i + 100]}), part / f"f{i:02d}.parquet")


def test_file_source_is_a_source(tmp_path):
    many_files(tmp_path, 1)
    assert isinstance(file_source("parquet", tmp_path), Source)


@pytest.mark.parametrize("target", [1, 2, 3, 7, 50])
def test_small_files_are_packed_into_about_target_splits(tmp_path, target):
    many_files(tmp_path, 12)
    source = file_source("parquet", tmp_path)
    splits = source.splits(target)
    assert len(splits) == min(target, 12)
    values = sorted(v for s in splits for b in source.read(s, ["x"], None) for v in b.column(0).to_pylist())
    assert values == sorted(list(range(12)) + [i + 100 for i in range(12)])


def test_describe_lists_roots_and_partitions(tmp_path):
    many_files(tmp_path, 3)
    assert file_source("parquet", tmp_path).describe() == f"parquet [{tmp_path}] 3 files, partitioned by [k]"


def test_unknown_column_names_the_available_ones(tmp_path):
    many_files(tmp_path, 1)
    source = file_source("parquet", tmp_path)
    with pytest.raises(AnalysisException, match=r"(?s)column 'y' does not exist.*Available columns: x, k"):
        list(source.read(source.splits(1)[0], ["y"], None))


def test_predicate_that_does_not_bind_is_ignored(tmp_path):
    many_files(tmp_path, 2)
    source = file_source("parquet", tmp_path)
    rows = read_all(source, ["x"], pc.field("no_such_column") > 1)
    assert rows.num_rows == 4


def test_user_schema_types_partition_columns_and_fills_missing(tmp_path):
    many_files(tmp_path, 2)
    schema = StructType([StructField("x", LongType()), StructField("extra", StringType()),
                         StructField("k", StringType())])
    source = file_source("parquet", tmp_path, schema=schema)
    assert source.schema() == pa.schema([("x", pa.int64()), ("extra", pa.string()), ("k", pa.string())])
    assert read_all(source).to_pylist()[0] == {"x": 0, "extra": None, "k": "0"}


def test_format_names_and_unknown_format():
    assert {"parquet", "csv", "json", "arrow", "ipc", "feather"} <= set(FILE_FORMATS)
    assert file_format("PARQUET").name == "parquet"
    with pytest.raises(ConfigurationError, match="unknown data source format 'orc'; valid formats are parquet, csv"):
        file_format("orc")


def test_options_are_case_insensitive_with_spark_string_values():
    options = read_options({"inferSchema": True, "Header": "true", "skip": None})
    assert options.values == {"inferschema": "true", "header": "true"}
    assert options.get("HEADER".lower()) == "true"
