"""Chaos scenarios: jobs run while faults are injected at random points, over a seed, each job judged.

Shared by the `tests/chaos` suite (a fixed seed list, every defect a failure) and
`python -m benchmarks.chaos` (any number of seeds, a table of the figures). Each scenario runs a few
jobs on one seed and returns a `Tally`:

- a job either succeeds with the right answer (`right`) or fails with a named error (`named`: a
  Quiver error that names what failed, the object path for storage, the task for a dead worker),
  or its driver was killed on purpose (`killed`); anything else (a wrong answer, a bare
  exception) is a `defect`;
- after every write, a fresh reader that meets no faults must see exactly the output before the
  write or exactly the output after it: `partial` counts the times it saw anything else (part of a
  commit, old and new mixed), `rows_lost` the rows a committed output should hold that it lacked.

The scenarios: `s3_faults` (HTTP 500/503, throttling, resets, truncated answers and a stall from the
fault proxy in front of moto, at random rates), `disk_full` (writes of random sizes to a small
tmpfs), `ray_worker_kills` (workers SIGKILLed in map and reduce stages, sometimes more often than
`spark.task.maxFailures` allows) and `commit_kills` (the writing process killed at a random step
of the commit protocol). Data rows are (id, gen, k): `gen` tags the write that added them.
"""
from __future__ import annotations

import os
import random
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import quiver
from quiver import functions as F
from quiver.connectors.faults import FAULT_EXIT_CODE
from quiver.connectors.object_store import bind_settings
from quiver.engine.core.errors import QuiverError, StorageFullError, TaskFailedError
from tests.connectors.fault_writer import FaultWriter, WriteRequest, generation_rows, leftovers, rows_of
from tests.connectors.s3_proxy import S3FaultProxy

Rows = list[tuple[int, int, int]]
ID_STRIDE = 10_000_000
# Every kind but a stall, which costs its whole duration: each S3 job meets one stall on purpose instead.
QUICK_FAULTS = ("500", "503", "slowdown", "reset", "truncate")


@dataclass
class Tally:
    """What one scenario (or a sum of them) saw."""

    scenario: str
    seeds: int = 0
    faults: int = 0
    jobs: int = 0
    right: int = 0
    named: int = 0
    killed: int = 0
    checks: int = 0
    rows_lost: int = 0
    partial: int = 0
    defects: list[str] = field(default_factory=list)

    def __iadd__(self, other: Tally) -> Tally:
        for name in ("seeds", "faults", "jobs", "right", "named", "killed", "checks", "rows_lost", "partial"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.defects += other.defects
        return self

    def job(self, what: str, run: Callable[[], Any], expected: Any, named: Callable[[BaseException], bool]) -> bool:
        """Run one job: True when it succeeded with `expected`; a named failure counts, any other is a defect."""
        self.jobs += 1
        try:
            value = run()
        except Exception as error:
            if named(error):
                self.named += 1
            else:
                self.defects.append(f"{what}: failed without a named error: {type(error).__name__}: {error}")
            return False
        if value == expected:
            self.right += 1
            return True
        self.defects.append(f"{what}: succeeded with a wrong answer ({_sample(value)} where {_sample(expected)})")
        return False

    def output(self, what: str, seen: Rows, before: Rows, after: Rows, succeeded: bool) -> Rows:
        """Judge what a fresh reader saw after a write; returns the output now committed."""
        self.checks += 1
        if seen == after or (seen == before and not succeeded):
            return seen
        if seen != before:
            self.partial += 1
        should = set(after if succeeded else before)
        self.rows_lost += len(should - set(seen))
        self.defects.append(f"{what}: a reader saw {len(seen)} rows, neither the {len(before)} before nor the "
                            f"{len(after)} after the write")
        return seen


@contextmanager
def chaos_session(conf: dict[str, object]) -> Iterator[quiver.Session]:
    """A session of its own (3 shuffle partitions), stopped after the block."""
    session = quiver.Session({"spark.sql.shuffle.partitions": 3, **conf})
    try:
        yield session
    finally:
        session.stop()


def _sample(value: Any) -> str:
    return f"{len(value)} rows" if isinstance(value, list) else repr(value)[:80]


def generation_frame(spark: Any, generation: int, rows: int, partitions: int, payload: int = 0) -> Any:
    """The rows of `generation_rows`-style data with `rows` rows, and a text column of `payload`
    characters a row to take up space."""
    df = spark.range(0, rows, numPartitions=partitions)
    columns = [(F.col("id") + F.lit(generation * ID_STRIDE)).alias("id"), F.lit(generation).cast("long").alias("gen"),
               (F.col("id") % 3).alias("k")]
    if payload:
        columns.append(F.concat(F.lit("x" * payload), F.col("id").cast("string")).alias("pad"))
    return df.select(*columns)


def generation_write(spark: Any, path: str, generation: int, rows: int, mode: str, partition_by: tuple[str, ...],
                     incompressible: bool = False) -> Callable[[], None]:
    """A job writing `generation`'s rows to `path` as parquet, in 3 tasks; `incompressible` adds a column
    of hashes parquet cannot shrink, to fill a disk."""

    def run() -> None:
        df = generation_frame(spark, generation, rows, 3)
        if incompressible:
            df = df.withColumn("pad", F.sha2(F.col("id").cast("string"), 512))
        writer = df.write.mode(mode)
        (writer.partitionBy(*partition_by) if partition_by else writer).parquet(path)

    return run


def expected_rows(generation: int, rows: int) -> Rows:
    return [(generation * ID_STRIDE + i, generation, i % 3) for i in range(rows)]


def after_write(mode: str, before: Rows, new: Rows) -> Rows:
    if mode == "append":
        return sorted(before + new)
    if mode in ("error", "errorifexists") and before:
        return before
    return new


def collected(df: Any) -> Rows:
    return sorted((r.id, r.gen, r.k) for r in df.select("id", "gen", "k").collect())


# ---------------------------------------------------------------- S3 faults


@dataclass
class S3Stage:
    """A moto server with the fault proxy in front, and the bucket the scenario writes."""

    moto_url: str
    proxy: S3FaultProxy
    bucket: str

    def conf(self, through_proxy: bool) -> dict[str, str]:
        from tests.connectors.s3_server import ACCESS, SECRET

        return {"quiver.s3.endpoint": self.proxy.url if through_proxy else self.moto_url,
                "quiver.s3.accessKey": ACCESS, "quiver.s3.secretKey": SECRET, "quiver.s3.region": "us-east-1"}

    def fresh_rows(self, path: str) -> Rows:
        """What a reader straight at moto sees (the next job's session binds the proxy again)."""
        bind_settings([path], self.conf(through_proxy=False))
        return rows_of(path)


def s3_faults(seed: int, spark: Any, stage: S3Stage, jobs: int = 4,
              rates: tuple[float, ...] = (0.05, 0.15, 0.3, 0.8)) -> Tally:
    """Writes (overwrite, append; partitioned or not) and reads of one s3:// path through the fault proxy,
    each at a rate of faults drawn from the seed out of `rates` (a high one makes some jobs exhaust their
    retries, and they must fail naming the object). Each fault costs the AWS SDK's backoff, about half a
    second."""
    tally = Tally("S3 errors", seeds=1)
    rng = random.Random(seed)
    path = f"s3://{stage.bucket}/chaos-{seed}/out"
    for name, value in stage.conf(through_proxy=True).items():
        spark.conf.set(name, value)
    spark.conf.set("quiver.cache.storage.enabled", "false")
    named = _names(f"s3://{stage.bucket}/chaos-{seed}")
    committed: Rows = []
    stall_job = rng.randrange(jobs)
    faults_before = stage.proxy.faults_injected
    partition_by = rng.choice([(), ("k",)])
    for generation in range(1, jobs + 1):
        mode = rng.choice(["overwrite", "append"])
        rows = rng.choice([50, 400, 1500])
        rate = rng.choice(rates)
        stage.proxy.plan.fail_randomly(rate, seed * 1000 + generation, QUICK_FAULTS)
        if generation - 1 == stall_job:
            stage.proxy.plan.fail_next("stall")
        what = f"seed {seed} gen {generation} {mode} {rows} rows at {rate:.0%} faults"
        after = after_write(mode, committed, expected_rows(generation, rows))
        write = generation_write(spark, path, generation, rows, mode, partition_by)
        succeeded = tally.job(f"{what}: write", write, None, named)
        stage.proxy.plan.clear()
        committed = tally.output(what, stage.fresh_rows(path), committed, after, succeeded)
        stage.proxy.plan.fail_randomly(rate, seed * 1000 + generation + 500, QUICK_FAULTS)
        if committed:
            tally.job(f"{what}: read", lambda: collected(spark.read.parquet(path)), committed, named)
        stage.proxy.plan.clear()
    final = generation_frame(spark, 99, 10, 2)
    final.write.mode("overwrite").parquet(path)
    tally.output(f"seed {seed}: final overwrite", stage.fresh_rows(path), committed, expected_rows(99, 10), True)
    left = leftovers(path)
    if left:
        tally.defects.append(f"seed {seed}: the last write left {left} behind")
    tally.faults = stage.proxy.faults_injected - faults_before
    return tally


def _names(prefix: str) -> Callable[[BaseException], bool]:
    return lambda error: isinstance(error, QuiverError) and prefix in str(error)


# ---------------------------------------------------------------- a full disk


@contextmanager
def small_filesystem(size_mib: int) -> Iterator[str]:
    """A tmpfs of `size_mib` MiB mounted for the block (needs root); yields its mount point."""
    mount = tempfile.mkdtemp(prefix="quiver-full-disk-")
    try:
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_mib}m,mode=0700", "tmpfs", mount], check=True,
                       capture_output=True)
        try:
            yield mount
        finally:
            subprocess.run(["umount", "-l", mount], check=False, capture_output=True)
    finally:
        shutil.rmtree(mount, ignore_errors=True)


def can_mount() -> str | None:
    """Why a small file system cannot be made here, or None when it can."""
    if os.geteuid() != 0:
        return "mounting a tmpfs needs root"
    try:
        with small_filesystem(1):
            return None
    except (OSError, subprocess.CalledProcessError) as e:
        return f"mounting a tmpfs failed: {e}"


def disk_full(seed: int, spark: Any, mount: str, jobs: int = 5) -> Tally:
    """Writes of random sizes (some far past the free space) to one path on a small file system: each fits
    and commits, or fails with `StorageFullError` naming the path, leaving the old output whole."""
    tally = Tally("disk full", seeds=1)
    rng = random.Random(seed)
    path = os.path.join(mount, f"chaos-{seed}", "out")
    os.makedirs(os.path.dirname(path))
    committed: Rows = []
    partition_by = rng.choice([(), ("k",)])
    for generation in range(1, jobs + 1):
        mode = rng.choice(["overwrite", "append", "overwrite"])
        rows = rng.choice([2_000, 20_000, 60_000, 150_000])
        what = f"seed {seed} gen {generation} {mode} {rows} rows"
        after = after_write(mode, committed, expected_rows(generation, rows))
        full_before = tally.named
        write = generation_write(spark, path, generation, rows, mode, partition_by, incompressible=True)
        succeeded = tally.job(what, write, None, lambda e: isinstance(e, StorageFullError) and path in str(e))
        tally.faults += tally.named - full_before
        committed = tally.output(what, rows_of(path) if os.path.exists(path) else [], committed, after, succeeded)
        left = leftovers(path) if os.path.exists(path) else []
        if left:
            tally.defects.append(f"{what}: left {left} behind on the full disk")
    return tally


# ---------------------------------------------------------------- Ray worker kills


def kill_plan(rng: random.Random, partitions: int) -> dict[str, int]:
    """How often each map and reduce task of a job kills its worker: mostly 0 to 2, sometimes 5."""
    return {f"{stage}-{p}": rng.choice([0, 0, 1, 1, 2, 5 if rng.random() < 0.3 else 1])
            for stage in ("map", "reduce") for p in range(partitions)}


def ray_worker_kills(seed: int, spark: Any, marks: str, max_failures: int = 4, jobs: int = 2) -> Tally:
    """Aggregations whose map or reduce tasks SIGKILL their Ray worker process a number of times drawn from
    the seed (0 to 5 per task, on their first attempts). A task killed `max_failures` times fails the job,
    which must then raise `TaskFailedError` naming the task; otherwise the answer must be exact."""
    tally = Tally("Ray worker kills", seeds=1)
    rng = random.Random(seed)
    partitions, rows = 3, 60_000
    for job in range(jobs):
        kills = kill_plan(rng, partitions)
        folder = os.path.join(marks, f"seed-{seed}-job-{job}")
        os.makedirs(folder)
        df = (spark.range(0, rows, numPartitions=partitions).withColumn("part", F.spark_partition_id())
              .mapInArrow(_killer("map", folder, kills), "id long")
              .groupBy((F.col("id") % 7).alias("g")).agg(F.count("*").alias("n"), F.sum("id").alias("s"))
              .withColumn("part", F.spark_partition_id())
              .mapInArrow(_killer("reduce", folder, kills), "g long, n long, s long"))
        expected = sorted((g, len(range(g, rows, 7)), sum(range(g, rows, 7))) for g in range(7))
        what = f"seed {seed} job {job} kills {sorted((k, n) for k, n in kills.items() if n)}"
        succeeded = tally.job(what, lambda df=df: sorted((r.g, r.n, r.s) for r in df.collect()), expected,
                              lambda e: isinstance(e, TaskFailedError) and "failed" in str(e))
        done = [n.rsplit("-", 1)[0] for n in os.listdir(folder)]
        tally.faults += len(done)
        doomed = any(done.count(task) >= max_failures for task in set(done))
        if succeeded == doomed:
            tally.defects.append(f"{what}: {'succeeded' if succeeded else 'failed'} though tasks were killed "
                                 f"{sorted({(t, done.count(t)) for t in done})} times")
    return tally


def _killer(stage: str, folder: str, kills: dict[str, int]) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """A mapInArrow function for `stage` that passes its rows on without their `part` column and, after
    its first batch, SIGKILLs the Ray worker running it until it has done so as often as `kills` says for
    its partition; the kills are counted in files in `folder`, across attempts."""

    def body(batches: Iterator[Any]) -> Iterator[Any]:
        import signal

        first = True
        for batch in batches:
            if batch.num_rows == 0:
                continue
            task = f"{stage}-{batch.column('part')[0].as_py()}"
            yield batch.drop_columns(["part"])
            done = len([n for n in os.listdir(folder) if n.rsplit("-", 1)[0] == task])
            if first and done < kills.get(task, 0):
                worker = _ray_worker_pid()
                with open(os.path.join(folder, f"{task}-{done}"), "x"):
                    pass
                os.kill(worker, signal.SIGKILL)
            first = False

    return body


def _ray_worker_pid() -> int:
    """The Ray worker this code runs in: this process, or the parent of a UDF worker process (a Ray
    worker is a child of its raylet). Raises rather than kill anything else, such as the driver."""
    for pid in (os.getpid(), os.getppid()):
        with open(f"/proc/{pid}/stat") as f:
            parent = int(f.read().rsplit(")", 1)[1].split()[1])
        with open(f"/proc/{parent}/cmdline", "rb") as f:
            if b"raylet" in f.read().split(b"\0")[0]:
                return pid
    raise RuntimeError("this task does not run on a Ray worker; refusing to kill its process")


# ---------------------------------------------------------------- process kills during a commit


def commit_kills(seed: int, writer: FaultWriter, root: str, env: dict[str, str] | None = None,
                 jobs: int = 5) -> Tally:
    """Writes to one path, each killed (os._exit, no cleanup) at a random fault point of the commit protocol
    or not; a fresh reader must see the output before or after each, and a last write sweeps what the
    dead left. The path is local unless `root` is an s3:// prefix (then `env` reaches the store)."""
    tally = Tally("process kills in a commit", seeds=1)
    rng = random.Random(seed)
    path = f"{root}/commit-{seed}/out"
    partition_by = rng.choice([(), ("k",)])
    committed: Rows = []
    for generation in range(1, jobs + 1):
        mode = rng.choice(["overwrite", "append", "overwrite", "errorifexists"])
        fault_at = rng.randint(1, 16)
        rc = writer.write(WriteRequest(path, generation, mode, partition_by, fault_at=fault_at, env=env or {}))
        after = after_write(mode, committed, generation_rows(generation))
        what = f"seed {seed} gen {generation} {mode} killed at point {fault_at}"
        tally.jobs += 1
        if rc == FAULT_EXIT_CODE:
            tally.faults += 1
            tally.killed += 1
        elif rc == 0:
            tally.right += 1
        elif rc == 1 and mode == "errorifexists" and committed:
            tally.named += 1
        else:
            tally.defects.append(f"{what}: exited {rc}")
        committed = tally.output(what, rows_of(path), committed, after, rc == 0)
    rc = writer.write(WriteRequest(path, 99, "overwrite", partition_by, env=env or {}))
    tally.output(f"seed {seed}: final overwrite", rows_of(path), committed, generation_rows(99), rc == 0)
    left = leftovers(path)
    if left:
        tally.defects.append(f"seed {seed}: the last write left {left} behind")
    return tally
