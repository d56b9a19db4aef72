"""The package ships `py.typed`: a user's type checker reads Quiver's annotations, so a misspelt
DataFrame method is an error before the program runs (mypy on a small program, as a user would run it)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PROGRAM = """
import quiver
from quiver import functions as F

spark = quiver.Session.builder.master("local[1]").getOrCreate()
df = spark.createDataFrame([(1, "a")], ["n", "s"])
kept: quiver.DataFrame = df.select("n", "s").filter("n > 0").orderBy("n")
rows: list[quiver.Row] = kept.collect()
{line}
"""


def _mypy(tmp_path: Path, line: str) -> subprocess.CompletedProcess:
    pytest.importorskip("mypy", reason="mypy is a dev dependency")
    program = tmp_path / "program.py"
    program.write_text(PROGRAM.format(line=line))
    # MYPYPATH stands in for an installed wheel: an editable install's import hook is invisible to mypy.
    return subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--follow-imports=silent",
                           "--cache-dir", str(tmp_path / "cache"), str(program)],
                          env={**os.environ, "MYPYPATH": str(ROOT)}, cwd=tmp_path, capture_output=True, text=True)


def test_the_package_is_marked_typed():
    assert (ROOT / "quiver" / "py.typed").is_file()


def test_a_correct_program_checks_clean(tmp_path):
    out = _mypy(tmp_path, 'n: int = kept.count()\nshout: quiver.Column = F.upper(F.col("s"))')
    assert out.returncode == 0, out.stdout


def test_a_misspelt_function_is_a_type_error(tmp_path):
    """`quiver.functions` re-exports every domain's functions so that type checkers see them, too."""
    out = _mypy(tmp_path, 'F.uppr("s")')
    assert out.returncode == 1
    assert 'Module has no attribute "uppr"; maybe "upper"?' in out.stdout


def test_a_misspelt_method_is_a_type_error(tmp_path):
    out = _mypy(tmp_path, 'df.selectt("n")')
    assert out.returncode == 1
    assert '"DataFrame" has no attribute "selectt"; maybe "select"?' in out.stdout
