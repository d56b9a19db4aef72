"""quiver/engine/api/readwriter.py: `spark.read` and `df.write` end to end through a Quiver session."""
from __future__ import annotations

import datetime
import os

import pytest

from quiver.engine.api.session import Session
from quiver.engine.core.errors import AnalysisException, ConfigurationError

CSV = "id,name,amount,day\n1,alice,1.5,2024-01-05\n2,,2,2024-01-06\n3,\"bob, jr\",,2024-01-07\n"


@pytest.fixture(scope="module")
def session():
    return Session.builder.master("local[2]").appName("readwriter-tests").getOrCreate()


def rows(df) -> list[tuple]:
    return [tuple(r) for r in df.collect()]


def test_csv_reader_matches_pyspark(tmp_path, session, spark):
    path = tmp_path / "f.csv"
    path.write_text(CSV)
    ours = session.read.csv(str(path), header=True, inferSchema=True)
    theirs = spark.read.csv(str(path), header=True, inferSchema=True)
    assert ours.dtypes == theirs.dtypes
    assert rows(ours) == rows(theirs)


def test_format_option_schema_load(tmp_path, session):
    (tmp_path / "f.json").write_text('{"a": 1, "b": "x"}\n{"a": 2}\n')
    df = session.read.format("json").option("mode", "FAILFAST").schema("b STRING, a INT").load(str(tmp_path))
    assert df.dtypes == [("b", "string"), ("a", "int")]
    assert rows(df) == [("x", 1), (None, 2)]
    assert rows(session.read.json(str(tmp_path / "f.json"))) == [(1, "x"), (2, None)]


def test_write_then_read_each_format(tmp_path, session):
    df = session.createDataFrame(
        [(1, "a", 1.5, datetime.date(2024, 1, 5)), (2, None, None, None), (1, "c", 2.0, None)],
        "k int, s string, d double, dt date")
    df.write.partitionBy("k").parquet(str(tmp_path / "pq"))
    df.write.csv(str(tmp_path / "csv"), header=True)
    df.write.json(str(tmp_path / "json"))
    df.write.format("arrow").save(str(tmp_path / "arrow"))
    expected = sorted(rows(df), key=repr)
    assert sorted(rows(session.read.parquet(str(tmp_path / "pq")).select("k", "s", "d", "dt")), key=repr) == expected
    csv = session.read.csv(str(tmp_path / "csv"), header=True, schema="k int, s string, d double, dt date")
    assert sorted(rows(csv), key=repr) == expected
    assert sorted(rows(session.read.json(str(tmp_path / "json"), schema=df.schema)), key=repr) == expected
    assert sorted(rows(session.read.format("feather").load(str(tmp_path / "arrow"))), key=repr) == expected


def test_save_modes_through_the_writer(tmp_path, session):
    df = session.createDataFrame([(1,), (2,)], "x int")
    target = str(tmp_path / "out")
    df.write.parquet(target)
    with pytest.raises(AnalysisException, match="already exists"):
        df.write.parquet(target)
    df.write.mode("append").parquet(target)
    assert session.read.parquet(target).count() == 4
    df.write.parquet(target, mode="overwrite")
    assert session.read.parquet(target).count() == 2
    df.write.mode("ignore").parquet(target)
    assert sorted(os.listdir(tmp_path)) == ["out"]


def test_reader_errors(tmp_path, session):
    with pytest.raises(AnalysisException, match=f"Path does not exist: file:{tmp_path}/missing"):
        session.read.parquet(str(tmp_path / "missing"))
    with pytest.raises(ConfigurationError, match="unknown data source format 'orc'"):
        session.read.format("orc").load(str(tmp_path))
    (tmp_path / "f.csv").write_text("a\n1\n")
    with pytest.raises(ConfigurationError, match="valid values are PERMISSIVE, DROPMALFORMED, FAILFAST"):
        session.read.csv(str(tmp_path / "f.csv"), mode="bogus")
