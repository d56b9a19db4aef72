"""Ray workers killed at random (tests/chaos/scenarios.py `ray_worker_kills`): map and reduce tasks SIGKILL
the Ray worker running them, up to five times each, on a local Ray. Jobs whose tasks die fewer times
than `spark.task.maxFailures` give the exact answer; a job with a task killed that often fails with
`TaskFailedError` naming the task."""
from __future__ import annotations

import os

import pytest

pytest.importorskip("ray")

from tests.chaos.scenarios import chaos_session, ray_worker_kills

# One job a seed: 6 and 28 survive their kills, 18 has a task killed as often as maxFailures allows.
SEEDS = [6, 18, 28]


@pytest.fixture(scope="module")
def spark():
    with chaos_session({"quiver.master": "ray"}) as session:
        yield session


@pytest.mark.parametrize("seed", SEEDS)
def test_killed_ray_workers_give_the_exact_answer_or_a_named_failure(spark, tmp_path, seed):
    tally = ray_worker_kills(seed, spark, str(tmp_path), jobs=1)
    assert tally.defects == []
    assert tally.jobs == tally.right + tally.named
    assert tally.faults > 0 and len(os.listdir(tmp_path)) == 1


def test_the_seeds_cover_both_outcomes():
    import random

    from tests.chaos.scenarios import kill_plan

    worst = [max(kill_plan(random.Random(seed), 3).values()) for seed in SEEDS]
    assert min(worst) < 4 <= max(worst)
