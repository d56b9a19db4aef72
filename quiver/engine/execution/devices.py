"""The devices a session may place operators on: `quiver.devices`, their executors and cost profiles.

`quiver.devices` lists devices as `kind[:index][:emulated]`, e.g. `cpu,gpu`, `cpu,gpu:emulated`,
`cpu,npu:0:emulated`; the CPU is always there. `quiver.profile.<kind>` names the cost profile
each kind is charged (a shipped name such as `nvidia-h200`, or a JSON file from `quiver calibrate`).
"""
from __future__ import annotations

from quiver.engine.core.conf import DeviceSpec, parse_devices
from quiver.engine.core.errors import ConfigurationError
from quiver.executors.base import Device
from quiver.executors.cpu.executor import CpuExecutor
from quiver.executors.device.gpu import GpuExecutor
from quiver.executors.device.npu import NpuExecutor
from quiver.planners.cost import load_profile
from quiver.planners.placement import Candidate

DEFAULT_PROFILES = {"cpu": "cpu-generic", "gpu": "nvidia-h200", "npu": "ascend-910b"}



class DeviceSet:
    """The executors and placement candidates of the configured devices, opened once per configuration."""

    def __init__(self, cpu: CpuExecutor):
        self.cpu = cpu
        self._opened: dict[tuple, list[Candidate]] = {}

    def candidates(self, devices: str, profiles: dict[str, str]) -> list[Candidate]:
        """Placement candidates (the CPU first) for `quiver.devices` and the per-kind profile names."""
        key = (str(devices), tuple(sorted(profiles.items())))
        if key not in self._opened:
            self._opened[key] = [self._candidate(spec, profiles) for spec in parse_devices(devices)]
        return self._opened[key]

    def opened(self) -> list[list[Candidate]]:
        """Every configuration's candidates opened so far."""
        return list(self._opened.values())

    def _candidate(self, spec: DeviceSpec, profiles: dict[str, str]) -> Candidate:
        profile = load_profile(profiles.get(spec.kind) or DEFAULT_PROFILES[spec.kind])
        if profile.kind != spec.kind:
            raise ConfigurationError(
                f"quiver.profile.{spec.kind} names profile {profile.name!r}, which describes a {profile.kind}, "
                f"not a {spec.kind}")
        if spec.kind == "cpu":
            return Candidate(Device("cpu", 0), profile, self.cpu.unsupported, self.cpu)
        if spec.kind == "gpu":
            executor = GpuExecutor.open(spec.index, spec.emulated, profile.memory_bytes)
        else:
            executor = NpuExecutor.open(spec.index, spec.emulated, profile.memory_bytes)
        return Candidate(executor.device, profile, executor.unsupported, executor)


__all__ = ["DEFAULT_PROFILES", "DeviceSet", "DeviceSpec", "parse_devices"]
