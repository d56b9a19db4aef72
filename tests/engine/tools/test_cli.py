"""quiver/engine/tools/cli.py: `quiver sql` and `quiver explain` take SQL inline, from a file or from stdin; usage
errors exit 2 naming what is wrong and what is valid; `--version` names Quiver's release."""
from __future__ import annotations

import io
import platform

import pyarrow
import pytest

import quiver
from quiver.engine.api.session import Session
from quiver.engine.execution.query_execution import EXPLAIN_MODES
from quiver.engine.tools import cli


@pytest.fixture(autouse=True)
def own_session(monkeypatch):
    """Each command builds and stops its own session, as in a fresh process: the session other tests share is set
    aside (and back after), so the command neither reuses its master nor stops it."""
    monkeypatch.setattr(Session, "_active", None)


def run(capsys, *args: str) -> tuple[int, str, str]:
    """`quiver ARGS` in this process: its exit status, stdout and stderr (argparse's exits included)."""
    try:
        code = cli.main(list(args))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


SCRIPT = ("CREATE OR REPLACE TEMP VIEW t AS SELECT id, id % 2 AS odd FROM range(6);\n"
          "SELECT odd, count(*) AS n FROM t GROUP BY odd ORDER BY odd;\n")


def test_sql_runs_the_statements_of_a_file_it_is_given(capsys, tmp_path):
    script = tmp_path / "q.sql"
    script.write_text(SCRIPT)
    code, out, err = run(capsys, "sql", str(script), "--master", "local[1]")
    assert code == 0, err
    assert "|odd|n  |" in out and "|0  |3  |" in out and "|1  |3  |" in out


def test_a_file_is_recognised_by_existing_whatever_its_name(capsys, tmp_path):
    script = tmp_path / "queries.txt"
    script.write_text("SELECT 7 AS seven")
    code, out, err = run(capsys, "sql", str(script), "--master", "local[1]")
    assert code == 0, err
    assert "|seven|" in out and "|7    |" in out


def test_sql_reads_stdin_for_a_dash(capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("SELECT 42 AS answer;\nSELECT 'x;y' AS s"))
    code, out, err = run(capsys, "sql", "-", "--master", "local[1]")
    assert code == 0, err
    assert "|answer|" in out and "|42    |" in out and "|x;y|" in out


def test_inline_statements_still_run(capsys):
    code, out, err = run(capsys, "sql", "SELECT 1 AS a; SELECT 'x;y' AS s", "--master", "local[1]")
    assert code == 0, err
    assert "|a  |" in out and "|x;y|" in out


def test_a_missing_sql_file_is_a_usage_error_naming_it(capsys, tmp_path):
    missing = tmp_path / "nope.sql"
    code, out, err = run(capsys, "sql", str(missing))
    assert code == 2 and out == ""
    assert err.strip() == (f"quiver sql: error: no such file {str(missing)!r} (give a query inline, a file that "
                           "exists, or - for stdin)")
    code, _, err = run(capsys, "sql", "q.sql")
    assert code == 2 and "no such file 'q.sql'" in err and "COLUMN statement" not in err


def test_no_statement_at_all_is_a_usage_error(capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("  -- only a comment\n"))
    code, _, err = run(capsys, "sql", "-")
    assert code == 2 and err.strip() == "quiver sql: error: no SQL statement in stdin"


def test_a_failed_statement_exits_1_with_one_line(capsys):
    code, _, err = run(capsys, "sql", "SELECT nope", "--master", "local[1]")
    assert code == 1
    assert len(err.strip().splitlines()) == 1 and err.startswith("quiver sql: UnresolvedColumnError: column 'nope'")


@pytest.mark.parametrize("command", ["sql", "explain"])
def test_a_master_quiver_has_no_runtime_for_exits_2_naming_the_valid_ones(capsys, command):
    code, _, err = run(capsys, command, "SELECT 1", "--master", "yarn")
    assert code == 2
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"quiver {command}: error: argument --master: master 'yarn' is not a master; valid "
                           "masters are local, local[N], local[*]")
    assert "ray://host:port" in last


def test_a_bad_conf_is_a_usage_error(capsys):
    code, _, err = run(capsys, "sql", "SELECT 1", "--conf", "quiver.ui.progress=sometimes", "--master", "local[1]")
    assert code == 2 and err.strip() == "quiver sql: error: quiver.ui.progress must be true or false, got 'sometimes'"
    code, _, err = run(capsys, "sql", "SELECT 1", "--conf", "novalue")
    assert code == 2 and "--conf: expected KEY=VALUE, got 'novalue'" in err


def test_explain_help_lists_the_modes_the_engine_accepts(capsys):
    code, out, _ = run(capsys, "explain", "--help")
    assert code == 0
    assert f"one of {', '.join(EXPLAIN_MODES)} (default extended)" in " ".join(out.split())
    code, _, err = run(capsys, "explain", "SELECT 1", "--mode", "bogus")
    assert code == 2 and all(f"'{m}'" in err for m in EXPLAIN_MODES)


def test_explain_runs_a_files_earlier_statements_then_explains_the_last(capsys, tmp_path):
    script = tmp_path / "q.sql"
    script.write_text(SCRIPT)
    code, out, err = run(capsys, "explain", str(script), "--mode", "cost", "--master", "local[1]")
    assert code == 0, err
    assert "== Physical Plan (estimated rows and bytes" in out and "HashAggregate" in out
    code, _, err = run(capsys, "explain", "SELECT 1", "--mode", "simple", "--path", "x.png")
    assert code == 2 and "--path is for --mode graph" in err


def test_version_flag_and_command_name_quivers_release(capsys):
    expected = [f"quiver {quiver.__version__}", f"Python {platform.python_version()}", f"pyarrow {pyarrow.__version__}"]
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.splitlines() == expected
    code, out, _ = run(capsys, "version")
    lines = out.splitlines()
    assert code == 0 and lines[:3] == expected and any(line.startswith("sqlglot ") for line in lines)


def test_no_command_prints_the_help_with_examples(capsys):
    code, out, _ = run(capsys)
    assert code == 2 and "usage: quiver" in out and "quiver sql queries.sql" in out and "quiver sql -" in out
