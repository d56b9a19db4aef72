"""TPC-H side by side: Quiver, DuckDB, Polars and PySpark on the 22 queries, each in a child process.

    python -m benchmarks.tpch --sf 1 [--engines quiver,duckdb,polars,pyspark] [--queries 1,3,5]
                              [--repeat 3] [--out benchmarks/RESULTS.md | -] [--form sql|dataframe]

Times every query (median of --repeat runs after a warm-up), checks each engine's answers against
DuckDB's, and writes a markdown section into --out. Exits 1 when some answers disagree.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.tpch.engines import DEFAULT_ENGINES, ENGINES, FORMS
from benchmarks.tpch.queries import QUERY_NUMBERS
from benchmarks.tpch.run import run_benchmark

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "RESULTS.md"


def _query_list(text: str) -> list[int]:
    """'1,3,5' or '1-5,7' as query numbers, checked against TPC-H's 1 to 22."""
    numbers: list[int] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        low, _, high = part.partition("-")
        numbers += range(int(low), int(high or low) + 1)
    unknown = sorted(set(numbers) - set(QUERY_NUMBERS))
    if unknown:
        raise argparse.ArgumentTypeError(f"TPC-H has queries 1 to 22, not {unknown}")
    return list(dict.fromkeys(numbers))


def _engine_list(text: str) -> list[str]:
    """'quiver,duckdb' as engine names, checked against the engines this benchmark knows."""
    names = [e.strip() for e in text.split(",") if e.strip()]
    unknown = [e for e in names if e not in ENGINES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown engines {unknown}; choose from {', '.join(ENGINES)}")
    return list(dict.fromkeys(names))


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The command line, validated."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.tpch", description=__doc__.splitlines()[0])
    parser.add_argument("--sf", type=float, default=1.0, help="TPC-H scale factor (default 1)")
    parser.add_argument("--engines", type=_engine_list, default=list(DEFAULT_ENGINES),
                        help=f"comma-separated, of {', '.join(ENGINES)} (default: all but datafusion and quiver-ray)")
    parser.add_argument("--queries", type=_query_list, default=list(QUERY_NUMBERS), help="e.g. 1,3,5 or 1-10")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per query after the warm-up")
    parser.add_argument("--rounds", type=int, default=1,
                        help="run the engines this many times in turn and pool each query's runs (default 1)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="markdown file to update, or '-' to only print")
    parser.add_argument("--form", choices=FORMS, default="sql",
                        help="how Quiver and PySpark get the queries: SQL text or the DataFrame API")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds one run of a query (or an engine's start-up) may take")
    parser.add_argument("--slow-s", type=float, default=120.0,
                        help="a warm-up slower than this gets one timed run, not --repeat")
    parser.add_argument("--sample-s", type=float, default=0.2, help="RSS sampling interval, seconds")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run the benchmark; the exit status is 1 when answers disagree."""
    argv = sys.argv[1:] if argv is None else argv
    return run_benchmark(parse_args(argv), argv)


if __name__ == "__main__":
    sys.exit(main())
