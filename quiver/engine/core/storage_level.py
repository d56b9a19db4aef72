"""`StorageLevel`: where a cached DataFrame's partitions live, with PySpark's names; `DataFrame.persist`
and SQL's `CACHE TABLE ... OPTIONS ('storageLevel' ...)` take one, the cache keeps and reports it."""
from __future__ import annotations

from typing import ClassVar


class StorageLevel:
    """Where cached partitions live (PySpark's names)."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"StorageLevel.{self.name}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StorageLevel) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    # set below, one per level
    NONE: ClassVar[StorageLevel]
    MEMORY_ONLY: ClassVar[StorageLevel]
    MEMORY_AND_DISK: ClassVar[StorageLevel]
    DISK_ONLY: ClassVar[StorageLevel]
    MEMORY_ONLY_2: ClassVar[StorageLevel]
    MEMORY_AND_DISK_2: ClassVar[StorageLevel]
    OFF_HEAP: ClassVar[StorageLevel]
    MEMORY_AND_DISK_DESER: ClassVar[StorageLevel]


# PySpark's levels, by name.
STORAGE_LEVEL_NAMES = ("NONE", "MEMORY_ONLY", "MEMORY_AND_DISK", "DISK_ONLY", "MEMORY_ONLY_2", "MEMORY_AND_DISK_2",
                       "OFF_HEAP", "MEMORY_AND_DISK_DESER")

for _level in STORAGE_LEVEL_NAMES:
    setattr(StorageLevel, _level, StorageLevel(_level))


__all__ = ["StorageLevel", "STORAGE_LEVEL_NAMES"]
