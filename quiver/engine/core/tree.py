"""One base for Quiver's immutable trees: expressions, logical plans and physical plans.

A node is a frozen dataclass. Its children are the values of its fields that are nodes of its
own tree (a field holds one node or a tuple of them), so `children`, `with_children`, `walk`
and the transforms are written here once and work on every node type without knowing it
(as Spark's `TreeNode`, ibis's `Node` and Daft's `TreeNode` do). A tree's root class
subclasses `TreeNode[Root]` directly: an expression's children are expressions, and the
plan a subquery expression holds is not one of them.

Besides its fields a node can carry two kinds of extra values, both declared dataclass fields
that take no part in equality, hashing or repr:

- An *annotation*, `field(default=None, compare=False, hash=False, repr=False, kw_only=True)`:
  what a planner decided about the node and cannot work out from it again (a physical
  operator's size estimate, the device a hint pinned it to). `dataclasses.replace`,
  `with_children` and so every transform carry it to the rebuilt node.
- A *memo*, `field(default=..., init=False, compare=False, hash=False, repr=False)`: a value
  that code outside the node's class works out from the node (a logical plan's size estimate,
  constant folding's "nothing left to fold"), kept because the node is immutable and is asked
  again and again. `replace` does not copy an `init=False` field, so every rebuilt node starts
  without it: what held for the old node may not hold for a changed one. It is set with
  `memoize`.

What a node's own class works out from its fields (its children, whether it is resolved, its
output) is a `functools.cached_property`, which a rebuilt node likewise works out afresh.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import fields, replace
from functools import cached_property
from typing import Any, ClassVar, Generic, TypeVar, cast

N = TypeVar("N", bound="TreeNode[Any]")
V = TypeVar("V")
F = TypeVar("F", bound=Callable[..., Any])


class TreeNode(Generic[N]):
    """Base of immutable tree nodes whose children are their node-valued fields."""

    # The class whose instances are this tree's nodes: the class that subclasses TreeNode directly.
    tree_root: ClassVar[type]
    # Fields that hold nodes of the tree but are not children (a leaf that only names another node).
    leaf_fields: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if TreeNode in cls.__bases__:
            cls.tree_root = cls

    @cached_property
    def _children(self) -> tuple[N, ...]:
        return members(self, child_fields(type(self)), self.tree_root)

    def children(self) -> tuple[N, ...]:
        """The node's children in field order; worked out once per node, since rules ask again and again."""
        return self._children

    def with_children(self, new: tuple[N, ...]) -> N:
        """This node with `new` in place of its children, in the order `children()` gives them.

        The node itself when every child is the same object, so a rule that changes nothing keeps
        the node (and its memos) and the optimizer's fixed-point check can compare by identity.
        """
        if len(new) != len(self.children()):
            raise ValueError(f"{type(self).__name__} has {len(self.children())} children, got {len(new)}")
        replacements = iter(new)
        return map_members(self, child_fields(type(self)), self.tree_root, lambda _: next(replacements))

    def walk(self) -> Iterator[N]:
        """Every node of the tree, in pre-order (a node before its children, children left to right)."""
        stack: list[Any] = [self]
        while stack:
            node = stack.pop()
            yield node
            kids = node.children()
            if kids:
                stack.extend(reversed(kids))

    def transform_up(self, fn: Callable[[N], N]) -> N:
        """Rebuild the tree bottom-up, applying `fn` to every node after its children.

        Unchanged subtrees stay the same objects (`with_children` keeps a node whose children are unchanged).
        """
        kids = self.children()
        node: Any = self.with_children(tuple([k.transform_up(fn) for k in kids])) if kids else self
        return fn(node)

    def transform_down(self, fn: Callable[[N], N]) -> N:
        """Apply `fn` top-down: the children of the node `fn` returns are visited next."""
        node = fn(cast(N, self))
        kids = node.children()
        return node.with_children(tuple([k.transform_down(fn) for k in kids])) if kids else node

    def memoize(self, name: str, value: V) -> V:
        """Keep `value` in this node's memo field `name` and return it.

        The one write to a frozen node after it is built, and only of a field declared as a memo
        (`init=False`), whose value the node's own fields determine.
        """
        if name not in memo_fields(type(self)):
            raise AttributeError(f"{type(self).__name__}.{name} is not a memo field")
        object.__setattr__(self, name, value)
        return value

    def node_string(self) -> str:
        """One line describing this node, without its children, for explain()."""
        return type(self).__name__

    def tree_string(self, indent: int = 0) -> str:
        """The tree as explain() shows it: one `node_string` per line, children indented under `+-`."""
        lines = [("   " * (indent - 1) + "+- " if indent else "") + self.node_string()]
        for c in self.children():
            lines.append(c.tree_string(indent + 1))
        return "\n".join(lines)


def per_class(fn: F) -> F:
    """`functools.cache` for a function of a node class, typed as `fn` itself: typeshed's cache wrapper takes
    Hashable arguments, and mypy does not see a class whose instances define `__hash__` as one."""
    return cast(F, functools.cache(fn))


@per_class
def node_fields(cls: type) -> tuple[str, ...]:
    """The fields that make a node what it is, those compared for equality (annotations and memos
    excluded); looked up once per class, as `dataclasses.fields` is slow and tree walks ask on every node."""
    return tuple(f.name for f in fields(cls) if f.compare)


@per_class
def child_fields(cls: type[TreeNode[Any]]) -> tuple[str, ...]:
    """The fields of `cls` that may hold its children."""
    return tuple(name for name in node_fields(cls) if name not in cls.leaf_fields)


@per_class
def memo_fields(cls: type) -> frozenset[str]:
    """The memo fields of `cls`: declared with `init=False`, so no copy carries them."""
    return frozenset(f.name for f in fields(cls) if not f.init)


def members(node: object, names: tuple[str, ...], kind: type[V]) -> tuple[V, ...]:
    """The values of type `kind` held by `node`'s fields `names`, each a `kind` or a non-empty tuple of them."""
    out: list[V] = []
    for name in names:
        v = getattr(node, name)
        if isinstance(v, kind):
            out.append(v)
        elif isinstance(v, tuple) and v and all(isinstance(x, kind) for x in v):
            out.extend(v)
    return tuple(out)


def map_members(node: Any, names: tuple[str, ...], kind: type[V], fn: Callable[[V], V]) -> Any:
    """`node` with `fn` applied to each of its `members(node, names, kind)`, in order; `node` itself
    when `fn` returns every value unchanged."""
    changes: dict[str, Any] = {}
    for name in names:
        v = getattr(node, name)
        if isinstance(v, kind):
            new = fn(v)
            if new is not v:
                changes[name] = new
        elif isinstance(v, tuple) and v and all(isinstance(x, kind) for x in v):
            mapped = tuple([fn(x) for x in v])
            if any(a is not b for a, b in zip(mapped, v)):
                changes[name] = mapped
    return replace(node, **changes) if changes else node


__all__ = ["TreeNode", "child_fields", "map_members", "members", "memo_fields", "node_fields"]
