"""quiver/executors/cpu/worker_pool.py through the public API: Python UDFs and mapInPandas/mapInArrow
functions run in reusable worker processes, so a segfault fails only its task (naming the UDF), a worker's
memory is bounded by quiver.python.worker.memory, and the session goes on after both."""
from __future__ import annotations

import ctypes
import os
import signal

import pandas as pd
import pytest

import quiver
from quiver import functions as F
from quiver.engine.core.errors import PythonException, TaskFailedError
from quiver.executors.cpu.worker_pool import WORKERS


@pytest.fixture(scope="module")
def session():
    s = quiver.Session({"quiver.master": "local[2]", "quiver.ui.progress": "false", "spark.task.maxFailures": 1})
    yield s
    s.stop()


@pytest.fixture
def frame(session):
    return session.range(0, 6, numPartitions=1)


def _values(df) -> list:
    return sorted(r[0] for r in df.collect())


def test_udfs_run_in_reused_worker_processes(session, frame):
    pid = F.udf(lambda x: os.getpid(), "long")
    pids = set(_values(frame.select(pid("id"))))
    assert os.getpid() not in pids and len(pids) == 1
    started = WORKERS.started
    for _ in range(3):
        assert os.getpid() not in _values(frame.select(pid("id")))
    assert WORKERS.started == started, "a worker was started again instead of reused"

    def frames(batches):
        for b in batches:
            yield pd.DataFrame({"pid": [os.getpid()] * len(b)})

    assert os.getpid() not in _values(frame.mapInPandas(frames, "pid long"))


def test_in_process_switch_runs_udfs_on_the_task_thread(session, frame):
    pid = F.udf(lambda x: os.getpid(), "long")
    session.conf.set("quiver.python.udf.inProcess", "true")
    try:
        assert _values(frame.select(pid("id"))) == [os.getpid()] * 6
    finally:
        session.conf.unset("quiver.python.udf.inProcess")


def _sigsegv(x):
    os.kill(os.getpid(), signal.SIGSEGV)


def _null_read(x):
    return len(ctypes.string_at(0))


@pytest.mark.parametrize("crash", [_sigsegv, _null_read], ids=["SIGSEGV", "string_at(0)"])
def test_a_segfaulting_udf_fails_its_task_naming_the_udf(session, frame, crash):
    with pytest.raises(TaskFailedError) as info:
        frame.select(F.udf(crash, "long")("id")).collect()
    cause = info.value.__cause__
    assert isinstance(cause, PythonException)
    assert f"Python UDF {crash.__name__} crashed its Python worker (killed by SIGSEGV)" in str(cause)
    assert _values(frame.select(F.udf(lambda x: x + 1, "long")("id"))) == list(range(1, 7))


def test_a_crashing_map_function_is_named(session, frame):
    def crashes(batches):
        for b in batches:
            os.kill(os.getpid(), signal.SIGSEGV)
            yield b

    with pytest.raises(TaskFailedError, match="the function crashes given to mapInArrow crashed its Python worker"):
        frame.mapInArrow(crashes, "id long").collect()
    assert frame.count() == 6


def test_worker_memory_bound(session, frame):
    session.conf.set("spark.executor.pyspark.memory", "200m")
    try:
        assert _values(frame.select(F.udf(lambda x: len(bytearray(50 << 20)), "long")("id"))) == [50 << 20] * 6
        with pytest.raises(TaskFailedError) as info:
            frame.select(F.udf(lambda x: len(bytearray(1 << 30)), "long")("id")).collect()
        message = str(info.value.__cause__)
        assert "ran out of memory" in message and "200m" in message and "quiver.python.worker.memory" in message
        assert isinstance(info.value.__cause__.__cause__, MemoryError)

        def hog(frames):
            for f in frames:
                _ = bytearray(1 << 30)
                yield f

        with pytest.raises(TaskFailedError, match="function hog given to mapInPandas ran out of memory.*200m"):
            frame.mapInPandas(hog, "id long").collect()
    finally:
        session.conf.unset("spark.executor.pyspark.memory")
    assert _values(frame.select(F.udf(lambda x: len(bytearray(300 << 20)), "long")("id"))) == [300 << 20] * 6
