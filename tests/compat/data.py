"""Small shared datasets, built only through the public API of whichever engine is given."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal


def people(spark):
    """Names, ages (with a null), cities (with a null), salaries, a department id."""
    return spark.createDataFrame(
        [
            (1, "Alice", 34, "Paris", 5200.0, 10),
            (2, "Bob", 45, "London", 4100.5, 20),
            (3, "Carol", None, "Paris", 6100.0, 10),
            (4, "Dan", 29, None, 3900.0, 30),
            (5, "Eve", 38, "Berlin", None, 20),
            (6, "Frank", 45, "London", 4700.25, None),
            (7, "Grace", 23, "Berlin", 3100.0, 10),
        ],
        "id int, name string, age int, city string, salary double, dept_id int",
    )


def depts(spark):
    return spark.createDataFrame(
        [(10, "Engineering", "Paris"), (20, "Sales", "London"), (40, "Legal", "Rome"), (None, "Orphan", None)],
        "dept_id int, dept_name string, hq string",
    )


def sales(spark):
    """Order lines: region, product, category, day, quantity (int), price (double), with nulls."""
    d = dt.date
    return spark.createDataFrame(
        [
            (1, "north", "apple", "fruit", d(2024, 1, 3), 3, 1.25),
            (2, "north", "pear", "fruit", d(2024, 1, 17), 1, 2.5),
            (3, "south", "apple", "fruit", d(2024, 2, 1), 10, 1.2),
            (4, "south", "kale", "veg", d(2024, 2, 14), 2, 3.75),
            (5, "east", "kale", "veg", d(2024, 2, 29), None, 3.5),
            (6, "east", "leek", "veg", d(2024, 3, 8), 4, None),
            (7, None, "plum", "fruit", d(2024, 3, 9), 7, 0.8),
            (8, "north", "leek", "veg", d(2024, 3, 30), 5, 1.9),
            (9, "west", "pear", "fruit", None, 2, 2.4),
            (10, "south", "plum", "fruit", d(2023, 12, 31), 6, 0.75),
        ],
        "order_id int, region string, product string, category string, day date, qty int, price double",
    )


def numbers(spark):
    """Integer, bigint and double columns for arithmetic, with nulls and negatives."""
    return spark.createDataFrame(
        [
            (1, 10, 2.5, -3),
            (2, -7, 0.1, 4),
            (3, 100, -1.75, 3),
            (4, None, 3.0, 7),
            (5, 8, None, -2),
            (6, 0, 1e10, 1),
        ],
        "i int, b bigint, d double, j int",
    )


def words(spark):
    return spark.createDataFrame(
        [
            (1, "  Hello World  ", "a-b-c", "foo@example.com"),
            (2, "spark", "x", "bar@test.org"),
            (3, None, "p-q", None),
            (4, "Quiver Arrow", "", "baz@example.com"),
            (5, "ÄÖÜ straße", "1-2", "qux@EXAMPLE.com"),
        ],
        "id int, s string, t string, email string",
    )


def events(spark):
    """Dates as strings, dates and timestamps."""
    return spark.createDataFrame(
        [
            (1, "2024-01-15", dt.date(2024, 1, 15), dt.datetime(2024, 1, 15, 8, 30, 0)),
            (2, "2023-12-31", dt.date(2023, 12, 31), dt.datetime(2023, 12, 31, 23, 59, 59)),
            (3, "2024-02-29", dt.date(2024, 2, 29), dt.datetime(2024, 2, 29, 12, 0, 0)),
            (4, None, None, None),
            (5, "2020-06-01", dt.date(2020, 6, 1), dt.datetime(2020, 6, 1, 0, 0, 1)),
        ],
        "id int, ds string, d date, ts timestamp",
    )


def money(spark):
    return spark.createDataFrame(
        [(1, "a", Decimal("10.50")), (2, "a", Decimal("3.25")), (3, "b", None), (4, "b", Decimal("-1.00"))],
        "id int, k string, amount decimal(10,2)",
    )
