"""Resource profiles, shaped like `pyspark.resource`: what the tasks of an operator ask for.

    profile = ResourceProfileBuilder().require(TaskResourceRequests().resource("gpu", 1)).build
    df.mapInArrow(fn, schema, profile=profile)

On one machine Quiver reads a profile for one thing: the accelerator kind its task requests
name ("gpu", "npu"), which pins the operator to that kind of device for placement. Executor
requests (cores, memory) are kept so a program can read them back, and otherwise ignored.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

from quiver.engine.core.errors import ConfigurationError

# Task resources a profile may name, and the device kinds among them.
DEVICE_RESOURCES = ("gpu", "npu")
TASK_RESOURCES = ("cpus",) + DEVICE_RESOURCES

_profile_ids = itertools.count(1)  # 0 is Spark's default profile


@dataclass(frozen=True)
class TaskResourceRequest:
    """An amount of one resource each task needs (`pyspark.resource.TaskResourceRequest`)."""

    resourceName: str
    amount: float = 1.0


@dataclass(frozen=True)
class ExecutorResourceRequest:
    """An amount of one resource each executor needs (`pyspark.resource.ExecutorResourceRequest`)."""

    resourceName: str
    amount: int = 1
    discoveryScript: str = ""
    vendor: str = ""


class TaskResourceRequests:
    """A builder of task resource requests: `TaskResourceRequests().cpus(1).resource("gpu", 1)`."""

    def __init__(self) -> None:
        self._requests: dict[str, TaskResourceRequest] = {}

    def cpus(self, amount: int) -> TaskResourceRequests:
        self._requests["cpus"] = TaskResourceRequest("cpus", amount)
        return self

    def resource(self, resourceName: str, amount: float) -> TaskResourceRequests:
        self._requests[resourceName] = TaskResourceRequest(resourceName, amount)
        return self

    @property
    def requests(self) -> dict[str, TaskResourceRequest]:
        return dict(self._requests)


class ExecutorResourceRequests:
    """A builder of executor resource requests (cores, memory, custom resources)."""

    def __init__(self) -> None:
        self._requests: dict[str, ExecutorResourceRequest] = {}

    def _set(self, name: str, amount: int | str) -> ExecutorResourceRequests:
        self._requests[name] = ExecutorResourceRequest(name, amount)  # type: ignore[arg-type]
        return self

    def cores(self, amount: int) -> ExecutorResourceRequests:
        return self._set("cores", amount)

    def memory(self, amount: str) -> ExecutorResourceRequests:
        return self._set("memory", amount)

    def memoryOverhead(self, amount: str) -> ExecutorResourceRequests:
        return self._set("memoryOverhead", amount)

    def pysparkMemory(self, amount: str) -> ExecutorResourceRequests:
        return self._set("pyspark.memory", amount)

    def offheapMemory(self, amount: str) -> ExecutorResourceRequests:
        return self._set("offHeap", amount)

    def resource(self, resourceName: str, amount: int, discoveryScript: str = "",
                 vendor: str = "") -> ExecutorResourceRequests:
        self._requests[resourceName] = ExecutorResourceRequest(resourceName, amount, discoveryScript, vendor)
        return self

    @property
    def requests(self) -> dict[str, ExecutorResourceRequest]:
        return dict(self._requests)


class ResourceProfile:
    """A built, immutable set of task and executor requests; `id` is unique per profile."""

    def __init__(self, task_requests: dict[str, TaskResourceRequest] | None = None,
                 executor_requests: dict[str, ExecutorResourceRequest] | None = None):
        self._task = dict(task_requests or {})
        self._executor = dict(executor_requests or {})
        self._id = next(_profile_ids)

    @property
    def id(self) -> int:
        return self._id

    @property
    def taskResources(self) -> dict[str, TaskResourceRequest]:
        return dict(self._task)

    @property
    def executorResources(self) -> dict[str, ExecutorResourceRequest]:
        return dict(self._executor)

    def __repr__(self) -> str:
        tasks = ", ".join(f"{r.resourceName}={r.amount:g}" for r in self._task.values())
        return f"ResourceProfile(id={self._id}, tasks: {tasks or 'default'})"


class ResourceProfileBuilder:
    """Collects requests with `require(...)`; `build` (a property, as in PySpark) makes the profile."""

    def __init__(self) -> None:
        self._task: dict[str, TaskResourceRequest] = {}
        self._executor: dict[str, ExecutorResourceRequest] = {}

    def require(self, resourceRequest: TaskResourceRequests | ExecutorResourceRequests,
                ) -> ResourceProfileBuilder:
        if isinstance(resourceRequest, TaskResourceRequests):
            self._task.update(resourceRequest.requests)
        elif isinstance(resourceRequest, ExecutorResourceRequests):
            self._executor.update(resourceRequest.requests)
        else:
            raise TypeError(f"require() takes TaskResourceRequests or ExecutorResourceRequests, "
                            f"got {type(resourceRequest).__name__}")
        return self

    def clearTaskResourceRequests(self) -> None:
        self._task.clear()

    def clearExecutorResourceRequests(self) -> None:
        self._executor.clear()

    @property
    def taskResources(self) -> dict[str, TaskResourceRequest]:
        return dict(self._task)

    @property
    def executorResources(self) -> dict[str, ExecutorResourceRequest]:
        return dict(self._executor)

    @property
    def build(self) -> ResourceProfile:
        return ResourceProfile(self._task, self._executor)


def requested_device(profile: ResourceProfile | None) -> str | None:
    """The accelerator kind ("gpu", "npu") the task requests of `profile` ask for; None for none."""
    if profile is None:
        return None
    if isinstance(profile, ResourceProfileBuilder):
        raise ConfigurationError("profile= takes a built ResourceProfile: add .build (a property, as in "
                                 "PySpark) after the ResourceProfileBuilder's require(...) calls")
    if not isinstance(profile, ResourceProfile):
        raise ConfigurationError(f"profile= takes a ResourceProfile from ResourceProfileBuilder().build, "
                                 f"got {type(profile).__name__}")
    wanted = []
    for name, request in profile.taskResources.items():
        if name not in TASK_RESOURCES:
            raise ConfigurationError(f"the resource profile asks each task for {request.amount:g} '{name}', which "
                                     f"Quiver cannot provide; task resources are: {', '.join(TASK_RESOURCES)}")
        if name in DEVICE_RESOURCES and request.amount > 0:
            wanted.append(name)
    if len(wanted) > 1:
        raise ConfigurationError(f"the resource profile asks each task for both {' and '.join(wanted)}; "
                                 "an operator runs on one kind of device, so request one of them")
    return wanted[0] if wanted else None


__all__ = [
    "ResourceProfile", "ResourceProfileBuilder", "TaskResourceRequest", "TaskResourceRequests",
    "ExecutorResourceRequest", "ExecutorResourceRequests", "requested_device",
]
