"""What a notebook shows: a DataFrame as an HTML table (as PySpark's eager evaluation draws it), errors readably."""
from __future__ import annotations

import re

import pytest

import quiver
from quiver.engine.core.errors import AnalysisException


@pytest.fixture
def session():
    spark = quiver.Session.builder.master("local[2]").getOrCreate()
    keys = ("quiver.sql.repl.eagerEval.maxNumRows", "quiver.sql.repl.eagerEval.truncate")
    saved = {k: spark.conf.get(k) for k in keys}
    yield spark
    for k, v in saved.items():
        spark.conf.set(k, v)


ROWS = [(i, f"name <{i}> " + "x" * i, None if i % 3 else i * 1.5) for i in range(30)]
SCHEMA = "id INT, label STRING, score DOUBLE"


def _cells(page: str) -> list[list[str]]:
    rows = re.findall(r"<tr>(.*?)</tr>", page, flags=re.S)
    return [re.findall(r"<td>(.*?)</td>", r, flags=re.S) for r in rows if "<td>" in r]


@pytest.mark.parametrize("max_rows,truncate", [(20, 20), (5, 8), (40, 0)])
def test_html_table_has_the_cells_pyspark_shows(session, pyspark_session, max_rows, truncate):
    session.conf.set("spark.sql.repl.eagerEval.maxNumRows", str(max_rows))
    session.conf.set("spark.sql.repl.eagerEval.truncate", str(truncate))
    ours = session.createDataFrame(ROWS, SCHEMA)._repr_html_()
    conf = {"spark.sql.repl.eagerEval.enabled": "true", "spark.sql.repl.eagerEval.maxNumRows": str(max_rows),
            "spark.sql.repl.eagerEval.truncate": str(truncate)}
    previous = {k: pyspark_session.conf.get(k, None) for k in conf}
    for k, v in conf.items():
        pyspark_session.conf.set(k, v)
    try:
        theirs = pyspark_session.createDataFrame(ROWS, SCHEMA)._repr_html_()
    finally:
        for k, v in previous.items():
            pyspark_session.conf.unset(k) if v is None else pyspark_session.conf.set(k, v)
    assert _cells(ours) == _cells(theirs)
    assert len(_cells(ours)) == min(max_rows, len(ROWS))
    assert ("only showing top" in ours) == (max_rows < len(ROWS))
    for name, kind in (("id", "int"), ("label", "string"), ("score", "double")):
        assert f"<th>{name}<br><small>{kind}</small></th>" in ours


def test_an_empty_dataframe_shows_its_columns(session):
    page = session.createDataFrame([], "a INT, b STRING")._repr_html_()
    assert "<th>a<br><small>int</small></th>" in page and "<td>" not in page and "0 rows" in page


def test_errors_render_without_engine_frames(session):
    with pytest.raises(AnalysisException) as caught:
        session.range(3).select("no_such_column")
    lines = caught.value._render_traceback_()
    text = "\n".join(lines)
    assert "no_such_column" in lines[-1] and lines[-1].startswith(type(caught.value).__name__ + ":")
    assert "test_notebook_display.py" in text
    assert "dataframe.py" not in text and "analyzer.py" not in text


def test_errors_render_in_a_real_ipython_shell(session):
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        shell.user_ns["spark"] = session
        result = shell.run_cell("spark.range(3).select('missing_col')")
    finally:
        InteractiveShell.clear_instance()
    error = result.error_in_exec
    assert isinstance(error, AnalysisException)
    rendered = "\n".join(error._render_traceback_())
    assert "missing_col" in rendered and "dataframe.py" not in rendered
