"""quiver/connectors/object_store.py: `s3://` reads and writes through a real S3-compatible server (moto's,
on loopback), configured by conf keys or the AWS environment, with atomic commits and clear errors."""
from __future__ import annotations

import datetime
import pickle
import urllib.request
from collections.abc import Iterator
from decimal import Decimal

import pytest

from quiver import functions as F
from quiver.connectors import object_store
from quiver.connectors.cache import StorageCacheSettings, storage_cache_stats
from quiver.connectors.object_store import (
    ObjectStoreError,
    S3Settings,
    StorageBinding,
    bind_settings,
    binding_for,
    settings_for,
)
from quiver.connectors.registry import file_sink, file_source
from quiver.engine.api.session import Session
from quiver.engine.core.errors import AnalysisException, ConfigurationError, QuiverError
from tests.connectors.s3_proxy import FAULT_KINDS, fault_proxy
from tests.connectors.s3_server import ACCESS, BUCKET, SECRET, client, free_port, moto_server

boto3 = pytest.importorskip("boto3", reason="boto3 (with moto[server]) runs the S3 test server")
pytest.importorskip("moto", reason="moto[server] provides the S3-compatible test server")

FORMATS = ["parquet", "csv", "json"]
AWS_VARIABLES = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
                 "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3")
S3_CONF = ("quiver.s3.endpoint", "quiver.s3.accessKey", "quiver.s3.secretKey", "quiver.s3.region",
           "quiver.s3.sessionToken")


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    """One moto server for the module, holding the test bucket."""
    with moto_server() as url:
        client(url).create_bucket(Bucket=BUCKET)
        yield url


def keys(url: str, prefix: str) -> list[str]:
    """Every object key under `prefix`, sorted."""
    listed = client(url).list_objects_v2(Bucket=BUCKET, Prefix=prefix)
    return sorted(o["Key"] for o in listed.get("Contents", []))


def data_keys(url: str, prefix: str) -> list[str]:
    """Keys under `prefix` other than empty `folder/` markers."""
    return [k for k in keys(url, prefix) if not k.endswith("/")]


def put(url: str, key: str, body: bytes) -> None:
    client(url).put_object(Bucket=BUCKET, Key=key, Body=body)


@pytest.fixture(scope="module")
def session() -> Session:
    return Session.builder.master("local[2]").getOrCreate()


@pytest.fixture
def conf(session):
    """`conf({...})` sets conf keys for one test; the S3 keys and any set are unset or restored after."""
    saved = {k: session.conf.get(k, None) for k in S3_CONF}

    def apply(values: dict[str, str]) -> None:
        for k, v in values.items():
            saved.setdefault(k, session.conf.get(k, None))
            session.conf.set(k, v)

    yield apply
    for k, v in saved.items():
        if v is None:
            session.conf.unset(k)
        else:
            session.conf.set(k, v)


@pytest.fixture
def s3(endpoint, conf, monkeypatch):
    """The session pointed at the test server through `quiver.s3.*` conf keys, no AWS variables set."""
    for name in AWS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    conf({"quiver.s3.endpoint": endpoint, "quiver.s3.accessKey": ACCESS, "quiver.s3.secretKey": SECRET,
          "quiver.s3.region": "us-east-1"})
    return endpoint


def people(session):
    return session.createDataFrame(
        [(1, "ann", Decimal("1.50"), datetime.date(2024, 1, 5)), (2, "bob", None, None),
         (3, None, Decimal("-2.25"), datetime.date(2023, 12, 31))],
        "id INT, name STRING, amount DECIMAL(10,2), day DATE")


def read(session, fmt: str, path: str):
    reader = session.read.format(fmt).schema("id INT, name STRING, amount DECIMAL(10,2), day DATE")
    return reader.option("header", True).load(path)


def rows(df) -> list[tuple]:
    return sorted((tuple(r) for r in df.collect()), key=repr)


@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trip_in_every_save_mode(session, s3, fmt):
    path = f"s3://{BUCKET}/modes/{fmt}"
    df = people(session)
    df.write.format(fmt).option("header", True).save(path)
    assert rows(read(session, fmt, path)) == rows(df)
    assert "_SUCCESS" in [k.rsplit("/", 1)[-1] for k in keys(s3, f"modes/{fmt}/")]

    with pytest.raises(AnalysisException, match=rf"PATH_ALREADY_EXISTS.*{path}"):
        df.write.format(fmt).mode("errorifexists").save(path)
    df.write.format(fmt).mode("append").option("header", True).save(path)
    assert rows(read(session, fmt, path)) == sorted(rows(df) * 2, key=repr)

    newer = df.filter(F.col("id") == 2)
    newer.write.format(fmt).mode("overwrite").option("header", True).save(path)
    assert rows(read(session, fmt, path)) == rows(newer)
    df.write.format(fmt).mode("ignore").option("header", True).save(path)
    assert rows(read(session, fmt, path)) == rows(newer)
    assert not [k for k in keys(s3, "modes/") if "quiver-staging" in k]


def test_types_compression_arrow_files_and_the_format_shortcuts(session, s3):
    path = f"s3://{BUCKET}/shortcut/people"
    df = people(session).withColumn("at", F.to_timestamp(F.lit("2024-03-01 12:34:56.123456")))
    df.write.parquet(path)
    back = session.read.parquet(path)
    assert back.dtypes == df.dtypes
    assert rows(back) == rows(df)
    df.write.json(f"s3a://{BUCKET}/shortcut/people-json")
    assert session.read.json(f"s3://{BUCKET}/shortcut/people-json").count() == 3
    df.drop("at").write.csv(f"s3://{BUCKET}/shortcut/people-csv", header=True, compression="gzip")
    assert all(k.endswith((".csv.gz", "_SUCCESS", "_quiver_commit")) for k in keys(s3, "shortcut/people-csv/"))
    gzipped = session.read.csv(f"s3://{BUCKET}/shortcut/people-csv", header=True, inferSchema=True)
    assert rows(gzipped.select("id", "name")) == rows(df.select("id", "name"))
    df.write.format("arrow").save(f"s3://{BUCKET}/shortcut/people-arrow")
    assert rows(session.read.format("arrow").load(f"s3://{BUCKET}/shortcut/people-arrow")) == rows(df)


def test_multi_file_prefix_partitions_hidden_files_and_globs(session, s3):
    for year, body in (("2023", b"id,v\n1,a\n2,b\n"), ("2024", b"id,v\n3,c\n")):
        put(s3, f"multi/year={year}/part-0.csv", body)
        put(s3, f"multi/year={year}/part-1.csv", body.replace(b"a", b"x").replace(b"c", b"z"))
    put(s3, "multi/_SUCCESS", b"")
    put(s3, "multi/.part-0.csv.crc", b"junk")
    put(s3, "multi/_temporary/0/part-9.csv", b"junk")
    put(s3, "multi/year=2024/", b"")

    df = session.read.csv(f"s3://{BUCKET}/multi", header=True, inferSchema=True)
    assert df.dtypes == [("id", "int"), ("v", "string"), ("year", "int")]
    assert rows(df) == sorted([(1, "a", 2023), (2, "b", 2023), (1, "x", 2023), (2, "b", 2023),
                               (3, "c", 2024), (3, "z", 2024)], key=repr)
    assert rows(df.filter(F.col("year") == 2024).select("id")) == [(3,), (3,)]

    globbed = session.read.csv(f"s3://{BUCKET}/multi/year=202*/part-1.csv", header=True)
    assert sorted(r.v for r in globbed.collect()) == ["b", "x", "z"]
    partitioned = session.read.option("basePath", f"s3://{BUCKET}/multi").csv(
        f"s3://{BUCKET}/multi/year=2024", header=True)
    assert rows(partitioned.select("v", "year")) == [("c", 2024), ("z", 2024)]
    single = session.read.csv(f"s3://{BUCKET}/multi/year=2023/part-0.csv", header=True)
    assert rows(single) == [("1", "a"), ("2", "b")]


def test_partitioned_write_and_many_tasks(session, s3):
    path = f"s3://{BUCKET}/partitioned/out"
    df = session.range(0, 300).select(F.col("id"), (F.col("id") % 3).alias("k")).repartition(4)
    df.write.partitionBy("k").parquet(path)
    written = data_keys(s3, "partitioned/out/")
    assert {k.split("/")[2] for k in written if "part-" in k} == {"k=0", "k=1", "k=2"}
    assert len([k for k in written if "part-" in k]) > 3
    back = session.read.parquet(path)
    assert back.count() == 300
    assert rows(back.groupBy("k").count()) == [(0, 100), (1, 100), (2, 100)]


def test_hadoop_s3a_keys_configure_the_store(session, endpoint, conf, monkeypatch):
    for name in AWS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    conf({"spark.hadoop.fs.s3a.endpoint": endpoint, "spark.hadoop.fs.s3a.access.key": ACCESS,
          "spark.hadoop.fs.s3a.secret.key": SECRET})
    assert session.conf.get("quiver.s3.endpoint") == endpoint
    path = f"s3://{BUCKET}/hadoop/out"
    people(session).write.json(path)
    assert session.read.json(path).count() == 3


def test_environment_configures_the_store_and_conf_wins_over_it(session, endpoint, conf, monkeypatch):
    for name in AWS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    path = f"s3://{BUCKET}/env/out"
    people(session).write.parquet(path)
    assert session.read.parquet(path).count() == 3

    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{free_port()}")
    with pytest.raises(ObjectStoreError, match="Cannot reach"):
        session.read.parquet(path)
    conf({"quiver.s3.endpoint": endpoint})
    assert session.read.parquet(path).count() == 3


def test_settings_precedence_validation_and_secrets_kept_out_of_repr():
    env = {"AWS_ACCESS_KEY_ID": "env-key", "AWS_SECRET_ACCESS_KEY": "env-secret", "AWS_SESSION_TOKEN": "tok",
           "AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "us-west-2", "AWS_ENDPOINT_URL": "http://env:9000"}
    from_env = S3Settings.from_conf({}, env)
    assert from_env == S3Settings("http://env:9000", "env-key", "env-secret", "tok", "eu-west-1",
                                  StorageCacheSettings.from_conf({}))
    from_conf = S3Settings.from_conf({"fs.s3a.access.key": "k", "fs.s3a.secret.key": "s",
                                      "quiver.s3.endpoint": "minio:9000/"}, env)
    assert (from_conf.access_key, from_conf.session_token, from_conf.endpoint) == ("k", None, "minio:9000")
    assert from_conf.where() == "endpoint https://minio:9000"
    assert "env-secret" not in repr(from_env) and "tok" not in repr(from_env)
    with pytest.raises(ConfigurationError, match="quiver.s3.secretKey"):
        S3Settings.from_conf({"quiver.s3.accessKey": "k"}, {})
    with pytest.raises(ConfigurationError, match="quiver.s3.endpoint must be a URL"):
        S3Settings.from_conf({"quiver.s3.endpoint": "ftp://x"}, {})
    assert object_store.normalize_path("gs://bucket//key/") == "gs://bucket/key"
    with pytest.raises(ConfigurationError, match="unsupported file system scheme 'nosuchfs'"):
        object_store.resolve("nosuchfs://bucket/key")


def test_a_pickled_binding_brings_its_settings_where_it_is_unpickled():
    """What a source or sink shipped to a Ray worker relies on."""
    ours = {"quiver.s3.endpoint": "http://127.0.0.1:1", "quiver.s3.accessKey": "a", "quiver.s3.secretKey": "b"}
    bind_settings("s3://pickled-bucket/x", ours)
    shipped = pickle.dumps(binding_for(["s3://pickled-bucket/x"]))
    bind_settings(["s3://pickled-bucket/y"], {**ours, "quiver.s3.endpoint": "http://127.0.0.1:2"})
    assert settings_for("pickled-bucket").endpoint == "http://127.0.0.1:2"
    assert isinstance(pickle.loads(shipped), StorageBinding)
    assert settings_for("pickled-bucket").endpoint == "http://127.0.0.1:1"


def test_pickled_source_and_sink_reach_the_store_they_were_made_for(session, s3):
    """As on a Ray worker: whatever the process had bound, unpickling brings the driver's settings."""
    path = f"s3://{BUCKET}/pickled/in"
    session.range(0, 5).write.parquet(path)
    source = file_source("parquet", path)
    sink = file_sink("parquet", f"s3://{BUCKET}/pickled/out", schema=source.schema())
    shipped = pickle.dumps((source, sink))
    bind_settings(path, {"quiver.s3.endpoint": f"http://127.0.0.1:{free_port()}", "quiver.s3.accessKey": "x",
                         "quiver.s3.secretKey": "y"})
    source, sink = pickle.loads(shipped)
    assert sink.setup()
    batches = [b for split in source.splits(2) for b in source.read(split, None, None)]
    sink.commit([sink.write_task(0, iter(batches))])
    assert rows(session.read.parquet(f"s3://{BUCKET}/pickled/out")) == sorted(((i,) for i in range(5)), key=repr)


def test_missing_bucket_and_object_name_them_and_the_endpoint(session, s3):
    with pytest.raises(AnalysisException, match=rf"PATH_NOT_FOUND.*s3://no-such-bucket/x.*bucket 'no-such-bucket' "
                                                rf"does not exist at endpoint {s3}"):
        session.read.parquet("s3://no-such-bucket/x")
    with pytest.raises(AnalysisException, match=rf"PATH_NOT_FOUND.*s3://{BUCKET}/nothing/here.*at endpoint {s3}"):
        session.read.json(f"s3://{BUCKET}/nothing/here")
    with pytest.raises(AnalysisException, match=rf"PATH_NOT_FOUND.*s3://{BUCKET}/nothing/\*\.csv"):
        session.read.csv(f"s3://{BUCKET}/nothing/*.csv")
    with pytest.raises(AnalysisException, match=rf"bucket 'no-such-bucket' does not exist at endpoint {s3}"):
        people(session).write.parquet("s3://no-such-bucket/out")
    with pytest.raises(AnalysisException, match="root of a bucket"):
        people(session).write.parquet(f"s3://{BUCKET}")


def test_unreachable_endpoint_is_named(session, s3, conf):
    dead = f"http://127.0.0.1:{free_port()}"
    conf({"quiver.s3.endpoint": dead})
    with pytest.raises(ObjectStoreError, match=rf"Cannot reach the object store at endpoint {dead}.*s3://{BUCKET}/x"):
        session.read.parquet(f"s3://{BUCKET}/x")
    with pytest.raises(ObjectStoreError, match=rf"Cannot reach the object store at endpoint {dead}"):
        people(session).write.parquet(f"s3://{BUCKET}/x")


def test_access_denied_names_bucket_key_endpoint_and_access_key(session, conf):
    with moto_server(INITIAL_NO_AUTH_ACTION_COUNT="0") as guarded:
        conf({"quiver.s3.endpoint": guarded, "quiver.s3.accessKey": "not-a-user", "quiver.s3.secretKey": "x"})
        with pytest.raises(ObjectStoreError, match=rf"Access denied .*s3://{BUCKET}/secret/data .*bucket '{BUCKET}', "
                                                   rf"key 'secret/data'.* at endpoint {guarded} with access key "
                                                   "'not-a-user'"):
            session.read.parquet(f"s3://{BUCKET}/secret/data")
        with pytest.raises(ObjectStoreError, match=rf"Access denied .*at endpoint {guarded}"):
            people(session).write.parquet(f"s3://{BUCKET}/secret/out")


def test_a_failed_job_leaves_no_objects(session, s3):
    @F.udf("int")
    def fail_on_250(i):
        if i == 250:
            raise ValueError("boom")
        return i

    failing = session.range(0, 400).repartition(4).select(fail_on_250(F.col("id")).alias("id"))
    with pytest.raises(QuiverError):
        failing.write.parquet(f"s3://{BUCKET}/failed/out")
    # At most the parent's empty folder marker stays, as a local write leaves the parent folder.
    assert keys(s3, "failed/") in ([], ["failed/"])
    with pytest.raises(AnalysisException, match="PATH_NOT_FOUND"):
        session.read.parquet(f"s3://{BUCKET}/failed/out")


def test_a_failed_commit_removes_its_copies_and_keeps_the_old_data(session, s3, monkeypatch):
    from quiver.connectors import commit as commit_module

    path = f"s3://{BUCKET}/commit/out"
    session.range(0, 10).repartition(2).write.parquet(path)
    before = data_keys(s3, "commit/")
    copies = []

    def copy_then_fail(source: str, target: str) -> None:
        if copies:
            raise ObjectStoreError("injected copy failure")
        object_store.copy_object(source, target)
        copies.append(target)

    monkeypatch.setattr(commit_module, "copy_object", copy_then_fail)
    with pytest.raises(ObjectStoreError, match="injected"):
        session.range(100, 140).repartition(3).write.mode("overwrite").parquet(path)
    assert copies and data_keys(s3, "commit/") == before
    assert rows(session.read.parquet(path)) == sorted(((i,) for i in range(10)), key=repr)

    copies.clear()
    with pytest.raises(ObjectStoreError, match="injected"):
        session.range(0, 40).repartition(3).write.parquet(f"s3://{BUCKET}/commit/new")
    assert copies and data_keys(s3, "commit/") == before and keys(s3, "commit/new") == []
    with pytest.raises(AnalysisException, match="PATH_NOT_FOUND"):
        session.read.parquet(f"s3://{BUCKET}/commit/new")


def _object_gets(url: str) -> list[str]:
    """The object GETs (bytes of an object, not listings) the server recorded since the last reset."""
    import json

    recorded = urllib.request.urlopen(f"{url}/moto-api/recorder/download-recording", timeout=10).read().decode()
    gets = []
    for line in filter(str.strip, recorded.splitlines()):
        request = json.loads(line)
        path, _, query = request["url"].partition(f"/{BUCKET}/")[2].partition("?")
        # The commit markers are read on every scan by design (`connectors.commit`): they are not data.
        if path.rsplit("/", 1)[-1] in ("_quiver_commit", "_SUCCESS"):
            continue
        if request["method"] == "GET" and path and "list-type" not in query:
            gets.append(path)
    return gets


def _record_afresh(url: str) -> None:
    for action in ("reset-recording", "start-recording"):
        urllib.request.urlopen(urllib.request.Request(f"{url}/moto-api/recorder/{action}", method="POST"),
                               timeout=10).close()


def test_the_storage_cache_serves_a_second_scan_without_fetching_object_bytes(session, conf, monkeypatch, tmp_path):
    """Counted at the server: the first scan GETs the objects, the second GETs none, and an object
    rewritten in place (same key) is fetched again and its new rows are read."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    with moto_server(MOTO_ENABLE_RECORDING="true", MOTO_RECORDER_FILEPATH=str(tmp_path / "recording")) as url:
        client(url).create_bucket(Bucket=BUCKET)
        for name in AWS_VARIABLES:
            monkeypatch.delenv(name, raising=False)
        conf({"quiver.s3.endpoint": url, "quiver.s3.accessKey": ACCESS, "quiver.s3.secretKey": SECRET,
              "quiver.s3.region": "us-east-1", "quiver.cache.storage.dir": str(tmp_path / "cache"),
              "quiver.cache.storage.maxBytes": "2m"})  # most blocks go to the disk tier
        path = f"s3://{BUCKET}/scans/t"
        rows = 300_000
        session.range(0, rows, numPartitions=2).select(
            F.col("id"), (F.col("id") % 97).alias("k"), (F.col("id") * 0.5).alias("v")).write.parquet(path)

        def scan():
            return session.read.parquet(path).groupBy("k").agg(F.sum("v").alias("s"), F.count("*").alias("n")) \
                .orderBy("k").collect()

        _record_afresh(url)
        first = scan()
        assert _object_gets(url), "the first scan fetched nothing, so the check below would prove nothing"
        _record_afresh(url)
        hits = storage_cache_stats().get("decoded_hits", 0)
        assert scan() == first
        assert _object_gets(url) == []
        assert storage_cache_stats()["decoded_hits"] > hits  # nor decoded the row groups again

        key = sorted(k for k in data_keys(url, "scans/t/") if k.endswith(".parquet"))[0]
        changed = io.BytesIO()
        pq.write_table(pa.table({"id": pa.array([1], pa.int64()), "k": pa.array([1000], pa.int64()),
                                 "v": pa.array([1.0])}), changed)
        put(url, key, changed.getvalue())
        _record_afresh(url)
        third = scan()
        assert key in _object_gets(url)
        assert third[-1]["k"] == 1000 and sum(r["n"] for r in third) < rows


def test_an_object_rewritten_in_place_with_the_same_size_is_read_afresh(session, s3):
    """Same key and size, new content: the footer (statistics 1000..1999 now) and the data must both
    be the new object's, though every cache saw the old one."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    def body(values: list[int]) -> bytes:
        out = io.BytesIO()
        pq.write_table(pa.table({"v": pa.array(values, pa.int64())}), out, compression="none")
        return out.getvalue()

    first, second = body(list(range(1000))), body(list(range(1000, 2000)))
    assert len(first) == len(second)
    path = f"s3://{BUCKET}/same-size/t.parquet"
    put(s3, "same-size/t.parquet", first)
    assert session.read.parquet(path).agg(F.sum("v")).collect()[0][0] == sum(range(1000))
    assert session.read.parquet(path).filter(F.col("v") >= 1000).count() == 0
    put(s3, "same-size/t.parquet", second)
    assert session.read.parquet(path).agg(F.sum("v")).collect()[0][0] == sum(range(1000, 2000))
    # A stale footer's statistics (0..999) would skip the row group that now holds every match.
    assert session.read.parquet(path).filter(F.col("v") >= 1000).count() == 1000


def gets_of(suffix: str):
    return lambda method, path: method == "GET" and path.split("?")[0].endswith(suffix)


@pytest.mark.parametrize("fault", FAULT_KINDS)
def test_transient_store_errors_are_retried_with_backoff_then_fail_naming_the_object(endpoint, conf, session,
                                                                                     monkeypatch, fault):
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    for name in AWS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    data = io.BytesIO()
    pq.write_table(pa.table({"id": list(range(100))}), data)
    settings = {"quiver.s3.accessKey": ACCESS, "quiver.s3.secretKey": SECRET, "quiver.s3.region": "us-east-1",
                "quiver.cache.storage.enabled": "false"}
    key = f"retries/{fault}/flaky.parquet"
    put(endpoint, key, data.getvalue())
    with fault_proxy(endpoint) as proxy:
        proxy.plan.stall_s = 4.0
        proxy.plan.fail_next(fault, 3 if fault != "stall" else 1, gets_of("flaky.parquet"))
        conf({**settings, "quiver.s3.endpoint": proxy.url, "quiver.s3.maxAttempts": "5"})
        assert sorted(r.id for r in session.read.parquet(f"s3://{BUCKET}/{key}").collect()) == list(range(100))
        assert proxy.stats[fault] == (3 if fault != "stall" else 1), "the faults were met and retried past"

    key = f"retries/{fault}/broken.parquet"
    put(endpoint, key, data.getvalue())
    if fault == "stall":
        return  # a stalled answer is a timeout, retried as above; failing for good it would only take longer
    with fault_proxy(endpoint) as proxy:
        proxy.plan.fail_next(fault, 1000, gets_of("broken.parquet"))
        conf({**settings, "quiver.s3.endpoint": proxy.url, "quiver.s3.maxAttempts": "2"})
        with pytest.raises(QuiverError, match=f"s3://{BUCKET}/{key}"):
            session.read.parquet(f"s3://{BUCKET}/{key}").collect()
        assert proxy.stats[fault] >= 2

    with pytest.raises(ConfigurationError, match="quiver.s3.maxAttempts must be a whole number of at least 1"):
        S3Settings.from_conf({"fs.s3a.attempts.maximum": "0"}, {})


@pytest.mark.parametrize("fault", ["truncate", "reset", "503"])
def test_a_commit_marker_read_is_retried_when_its_answer_breaks_off(endpoint, monkeypatch, fault):
    """The AWS SDK does not retry an answer whose body is cut short; the driver's marker read must, or a
    commit would fail on one truncated GET outside any task a retry would rerun."""
    for name in AWS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    put(endpoint, "markers/_quiver_commit", b'{"job": "j", "files": []}' * 10)
    uri = f"s3://{BUCKET}/markers/_quiver_commit"
    with fault_proxy(endpoint) as proxy:
        settings = {"quiver.s3.endpoint": proxy.url, "quiver.s3.accessKey": ACCESS, "quiver.s3.secretKey": SECRET,
                    "quiver.s3.region": "us-east-1", "quiver.s3.maxAttempts": "3"}
        bind_settings([uri], settings)
        proxy.plan.fail_next(fault, 2, gets_of("_quiver_commit"))
        assert object_store.read_object(uri) == b'{"job": "j", "files": []}' * 10
        assert proxy.stats[fault] == 2
        proxy.plan.fail_next(fault, 1000, gets_of("_quiver_commit"))
        with pytest.raises(ObjectStoreError, match=rf"reading {uri} at endpoint {proxy.url}.*after \d+ attempts"):
            object_store.read_object(uri)
        proxy.plan.clear()
