"""quiver/engine/api/session.py: the builder returns the active session, which answers Spark's conf keys for
what it runs on."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import pytest

import quiver


def test_the_session_answers_sparks_keys_for_its_master_and_name(spark):
    assert spark.conf.get("spark.master") == spark.master == spark.sparkContext.master
    assert spark.conf.get("spark.app.name") == spark.sparkContext.appName


def test_get_or_create_with_another_master_warns_and_returns_the_active_session(spark):
    other = "local[1]" if spark.master != "local[1]" else "local[2]"
    partitions = spark.conf.get("spark.sql.shuffle.partitions")
    with pytest.warns(UserWarning, match=r"runs on master .* ignores master 'local\[\d\]'; call spark.stop\(\)"):
        same = quiver.Session.builder.master(other).config("spark.sql.shuffle.partitions", "5").getOrCreate()
    assert same is spark and spark.master != other
    assert spark.conf.get("spark.sql.shuffle.partitions") == "5"
    spark.conf.set("spark.sql.shuffle.partitions", partitions)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert quiver.Session.builder.master(spark.master).getOrCreate() is spark


def test_a_stopped_session_refuses_jobs_whatever_their_task_count():
    # A stopped session's thread pool is gone: a one-task job used to run on the driver thread, a many-task
    # job to fail with concurrent.futures' "cannot schedule new futures after shutdown". Its own process, so
    # the stop cannot touch the session other tests share.
    program = textwrap.dedent("""
        import quiver
        from quiver.engine.core.errors import SessionStoppedError
        spark = quiver.Session.builder.master("local[2]").getOrCreate()
        one_task, many_tasks = spark.range(3), spark.range(100, numPartitions=4).groupBy().count()
        assert many_tasks.collect()[0][0] == 100
        spark.stop()
        for df in (one_task, many_tasks):
            try:
                df.collect()
            except SessionStoppedError as error:
                print(error)
            else:
                raise AssertionError("a stopped session ran a job")
    """)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("getOrCreate") == 2, done.stdout
