"""`quiver-submit`: run a Python application or a SQL file the way `spark-submit` does.

The application builds its session as usual (`SparkSession.builder...getOrCreate()`), importing
either `quiver` or, unchanged, `pyspark`: its pyspark imports give Quiver's API. The master
and conf given on the command line become that session's defaults, and what the
application sets itself wins, as with spark-submit. A `.sql` file runs its statements one
by one and prints each result. A bad option, a missing file or a failed job exits non-zero
with a one-line reason (the whole traceback with `--verbose`).
"""
from __future__ import annotations

import argparse
import runpy
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

import quiver
from quiver.engine.api.session import Session, set_submit_defaults
from quiver.engine.core.errors import ConfigurationError
from quiver.engine.execution.context import check_master
from quiver.engine.tools.versions import VersionAction
from quiver.pyspark_modules import use_as_pyspark

# Options spark-submit takes that describe a cluster's executors; recorded as conf, as Spark does.
_RESOURCE_CONF = {
    "driver_memory": "spark.driver.memory", "executor_memory": "spark.executor.memory",
    "executor_cores": "spark.executor.cores", "num_executors": "spark.executor.instances",
}


USAGE = "quiver-submit [options] <app.py | query.sql> [app arguments]"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="quiver-submit", usage=USAGE,
        description="Run a PySpark-style application (app.py) or a SQL file (query.sql) on Quiver, as spark-submit "
                    "runs one on Spark.")
    p.add_argument("--version", action=VersionAction)
    p.add_argument("--master", type=master_argument,
                   help="local, local[N], local[*], ray, ray:ADDRESS or ray://host:port "
                        "(default: the application's, else local[*])")
    p.add_argument("--name", help="the application's name (spark.app.name)")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="a conf setting; repeatable")
    p.add_argument("--properties-file", type=Path, metavar="FILE",
                   help="a file of 'key value' or 'key=value' lines (# comments)")
    p.add_argument("--py-files", default="", metavar="FILES",
                   help="comma-separated .py, .zip or .egg files put on sys.path")
    p.add_argument("--files", default="", metavar="FILES",
                   help="comma-separated files the application may read (must exist)")
    p.add_argument("--driver-memory", metavar="MEM", help="recorded as spark.driver.memory")
    p.add_argument("--executor-memory", metavar="MEM", help="recorded as spark.executor.memory")
    p.add_argument("--executor-cores", metavar="N", help="recorded as spark.executor.cores")
    p.add_argument("--num-executors", metavar="N", help="recorded as spark.executor.instances")
    p.add_argument("--deploy-mode", default="client", choices=["client"],
                   help="client only: the driver runs here")
    p.add_argument("--pyspark-api", default="quiver", choices=["quiver", "pyspark"],
                   help="what the application's `import pyspark` gives: Quiver's PySpark API (default), so an "
                        "unchanged PySpark program runs on Quiver, or the real PySpark package")
    p.add_argument("--verbose", action="store_true", help="print the settings, and a failure's whole traceback")
    # Optional to argparse, so that a missing application gets its own message rather than argparse's.
    p.add_argument("app", nargs="?", help="the application: a .py file, or a .sql file of statements")
    p.add_argument("app_args", nargs=argparse.REMAINDER, help="arguments passed on to the application")
    return p


def master_argument(text: str) -> str:
    """An argparse type for `--master`: the master if Quiver has a runtime for it, else a usage error (exit 2)
    naming the valid masters."""
    try:
        return check_master(text)
    except ConfigurationError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


class SubmitError(Exception):
    """A problem with what was submitted (a file, an option), reported in one line."""


def main(argv: Sequence[str] | None = None) -> int:
    """Parse `argv`, run the application, return the exit status."""
    cli = parser()
    args = cli.parse_args(argv)
    if args.app is None:
        cli.error("an application is needed: a Python file (app.py) or a SQL file (query.sql); "
                  "quiver-submit --help lists the options")
    try:
        conf = _conf(args)
        app = _existing(args.app, "the application")
        for f in _listed(args.files):
            _existing(f, "--files entry")
        for f in _listed(args.py_files):
            sys.path.insert(0, str(_existing(f, "--py-files entry").resolve()))
    except SubmitError as exc:
        print(f"quiver-submit: error: {exc}", file=sys.stderr)
        return 2
    # The application's process is Quiver's own, so the allocator is tuned for it unless the conf says not.
    set_submit_defaults(args.master, {"quiver.memory.tuneAllocator": "true", **conf})
    if args.verbose:
        print(f"quiver-submit: master {args.master or '(the application’s)'}; conf {conf}", file=sys.stderr)
    try:
        if app.suffix.lower() == ".sql":
            _run_sql(app)
        else:
            if args.pyspark_api == "quiver":
                use_as_pyspark()
            _run_python(app, args.app_args)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        return code
    except BaseException as exc:  # noqa: BLE001 — any failure of the application is reported, not raised
        if args.verbose:
            traceback.print_exc()
        reason = str(exc).splitlines()[0] if str(exc) else ""
        print(f"quiver-submit: {app.name} failed: {type(exc).__name__}: {reason}", file=sys.stderr)
        return 1
    finally:
        _stop_active_session()
    return 0


def _conf(args: argparse.Namespace) -> dict[str, str]:
    conf: dict[str, str] = {}
    if args.properties_file is not None:
        path = _existing(str(args.properties_file), "--properties-file")
        for number, line in enumerate(path.read_text().splitlines(), 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            key, value = split_setting(text, f"{path}:{number}")
            conf[key] = value
    for setting in args.conf:
        key, value = split_setting(setting, "--conf")
        conf[key] = value
    if args.name:
        conf["spark.app.name"] = args.name
    for field, key in _RESOURCE_CONF.items():
        if getattr(args, field) is not None:
            conf[key] = str(getattr(args, field))
    return conf


def split_setting(text: str, where: str) -> tuple[str, str]:
    """`key=value` (or `key value` in a properties file) split in two."""
    if "=" in text:
        key, _, value = text.partition("=")
    else:
        key, _, value = text.partition(" ")
    key, value = key.strip(), value.strip()
    if not key or not value:
        raise SubmitError(f"{where}: expected KEY=VALUE, got {text!r}")
    return key, value


def _listed(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _existing(name: str, what: str) -> Path:
    path = Path(name)
    if not path.is_file():
        raise SubmitError(f"{what} {name!r} does not exist (or is not a file)")
    return path


def _run_python(app: Path, app_args: list[str]) -> None:
    """The application as `__main__`, with `sys.argv` as it would see it under spark-submit."""
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [str(app), *app_args]
    sys.path.insert(0, str(app.resolve().parent))
    try:
        runpy.run_path(str(app), run_name="__main__")
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path


def _run_sql(app: Path) -> None:
    """Each statement of a SQL file in turn; a query's rows are printed as `show()` prints them."""
    spark = quiver.Session.builder.getOrCreate()
    for statement in sql_statements(app.read_text()):
        result = spark.sql(statement)
        if result.columns:
            result.show(1000, truncate=False)


def sql_statements(text: str) -> list[str]:
    """The statements of a SQL script, cut at the semicolons sqlglot's tokenizer finds (none inside
    strings or comments), each kept as written; a piece with only comments or blanks is no statement."""
    from sqlglot.tokens import Tokenizer, TokenType

    pieces, start, seen = [], 0, False
    for token in Tokenizer(dialect="spark").tokenize(text):
        if token.token_type == TokenType.SEMICOLON:
            if seen:
                pieces.append(text[start:token.start].strip())
            start, seen = token.start + 1, False
        else:
            seen = True
    if seen:
        pieces.append(text[start:].strip())
    return pieces


def _stop_active_session() -> None:
    """Stop the session the application left running (its Ray, if it started one), as spark-submit does."""
    active = Session.getActiveSession()
    if active is not None:
        active.stop()


if __name__ == "__main__":
    sys.exit(main())
