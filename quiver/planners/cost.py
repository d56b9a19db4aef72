"""The cost model: how many seconds an operator takes on a device, and what moving data there costs.

A `DeviceProfile` is data: a linear cost per operator (fixed + per row + per byte, plus per
group for aggregates and per build-side row for joins), the device's launch overhead, memory
and link bandwidth, and where the numbers came from. Placement compares profiles; it never
knows a device by name. Profiles ship as JSON in `executors/profiles/` (GPU/NPU numbers derived
from datasheets) or come from `quiver calibrate`, which times the CPU executor on this machine.
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from importlib import resources
from pathlib import Path
from typing import Any

from quiver.engine.core.errors import ConfigurationError

OPERATORS = ("scan", "filter", "project", "aggregate", "join_build", "join_probe", "sort", "topk", "exchange")
KINDS = ("cpu", "gpu", "npu")

_PROFILE_PACKAGE = "quiver.executors"
_PROFILE_FOLDER = "profiles"


@dataclass(frozen=True)
class OperatorCost:
    """Seconds = fixed + per_row * rows + per_byte * bytes (+ per_group * groups for aggregate,
    per_build_row * build_rows for joins)."""

    fixed: float
    per_row: float
    per_byte: float
    per_group: float = 0.0
    per_build_row: float = 0.0

    def seconds(self, rows: float, bytes_: float, groups: float = 0.0, build_rows: float = 0.0) -> float:
        return (self.fixed + self.per_row * rows + self.per_byte * bytes_
                + self.per_group * groups + self.per_build_row * build_rows)


_COST_FIELDS = tuple(f.name for f in fields(OperatorCost))
_REQUIRED_COST_FIELDS = ("fixed", "per_row", "per_byte")


@dataclass(frozen=True)
class DeviceProfile:
    """What one device costs: per-operator linear costs, launch overhead, memory and host link.

    `operator_seconds` is the operator's own cost (the meaning of rows and bytes per operator
    is in its docstring); `launch_overhead_s` is charged by the caller once per batch it
    dispatches to the device, since only the caller knows how many batches there are.
    """

    name: str
    kind: str
    memory_bytes: int
    launch_overhead_s: float
    host_to_device_bytes_per_s: float
    device_to_host_bytes_per_s: float
    transfer_latency_s: float
    operators: Mapping[str, OperatorCost]
    source: str
    notes: Mapping[str, Any] = field(default_factory=dict, compare=False)
    # Operators costed per core run this many at once (a CPU's cores); a device's costs are for all of it.
    cores: int = 1

    def __hash__(self) -> int:
        return hash((self.name, self.kind, self.source))

    def operator_seconds(self, op: str, rows: float, bytes_: float, groups: float = 0.0,
                         build_rows: float = 0.0) -> float:
        """Estimated seconds for one invocation of `op` on this device (data already on it),
        excluding `launch_overhead_s`, which the caller adds per batch.

        rows/bytes are the operator's input (Arrow buffer bytes); for `join_build` the build
        side's, for `join_probe` the probe side's with `build_rows` the hash table's size;
        `groups` is an aggregate's output group count; for `project`, bytes of the columns its
        expressions compute from (a column passed through is zero-copy and costs nothing).
        """
        cost = self.operators.get(op)
        if cost is None:
            raise ConfigurationError(
                f"device profile '{self.name}' has no cost for operator '{op}'; "
                f"operators: {', '.join(OPERATORS)}")
        return cost.seconds(rows, bytes_, groups, build_rows)

    def transfer_seconds(self, bytes_: float, to_device: bool) -> float:
        """Seconds to move `bytes_` between host and this device; 0 on the CPU or for no bytes."""
        if self.kind == "cpu" or bytes_ <= 0:
            return 0.0
        rate = self.host_to_device_bytes_per_s if to_device else self.device_to_host_bytes_per_s
        return self.transfer_latency_s + bytes_ / rate

    def to_json(self) -> str:
        """The profile as the JSON `from_json` reads (notes kept under `_notes`)."""
        doc: dict[str, Any] = {
            "name": self.name,
            "kind": self.kind,
            "source": self.source,
            "memory_bytes": self.memory_bytes,
            "launch_overhead_s": self.launch_overhead_s,
            "host_to_device_bytes_per_s": self.host_to_device_bytes_per_s,
            "device_to_host_bytes_per_s": self.device_to_host_bytes_per_s,
            "transfer_latency_s": self.transfer_latency_s,
            "cores": self.cores,
            "operators": {op: {f: getattr(c, f) for f in _COST_FIELDS} for op, c in self.operators.items()},
        }
        if self.notes:
            doc["_notes"] = dict(self.notes)
        return json.dumps(doc, indent=2) + "\n"

    @staticmethod
    def from_json(text: str, path: str | None = None) -> DeviceProfile:
        """Parse and validate a profile; errors name the file and the field."""
        where = f"device profile {path}" if path else "device profile"
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            raise ConfigurationError(f"{where}: not valid JSON (line {e.lineno}, column {e.colno}): {e.msg}") from e
        if not isinstance(doc, dict):
            raise ConfigurationError(f"{where}: expected a JSON object, got {type(doc).__name__}")
        return _parse_profile(doc, where)


_TOP_FIELDS = ("name", "kind", "source", "memory_bytes", "launch_overhead_s", "host_to_device_bytes_per_s",
               "device_to_host_bytes_per_s", "transfer_latency_s", "operators")
_OPTIONAL_FIELDS = ("cores",)


def _parse_profile(doc: dict, where: str) -> DeviceProfile:
    unknown = [k for k in doc if k not in _TOP_FIELDS + _OPTIONAL_FIELDS and not k.startswith("_")]
    if unknown:
        raise ConfigurationError(f"{where}: unknown field '{unknown[0]}'; fields: {', '.join(_TOP_FIELDS)} "
                                 "(and '_'-prefixed comments such as '_notes')")
    missing = [k for k in _TOP_FIELDS if k not in doc]
    if missing:
        raise ConfigurationError(f"{where}: missing field '{missing[0]}'; a profile needs {', '.join(_TOP_FIELDS)}")
    for key in ("name", "source"):
        if not isinstance(doc[key], str) or not doc[key]:
            raise ConfigurationError(f"{where}: field '{key}' must be a non-empty string, got {doc[key]!r}")
    if doc["kind"] not in KINDS:
        raise ConfigurationError(f"{where}: field 'kind' is {doc['kind']!r}; valid kinds: {', '.join(KINDS)}")
    memory = _number(doc["memory_bytes"], "memory_bytes", where)
    if memory <= 0 or memory != int(memory):
        raise ConfigurationError(f"{where}: field 'memory_bytes' must be a positive whole number, got {memory}")
    link = {k: _number(doc[k], k, where) for k in ("launch_overhead_s", "host_to_device_bytes_per_s",
                                                   "device_to_host_bytes_per_s", "transfer_latency_s")}
    if doc["kind"] != "cpu":
        for k in ("host_to_device_bytes_per_s", "device_to_host_bytes_per_s"):
            if link[k] == 0:
                raise ConfigurationError(f"{where}: field '{k}' must be positive for a {doc['kind']} device")
    ops = doc["operators"]
    if not isinstance(ops, dict):
        raise ConfigurationError(f"{where}: field 'operators' must be an object of operator name -> costs")
    for op in ops:
        if op not in OPERATORS:
            raise ConfigurationError(f"{where}: unknown operator 'operators.{op}'; operators: {', '.join(OPERATORS)}")
    absent = [op for op in OPERATORS if op not in ops]
    if absent:
        raise ConfigurationError(f"{where}: missing field 'operators.{absent[0]}'; "
                                 f"a profile costs every operator: {', '.join(OPERATORS)}")
    notes = doc.get("_notes", {})
    cores = _number(doc.get("cores", 1), "cores", where)
    if cores < 1 or cores != int(cores):
        raise ConfigurationError(f"{where}: field 'cores' must be a whole number of at least 1, got {cores}")
    return DeviceProfile(
        name=doc["name"], kind=doc["kind"], memory_bytes=int(memory), operators={op: _parse_cost(ops[op], op, where)
                                                                                 for op in OPERATORS},
        source=doc["source"], notes=notes if isinstance(notes, dict) else {"text": notes}, cores=int(cores), **link)


def _parse_cost(entry: Any, op: str, where: str) -> OperatorCost:
    if not isinstance(entry, dict):
        raise ConfigurationError(f"{where}: field 'operators.{op}' must be an object with {', '.join(_COST_FIELDS)}")
    for k in entry:
        if k not in _COST_FIELDS:
            raise ConfigurationError(f"{where}: unknown field 'operators.{op}.{k}'; fields: {', '.join(_COST_FIELDS)}")
    for k in _REQUIRED_COST_FIELDS:
        if k not in entry:
            raise ConfigurationError(f"{where}: missing field 'operators.{op}.{k}'")
    return OperatorCost(**{k: _number(v, f"operators.{op}.{k}", where) for k, v in entry.items()})


def _number(value: Any, name: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigurationError(f"{where}: field '{name}' must be a number, got {value!r}")
    if not math.isfinite(value) or value < 0:
        raise ConfigurationError(f"{where}: field '{name}' must be a finite number >= 0, got {value!r}")
    return float(value)


def _profile_folder():
    return resources.files(_PROFILE_PACKAGE).joinpath(_PROFILE_FOLDER)


def shipped_profiles() -> list[str]:
    """Names of the profiles that ship with Quiver (`executors/profiles/<name>.json`)."""
    return sorted(p.name[:-len(".json")] for p in _profile_folder().iterdir() if p.name.endswith(".json"))


def load_profile(name_or_path: str) -> DeviceProfile:
    """A shipped profile by name (e.g. "nvidia-h200") or a profile JSON file by path."""
    shipped = shipped_profiles()
    if name_or_path in shipped:
        resource = _profile_folder().joinpath(f"{name_or_path}.json")
        return DeviceProfile.from_json(resource.read_text(encoding="utf-8"), path=str(resource))
    path = Path(name_or_path).expanduser()
    if not path.is_file():
        raise ConfigurationError(f"no device profile named '{name_or_path}' and no file at {path}; "
                                 f"shipped profiles: {', '.join(shipped)}")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigurationError(f"could not read device profile {path}: {e}") from e
    return DeviceProfile.from_json(text, path=str(path))
