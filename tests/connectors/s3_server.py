"""A moto S3 server on loopback for tests that need an S3-compatible store, and a client for it."""
from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

BUCKET = "quiver-tests"
ACCESS, SECRET = "quiver-access", "quiver-secret"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def moto_server(**env: str) -> Iterator[str]:
    """A moto S3 server on a loopback port for the block; yields its endpoint URL."""
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, **env})
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"moto server did not start on {endpoint}") from None
                time.sleep(0.1)
        yield endpoint
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def client(url: str):
    import boto3

    return boto3.client("s3", endpoint_url=url, aws_access_key_id=ACCESS, aws_secret_access_key=SECRET,
                        region_name="us-east-1")


def s3_environment(url: str) -> dict[str, str]:
    """The AWS variables that point a fresh process (a killed writer, a reader) at the server."""
    return {"AWS_ENDPOINT_URL": url, "AWS_ACCESS_KEY_ID": ACCESS, "AWS_SECRET_ACCESS_KEY": SECRET,
            "AWS_REGION": "us-east-1"}
