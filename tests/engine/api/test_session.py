"""quiver/engine/api/session.py: the builder returns the active session, which answers Spark's conf keys for
what it runs on."""
from __future__ import annotations

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
