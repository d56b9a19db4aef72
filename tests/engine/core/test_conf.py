"""quiver/engine/core/conf.py: `quiver.*` keys with the common `spark.*` keys as aliases, validated on set."""
from __future__ import annotations

import pytest

from quiver.engine.core.conf import (
    ALIASES,
    DEFAULTS,
    RuntimeConfig,
    canonical_key,
    parse_size,
)
from quiver.engine.core.errors import ConfigurationError

# Two valid values per key whose validator takes no small integer; every other key takes "3" and "5".
_SAMPLE_VALUES = {"quiver.memory.fraction": ("0.3", "0.5"), "quiver.sql.session.timeZone": ("UTC", "GMT"),
                  **{k: ("false", "true") for k in DEFAULTS if k.startswith("quiver.sql.adaptive.")
                     and DEFAULTS[k] in ("true", "false")}}


@pytest.mark.parametrize("alias,key", sorted(ALIASES.items()))
def test_spark_alias_and_quiver_key_are_one_setting(alias, key):
    conf = RuntimeConfig()
    first, second = _SAMPLE_VALUES.get(key, ("3", "5"))
    conf.set(alias, first)
    assert conf.get(key) == first and conf.get(alias) == first
    conf.set(key, second)
    assert conf.get(alias) == second
    conf.unset(alias)
    assert conf.get(key, None) is None or conf.get(key) == DEFAULTS.get(key)


def test_defaults_are_visible_through_aliases():
    conf = RuntimeConfig()
    assert conf.get("spark.sql.shuffle.partitions") == DEFAULTS["quiver.sql.shuffle.partitions"]
    assert conf.shuffle_partitions() == int(DEFAULTS["quiver.sql.shuffle.partitions"])
    assert conf.getAll()["quiver.sql.shuffle.partitions"] == DEFAULTS["quiver.sql.shuffle.partitions"]


def test_initial_values_go_through_aliases_and_validation():
    conf = RuntimeConfig({"spark.sql.shuffle.partitions": 3, "spark.sql.autoBroadcastJoinThreshold": "10m"})
    assert conf.shuffle_partitions() == 3
    assert conf.broadcast_threshold() == 10 * 1024 * 1024
    with pytest.raises(ConfigurationError, match="spark.sql.shuffle.partitions"):
        RuntimeConfig({"spark.sql.shuffle.partitions": "zero"})


@pytest.mark.parametrize("key", ["spark.sql.shuffle.partitions", "quiver.sql.shuffle.partitions",
                                 "spark.task.maxFailures"])
@pytest.mark.parametrize("value", ["0", "-2", "two", "1.5", ""])
def test_invalid_positive_int_names_the_key_and_value(key, value):
    conf = RuntimeConfig()
    with pytest.raises(ConfigurationError) as err:
        conf.set(key, value)
    assert key in str(err.value) and repr(value) in str(err.value) and "positive integer" in str(err.value)
    assert conf.get(key) == DEFAULTS[canonical_key(key)]  # a rejected value is not kept


@pytest.mark.parametrize("value,size", [("10485760", 10485760), ("10m", 10 << 20), ("10MB", 10 << 20), ("1g", 1 << 30),
                                        ("512k", 512 << 10), ("-1", -1), (" 2 mb ", 2 << 20), (0, 0)])
def test_broadcast_threshold_accepts_spark_size_strings(value, size):
    conf = RuntimeConfig()
    conf.set("spark.sql.autoBroadcastJoinThreshold", value)
    assert conf.broadcast_threshold() == size


@pytest.mark.parametrize("value", ["ten", "10x", "1.5g", ""])
def test_invalid_size_names_the_key_and_the_valid_forms(value):
    with pytest.raises(ConfigurationError) as err:
        parse_size("spark.sql.autoBroadcastJoinThreshold", value)
    assert "spark.sql.autoBroadcastJoinThreshold" in str(err.value) and "10m" in str(err.value)


def test_unset_key_without_default_is_named():
    with pytest.raises(ConfigurationError, match="'quiver.no.such.key'"):
        RuntimeConfig().get("quiver.no.such.key")
    assert RuntimeConfig().get("quiver.no.such.key", "fallback") == "fallback"


def test_values_are_stored_as_spark_strings():
    conf = RuntimeConfig()
    conf.set("quiver.some.flag", True)
    conf.set("spark.sql.shuffle.partitions", 4)
    assert conf.get("quiver.some.flag") == "true"
    assert conf.get("spark.sql.shuffle.partitions") == "4"


def test_session_conf_uses_the_aliases(spark):
    previous = spark.conf.get("quiver.sql.shuffle.partitions")
    try:
        spark.conf.set("spark.sql.shuffle.partitions", "3")
        assert spark.conf.get("quiver.sql.shuffle.partitions") == "3"
        with pytest.raises(ConfigurationError, match="spark.sql.shuffle.partitions"):
            spark.conf.set("spark.sql.shuffle.partitions", "-1")
        assert spark.conf.get("spark.sql.shuffle.partitions") == "3"
    finally:
        spark.conf.set("quiver.sql.shuffle.partitions", previous)


def test_a_misspelt_quiver_key_warns_with_the_closest_key():
    import warnings

    conf = RuntimeConfig()
    with pytest.warns(UserWarning, match=r"unknown conf key 'quiver.sql.shufle.partitions'.*"
                                         r"did you mean 'quiver.sql.shuffle.partitions'\?"):
        conf.set("quiver.sql.shufle.partitions", "4")
    with pytest.warns(UserWarning, match=r"unknown conf key 'quiver.nothing.like.it'.*Configuration section"):
        conf.set("quiver.nothing.like.it", "1")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        conf.set("spark.executor.cores", "4")  # another system's key: kept, as Spark keeps keys it does not use
        conf.set("quiver.memory.limit", "1g")  # known without a default
        conf.set("quiver.s3.endpoint", "http://127.0.0.1:9000")
        conf.set("spark.sql.session.timeZone", "Etc/UTC")
    assert conf.get("quiver.sql.shufle.partitions") == "4"  # kept, not lost


def test_the_session_time_zone_is_utc_and_another_zone_is_refused():
    from quiver.engine.core.errors import QuiverNotSupported

    conf = RuntimeConfig()
    assert conf.get("spark.sql.session.timeZone") == "UTC"
    for utc in ("UTC", "Etc/UTC", "GMT", "+00:00", "Z"):
        conf.set("spark.sql.session.timeZone", utc)
    with pytest.raises(QuiverNotSupported, match=r"America/Los_Angeles.*UTC only.*from_utc_timestamp"):
        conf.set("spark.sql.session.timeZone", "America/Los_Angeles")
    assert conf.get("spark.sql.session.timeZone") == "Z"  # the refused value did not replace the last one


def test_a_session_says_when_the_machines_zone_is_not_utc(monkeypatch):
    from quiver.engine.api.session import _warn_of_local_time_zone

    monkeypatch.setenv("TZ", "Europe/Oslo")
    with pytest.warns(UserWarning, match="this machine's time zone is Europe/Oslo.*Quiver computes.*in UTC"):
        _warn_of_local_time_zone(RuntimeConfig())
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _warn_of_local_time_zone(RuntimeConfig({"spark.sql.session.timeZone": "UTC"}))
        monkeypatch.setenv("TZ", "UTC")
        _warn_of_local_time_zone(RuntimeConfig())
