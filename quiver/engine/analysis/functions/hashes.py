"""Catalog entries for Spark's hash functions: hash (Murmur3), xxhash64, crc32 and the digests md5, sha1
(sha) and sha2."""
from __future__ import annotations

from quiver.engine.analysis.functions.catalog import BINARY, INT, any_arguments, register, returns, takes, unary
from quiver.engine.core import types as T

unary(["md5", "sha1", "sha"], BINARY, T.StringType())
register("sha2", 2, 2, returns(T.StringType()), takes("sha2", BINARY, INT))
register("hash", 1, None, returns(T.IntegerType()), any_arguments)
register("xxhash64", 1, None, returns(T.LongType()), any_arguments)
register("crc32", 1, 1, returns(T.LongType()), takes("crc32", BINARY))
