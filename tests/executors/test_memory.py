"""The process memory budget: reservations, spilling other holders to make room, the default budget."""
from __future__ import annotations

import pytest

from quiver.executors import memory
from quiver.executors.memory import MemoryManager, MemorySettings, process_memory


class Holder:
    """A spillable holder that frees what it is asked for, up to what it holds."""

    def __init__(self, manager: MemoryManager, name: str, nbytes: int):
        self.name = name
        self.reservation = manager.reservation(name, spiller=self)
        assert self.reservation.try_grow(nbytes)
        self.asked: list[int] = []

    def spill(self, nbytes: int) -> int:
        self.asked.append(nbytes)
        freed = min(nbytes, self.reservation.held)
        self.reservation.shrink(freed)
        return freed


def test_a_reservation_grows_until_the_budget_and_is_refused_past_it():
    manager = MemoryManager(1000)
    r = manager.reservation("op")
    assert r.try_grow(600) and r.try_grow(400)
    assert not r.try_grow(1)
    assert r.held == 1000 and manager.used == 1000
    r.shrink(300)
    assert r.try_grow(300)
    r.close()
    assert manager.used == 0


def test_a_reservation_that_does_not_fit_spills_the_largest_other_holder_first():
    manager = MemoryManager(1000)
    small, large = Holder(manager, "small", 200), Holder(manager, "large", 700)
    op = manager.reservation("op")
    assert op.try_grow(400)
    assert large.asked == [300] and small.asked == []
    assert manager.used == 1000


def test_a_holder_that_cannot_spill_enough_leaves_the_reservation_refused():
    manager = MemoryManager(1000)
    fixed = manager.reservation("fixed")
    fixed.grow(900)
    op = manager.reservation("op")
    assert not op.try_grow(200) and op.held == 0
    # grow() counts memory already taken, even past the budget, so others spill for it
    op.grow(200)
    assert manager.used == 1100


def test_the_default_budget_is_a_fraction_of_the_cgroup_limit_when_one_is_set(monkeypatch, tmp_path):
    limit = tmp_path / "memory.max"
    limit.write_text("3221225472\n")
    monkeypatch.setattr(memory, "_own_cgroup_files", lambda: [str(limit)])
    monkeypatch.setattr(memory, "CGROUP_LIMIT_FILES", ())
    assert memory.cgroup_memory_limit() == 3 << 30
    reserved = memory.RESERVED_BYTES
    assert MemorySettings(fraction=0.5).budget() == (min(memory.physical_memory(), 3 << 30) - reserved) // 2
    limit.write_text("max\n")
    assert memory.cgroup_memory_limit() is None
    assert MemorySettings(fraction=0.5).budget() == (memory.physical_memory() - reserved) // 2
    assert MemorySettings(limit=12345).budget() == 12345


def test_a_small_process_reserves_half_of_what_it_has(monkeypatch):
    monkeypatch.setattr(memory, "available_memory", lambda: 400 << 20)
    assert MemorySettings(fraction=0.5).budget() == (200 << 20) // 2


def test_tasks_of_one_process_share_one_manager_per_budget():
    assert process_memory(MemorySettings(limit=5 << 20)) is process_memory(MemorySettings(limit=5 << 20))
    assert process_memory(MemorySettings(limit=5 << 20)) is not process_memory(MemorySettings(limit=6 << 20))


def test_a_budget_must_be_positive():
    with pytest.raises(ValueError, match="positive"):
        MemoryManager(0)


def test_a_ray_worker_budgets_its_cpus_share_of_the_node_or_the_memory_ray_gave_its_task(monkeypatch):
    monkeypatch.setattr(memory, "available_memory", lambda: 8 << 30)
    settings = MemorySettings(fraction=0.5)
    whole = settings.budget()
    assert whole == ((8 << 30) - memory.RESERVED_BYTES) // 2
    quarter = settings.for_worker({"CPU": 1.0}, node_cpus=4)
    assert quarter.budget() == ((2 << 30) - memory.RESERVED_BYTES) // 2
    assert settings.for_worker({"CPU": 8.0}, node_cpus=4).budget() == whole  # never more than the node
    assert settings.for_worker({"CPU": 0.0}, node_cpus=4).budget() == quarter.budget()  # a zero-CPU task: one slot
    assert settings.for_worker({"CPU": 1.0, "memory": 1 << 30}, node_cpus=4).budget() == (1 << 30) // 2
    assert MemorySettings(limit=12345).for_worker({"CPU": 1.0}, node_cpus=4).budget() == 12345


def test_spark_driver_and_executor_memory_say_what_a_process_may_use(monkeypatch):
    """As in Spark, the budget is (memory - 300 MiB) * spark.memory.fraction, with spark.driver.memory the
    session's process's memory and spark.executor.memory each Ray worker's, in place of what is discovered."""
    monkeypatch.setattr(memory, "available_memory", lambda: 64 << 30)
    settings = MemorySettings(fraction=0.6, available=4 << 30, worker_available=2 << 30)
    assert settings.budget() == int(((4 << 30) - memory.RESERVED_BYTES) * 0.6)
    assert settings.for_worker({"CPU": 1.0}, node_cpus=8).budget() == int(((2 << 30) - memory.RESERVED_BYTES) * 0.6)


def test_a_sessions_conf_sets_its_memory_settings(spark):
    from quiver.engine.core.errors import ConfigurationError

    context = spark._context
    spark.conf.set("spark.driver.memory", "3g")
    spark.conf.set("spark.executor.memory", "1g")
    try:
        settings = context.memory_settings()
        assert (settings.available, settings.worker_available) == (3 << 30, 1 << 30)
        assert spark.conf.get("quiver.driver.memory") == "3g"
        with pytest.raises(ConfigurationError, match="spark.driver.memory"):
            spark.conf.set("spark.driver.memory", "lots")
    finally:
        spark.conf.unset("spark.driver.memory")
        spark.conf.unset("spark.executor.memory")
    assert context.memory_settings().available is None
