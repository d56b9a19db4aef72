"""What `--version` and `quiver version` print: Quiver's release, then the Python and engines it runs on.

Quiver's own version is `quiver.__version__`, never the installed distribution's metadata: the
distribution is `quiver-dataflow`, and a package index's `quiver` is another project.
"""
from __future__ import annotations

import argparse
import platform
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from quiver import __version__

# The packages `quiver version` reports besides Python: the core's engines, then the optional ones.
ENGINES = ("pyarrow", "numpy", "sqlglot", "duckdb", "ray", "cupy-cuda12x")


def version_text() -> str:
    """`--version`'s lines, as `spark-submit --version` names Spark and what runs under it: `quiver 0.1.0`,
    then Python's and pyarrow's versions."""
    return "\n".join([f"quiver {__version__}", *engine_versions(("pyarrow",))])


class VersionAction(argparse.Action):
    """`--version`: print `version_text()` line by line (argparse's own action refills it into one line), exit 0."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="print Quiver's version (and Python's and pyarrow's) and exit", **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: Any, values: Any, option_string: Any = None):
        print(version_text())
        parser.exit(0)


def engine_versions(packages: tuple[str, ...] = ENGINES) -> list[str]:
    """`Python 3.11.7`, then one `name version` line per package (`name (not installed)` for one absent)."""
    lines = [f"Python {platform.python_version()}"]
    for package in packages:
        try:
            lines.append(f"{package} {version(package)}")
        except PackageNotFoundError:
            lines.append(f"{package} (not installed)")
    return lines
