"""The `quiver` command line: `sql`, `explain`, `calibrate` (of the CPU or a GPU/NPU) and `version`.

`sql` and `explain` take their SQL inline, from a file, or from stdin (`-`). A usage error (an
unknown option, a master Quiver has no runtime for, a missing file, a bad conf) exits 2; a failed
statement exits 1; each with a one-line reason. `python -m quiver.engine.tools.cli calibrate --quick`
works without the console script installed.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import quiver
from quiver.engine.core.conf import parse_devices
from quiver.engine.core.errors import ConfigurationError
from quiver.engine.execution.context import check_master
from quiver.engine.execution.query_execution import EXPLAIN_MODES
from quiver.engine.tools import calibrate as C
from quiver.engine.tools import calibrate_device as D
from quiver.engine.tools.submit import SubmitError, master_argument, split_setting, sql_statements
from quiver.engine.tools.versions import VersionAction, engine_versions
from quiver.planners.cost import load_profile, shipped_profiles

DEFAULT_PROFILE_PATH = "cpu-calibrated.json"
MAX_MEDIAN_ERROR = 0.30
DEFAULT_MASTER = "local[*]"

EXAMPLES = """examples:
  quiver sql "SELECT 1 AS a; SELECT 2 AS b"      statements inline, each result printed
  quiver sql queries.sql --master local[4]       the statements of a file
  echo "SELECT 1 AS a" | quiver sql -            the statements on stdin
  quiver explain "SELECT sum(id) FROM range(10)" --mode cost
  quiver calibrate --check                       fit this machine's CPU cost profile
  quiver-submit app.py                           run a PySpark-style application (as spark-submit)"""


def main(argv: Sequence[str] | None = None) -> int:
    """Parse `argv` (default: the process's arguments), run the subcommand, return its exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    return args.run(args)


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """The examples kept as written, and each command's help on its own line (argparse's narrow default
    puts it under a long name like `calibrate`)."""

    def __init__(self, prog: str):
        super().__init__(prog, max_help_position=32)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="quiver", description="Quiver: a PySpark-shaped dataflow engine on Arrow.",
                                     epilog=EXAMPLES, formatter_class=_HelpFormatter)
    parser.add_argument("--version", action=VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, helptext, run in (
            ("sql", "run SQL statements and print each query's result", _sql),
            ("explain", "print the plans of a query: logical, physical, stages, placement", _explain)):
        cmd = sub.add_parser(name, help=helptext, description=helptext + ".")
        what = ("SQL statements separated by ';', a file of them, or - to read them from stdin" if name == "sql" else
                "a query, a file or - (stdin); statements before the last one (temp views) run first")
        cmd.add_argument("text", metavar="SQL|FILE|-", help=what)
        cmd.add_argument("--master", default=DEFAULT_MASTER, type=master_argument,
                         help=f"where to run: local, local[N], local[*], ray, ray:ADDRESS or ray://host:port "
                              f"(default {DEFAULT_MASTER})")
        cmd.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                         help="a conf setting (spark.* or quiver.*); repeatable")
        if name == "explain":
            cmd.add_argument("--mode", default="extended", choices=EXPLAIN_MODES, metavar="MODE",
                             help=f"one of {', '.join(EXPLAIN_MODES)} (default extended), as df.explain(mode) "
                                  "takes them; graph writes the stage DAG as a PNG")
            cmd.add_argument("--path", default=None,
                             help="where --mode graph writes its PNG (default: a new file in quiver.ui.graphDir)")
        cmd.set_defaults(run=run)
    cal = sub.add_parser(
        "calibrate", help="time a device's operators here and write a cost profile",
        description="Time the operators (scan, filter, project, aggregate, hash join, sort, top-k, exchange) "
                    "of the CPU executor, or of the GPU/NPU kernels and the host link with --device, at several "
                    "sizes on this machine, fit each operator's cost, and write a device profile that placement "
                    "can load.")
    cal.add_argument("--device", default="cpu", metavar="KIND[:INDEX]",
                     help="cpu (default), gpu or npu, optionally with an index (gpu:1); gpu:emulated or "
                          "npu:emulated times numpy standing in for the device, for a smoke test only")
    cal.add_argument("--output", "-o", default=None,
                     help="where to write the profile JSON (default: the profile's name + .json, "
                          f"{DEFAULT_PROFILE_PATH} for the CPU)")
    cal.add_argument("--name", default=None, help="the profile's name (default: cpu-calibrated, gpu-calibrated, ...)")
    cal.add_argument("--quick", action="store_true",
                     help="two small sizes and fewer repeats: seconds, for a smoke test, not for placement")
    cal.add_argument("--repeats", type=int, default=None, help="timed runs per case (default: 5, or 2 with --quick)")
    cal.add_argument("--check", action="store_true",
                     help="then time held-out sizes (not used in fitting) and print the median relative error "
                          f"per operator; exit status 1 if the overall median exceeds {MAX_MEDIAN_ERROR * 100:.0f}%%")
    cal.set_defaults(run=_calibrate)
    ver = sub.add_parser("version", help="print Quiver's version and those of Python and its engines",
                         description="Print Quiver's version and those of Python and its engines.")
    ver.set_defaults(run=_version)
    return parser


def _statements(args: argparse.Namespace) -> list[str]:
    """The statements the SQL|FILE|- argument names: stdin for `-`, a file's text where the argument names
    an existing file (or looks like a file name: one word ending in .sql), else the argument itself."""
    text = args.text
    if text == "-":
        where, script = "stdin", sys.stdin.read()
    elif Path(text).is_file():
        where = repr(text)
        try:
            script = Path(text).read_text()
        except (OSError, UnicodeDecodeError) as exc:
            raise SubmitError(f"cannot read {text!r}: {exc}") from exc
    elif text.strip().lower().endswith(".sql") and len(text.split()) == 1:
        raise SubmitError(f"no such file {text!r} (give a query inline, a file that exists, or - for stdin)")
    else:
        where, script = "the argument", text
    statements = sql_statements(script)
    if not statements:
        raise SubmitError(f"no SQL statement in {where}")
    return statements


def _session(args: argparse.Namespace):
    builder = quiver.Session.builder.master(check_master(args.master))
    for setting in args.conf:
        key, value = split_setting(setting, "--conf")
        builder = builder.config(key, value)
    return builder.getOrCreate()


def _usage_error(args: argparse.Namespace, exc: Exception) -> int:
    print(f"quiver {args.command}: error: {exc}", file=sys.stderr)
    return 2


def _failed(args: argparse.Namespace, exc: Exception) -> int:
    first = str(exc).splitlines()[0] if str(exc) else ""
    print(f"quiver {args.command}: {type(exc).__name__}: {first}", file=sys.stderr)
    return 1


def _sql(args: argparse.Namespace) -> int:
    try:
        statements = _statements(args)
        spark = _session(args)
    except (SubmitError, ConfigurationError) as exc:
        return _usage_error(args, exc)
    try:
        for statement in statements:
            result = spark.sql(statement)
            if result.columns:
                result.show(1000, truncate=False)
    except Exception as exc:  # noqa: BLE001 — a failed statement is reported in one line
        return _failed(args, exc)
    finally:
        spark.stop()
    return 0


def _explain(args: argparse.Namespace) -> int:
    if args.path is not None and args.mode != "graph":
        return _usage_error(args, SubmitError(f"--path is for --mode graph (its PNG), not --mode {args.mode}"))
    try:
        statements = _statements(args)
        spark = _session(args)
    except (SubmitError, ConfigurationError) as exc:
        return _usage_error(args, exc)
    try:
        for statement in statements[:-1]:
            spark.sql(statement)
        spark.sql(statements[-1]).explain(mode=args.mode, **({"path": args.path} if args.path else {}))
    except Exception as exc:  # noqa: BLE001 — a failed statement is reported in one line
        return _failed(args, exc)
    finally:
        spark.stop()
    return 0


def _version(args: argparse.Namespace) -> int:
    print(f"quiver {quiver.__version__}")
    print("\n".join(engine_versions()))
    return 0


def _calibrate(args: argparse.Namespace) -> int:
    if args.repeats is not None and args.repeats < 1:
        print(f"quiver calibrate: --repeats must be at least 1, got {args.repeats}", file=sys.stderr)
        return 2
    if "," in args.device:
        print(f"quiver calibrate: --device names one device, got {args.device!r}", file=sys.stderr)
        return 2
    try:
        spec = parse_devices(args.device)[-1]  # the CPU comes first, then the device named, if any
    except ConfigurationError as e:
        print(f"quiver calibrate: --device {args.device}: {e}", file=sys.stderr)
        return 2
    name = args.name or f"{spec.kind}-calibrated"
    output = args.output or (DEFAULT_PROFILE_PATH if spec.kind == "cpu" and not args.name else f"{name}.json")
    sizes, held_out = (C.QUICK_SIZES, C.QUICK_HELD_OUT_SIZES) if args.quick else (C.FIT_SIZES, C.HELD_OUT_SIZES)
    repeats = args.repeats or (2 if args.quick else C.DEFAULT_REPEATS)
    if spec.kind == "cpu":
        return _calibrate_cpu(args, output, name, sizes, held_out, repeats)
    return _calibrate_device(args, spec, output, name, sizes, held_out, repeats)


def _calibrate_cpu(args, output: str, name: str, sizes, held_out, repeats: int) -> int:
    started = time.perf_counter()
    print(f"calibrating the CPU executor at {_sizes(sizes)} rows, {repeats} repeats ...", flush=True)
    profile = C.calibrate(output, sizes=sizes, repeats=repeats, name=name)
    print(f"wrote {output} in {time.perf_counter() - started:.1f} s ({profile.source})")
    print(_cost_table(profile))
    if not args.check:
        return 0
    return _checked(held_out, lambda: C.evaluate_profile(profile, held_out, repeats=repeats))


def _calibrate_device(args, spec, output: str, name: str, sizes, held_out, repeats: int) -> int:
    try:
        executor = D.open_executor(spec.kind, spec.index, spec.emulated)
    except ConfigurationError as e:
        shipped = [p for p in shipped_profiles() if load_profile(p).kind == spec.kind]
        print(f"quiver calibrate: cannot calibrate {spec.kind}:{spec.index}, no such device here: {e}.\n"
              f"To plan for one without calibrating, use a shipped {spec.kind} profile: set quiver.profile."
              f"{spec.kind} to {' or '.join(shipped)}.", file=sys.stderr)
        return 2
    if spec.emulated:
        print(f"warning: {executor.device} is {D.EMULATED_NOTE}; the profile is a smoke test, not for placement",
              file=sys.stderr)
    started = time.perf_counter()
    print(f"calibrating {D.device_name(executor)} at {_sizes(sizes)} rows, {repeats} repeats ...", flush=True)
    profile = D.calibrate_device(spec.kind, output, executor=executor, sizes=sizes, repeats=repeats, name=name)
    print(f"wrote {output} in {time.perf_counter() - started:.1f} s ({profile.source})")
    print(f"host link: {profile.host_to_device_bytes_per_s / 1e9:.2f} GB/s to the device, "
          f"{profile.device_to_host_bytes_per_s / 1e9:.2f} GB/s back, {profile.transfer_latency_s * 1e6:.1f} us "
          f"latency; launch overhead {profile.launch_overhead_s * 1e6:.1f} us")
    print(_cost_table(profile))
    if not args.check:
        return 0
    return _checked(held_out, lambda: D.evaluate_device_profile(profile, executor, held_out, repeats=repeats))


def _checked(held_out, evaluate) -> int:
    """Run the held-out check, print its table, and return 1 if the overall median error is too high."""
    started = time.perf_counter()
    print(f"\nchecking against held-out sizes {_sizes(held_out)} rows ...", flush=True)
    report = evaluate()
    print(_error_table(report))
    print(f"(held-out check took {time.perf_counter() - started:.1f} s)")
    return 0 if report["overall"] <= MAX_MEDIAN_ERROR else 1


def _sizes(sizes: Sequence[int]) -> str:
    return ", ".join(f"2^{int(math.log2(s))}" if s & (s - 1) == 0 else str(s) for s in sizes)


def _cost_table(profile) -> str:
    lines = [f"{'operator':<11} {'fixed us':>9} {'ns/row':>9} {'ns/byte':>9} {'ns/group':>9} {'ns/build row':>12}"]
    for op, c in profile.operators.items():
        lines.append(f"{op:<11} {c.fixed * 1e6:>9.1f} {c.per_row * 1e9:>9.3f} {c.per_byte * 1e9:>9.4f} "
                     f"{c.per_group * 1e9:>9.2f} {c.per_build_row * 1e9:>12.3f}")
    return "\n".join(lines)


def _error_table(report: dict) -> str:
    lines = [f"{'operator':<11} {'median relative error':>22}"]
    for op, err in report["per_operator"].items():
        lines.append(f"{op:<11} {err:>21.1%}")
    lines.append(f"{'overall':<11} {report['overall']:>21.1%}")
    lines.append("by size: " + ", ".join(f"{_sizes([n])} rows {e:.1%}" for n, e in report["per_size"].items()))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
