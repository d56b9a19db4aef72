"""The block store seam: Arrow record batches held by reference, keyed by block id.

Within one process a block is the producer's batches themselves (zero-copy). Shuffle,
broadcast and cache blocks all live here; a job frees its shuffle blocks when it ends.
"""
from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

import pyarrow as pa


@dataclass(frozen=True)
class BlockId:
    """`namespace` separates shuffle blocks of a job from cached blocks; map/reduce index the block."""

    namespace: str
    stage: int
    map_partition: int
    reduce_partition: int


class BlockReader(Protocol):
    """What a running task reads its input blocks through."""

    def get(self, block: BlockId) -> list[pa.RecordBatch]:
        """The batches of `block`; an empty list for a block that holds none."""
        ...


class BlockStore(BlockReader, Protocol):
    """Where a runtime keeps the blocks tasks write: in this process, or in Ray's object store."""

    def put(self, block: BlockId, batches: list[pa.RecordBatch]) -> None:
        """Keep `batches` as `block` (by reference where the store is in process)."""
        ...

    def contains(self, block: BlockId) -> bool:
        """Whether `block` is held."""
        ...

    def blocks_of(self, namespace: str, stage: int) -> list[BlockId]:
        """The blocks one stage of a namespace wrote, by map then reduce partition."""
        ...

    def drop(self, blocks: Iterable[BlockId]) -> None:
        """Forget `blocks` (missing ones are ignored)."""
        ...

    def drop_namespace(self, namespace: str) -> None:
        """Forget every block of `namespace` (a job's shuffle blocks when it ends)."""
        ...

    def nbytes(self, namespace: str | None = None) -> int:
        """Bytes held, in all or in one namespace."""
        ...


class InProcessBlockStore:
    """Thread-safe in-memory store of lists of record batches: the `BlockStore` of `local[N]`."""

    def __init__(self) -> None:
        self._blocks: dict[BlockId, list[pa.RecordBatch]] = {}
        self._lock = threading.Lock()

    def put(self, block: BlockId, batches: list[pa.RecordBatch]) -> None:
        with self._lock:
            self._blocks[block] = batches

    def get(self, block: BlockId) -> list[pa.RecordBatch]:
        with self._lock:
            return self._blocks.get(block, [])

    def contains(self, block: BlockId) -> bool:
        with self._lock:
            return block in self._blocks

    def blocks_of(self, namespace: str, stage: int) -> list[BlockId]:
        with self._lock:
            return sorted((b for b in self._blocks if b.namespace == namespace and b.stage == stage),
                          key=lambda b: (b.map_partition, b.reduce_partition))

    def drop_namespace(self, namespace: str) -> None:
        with self._lock:
            for b in [b for b in self._blocks if b.namespace == namespace]:
                del self._blocks[b]

    def drop(self, blocks: Iterable[BlockId]) -> None:
        with self._lock:
            for b in blocks:
                self._blocks.pop(b, None)

    def nbytes(self, namespace: str | None = None) -> int:
        with self._lock:
            return sum(sum(x.nbytes for x in v) for k, v in self._blocks.items()
                       if namespace is None or k.namespace == namespace)
