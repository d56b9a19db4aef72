"""One colour per kind of device, shared by every picture Quiver draws (plan graphs, job reports, progress).

The palette is Tableau 10's first three, which stay distinct for the common forms of colour
blindness; an emulated device keeps its kind's colour and is marked in the picture instead.
"""
from __future__ import annotations

DEVICE_COLOURS: dict[str, str] = {"cpu": "#4C78A8", "gpu": "#54A24B", "npu": "#F58518"}
FAILED_COLOUR = "#E45756"


def device_kind(label: str) -> str:
    """The kind of a device label such as "gpu:0 (emulated)" or "cpu:0": "cpu", "gpu" or "npu"."""
    kind = label.strip().split(":", 1)[0].lower()
    return kind if kind in DEVICE_COLOURS else "cpu"


def task_kind(devices: tuple[str, ...]) -> str:
    """The device kind a task is drawn as: an accelerator where any operator ran on one, else the CPU."""
    kinds = {device_kind(d) for d in devices}
    return next((k for k in ("gpu", "npu") if k in kinds), "cpu")
