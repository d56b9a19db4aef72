"""TPC-H tables as Parquet, made once per scale factor by the `tpchgen-cli` generator."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

TABLES = ("customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier")
DEFAULT_ROOT = Path(__file__).resolve().parents[1] / ".data" / "tpch"


def _generator() -> str:
    """The tpchgen-cli executable next to this interpreter, else the one on PATH."""
    beside = Path(sys.executable).with_name("tpchgen-cli")
    if beside.exists():
        return str(beside)
    found = shutil.which("tpchgen-cli")
    if found is None:
        raise RuntimeError("tpchgen-cli is not installed; it comes with the dev extra: pip install -e '.[dev]'")
    return found


def scale_name(sf: float) -> str:
    """The folder name of one scale factor, e.g. 'sf0.01' or 'sf1'."""
    return f"sf{sf:g}"


def ensure_tables(sf: float, root: Path | None = None) -> dict[str, Path]:
    """Each TPC-H table's Parquet file at scale factor `sf`, generating the set if it is not there yet.

    Generation writes into a temporary folder renamed into place, so an interrupted run never
    leaves a half-written scale factor behind.
    """
    if sf <= 0:
        raise ValueError(f"the TPC-H scale factor must be positive, got {sf}")
    root = Path(root) if root is not None else DEFAULT_ROOT
    target = root / scale_name(sf)
    if not all((target / f"{t}.parquet").exists() for t in TABLES):
        root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{scale_name(sf)}-", dir=root))
        try:
            subprocess.run(
                [_generator(), "parquet", "--scale-factor", f"{sf:g}", "--output-dir", str(staging)],
                check=True, capture_output=True, text=True,
            )
            if target.exists():
                shutil.rmtree(target)
            os.replace(staging, target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return {t: target / f"{t}.parquet" for t in TABLES}
