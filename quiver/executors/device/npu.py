"""The NPU executor: the device-generic kernels on torch tensors of an `npu` device (Huawei's
`torch_npu` plug-in), on another torch device, or on numpy for an emulated NPU.

The kernels create arrays with `xp.asarray`, `xp.zeros`, ...; for torch those default to the
CPU, so the namespace is wrapped to put every new tensor on the executor's device.
"""
from __future__ import annotations

import functools
from typing import Any

from quiver.engine.core.errors import ConfigurationError
from quiver.executors.base import Device
from quiver.executors.device.array_executor import ArrayExecutor, numpy_namespace

_CREATION = ("asarray", "zeros", "ones", "full", "empty", "arange", "zeros_like", "ones_like", "full_like",
             "empty_like", "eye", "linspace")


class DeviceNamespace:
    """An array namespace whose creation functions default to one torch device."""

    def __init__(self, xp: Any, device: Any):
        self._xp = xp
        self._device = device

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._xp, name)
        if name in _CREATION and callable(value):
            @functools.wraps(value)
            def on_device(*args: Any, **kwargs: Any) -> Any:
                kwargs.setdefault("device", self._device)
                return value(*args, **kwargs)
            return on_device
        return value


class NpuExecutor(ArrayExecutor):
    """Runs operators on one NPU through torch (or emulated with numpy)."""

    @classmethod
    def open(cls, index: int = 0, emulated: bool = False, memory_bytes: int | None = None) -> NpuExecutor:
        if emulated:
            return cls(Device("npu", index, memory_bytes, emulated=True), numpy_namespace())
        try:
            import array_api_compat.torch as torch_namespace
            import torch
            import torch_npu  # noqa: F401 — registers the "npu" device with torch
        except ImportError as exc:
            raise ConfigurationError(
                f"quiver.devices names npu:{index} but torch with the torch_npu plug-in is not installed; "
                "use npu:emulated to run the NPU kernels with numpy") from exc
        if not torch.npu.is_available() or index >= torch.npu.device_count():
            raise ConfigurationError(
                f"quiver.devices names npu:{index} but torch_npu finds no such device; use npu:emulated")
        device = torch.device(f"npu:{index}")
        total = torch.npu.get_device_properties(index).total_memory
        executor = cls(Device("npu", index, total), DeviceNamespace(torch_namespace, device))
        executor.out_of_memory_errors = (MemoryError, torch.OutOfMemoryError)
        return executor

    def free_bytes(self) -> int | None:
        """The NPU's free memory now, with what torch's caching allocator holds reserved but unused."""
        if self.device.emulated:
            return super().free_bytes()
        import torch

        free, _ = torch.npu.mem_get_info(self.device.index)
        unused = torch.npu.memory_reserved(self.device.index) - torch.npu.memory_allocated(self.device.index)
        return int(free + max(0, unused))


__all__ = ["DeviceNamespace", "NpuExecutor"]

