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

from quiver.executors.memory import MemoryManager, Reservation
from quiver.executors.spill import SpillFile, SpillSpace


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

    def put(self, block: BlockId, batches: list[pa.RecordBatch], on_disk: bool = False) -> None:
        """Keep `batches` as `block` (by reference where the store is in process); `on_disk`: straight to disk
        (a DISK_ONLY cache), where the store has one."""
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
    """Thread-safe store of lists of record batches: the `BlockStore` of `local[N]`.

    Blocks are held by reference. Once `attach_memory` gives it a budget, the store reserves each block's
    bytes from it; when a block does not fit, or another holder of the budget needs room, whole map outputs
    (oldest first) are written to spill files and read back from disk by `get`, a block at a time.
    """

    def __init__(self) -> None:
        self._blocks: dict[BlockId, list[pa.RecordBatch]] = {}
        self._spilled: dict[BlockId, SpillFile] = {}
        self._lock = threading.RLock()
        self._reservation: Reservation | None = None
        self._space: SpillSpace | None = None
        self.name = "block store"
        self.spilled_bytes = 0
        self.spill_count = 0

    def attach_memory(self, memory: MemoryManager, space: SpillSpace) -> None:
        """Hold blocks under `memory`'s budget, spilling them into `space` when it runs out."""
        with self._lock:
            if self._reservation is not None and self._reservation.manager is memory:
                return
            if self._reservation is not None:
                self._reservation.close()
            self._reservation = memory.reservation(self.name, spiller=self)
            self._reservation.grow(sum(_size(v) for v in self._blocks.values()))
            self._space = space

    def put(self, block: BlockId, batches: list[pa.RecordBatch], on_disk: bool = False) -> None:
        with self._lock:
            self._forget(block)
            reservation = self._reservation
        if on_disk and self._space is not None:
            self._write(block, batches)
            return
        nbytes = _size(batches)
        if reservation is None or reservation.try_grow(nbytes):
            with self._lock:
                self._blocks[block] = batches
            return
        # No room even after the other holders spilled: make room among our own blocks, else spill this one.
        self.spill(nbytes)
        if reservation.try_grow(nbytes):
            with self._lock:
                self._blocks[block] = batches
            return
        self._write(block, batches)

    def get(self, block: BlockId) -> list[pa.RecordBatch]:
        with self._lock:
            held = self._blocks.get(block)
            spilled = self._spilled.get(block) if held is None else None
        if held is not None:
            return held
        return spilled.read_all() if spilled is not None else []

    def contains(self, block: BlockId) -> bool:
        with self._lock:
            return block in self._blocks or block in self._spilled

    def blocks_of(self, namespace: str, stage: int) -> list[BlockId]:
        with self._lock:
            return sorted((b for b in (*self._blocks, *self._spilled) if b.namespace == namespace and b.stage == stage),
                          key=lambda b: (b.map_partition, b.reduce_partition))

    def drop_namespace(self, namespace: str) -> None:
        with self._lock:
            for b in [b for b in (*self._blocks, *self._spilled) if b.namespace == namespace]:
                self._forget(b)

    def drop(self, blocks: Iterable[BlockId]) -> None:
        with self._lock:
            for b in blocks:
                self._forget(b)

    def nbytes(self, namespace: str | None = None) -> int:
        """Bytes held in memory (spilled blocks are in `spilled_bytes`)."""
        with self._lock:
            return sum(_size(v) for k, v in self._blocks.items() if namespace is None or k.namespace == namespace)

    def spill(self, nbytes: int) -> int:
        """Write held blocks to spill files, whole map outputs and oldest first, until `nbytes` are freed."""
        freed = 0
        with self._lock:
            if self._space is None:
                return 0
            groups: dict[tuple[str, int, int], list[BlockId]] = {}
            for b in self._blocks:
                groups.setdefault((b.namespace, b.stage, b.map_partition), []).append(b)
            for group in groups.values():
                if freed >= nbytes:
                    break
                for b in group:
                    batches = self._blocks.pop(b)
                    size = _size(batches)
                    self._write(b, batches)
                    if self._reservation is not None:
                        self._reservation.shrink(size)
                    freed += size
        return freed

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {"held_bytes": sum(_size(v) for v in self._blocks.values()), "spilled_bytes": self.spilled_bytes,
                    "spills": self.spill_count, "spilled_blocks": len(self._spilled)}

    def _write(self, block: BlockId, batches: list[pa.RecordBatch]) -> None:
        batches = [b for b in batches if b.num_rows]
        if not batches:
            with self._lock:
                self._blocks[block] = []
            return
        assert self._space is not None
        spilled = self._space.write(batches[0].schema, batches, label=f"block-{block.stage}-{block.map_partition}")
        with self._lock:
            self._spilled[block] = spilled
            self.spilled_bytes += spilled.nbytes
            self.spill_count += 1
        if self._reservation is not None:
            self._reservation.manager.record_spill(spilled.nbytes)

    def _forget(self, block: BlockId) -> None:
        held = self._blocks.pop(block, None)
        if held is not None and self._reservation is not None:
            self._reservation.shrink(_size(held))
        spilled = self._spilled.pop(block, None)
        if spilled is not None:
            spilled.delete()


def _size(batches: list[pa.RecordBatch]) -> int:
    return sum(b.nbytes for b in batches)
