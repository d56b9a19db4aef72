"""quiver/engine/execution/query_execution.py's CacheManager: cache()/persist()/unpersist() — the second action reads
the InMemoryRelation instead of the source, which a counting `Source` makes visible."""
from __future__ import annotations

import contextlib
import io
import threading

import pyarrow as pa
import pytest

from quiver import StorageLevel
from quiver import functions as F
from quiver.connectors.base import SourceStatistics


class CountingSource:
    """A two-split source that counts how often each split is read."""

    def __init__(self):
        self.reads = 0
        self._lock = threading.Lock()

    def describe(self) -> str:
        return "counting"

    def schema(self) -> pa.Schema:
        return pa.schema([pa.field("k", pa.int64()), pa.field("v", pa.string())])

    def statistics(self) -> SourceStatistics:
        return SourceStatistics(num_rows=20, size_bytes=400)

    def splits(self, target: int):
        return [0, 1]

    def read(self, split, columns, predicate):
        with self._lock:
            self.reads += 1
        table = pa.table({"k": [split * 10 + i for i in range(10)], "v": [f"s{split}-{i}" for i in range(10)]})
        yield from table.select(columns or table.column_names).to_batches()


def _explain(df) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        df.explain(True)
    return out.getvalue()


@pytest.fixture
def source_df(spark):
    source = CountingSource()
    df = spark._dataframe_from_source(source).filter(F.col("k") % 2 == 0)
    yield source, df
    df.unpersist()


def test_second_action_reads_the_cached_partitions(spark, partitions, source_df):
    source, df = source_df
    expected = sorted(r.k for r in df.collect())
    reads_uncached = source.reads
    assert reads_uncached == 2
    df.cache()
    assert df.is_cached and df.storageLevel == StorageLevel.MEMORY_AND_DISK
    assert sorted(r.k for r in df.collect()) == expected  # materialises the cache: reads once more
    assert source.reads == reads_uncached + 2
    assert df.count() == len(expected)
    assert sorted(r.k for r in df.collect()) == expected
    assert source.reads == reads_uncached + 2  # later actions never touch the source
    text = _explain(df)
    optimized = text.split("== Optimized Logical Plan ==")[1].split("== Physical Plan ==")[0]
    physical = text.split("== Physical Plan ==")[1]
    assert "InMemoryRelation" in optimized and "Scan counting" not in optimized
    assert "InMemoryTableScan" in physical and "Scan counting" not in physical


def test_derived_frames_read_the_cache_too(spark, source_df):
    source, df = source_df
    df.persist(StorageLevel.MEMORY_ONLY)
    assert df.storageLevel == StorageLevel.MEMORY_ONLY
    df.count()
    reads = source.reads
    agg = df.groupBy((F.col("k") % 3).alias("m")).agg(F.count("*").alias("n")).orderBy("m")
    assert [(r.m, r.n) for r in agg.collect()] == [(0, 4), (1, 3), (2, 3)]
    assert df.select("v").filter(F.col("v").startswith("s1")).count() == 5
    assert source.reads == reads
    assert "InMemoryRelation" in _explain(agg)


def test_unpersist_goes_back_to_the_source_and_frees_the_blocks(spark, source_df):
    source, df = source_df
    df.cache()
    df.count()
    assert spark._context.store.nbytes("cache") > 0
    df.unpersist()
    assert not df.is_cached and df.storageLevel == StorageLevel.NONE
    assert spark._context.store.nbytes("cache") == 0
    reads = source.reads
    assert df.count() == 10
    assert source.reads == reads + 2
    assert "InMemoryRelation" not in _explain(df)


def test_cache_is_lazy_until_an_action(spark, source_df):
    """cache() runs nothing, and neither does explain(): Spark shows the InMemoryRelation it will read."""
    source, df = source_df
    df.cache()
    assert source.reads == 0
    text = _explain(df)
    assert source.reads == 0
    assert "InMemoryRelation" in text


def test_catalog_clear_cache_drops_every_cached_frame(spark, source_df):
    _, df = source_df
    df.cache().count()
    spark.catalog.clearCache()
    assert not df.is_cached and spark._context.store.nbytes("cache") == 0


def test_catalog_caches_a_view_lazily_and_dropping_it_uncaches_it(spark, source_df):
    """spark.catalog.cacheTable fills on the first read; dropTempView uncaches, as Spark's does."""
    source, df = source_df
    df.createOrReplaceTempView("cached_view")
    spark.catalog.cacheTable("cached_view")
    assert spark.catalog.isCached("cached_view") and source.reads == 0
    assert spark.table("cached_view").count() == 10
    reads = source.reads
    assert spark.sql("SELECT count(*) FROM cached_view").collect()[0][0] == 10
    assert source.reads == reads
    assert spark.catalog.dropTempView("cached_view")
    assert not df.is_cached and spark._context.store.nbytes("cache") == 0
    assert not spark.catalog.dropTempView("cached_view")
