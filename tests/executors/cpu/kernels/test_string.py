"""String kernels (quiver/executors/cpu/kernels/string.py) against real PySpark, and their errors."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given
from hypothesis import strategies as st

from quiver.engine.core import types as T
from quiver.engine.core.errors import QuiverError
from quiver.executors.cpu.kernels import KERNELS
from quiver.executors.cpu.kernels.string import like_match, like_regex
from tests.executors.cpu.kernels.harness import Lit, assert_matches_pyspark, c, case_id, pyspark_results

CASES: list[tuple[str, tuple]] = [
    ("upper", c("s")), ("lower", c("s")), ("ucase", c("s")), ("initcap", c("s")), ("trim", c("s")),
    ("ltrim", c("s")), ("rtrim", c("s")), ("trim", ("s", Lit("x "))), ("length", c("s")), ("ascii", c("s")),
    ("reverse", c("s")), ("octet_length", c("s")), ("upper", c("i")), ("length", c("d")), ("lower", c("b")),
    ("substring", ("s", Lit(1), Lit(3))), ("substring", ("s", Lit(0), Lit(2))),
    ("substring", ("s", Lit(-2), Lit(1))), ("substring", ("s", Lit(-10), Lit(3))), ("substring", ("s", Lit(2))),
    ("substring", ("s", Lit(5), Lit(2))), ("substring", ("s", Lit(2), Lit(-1))), ("substring", ("s", Lit(-3))),
    ("substring", ("s", Lit(-5), Lit(2))), ("substr", ("s", "n", Lit(2))), ("substring", ("s", "n", "n")),
    ("concat", ("s", "s")), ("concat", ("s", Lit("-"), "i")), ("concat", ("s", "d")),
    ("concat_ws", (Lit("-"), "s", "sd")), ("concat_ws", (Lit(","), "arr", "s")), ("concat_ws", (Lit("-"),)),
    ("concat_ws", (Lit(None), "s")), ("regexp_replace", ("s", Lit("(a)(b)?"), Lit("X$1"))),
    ("regexp_replace", ("s", Lit("[aeiou]"), Lit("\\$"))), ("regexp_replace", ("s", Lit("b"), Lit("_"), Lit(3))),
    ("regexp_replace", ("s", Lit("\\s+"), Lit("-"))), ("regexp_extract", ("s", Lit("(a)(b)?"), Lit(0))),
    ("regexp_extract", ("s", Lit("(a)(b)?"), Lit(2))), ("regexp_extract", ("s", Lit("([a-z]+) ([a-z]+)"), Lit(2))),
    ("regexp_extract", ("s", Lit("(\\d+)"))), ("lpad", ("s", Lit(5), Lit("xy"))),
    ("rpad", ("s", Lit(5), Lit("xy"))), ("lpad", ("s", Lit(2), Lit("x"))), ("rpad", ("s", Lit(0), Lit("x"))),
    ("lpad", ("s", Lit(5), Lit(""))), ("lpad", ("s", Lit(-1), Lit("x"))), ("lpad", ("s", Lit(6))),
    ("rpad", ("s", "n", Lit("ab"))), ("instr", ("s", Lit("b"))), ("instr", ("s", Lit(""))),
    ("instr", ("s", Lit("x"))), ("locate", (Lit("b"), "s")), ("locate", (Lit("b"), "s", Lit(3))),
    ("locate", (Lit("b"), "s", Lit(0))), ("locate", (Lit(""), "s", Lit(2))), ("locate", (Lit("x"), "s", Lit(2))),
    ("repeat", ("s", Lit(3))), ("repeat", ("s", Lit(0))), ("repeat", ("s", "n")),
    ("translate", ("s", Lit("abc"), Lit("x"))), ("translate", ("s", Lit("ab"), Lit("ba"))),
    ("translate", ("s", Lit(" "), Lit("_"))), ("split", ("s", Lit(","))), ("split", ("s", Lit(","), Lit(2))),
    ("split", ("s", Lit(""))), ("split", ("s", Lit("[,;]"))), ("split", ("s", Lit(""), Lit(2))),
    ("split", ("s", Lit(" "), Lit(0))), ("startswith", ("s", Lit("a"))), ("endswith", ("s", Lit("b"))),
    ("contains", ("s", Lit("b"))), ("contains", ("s", Lit(None, "string"))), ("startswith", ("s", Lit(""))),
    ("contains", ("s", "sd")), ("like", ("s", Lit("a%"))), ("like", ("s", Lit("_b%"))),
    ("like", ("s", Lit("a\\%"))), ("like", ("s", Lit("%"))), ("like", ("s", Lit("%x_"))),
    ("ilike", ("s", Lit("A%"))), ("like", ("s", Lit("a/%"), Lit("/"))), ("rlike", ("s", Lit("a.c"))),
    ("rlike", ("s", Lit("^[a-z]+$"))), ("rlike", ("s", Lit("(?i)ab"))), ("reverse", c("arr")),
]


@pytest.fixture(scope="module")
def spark_results(pyspark_legacy):
    return pyspark_results(pyspark_legacy, CASES)


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_matches_pyspark(case, table, spark_results):
    assert_matches_pyspark(case, CASES, table, spark_results)


def test_literal_value_with_a_column_pattern_runs_per_distinct_pattern():
    patterns = pa.array(["a%", "%c", None, "a%"])
    assert KERNELS["like"]([pa.scalar("abc"), patterns], T.BooleanType()).to_pylist() == [True, True, None, True]
    widths = pa.array([1, 3, 5, 3], pa.int32())
    assert (KERNELS["lpad"]([pa.scalar("ab"), widths, pa.scalar("-")], T.StringType()).to_pylist()
            == ["a", "-ab", "---ab", "-ab"])


def test_bad_regex_and_replacement_errors_name_the_function():
    with pytest.raises(QuiverError, match=r"regexp_replace: cannot use regular expression '\(\?<=a\)b'.*RE2"):
        KERNELS["regexp_replace"]([pa.array(["ab"]), pa.scalar("(?<=a)b"), pa.scalar("x")], T.StringType())
    with pytest.raises(QuiverError, match=r"regexp_extract: the regex '\(a\)' has 1 groups.*not 2"):
        KERNELS["regexp_extract"]([pa.array(["ab"]), pa.scalar("(a)"), pa.scalar(2)], T.StringType())
    with pytest.raises(QuiverError, match="like: the escape character"):
        KERNELS["like"]([pa.array(["ab"]), pa.scalar("a\\b")], T.BooleanType())


def test_sliced_string_columns():
    strings = pa.array(["zz", "é b", "abcb", None]).slice(1)
    assert KERNELS["instr"]([strings, pa.scalar("b")], T.IntegerType()).to_pylist() == [3, 2, None]
    assert KERNELS["ascii"]([strings], T.IntegerType()).to_pylist() == [233, 97, None]


@given(st.lists(st.one_of(st.none(), st.text(alphabet="ab%_.\\\n*x", max_size=8)), max_size=30),
       st.text(alphabet="ab%_.\\*x", max_size=7))
def test_like_matches_the_anchored_regex_it_replaces(strings, pattern):
    arr = pa.array(strings, pa.string())
    try:
        reference = pc.match_substring_regex(arr, like_regex(pattern))
    except QuiverError:
        with pytest.raises(QuiverError):
            like_match(arr, pattern)
        return
    assert like_match(arr, pattern).equals(reference)
