"""The core install leaves pandas out (PySpark's own core does too): without it a program still imports
Quiver, runs queries, windows, UDFs, time zones and SQL, and the calls that need pandas say which extra to
install. pandas is blocked in a fresh process by a finder that answers every import of it as a missing module
would, pyarrow's included."""
from __future__ import annotations

import subprocess
import sys
import textwrap

PROGRAM = textwrap.dedent("""
    import sys

    class NoPandas:
        def find_spec(self, name, path=None, target=None):
            if name == "pandas" or name.startswith("pandas."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)

    sys.meta_path.insert(0, NoPandas())
    import datetime as dt
    import quiver
    from quiver import Window, functions as F
    from quiver.engine.core.errors import MissingDependency

    spark = quiver.SparkSession.builder.master("local[2]").getOrCreate()
    df = spark.createDataFrame([("a", 1, dt.datetime(2024, 1, 1, 10)), ("b", 2, None), ("a", 3, None)],
                               "k string, v int, ts timestamp")
    running = Window.partitionBy("k").orderBy("v").rowsBetween(Window.unboundedPreceding, Window.currentRow)
    out = df.select("k", F.max("v").over(running).alias("m"), F.from_utc_timestamp("ts", "Asia/Tokyo").alias("tokyo"),
                    F.udf(lambda x: x * 2, "int")("v").alias("twice")).orderBy("k", "m")
    assert [tuple(r) for r in out.collect()] == [
        ("a", 1, dt.datetime(2024, 1, 1, 19), 2), ("a", 3, None, 6), ("b", 2, None, 4)], out.collect()
    assert df.groupBy("k").agg(F.median("v")).orderBy("k").collect()[0][1] == 2.0
    spark.conf.set("spark.sql.session.timeZone", "America/Los_Angeles")
    assert spark.sql("SELECT hour(TIMESTAMP '2024-07-01 09:00:00') AS h").collect()[0].h == 9
    df.show()
    try:
        df.toPandas()
    except MissingDependency as error:
        assert "pip install 'quiver-dataflow[pandas]'" in str(error), error
    else:
        raise AssertionError("toPandas() ran without pandas")
    assert not any(m == "pandas" or m.startswith("pandas.") for m in sys.modules)
    print("ok")
""")


def test_a_program_runs_without_pandas_and_toPandas_names_the_extra():
    done = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stdout + done.stderr
