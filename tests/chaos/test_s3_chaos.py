"""Object-store faults at random (tests/chaos/scenarios.py `s3_faults`): writes and reads of s3:// paths
through a proxy that answers HTTP 500, 503, SlowDown, resets connections, truncates answers and stalls,
at rates up to 95%. Each job succeeds with the right rows or fails naming the object; a fresh reader
never sees part of a write."""
from __future__ import annotations

import pytest

from tests.chaos.scenarios import chaos_session, s3_faults

SEEDS = [3, 14]
# Lower than the benchmark's: each fault costs the SDK's backoff, and the suite runs at every `make test`.
RATES = (0.02, 0.05, 0.1, 0.7)


@pytest.fixture(scope="module")
def spark():
    conf = {"quiver.master": "local[2]", "quiver.s3.maxAttempts": 4, "spark.task.maxFailures": 2}
    with chaos_session(conf) as session:
        yield session


@pytest.mark.parametrize("seed", SEEDS)
def test_s3_faults_give_the_right_rows_or_an_error_naming_the_object(spark, s3_stage, seed):
    tally = s3_faults(seed, spark, s3_stage, jobs=3, rates=RATES)
    assert tally.defects == [] and tally.partial == 0 and tally.rows_lost == 0
    assert tally.faults > 0, "the proxy injected faults"
    assert tally.jobs == tally.right + tally.named
