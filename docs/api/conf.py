"""Sphinx configuration of Quiver's API reference: `make docs` builds it into docs/api/_build.

The pages document the PySpark-shaped API with autodoc from the docstrings, the same docstrings whose examples
tests/engine/api/test_docstring_examples.py runs, so the reference shows nothing untested.
"""
import sys
from pathlib import Path

# Document this checkout's quiver, not whichever one the interpreter has installed.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import quiver  # noqa: E402

project = "Quiver"
author = "The Quiver maintainers"
release = quiver.__version__
version = release

extensions = ["sphinx.ext.autodoc"]
exclude_patterns = ["_build"]

# Single backticks in the docstrings mark code (names, expressions), so they render as code.
default_role = "code"
# Show `DataFrame.select`, not `quiver.engine.api.dataframe.DataFrame.select`: the module paths are internal.
add_module_names = False
autodoc_member_order = "bysource"
autodoc_typehints = "signature"

# Annotations whose types this reference does not document. Without intersphinx (the build runs offline) the
# standard library's, pyarrow's and pandas' types have no target; the others are the engine's internals that
# Quiver's own introspection methods (Session.place, lastJob, UserDefinedFunction.call) take or return.
nitpick_ignore = [
    ("py:class", "collections.abc.Callable"),
    ("py:class", "collections.abc.Iterable"),
    ("py:class", "collections.abc.Sequence"),
    ("py:class", "os.PathLike"),
    ("py:class", "pyarrow.lib.Table"),
    ("py:class", "pd.DataFrame"),
    ("py:class", "Expr"),
    ("py:class", "quiver.engine.core.expressions.Expr"),
    ("py:class", "quiver.engine.core.expressions.PythonUDF"),
    ("py:class", "PhysicalPlan"),
    ("py:class", "StagePlacement"),
    ("py:class", "Candidate"),
    ("py:class", "ReportedJob"),
]

html_theme = "alabaster"
html_title = f"Quiver {release} API reference"


def _without_constructor(app, what, name, obj, options, signature, return_annotation):
    """The API classes' headings show no constructor signature: users get these objects from the session and
    DataFrames (`spark.read`, `df.groupBy`, `F.col`), and the constructors take the engine's internal plans and
    expressions. Data types, Row and StorageLevel keep theirs: users construct those."""
    if what == "class" and (obj.__module__.startswith("quiver.engine.api.") or obj.__name__ == "RuntimeConfig"):
        return "", None
    return None


def setup(app):
    app.connect("autodoc-process-signature", _without_constructor)
