"""Cancelling jobs on quiver/engine/execution/runtime/ray.py (a one-node Ray on loopback): a job group's
cancel and Ctrl-C stop Ray tasks sleeping in a UDF (ray.cancel, then force after a grace period), and the
next job runs."""
from __future__ import annotations

import os

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # loopback only, set before Ray is imported

import _thread
import threading
import time

import pytest

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster

import quiver
from quiver import functions as F
from quiver.engine.execution.jobs import JobCancelledError


@pytest.fixture(scope="module")
def rspark():
    cluster = Cluster(initialize_head=True, connect=False,
                      head_node_args={"num_cpus": 2, "include_dashboard": False, "node_ip_address": "127.0.0.1"})
    session = quiver.Session({"quiver.master": f"ray:{cluster.address}", "quiver.ui.progress": "false",
                              "spark.task.maxFailures": 1})
    yield session
    session.stop()
    if ray.is_initialized():
        ray.shutdown()
    cluster.shutdown()


def _hang(x):
    time.sleep(3600)
    return x


def test_cancel_job_group_and_ctrl_c_on_ray(rspark):
    frame = rspark.range(0, 4, numPartitions=2)
    assert frame.select(F.udf(lambda x: x + 1, "long")("id")).count() == 4  # workers warm
    hung = F.udf(_hang, "long")
    out: dict = {}

    def run():
        rspark.sparkContext.setJobGroup("ray-group", "hung on ray")
        try:
            frame.select(hung("id")).collect()
        except BaseException as exc:  # noqa: BLE001
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    while not rspark._context.scheduler.jobs.running():
        time.sleep(0.05)
    time.sleep(2.0)
    cancelled_at = time.monotonic()
    rspark.sparkContext.cancelJobGroup("ray-group")
    thread.join(30)
    assert not thread.is_alive()
    assert time.monotonic() - cancelled_at < 15
    assert isinstance(out["error"], JobCancelledError) and "job group ray-group" in str(out["error"])
    assert sorted(r[0] for r in frame.select(F.udf(lambda x: x * 2, "long")("id")).collect()) == [0, 2, 4, 6]

    timer = threading.Timer(2.0, _thread.interrupt_main)
    started = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        frame.select(hung("id")).collect()
    assert time.monotonic() - started < 2.0 + 10
    timer.join()
    assert frame.select(F.udf(lambda x: x + 3, "long")("id")).count() == 4
