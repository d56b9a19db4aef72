"""Hash functions of `quiver.functions` (F): hash (Murmur3), xxhash64, crc32 and the digests md5, sha1 (sha)
and sha2, as in PySpark. (Named `hashes`, not `hash`, so the module does not shadow `F.hash` in this package.)"""
from __future__ import annotations

from quiver.engine.api.column import Column, literal_expr, to_expr
from quiver.engine.api.functions.calls import ColumnOrName, call, column_args


def md5(col: ColumnOrName) -> Column:
    """The MD5 digest of a binary (or of a string's UTF-8 bytes), as 32 hex digits; for checksums, not security.

    >>> df.select(F.md5("name").alias("h")).collect()
    [Row(h='64489c85dc2fe0787b85cd87214b3810'), Row(h='2fc1c0beb992cd7096975cfebf9d5c3b')]
    """
    return call("md5", to_expr(col))


def sha1(col: ColumnOrName) -> Column:
    """The SHA-1 digest of a binary (or of a string's UTF-8 bytes), as 40 hex digits (`sha` is its other name).

    >>> df.select(F.sha1("name").alias("h")).collect()
    [Row(h='35318264c9a98faf79965c270ac80c5606774df1'), Row(h='da6645f6e22bf5f75974dc7eed5fcd6160d6b51e')]
    """
    return call("sha1", to_expr(col))


def sha2(col: ColumnOrName, numBits: int) -> Column:  # noqa: N803
    """SHA-2 hex digest with 224, 256, 384 or 512 bits (0 means 256).

    >>> spark.createDataFrame([("abc",)], ["s"]).select(F.sha2("s", 256).alias("h")).first()[0]
    'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
    """
    if numBits not in (0, 224, 256, 384, 512):
        raise ValueError(f"sha2: numBits must be one of 0, 224, 256, 384, 512, got {numBits!r}")
    return call("sha2", to_expr(col), literal_expr(numBits))


def hash(*cols: ColumnOrName) -> Column:  # noqa: A001 — PySpark's name
    """Spark's Murmur3 hash (x86_32, seed 42) of the columns, as an int.

    >>> spark.createDataFrame([("ABC",)], ["s"]).select(F.hash("s").alias("h")).collect()
    [Row(h=-757602832)]
    """
    return call("hash", *column_args("hash", cols, least=1))


def xxhash64(*cols: ColumnOrName) -> Column:
    """Spark's XXH64 hash (seed 42) of the columns, as a bigint.

    >>> spark.createDataFrame([("ABC",)], ["s"]).select(F.xxhash64("s").alias("h")).collect()
    [Row(h=4105715581806190027)]
    """
    return call("xxhash64", *column_args("xxhash64", cols, least=1))


def crc32(col: ColumnOrName) -> Column:
    """CRC-32 of a string's or binary's bytes, as a bigint.

    >>> spark.createDataFrame([("ABC",)], ["s"]).select(F.crc32("s").alias("c")).collect()
    [Row(c=2743272264)]
    """
    return call("crc32", to_expr(col))


def sha(col: ColumnOrName) -> Column:
    """SHA-1 hex digest (sha1's other name).

    >>> spark.createDataFrame([("abc",)], ["s"]).select(F.sha("s").alias("h")).first()[0]
    'a9993e364706816aba3e25717850c26c9cd0d89d'
    """
    return call("sha", to_expr(col))


__all__ = [
    "md5", "sha1", "sha2", "hash", "xxhash64", "crc32", "sha",
]
