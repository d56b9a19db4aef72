"""The in-process block store under a memory budget: blocks spill to disk and read back the same."""
from __future__ import annotations

import os

import pyarrow as pa

from quiver.executors.blocks import BlockId, InProcessBlockStore
from quiver.executors.memory import MemoryManager
from quiver.executors.spill import SpillFolder


def block(n: int, offset: int = 0) -> list[pa.RecordBatch]:
    return [pa.RecordBatch.from_pydict({"x": list(range(offset, offset + n))})]


def test_blocks_past_the_budget_go_to_disk_and_read_back_the_same(tmp_path):
    store = InProcessBlockStore()
    manager = MemoryManager(20_000)
    space = SpillFolder(str(tmp_path)).space("blocks")
    store.attach_memory(manager, space)
    ids = [BlockId("job1", 0, m, 0) for m in range(5)]
    for m, b in enumerate(ids):
        store.put(b, block(1000, m * 1000))  # 8 KB each
    stats = store.stats()
    assert stats["spilled_blocks"] >= 3 and stats["held_bytes"] <= 20_000 and manager.used <= 20_000
    for m, b in enumerate(ids):
        assert pa.Table.from_batches(store.get(b)).column("x").to_pylist() == list(range(m * 1000, m * 1000 + 1000))
    assert store.blocks_of("job1", 0) == ids
    files = os.listdir(space.path)
    store.drop_namespace("job1")
    assert os.listdir(space.path) == [] and files and manager.used == 0


def test_another_holder_needing_room_makes_the_store_spill(tmp_path):
    store = InProcessBlockStore()
    manager = MemoryManager(50_000)
    store.attach_memory(manager, SpillFolder(str(tmp_path)).space("blocks"))
    store.put(BlockId("cache", 1, 0, 0), block(4000))
    assert store.stats()["spilled_blocks"] == 0
    operator = manager.reservation("HashJoin")
    assert operator.try_grow(40_000)
    assert store.stats()["spilled_blocks"] == 1 and store.nbytes() == 0
    assert pa.Table.from_batches(store.get(BlockId("cache", 1, 0, 0))).num_rows == 4000


def test_a_disk_only_block_is_written_straight_to_disk(tmp_path):
    store = InProcessBlockStore()
    store.attach_memory(MemoryManager(1 << 30), SpillFolder(str(tmp_path)).space("blocks"))
    store.put(BlockId("cache", 2, 0, 0), block(10), on_disk=True)
    assert store.nbytes() == 0 and store.stats()["spilled_blocks"] == 1
    assert store.contains(BlockId("cache", 2, 0, 0))
    assert pa.Table.from_batches(store.get(BlockId("cache", 2, 0, 0))).num_rows == 10
