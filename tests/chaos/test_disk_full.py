"""A full disk during a write (tests/chaos/scenarios.py `disk_full`): writes of random sizes to a 4 MiB
tmpfs made for the test (needs root, as CI has). Each write that fits commits whole; each that does
not fails at once with `StorageFullError` naming the path, leaves the old output as it was, and frees
what its attempts wrote."""
from __future__ import annotations

import pytest

from quiver.engine.core.errors import StorageFullError
from tests.chaos.scenarios import can_mount, chaos_session, disk_full, generation_frame, small_filesystem

SEEDS = [5, 8, 13]

why_not = can_mount()
pytestmark = pytest.mark.skipif(why_not is not None, reason=why_not or "")


@pytest.fixture(scope="module")
def spark():
    with chaos_session({"quiver.master": "local[2]"}) as session:
        yield session


@pytest.mark.parametrize("seed", SEEDS)
def test_a_full_disk_fails_naming_the_path_and_keeps_the_old_output(spark, seed):
    with small_filesystem(4) as mount:
        tally = disk_full(seed, spark, mount)
    assert tally.defects == [] and tally.partial == 0 and tally.rows_lost == 0
    assert tally.jobs == tally.right + tally.named
    assert tally.faults > 0 and tally.right > 0, "the seed's writes both fill the disk and fit"


def test_a_full_disk_is_not_retried_and_says_how_much_space_is_free(spark, caplog):
    with small_filesystem(1) as mount:
        path = f"{mount}/out"
        generation_frame(spark, 1, 10, 1).write.parquet(path)
        with pytest.raises(StorageFullError, match=rf"No space left on the device writing file:{path} "
                                                   r"\([\d,]+ bytes free on its file system\).*holds what it held"):
            generation_frame(spark, 2, 100_000, 2, payload=40).write.mode("overwrite").parquet(path)
        assert not any("attempt 2/" in r.getMessage() for r in caplog.records), "a full disk is not retried"
        assert sorted(r.gen for r in spark.read.parquet(path).collect()) == [1] * 10
