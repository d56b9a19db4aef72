"""The NPU executor: torch creation functions put new tensors on the executor's device; emulated without torch_npu."""
from __future__ import annotations

import array_api_compat.numpy as xp
import pytest

from quiver.engine.core.errors import ConfigurationError
from quiver.executors.device.npu import DeviceNamespace, NpuExecutor


class Recorder:
    """A namespace that records the device each creation function was called with."""

    def __init__(self):
        self.calls = []

    def asarray(self, value, device=None):
        self.calls.append(("asarray", device))
        return xp.asarray(value)

    def zeros(self, shape, dtype=None, device=None):
        self.calls.append(("zeros", device))
        return xp.zeros(shape, dtype=dtype)

    def take(self, x, indices):
        self.calls.append(("take", None))
        return xp.take(x, indices)


def test_creation_functions_default_to_the_executors_device():
    inner = Recorder()
    ns = DeviceNamespace(inner, "npu:3")
    ns.asarray([1, 2])
    ns.zeros(4, dtype=xp.int64)
    ns.asarray([1], device="cpu")  # an explicit device is kept
    ns.take(xp.asarray([5, 6]), xp.asarray([1]))  # not a creation function: passed through untouched
    assert inner.calls == [("asarray", "npu:3"), ("zeros", "npu:3"), ("asarray", "cpu"), ("take", None)]


def test_an_emulated_npu_runs_on_numpy_and_says_so():
    executor = NpuExecutor.open(emulated=True, memory_bytes=1 << 30)
    assert str(executor.device) == "npu:0 (emulated)" and executor.device.memory_bytes == 1 << 30


def test_a_real_npu_without_torch_npu_names_what_is_missing():
    pytest.importorskip("numpy")
    try:
        import torch_npu  # noqa: F401
        pytest.skip("torch_npu is installed here")
    except ImportError:
        pass
    with pytest.raises(ConfigurationError, match="npu:emulated"):
        NpuExecutor.open(0)
