"""quiver/connectors/commit.py under fault injection: a write killed at each step of its commit, on
local disk and on S3 (moto), leaves readers exactly the old rows or exactly the new, and the next
write succeeds and sweeps what the dead one left."""
from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from quiver.connectors.faults import FAULT_EXIT_CODE
from quiver.connectors.object_store import bind_settings
from tests.connectors.fault_writer import FaultWriter, WriteRequest, generation_rows, leftovers, rows_of, run_write
from tests.connectors.s3_server import client, moto_server, s3_environment

BUCKET = "quiver-commit-faults"
_paths = itertools.count()


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


@pytest.fixture(params=["local", "s3"])
def new_path(request, tmp_path):
    """A factory of fresh output paths on the store under test, with the env a child needs to reach it."""
    if request.param == "local":
        return lambda: (str(tmp_path / f"out{next(_paths)}"), {})
    env = request.getfixturevalue("s3_env")

    def make() -> tuple[str, dict[str, str]]:
        path = f"s3://{BUCKET}/faults/out{next(_paths)}"
        conf = {"quiver.s3.endpoint": env["AWS_ENDPOINT_URL"], "quiver.s3.accessKey": env["AWS_ACCESS_KEY_ID"],
                "quiver.s3.secretKey": env["AWS_SECRET_ACCESS_KEY"], "quiver.s3.region": env["AWS_REGION"]}
        bind_settings([path], conf)
        return path, env
    return make


def step_boundaries(points: list[str]) -> list[int]:
    """The fault points (1-based) worth a kill: each step, and of a run of the same step (one copy per
    file) its first and last, since the ones between leave the same kind of state."""
    return [i + 1 for i, step in enumerate(points)
            if i in (0, len(points) - 1) or points[i - 1] != step or points[i + 1] != step]


SCENARIOS = [
    # (name, mode of the killed write, partitioned, whether old output exists)
    ("overwrite", "overwrite", (), True),
    ("overwrite partitioned", "overwrite", ("k",), True),
    ("append", "append", (), True),
    ("first write", "errorifexists", ("k",), False),
]


@pytest.mark.parametrize("name, mode, partition_by, existing", SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_a_write_killed_at_each_commit_step_leaves_old_or_new_and_the_next_write_sweeps(
        writer, new_path, tmp_path, name, mode, partition_by, existing):
    def prepared() -> tuple[str, dict[str, str], list]:
        path, env = new_path()
        if existing:
            run_write(WriteRequest(path, 1, "overwrite", partition_by))
        return path, env, rows_of(path)

    path, env, _ = prepared()
    points = writer.count_points(WriteRequest(path, 2, mode, partition_by, env=env), str(tmp_path / "points"))
    assert {"commit.manifest", "commit.move"} <= set(points) or "commit.rename" in points, points
    for n in step_boundaries(points):
        path, env, old = prepared()
        new = sorted(old + generation_rows(2)) if mode == "append" else generation_rows(2)
        rc = writer.write(WriteRequest(path, 2, mode, partition_by, fault_at=n, env=env))
        assert rc == FAULT_EXIT_CODE, f"not killed at point {n} ({points[n - 1]})"
        seen = rows_of(path)
        assert seen in (old, new), f"killed at point {n} ({points[n - 1]}): a reader saw a mix or a part"
        run_write(WriteRequest(path, 3, "overwrite", partition_by))
        assert rows_of(path) == generation_rows(3), f"after a kill at point {n} ({points[n - 1]})"
        assert leftovers(path) == [], f"after a kill at point {n} ({points[n - 1]})"
