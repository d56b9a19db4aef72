"""quiver/planners/physical/planner.py's key filters: a shuffled join whose one side holds far fewer distinct keys
filters the other side by them before the shuffle (only a side whose unmatched rows the join drops);
the shared exchange is one stage run first; rows never change, and a large side is not used."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from quiver import functions as F
from quiver.planners.physical import nodes as P
from quiver.planners.physical import planner

BY_COST = "quiver.sql.join.broadcastByCostMaxBytes"


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """orders (3000, o_day 0..99) and lines (6 per order, none for orders 3, 203, ...): Parquet, so
    estimates have statistics."""
    root = tmp_path_factory.mktemp("keyfilter")
    pq.write_table(pa.table({"o_key": pa.array(range(3000), pa.int64()),
                             "o_day": pa.array([i % 100 for i in range(3000)], pa.int64())}), root / "orders.parquet")
    lines = _lines()
    pq.write_table(pa.table({"l_order": pa.array([o for o, _ in lines], pa.int64()),
                             "l_qty": pa.array([q for _, q in lines], pa.int64())}), root / "lines.parquet")
    return root


@pytest.fixture
def shuffled(spark):
    """Broadcasting off for one test, so every equi-join is a shuffled hash join."""
    previous = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    yield
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", previous)


def _frames(spark, tables):
    orders = spark.read.parquet(str(tables / "orders.parquet")).filter(F.col("o_day") == 3)  # 30 orders
    lines = spark.read.parquet(str(tables / "lines.parquet"))
    return orders, lines


def _key_filters(df) -> list[P.KeyFilterExec]:
    return [n for n in df._execution().physical.walk() if isinstance(n, P.KeyFilterExec)]


def _lines() -> list[tuple[int, int]]:
    return [(i // 6, i % 7) for i in range(18000) if (i // 6) % 200 != 3]


def _expected(how: str) -> list[tuple]:
    kept = [k for k in range(3000) if k % 100 == 3]
    ordered = {o for o, _ in _lines()}
    if how == "left_semi":
        return sorted((k, k % 100) for k in kept if k in ordered)
    if how == "left_anti":
        return sorted((k, k % 100) for k in kept if k not in ordered)
    joined = [(k, k % 100, o, q) for k in kept for o, q in _lines() if o == k]
    if how == "left":
        joined += [(k, k % 100, None, None) for k in kept if k not in ordered]
    return sorted(joined, key=lambda r: tuple(-1 if v is None else v for v in r))


@pytest.mark.parametrize("how", ["inner", "left_semi", "left_anti", "left"])
def test_the_big_side_is_filtered_and_rows_do_not_change(spark, tables, shuffled, how):
    orders, lines = _frames(spark, tables)
    q = orders.join(lines, F.col("o_key") == F.col("l_order"), how)
    [key_filter] = _key_filters(q)
    assert key_filter.output[0].name == "l_order"  # lines, filtered by the orders' keys
    rows = sorted((tuple(r) for r in q.collect()), key=lambda r: tuple(-1 if v is None else v for v in r))
    assert rows == _expected(how) != []
    stages = q._execution().stages.stages
    readers = [s for s in stages if any(isinstance(n, P.ShuffleReadExec) and n.stage_id == 0 for n in s.root.walk())]
    assert len(readers) == 2  # the orders' exchange is one stage, read by the key filter and the join


def test_a_side_the_join_keeps_whole_is_not_filtered(spark, tables, shuffled):
    orders, lines = _frames(spark, tables)
    preserved = lines.join(orders, F.col("o_key") == F.col("l_order"), "left")
    assert [f.output[0].name for f in _key_filters(preserved)] == ["o_key"]  # orders may be; lines never
    assert _key_filters(orders.join(lines, F.col("o_key") == F.col("l_order"), "full")) == []


def _filtered_stage_rows(spark, q) -> tuple[str, int]:
    """The first column of the side that has a key filter, and the rows its map stage wrote last job."""
    stages = q._execution().stages.stages
    [target] = [s for s in stages if any(isinstance(n, P.KeyFilterExec) for n in s.root.walk())]
    column = next(n for n in target.root.walk() if isinstance(n, P.KeyFilterExec)).output[0].name
    return column, next(m.rows_written for m in spark._context.scheduler.last_job.stages if m.stage_id == target.id)


def test_the_filter_is_used_only_when_the_other_side_turns_out_small(spark, tables, shuffled):
    lines = spark.read.parquet(str(tables / "lines.parquet"))
    few = spark.read.parquet(str(tables / "orders.parquet")).filter(F.col("o_day") == 3)  # 30 orders
    q = few.join(lines, F.col("o_key") == F.col("l_order"), "left_semi")
    q.collect()
    assert _filtered_stage_rows(spark, q) == ("l_order", 90)  # the 15 of 30 orders with lines, 6 each
    # Every order: the keys are as many as the other side's, so its rows pass through whole.
    every = spark.read.parquet(str(tables / "orders.parquet"))
    q = every.join(lines, F.col("o_key") == F.col("l_order"), "left_semi")
    q.collect()
    column, rows = _filtered_stage_rows(spark, q)
    assert rows == {"o_key": 3000, "l_order": len(_lines())}[column]


def test_a_side_larger_than_expected_passes_rows_through(spark, tables, shuffled, monkeypatch):
    monkeypatch.setattr(planner, "KEY_FILTER_MAX_ROWS", 10)  # the 30 orders are more than this
    orders, lines = _frames(spark, tables)
    q = orders.join(lines, F.col("o_key") == F.col("l_order"), "left_semi")
    assert _key_filters(q)[0].max_rows == 10
    assert sorted(tuple(r) for r in q.collect()) == _expected("left_semi") != []


def _big_orders(spark, tables, more_than: int):
    """The orders whose line quantities sum past `more_than`: an aggregate with a HAVING, whose size no
    estimate knows, already partitioned on the join key."""
    lines = spark.read.parquet(str(tables / "lines.parquet"))
    return lines.groupBy("l_order").agg(F.sum("l_qty").alias("total")).filter(F.col("total") > more_than)


def _totals() -> dict[int, int]:
    totals: dict[int, int] = {}
    for o, q in _lines():
        totals[o] = totals.get(o, 0) + q
    return totals


@pytest.mark.parametrize("how", ["left_semi", "inner"])
def test_a_filtered_aggregate_is_materialized_to_filter_the_other_side(spark, tables, shuffled, how):
    orders = spark.read.parquet(str(tables / "orders.parquet"))
    big = _big_orders(spark, tables, 20)  # one in seven of the 2,985 orders with lines (their sums run 15 to 21)
    q = orders.join(big, F.col("o_key") == F.col("l_order"), how)
    [key_filter] = _key_filters(q)
    assert key_filter.output[0].name == "o_key"  # orders, filtered by the aggregate's keys
    assert isinstance(key_filter.source, P.ExchangeExec)  # the aggregate's rows, as a stage of their own
    wanted = sorted(o for o, t in _totals().items() if t > 20)
    assert 0 < len(wanted) < 3000 // 4
    rows = sorted(tuple(r) for r in q.collect())
    if how == "left_semi":
        assert rows == [(k, k % 100) for k in wanted]
    else:
        assert rows == [(k, k % 100, k, _totals()[k]) for k in wanted]
    assert _filtered_stage_rows(spark, q) == ("o_key", len(wanted))


def test_a_filtered_aggregate_that_keeps_most_groups_filters_nothing(spark, tables, shuffled):
    orders = spark.read.parquet(str(tables / "orders.parquet"))
    q = orders.join(_big_orders(spark, tables, 0), F.col("o_key") == F.col("l_order"), "left_semi")
    kept = sorted(o for o, t in _totals().items() if t > 0)
    assert sorted(tuple(r) for r in q.collect()) == [(k, k % 100) for k in kept]
    assert _filtered_stage_rows(spark, q) == ("o_key", 3000)  # too many keys to pay: every order passes


def test_an_unfiltered_aggregate_gets_no_exchange_of_its_own(spark, tables, shuffled):
    orders = spark.read.parquet(str(tables / "orders.parquet"))
    lines = spark.read.parquet(str(tables / "lines.parquet"))
    totals = lines.groupBy("l_order").agg(F.sum("l_qty").alias("total"))
    q = orders.join(totals, F.col("o_key") == F.col("l_order"), "inner")
    join = next(n for n in q._execution().physical.walk() if isinstance(n, P.HashJoinExec))
    assert not isinstance(join.right, P.ExchangeExec)  # the aggregate's partitioning serves the join as is
