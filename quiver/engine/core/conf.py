"""Session configuration: `quiver.*` keys, with the `spark.*` keys users already set as aliases."""
from __future__ import annotations

import difflib
import functools
import os
import re
import time
import warnings
from dataclasses import dataclass
from typing import Any

from quiver.engine.core.errors import ConfigurationError

ALIASES = {
    "spark.sql.shuffle.partitions": "quiver.sql.shuffle.partitions",
    "spark.sql.autoBroadcastJoinThreshold": "quiver.sql.autoBroadcastJoinThreshold",
    "spark.task.maxFailures": "quiver.task.maxFailures",
    "spark.master": "quiver.master",
    "spark.sql.ansi.enabled": "quiver.sql.ansi.enabled",
    "spark.app.name": "quiver.app.name",
    "spark.sql.repl.eagerEval.maxNumRows": "quiver.sql.repl.eagerEval.maxNumRows",
    "spark.sql.repl.eagerEval.truncate": "quiver.sql.repl.eagerEval.truncate",
    "spark.executor.pyspark.memory": "quiver.python.worker.memory",
    "spark.local.dir": "quiver.local.dir",
    "spark.driver.maxResultSize": "quiver.driver.maxResultSize",
    "spark.memory.fraction": "quiver.memory.fraction",
    "spark.driver.memory": "quiver.driver.memory",
    "spark.executor.memory": "quiver.executor.memory",
    "spark.sql.session.timeZone": "quiver.sql.session.timeZone",
}
# Hadoop's S3A keys, as Spark users set them (with or without `spark.hadoop.`), name Quiver's S3 settings.
_S3A_KEYS = {"endpoint": "endpoint", "access.key": "accessKey", "secret.key": "secretKey",
             "session.token": "sessionToken", "endpoint.region": "region", "attempts.maximum": "maxAttempts"}
# Spark's adaptive-execution keys, each the alias of the quiver.sql.adaptive key of the same name.
ADAPTIVE_KEYS = ("enabled", "coalescePartitions.enabled", "advisoryPartitionSizeInBytes",
                 "coalescePartitions.minPartitionSize", "coalescePartitions.parallelismFirst",
                 "coalescePartitions.minPartitionNum", "coalescePartitions.initialPartitionNum", "skewJoin.enabled",
                 "skewJoin.skewedPartitionFactor", "skewJoin.skewedPartitionThresholdInBytes",
                 "autoBroadcastJoinThreshold")
ALIASES.update({f"spark.sql.adaptive.{key}": f"quiver.sql.adaptive.{key}" for key in ADAPTIVE_KEYS})
ALIASES.update({f"{prefix}fs.s3a.{hadoop}": f"quiver.s3.{ours}"
                for hadoop, ours in _S3A_KEYS.items() for prefix in ("spark.hadoop.", "")})

DEFAULTS: dict[str, str] = {
    "quiver.app.name": "quiver",
    "quiver.sql.shuffle.partitions": "8",
    "quiver.sql.autoBroadcastJoinThreshold": str(10 * 1024 * 1024),
    "quiver.sql.join.broadcastByCostMaxBytes": "1g",
    "quiver.task.maxFailures": "4",
    "quiver.placement": "cost",
    "quiver.devices": "cpu",
    "quiver.cache.device": "none",
    "quiver.native.engine": "duckdb",
    "quiver.native.maxOutputShare": "0.5",
    "quiver.native.minScanBytes": "16m",
    "quiver.cache.storage.enabled": "true",
    "quiver.cache.storage.maxBytes": "512m",
    "quiver.cache.storage.diskBytes": "4g",
    "quiver.cache.storage.decodedBytes": "512m",
    "quiver.profile.cpu": "cpu-generic",
    "quiver.profile.gpu": "nvidia-h200",
    "quiver.profile.npu": "ascend-910b",
    "quiver.sql.ansi.enabled": "true",
    # rows and characters per cell a DataFrame shows as an HTML table in a notebook
    "quiver.sql.repl.eagerEval.maxNumRows": "20",
    "quiver.sql.repl.eagerEval.truncate": "20",
    # live progress per stage of a job running longer than delayMs (terminal or Jupyter only)
    "quiver.ui.progress": "true",
    "quiver.ui.progress.delayMs": "500",
    # where explain(mode="graph") writes its quiver-plan-<N>.png pictures
    "quiver.ui.graphDir": ".",
    # Python UDFs and mapInPandas/mapInArrow functions run on the task's thread instead of in worker processes
    "quiver.python.udf.inProcess": "false",
    # bytes a Python worker's address space may grow by past its imports; -1: unbounded
    "quiver.python.worker.memory": "-1",
    # bytes the operators' state and the block store of one process may hold before they spill to disk;
    # unset: quiver.memory.fraction of the memory the process may use (its cgroup's limit, else physical memory)
    "quiver.memory.fraction": "0.6",
    # whether Quiver may tune this process's allocators (Arrow's pool, glibc's malloc): quiver-submit's
    # applications and the benchmarks do; a library embedded in someone else's program leaves them alone
    "quiver.memory.tuneAllocator": "false",
    # where spill files go (a private folder per session is made under it); unset: the temp dir
    "quiver.local.dir": "",
    # the largest result an action may bring to the driver (collect, toPandas); 0: unbounded
    "quiver.driver.maxResultSize": "1g",
    # adaptive query execution: Spark's spark.sql.adaptive.* keys, with Spark's defaults
    "quiver.sql.adaptive.enabled": "true",
    "quiver.sql.adaptive.coalescePartitions.enabled": "true",
    "quiver.sql.adaptive.advisoryPartitionSizeInBytes": "64m",
    "quiver.sql.adaptive.coalescePartitions.minPartitionSize": "1m",
    "quiver.sql.adaptive.coalescePartitions.parallelismFirst": "true",
    "quiver.sql.adaptive.coalescePartitions.minPartitionNum": "",
    "quiver.sql.adaptive.coalescePartitions.initialPartitionNum": "",
    "quiver.sql.adaptive.skewJoin.enabled": "true",
    "quiver.sql.adaptive.skewJoin.skewedPartitionFactor": "5.0",
    "quiver.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes": "256m",
    "quiver.sql.adaptive.autoBroadcastJoinThreshold": "",
}

# Keys read where set and left unset otherwise (no default value), besides DEFAULTS' keys.
OPTIONAL_KEYS = frozenset({
    "quiver.master", "quiver.memory.limit", "quiver.driver.memory", "quiver.executor.memory",
    "quiver.cache.storage.dir", "quiver.ray.numCpus", "quiver.ray.objectStoreMemory",
    *(f"quiver.s3.{ours}" for ours in _S3A_KEYS.values()),
})

PLACEMENT_MODES = ("cost", "cpu", "gpu", "npu")

_SIZE = re.compile(r"^\s*(-?\d+)\s*([kmgt]?)b?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def canonical_key(key: str) -> str:
    return ALIASES.get(key, key)


@functools.cache
def known_keys() -> frozenset[str]:
    """Every `quiver.*` key the engine reads."""
    return frozenset(DEFAULTS) | OPTIONAL_KEYS | frozenset(_VALIDATORS)


def unknown_key_warning(key: str) -> str | None:
    """What to tell a user who set `key`: None for a key Quiver knows or another system's (`spark.*` keys
    Quiver does not use are kept and ignored, as Spark keeps keys it does not know), else the message with
    the closest known key."""
    canon = canonical_key(key)
    known = known_keys()
    if not canon.startswith("quiver.") or canon in known:
        return None
    close = difflib.get_close_matches(canon, sorted(known), n=1, cutoff=0.8)
    hint = f"; did you mean {close[0]!r}?" if close else "; the README's Configuration section lists the keys"
    return f"unknown conf key {key!r} is kept but nothing reads it{hint}"


def system_time_zone() -> str:
    """The machine's time zone as a region ID (`Europe/Oslo`), as Spark's JVM takes its default zone: `$TZ`,
    else the zone /etc/localtime links to, else the offset Python sees (`+01:00`), `UTC` where none is known."""
    tz = os.environ.get("TZ", "").lstrip(":")
    if "/" in tz or tz in ("UTC", "GMT"):
        return tz
    try:
        target = os.path.realpath("/etc/localtime")
    except OSError:
        target = ""
    if "zoneinfo/" in target:
        return target.split("zoneinfo/", 1)[1]
    offset = -(time.altzone if time.daylight and time.localtime().tm_isdst > 0 else time.timezone)
    if offset == 0:
        return "UTC"
    sign = "+" if offset > 0 else "-"
    return f"{sign}{abs(offset) // 3600:02d}:{abs(offset) % 3600 // 60:02d}"


# The zone timestamps are parsed, shown and taken apart in (hour(), date_format, casts): by default the machine's,
# as Spark's JVM takes it when the process starts.
DEFAULTS["quiver.sql.session.timeZone"] = system_time_zone()


def parse_size(key: str, value: Any) -> int:
    """A byte size such as `10485760`, `10m`, `10MB`, or -1 (disabled)."""
    m = _SIZE.match(str(value))
    if not m:
        raise ConfigurationError(f"{key} must be a size in bytes such as 10485760, 10m or 1g (or -1 to disable), got "
                                 f"{value!r}")
    return int(m.group(1)) * _UNITS[m.group(2).lower()]


def parse_positive_int(key: str, value: Any) -> int:
    try:
        n = int(str(value).strip())
    except ValueError:
        n = 0
    if n <= 0:
        raise ConfigurationError(f"{key} must be a positive integer, got {value!r}")
    return n


def parse_optional_positive_int(key: str, value: Any) -> str:
    """A positive integer, or empty for unset."""
    if str(value).strip() == "":
        return ""
    return str(parse_positive_int(key, value))


def parse_optional_size(key: str, value: Any) -> str:
    """A size (see `parse_size`), or empty for unset."""
    if str(value).strip() == "":
        return ""
    parse_size(key, value)
    return str(value)


def parse_skew_factor(key: str, value: Any) -> str:
    """A number of at least 1: how many times the median size a skewed partition is."""
    try:
        x = float(str(value).strip())
    except ValueError:
        x = 0.0
    if not x >= 1.0:
        raise ConfigurationError(f"{key} must be a number of at least 1, such as 5.0, got {value!r}")
    return str(value)


def parse_bool(key: str, value: Any) -> str:
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise ConfigurationError(f"{key} must be true or false, got {value!r}")
    return text


# Names of UTC that Spark accepts as a session time zone.
UTC_ZONES = frozenset({"utc", "etc/utc", "gmt", "etc/gmt", "z", "zulu", "etc/zulu", "universal", "etc/universal",
                       "uct", "etc/uct", "gmt0", "etc/gmt0", "greenwich", "etc/greenwich", "+00:00", "-00:00",
                       "utc+0", "utc-0", "gmt+0", "gmt-0", "utc+00:00", "gmt+00:00", "etc/gmt+0", "etc/gmt-0"})

# A zone offset as Spark takes one: `+01:00`, `-8`, `+0530`, optionally after `UTC`, `GMT` or `UT`.
_ZONE_OFFSET = re.compile(r"^(?:UTC|GMT|UT)?([+-])(\d{1,2})(?::?(\d{2}))?(?::?(\d{2}))?$", re.IGNORECASE)


@functools.lru_cache(maxsize=256)
def normalize_time_zone(text: str) -> str | None:
    """`text` as the zone name Arrow's kernels take: `UTC` for every name of UTC, `+HH:MM` for an offset, the
    region ID (`America/Los_Angeles`) as the tz database spells it; None when it names no zone."""
    text = text.strip()
    if text.lower() in UTC_ZONES:
        return "UTC"
    m = _ZONE_OFFSET.match(text)
    if m:
        sign, hours, minutes, seconds = m.group(1), int(m.group(2)), int(m.group(3) or 0), int(m.group(4) or 0)
        if hours > 18 or minutes > 59 or seconds > 0 or hours == 18 and minutes > 0:
            return None
        return "UTC" if hours == minutes == 0 else f"{sign}{hours:02d}:{minutes:02d}"
    import zoneinfo

    try:
        zoneinfo.ZoneInfo(text)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return None
    return text


def parse_time_zone(key: str, value: Any) -> str:
    """A session time zone: a region ID, an offset (`+01:00`, `UTC+1`) or a name of UTC; empty for the machine's."""
    text = str(value).strip()
    if text and normalize_time_zone(text) is None:
        raise ConfigurationError(
            f"{key}={text!r} names no time zone; give a region ID such as 'America/Los_Angeles' or 'Europe/Oslo', "
            f"an offset such as '+01:00' or '-08:00', or 'UTC'")
    return text


def parse_non_negative_int(key: str, value: Any) -> int:
    text = str(value).strip()
    if not text.isdigit():
        raise ConfigurationError(f"{key} must be a whole number of 0 or more, got {value!r}")
    return int(text)


def parse_fraction(key: str, value: Any) -> float:
    try:
        x = float(str(value).strip())
    except ValueError:
        x = -1.0
    if not 0.0 < x <= 1.0:
        raise ConfigurationError(f"{key} must be a fraction greater than 0 and at most 1, such as 0.6, got {value!r}")
    return x


def parse_placement(key: str, value: Any) -> str:
    mode = str(value).strip().lower()
    if mode not in PLACEMENT_MODES:
        raise ConfigurationError(f"{key} must be one of {', '.join(PLACEMENT_MODES)}, got {value!r}")
    return mode


def parse_device_list(key: str, value: Any) -> str:
    parse_devices(str(value))
    return str(value)


def parse_cache_device(key: str, value: Any) -> str:
    kind = str(value).strip().lower()
    if kind not in ("none", "gpu", "npu"):
        raise ConfigurationError(f"{key} must be none, gpu or npu (a device listed in quiver.devices), got {value!r}")
    return kind


def parse_native_engine(key: str, value: Any) -> str:
    engine = str(value).strip().lower()
    if engine not in ("none", "duckdb"):
        raise ConfigurationError(f"{key} must be none or duckdb (the engine stage fragments run on), got {value!r}")
    return engine


def parse_share(key: str, value: Any) -> str:
    try:
        share = float(value)
    except (TypeError, ValueError):
        share = -1.0
    if not 0.0 <= share <= 1.0:
        raise ConfigurationError(f"{key} must be a share between 0 and 1, got {value!r}")
    return str(share)


_VALIDATORS = {
    "quiver.placement": parse_placement,
    "quiver.native.engine": parse_native_engine,
    "quiver.native.maxOutputShare": parse_share,
    "quiver.native.minScanBytes": parse_size,
    "quiver.cache.device": parse_cache_device,
    "quiver.devices": parse_device_list,
    "quiver.sql.shuffle.partitions": parse_positive_int,
    "quiver.sql.autoBroadcastJoinThreshold": parse_size,
    "quiver.sql.join.broadcastByCostMaxBytes": parse_size,
    "quiver.task.maxFailures": parse_positive_int,
    "quiver.cache.storage.maxBytes": parse_size,
    "quiver.cache.storage.diskBytes": parse_size,
    "quiver.cache.storage.decodedBytes": parse_size,
    "quiver.ray.numCpus": parse_positive_int,
    "quiver.ray.objectStoreMemory": parse_size,
    "quiver.ui.progress": parse_bool,
    "quiver.sql.repl.eagerEval.maxNumRows": parse_non_negative_int,
    "quiver.sql.repl.eagerEval.truncate": parse_non_negative_int,
    "quiver.ui.progress.delayMs": parse_non_negative_int,
    "quiver.python.udf.inProcess": parse_bool,
    "quiver.memory.tuneAllocator": parse_bool,
    "quiver.sql.session.timeZone": parse_time_zone,
    "quiver.python.worker.memory": parse_size,
    "quiver.memory.limit": parse_size,
    "quiver.memory.fraction": parse_fraction,
    "quiver.driver.memory": parse_size,
    "quiver.executor.memory": parse_size,
    "quiver.driver.maxResultSize": parse_size,
    "quiver.sql.adaptive.enabled": parse_bool,
    "quiver.sql.adaptive.coalescePartitions.enabled": parse_bool,
    "quiver.sql.adaptive.advisoryPartitionSizeInBytes": parse_size,
    "quiver.sql.adaptive.coalescePartitions.minPartitionSize": parse_size,
    "quiver.sql.adaptive.coalescePartitions.parallelismFirst": parse_bool,
    "quiver.sql.adaptive.coalescePartitions.minPartitionNum": parse_optional_positive_int,
    "quiver.sql.adaptive.coalescePartitions.initialPartitionNum": parse_optional_positive_int,
    "quiver.sql.adaptive.skewJoin.enabled": parse_bool,
    "quiver.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes": parse_size,
    "quiver.sql.adaptive.autoBroadcastJoinThreshold": parse_optional_size,
    "quiver.sql.adaptive.skewJoin.skewedPartitionFactor": parse_skew_factor,
}


class RuntimeConfig:
    """`spark.conf`: get/set/unset of string values, validated on set.

    >>> spark.conf.isModifiable("spark.sql.shuffle.partitions")
    True
    """

    def __init__(self, initial: dict[str, Any] | None = None):
        self._values: dict[str, str] = {}
        for k, v in (initial or {}).items():
            self.set(k, v)

    def set(self, key: str, value: Any) -> None:
        """Set `key` (a `spark.*` key or its `quiver.*` name) to `value`, kept as a string (a bool as "true"/"false");
        a value a known key cannot take raises `ConfigurationError` naming the key and its valid values.

        >>> spark.conf.set("spark.sql.shuffle.partitions", 4); spark.conf.get("quiver.sql.shuffle.partitions")
        '4'
        >>> spark.conf.unset("spark.sql.shuffle.partitions")
        """
        canon = canonical_key(key)
        if isinstance(value, bool):
            value = "true" if value else "false"
        if canon in _VALIDATORS:
            _VALIDATORS[canon](key, value)
        else:
            message = unknown_key_warning(key)
            if message:
                warnings.warn(message, UserWarning, stacklevel=2)
        self._values[canon] = str(value)

    def is_set(self, key: str) -> bool:
        """Whether the user set `key` (or its alias), rather than leaving it at its default."""
        return canonical_key(key) in self._values

    def get(self, key: str, default: Any = ...) -> Any:
        """The value of `key` as a string: what was set, else `default` when given, else Quiver's default for the key;
        a key with neither raises `ConfigurationError`.

        >>> spark.conf.get("spark.sql.ansi.enabled")
        'true'
        >>> spark.conf.get("spark.no.such.key", "fallback")
        'fallback'
        """
        canon = canonical_key(key)
        if canon in self._values:
            return self._values[canon]
        if default is not ...:
            return default
        if canon in DEFAULTS:
            return DEFAULTS[canon]
        raise ConfigurationError(f"conf key {key!r} is not set and has no default")

    def unset(self, key: str) -> None:
        """Forget the value set for `key`, so it reads as its default again.

        >>> spark.conf.set("spark.sql.shuffle.partitions", 3); spark.conf.unset("spark.sql.shuffle.partitions")
        >>> spark.conf.get("spark.sql.shuffle.partitions")
        '8'
        """
        self._values.pop(canonical_key(key), None)

    def getAll(self) -> dict[str, str]:
        """Every key with a value, as a dict: the defaults overlaid with what was set, under Quiver's key names.

        >>> spark.conf.getAll()["quiver.sql.shuffle.partitions"]
        '8'
        """
        return {**DEFAULTS, **self._values}

    def flag(self, key: str) -> bool:
        """A true/false key's value."""
        return parse_bool(key, self.get(key)) == "true"

    def isModifiable(self, key: str) -> bool:
        """Whether `key` may be set at runtime: always True in Quiver, though the master, the app name,
        `quiver.task.maxFailures` and `quiver.ray.*` are read only when the session starts.

        >>> spark.conf.isModifiable("spark.sql.shuffle.partitions")
        True
        """
        return True

    def shuffle_partitions(self) -> int:
        return parse_positive_int("spark.sql.shuffle.partitions", self.get("quiver.sql.shuffle.partitions"))

    def broadcast_threshold(self) -> int:
        return parse_size("spark.sql.autoBroadcastJoinThreshold", self.get("quiver.sql.autoBroadcastJoinThreshold"))

    def broadcast_by_cost_max_bytes(self) -> int:
        """The largest join side broadcast because it is cheaper than a shuffle; -1 turns that off."""
        return parse_size("quiver.sql.join.broadcastByCostMaxBytes",
                          self.get("quiver.sql.join.broadcastByCostMaxBytes"))

    def session_time_zone(self) -> str:
        """The zone the session's timestamps are shown, parsed and taken apart in (`spark.sql.session.timeZone`,
        else the machine's), named as Arrow's kernels take it (`normalize_time_zone`)."""
        text = str(self.get("quiver.sql.session.timeZone")).strip() or system_time_zone()
        return normalize_time_zone(text) or "UTC"

    @staticmethod
    def python_time_zone() -> str:
        """The zone of Python's naive datetimes, which PySpark's rows and `createDataFrame` take in the machine's
        zone (the process's `$TZ`), whatever the session's; named as Arrow's kernels take it."""
        return normalize_time_zone(system_time_zone()) or "UTC"

    def ansi_enabled(self) -> bool:
        """ANSI mode, on by default as in Spark 4: its type coercion, and errors instead of NULL or wrapped values."""
        return str(self.get("quiver.sql.ansi.enabled")).strip().lower() == "true"

    def python_udf_in_process(self) -> bool:
        """Whether user Python code runs on the task's thread rather than in a Python worker process."""
        return parse_bool("quiver.python.udf.inProcess", self.get("quiver.python.udf.inProcess")) == "true"

    def python_worker_memory(self) -> int:
        """Bytes a Python worker may allocate past its imports (RLIMIT_AS), or -1 for no bound."""
        size = parse_size("quiver.python.worker.memory", self.get("quiver.python.worker.memory"))
        return size if size >= 0 else -1

    def memory_limit(self) -> int | None:
        """`quiver.memory.limit` in bytes where set, else None: `memory_fraction()` of what the process may use."""
        return self._positive_size("quiver.memory.limit")

    def driver_memory(self) -> int | None:
        """What the session's own process may use (`spark.driver.memory`), in place of its cgroup's limit or
        physical memory; None where unset."""
        return self._positive_size("quiver.driver.memory")

    def executor_memory(self) -> int | None:
        """What each Ray worker may use (`spark.executor.memory`), in place of its share of its node's
        memory; None where unset."""
        return self._positive_size("quiver.executor.memory")

    def _positive_size(self, key: str) -> int | None:
        value = self.get(key, None)
        if value in (None, ""):
            return None
        size = parse_size(key, value)
        if size <= 0:
            raise ConfigurationError(f"{key} must be a positive size such as 2g, got {value!r}")
        return size

    def memory_fraction(self) -> float:
        return parse_fraction("quiver.memory.fraction", self.get("quiver.memory.fraction"))

    def local_dir(self) -> str:
        """Where spill files go: `quiver.local.dir` (`spark.local.dir`), else the temp dir."""
        return str(self.get("quiver.local.dir") or "")

    def max_result_size(self) -> int:
        """`spark.driver.maxResultSize` in bytes; 0 for no bound."""
        size = parse_size("spark.driver.maxResultSize", self.get("quiver.driver.maxResultSize"))
        return max(size, 0)

    def max_failures(self) -> int:
        return parse_positive_int("quiver.task.maxFailures", self.get("quiver.task.maxFailures"))


# `quiver.devices`: devices as `kind[:index][:emulated]`, e.g. `cpu,gpu:emulated`; the CPU is always there.
DEVICE_KINDS = ("cpu", "gpu", "npu")


@dataclass(frozen=True)
class DeviceSpec:
    """One entry of `quiver.devices`."""

    kind: str
    index: int = 0
    emulated: bool = False


def parse_devices(text: str) -> tuple[DeviceSpec, ...]:
    """`quiver.devices` as specs, the CPU first; errors name the entry and what is valid."""
    specs: list[DeviceSpec] = []
    for raw in str(text).split(","):
        item = raw.strip().lower()
        if not item:
            continue
        parts = item.split(":")
        kind = parts[0]
        if kind not in DEVICE_KINDS:
            raise ConfigurationError(
                f"quiver.devices entry {raw.strip()!r}: unknown device kind {kind!r}; valid kinds are "
                f"{', '.join(DEVICE_KINDS)}, written kind[:index][:emulated], e.g. 'cpu,gpu:emulated'")
        index, emulated = 0, False
        for p in parts[1:]:
            if p == "emulated":
                emulated = True
            elif p.isdigit():
                index = int(p)
            else:
                raise ConfigurationError(
                    f"quiver.devices entry {raw.strip()!r}: {p!r} is neither a device index nor 'emulated'")
        if kind == "cpu" and emulated:
            raise ConfigurationError(f"quiver.devices entry {raw.strip()!r}: the CPU is never emulated")
        spec = DeviceSpec(kind, index, emulated)
        if spec not in specs:
            specs.append(spec)
    cpu = [s for s in specs if s.kind == "cpu"]
    return tuple([cpu[0] if cpu else DeviceSpec("cpu")] + [s for s in specs if s.kind != "cpu"])
