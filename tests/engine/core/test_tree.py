"""quiver/engine/core/tree.py: the one tree base of expressions, logical and physical plans —
children from fields, with_children, walk, transform_up/down, and what rides on a node:
annotations that every rewrite keeps, memos that every rebuilt node starts without."""
from __future__ import annotations

import dataclasses
import pickle
from dataclasses import dataclass, field

import pyarrow as pa
import pytest

from quiver.engine.core import plan as L
from quiver.engine.core import types as T
from quiver.engine.core.expressions import (
    Alias,
    And,
    AttributeRef,
    BinaryArithmetic,
    Comparison,
    Expr,
    Literal,
    transform_expr,
)
from quiver.engine.core.subqueries import Exists, OuterReference, has_subquery
from quiver.engine.core.tree import TreeNode
from quiver.planners.optimizer.constant_folding import fold_expression
from quiver.planners.physical import nodes as P
from quiver.planners.statistics import estimate


@dataclass(frozen=True, eq=False)
class Node(TreeNode["Node"]):
    """A tree of its own, to test the base apart from Quiver's three."""


@dataclass(frozen=True)
class Leaf(Node):
    name: str


@dataclass(frozen=True)
class Pair(Node):
    left: Node
    label: str
    right: Node


@dataclass(frozen=True)
class Many(Node):
    items: tuple[Node, ...]
    note: Node | None = None
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Pointer(Node):
    """Names another node without having it as a child."""

    leaf_fields = frozenset({"target"})

    target: Node


def names(nodes) -> list[str]:
    return [n.name if isinstance(n, Leaf) else type(n).__name__ for n in nodes]


A, B, C, D = Leaf("a"), Leaf("b"), Leaf("c"), Leaf("d")


def test_children_are_the_node_valued_fields_in_field_order():
    assert Pair(A, "x", B).children() == (A, B)
    assert Many((A, B), C).children() == (A, B, C)
    assert Many((), None, ("t",)).children() == ()  # empty tuples, None and tuples of other values are not children
    assert Pointer(A).children() == ()  # a leaf field names a node that is not a child
    assert A.children() == ()


def test_children_are_worked_out_once_per_node():
    node = Many((A, B), C)
    assert node.children() is node.children()


def test_each_tree_counts_only_its_own_nodes_as_children():
    x = AttributeRef("x", T.IntegerType(), True, 1)
    scan = L.LocalRelation(pa.table({"x": [1]}), (x,))
    exists = Exists(L.Filter(scan, Comparison("=", x, Literal(1, T.IntegerType()))), 7)
    assert exists.children() == ()  # the plan a subquery holds is not an expression child
    assert L.Filter(scan, exists).children() == (scan,)  # nor an expression a plan child
    assert OuterReference(x).children() == ()


def test_walk_is_pre_order_left_to_right():
    tree = Pair(Many((A, B)), "x", Pair(C, "y", D))
    assert names(tree.walk()) == ["Pair", "Many", "a", "b", "Pair", "c", "d"]


def test_with_children_rebuilds_the_fields_in_order():
    tree = Many((A, B), C, ("t",))
    rebuilt = tree.with_children((D, C, A))
    assert rebuilt == Many((D, C), A, ("t",))
    assert Pair(A, "x", B).with_children((B, A)) == Pair(B, "x", A)


def test_with_children_keeps_the_node_when_no_child_changes():
    tree = Pair(A, "x", B)
    assert tree.with_children((A, B)) is tree


def test_with_children_refuses_a_wrong_number_of_children():
    with pytest.raises(ValueError, match="Pair has 2 children, got 1"):
        Pair(A, "x", B).with_children((A,))


def test_transform_up_visits_children_before_their_parent():
    seen: list[str] = []
    tree = Pair(Many((A, B)), "x", C)
    tree.transform_up(lambda n: seen.append(names([n])[0]) or n)
    assert seen == ["a", "b", "Many", "c", "Pair"]


def test_transform_up_rebuilds_only_the_changed_path():
    left, right = Many((A, B)), Pair(C, "y", D)
    tree = Pair(left, "x", right)
    out = tree.transform_up(lambda n: Leaf("z") if n == D else n)
    assert out == Pair(left, "x", Pair(C, "y", Leaf("z")))
    assert out.left is left  # an unchanged subtree stays the same object
    assert tree.transform_up(lambda n: n) is tree


def test_transform_up_gives_fn_the_rebuilt_node():
    tree = Pair(A, "x", B)
    out = tree.transform_up(lambda n: Leaf("+".join(names(n.children()))) if isinstance(n, Pair) else Leaf(n.name * 2))
    assert out == Leaf("aa+bb")


def test_transform_down_visits_the_children_of_what_fn_returns():
    seen: list[str] = []

    def fn(n: Node) -> Node:
        seen.append(names([n])[0])
        return Pair(C, "new", D) if n == A else n

    out = Pair(A, "x", B).transform_down(fn)
    assert out == Pair(Pair(C, "new", D), "x", B)
    assert seen == ["Pair", "a", "c", "d", "b"]


def test_transform_down_keeps_an_unchanged_tree():
    tree = Pair(Many((A, B)), "x", C)
    assert tree.transform_down(lambda n: n) is tree


def test_expression_transforms_share_the_base():
    x = AttributeRef("x", T.IntegerType(), True, 1)
    one = Literal(1, T.IntegerType())
    e = BinaryArithmetic("+", x, BinaryArithmetic("*", x, one))
    out = transform_expr(e, lambda n: Literal(2, T.IntegerType()) if n == one else n)
    assert out == BinaryArithmetic("+", x, BinaryArithmetic("*", x, Literal(2, T.IntegerType())))
    assert [type(n).__name__ for n in e.walk()] == ["BinaryArithmetic", "AttributeRef", "BinaryArithmetic",
                                                    "AttributeRef", "Literal"]


# ---------------------------------------------------------------- annotations and memos


def _scan(rows: int = 10) -> tuple[AttributeRef, P.PhysicalPlan]:
    x = AttributeRef("x", T.LongType(), True, 1)
    return x, P.RangeExec(0, rows, 1, 2, x)


def test_annotations_survive_replace_with_children_and_transforms():
    x, scan = _scan()
    node = P.FilterExec(scan, Comparison(">", x, Literal(1, T.LongType())), estimate=(5, 40), device_pin="gpu")
    other = P.RangeExec(0, 99, 1, 3, x)
    for rebuilt in (
        dataclasses.replace(node, condition=Comparison(">", x, Literal(2, T.LongType()))),
        node.with_children((other,)),
        node.transform_up(lambda n: other if n is scan else n),
        node.transform_down(lambda n: other if n is scan else n),
    ):
        assert rebuilt is not node
        assert rebuilt.estimate == (5, 40) and rebuilt.device_pin == "gpu"
        assert P.estimated_size(rebuilt) == (5, 40) and rebuilt.device_pin == "gpu"


def test_annotations_take_no_part_in_equality_hash_or_repr():
    x, scan = _scan()
    cond = Comparison(">", x, Literal(1, T.LongType()))
    plain, annotated = P.FilterExec(scan, cond), P.FilterExec(scan, cond, estimate=(5, 40), device_pin="gpu")
    assert plain == annotated and hash(plain) == hash(annotated)
    assert repr(plain) == repr(annotated) and "gpu" not in repr(annotated)


def test_annotations_travel_with_a_pickled_plan():
    _, scan = _scan()
    node = P.LimitExec(scan, 3, estimate=(3, 24), device_pin="npu")
    back = pickle.loads(pickle.dumps(node))
    assert back == node and back.estimate == (3, 24) and back.device_pin == "npu"


def test_an_operator_without_an_estimate_reads_its_inputs():
    _, scan = _scan()
    assert P.estimated_size(P.LimitExec(P.LimitExec(scan, 3, estimate=(3, 24)), 2)) == (3, 24)
    assert P.estimated_size(P.LimitExec(scan, 2)) is None


def test_a_memo_is_dropped_by_every_rebuilt_node():
    x = AttributeRef("x", T.IntegerType(), True, 1)
    e = And(Comparison(">", x, Literal(1, T.IntegerType())), Comparison("<", x, Literal(5, T.IntegerType())))
    assert not e.folded
    assert e.memoize("folded", True) is True and e.folded
    assert not dataclasses.replace(e, right=e.left).folded
    assert not e.with_children((e.right, e.left)).folded
    assert e.with_children(e.children()).folded  # the same node: its memo holds
    assert e == And(e.left, e.right) and hash(e) == hash(And(e.left, e.right))  # memos are not compared


def test_memoize_writes_only_memo_fields():
    x = AttributeRef("x", T.IntegerType(), True, 1)
    with pytest.raises(AttributeError, match="AttributeRef.name is not a memo field"):
        x.memoize("name", "y")
    with pytest.raises(dataclasses.FrozenInstanceError):
        x.folded = True  # type: ignore[misc]


def test_folding_marks_its_result_and_a_rewritten_expression_folds_again():
    x = AttributeRef("x", T.IntegerType(), True, 1)
    one, two, three = (Literal(v, T.IntegerType()) for v in (1, 2, 3))
    folded = fold_expression(Comparison("=", x, BinaryArithmetic("+", one, two)))
    assert folded == Comparison("=", x, three) and folded.folded
    assert fold_expression(folded) is folded
    # A rewrite that puts a foldable sub-expression in must not be skipped as already folded.
    rewritten = transform_expr(folded, lambda n: BinaryArithmetic("+", one, one) if n == x else n)
    assert not rewritten.folded
    assert fold_expression(rewritten) == Literal(False, T.BooleanType())


def test_a_logical_estimate_is_kept_per_node_and_worked_out_again_for_a_changed_node():
    x = AttributeRef("x", T.LongType(), False, 1)
    small, large = L.RangeRelation(0, 10, 1, None, x), L.RangeRelation(0, 1000, 1, None, x)
    limit = L.Limit(large, 500)
    first = estimate(limit)
    assert first.rows == 500 and estimate(limit) is first
    assert estimate(limit.with_children((small,))).rows == 10
    assert estimate(dataclasses.replace(limit, n=100)).rows == 100
    assert estimate(limit) is first


def test_has_subquery_sees_a_subquery_anywhere_below():
    x = AttributeRef("x", T.IntegerType(), True, 1)
    scan = L.LocalRelation(pa.table({"x": [1]}), (x,))
    exists = Exists(scan, 7)
    assert has_subquery(And(Comparison(">", x, Literal(1, T.IntegerType())), exists))
    assert not has_subquery(Comparison(">", x, Literal(1, T.IntegerType())))


# ---------------------------------------------------------------- unary nodes


def test_a_unary_logical_node_has_its_childs_output_unless_it_says_otherwise():
    x, y = AttributeRef("x", T.LongType(), False, 1), AttributeRef("y", T.LongType(), False, 2)
    scan = L.RangeRelation(0, 10, 1, None, x)
    cond = Comparison(">", x, Literal(1, T.LongType()))
    for node in (L.Filter(scan, cond), L.Limit(scan, 3), L.Offset(scan, 3), L.DeviceHint(scan, "gpu"),
                 L.BroadcastHint(scan), L.Sort(scan, ()), L.Repartition(scan, 2)):
        assert isinstance(node, L.UnaryNode) and node.children() == (scan,)
        assert node.output == (x,)
    assert L.Project(scan, (Alias(x, "y", 2),)).output == (y,)


def test_a_unary_operator_has_its_childs_output_and_partitions_unless_it_says_otherwise():
    x, scan = _scan()
    for node in (P.FilterExec(scan, Literal(True, T.BooleanType())), P.LimitExec(scan, 3), P.SortExec(scan, ())):
        assert isinstance(node, P.UnaryExecNode)
        assert node.output == (x,) and node.num_partitions == 2
    assert P.CoalesceExec(scan, 1).num_partitions == 1
    assert P.ExchangeExec(scan, P.HashPartitioning((x,), 8)).num_partitions == 8


def test_a_key_filter_has_two_children_and_its_first_childs_rows():
    x, scan = _scan()
    source = P.ExchangeExec(P.RangeExec(0, 5, 1, 1, x), P.HashPartitioning((x,), 4))
    node = P.KeyFilterExec(scan, (x,), source, (x,), 100, 1000)
    assert node.children() == (scan, source)
    assert node.output == (x,) and node.num_partitions == 2


def test_expr_is_a_tree_node_with_its_own_root():
    assert Expr.tree_root is Expr and And.tree_root is Expr
    assert L.Filter.tree_root is L.LogicalPlan and P.FilterExec.tree_root is P.PhysicalPlan


def test_node_fields_leave_out_annotations_and_memos():
    from quiver.engine.core.tree import node_fields

    assert node_fields(P.FilterExec) == ("child", "condition")
    assert node_fields(L.Filter) == ("child", "condition")
    assert node_fields(And) == ("left", "right")


def test_a_declared_annotation_on_a_tree_of_ones_own():
    @dataclass(frozen=True)
    class Noted(Node):
        child: Node
        note: str | None = field(default=None, compare=False, hash=False, repr=False, kw_only=True)

    n = Noted(A, note="kept")
    assert n.with_children((B,)).note == "kept" and n.with_children((B,)) == Noted(B)
