"""quiver/engine/core/row.py: `Row` behaves as `pyspark.sql.Row` for the same operations."""
from __future__ import annotations

import pickle

import pytest

from quiver import Row


def _both():
    from pyspark.sql import Row as PRow

    return Row, PRow


OPERATIONS = {
    "kwargs-values": lambda R: tuple(R(name="a", age=3)),
    "kwargs-order-kept": lambda R: R(b=1, a=2).__fields__,
    "equals-tuple": lambda R: R(a=1, b=2) == (1, 2),
    "index-and-key": lambda R: (R(a=1, b=2)[1], R(a=1, b=2)["a"], R(a=1, b=2).b),
    "slice": lambda R: R(a=1, b=2, c=3)[1:],
    "contains-field-name": lambda R: ("a" in R(a=5), 5 in R(a=5)),
    "positional": lambda R: (tuple(R(1, "x")), 1 in R(1, "x")),
    "factory": lambda R: R("name", "age")("a", 1).asDict(),
    "factory-partial": lambda R: tuple(R("name", "age")("a")),
    "asDict": lambda R: R(a=1, b=[R(c=2)]).asDict(),
    "asDict-recursive": lambda R: R(a=1, b=[R(c=2)], d={"k": R(e=3)}).asDict(recursive=True),
    "repr": lambda R: repr(R(a=1, b="x")),
    "repr-positional": lambda R: repr(R(1, "x")),
    "hash-like-tuple": lambda R: hash(R(a=1, b=2)) == hash((1, 2)),
    "len": lambda R: len(R(a=1, b=None)),
    "sort-as-tuple": lambda R: sorted([R(a=2, b=1), R(a=1, b=5)]),
}


@pytest.mark.parametrize("op", list(OPERATIONS))
def test_row_behaves_like_pyspark_row(op):
    ours, theirs = _both()
    got, want = OPERATIONS[op](ours), OPERATIONS[op](theirs)
    assert (list(got) if isinstance(got, list) else got) == (list(want) if isinstance(want, list) else want)
    assert repr(got) == repr(want)


ERRORS = {
    "args-and-kwargs": lambda R: R(1, a=2),
    "missing-attribute": lambda R: R(a=1).b,
    "missing-key": lambda R: R(a=1)["b"],
    "asDict-of-positional": lambda R: R(1, 2).asDict(),
    "too-many-factory-values": lambda R: R("a")(1, 2),
}


@pytest.mark.parametrize("op", list(ERRORS))
def test_row_raises_where_pyspark_row_raises(op):
    ours, theirs = _both()
    with pytest.raises(Exception) as want:
        ERRORS[op](theirs)
    with pytest.raises(Exception) as got:
        ERRORS[op](ours)
    if op != "missing-key":  # PySpark 4 raises a ValueError subclass where a mapping raises KeyError
        for kind in (AttributeError, KeyError, ValueError, TypeError):
            assert isinstance(got.value, kind) == isinstance(want.value, kind), (got.value, want.value)


def test_missing_attribute_error_lists_the_fields():
    with pytest.raises(AttributeError, match="'age'.*name, city"):
        _ = Row(name="a", city="b").age


def test_row_is_read_only():
    r = Row(a=1)
    with pytest.raises(RuntimeError, match="read-only"):
        r.a = 2
    assert r.a == 1


def test_row_pickles_with_its_field_names():
    r = pickle.loads(pickle.dumps(Row(a=1, b="x")))
    assert r.b == "x" and r.__fields__ == ["a", "b"] and r == (1, "x")
