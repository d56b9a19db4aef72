"""quiver/planners/optimizer/join_reorder.py: a group of inner joins written in a bad order is reordered
by estimated cardinality: the largest table is probed, smaller inputs are built, joins follow the
predicates (never a cross product they can avoid), the output columns stay as written, outer,
semi and anti joins stay where they are, and the rows are those of the plan as written."""
from __future__ import annotations

import re

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from quiver import functions as F
from quiver.engine.core import plan as L
from quiver.planners.optimizer import fixed_point
from quiver.planners.optimizer.join_reorder import reorder_joins
from quiver.planners.physical import nodes as P
from quiver.planners.statistics import estimate

FACT_ROWS = 20_000
# dimension -> rows; the fact table references each by <dim>_id = i % rows
DIMS = {"dim_a": 50, "dim_b": 20, "dim_c": 5, "dim_d": 200}


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """Parquet files of very different sizes: a fact table, four dimensions, and a chain mid -> small."""
    root = tmp_path_factory.mktemp("join_reorder")
    n = FACT_ROWS
    data = {"fact": pa.table({
        "f_id": pa.array(range(n), pa.int64()),
        **{f"{d[-1]}_id": pa.array([i % rows for i in range(n)], pa.int64()) for d, rows in DIMS.items()},
        "f_v": pa.array([float(i % 97) for i in range(n)]),
        "m_id": pa.array([i % 1000 for i in range(n)], pa.int64()),
    })}
    for d, rows in DIMS.items():
        x = d[-1]
        data[d] = pa.table({f"{x}_key": pa.array(range(rows), pa.int64()),
                            f"{x}_name": pa.array([f"{x}{i}" for i in range(rows)]),
                            f"{x}_w": pa.array([float(i) for i in range(rows)])})
    data["mid"] = pa.table({"mid_key": pa.array(range(1000), pa.int64()),
                            "s_id": pa.array([i % 10 for i in range(1000)], pa.int64())})
    data["small"] = pa.table({"s_key": pa.array(range(10), pa.int64()),
                              "s_name": pa.array([f"s{i}" for i in range(10)])})
    paths = {}
    for name, table in data.items():
        paths[name] = str(root / f"{name}.parquet")
        pq.write_table(table, paths[name])
    return paths


@pytest.fixture
def read(spark, tables):
    """`read(name)`: a fresh DataFrame over one of the Parquet files (fresh column ids each call)."""
    return lambda name: spark.read.parquet(tables[name])


@pytest.fixture
def views(spark, read):
    """Register tables as temp views for one test, dropping them after (the session is shared)."""
    names = []

    def register(*tables):
        for name in tables:
            read(name).createOrReplaceTempView(name)
            names.append(name)
    yield register
    for name in names:
        spark.catalog.dropTempView(name)


BY_COST = "quiver.sql.join.broadcastByCostMaxBytes"


@pytest.fixture
def threshold(spark):
    """Set `spark.sql.autoBroadcastJoinThreshold` for one test, with broadcasting by cost above it
    turned off, so the threshold alone decides."""
    previous = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    by_cost = spark.conf.get(BY_COST, None)
    spark.conf.set(BY_COST, "-1")
    yield lambda v: spark.conf.set("spark.sql.autoBroadcastJoinThreshold", v)
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", previous)
    if by_cost is None:
        spark.conf.unset(BY_COST)
    else:
        spark.conf.set(BY_COST, by_cost)


def _unreordered(plan: L.LogicalPlan) -> L.LogicalPlan:
    """The optimizer's fixed-point rules without join reordering, which the query pipeline runs once after them."""
    return fixed_point(plan)[0]


def _table(plan: L.LogicalPlan) -> str:
    return re.search(r"(\w+)\.parquet", plan.source.describe()).group(1)


def _tables(plan: L.LogicalPlan) -> list[str]:
    """The Parquet tables a plan reads, left to right."""
    return [_table(n) for n in plan.walk() if isinstance(n, L.SourceScan)]


def _joins(plan: L.LogicalPlan) -> list[L.Join]:
    return [n for n in plan.walk() if isinstance(n, L.Join)]


def _leftmost_table(plan: L.LogicalPlan) -> str:
    while plan.children():
        plan = plan.children()[0]
    return _table(plan)


def _star(read):
    """fact joined to three dimensions, written with the fact table built on (the right) first."""
    fact, a, b, c = read("fact"), read("dim_a"), read("dim_b"), read("dim_c")
    return (c.crossJoin(a)  # a cross product the predicates below make unnecessary
            .join(fact, (F.col("a_key") == F.col("a_id")) & (F.col("c_key") == F.col("c_id")))
            .join(b, F.col("b_key") == F.col("b_id")))


def _physical_joins(q) -> list[str]:
    return [type(n).__name__ + ":" + getattr(n, "strategy", "") for n in q._execution().physical.walk()
            if isinstance(n, (P.HashJoinExec, P.NestedLoopJoinExec))]


def _rows(rows) -> list[tuple]:
    return sorted((tuple(r) for r in rows), key=lambda r: tuple((v is None, v if v is not None else 0) for v in r))


def test_star_probes_the_fact_table_and_builds_the_dimensions(read, run_plan):
    q = _star(read)
    assert _joins(q._plan)[-1].how == "cross"  # as written: dim_c x dim_a
    optimized = q._execution().optimized
    assert "reorder_joins" in q._execution().fired_rules
    joins = _joins(optimized)
    assert len(joins) == 3
    # left-deep over the fact table: every join's right side is one dimension, its left holds the fact
    assert _leftmost_table(optimized) == "fact"
    assert sorted(_tables(j.right)[0] for j in joins) == ["dim_a", "dim_b", "dim_c"]
    assert all(len(_tables(j.right)) == 1 for j in joins)
    for j in joins:
        assert j.how == "inner" and j.condition is not None
        assert estimate(j.right).rows <= estimate(j.left).rows
    # the output is the columns as written, in that order, with the same ids
    assert optimized.output == q._plan.output
    assert q.columns == ["c_key", "c_name", "c_w", "a_key", "a_name", "a_w", "f_id", "a_id", "b_id", "c_id",
                         "d_id", "f_v", "m_id", "b_key", "b_name", "b_w"]
    written = _unreordered(q._plan)
    assert any(j.how == "cross" for j in _joins(written))
    assert run_plan(optimized) == run_plan(written) == run_plan(q._plan)


def test_star_rows_match_duckdb(read, tables):
    q = _star(read).select("a_name", "b_name", "c_name", "f_id", "f_v")
    con = duckdb.connect()
    expected = con.execute(
        f"SELECT a_name, b_name, c_name, f_id, f_v FROM read_parquet('{tables['dim_c']}'), "
        f"read_parquet('{tables['dim_a']}'), read_parquet('{tables['fact']}'), read_parquet('{tables['dim_b']}') "
        "WHERE a_key = a_id AND c_key = c_id AND b_key = b_id").fetchall()
    assert len(expected) == FACT_ROWS
    assert _rows(q.collect()) == _rows(expected)


def test_sql_from_list_joins_along_the_predicates_not_through_a_cross_product(spark, views, run_plan):
    views("fact", "dim_a", "dim_b", "dim_d")
    q = spark.sql("SELECT f_id, a_name, b_name, d_name FROM dim_a, dim_b, dim_d, fact "
                  "WHERE a_key = a_id AND b_key = b_id AND d_key = d_id AND a_w < 30")
    written = _unreordered(q._plan)
    assert any(j.how == "cross" for j in _joins(written))
    optimized = q._execution().optimized
    assert all(j.how == "inner" and j.condition is not None for j in _joins(optimized))
    assert _leftmost_table(optimized) == "fact"
    assert not [n for n in q._execution().physical.walk() if isinstance(n, P.NestedLoopJoinExec)]
    assert [a.name for a in optimized.output] == ["f_id", "a_name", "b_name", "d_name"]
    rows = run_plan(optimized)
    assert len(rows) == FACT_ROWS * 30 // 50  # a_w < 30 keeps 30 of 50 dimension rows
    assert rows == run_plan(written)


def test_chain_builds_the_small_end_first_and_probes_with_the_fact(read, run_plan):
    fact, mid, small = read("fact"), read("mid"), read("small")
    q = (small.join(mid, F.col("s_key") == F.col("s_id"))
         .join(fact, F.col("mid_key") == F.col("m_id")))
    optimized = q._execution().optimized
    top = next(n for n in optimized.walk() if isinstance(n, L.Join))
    # |mid ⋈ small| = 1000·10/max(10, 10) = 1000 is the smallest first join; fact (20000) is probed
    assert _tables(top.left) == ["fact"]
    assert sorted(_tables(top.right)) == ["mid", "small"]
    inner = next(n for n in top.right.walk() if isinstance(n, L.Join))
    assert _tables(inner.left) == ["mid"] and _tables(inner.right) == ["small"]
    assert optimized.output == q._plan.output
    assert run_plan(optimized) == run_plan(_unreordered(q._plan))


def test_equalities_are_transitive(spark, read, run_plan):
    """big.k = mid.k AND big.k = small.k also joins mid with small directly, on mid.k = small.k."""
    big = spark.createDataFrame(pa.table({"big_k": pa.array([i % 5000 for i in range(FACT_ROWS)], pa.int64())}))
    mid = spark.createDataFrame(pa.table({"mid_k": pa.array(range(1000), pa.int64())}))
    small = spark.createDataFrame(pa.table({"small_k": pa.array(range(0, 20, 2), pa.int64())}))
    q = (big.join(mid, F.col("big_k") == F.col("mid_k"))
         .join(small, F.col("big_k") == F.col("small_k")))
    optimized = q._execution().optimized
    joins = _joins(optimized)
    # ndv: big_k 5000 (0..4999), mid_k 1000, small_k 10 (0, 2, .., 18; span 19 capped by 10 rows), so
    # big ⋈ mid = 20000·1000/5000 = 4000, big ⋈ small = 20000·10/5000 = 40, mid ⋈ small = 1000·10/1000 = 10:
    # mid and small join first, although no predicate was written between them
    first = joins[-1]
    assert {a.name for a in first.left.output} | {a.name for a in first.right.output} == {"mid_k", "small_k"}
    assert first.condition is not None and first.condition.sql() in ("(mid_k = small_k)", "(small_k = mid_k)")
    assert all(j.how == "inner" for j in joins)
    assert optimized.output == q._plan.output
    rows = run_plan(optimized)
    assert rows == run_plan(q._plan)
    assert len(rows) == 4 * 10  # each of the 10 small keys appears 4 times in big, once in mid


def _boundaries(plan: L.LogicalPlan) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """Each outer/semi/anti join with the tables on each of its sides."""
    return sorted((j.how, tuple(sorted(_tables(j.left))), tuple(sorted(_tables(j.right))))
                  for j in _joins(plan) if j.how not in ("inner", "cross"))


@pytest.mark.parametrize("how", ["left", "left_anti"])
def test_outer_semi_and_anti_joins_are_not_reordered_across(read, run_plan, how):
    fact, a, b, c, d = read("fact"), read("dim_a"), read("dim_b"), read("dim_c"), read("dim_d")
    inner = a.join(fact, F.col("a_key") == F.col("a_id")).join(b, F.col("b_key") == F.col("b_id"))
    kept = (inner.filter(F.col("a_w") < 40)
            .join(d.filter(F.col("d_w") < 100), F.col("d_key") == F.col("d_id"), how)
            .join(c, F.col("c_key") == F.col("c_id"), "left_semi"))
    c2, b2 = read("dim_c"), read("dim_b")
    q = (c2.join(kept, c2["c_key"] == F.col("c_id"))
         .join(b2, b2["b_key"] == F.col("b_id")))
    optimized = q._execution().optimized
    assert "reorder_joins" in q._execution().fired_rules
    assert _boundaries(q._plan) == sorted([
        (how, ("dim_a", "dim_b", "fact"), ("dim_d",)),
        ("left_semi", ("dim_a", "dim_b", "dim_d", "fact"), ("dim_c",)),
    ])
    # reordering keeps the boundaries; push_down_semi_joins then sinks the anti join below the
    # join with dim_b, which does not reduce the rows it filters (the left join must stay put)
    sunk = ("dim_a", "fact") if how == "left_anti" else ("dim_a", "dim_b", "fact")
    assert _boundaries(optimized) == sorted([
        (how, sunk, ("dim_d",)),
        ("left_semi", ("dim_a", "dim_b", "dim_d", "fact"), ("dim_c",)),
    ])
    # the inner group under the outer join is reordered on its own: fact probed there too
    boundary = next(j for j in _joins(optimized) if j.how == how)
    assert _leftmost_table(boundary.left) == "fact"
    # and the group above: the semi join's side (the fact rows) is probed by the two dimensions
    assert _leftmost_table(optimized) == "fact"
    assert optimized.output == q._plan.output
    assert run_plan(optimized) == run_plan(_unreordered(q._plan))


def test_residual_conditions_and_self_joins_keep_their_rows(read, run_plan):
    fact, a, a2, b = read("fact"), read("dim_a"), read("dim_a"), read("dim_b")
    q = (a.join(b, a["a_w"] > b["b_w"] * 2)  # only a non-equi predicate between a and b
         .join(fact, (a["a_key"] == F.col("a_id")) & (b["b_key"] == F.col("b_id")) & (F.col("f_v") < a["a_w"]))
         .join(a2, a2["a_key"] == F.col("a_id")))
    optimized = q._execution().optimized
    assert optimized.output == q._plan.output
    assert not any(j.how == "cross" or j.condition is None for j in _joins(optimized))
    rows = run_plan(optimized)
    assert rows == run_plan(_unreordered(q._plan)) and len(rows) > 0


def test_groups_of_two_and_unknown_inputs_are_left_alone(spark, read, tmp_path):
    fact, a = read("fact"), read("dim_a")
    two = a.join(fact, F.col("a_key") == F.col("a_id"))
    assert reorder_joins(two._plan) is two._plan
    path = tmp_path / "u.csv"
    path.write_text("u_key\n1\n2\n")
    unknown = spark.read.csv(str(path), header=True, inferSchema=True)  # no row count
    three = two.join(unknown, F.col("u_key") == F.col("b_id")).join(read("dim_b"), F.col("b_key") == F.col("b_id"))
    assert reorder_joins(three._plan) == three._plan


def test_explain_names_the_rule_and_the_join_strategy_per_threshold(read, threshold, capsys):
    def physical_section(q):
        q.explain()
        text = capsys.readouterr().out
        assert re.search(r"rules fired: [^)]*\breorder_joins\b", text)
        return text.split("== Physical Plan ==")[1].split("== Stages ==")[0]

    q = _star(read)
    rows = _rows(q.collect())
    threshold("10m")
    section = physical_section(q)
    assert section.count("BroadcastHashJoin") == 3 and "ShuffledHashJoin" not in section
    assert "NestedLoopJoin" not in section
    assert _physical_joins(q) == ["HashJoinExec:broadcast-right"] * 3
    # -1 disables broadcasting, as in Spark
    threshold("-1")
    section = physical_section(q)
    assert section.count("ShuffledHashJoin") == 3 and "BroadcastHashJoin" not in section
    assert _rows(q.collect()) == rows
    # dimension sizes: rows x (key 8 + name 20 + weight 8) bytes: dim_a 1800, dim_b 720, dim_c 180;
    # 1000 bytes broadcasts dim_b and dim_c but shuffles dim_a (and never the fact side)
    threshold("1000")
    section = physical_section(q)
    assert section.count("BroadcastHashJoin") == 2 and section.count("ShuffledHashJoin") == 1
    shuffled = next(n for n in q._execution().physical.walk()
                    if isinstance(n, P.HashJoinExec) and n.strategy == "shuffle")
    assert [_table(n) for n in shuffled.right.walk() if isinstance(n, P.ScanExec)] == ["dim_a"]
    assert _rows(q.collect()) == rows


def test_in_memory_tables_are_reordered_too(spark, run_plan):
    big = spark.createDataFrame(pa.table({"k": pa.array([i % 100 for i in range(5000)], pa.int64()),
                                          "j": pa.array([i % 7 for i in range(5000)], pa.int64())}))
    d1 = spark.createDataFrame(pa.table({"k1": pa.array(range(100), pa.int64())}))
    d2 = spark.createDataFrame(pa.table({"j2": pa.array(range(7), pa.int64())}))
    q = d1.crossJoin(d2).join(big, (F.col("k1") == F.col("k")) & (F.col("j2") == F.col("j")))
    optimized = q._execution().optimized
    leftmost = optimized
    while leftmost.children():
        leftmost = leftmost.children()[0]
    assert leftmost.output[0].name == "k"  # the 5000-row table is probed
    assert all(j.how == "inner" and j.condition is not None for j in _joins(optimized))
    assert optimized.output == q._plan.output
    assert run_plan(optimized) == run_plan(q._plan)
