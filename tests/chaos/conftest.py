"""Fixtures of the chaos suite: the moto server with the fault proxy in front, and a commit writer."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.chaos.scenarios import S3Stage
from tests.connectors.fault_writer import FaultWriter
from tests.connectors.s3_proxy import fault_proxy
from tests.connectors.s3_server import client, moto_server, s3_environment

BUCKET = "quiver-chaos"


@pytest.fixture(scope="package")
def moto_url() -> Iterator[str]:
    pytest.importorskip("boto3", reason="boto3 (with moto[server]) runs the S3 test server")
    pytest.importorskip("moto", reason="moto[server] provides the S3-compatible test server")
    with moto_server() as url:
        client(url).create_bucket(Bucket=BUCKET)
        yield url


@pytest.fixture(scope="package")
def s3_stage(moto_url) -> Iterator[S3Stage]:
    with fault_proxy(moto_url) as proxy:
        proxy.plan.stall_s = 3.5  # past the AWS SDK's 3 s without a byte, so the request times out
        yield S3Stage(moto_url, proxy, BUCKET)


@pytest.fixture(scope="package")
def s3_env(moto_url) -> dict[str, str]:
    return s3_environment(moto_url)


@pytest.fixture(scope="package")
def writer() -> Iterator[FaultWriter]:
    server = FaultWriter()
    yield server
    server.close()
