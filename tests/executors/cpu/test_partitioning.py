"""quiver/executors/cpu/partitioning.py: partition ids from key hashes, and one batch cut into per-partition pieces."""
from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from quiver import functions as F
from quiver.executors.cpu.partitioning import hash_partition_ids, split_by_ids


@settings(max_examples=40, deadline=None)
@given(keys=st.lists(st.one_of(st.none(), st.integers(-5, 5)), min_size=1, max_size=40), n=st.integers(1, 9))
def test_hash_partition_ids_are_in_range_and_equal_for_equal_keys(keys, n):
    ids = hash_partition_ids([pa.array(keys, pa.int64())], n)
    assert ids.dtype == np.int64 and ids.min() >= 0 and ids.max() < n
    seen: dict = {}
    for k, p in zip(keys, ids.tolist()):
        assert seen.setdefault(k, p) == p


@settings(max_examples=40, deadline=None)
@given(n_rows=st.integers(0, 400), n=st.sampled_from([1, 2, 3, 7, 255, 256, 257, 70_000]), seed=st.integers(0, 2**16))
def test_split_by_ids_keeps_every_row_once_in_its_partition_in_input_order(n_rows, n, seed):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, n, n_rows).astype(np.int64)
    batch = pa.RecordBatch.from_arrays([pa.array(np.arange(n_rows, dtype=np.int64)), pa.array(ids)],
                                       names=["row", "pid"])
    pieces = split_by_ids(batch, ids, n)
    assert len(pieces) == n
    if n == 1:
        assert pieces[0].equals(batch)
        return
    seen = []
    for p, piece in enumerate(pieces):
        if piece is None:
            assert p not in ids
            continue
        assert piece.num_rows > 0
        assert set(piece.column("pid").to_pylist()) == {p}
        rows = piece.column("row").to_pylist()
        assert rows == sorted(rows)  # stable: input order kept inside a partition
        seen += rows
    assert sorted(seen) == list(range(n_rows))


def test_every_key_reaches_one_reduce_partition(spark, partitions):
    """A groupBy over several map partitions gives one row per key only if equal keys meet in one reducer."""
    rng = np.random.default_rng(11)
    table = pa.table({"k": pa.array(rng.choice(["a", "b", "", "ccc", "dd", "e"], 3000), mask=rng.random(3000) < 0.05),
                      "v": pa.array(rng.integers(0, 10, 3000))})
    got = sorted(((r["k"] or "<null>"), r["n"]) for r in
                 spark.createDataFrame(table).groupBy("k").agg(F.count("v").alias("n")).collect())
    con = duckdb.connect()
    con.register("t", table)
    want = sorted(((k or "<null>"), n) for k, n in con.execute("SELECT k, count(v) FROM t GROUP BY k").fetchall())
    assert got == want


def test_temporal_keys_are_hash_partitioned(spark, partitions):
    import datetime as dt

    d = [dt.date(2024, 1, 1), dt.date(2024, 1, 2), None, dt.date(2024, 1, 1)]
    ts = [dt.datetime(2024, 1, 1, 10), None, dt.datetime(2024, 1, 1, 10), dt.datetime(2024, 1, 1, 10)]
    df = spark.createDataFrame(pa.table({"d": pa.array(d, pa.date32()), "ts": pa.array(ts, pa.timestamp("us"))}))
    by_date = {r["d"]: r["n"] for r in df.groupBy("d").agg(F.count("*").alias("n")).collect()}
    assert by_date == {dt.date(2024, 1, 1): 2, dt.date(2024, 1, 2): 1, None: 1}
    by_ts = {r["ts"]: r["n"] for r in df.groupBy("ts").agg(F.count("*").alias("n")).collect()}
    assert by_ts == {dt.datetime(2024, 1, 1, 10): 3, None: 1}
