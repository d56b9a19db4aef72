"""Deterministic synthetic data for the side-by-side benchmarks, cached as Parquet.

A fact table of N rows and a dimension table keyed like it are written once per set of
parameters under ``benchmarks/.data/`` and reused while the parameters (and the layout
version below) stay the same. Same parameters, same bytes: every value comes from a
seeded ``numpy.random.Generator``.

    python -m benchmarks.datagen --rows 10000000
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

# Bump when the generated values or file layout change, so stale caches are not reused.
LAYOUT_VERSION = 1

DEFAULT_CACHE = Path(__file__).resolve().parent / ".data"

CATEGORIES = [f"cat_{i:02d}" for i in range(50)]
REGIONS = [
    "africa", "antarctica", "asia", "europe", "middle_east",
    "north_america", "oceania", "south_america", "arctic", "caribbean",
]
TS_START = np.datetime64("2020-01-01", "D")
TS_DAYS = 5 * 365 + 1

FACT_SCHEMA = pa.schema([
    ("id", pa.int64()),
    ("key", pa.int32()),
    ("category", pa.string()),
    ("amount", pa.float64()),
    ("qty", pa.int32()),
    ("ts", pa.date32()),
])
DIM_SCHEMA = pa.schema([
    ("key", pa.int32()),
    ("name", pa.string()),
    ("region", pa.string()),
])


@dataclass(frozen=True)
class DataSpec:
    """What a data set is made of; equal specs give identical files."""

    rows: int
    keys: int = 1_000_000
    files: int = 4
    row_group_rows: int = 1_000_000
    seed: int = 20240601
    version: int = LAYOUT_VERSION

    @property
    def name(self) -> str:
        return f"core_r{self.rows}_k{self.keys}_f{self.files}_s{self.seed}_v{self.version}"


@dataclass(frozen=True)
class DataSet:
    """Paths of a generated data set: each table is a folder of Parquet files."""

    spec: DataSpec
    root: Path

    @property
    def fact(self) -> Path:
        return self.root / "fact"

    @property
    def dim(self) -> Path:
        return self.root / "dim"

    def files(self, table: str) -> list[str]:
        return sorted(str(p) for p in (self.root / table).glob("*.parquet"))


def _fact_chunk(spec: DataSpec, start: int, stop: int) -> pa.Table:
    # One generator per file, seeded by (seed, file start): files are independent of
    # how many chunks came before them, so regenerating one file gives the same bytes.
    rng = np.random.default_rng([spec.seed, 0, start])
    n = stop - start
    cat_codes = rng.integers(0, len(CATEGORIES), n, dtype=np.int32)
    category = pa.DictionaryArray.from_arrays(
        pa.array(cat_codes), pa.array(CATEGORIES)
    ).cast(pa.string())
    return pa.table(
        {
            "id": pa.array(np.arange(start, stop, dtype=np.int64)),
            "key": pa.array(rng.integers(0, spec.keys, n, dtype=np.int32)),
            "category": category,
            # Cents, so the top of the sort has ties and the id tie-break matters.
            "amount": pa.array(np.round(rng.uniform(0.0, 1000.0, n), 2)),
            "qty": pa.array(rng.integers(1, 101, n, dtype=np.int32)),
            "ts": pa.array(TS_START + rng.integers(0, TS_DAYS, n), type=pa.date32()),
        },
        schema=FACT_SCHEMA,
    )


def _dim_table(spec: DataSpec) -> pa.Table:
    rng = np.random.default_rng([spec.seed, 1, 0])
    keys = np.arange(spec.keys, dtype=np.int32)
    names = pa.array([f"name_{k:07d}" for k in range(spec.keys)], type=pa.string())
    region_codes = rng.integers(0, len(REGIONS), spec.keys, dtype=np.int32)
    region = pa.DictionaryArray.from_arrays(
        pa.array(region_codes), pa.array(REGIONS)
    ).cast(pa.string())
    return pa.table({"key": keys, "name": names, "region": region}, schema=DIM_SCHEMA)


def _write(table: pa.Table, path: Path, row_group_rows: int) -> None:
    pq.write_table(table, path, row_group_size=row_group_rows, compression="snappy")


def _manifest_matches(root: Path, spec: DataSpec) -> bool:
    manifest = root / "manifest.json"
    if not manifest.is_file():
        return False
    try:
        return json.loads(manifest.read_text())["spec"] == asdict(spec)
    except (ValueError, KeyError):
        return False


def ensure_dataset(spec: DataSpec, cache: Path = DEFAULT_CACHE, log=print) -> DataSet:
    """Return the data set for ``spec``, generating it first unless already cached."""
    root = cache / spec.name
    if _manifest_matches(root, spec):
        return DataSet(spec, root)
    cache.mkdir(parents=True, exist_ok=True)
    tmp = cache / f".tmp-{spec.name}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "fact").mkdir(parents=True)
    (tmp / "dim").mkdir(parents=True)
    t0 = time.perf_counter()
    bounds = np.linspace(0, spec.rows, spec.files + 1).astype(np.int64)
    for i in range(spec.files):
        chunk = _fact_chunk(spec, int(bounds[i]), int(bounds[i + 1]))
        _write(chunk, tmp / "fact" / f"part-{i:05d}.parquet", spec.row_group_rows)
    _write(_dim_table(spec), tmp / "dim" / "part-00000.parquet", spec.row_group_rows)
    (tmp / "manifest.json").write_text(
        json.dumps({"spec": asdict(spec), "generated_s": time.perf_counter() - t0}, indent=2)
    )
    # Commit by rename so an interrupted run never leaves a half-written set behind.
    shutil.rmtree(root, ignore_errors=True)
    tmp.rename(root)
    log(f"generated {spec.name} in {time.perf_counter() - t0:.1f}s under {root}")
    return DataSet(spec, root)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    args = parser.parse_args(argv)
    ds = ensure_dataset(DataSpec(rows=args.rows, keys=args.keys), args.cache)
    print(ds.root)


if __name__ == "__main__":
    main()
