"""Device-generic kernels: written once against the array API, run on numpy, CuPy or torch."""
from quiver.executors.device.kernels.columns import (
    DeviceBatch,
    DeviceColumn,
    column_to_arrow,
    column_to_device,
    device_nbytes,
    device_type_supported,
    to_arrow,
    to_device,
    unify_dictionaries,
)
from quiver.executors.device.kernels.expressions import evaluate, unsupported_reason
from quiver.executors.device.kernels.filter import filter_batch, take_batch, take_column
from quiver.executors.device.kernels.groupby import (
    REDUCTIONS,
    group_by,
    key_codes,
    segment_reduce,
)
from quiver.executors.device.kernels.join import JOIN_TYPES, join_indices
from quiver.executors.device.kernels.partition import hash_partition_ids
from quiver.executors.device.kernels.sort import sort_indices, top_k_indices

__all__ = [
    "JOIN_TYPES",
    "REDUCTIONS",
    "DeviceBatch",
    "DeviceColumn",
    "column_to_arrow",
    "column_to_device",
    "device_nbytes",
    "device_type_supported",
    "evaluate",
    "filter_batch",
    "group_by",
    "hash_partition_ids",
    "join_indices",
    "key_codes",
    "segment_reduce",
    "sort_indices",
    "take_batch",
    "take_column",
    "to_arrow",
    "to_device",
    "top_k_indices",
    "unify_dictionaries",
    "unsupported_reason",
]
