"""Faults injected at random into Quiver's jobs, over many seeds: how many jobs survived, how many failed
naming what failed, and whether any reader ever saw a partial or mixed output or lost a row.

    python -m benchmarks.chaos --seeds 10

runs each scenario of `tests/chaos/scenarios.py` (S3 errors through the fault proxy in front of moto,
a full tmpfs, SIGKILLed Ray workers, the writing process killed inside a commit, locally and on S3)
on seeds 1..N and prints one row per scenario, as Markdown for `benchmarks/RESULTS.md`. The test
suite runs the same scenarios on a few fixed seeds; this runs as many as asked, with the S3 fault
rates the suite lowers to stay quick. Exits non-zero if any job gave a wrong answer or an unnamed
error, or any reader saw a partial output.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack

from quiver.connectors.object_store import bind_settings
from tests.chaos.scenarios import (
    S3Stage,
    Tally,
    can_mount,
    chaos_session,
    commit_kills,
    disk_full,
    ray_worker_kills,
    s3_faults,
    small_filesystem,
)
from tests.connectors.fault_writer import FaultWriter
from tests.connectors.s3_proxy import fault_proxy
from tests.connectors.s3_server import client, moto_server, s3_environment

BUCKET = "quiver-chaos-bench"
SCENARIOS = ("s3", "disk", "ray", "commit-local", "commit-s3")
LABELS = {"s3": "S3 errors (500, 503, SlowDown, reset, truncated, stall)", "disk": "disk full (4 MiB tmpfs)",
          "ray": "Ray workers SIGKILLed (map and reduce)", "commit-local": "driver killed in a commit (local)",
          "commit-s3": "driver killed in a commit (S3)"}


def run(seeds: list[int], scenarios: tuple[str, ...], say: Callable[[str], None]) -> list[tuple[Tally, float]]:
    """Each scenario over every seed; (the summed tally, seconds) per scenario."""
    results: list[tuple[Tally, float]] = []
    with ExitStack() as stack:
        moto_url = stack.enter_context(moto_server())
        client(moto_url).create_bucket(Bucket=BUCKET)
        env = s3_environment(moto_url)
        writer = FaultWriter()
        stack.callback(writer.close)

        def over_seeds(name: str, one: Callable[[int], Tally]) -> None:
            total, started = Tally(LABELS[name]), time.monotonic()
            for seed in seeds:
                tally = one(seed)
                total += tally
                say(f"{name} seed {seed}: {tally.jobs} jobs, {tally.faults} faults, {len(tally.defects)} defects")
                for defect in tally.defects:
                    say(f"  DEFECT {defect}")
            results.append((total, time.monotonic() - started))

        if "s3" in scenarios:
            with fault_proxy(moto_url) as proxy, chaos_session({"quiver.master": "local[2]"}) as spark:
                proxy.plan.stall_s = 3.5
                stage = S3Stage(moto_url, proxy, BUCKET)
                over_seeds("s3", lambda seed: s3_faults(seed, spark, stage))
        if "disk" in scenarios:
            why_not = can_mount()
            if why_not:
                say(f"disk: skipped, {why_not}")
            else:
                with chaos_session({"quiver.master": "local[2]"}) as spark:
                    def on_small_disk(seed: int) -> Tally:
                        with small_filesystem(4) as mount:
                            return disk_full(seed, spark, mount)

                    over_seeds("disk", on_small_disk)
        if "ray" in scenarios:
            with chaos_session({"quiver.master": "ray"}) as spark, tempfile.TemporaryDirectory() as marks:
                over_seeds("ray", lambda seed: ray_worker_kills(seed, spark, os.path.join(marks, str(seed))))
        if "commit-local" in scenarios:
            with tempfile.TemporaryDirectory() as root:
                over_seeds("commit-local", lambda seed: commit_kills(seed, writer, root))
        if "commit-s3" in scenarios:
            root = f"s3://{BUCKET}/commit"
            bind_settings([root], {"quiver.s3.endpoint": moto_url, "quiver.s3.accessKey": env["AWS_ACCESS_KEY_ID"],
                                   "quiver.s3.secretKey": env["AWS_SECRET_ACCESS_KEY"],
                                   "quiver.s3.region": "us-east-1"})
            over_seeds("commit-s3", lambda seed: commit_kills(seed, writer, root, env))
    return results


def table(results: list[tuple[Tally, float]]) -> str:
    """The Markdown table of the figures."""
    lines = ["| scenario | seeds | faults injected | jobs | succeeded, right answer | failed, named error | "
             "driver killed | outputs checked | partial or mixed | rows lost | defects | time (s) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    total = Tally("all")
    for tally, seconds in results:
        total += tally
        figures = (tally.seeds, tally.faults, tally.jobs, tally.right, tally.named, tally.killed, tally.checks,
                   tally.partial, tally.rows_lost, len(tally.defects), f"{seconds:.0f}")
        lines.append(f"| {tally.scenario} | " + " | ".join(str(f) for f in figures) + " |")
    figures = (total.faults, total.jobs, total.right, total.named, total.killed, total.checks, total.partial,
               total.rows_lost, len(total.defects))
    lines.append("| **all** | | " + " | ".join(f"**{f}**" for f in figures) + f" | {sum(s for _, s in results):.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5, help="run seeds 1..N (default 5)")
    parser.add_argument("--first-seed", type=int, default=1, help="the first seed (default 1)")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS),
                        help=f"comma-separated, of {', '.join(SCENARIOS)} (default: all)")
    args = parser.parse_args(argv)
    chosen = tuple(s.strip() for s in args.scenarios.split(",") if s.strip())
    unknown = sorted(set(chosen) - set(SCENARIOS))
    if unknown:
        parser.error(f"unknown scenario(s) {', '.join(unknown)}; choose from {', '.join(SCENARIOS)}")
    if args.seeds < 1:
        parser.error("--seeds must be at least 1")
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    results = run(seeds, chosen, lambda line: print(line, file=sys.stderr, flush=True))
    print(table(results))
    bad = any(t.defects or t.partial or t.rows_lost for t, _ in results)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
