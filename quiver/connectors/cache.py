"""The storage-side cache: byte ranges of files on slow storage, kept in memory and on local disk.

Scans of object storage read the same footers and column chunks again and again. Every file opened through a
`CachingFileSystem` is read in aligned blocks, and each block is kept under the file's URI, size and version
(its ETag on S3, else its modification time), first in a memory tier, then, when that tier is full, in a disk
tier, each bounded in bytes and evicted least recently used first. A second scan of unchanged files therefore
reads no bytes from the store. A changed file has a new ETag (or modification time), hence new keys: its old
blocks are never served, and they age out.

Listing and file metadata (sizes, times) always come from the store: that is how a change is
seen. `storage_cache_stats()` counts hits, misses and bytes read from the store or saved.

The disk tier holds object data that other users of the machine must neither read nor replace: its folder
is private to the current user (0700, refused otherwise), each block is written 0600 through a temp file
with an unpredictable name and renamed into place, and carries a checksum over its key and bytes, so a
block damaged or swapped on disk is a miss (fetched again from the store), never served.
"""
from __future__ import annotations

import hashlib
import hmac
import io
import logging
import os
import stat
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs

from quiver.engine.core.conf import parse_size
from quiver.engine.core.errors import ConfigurationError

# Small enough that a Parquet column chunk costs little more than itself on a cold read (1 MiB blocks
# fetched 17 times the bytes a two-column scan of lineitem needs); runs of missing blocks are still
# fetched with one ranged read each.
BLOCK_BYTES = 128 << 10
DEFAULT_MEMORY_BYTES = 512 << 20
DEFAULT_DISK_BYTES = 4 << 30
DEFAULT_DECODED_BYTES = 512 << 20

BlockKey = tuple[str, int, str, int]  # (uri, size, version: ETag or mtime, block index)
DIRECTORY_KEY = "quiver.cache.storage.dir"
_DIGEST_BYTES = 32

log = logging.getLogger(__name__)


@dataclass
class CacheStats:
    """What the cache did since it was made (or last reset)."""

    hits: int = 0
    misses: int = 0
    bytes_from_store: int = 0
    bytes_saved: int = 0
    disk_hits: int = 0
    decoded_hits: int = 0
    evicted_bytes: int = 0
    corrupt_blocks: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, **counts: int) -> None:
        with self._lock:
            for name, n in counts.items():
                setattr(self, name, getattr(self, name) + n)

    def as_dict(self) -> dict[str, int]:
        return {k: getattr(self, k) for k in ("hits", "misses", "bytes_from_store", "bytes_saved", "disk_hits",
                                              "evicted_bytes", "corrupt_blocks")}


class BlockCache:
    """Blocks in two LRU tiers bounded in bytes: memory, then files under `directory` on local disk."""

    def __init__(self, memory_bytes: int = DEFAULT_MEMORY_BYTES, disk_bytes: int = 0,
                 directory: str | os.PathLike | None = None):
        self.memory_bytes = max(0, memory_bytes)
        self.disk_bytes = max(0, disk_bytes) if directory is not None else 0
        self.directory = Path(directory) if directory is not None else None
        if self.directory is not None and self.disk_bytes:
            private_directory(self.directory)
        self.stats = CacheStats()
        self._memory: OrderedDict[BlockKey, bytes] = OrderedDict()
        self._memory_used = 0
        self._disk: OrderedDict[BlockKey, int] = OrderedDict()
        self._disk_used = 0
        self._lock = threading.Lock()

    def get(self, key: BlockKey) -> bytes | None:
        with self._lock:
            data = self._memory.get(key)
            if data is not None:
                self._memory.move_to_end(key)
                return data
            if key not in self._disk:
                return None
            self._disk.move_to_end(key)
        path = self._disk_path(key)
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with open(fd, "rb") as f:
                stored = f.read()
        except OSError:
            with self._lock:
                self._forget_disk(key)
            return None
        data = stored[_DIGEST_BYTES:]
        if not hmac.compare_digest(stored[:_DIGEST_BYTES], _digest(key, data)):
            log.warning("storage cache block %s (block %d of %s) does not match its checksum; "
                        "fetching it again from the store", path, key[3], key[0])
            with self._lock:
                self._forget_disk(key)
            path.unlink(missing_ok=True)
            self.stats.add(corrupt_blocks=1)
            return None
        self.stats.add(disk_hits=1)
        self._put_memory(key, data)
        return data

    def put(self, key: BlockKey, data: bytes) -> None:
        self._put_memory(key, data)

    def _put_memory(self, key: BlockKey, data: bytes) -> None:
        spilled: list[tuple[BlockKey, bytes]] = []
        with self._lock:
            if key in self._memory:
                return
            self._memory[key] = data
            self._memory_used += len(data)
            while self._memory_used > self.memory_bytes and self._memory:
                old, old_data = self._memory.popitem(last=False)
                self._memory_used -= len(old_data)
                spilled.append((old, old_data))
        for old, old_data in spilled:
            self._put_disk(old, old_data)

    def _put_disk(self, key: BlockKey, data: bytes) -> None:
        if not self.disk_bytes or len(data) > self.disk_bytes:
            self.stats.add(evicted_bytes=len(data))
            return
        with self._lock:
            if key in self._disk:
                return
        path = self._disk_path(key)
        tmp: str | None = None
        try:
            # mkstemp makes a new file (O_EXCL, mode 0600) under a random name: nothing can be
            # there first, and the rename makes the whole block appear at once.
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".block-", suffix=".tmp")
            with open(fd, "wb") as f:
                f.write(_digest(key, data))
                f.write(data)
            os.replace(tmp, path)
        except OSError:
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)
            self.stats.add(evicted_bytes=len(data))
            return
        doomed: list[BlockKey] = []
        with self._lock:
            self._disk[key] = len(data)
            self._disk_used += len(data)
            while self._disk_used > self.disk_bytes and self._disk:
                old = next(iter(self._disk))
                doomed.append(old)
                self._forget_disk(old)
        for old in doomed:
            self._disk_path(old).unlink(missing_ok=True)

    def _forget_disk(self, key: BlockKey) -> None:
        """Drop a disk block from the index (the caller holds the lock and removes the file)."""
        size = self._disk.pop(key, None)
        if size is not None:
            self._disk_used -= size
            self.stats.add(evicted_bytes=size)

    def _disk_path(self, key: BlockKey) -> Path:
        assert self.directory is not None
        digest = hashlib.sha1(repr(key).encode()).hexdigest()
        return self.directory / f"{digest}.block"

    def clear(self) -> None:
        with self._lock:
            self._memory.clear()
            self._memory_used = 0
            disk = list(self._disk)
            self._disk.clear()
            self._disk_used = 0
        for key in disk:
            self._disk_path(key).unlink(missing_ok=True)

    @property
    def memory_used(self) -> int:
        return self._memory_used

    @property
    def disk_used(self) -> int:
        return self._disk_used


def _digest(key: BlockKey, data: bytes) -> bytes:
    """A block's checksum over its key and bytes: a block file copied over another key's fails it too."""
    h = hashlib.blake2b(digest_size=_DIGEST_BYTES)
    h.update(repr(key).encode())
    h.update(b"\0")
    h.update(data)
    return h.digest()


def private_directory(path: str | os.PathLike) -> Path:
    """`path` as a folder only the current user may enter: made (0700) if it is missing; an existing one
    must be a folder, not a link, owned by this user, with no permission bits for group or others."""
    path = Path(path)
    try:
        path.mkdir(mode=0o700, parents=True)
    except FileExistsError:
        pass
    except OSError as e:
        raise ConfigurationError(f"could not create the storage cache folder {path} ({DIRECTORY_KEY}): {e}") from e
    st = os.lstat(path)
    problem = None
    if stat.S_ISLNK(st.st_mode):
        problem = "is a symbolic link"
    elif not stat.S_ISDIR(st.st_mode):
        problem = "is not a folder"
    elif hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        problem = f"is owned by uid {st.st_uid}, not by the current user (uid {os.geteuid()})"
    elif st.st_mode & 0o077:
        problem = f"has mode {stat.S_IMODE(st.st_mode):04o}, which lets group or others read or write it"
    if problem is not None:
        raise ConfigurationError(
            f"storage cache folder {path} {problem}; the cache keeps object data there, so it must be a folder "
            f"owned by the current user with mode 0700 (chmod 700 {path}), or set {DIRECTORY_KEY} to another "
            "folder (one that does not exist yet is created that way)")
    return path


def default_directory() -> Path:
    """Where the disk tier lives unless `quiver.cache.storage.dir` says: the user's own cache folder
    (`$XDG_CACHE_HOME`, else `~/.cache`), never a predictable name in the shared temp folder."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "quiver" / "storage-cache"


class _CachedFile(io.RawIOBase):
    """A read-only file served block by block from the cache, fetching missing runs of blocks from the store."""

    def __init__(self, source: pa.NativeFile, uri: str, size: int, version: str, cache: BlockCache):
        super().__init__()
        self._source: pa.NativeFile | None = source
        self._uri = uri
        self._size = size
        self._version = version
        self._cache = cache
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def size(self) -> int:
        return self._size

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        data = self._read_range(self._pos, min(len(view), max(0, self._size - self._pos)))
        view[:len(data)] = data
        self._pos += len(data)
        return len(data)

    def read(self, size: int = -1) -> bytes:
        n = self._size - self._pos if size is None or size < 0 else min(size, max(0, self._size - self._pos))
        data = self._read_range(self._pos, n)
        self._pos += len(data)
        return data

    def readall(self) -> bytes:
        return self.read(-1)

    def _read_range(self, start: int, length: int) -> bytes:
        if length <= 0:
            return b""
        first, last = start // BLOCK_BYTES, (start + length - 1) // BLOCK_BYTES
        blocks: dict[int, bytes] = {}
        missing: list[int] = []
        for i in range(first, last + 1):
            data = self._cache.get(self._key(i))
            if data is None:
                missing.append(i)
            else:
                blocks[i] = data
        if blocks:
            self._cache.stats.add(hits=len(blocks), bytes_saved=sum(len(b) for b in blocks.values()))
        for run in _runs(missing):
            offset = run[0] * BLOCK_BYTES
            end = min(self._size, (run[-1] + 1) * BLOCK_BYTES)
            fetched = self._fetch(offset, end - offset)
            self._cache.stats.add(misses=len(run), bytes_from_store=len(fetched))
            for i in run:
                piece = fetched[(i - run[0]) * BLOCK_BYTES:(i - run[0] + 1) * BLOCK_BYTES]
                blocks[i] = piece
                self._cache.put(self._key(i), piece)
        joined = b"".join(blocks[i] for i in range(first, last + 1))
        skip = start - first * BLOCK_BYTES
        return joined[skip:skip + length]

    def _fetch(self, offset: int, length: int) -> bytes:
        if self._source is None:
            raise ValueError(f"read of closed file {self._uri}")
        out = self._source.read_at(length, offset)
        return out if isinstance(out, bytes) else out.to_pybytes()

    def _key(self, block: int) -> BlockKey:
        return (self._uri, self._size, self._version, block)

    def close(self) -> None:
        if self._source is not None:
            self._source.close()
            self._source = None
        super().close()


def _runs(indices: list[int]) -> list[list[int]]:
    """Consecutive runs of sorted block indices, each fetched with one ranged read."""
    runs: list[list[int]] = []
    for i in indices:
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


class CachingHandler(pafs.FileSystemHandler):
    """A pyarrow file-system handler over `base` whose input files are read through the block cache;
    everything else (listing, metadata, writes, deletes) goes to `base`."""

    def __init__(self, base: pafs.FileSystem, cache: BlockCache, scheme: str):
        self.base = base
        self.cache = cache
        self.scheme = scheme

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CachingHandler) and other.base.equals(self.base) and other.cache is self.cache

    def __ne__(self, other: object) -> bool:
        return not self == other

    def get_type_name(self) -> str:
        return f"quiver-cached-{self.base.type_name}"

    def normalize_path(self, path: str) -> str:
        return self.base.normalize_path(path)

    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        return self.base.get_file_info(paths)

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        return self.base.get_file_info(selector)

    def create_dir(self, path: str, recursive: bool) -> None:
        self.base.create_dir(path, recursive=recursive)

    def delete_dir(self, path: str) -> None:
        self.base.delete_dir(path)

    def delete_dir_contents(self, path: str, missing_dir_ok: bool = False) -> None:
        self.base.delete_dir_contents(path, missing_dir_ok=missing_dir_ok)

    def delete_root_dir_contents(self) -> None:
        self.base.delete_dir_contents("/", accept_root_dir=True)

    def delete_file(self, path: str) -> None:
        self.base.delete_file(path)

    def move(self, src: str, dest: str) -> None:
        self.base.move(src, dest)

    def copy_file(self, src: str, dest: str) -> None:
        self.base.copy_file(src, dest)

    def open_input_stream(self, path: str) -> pa.NativeFile:
        return self.open_input_file(path)

    def open_input_file(self, path: str) -> pa.NativeFile:
        # Opening asks the store for the object's size and metadata (a HEAD on S3), never its bytes;
        # a missing object raises the store's own error, naming the path.
        source = self.base.open_input_file(path)
        raw = _CachedFile(source, f"{self.scheme}://{path}", source.size(), self._version(path, source), self.cache)
        return pa.PythonFile(raw, mode="r")

    def _version(self, path: str, source: pa.NativeFile) -> str:
        """What changes when the file does: the object's ETag where the store gives one (S3 times have
        only whole seconds), else its modification time."""
        metadata = source.metadata() or {}
        etag = metadata.get(b"ETag") or metadata.get("ETag")
        if etag:
            return "etag:" + (etag.decode() if isinstance(etag, bytes) else str(etag))
        info = self.base.get_file_info(path)
        return f"mtime:{info.mtime_ns if info.mtime_ns is not None else -1}"

    # The wrapping file system compresses by extension already: the store gets the bytes as they are.
    def open_output_stream(self, path: str, metadata: dict | None = None) -> pa.NativeFile:
        return self.base.open_output_stream(path, compression=None, metadata=metadata)

    def open_append_stream(self, path: str, metadata: dict | None = None) -> pa.NativeFile:
        return self.base.open_append_stream(path, compression=None, metadata=metadata)


@dataclass(frozen=True)
class StorageCacheSettings:
    """The bounds of the storage cache a session asks for (`quiver.cache.storage.*`); carried with the
    settings of each store, so a worker process opens the same kind of cache."""

    memory_bytes: int = DEFAULT_MEMORY_BYTES
    disk_bytes: int = DEFAULT_DISK_BYTES
    directory: str | None = None  # None: `default_directory()` of the process that opens the cache
    decoded_bytes: int = DEFAULT_DECODED_BYTES

    @classmethod
    def from_conf(cls, values: Mapping[str, Any]) -> StorageCacheSettings | None:
        """The settings from conf values (canonical keys), or None when the cache is off."""
        enabled = str(values.get("quiver.cache.storage.enabled", "true")).strip().lower()
        if enabled not in ("true", "false"):
            raise ConfigurationError(f"quiver.cache.storage.enabled must be true or false, got {enabled!r}")
        if enabled == "false":
            return None
        memory = parse_size("quiver.cache.storage.maxBytes", values.get("quiver.cache.storage.maxBytes", "512m"))
        disk = parse_size("quiver.cache.storage.diskBytes", values.get("quiver.cache.storage.diskBytes", "4g"))
        directory = values.get(DIRECTORY_KEY) or None
        decoded = parse_size("quiver.cache.storage.decodedBytes",
                             values.get("quiver.cache.storage.decodedBytes", "512m"))
        return cls(max(0, memory), max(0, disk), None if directory is None else str(directory), max(0, decoded))

    def open(self) -> BlockCache:
        return storage_cache(self.memory_bytes, self.disk_bytes, self.directory)

    def decoded(self) -> DecodedCache | None:
        """The process's cache of decoded row groups with this bound, or None when it is 0."""
        return decoded_cache(self.decoded_bytes) if self.decoded_bytes else None


class DecodedCache:
    """Decoded Parquet row groups (Arrow tables) of slow storage, least recently used out first,
    bounded by their Arrow size. A warm scan then skips decompression and decoding too."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.stats = CacheStats()
        self._tables: OrderedDict[tuple, pa.Table] = OrderedDict()
        self._used = 0
        self._lock = threading.Lock()

    def get(self, key: tuple) -> pa.Table | None:
        with self._lock:
            table = self._tables.get(key)
            if table is not None:
                self._tables.move_to_end(key)
        if table is not None:
            self.stats.add(decoded_hits=1)
        return table

    def put(self, key: tuple, table: pa.Table) -> None:
        size = table.nbytes
        if size > self.max_bytes:
            return
        with self._lock:
            if key in self._tables:
                return
            self._tables[key] = table
            self._used += size
            while self._used > self.max_bytes and self._tables:
                _, old = self._tables.popitem(last=False)
                self._used -= old.nbytes
                self.stats.evicted_bytes += old.nbytes

    @property
    def used(self) -> int:
        return self._used


_decoded: dict[int, DecodedCache] = {}


def decoded_cache(max_bytes: int) -> DecodedCache:
    """The process's decoded-row-group cache with this bound (one per distinct bound)."""
    with _shared_lock:
        if max_bytes not in _decoded:
            _decoded[max_bytes] = DecodedCache(max_bytes)
        return _decoded[max_bytes]


_shared: dict[tuple, BlockCache] = {}
_shared_lock = threading.Lock()


def storage_cache(memory_bytes: int = DEFAULT_MEMORY_BYTES, disk_bytes: int = 0,
                  directory: str | None = None) -> BlockCache:
    """The process's block cache for these bounds (one per distinct configuration, shared by every scan);
    `directory` None is the user's `default_directory()`."""
    key = (memory_bytes, disk_bytes, directory)
    with _shared_lock:
        if key not in _shared:
            _shared[key] = _open_cache(memory_bytes, disk_bytes, directory)
        return _shared[key]


def _open_cache(memory_bytes: int, disk_bytes: int, directory: str | None) -> BlockCache:
    if directory is not None or not disk_bytes:
        return BlockCache(memory_bytes, disk_bytes, directory)
    default = default_directory()
    try:
        # Parents (~/.cache) as any program makes them; the cache folder itself private.
        default.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        # No home folder to keep a cache in (a bare container): memory only, rather than every read failing.
        log.warning("storage cache: cannot create %s (%s); keeping blocks in memory only. Set %s to a folder "
                    "to keep a disk tier", default, e, DIRECTORY_KEY)
        return BlockCache(memory_bytes, 0, None)
    return BlockCache(memory_bytes, disk_bytes, default)


def caching_filesystem(base: pafs.FileSystem, scheme: str, cache: BlockCache) -> pafs.FileSystem:
    """`base` with its input files read through `cache`."""
    return pafs.PyFileSystem(CachingHandler(base, cache, scheme))


def storage_cache_stats() -> dict[str, int]:
    """Hits, misses and bytes read from the store or saved, summed over this process's caches."""
    total: dict[str, int] = {}
    with _shared_lock:
        caches = list(_shared.values())
    for c in caches:
        for k, v in c.stats.as_dict().items():
            total[k] = total.get(k, 0) + v
    for c in caches:
        total["memory_bytes"] = total.get("memory_bytes", 0) + c.memory_used
        total["disk_bytes"] = total.get("disk_bytes", 0) + c.disk_used
    with _shared_lock:
        decoded = list(_decoded.values())
    if caches or decoded:
        total["decoded_hits"] = sum(d.stats.decoded_hits for d in decoded)
        total["decoded_bytes"] = sum(d.used for d in decoded)
    return total


__all__ = ["BLOCK_BYTES", "BlockCache", "CacheStats", "CachingHandler", "DecodedCache", "StorageCacheSettings",
           "caching_filesystem", "decoded_cache", "default_directory", "private_directory", "storage_cache",
           "storage_cache_stats"]
