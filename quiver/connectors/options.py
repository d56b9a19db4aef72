"""Spark-style reader and writer options: case-insensitive keys, string values, checked once
with errors that name the option and list what it accepts."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from quiver.connectors.base import ReadOptions
from quiver.engine.core.conf import normalize_time_zone
from quiver.engine.core.errors import ConfigurationError


def read_options(options: Mapping[str, Any] | ReadOptions | None) -> ReadOptions:
    """Options with lower-cased keys and Spark's string values (`True` -> `'true'`); None dropped."""
    if isinstance(options, ReadOptions):
        return options
    values = {}
    for key, value in (options or {}).items():
        if value is None:
            continue
        values[key.lower()] = str(value).lower() if isinstance(value, bool) else value
    return ReadOptions(values)


def option_bool(options: ReadOptions, key: str, default: bool) -> bool:
    """A true/false option; anything else is a `ConfigurationError` naming the option."""
    value = options.get(key)
    if value is None:
        return default
    text = str(value).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    raise ConfigurationError(f"option '{key}' must be 'true' or 'false', got {value!r}")


def option_choice(options: ReadOptions, key: str, choices: Sequence[str], default: str) -> str:
    """A case-insensitive option among `choices`, returned in the spelling of `choices`."""
    value = options.get(key)
    if value is None:
        return default
    for choice in choices:
        if str(value).lower() == choice.lower():
            return choice
    raise ConfigurationError(f"option '{key}' has invalid value {value!r}; valid values are {', '.join(choices)}")


def option_time_zone(options: ReadOptions, fmt: str) -> str:
    """The `timeZone` option (the zone of timestamps read or written without an offset), as Arrow's kernels name
    zones; UTC when not given (`spark.read` and `df.write` give the session's)."""
    value = options.get("timeZone")
    if value is None:
        return "UTC"
    zone = normalize_time_zone(str(value))
    if zone is None:
        raise ConfigurationError(f"{fmt} option 'timeZone' has invalid value {value!r}; give a region ID such as "
                                 "'America/Los_Angeles', an offset such as '+01:00', or 'UTC'")
    return zone


def option_char(options: ReadOptions, key: str, default: str) -> str:
    """A one-character option such as `sep` or `quote`; '' is allowed (turns the feature off)."""
    value = options.get(key)
    if value is None:
        return default
    value = str(value)
    if value == "\\t":
        value = "\t"
    if len(value) > 1:
        raise ConfigurationError(f"option '{key}' must be a single character, got {value!r}")
    return value


def reject_options(options: ReadOptions, fmt: str, unsupported: Mapping[str, Sequence[str]]) -> None:
    """Raise for options Spark has but Quiver does not support yet, unless set to an accepted value."""
    for key, accepted in unsupported.items():
        value = options.get(key.lower())
        if value is not None and str(value).lower() not in accepted:
            allowed = f" (accepted: {', '.join(accepted)})" if accepted else ""
            raise ConfigurationError(f"{fmt} option '{key}'={value!r} is not supported yet{allowed}")
