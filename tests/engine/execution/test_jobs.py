"""quiver/engine/execution/jobs.py through the public API: job groups and tags cancel running jobs (a hung
Python UDF included), Ctrl-C during an action stops its tasks, and the session goes on working after both."""
from __future__ import annotations

import _thread
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import quiver
from quiver import functions as F
from quiver.engine.execution.jobs import InvalidTagError, JobCancelledError, action, current_action

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _hang(x):
    time.sleep(3600)
    return x


@pytest.fixture(scope="module")
def session():
    s = quiver.Session({"quiver.master": "local[2]", "quiver.ui.progress": "false", "spark.task.maxFailures": 1})
    yield s
    s.stop()


@pytest.fixture
def frame(session):
    return session.range(0, 8, numPartitions=2)


def _in_thread(action, setup=lambda: None) -> dict:
    """Run `action` in a new thread (after `setup` there); what it returned or raised, and how long it took."""
    out: dict = {}

    def run():
        setup()
        started = time.monotonic()
        try:
            out["value"] = action()
        except BaseException as exc:  # noqa: BLE001
            out["error"] = exc
        out["seconds"] = time.monotonic() - started

    out["thread"] = threading.Thread(target=run, daemon=True)
    out["thread"].start()
    return out


def _wait_running(session, timeout: float = 60.0) -> list:
    """Wait until a job of `session` runs; the running jobs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        running = session._context.scheduler.jobs.running()
        if running:
            return running
        time.sleep(0.05)
    raise AssertionError("no job started")


def test_cancel_job_group_stops_a_hung_udf_and_the_next_job_runs(session, frame):
    hung = F.udf(_hang, "long")
    job = _in_thread(lambda: frame.select(hung("id")).collect(),
                     lambda: session.sparkContext.setJobGroup("nightly", "the hung one"))
    running = _wait_running(session)
    assert [(j.group, j.description) for j in running] == [("nightly", "the hung one")]
    time.sleep(1.0)  # the tasks are in the UDF now (or starting their workers)
    cancelled_at = time.monotonic()
    session.sparkContext.cancelJobGroup("nightly")
    job["thread"].join(15)
    assert not job["thread"].is_alive(), "the cancelled job is still running"
    assert time.monotonic() - cancelled_at < 10
    error = job["error"]
    assert isinstance(error, JobCancelledError)
    assert "SPARK_JOB_CANCELLED" in str(error) and "cancelled part of cancelled job group nightly" in str(error)
    assert session._context.scheduler.jobs.running() == []
    assert sorted(r[0] for r in frame.select(F.udf(lambda x: x + 1, "long")("id")).collect()) == list(range(1, 9))


def test_cancelling_another_group_leaves_the_job_alone(session, frame):
    job = _in_thread(lambda: frame.select(F.udf(lambda x: time.sleep(1.5) or x, "long")("id")).count(),
                     lambda: session.sparkContext.setJobGroup("mine", "slow but fine"))
    _wait_running(session)
    session.sparkContext.cancelJobGroup("someone-else")
    job["thread"].join(60)
    assert job.get("value") == 8, job.get("error")


def test_interrupt_tag_and_cancel_all(session, frame):
    hung = F.udf(_hang, "long")

    def tagged():
        session.addTag("etl")
        session.addTag("daily")

    job = _in_thread(lambda: frame.select(hung("id")).collect(), tagged)
    running = _wait_running(session)
    assert running[0].tags == {"etl", "daily"}
    assert session.interruptTag("weekly") == []
    assert session.interruptTag("etl") == [str(running[0].job_id)]
    job["thread"].join(15)
    assert "cancelled part of cancelled job tags etl" in str(job["error"])

    job = _in_thread(lambda: frame.select(hung("id")).collect())
    _wait_running(session)
    session.sparkContext.cancelAllJobs()
    job["thread"].join(15)
    assert "cancelled as part of cancellation of all jobs" in str(job["error"])
    assert frame.count() == 8


def test_tags_are_per_thread_and_checked(session):
    session.addTag("a")
    session.addTag("b")
    session.removeTag("a")
    assert session.getTags() == {"b"}
    seen = _in_thread(session.getTags)
    seen["thread"].join(5)
    assert seen["value"] == set()
    session.clearTags()
    assert session.getTags() == set()
    with pytest.raises(InvalidTagError, match="cannot contain ','"):
        session.addTag("a,b")
    with pytest.raises(InvalidTagError, match="empty"):
        session.interruptTag("")
    session.sparkContext.addJobTag("jt")
    assert session.sparkContext.getJobTags() == {"jt"}
    session.sparkContext.clearJobTags()


def test_ctrl_c_during_an_action_stops_its_tasks_and_the_session_goes_on(session, frame):
    hung = F.udf(_hang, "long")
    timer = threading.Timer(2.0, _thread.interrupt_main)
    started = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        frame.select(hung("id")).collect()
    assert time.monotonic() - started < 2.0 + 6
    timer.join()
    assert session._context.scheduler.jobs.running() == []
    # every task of the interrupted job has ended: the thread pool is free, and the workers too
    assert sorted(r[0] for r in frame.select(F.udf(lambda x: x * 2, "long")("id")).collect()) == \
        [2 * i for i in range(8)]


def _script(body: str) -> str:
    return textwrap.dedent("""
        import sys, threading, time
        import quiver
        from quiver import functions as F
        spark = quiver.Session.builder.master("local[2]").config("quiver.ui.progress", "false").getOrCreate()
        hung = F.udf(lambda x: time.sleep(3600) or x, "long")
        df = spark.range(0, 4, numPartitions=2)
    """) + textwrap.dedent(body)


def _python(script: str, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p)}
    return subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **kwargs)


def test_the_interpreter_exits_after_a_hung_udf_was_cancelled():
    proc = _python(_script("""
        def run():
            spark.sparkContext.setJobGroup("g", "hung")
            try:
                df.select(hung("id")).collect()
            except Exception as exc:
                print(type(exc).__name__, flush=True)
        t = threading.Thread(target=run)
        t.start()
        while not spark._context.scheduler.jobs.running():
            time.sleep(0.05)
        time.sleep(1)
        spark.sparkContext.cancelJobGroup("g")
        t.join()
        print("done", flush=True)
    """))
    try:
        out, err = proc.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("the interpreter did not exit after the hung UDF's job was cancelled")
    assert proc.returncode == 0, err
    assert out.split() == ["JobCancelledError", "done"]


def test_ctrl_c_in_a_script_ends_it_while_a_udf_hangs():
    proc = _python(_script("""
        print("running", flush=True)
        df.select(hung("id")).collect()
    """))
    assert proc.stdout.readline().strip() == "running"
    time.sleep(3)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("Ctrl-C did not end a script whose UDF hangs")
    assert time.monotonic() - sent < 15
    assert "KeyboardInterrupt" in err


def test_the_outermost_action_names_the_job_and_the_name_ends_with_it():
    @action("toArrow")
    def to_arrow():
        return current_action()

    @action("count")
    def count():
        return to_arrow()

    assert current_action() == "" and to_arrow() == "toArrow" and count() == "count"
    with action("write.parquet"):
        assert count() == "write.parquet"
    assert current_action() == ""
    seen = []
    worker = threading.Thread(target=lambda: seen.append(current_action()))
    with action("collect"):
        worker.start()
        worker.join()
    assert seen == [""]  # another thread runs its own actions
