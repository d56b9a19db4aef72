"""`make demo`: make a small sales data set, run a job on the embedded runtime, print result and plan."""
from __future__ import annotations

import os
import shutil
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import quiver
from quiver import functions as F

# Where the demo writes its data and job report: demo-data/ in the repository, or $QUIVER_DEMO_DATA.
DATA = os.environ.get("QUIVER_DEMO_DATA") or os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                                         "demo-data")


def make_data(path: str, rows: int = 200_000, seed: int = 7) -> None:
    """Write a sales fact table (partitioned by year) and a store dimension as Parquet."""
    rng = np.random.default_rng(seed)
    shutil.rmtree(path, ignore_errors=True)
    stores = pa.table({
        "store_id": pa.array(np.arange(50, dtype=np.int32)),
        "city": pa.array([["Lisbon", "Oslo", "Kyoto", "Lima", "Accra"][i % 5] for i in range(50)]),
    })
    os.makedirs(os.path.join(path, "stores"))
    pq.write_table(stores, os.path.join(path, "stores", "stores.parquet"))
    for year in (2024, 2025):
        n = rows // 2
        sales = pa.table({
            "store_id": pa.array(rng.integers(0, 50, n, dtype=np.int32)),
            "amount": pa.array(np.round(rng.gamma(2.0, 30.0, n), 2)),
            "qty": pa.array(rng.integers(1, 10, n, dtype=np.int32)),
        })
        folder = os.path.join(path, "sales", f"year={year}")
        os.makedirs(folder)
        pq.write_table(sales, os.path.join(folder, "part-0.parquet"), row_group_size=20_000)


def main() -> int:
    make_data(DATA)
    spark = quiver.SparkSession.builder.master("local[*]").appName("demo").getOrCreate()
    sales = spark.read.parquet(os.path.join(DATA, "sales"))
    stores = spark.read.parquet(os.path.join(DATA, "stores"))
    result = (
        sales.filter(F.col("qty") >= 3)
        .join(stores, "store_id")
        .groupBy("city", "year")
        .agg(F.sum("amount").alias("revenue"), F.count("*").alias("orders"), F.avg("qty").alias("avg_qty"))
        .orderBy(F.col("revenue").desc())
    )
    result.show()
    result.explain()
    # The same job planned for this host with an NVIDIA H200 (emulated: numpy runs the GPU kernels),
    # forced onto the GPU where it can run: same rows, and explain says where each operator runs and why.
    spark.conf.set("quiver.devices", "cpu,gpu:emulated")
    spark.conf.set("quiver.placement", "gpu")
    result.show()
    print(result._execution().placement_string())
    # The job that just ran: a timeline of its tasks, one lane per worker, coloured by device.
    print("job report:", spark.lastJob().report(os.path.join(DATA, "job.html")))
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
