"""Chaos over the commit protocol (quiver/connectors/commit.py): for each of a fixed list of seeds, a
sequence of writes to one path, local and on S3 (moto), each killed at a random fault point or not;
after every one a fresh reader must see exactly the rows before it or exactly the rows after it,
never part of a commit or a mix, and a last unkilled write must sweep everything the dead left.
Bounded: a few seconds per seed locally, about ten on moto."""
from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from quiver.connectors.faults import FAULT_EXIT_CODE
from quiver.connectors.object_store import bind_settings
from tests.connectors.fault_writer import FaultWriter, WriteRequest, generation_rows, leftovers, rows_of
from tests.connectors.s3_server import client, moto_server, s3_environment

SEEDS = [11, 23, 37, 41, 53, 67]
WRITES_PER_SEED = 5
BUCKET = "quiver-chaos"


@pytest.fixture(scope="module")
def writer() -> Iterator[FaultWriter]:
    server = FaultWriter()
    yield server
    server.close()


@pytest.fixture(scope="module")
def s3_env() -> Iterator[dict[str, str]]:
    pytest.importorskip("boto3", reason="boto3 (with moto[server]) runs the S3 test server")
    pytest.importorskip("moto", reason="moto[server] provides the S3-compatible test server")
    with moto_server() as url:
        client(url).create_bucket(Bucket=BUCKET)
        yield s3_environment(url)


@pytest.mark.parametrize("store", ["local", "s3"])
@pytest.mark.parametrize("seed", SEEDS)
def test_random_kills_never_show_a_partial_or_mixed_output(writer, request, tmp_path, store, seed):
    rng = random.Random(seed)
    if store == "local":
        path, env = str(tmp_path / "out"), {}
    else:
        env = request.getfixturevalue("s3_env")
        path = f"s3://{BUCKET}/chaos/{seed}/out"
        bind_settings([path], {"quiver.s3.endpoint": env["AWS_ENDPOINT_URL"],
                               "quiver.s3.accessKey": env["AWS_ACCESS_KEY_ID"],
                               "quiver.s3.secretKey": env["AWS_SECRET_ACCESS_KEY"], "quiver.s3.region": "us-east-1"})
    partition_by = rng.choice([(), ("k",)])
    committed: list = []
    history = []
    for generation in range(1, WRITES_PER_SEED + 1):
        mode = rng.choice(["overwrite", "append", "overwrite", "errorifexists"])
        fault_at = rng.randint(1, 16)
        rc = writer.write(WriteRequest(path, generation, mode, partition_by, fault_at=fault_at, env=env))
        history.append(f"gen {generation} {mode} kill@{fault_at} rc={rc}")
        if mode == "errorifexists" and committed:
            after = committed
        elif mode == "append":
            after = sorted(committed + generation_rows(generation))
        else:
            after = generation_rows(generation)
        seen = rows_of(path)
        assert rc in (0, 1, FAULT_EXIT_CODE), history
        assert seen in (committed, after), f"seed {seed}: a reader saw a partial or mixed output; {history}"
        if rc == 0:
            assert seen == after, history
        committed = seen
    final = WriteRequest(path, 99, "overwrite", partition_by, env=env)
    assert writer.write(final) == 0, history
    assert rows_of(path) == generation_rows(99), history
    assert leftovers(path) == [], history
