"""benchmarks.tpch.run: pooling an engine's rounds (`--rounds`) keeps every timed run and every failure."""
from __future__ import annotations

from benchmarks.tpch.run import EngineRun, merge_rounds


def _run(queries: dict, status: str = "ok", startup: float = 0.5, peak: int = 10) -> EngineRun:
    return EngineRun("quiver", status=status, startup_s=startup, starts=1, queries=queries,
                     hwm_total=peak, sampled_peak=peak, wall_s=2.0)


def test_rounds_pool_runs_keep_failures_and_the_worst_memory():
    first = _run({1: {"query": 1, "times": [1.0, 1.2, 1.1], "median": 1.1},
                  2: {"query": 2, "times": [3.0], "median": 3.0}})
    second = _run({1: {"query": 1, "times": [0.4, 0.5, 0.6], "median": 0.5},
                   2: {"query": 2, "error": "timed out"}}, status="partial", startup=0.7, peak=30)
    merged = merge_rounds(merge_rounds(None, first), second)
    assert merged.queries[1]["times"] == [1.0, 1.2, 1.1, 0.4, 0.5, 0.6]
    assert merged.seconds(1) == 0.8  # median of the six pooled runs
    assert merged.queries[2]["error"] == "timed out"
    assert merged.status == "partial"
    assert (merged.startup_s, merged.hwm_total, merged.sampled_peak, merged.starts, merged.rounds, merged.wall_s) == \
        (0.7, 30, 30, 2, 2, 4.0)
