"""Chaos over the commit protocol (quiver/connectors/commit.py): for each of a fixed list of seeds, a
sequence of writes to one path, local and on S3 (moto), each killed at a random fault point or not;
after every one a fresh reader must see exactly the rows before it or exactly the rows after it,
never part of a commit or a mix, and a last unkilled write must sweep everything the dead left.
Bounded: a few seconds per seed locally, about ten on moto."""
from __future__ import annotations

import pytest

from quiver.connectors.object_store import bind_settings
from tests.chaos.conftest import BUCKET
from tests.chaos.scenarios import commit_kills

SEEDS = [11, 23, 37, 41, 53, 67]


@pytest.mark.parametrize("store", ["local", "s3"])
@pytest.mark.parametrize("seed", SEEDS)
def test_random_kills_never_show_a_partial_or_mixed_output(writer, request, tmp_path, store, seed):
    if store == "local":
        root, env = str(tmp_path), {}
    else:
        env = request.getfixturevalue("s3_env")
        root = f"s3://{BUCKET}/commit-chaos"
        bind_settings([root], {"quiver.s3.endpoint": env["AWS_ENDPOINT_URL"],
                               "quiver.s3.accessKey": env["AWS_ACCESS_KEY_ID"],
                               "quiver.s3.secretKey": env["AWS_SECRET_ACCESS_KEY"], "quiver.s3.region": "us-east-1"})
    tally = commit_kills(seed, writer, root, env)
    assert tally.defects == [] and tally.partial == 0 and tally.rows_lost == 0
    assert tally.jobs == tally.right + tally.named + tally.killed
