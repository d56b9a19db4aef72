"""quiver/engine/execution/runtime/ray.py on a real Ray cluster of three raylets on this machine
(ray.cluster_utils.Cluster), on loopback: jobs agree with local[2], blocks are read from shared memory without
a copy and freed once no stage needs them, device tasks ask Ray for GPUs and NPUs, and a killed worker or a
dead node loses no rows."""
from __future__ import annotations

import os

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # loopback only, set before Ray is imported

import pyarrow as pa
import pytest

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster

import quiver
from quiver import functions as F
from quiver.engine.core.errors import ConfigurationError, TaskFailedError
from quiver.engine.execution.runtime.ray import RayRuntime, _StartsBySlot, parse_ray_master
from quiver.engine.execution.tasks import TaskResources, TaskSpec


@pytest.fixture(scope="module")
def cluster():
    """A head with 2 CPUs and a worker node with 1 CPU, one (fake) GPU and one NPU."""
    c = Cluster(initialize_head=True, connect=False,
                head_node_args={"num_cpus": 2, "include_dashboard": False, "node_ip_address": "127.0.0.1"})
    device_node = c.add_node(num_cpus=1, num_gpus=1, resources={"NPU": 1}, node_ip_address="127.0.0.1")
    c.wait_for_nodes()
    c.device_node = device_node
    yield c
    if ray.is_initialized():
        ray.shutdown()
    c.shutdown()


@pytest.fixture(scope="module")
def rspark(cluster):
    session = quiver.Session({"quiver.master": f"ray:{cluster.address}", "spark.sql.shuffle.partitions": 3})
    yield session
    session.stop()


@pytest.fixture(scope="module")
def lspark():
    session = quiver.Session({"quiver.master": "local[2]", "spark.sql.shuffle.partitions": 3})
    yield session
    session.stop()


def _rows(df) -> list[tuple]:
    return sorted(tuple(r) for r in df.collect())


def _jobs(spark):
    """A group-by, a shuffled join, a global sort and a window: every exchange kind."""
    from quiver import Window

    facts = spark.range(0, 20000, numPartitions=4).select(
        F.col("id"), (F.col("id") % 97).alias("k"), (F.col("id") * 3 % 1001).alias("v"))
    dims = spark.range(0, 97, numPartitions=2).select(F.col("id").alias("k"), (F.col("id") % 5).alias("region"))
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", -1)
    try:
        joined = facts.join(dims, "k").groupBy("region").agg(F.sum("v").alias("s"), F.count("*").alias("n"))
        w = Window.partitionBy("k").orderBy(F.col("v").desc(), "id")
        ranked = facts.withColumn("r", F.row_number().over(w)).filter("r <= 2")
        return {
            "groupby": _rows(facts.groupBy("k").agg(F.sum("v"), F.max("id"))),
            "join": _rows(joined),
            "sort": [tuple(r) for r in facts.orderBy(F.col("v").desc(), "id").limit(50).collect()],
            "window": _rows(ranked),
            "union_coalesce": _rows(facts.union(facts).coalesce(2).groupBy("k").count()),
        }
    finally:
        spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")


def test_master_strings():
    assert parse_ray_master("ray") == "local"
    assert parse_ray_master("ray://10.0.0.5:10001") == "ray://10.0.0.5:10001"
    assert parse_ray_master("ray:auto") == "auto"
    assert parse_ray_master("ray:127.0.0.1:6379") == "127.0.0.1:6379"
    assert parse_ray_master("local[2]") is None
    with pytest.raises(ConfigurationError, match="valid masters are local, local\\[N\\].*ray://host:port"):
        quiver.Session({"quiver.master": "yarn"})


def test_jobs_on_ray_agree_with_local(rspark, lspark):
    assert isinstance(rspark._context.runtime, RayRuntime)
    assert _jobs(rspark) == _jobs(lspark)


def test_inventory_comes_from_the_cluster(rspark, cluster):
    assert rspark._context.runtime.inventory() == {"CPU": 3.0, "GPU": 1.0, "NPU": 1.0}
    nodes = {n["node"]: n for n in rspark._context.runtime.nodes()}
    assert nodes[cluster.device_node.node_id]["GPU"] == 1.0
    assert rspark.sparkContext.defaultParallelism == 3


def test_blocks_are_mapped_from_shared_memory_not_copied(rspark):
    """The reducer's batches point into the object store's shared memory (/dev/shm), which the worker maps."""

    def probe(batches):
        import pyarrow as pa

        ranges = []
        with open("/proc/self/maps") as maps:
            for line in maps:
                if "/dev/shm" in line or "plasma" in line:
                    lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                    ranges.append((lo, hi))
        for batch in batches:
            address = batch.column(1).buffers()[1].address
            yield pa.record_batch({"rows": [batch.num_rows],
                                   "in_shared_memory": [any(lo <= address < hi for lo, hi in ranges)]})

    df = rspark.range(0, 400000, numPartitions=2).select(F.col("id"), (F.col("id") * 2).alias("payload"))
    out = df.repartition(2, "id").mapInArrow(probe, "rows long, in_shared_memory boolean").collect()
    assert sum(r.rows for r in out) == 400000
    assert all(r.in_shared_memory for r in out), out


def test_blocks_are_freed_once_no_later_stage_needs_them(rspark, monkeypatch):
    runtime = rspark._context.runtime
    seen = []
    original = runtime.run_tasks

    def recording(tasks, on_outcome=None, cancel=None, on_start=None):
        seen.append((tasks[0].stage_id, sorted({b.stage for b in runtime.store._refs if b.namespace != "cache"})))
        return original(tasks, on_outcome, cancel, on_start)

    monkeypatch.setattr(runtime, "run_tasks", recording)
    rows = rspark.range(0, 3000, numPartitions=3).withColumn("k", F.col("id") % 5) \
        .groupBy("k").count().orderBy("k").collect()
    assert [r["count"] for r in rows] == [600] * 5
    job = rspark._context.scheduler.last_job
    result_stage = job.stages[-1].stage_id
    first_stage = job.stages[0].stage_id
    # While the result stage runs, the first stage's blocks (read only by the middle stage) are gone.
    assert all(first_stage not in live for stage, live in seen if stage == result_stage), seen
    assert runtime.store.nbytes(f"job{job.job_id}") == 0 and not runtime.store.blocks_of(f"job{job.job_id}", 0)
    assert "spilled_bytes" in job.object_store


def test_a_task_that_raises_is_retried(rspark, tmp_path):
    marker = str(tmp_path / "failed-once")

    def flaky(batches):
        import os

        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL))  # atomic: one task of the two fails, once
        except FileExistsError:
            pass
        else:
            raise RuntimeError("injected failure, first attempt only")
        yield from batches

    out = rspark.range(0, 100, numPartitions=2).mapInArrow(flaky, "id long").collect()
    assert sorted(r.id for r in out) == list(range(100))
    job = rspark._context.scheduler.last_job
    assert job.stages[-1].attempts == job.stages[-1].tasks + 1


def test_a_task_that_always_raises_fails_the_job_with_its_cause(rspark):
    def broken(batches):
        raise ValueError("broken on purpose")
        yield  # unreachable: makes this a generator

    with pytest.raises(TaskFailedError, match="failed 4 times.*broken on purpose") as err:
        rspark.range(0, 10, numPartitions=1).mapInArrow(broken, "id long").collect()
    assert "ValueError: broken on purpose" in str(err.value.__cause__)


def test_a_worker_killed_mid_job_loses_no_rows(rspark, tmp_path):
    """The first attempt of one map task SIGKILLs its worker process after writing part of its output."""
    marker = str(tmp_path / "killed-once")

    def dies_once(batches):
        import os
        import signal

        for i, batch in enumerate(batches):
            yield batch
            if i == 1:
                try:
                    os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
                except FileExistsError:
                    continue
                os.kill(os.getpid(), signal.SIGKILL)

    df = rspark.range(0, 200000, numPartitions=3).mapInArrow(dies_once, "id long")
    rows = df.groupBy((F.col("id") % 10).alias("k")).agg(F.count("*").alias("n"), F.sum("id").alias("s")).collect()
    assert os.path.exists(marker)
    assert sorted((r.k, r.n, r.s) for r in rows) == sorted(
        (k, 20000, sum(range(k, 200000, 10))) for k in range(10))


def test_a_dead_node_loses_no_rows_its_blocks_are_recomputed_from_lineage(rspark, cluster, monkeypatch):
    """A node dies after the map stage wrote blocks on it: the reducers' fetch fails, the lost map
    partitions run again elsewhere, and the answer has every row once."""
    doomed = cluster.add_node(num_cpus=2, node_ip_address="127.0.0.1")
    cluster.wait_for_nodes()
    scheduler = rspark._context.scheduler
    runtime = rspark._context.runtime
    original = scheduler._run_map_stage
    held = []

    def then_kill(stage, job):
        written = original(stage, job)
        if not held:
            held.extend(runtime.store.not_on({n["node"] for n in runtime.nodes()} - {doomed.node_id}))
            cluster.remove_node(doomed)
        return written

    monkeypatch.setattr(scheduler, "_run_map_stage", then_kill)

    def slow(batches):
        import time

        for batch in batches:
            time.sleep(0.2)  # long enough that Ray spreads the map tasks over every node
            yield batch

    # Blocks of 100 KiB or more, so Ray keeps them in the node's object store, not inline in the driver.
    n = 2_400_000
    df = rspark.range(0, n, numPartitions=8).mapInArrow(slow, "id long").repartition(3, "id")
    rows = df.groupBy((F.col("id") % 7).alias("k")).agg(F.count("*").alias("n"), F.sum("id").alias("s")).collect()
    assert held, "no block was written on the node that died, so nothing was tested"
    assert sorted((r.k, r.n, r.s) for r in rows) == sorted(
        (k, len(range(k, n, 7)), sum(range(k, n, 7))) for k in range(7))
    job = scheduler.last_job
    assert job.stages[0].recomputed >= 1


def test_device_tasks_ask_ray_for_a_gpu_or_an_npu(rspark, cluster):
    for kind in ("gpu", "npu"):
        rspark.conf.set("quiver.devices", f"cpu,{kind}:emulated")
        rspark.conf.set("quiver.placement", kind)
        try:
            rows = rspark.range(0, 5000, numPartitions=2).filter(F.col("id") % 3 == 0) \
                .groupBy((F.col("id") % 4).alias("k")).count().collect()
            assert sorted((r.k, r["count"]) for r in rows) == sorted(
                (k, sum(1 for i in range(0, 5000, 3) if i % 4 == k)) for k in range(4))
            placed = [s for s in rspark._context.scheduler.last_job.stages if any(kind in d for d in s.devices)]
            assert placed
            for s in placed:
                assert (s.resources.gpus, s.resources.npus) == ((1.0, 0.0) if kind == "gpu" else (0.0, 1.0))
                assert set(s.nodes) == {cluster.device_node.node_id}
        finally:
            rspark.conf.unset("quiver.devices")
            rspark.conf.unset("quiver.placement")


def test_the_job_report_has_a_lane_per_ray_worker_and_device_tasks_on_the_device_node(rspark, cluster):
    import re

    from quiver.engine.ui.job_report import job_report_html

    rspark.conf.set("quiver.devices", "cpu,gpu:emulated")
    rspark.conf.set("quiver.placement", "gpu")
    try:
        rspark.range(0, 5000, numPartitions=3).groupBy((F.col("id") % 4).alias("k")).count().collect()
    finally:
        rspark.conf.unset("quiver.devices")
        rspark.conf.unset("quiver.placement")
    job = rspark.lastJob()
    assert job.runtime == "RayRuntime" and job.tasks
    for task in job.tasks:
        assert re.fullmatch(r"[0-9a-f]{8} pid \d+", task.worker) and task.worker.startswith(task.node[:8])
        if "gpu:0 (emulated)" in task.devices:
            assert task.node == cluster.device_node.node_id
    assert any("gpu:0 (emulated)" in t.devices for t in job.tasks)
    page = job_report_html(job)
    assert page.count('<rect class="task"') == len(job.tasks)
    assert set(re.findall(r'<text class="lane"[^>]*>([^<]+)</text>', page)) == {t.worker for t in job.tasks}


def test_a_real_device_the_cluster_lacks_is_a_configuration_error():
    spec = TaskSpec(3, 0, 1, None, resources=TaskResources(gpus=1.0))
    with pytest.raises(ConfigurationError, match="stage 3 is placed on a GPU but the Ray cluster has no GPU"):
        RayRuntime._options(spec, {"GPU": 0.0, "NPU": 0.0})
    emulated = TaskSpec(3, 0, 1, None, resources=TaskResources(npus=1.0, emulated=True))
    assert RayRuntime._options(emulated, {"GPU": 0.0, "NPU": 0.0}) == {"num_cpus": 1.0}
    assert RayRuntime._options(emulated, {"GPU": 0.0, "NPU": 2.0}) == {"num_cpus": 1.0, "resources": {"NPU": 1.0}}


def test_cached_dataframes_live_in_the_object_store(rspark):
    df = rspark.range(0, 1000, numPartitions=2).withColumn("k", F.col("id") % 3).cache()
    try:
        assert df.count() == 1000
        assert df.filter("k = 1").count() == 333
        cached = [b for b in rspark._context.runtime.store._refs if b.namespace == "cache"]
        assert len(cached) == 2 and rspark._context.runtime.store.nbytes("cache") > 0
        assert isinstance(rspark._context.runtime.store.get(cached[0])[0], pa.RecordBatch)
    finally:
        df.unpersist()


def test_the_cluster_inventory_feeds_the_cost_model(rspark):
    """Placement spreads a stage over the cluster's CPUs and GPUs as Ray reports them."""
    rspark.conf.set("quiver.devices", "cpu,gpu:emulated")
    try:
        units = {c.device.kind: c.units for c in rspark.placement_candidates()}
        assert units == {"cpu": 3, "gpu": 1}
    finally:
        rspark.conf.unset("quiver.devices")


def test_shuffle_blocks_cost_the_object_store_their_own_size(rspark, monkeypatch):
    """Hash partitioning cuts each batch into pieces; each piece must be stored alone, not with the whole
    buffer it was cut from (a serialized Arrow slice carries its parent buffer), or a shuffle into 16
    partitions would take 16 times its size."""
    scheduler, runtime = rspark._context.scheduler, rspark._context.runtime
    original = scheduler._run_map_stage
    held = []

    def measure(stage, job):
        written = original(stage, job)
        held.append((runtime.store.nbytes(job.namespace), runtime.store_stats()["object_store_bytes"]))
        return written

    monkeypatch.setattr(scheduler, "_run_map_stage", measure)
    rows = 4_000_000
    df = rspark.range(0, rows, numPartitions=2).select(F.col("id"), (F.col("id") * 7).alias("v")).repartition(16, "id")
    assert df.groupBy((F.col("id") % 3).alias("k")).count().count() == 3
    block_bytes, store_bytes = held[0]
    assert block_bytes >= rows * 8  # the id column (v is pruned: nothing reads it)
    assert store_bytes < 1.5 * block_bytes + (16 << 20), held


def test_inputs_over_a_workers_budget_are_read_one_block_at_a_time(rspark, lspark, monkeypatch):
    """Past the budget a task gets its input blocks as references it reads as it reaches them, rather than
    every block mapped into the worker before it starts; the answers are the same either way."""
    runtime = rspark._context.runtime
    calls = []
    original = runtime._remote

    class Spy:
        def options(self, **kw):
            submit = original.options(**kw)

            class Submit:
                def remote(self, spec, body, ids, fetched, *inputs):
                    calls.append((len(ids), fetched, len(inputs)))
                    return submit.remote(spec, body, ids, fetched, *inputs)

            return Submit()

    monkeypatch.setattr(runtime, "_remote", Spy())
    want = _jobs(lspark)
    rspark.conf.set("quiver.memory.limit", "64k")
    try:
        assert _jobs(rspark) == want
    finally:
        rspark.conf.unset("quiver.memory.limit")
    fetched = [c for c in calls if c[1]]
    assert fetched and all(inputs == 1 for _, _, inputs in fetched)
    calls.clear()
    assert _jobs(rspark) == want
    assert not any(fetched for _, fetched, _ in calls)
    assert any(ids for ids, _, _ in calls)


def test_ray_tasks_count_as_started_as_cluster_slots_free_for_them():
    """Ray does not say when a queued task begins: the first `slots` submitted count as started, then one more
    as each ends; one that ends before it was counted is counted as it ends, so every end follows a start."""
    told: list[int] = []
    starts = _StartsBySlot(told.append, 2, [0, 1, 2, 3, 4])
    starts.fill()
    assert told == [0, 1]
    starts.ended(1)
    starts.fill()
    assert told == [0, 1, 2]
    starts.ended(4)  # ended while still queued, as far as the driver knew
    assert told == [0, 1, 2, 4]
    starts.fill()
    assert told == [0, 1, 2, 4]  # two still running: no slot free
    starts.ended(0)
    starts.fill()
    assert told == [0, 1, 2, 4, 3]
