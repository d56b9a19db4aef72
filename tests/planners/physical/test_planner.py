"""quiver/planners/physical/planner.py: how data is partitioned between operators — broadcast or shuffled joins
by `spark.sql.autoBroadcastJoinThreshold`, two-phase or complete aggregation, range exchange for
a global sort, and no second exchange where the data is already partitioned that way; and each
logical node planned by the function its type maps to, an unknown type named in the error."""
from __future__ import annotations

from dataclasses import dataclass

import duckdb
import pyarrow as pa
import pytest

from quiver import Window
from quiver import functions as F
from quiver.engine.core import plan as L
from quiver.engine.core.errors import QuiverError
from quiver.planners.physical import nodes as P
from quiver.planners.physical import planner
from quiver.planners.physical.planner import PLAN_FNS, PlannerConfig, plan_physical


@pytest.fixture
def threshold(spark):
    """Set `spark.sql.autoBroadcastJoinThreshold` for one test, as the only reason to broadcast."""
    previous = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    by_cost = spark.conf.get("quiver.sql.join.broadcastByCostMaxBytes")
    spark.conf.set("quiver.sql.join.broadcastByCostMaxBytes", "-1")
    yield lambda v: spark.conf.set("spark.sql.autoBroadcastJoinThreshold", v)
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", previous)
    spark.conf.set("quiver.sql.join.broadcastByCostMaxBytes", by_cost)


def _nodes(df, kind):
    """Nodes of a kind in the physical plan, each once: an exchange that also feeds a key filter
    on the join's other side is one node reached twice."""
    seen = {}
    for n in df._execution().physical.walk():
        if isinstance(n, kind):
            seen.setdefault(id(n), n)
    return list(seen.values())


def _exchanges(df):
    return [n.partitioning for n in _nodes(df, P.ExchangeExec)]


TABLE_L = pa.table({"k": pa.array([i % 7 for i in range(60)] + [None], pa.int64()),
                    "v": pa.array(list(range(61)), pa.int64())})
TABLE_R = pa.table({"k": pa.array([0, 1, 2, 3, 9, None], pa.int64()),
                    "w": pa.array([10, 11, 12, 13, 19, 20], pa.int64())})


def _duck(sql: str) -> list:
    con = duckdb.connect()
    con.register("l", TABLE_L)
    con.register("r", TABLE_R)
    return sorted(con.execute(sql).fetchall(), key=lambda r: tuple((v is None, v or 0) for v in r))


def _rows(df) -> list:
    return sorted((tuple(r) for r in df.collect()), key=lambda r: tuple((v is None, v or 0) for v in r))


@pytest.mark.parametrize("how,sql", [("inner", "INNER"), ("left", "LEFT"), ("right", "RIGHT"), ("full", "FULL OUTER")])
@pytest.mark.parametrize("limit,expected", [("10m", "broadcast"), ("-1", "shuffle")])
def test_join_strategy_follows_the_broadcast_threshold(spark, partitions, threshold, how, sql, limit, expected):
    threshold(limit)
    left, right = spark.createDataFrame(TABLE_L), spark.createDataFrame(TABLE_R).withColumnRenamed("k", "rk")
    q = left.join(right, left["k"] == right["rk"], how).select("v", "w")
    joins = _nodes(q, P.HashJoinExec)
    assert len(joins) == 1
    strategy = joins[0].strategy
    if expected == "shuffle":
        assert strategy == "shuffle" and "broadcasting is off" in joins[0].node_string()
        assert [type(p) for p in _exchanges(q)] == [P.HashPartitioning, P.HashPartitioning]
        assert all(p.num_partitions == partitions for p in _exchanges(q))
    elif how == "full":
        assert strategy == "shuffle"  # neither side of a full join can be broadcast
    else:
        assert strategy.startswith("broadcast")
        assert any(isinstance(p, P.BroadcastPartitioning) for p in _exchanges(q))
        # the broadcast side is never the side whose unmatched rows must be kept
        assert strategy == ("broadcast-left" if how == "right" else "broadcast-right")
    assert _rows(q) == _duck(f"SELECT v, w FROM l {sql} JOIN r ON l.k = r.k")


def test_threshold_compares_with_the_estimated_size(spark, threshold):
    left, right = spark.createDataFrame(TABLE_L), spark.createDataFrame(TABLE_R).withColumnRenamed("k", "rk")
    q = left.join(right, left["k"] == right["rk"])
    threshold(str(TABLE_R.nbytes * 100))
    assert _nodes(q, P.HashJoinExec)[0].strategy.startswith("broadcast")
    threshold("1")
    assert _nodes(q, P.HashJoinExec)[0].strategy == "shuffle"


def test_a_side_above_the_threshold_broadcasts_when_cheaper_than_a_shuffle(spark):
    big = spark.createDataFrame(pa.table({"k": pa.array([i % 50 for i in range(20000)], pa.int64())}))
    small = spark.createDataFrame(pa.table({"rk": pa.array(range(50), pa.int64())}))
    q = big.join(small, F.col("k") == F.col("rk"))
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "1")
    try:
        join = _nodes(q, P.HashJoinExec)[0]
        assert join.strategy == "broadcast-right" and join.reason.startswith("by cost")
        assert "BroadcastHashJoin inner [k = rk] (by cost: est. 400 B x " in join.node_string()
        # a build side as large as the probe side is shuffled, and explain says why
        assert _nodes(big.join(big.withColumnRenamed("k", "rk"), F.col("k") == F.col("rk")),
                      P.HashJoinExec)[0].strategy == "shuffle"
        spark.conf.set("quiver.sql.join.broadcastByCostMaxBytes", "-1")
        join = _nodes(q, P.HashJoinExec)[0]
        assert join.strategy == "shuffle" and "broadcasting costs more" in join.node_string()
        assert _rows(q) == sorted((k, k) for k in [i % 50 for i in range(20000)])
    finally:
        spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")
        spark.conf.unset("quiver.sql.join.broadcastByCostMaxBytes")


def test_non_equi_join_is_a_broadcast_nested_loop(spark, partitions):
    left, right = spark.createDataFrame(TABLE_L), spark.createDataFrame(TABLE_R).withColumnRenamed("k", "rk")
    q = left.join(right, left["v"] < right["w"]).select("v", "w")
    assert len(_nodes(q, P.NestedLoopJoinExec)) == 1
    assert _rows(q) == _duck("SELECT v, w FROM l JOIN r ON l.v < r.w")


def test_decomposable_aggregates_run_in_two_phases_around_a_hash_exchange(spark, partitions):
    q = spark.createDataFrame(TABLE_L).groupBy("k").agg(F.sum("v").alias("s"), F.avg("v").alias("a"))
    modes = [n.mode for n in _nodes(q, P.HashAggregateExec)]
    assert modes == ["final", "partial"]
    exchange = _nodes(q, P.ExchangeExec)[0]
    assert isinstance(exchange.partitioning, P.HashPartitioning)
    assert isinstance(exchange.child, P.HashAggregateExec) and exchange.child.mode == "partial"
    assert _rows(q) == _duck("SELECT k, sum(v), avg(v) FROM l GROUP BY k")


def test_count_distinct_runs_once_in_complete_mode_after_the_exchange(spark, partitions):
    q = spark.createDataFrame(TABLE_L).groupBy((F.col("v") % 3).alias("g")).agg(F.countDistinct("k").alias("d"))
    assert [n.mode for n in _nodes(q, P.HashAggregateExec)] == ["complete"]
    assert len(_nodes(q, P.ExchangeExec)) == 1
    assert _rows(q) == _duck("SELECT v % 3, count(DISTINCT k) FROM l GROUP BY v % 3")


def test_global_aggregate_gathers_into_one_partition(spark, partitions):
    q = spark.createDataFrame(TABLE_L).agg(F.sum("v"), F.countDistinct("k"))
    assert all(isinstance(p, P.SinglePartition) for p in _exchanges(q))
    assert _rows(q) == [(sum(range(61)), 7)]


def test_global_sort_uses_a_range_exchange(spark, partitions):
    q = spark.createDataFrame(TABLE_L).orderBy(F.col("k").desc(), "v")
    exchange = _nodes(q, P.ExchangeExec)[0]
    if partitions > 1:
        assert isinstance(exchange.partitioning, P.RangePartitioning)
        assert exchange.partitioning.num_partitions == partitions
    else:
        assert isinstance(exchange.partitioning, P.SinglePartition)
    assert isinstance(q._execution().physical, P.SortExec)
    got = [tuple(r) for r in q.collect()]
    con = duckdb.connect()
    con.register("l", TABLE_L)
    assert got == con.execute("SELECT k, v FROM l ORDER BY k DESC NULLS LAST, v").fetchall()


def test_sort_with_limit_is_a_top_k_without_a_range_exchange(spark, partitions):
    q = spark.createDataFrame(TABLE_L).orderBy("v").limit(3)
    assert len(_nodes(q, P.TopKExec)) == 2
    assert not any(isinstance(p, P.RangePartitioning) for p in _exchanges(q))
    assert [r.v for r in q.collect()] == [0, 1, 2]


def test_window_after_group_by_on_the_same_key_reuses_the_exchange(spark, partitions):
    agg = spark.createDataFrame(TABLE_L).groupBy("k").agg(F.sum("v").alias("s"))
    q = agg.withColumn("r", F.rank().over(Window.partitionBy("k").orderBy("s")))
    assert len(_nodes(q, P.ExchangeExec)) == 1
    assert sorted(r.r for r in q.collect()) == [1] * 8


def test_window_on_a_different_key_adds_an_exchange(spark, partitions):
    agg = spark.createDataFrame(TABLE_L).groupBy("k").agg(F.sum("v").alias("s"))
    q = agg.withColumn("r", F.rank().over(Window.partitionBy("s").orderBy("k")))
    assert len(_nodes(q, P.ExchangeExec)) == 2


def test_shuffled_join_after_group_by_reuses_the_aggregate_exchange(spark, partitions, threshold):
    threshold("-1")
    agg = spark.createDataFrame(TABLE_L).groupBy("k").agg(F.sum("v").alias("s"))
    right = spark.createDataFrame(TABLE_R)
    q = agg.join(right, agg["k"] == right["k"]).select(agg["k"], "s", "w")
    join = _nodes(q, P.HashJoinExec)[0]
    assert join.strategy == "shuffle"
    assert not isinstance(join.left, P.ExchangeExec)  # already hash-partitioned on k by the aggregate
    assert isinstance(join.right, P.ExchangeExec)
    assert _rows(q) == _duck("SELECT l.k, sum(v), w FROM l JOIN r ON l.k = r.k GROUP BY l.k, w")


def test_global_limit_gathers_local_limits(spark):
    q = spark.range(0, 100, numPartitions=4).limit(5)
    limits = _nodes(q, P.LimitExec)
    assert len(limits) == 2 and isinstance(_exchanges(q)[0], P.SinglePartition)
    assert len(q.collect()) == 5


def test_explain_names_the_strategies(spark, threshold):
    threshold("-1")
    left, right = spark.createDataFrame(TABLE_L), spark.createDataFrame(TABLE_R).withColumnRenamed("k", "rk")
    text = left.join(right, left["k"] == right["rk"])._execution().explain_string()
    assert "ShuffledHashJoin inner" in text and "Exchange hashpartitioning(k, " in text
    threshold("10m")
    text = left.join(right, left["k"] == right["rk"])._execution().explain_string()
    assert "BroadcastHashJoin inner" in text and "BroadcastExchange" in text


@pytest.mark.parametrize("how", ["left_semi", "left_anti", "inner", "left"])
def test_a_shuffled_join_builds_on_a_much_smaller_left_side(spark, partitions, threshold, how):
    threshold("-1")
    small = spark.createDataFrame(TABLE_R).withColumnRenamed("k", "rk")
    big = spark.createDataFrame(TABLE_L)
    q = small.join(big, (small["rk"] == big["k"]) & (small["w"] != big["v"]), how)
    join = _nodes(q, P.HashJoinExec)[0]
    assert join.strategy == "shuffle" and join.build_left and "builds on the left" in join.node_string()
    sql = {"left_semi": "SELECT * FROM r WHERE EXISTS (SELECT 1 FROM l WHERE r.k = l.k AND r.w <> l.v)",
           "left_anti": "SELECT * FROM r WHERE NOT EXISTS (SELECT 1 FROM l WHERE r.k = l.k AND r.w <> l.v)",
           "inner": "SELECT * FROM r JOIN l ON r.k = l.k AND r.w <> l.v",
           "left": "SELECT * FROM r LEFT JOIN l ON r.k = l.k AND r.w <> l.v"}[how]
    assert _rows(q) == _duck(sql)


@dataclass(frozen=True)
class Sample(L.LogicalPlan):
    """A logical node no planning function is registered for."""

    child: L.LogicalPlan
    fraction: float

    @property
    def output(self):
        return self.child.output


def _planner_config(spark) -> PlannerConfig:
    return PlannerConfig(shuffle_partitions=spark.conf.shuffle_partitions(),
                         broadcast_threshold=spark.conf.broadcast_threshold(),
                         default_parallelism=spark._context.runtime.parallelism)


def test_a_node_type_without_a_planning_function_raises_naming_it(spark):
    with pytest.raises(QuiverError, match=r"no physical plan for logical node Sample; the physical planner plans "
                                          r"Aggregate, BroadcastHint, .*, Window"):
        plan_physical(L.Limit(Sample(spark.range(10)._plan, 0.5), 3), _planner_config(spark))


def test_every_logical_node_type_has_a_planning_function():
    """Dispatch is by exact type, so each concrete node class of engine/core/plan.py is in the table itself
    (the bases LogicalPlan and UnaryNode are never planned)."""
    classes = {c for c in vars(L).values() if isinstance(c, type) and issubclass(c, L.LogicalPlan)}
    node_types = {c for c in classes if not any(o is not c and issubclass(o, c) for o in classes)}
    assert node_types and node_types == set(PLAN_FNS)


def test_each_node_is_planned_by_the_function_registered_for_its_type(spark, monkeypatch):
    planned: list[str] = []

    def counted(fn):
        def plan(node, planner):
            planned.append(type(node).__name__)
            return fn(node, planner)
        return plan

    monkeypatch.setattr(planner, "PLAN_FNS", {t: counted(fn) for t, fn in PLAN_FNS.items()})
    df = spark.range(10).filter(F.col("id") > 2).groupBy((F.col("id") % 3).alias("k")).count().orderBy("k")
    plan_physical(df._plan, _planner_config(spark))
    assert planned == [type(n).__name__ for n in df._plan.walk()]
