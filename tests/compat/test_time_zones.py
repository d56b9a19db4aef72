"""The session time zone (`spark.sql.session.timeZone`) against real PySpark: text is parsed and shown, and
fields are taken, in the session's zone, across daylight-saving changes (a skipped and a repeated hour) and
for zones with half-hour offsets. Python's datetimes stay in the machine's zone (UTC here), as PySpark's do."""
from __future__ import annotations

import datetime as dt

import pytest

from .harness import assert_same, assert_same_output

ZONES = ["America/Los_Angeles", "Asia/Kolkata", "+05:45", "UTC"]

# Around Los Angeles' changes in 2019: 02:30 on 10 March never happened, 01:30 on 3 November happened twice.
TEXTS = ["2019-03-10 01:59:59", "2019-03-10 02:30:00", "2019-03-10 03:00:00", "2019-11-03 00:59:59",
         "2019-11-03 01:30:00", "2019-11-03 02:00:00", "2024-02-29 23:45:10.123456", "1969-12-31 23:59:59",
         "2024-06-30T12:00:00Z", "2024-06-30 12:00:00+02:00", None]


def _texts(spark):
    return spark.createDataFrame([(i, t) for i, t in enumerate(TEXTS)], "id int, s string")


@pytest.mark.parametrize("zone", ZONES)
def test_text_cast_to_timestamp_and_its_fields(zone):
    def program(spark, F, T, Window):
        df = _texts(spark).withColumn("ts", F.col("s").cast("timestamp"))
        return df.select(
            "id", "ts", F.col("ts").cast("string").alias("text"), F.col("ts").cast("date").alias("d"),
            F.hour("ts").alias("h"), F.minute("ts").alias("mi"), F.second("ts").alias("sec"),
            F.dayofmonth("ts").alias("dom"), F.dayofweek("ts").alias("dow"),
            F.date_format("ts", "yyyy-MM-dd HH:mm:ss.SSS EEE").alias("fmt"),
            F.unix_timestamp("ts").alias("unix"), F.to_date("ts").alias("to_date"))
    assert_same(program, conf={"spark.sql.session.timeZone": zone}, shuffle_partitions=(1,))


@pytest.mark.parametrize("zone", ZONES)
def test_parsing_with_patterns_and_unix_time(zone):
    def program(spark, F, T, Window):
        df = spark.createDataFrame([("2019-03-10 02:30",), ("2019-11-03 01:30",), ("2024-01-01 00:00",), (None,)],
                                   "s string")
        return df.select(
            "s", F.to_timestamp("s", "yyyy-MM-dd HH:mm").alias("ts"),
            F.unix_timestamp("s", "yyyy-MM-dd HH:mm").alias("unix"),
            F.from_unixtime(F.unix_timestamp("s", "yyyy-MM-dd HH:mm")).alias("back"),
            F.from_unixtime(F.lit(0)).alias("epoch"),
            F.date_trunc("day", F.to_timestamp("s", "yyyy-MM-dd HH:mm")).alias("day"),
            F.date_trunc("hour", F.to_timestamp("s", "yyyy-MM-dd HH:mm")).alias("hour"),
            F.date_trunc("month", F.to_timestamp("s", "yyyy-MM-dd HH:mm")).alias("month"))
    assert_same(program, conf={"spark.sql.session.timeZone": zone}, shuffle_partitions=(1,))


@pytest.mark.parametrize("zone", ZONES)
def test_sql_literals_casts_and_interval_arithmetic(zone):
    def program(spark, F, T, Window):
        return spark.sql("""
            SELECT TIMESTAMP '2019-03-09 12:00:00' AS lit,
                   TIMESTAMP '2019-03-09 12:00:00' + INTERVAL 1 DAY AS next_day,
                   TIMESTAMP '2019-03-09 12:00:00' + INTERVAL 24 HOURS AS next_24h,
                   TIMESTAMP '2019-10-31 12:00:00' + INTERVAL 1 MONTH AS next_month,
                   CAST(DATE '2019-11-03' AS TIMESTAMP) AS midnight,
                   CAST(TIMESTAMP '2019-11-03 23:30:00' AS DATE) AS day,
                   CAST(TIMESTAMP '2019-11-03 01:30:00' AS STRING) AS text,
                   hour(TIMESTAMP '2019-11-03 01:30:00') AS h,
                   TIMESTAMP '2024-06-30 12:00:00Z' AS utc_lit,
                   CAST(TIMESTAMP '2019-11-03 01:30:00' AS TIMESTAMP_NTZ) AS wall,
                   CAST(TIMESTAMP_NTZ '2019-11-03 01:30:00' AS TIMESTAMP) AS instant,
                   from_utc_timestamp(TIMESTAMP '2024-01-01 00:00:00', 'Asia/Tokyo') AS tokyo,
                   to_utc_timestamp(TIMESTAMP '2024-01-01 00:00:00', 'Asia/Tokyo') AS from_tokyo,
                   months_between(TIMESTAMP '2024-03-31 23:00:00', TIMESTAMP '2024-02-29 01:00:00') AS months
        """)
    assert_same(program, conf={"spark.sql.session.timeZone": zone}, shuffle_partitions=(1,))


@pytest.mark.parametrize("zone", ZONES)
def test_python_datetimes_and_comparisons_with_them(zone):
    def program(spark, F, T, Window):
        df = spark.createDataFrame([(1, dt.datetime(2024, 1, 1, 0, 30)), (2, dt.datetime(2024, 7, 1, 23, 0)),
                                    (3, None)], "id int, ts timestamp")
        return df.select("id", "ts", F.hour("ts").alias("h"), F.col("ts").cast("string").alias("text"),
                         (F.col("ts") > dt.datetime(2024, 3, 1)).alias("later"),
                         F.lit(dt.datetime(2020, 1, 1, 12, 0)).alias("lit"))
    assert_same(program, conf={"spark.sql.session.timeZone": zone}, shuffle_partitions=(1,))


@pytest.mark.parametrize("zone", ["America/Los_Angeles", "Asia/Kolkata"])
def test_show_prints_timestamps_in_the_session_zone(zone):
    def program(spark, F, T, Window):
        _texts(spark).select("id", F.col("s").cast("timestamp").alias("ts")).orderBy("id").show(truncate=False)
    assert_same_output(program, conf={"spark.sql.session.timeZone": zone}, shuffle_partitions=(1,))


@pytest.mark.parametrize("zone", ["America/Los_Angeles", "Asia/Kolkata"])
def test_csv_and_json_text_without_an_offset_is_in_the_session_zone(zone, tmp_path):
    csv_file = tmp_path / "t.csv"
    csv_file.write_text("id,ts\n1,2019-03-10 02:30:00\n2,2019-11-03 01:30:00\n3,2024-06-30T12:00:00Z\n")
    json_file = tmp_path / "t.json"
    json_file.write_text('{"id": 1, "ts": "2019-11-03 01:30:00"}\n{"id": 2, "ts": "2024-06-30T12:00:00+02:00"}\n')

    def program(spark, F, T, Window):
        csv = spark.read.csv(str(csv_file), header=True, schema="id int, ts timestamp")
        json = spark.read.json(str(json_file), schema="id int, ts timestamp")
        both = csv.unionByName(json.withColumn("id", F.col("id") + 10))
        return both.select("id", "ts", F.hour("ts").alias("h"), F.col("ts").cast("string").alias("text"))
    assert_same(program, conf={"spark.sql.session.timeZone": zone}, shuffle_partitions=(1,))
