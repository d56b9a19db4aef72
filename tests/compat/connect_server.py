"""Spark's own Spark Connect server as a reference for the differential tests.

The pyspark package ships the server class; it runs here as a `spark-submit` child process on
127.0.0.1 and a free port, one per test process, started the first time a test asks for it and
stopped when the process exits. A Connect session cannot share a process with a classic one
through `SparkSession.builder`, so the client is built from `pyspark.sql.connect.session`.
"""
from __future__ import annotations

import atexit
import os
import socket
import subprocess
import tempfile
import time

_STARTUP_SECONDS = 180
_server: tuple[subprocess.Popen, str] | None = None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spark_connect_url(conf: dict[str, str]) -> str:
    """`sc://127.0.0.1:PORT` of the running server, started with `conf` on first use."""
    global _server
    if _server is not None:
        return _server[1]
    import pyspark

    home = os.path.dirname(pyspark.__file__)
    port = _free_port()
    settings = {"spark.connect.grpc.binding.address": "127.0.0.1", "spark.connect.grpc.binding.port": str(port),
                "spark.ui.enabled": "false", "spark.sql.adaptive.enabled": "false",
                "spark.driver.extraJavaOptions": "-Duser.timezone=UTC -XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
                **conf}
    command = [os.path.join(home, "bin", "spark-submit"), "--master", "local[2]"]
    for key, value in settings.items():
        command += ["--conf", f"{key}={value}"]
    command += ["--class", "org.apache.spark.sql.connect.service.SparkConnectServer", "spark-internal"]
    log = tempfile.NamedTemporaryFile(prefix="quiver-spark-connect-", suffix=".log", delete=False)
    process = subprocess.Popen(command, env=dict(os.environ, SPARK_HOME=home), stdout=log, stderr=subprocess.STDOUT)
    atexit.register(_stop, process)
    deadline = time.monotonic() + _STARTUP_SECONDS
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                _stop(process)
                message = f"the Spark Connect server did not start on 127.0.0.1:{port}; see {log.name}"
                raise RuntimeError(message) from None
            time.sleep(0.5)
    _server = (process, f"sc://127.0.0.1:{port}")
    return _server[1]


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
