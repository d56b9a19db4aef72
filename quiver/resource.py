"""`quiver.resource`: the same names as `pyspark.resource`, for profiles such as
`ResourceProfileBuilder().require(TaskResourceRequests().resource("gpu", 1)).build`."""
from quiver.engine.core.resources import (  # noqa: F401
    ExecutorResourceRequest,
    ExecutorResourceRequests,
    ResourceProfile,
    ResourceProfileBuilder,
    TaskResourceRequest,
    TaskResourceRequests,
)

__all__ = [
    "ExecutorResourceRequest", "ExecutorResourceRequests", "ResourceProfile", "ResourceProfileBuilder",
    "TaskResourceRequest", "TaskResourceRequests",
]
