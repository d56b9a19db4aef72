"""Where a path's bytes live: the local disk, an S3-compatible object store for `s3://bucket/key`, or any
other file system pyarrow or fsspec opens by URI (`gs://`, `abfs://`, `hdfs://`, `https://`, `memory://`).

Every file connector resolves paths here (`resolve`: path -> pyarrow FileSystem and the path
within it), so `s3://` works wherever a local path does; `s3a://` and `s3n://`, Hadoop's names,
mean the same. Local files are opened as before (open(), memory maps, os.stat, pyarrow's local
file system). Writes to an object store commit through `connectors.sink`, which uses the object
helpers at the end of this module (upload, copy, delete).

Another scheme is opened with pyarrow's own file system where it has one that works here (`gs://` and
`gcs://`: GCS; `abfs://` and `abfss://`: Azure; `hdfs://` and `viewfs://`: HDFS through libhdfs), else with
fsspec's (`https://` and `http://`, `memory://`, and whatever fsspec implementation is installed: gcsfs,
adlfs, ...), which takes its credentials from its own environment and configuration. Every such path is an
object path here: listed, globbed, read and written through its file system, with the messages naming its
URI; the S3 settings, ETags and the storage cache are S3's alone.

S3 settings (endpoint, credentials, region) come from the session conf, `quiver.s3.*` or Hadoop's
`spark.hadoop.fs.s3a.*` aliases, else from the AWS environment variables. A read or a write binds
them to the buckets it touches; the `StorageBinding` a source or sink keeps re-binds them wherever
it is unpickled, so a task on a Ray worker reaches the same endpoint with the same credentials.
"""
from __future__ import annotations

import contextlib
import fnmatch
import functools
import gzip
import os
import random
import shutil
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import pyarrow as pa
import pyarrow.fs as pafs

from quiver.connectors.cache import DecodedCache, StorageCacheSettings, caching_filesystem
from quiver.engine.core.conf import canonical_key
from quiver.engine.core.errors import AnalysisException, ConfigurationError, QuiverError

OBJECT_SCHEMES = ("s3", "s3a", "s3n")
# Schemes pyarrow has a file system of its own for (its FileSystem.from_uri); fsspec is asked for the rest.
PYARROW_SCHEMES = ("gs", "gcs", "abfs", "abfss", "hdfs", "viewfs")
# Of those, the ones whose file system takes paths below the host (`/key`), not `bucket/key`.
HOST_RELATIVE_SCHEMES = ("hdfs", "viewfs")
ENDPOINT_KEY = "quiver.s3.endpoint"
ACCESS_KEY_KEY = "quiver.s3.accessKey"
SECRET_KEY_KEY = "quiver.s3.secretKey"
SESSION_TOKEN_KEY = "quiver.s3.sessionToken"
REGION_KEY = "quiver.s3.region"
MAX_ATTEMPTS_KEY = "quiver.s3.maxAttempts"
# Hadoop S3A's fs.s3a.attempts.maximum default: a request and four retries.
DEFAULT_MAX_ATTEMPTS = 5
CONNECT_TIMEOUT_S = 10.0
_LOCAL = pafs.LocalFileSystem()
_COPY_BUFFER = 8 * 1024 * 1024


class ObjectStoreError(QuiverError):
    """An object store refused a request or could not be reached; names the object and the endpoint."""


@dataclass(frozen=True)
class S3Settings:
    """How to reach one S3-compatible store; the secret and the session token stay out of repr."""

    endpoint: str | None = None
    access_key: str | None = None
    secret_key: str | None = field(default=None, repr=False)
    session_token: str | None = field(default=None, repr=False)
    region: str | None = None
    # Reads go through the storage-side cache with these bounds (None: straight to the store).
    cache: StorageCacheSettings | None = None
    # Tries of each request that fails transiently (HTTP 500 or 503, throttling, a reset connection,
    # a timeout), with exponential backoff and jitter between them, before the read or write fails.
    max_attempts: int = DEFAULT_MAX_ATTEMPTS

    @classmethod
    def from_conf(cls, conf: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None) -> S3Settings:
        """Settings from conf keys (`quiver.s3.*` or their Hadoop aliases), each missing one from the
        AWS environment variables; a key pair is taken whole from one place, never mixed."""
        values = {canonical_key(k): str(v) for k, v in (conf or {}).items() if v is not None and str(v) != ""}
        env = os.environ if env is None else env
        access, secret = values.get(ACCESS_KEY_KEY), values.get(SECRET_KEY_KEY)
        token = values.get(SESSION_TOKEN_KEY)
        if access is None and secret is None:
            access, secret = env.get("AWS_ACCESS_KEY_ID") or None, env.get("AWS_SECRET_ACCESS_KEY") or None
            token = token or env.get("AWS_SESSION_TOKEN") or None
        if (access is None) != (secret is None):
            raise ConfigurationError(
                f"S3 credentials need both an access key and a secret key: set {ACCESS_KEY_KEY} and {SECRET_KEY_KEY} "
                "(or spark.hadoop.fs.s3a.access.key / .secret.key, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)")
        endpoint = values.get(ENDPOINT_KEY) or env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL") or None
        region = values.get(REGION_KEY) or env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or None
        settings = cls(endpoint.rstrip("/") if endpoint else None, access, secret, token, region,
                       StorageCacheSettings.from_conf(values), _max_attempts(values.get(MAX_ATTEMPTS_KEY)))
        settings.endpoint_parts()
        return settings

    def endpoint_parts(self) -> tuple[str, str] | None:
        """(scheme, host[:port]) of the endpoint, https when it names no scheme; None for AWS itself."""
        if not self.endpoint:
            return None
        scheme, sep, host = self.endpoint.partition("://")
        if not sep:
            scheme, host = "https", self.endpoint
        if scheme.lower() not in ("http", "https") or not host:
            raise ConfigurationError(
                f"{ENDPOINT_KEY} must be a URL such as http://127.0.0.1:9000 or https://s3.example.com, "
                f"got {self.endpoint!r}")
        return scheme.lower(), host

    def where(self) -> str:
        """The store for messages: `endpoint http://127.0.0.1:9000`, or AWS and its region."""
        if self.endpoint:
            scheme, host = self.endpoint_parts()
            return f"endpoint {scheme}://{host}"
        return f"AWS S3 (region {self.region or 'from the AWS configuration'})"

    def filesystem(self) -> pafs.FileSystem:
        """The pyarrow file system for these settings, one per distinct settings in a process; its reads go
        through the storage cache unless `quiver.cache.storage.enabled` is false."""
        return _s3_filesystem(self)


@functools.lru_cache(maxsize=32)
def _s3_filesystem(settings: S3Settings) -> pafs.FileSystem:
    store = _s3_store(settings)
    return store if settings.cache is None else caching_filesystem(store, "s3", settings.cache.open())


def _max_attempts(value: str | None) -> int:
    if value is None:
        return DEFAULT_MAX_ATTEMPTS
    try:
        attempts = int(value.strip())
    except ValueError:
        attempts = 0
    if attempts < 1:
        raise ConfigurationError(f"{MAX_ATTEMPTS_KEY} must be a whole number of at least 1 (1: no retries), "
                                 f"got {value!r}")
    return attempts


@functools.lru_cache(maxsize=32)
def _s3_store(settings: S3Settings) -> pafs.S3FileSystem:
    # The AWS SDK's standard strategy retries throttling, 5xx answers, resets and timeouts with
    # exponential backoff and full jitter, up to the attempts asked for.
    kwargs: dict[str, Any] = {"connect_timeout": CONNECT_TIMEOUT_S,
                              "retry_strategy": pafs.AwsStandardS3RetryStrategy(max_attempts=settings.max_attempts)}
    parts = settings.endpoint_parts()
    if parts is not None:
        kwargs.update(scheme=parts[0], endpoint_override=parts[1], region=settings.region or "us-east-1")
    elif settings.region:
        kwargs["region"] = settings.region
    if settings.access_key is not None:
        kwargs.update(access_key=settings.access_key, secret_key=settings.secret_key,
                      session_token=settings.session_token)
    return pafs.S3FileSystem(**kwargs)


_BOUND: dict[str, S3Settings] = {}
_LOCK = threading.Lock()


@dataclass(frozen=True)
class StorageBinding:
    """The settings each bucket of a source or sink is reached with; unpickling binds them again."""

    buckets: tuple[tuple[str, S3Settings], ...] = ()

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return _rebind, (self.buckets,)


def _rebind(buckets: tuple[tuple[str, S3Settings], ...]) -> StorageBinding:
    with _LOCK:
        _BOUND.update(buckets)
    return StorageBinding(buckets)


def bind_settings(paths: str | os.PathLike | Sequence[str | os.PathLike], conf: Mapping[str, Any]) -> None:
    """Reach the buckets of the object-store paths among `paths` with the S3 settings `conf` (a
    session's conf) names, or the environment's; local paths need nothing."""
    buckets = {split_uri(p)[0] for p in _as_list(paths) if is_s3_path(p)}
    if buckets:
        settings = S3Settings.from_conf(conf)
        _rebind(tuple((b, settings) for b in sorted(buckets)))


def binding_for(paths: Iterable[str]) -> StorageBinding:
    """The settings the object-store paths among `paths` resolve with now, to carry with a source or sink."""
    buckets = sorted({split_uri(p)[0] for p in paths if is_s3_path(p)})
    return StorageBinding(tuple((b, settings_for(b)) for b in buckets))


def settings_for(bucket: str) -> S3Settings:
    """The settings bound to `bucket`, else those of the environment."""
    with _LOCK:
        bound = _BOUND.get(bucket)
    return bound if bound is not None else S3Settings.from_conf()


def _as_list(paths: str | os.PathLike | Sequence[str | os.PathLike]) -> list[str]:
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    return [os.fspath(p) for p in paths]


def _scheme(path: str | os.PathLike) -> str:
    """The URI scheme of `path`, lower case; "" for a plain local path (a Windows drive letter included)."""
    scheme, sep, _ = os.fspath(path).partition("://")
    return scheme.lower() if sep and len(scheme) > 1 and scheme.replace("+", "").replace("-", "").isalnum() else ""


def is_object_path(path: str | os.PathLike) -> bool:
    """True for a URI of any file system but the local one: `s3://` (also `s3a://`, `s3n://`), `gs://`,
    `abfs://`, `hdfs://`, `https://`, ..."""
    return _scheme(path) not in ("", "file")


def is_s3_path(path: str | os.PathLike) -> bool:
    """True for `s3://`, `s3a://` and `s3n://` URIs."""
    return _scheme(path) in OBJECT_SCHEMES


def normalize_path(path: str | os.PathLike) -> str:
    """A local path made absolute (`file:` URIs accepted), an S3 URI as `s3://bucket/key` and another
    URI as `scheme://host/key`, without a trailing slash or empty levels."""
    text = os.fspath(path)
    scheme = _scheme(text)
    if not scheme:
        return os.path.abspath(text.removeprefix("file:"))
    rest = text.partition("://")[2]
    if scheme == "file":
        return os.path.abspath("/" + rest.lstrip("/"))
    bucket, _, key = rest.partition("/")
    if scheme in OBJECT_SCHEMES:
        if not bucket:
            raise ConfigurationError(f"{text!r} names no bucket; write s3://bucket/key")
        scheme = "s3"
    key = "/".join(part for part in key.split("/") if part)
    return f"{scheme}://{bucket}/{key}" if key else f"{scheme}://{bucket}"


def split_uri(uri: str | os.PathLike) -> tuple[str, str]:
    """(bucket, key) of an object URI: for another scheme, (host or container, path within it)."""
    rest = normalize_path(uri).partition("://")[2]
    bucket, _, key = rest.partition("/")
    return bucket, key


def uri_of(reference: str, fs_path: str) -> str:
    """The URI of `fs_path`, a path that `reference`'s file system listed."""
    if "://" in fs_path:  # fsspec's HTTP file system lists whole URLs
        return normalize_path(fs_path)
    scheme, _, rest = normalize_path(reference).partition("://")
    if scheme in HOST_RELATIVE_SCHEMES and _opened_by_pyarrow(scheme, rest.partition("/")[0]):
        return f"{scheme}://{rest.partition('/')[0]}/{fs_path.lstrip('/')}"
    return f"{scheme}://{fs_path.lstrip('/')}"


def resolve(path: str | os.PathLike) -> tuple[pafs.FileSystem, str]:
    """The pyarrow file system holding `path` and the path within it (`bucket/key` for objects)."""
    if not is_object_path(path):
        return _LOCAL, normalize_path(path)
    uri = normalize_path(path)
    if not is_s3_path(uri):
        scheme, rest = uri.split("://", 1)
        fs, inner = _other_filesystem(scheme, rest.partition("/")[0])
        return fs, inner(uri)
    bucket, key = split_uri(uri)
    return settings_for(bucket).filesystem(), f"{bucket}/{key}" if key else bucket


@functools.lru_cache(maxsize=64)
def _other_filesystem(scheme: str, authority: str) -> tuple[pafs.FileSystem, Any]:
    """The file system of `scheme://authority/...` and how a URI maps to a path within it: pyarrow's own
    where it has one that opens here, else fsspec's wrapped as a pyarrow file system."""
    failure: Exception | None = None
    if scheme in PYARROW_SCHEMES:
        try:
            fs, _ = pafs.FileSystem.from_uri(f"{scheme}://{authority}/")
            return fs, functools.partial(_pyarrow_path, scheme)
        except (OSError, pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
            failure = e  # a pyarrow built without it, or libhdfs missing: fsspec may still open it
    try:
        import fsspec
        from fsspec.core import url_to_fs
    except ImportError as e:
        raise ConfigurationError(
            f"no file system for {scheme}:// URIs: pyarrow has none here"
            + (f" ({failure})" if failure else "") + "; install fsspec and its implementation of the scheme "
            "(gcsfs for gs://, adlfs for abfs://, aiohttp for https://)") from e
    if scheme not in fsspec.available_protocols():
        raise ConfigurationError(
            f"unsupported file system scheme '{scheme}': paths may be local, file:, s3:// (also s3a://, s3n://), "
            f"or any scheme pyarrow or fsspec opens ({', '.join(PYARROW_SCHEMES)}, https, memory, ...)")
    try:
        fs, _ = url_to_fs(f"{scheme}://{authority}/")
    except (ImportError, ValueError) as e:  # fsspec knows the scheme, its implementation is not installed
        raise ConfigurationError(f"the {scheme}:// file system needs a package fsspec could not import: {e}") from e
    return pafs.PyFileSystem(pafs.FSSpecHandler(fs)), lambda uri: url_to_fs(uri)[1]


def _pyarrow_path(scheme: str, uri: str) -> str:
    """The path within pyarrow's file system of `uri`: `bucket/key`, or `/key` below an HDFS host."""
    rest = uri.split("://", 1)[1]
    return "/" + rest.partition("/")[2] if scheme in HOST_RELATIVE_SCHEMES else rest


def _opened_by_pyarrow(scheme: str, authority: str) -> bool:
    """Whether `scheme://authority` resolved to pyarrow's own file system (not fsspec's)."""
    return not isinstance(_other_filesystem(scheme, authority)[0], pafs.PyFileSystem)


def location_of(path: str) -> str:
    """The endpoint an object path is reached at, for messages."""
    if not is_s3_path(path):
        scheme, rest = normalize_path(path).split("://", 1)
        return f"the {scheme}:// file system ({scheme}://{rest.partition('/')[0]})"
    return settings_for(split_uri(path)[0]).where()


def missing_path_error(uri: str) -> AnalysisException:
    """Spark's PATH_NOT_FOUND for an object path, saying whether the bucket itself is missing."""
    if not is_s3_path(uri):
        return AnalysisException(f"[PATH_NOT_FOUND] Path does not exist: {uri} (at {location_of(uri)}).")
    bucket, _ = split_uri(uri)
    fs, _ = resolve(uri)
    with storage_errors(uri, "checking bucket of"):
        bucket_missing = fs.get_file_info(bucket).type == pafs.FileType.NotFound
    reason = f"bucket '{bucket}' does not exist" if bucket_missing else "no object or prefix has that name"
    return AnalysisException(f"[PATH_NOT_FOUND] Path does not exist: {uri} ({reason} at {location_of(uri)}).")


@contextlib.contextmanager
def storage_errors(uri: str, action: str) -> Iterator[None]:
    """Turn the OSErrors of an object-store call into errors naming the bucket, key and endpoint."""
    try:
        yield
    except FileNotFoundError as e:
        raise missing_path_error(uri) from e
    except OSError as e:
        raise _classified(uri, action, e) from e


def _classified(uri: str, action: str, error: OSError, attempts: int | None = None) -> QuiverError:
    text = str(error) + (f" (after {attempts} attempts)" if attempts and attempts > 1 else "")
    bucket, key = split_uri(uri)
    place = location_of(uri)
    if "NO_SUCH_BUCKET" in text or "NoSuchBucket" in text:
        return AnalysisException(f"[PATH_NOT_FOUND] Path does not exist: {uri} (bucket '{bucket}' does not exist "
                                 f"at {place}).")
    if not is_s3_path(uri):
        return ObjectStoreError(f"Failed {action} {uri} at {place}: {text}")
    if "ACCESS_DENIED" in text or "InvalidAccessKeyId" in text or "SignatureDoesNotMatch" in text:
        key_id = settings_for(bucket).access_key
        who = f"access key '{key_id}'" if key_id else "the default AWS credentials"
        return ObjectStoreError(
            f"Access denied {action} {uri} (bucket '{bucket}', key '{key}') at {place} with {who}. Check "
            f"{ACCESS_KEY_KEY} / {SECRET_KEY_KEY} (or AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY) and the "
            f"bucket's permissions. ({text})")
    if ("NETWORK_CONNECTION" in text or "curlCode" in text) and not _answer_broke_off(text):
        return ObjectStoreError(
            f"Cannot reach the object store at {place} while {action} {uri}: is the server up, and is "
            f"{ENDPOINT_KEY} (or AWS_ENDPOINT_URL) right? ({text})")
    return ObjectStoreError(f"Failed {action} {uri} at {place}: {text}")


def _answer_broke_off(text: str) -> bool:
    """The store was reached but its answer was cut short (curl: a partial transfer, an empty reply, a reset
    while receiving), rather than not reached at all (refused, unresolved, timed out)."""
    return any(f"curlCode: {code}," in text for code in (18, 52, 56))


def object_info(uri: str) -> pafs.FileInfo:
    """What is at an object path: a file (an object), a directory (a prefix with objects) or nothing."""
    fs, key = resolve(uri)
    with storage_errors(uri, "looking up"):
        return fs.get_file_info(key)


def list_objects(uri: str) -> list[tuple[str, int]]:
    """(URI, size) of the object at `uri`, or of every object under the prefix, in key order."""
    fs, key = resolve(uri)
    with storage_errors(uri, "listing"):
        info = fs.get_file_info(key)
        if info.type == pafs.FileType.File:
            _remember_versions([info], uri)
            return [(normalize_path(uri), info.size)]
        if info.type == pafs.FileType.NotFound:
            return []
        found = fs.get_file_info(pafs.FileSelector(key, recursive=True, allow_not_found=True))
    objects = [f for f in found if f.type == pafs.FileType.File]
    _remember_versions(objects, uri)
    return sorted((uri_of(uri, f.path), f.size) for f in objects)


# Versions seen by the last listing, so the Parquet footer cache needs no request per lookup; a
# read lists its files first, so it sees them as listed.
_VERSIONS: dict[str, tuple[int, int]] = {}
_MAX_VERSIONS = 100_000


def _remember_versions(objects: list[pafs.FileInfo], reference: str) -> None:
    with _LOCK:
        if len(_VERSIONS) + len(objects) > _MAX_VERSIONS:
            _VERSIONS.clear()
        _VERSIONS.update((uri_of(reference, f.path), (f.size, f.mtime_ns or 0)) for f in objects)


def has_objects(uri: str) -> bool:
    """True when an object has this name or lies under it."""
    return bool(list_objects(uri))


def glob_objects(pattern: str) -> list[str]:
    """Object paths (objects or prefixes) matching a glob whose `*`, `?` and `[...]` stay within one
    path level, as `glob.glob` does locally; names starting with '.' match only a pattern that does."""
    bucket, key = split_uri(pattern)
    root = f"{normalize_path(pattern).partition('://')[0]}://{bucket}"
    parts = key.split("/")
    fixed = next((i for i, p in enumerate(parts) if set(p) & set("*?[")), len(parts))
    prefix = f"{root}/" + "/".join(parts[:fixed]) if fixed else root
    matches = set()
    for uri, _ in list_objects(prefix):
        names = split_uri(uri)[1].split("/")
        if len(names) < len(parts):
            continue
        if all(fnmatch.fnmatchcase(n, p) and (p.startswith(".") or not n.startswith("."))
               for n, p in zip(names, parts)):
            matches.add(f"{root}/" + "/".join(names[:len(parts)]))
    if not matches:
        raise missing_path_error(pattern)
    return sorted(matches)


def require_bucket(uri: str) -> None:
    """Raise naming the bucket and endpoint when the bucket of `uri` does not exist."""
    if not is_s3_path(uri):
        return  # another file system makes the folders a write needs, or refuses the write itself
    bucket, _ = split_uri(uri)
    fs, _ = resolve(uri)
    with storage_errors(uri, "checking bucket of"):
        if fs.get_file_info(bucket).type == pafs.FileType.NotFound:
            raise AnalysisException(f"bucket '{bucket}' does not exist at {location_of(uri)}; create it before "
                                    f"writing {uri}")


def open_binary(path: str) -> IO[bytes]:
    """A file's bytes for Python-level readers, gunzipped when its name ends in `.gz`."""
    if not is_object_path(path):
        return gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")
    return open_input_stream(path)


def open_input_stream(path: str) -> pa.NativeFile:
    """A sequential stream for pyarrow's readers, decompressed as its extension says (`.gz`, ...)."""
    if not is_object_path(path):
        return pa.input_stream(path)
    fs, key = resolve(path)
    with storage_errors(path, "reading"):
        return fs.open_input_stream(key)


def open_input_file(path: str) -> pa.NativeFile:
    """A random-access file: memory-mapped when local, ranged reads when an object."""
    if not is_object_path(path):
        return pa.memory_map(path, "r")
    fs, key = resolve(path)
    with storage_errors(path, "reading"):
        return fs.open_input_file(key)


def object_etag(path: str) -> str:
    """The object's ETag, asked of the store itself (one HEAD): it changes whenever the object does,
    unlike the listing's whole-second modification time. Empty for a local path or a store without one."""
    if not is_s3_path(path):
        return ""
    bucket, key = split_uri(path)
    with storage_errors(path, "looking up"):
        with _s3_store(settings_for(bucket)).open_input_file(f"{bucket}/{key}") as f:
            metadata = f.metadata() or {}
            etag = metadata.get("ETag") or metadata.get(b"ETag") or b""
    return etag.decode() if isinstance(etag, bytes) else str(etag)


def decoded_cache_for(path: str) -> tuple[DecodedCache, str] | None:
    """The cache of decoded row groups an object path's reads use, with the object's ETag to key them
    by; None for a path not on S3 or when the session turned it (or the storage cache) off."""
    if not is_s3_path(path):
        return None
    settings = settings_for(split_uri(path)[0])
    cache = settings.cache.decoded() if settings.cache is not None else None
    return None if cache is None else (cache, object_etag(path))


def file_version(path: str) -> tuple[int, int]:
    """(size, modification time in ns): what tells one version of a file from the next; for an
    object, as its latest listing saw it."""
    if not is_object_path(path):
        st = os.stat(path)
        return st.st_size, st.st_mtime_ns
    uri = normalize_path(path)
    with _LOCK:
        known = _VERSIONS.get(uri)
    if known is not None:
        return known
    info = object_info(uri)
    if info.type != pafs.FileType.File:
        raise missing_path_error(uri)
    _remember_versions([info], uri)
    return info.size, info.mtime_ns or 0


def upload(local_path: str, uri: str) -> None:
    """Copy a local file to the object `uri`."""
    fs, key = resolve(uri)
    # compression=None: the file is stored as written (pyarrow would gzip a `.gz` name a second time).
    with open(local_path, "rb") as source, storage_errors(uri, "writing"), \
            fs.open_output_stream(key, compression=None) as sink:
        shutil.copyfileobj(source, sink, _COPY_BUFFER)


def read_object(uri: str) -> bytes | None:
    """The whole body of a small object (a commit marker), None when there is none; asked of the store
    itself, never the storage cache, since markers are rewritten in place.

    The AWS SDK retries a request that fails before its answer arrives, but not an answer whose body
    breaks off (a reset or a truncated stream: "Failed to flush response stream"); the driver reads
    markers outside any task a retry would rerun, so this read is retried here, with the same bound
    (`quiver.s3.maxAttempts`) and exponential backoff with full jitter."""
    if not is_s3_path(uri):
        fs, path = resolve(uri)
        try:
            with fs.open_input_stream(path, compression=None) as f:
                return f.read()
        except FileNotFoundError:
            return None
        except OSError as e:
            raise _classified(uri, "reading", e) from e
    bucket, key = split_uri(uri)
    settings = settings_for(bucket)
    for attempt in range(1, settings.max_attempts + 1):
        try:
            with _s3_store(settings).open_input_stream(f"{bucket}/{key}", compression=None) as f:
                return f.read()
        except FileNotFoundError:
            return None
        except OSError as e:
            if attempt == settings.max_attempts or not _transient(e):
                raise _classified(uri, "reading", e, attempt) from e
            time.sleep(backoff_s(attempt))
    raise AssertionError("unreachable: the last attempt returns or raises")


def backoff_s(attempt: int, base_s: float = 0.05, cap_s: float = 5.0) -> float:
    """How long to wait before try `attempt + 1`: exponential backoff with full jitter (a uniform draw up
    to base * 2^attempt, capped), so clients failing together do not retry together."""
    return random.uniform(0.0, min(cap_s, base_s * 2 ** attempt))


def _transient(error: OSError) -> bool:
    """Whether a failed request may succeed when tried again: anything but a refusal (a missing bucket,
    denied access, bad credentials)."""
    text = str(error)
    return not any(code in text for code in ("NO_SUCH_BUCKET", "NoSuchBucket", "ACCESS_DENIED", "AccessDenied",
                                             "InvalidAccessKeyId", "SignatureDoesNotMatch"))


def write_object(uri: str, data: bytes) -> None:
    """Write a small object whole: one request, so readers see the old body or the new, never a mix."""
    fs, key = resolve(uri)
    with storage_errors(uri, "writing"), fs.open_output_stream(key, compression=None) as sink:
        sink.write(data)


def list_children(uri: str) -> list[tuple[str, bool]]:
    """(URI, is a prefix) of each object and prefix directly under the prefix `uri`, one level only."""
    fs, key = resolve(uri)
    with storage_errors(uri, "listing"):
        found = fs.get_file_info(pafs.FileSelector(key, recursive=False, allow_not_found=True))
    return sorted((uri_of(uri, f.path), f.type == pafs.FileType.Directory) for f in found)


def write_empty_object(uri: str) -> None:
    """An empty object (a `_SUCCESS` marker)."""
    fs, key = resolve(uri)
    with storage_errors(uri, "writing"):
        fs.open_output_stream(key, compression=None).close()


def copy_object(source: str, target: str) -> None:
    """Server-side copy of one object to another key of the same store."""
    fs, source_key = resolve(source)
    _, target_key = resolve(target)
    with storage_errors(target, f"copying {source} to"):
        fs.copy_file(source_key, target_key)


def delete_objects(uris: Iterable[str]) -> None:
    """Delete each object; one already gone is not an error."""
    for uri in uris:
        fs, key = resolve(uri)
        try:
            fs.delete_file(key)
        except FileNotFoundError:
            continue
        except OSError as e:
            raise _classified(uri, "deleting", e) from e


def delete_prefix(uri: str) -> None:
    """Delete every object under the prefix `uri` in batch requests; a missing prefix is not an error."""
    fs, key = resolve(uri)
    try:
        fs.delete_dir(key)
    except FileNotFoundError:
        return
    except OSError as e:
        raise _classified(uri, "deleting", e) from e


def delete_stale(root: str, stale: Iterable[str], keep: Iterable[str]) -> None:
    """Delete the objects `stale` under `root`, each through the shallowest prefix (`root` included)
    holding nothing of `keep`, else on its own.

    pyarrow marks the parent folder of whatever it deletes with an empty `folder/` object; deleting
    whole stale prefixes leaves those markers only beside what remains, never in a folder that
    would otherwise be gone.
    """
    root = normalize_path(root)
    held = set()
    for uri in keep:
        parts = normalize_path(uri)[len(root):].strip("/").split("/")
        held.update("/".join([root, *parts[:depth]]) for depth in range(len(parts)))
    prefixes, singles = set(), []
    for uri in stale:
        parts = normalize_path(uri)[len(root):].strip("/").split("/")
        chosen = next((p for p in ("/".join([root, *parts[:d]]) for d in range(len(parts))) if p not in held), None)
        if chosen is None or normalize_path(uri) == root:
            singles.append(uri)
        else:
            prefixes.add(chosen)
    for prefix in sorted(prefixes):
        delete_prefix(prefix)
    delete_objects(singles)
