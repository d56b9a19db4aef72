"""Instants and wall-clock times (core/time_zones.py) against Python's zoneinfo, whose rule for a repeated or a
skipped wall-clock time (fold=0: the offset before the change) is Java's, and so Spark's."""
from __future__ import annotations

import datetime as dt
import zoneinfo

import pyarrow as pa
import pytest

from quiver.engine.core import types as T
from quiver.engine.core.time_zones import MICROS, local_to_utc, table_in_zone, utc_to_local, zone_info

ZONES = ["America/Los_Angeles", "Europe/Oslo", "Asia/Kolkata", "Australia/Lord_Howe", "Pacific/Chatham",
         "America/St_Johns", "+05:45", "-09:30", "UTC"]
UTC = dt.timezone.utc


def _every_half_hour_of(year: int) -> list[dt.datetime]:
    start = dt.datetime(year, 1, 1)
    return [start + dt.timedelta(minutes=30 * i + 7) for i in range(366 * 48)]


@pytest.mark.parametrize("zone", ZONES)
def test_wall_clock_times_become_the_instants_python_gives_them(zone):
    local = _every_half_hour_of(2019)
    expected = [t.replace(tzinfo=zone_info(zone)).astimezone(UTC).replace(tzinfo=None) for t in local]
    assert local_to_utc(pa.array(local, MICROS), zone).to_pylist() == expected


@pytest.mark.parametrize("zone", ZONES)
def test_instants_show_the_wall_clock_times_python_gives_them(zone):
    instants = _every_half_hour_of(2019)
    expected = [t.replace(tzinfo=UTC).astimezone(zone_info(zone)).replace(tzinfo=None) for t in instants]
    assert utc_to_local(pa.array(instants, MICROS), zone).to_pylist() == expected


def test_a_skipped_time_moves_on_by_the_gap_and_a_repeated_one_is_the_earlier_instant():
    la = "America/Los_Angeles"
    local = pa.array([dt.datetime(2019, 3, 10, 2, 30), dt.datetime(2019, 11, 3, 1, 30), None], MICROS)
    instants = local_to_utc(local, la)
    assert instants.to_pylist() == [dt.datetime(2019, 3, 10, 10, 30), dt.datetime(2019, 11, 3, 8, 30), None]
    # 02:30 never happened: the instant reads 03:30 PDT; 01:30 happened twice: the first, in PDT.
    assert utc_to_local(instants, la).to_pylist()[:2] == [dt.datetime(2019, 3, 10, 3, 30),
                                                        dt.datetime(2019, 11, 3, 1, 30)]


def test_a_result_shows_instants_nested_in_structs_arrays_and_maps_in_the_zone():
    schema = T.StructType([T.StructField("ts", T.TimestampType()), T.StructField("wall", T.TimestampNTZType()),
                           T.StructField("s", T.StructType([T.StructField("at", T.TimestampType())])),
                           T.StructField("a", T.ArrayType(T.TimestampType())),
                           T.StructField("m", T.MapType(T.StringType(), T.TimestampType()))])
    noon = dt.datetime(2024, 7, 1, 12)
    table = pa.Table.from_pylist([{"ts": noon, "wall": noon, "s": {"at": noon}, "a": [noon, None], "m": [("k", noon)]}],
                                 schema=pa.schema([f.to_arrow_field() for f in schema.fields]))
    shown = table_in_zone(table, schema, "Asia/Kolkata").to_pylist()[0]
    local = dt.datetime(2024, 7, 1, 17, 30)
    assert shown == {"ts": local, "wall": noon, "s": {"at": local}, "a": [local, None], "m": [("k", local)]}


def test_zone_info_names_what_python_needs():
    assert zone_info("UTC") is UTC
    assert zone_info("+05:45").utcoffset(None) == dt.timedelta(hours=5, minutes=45)
    assert zone_info("Europe/Oslo") == zoneinfo.ZoneInfo("Europe/Oslo")
