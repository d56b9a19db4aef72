"""quiver/connectors/cache.py: a second scan through the cache reads no bytes from the store, a changed file
is read afresh, and both tiers keep to their byte bounds. The store is the local file system with its
reads counted, so what reaches "the store" is measured, not assumed."""
from __future__ import annotations

import io
import os
import stat
import tempfile

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from quiver.connectors.cache import (
    BLOCK_BYTES,
    BlockCache,
    DecodedCache,
    StorageCacheSettings,
    caching_filesystem,
    storage_cache,
)
from quiver.engine.core.errors import ConfigurationError


class _CountedFile(io.FileIO):
    """A local file that adds every byte it reads to its store's count."""

    def __init__(self, path: str, store: CountingStore):
        super().__init__(path, "r")
        self._store = store

    def readinto(self, buffer):
        n = super().readinto(buffer)
        self._store.bytes_read += n or 0
        return n

    def read(self, size=-1):
        data = super().read(size)
        self._store.bytes_read += len(data)
        return data


class CountingStore(pafs.FileSystemHandler):
    """The local file system, counting the bytes its input files hand out."""

    def __init__(self):
        self.local = pafs.LocalFileSystem()
        self.bytes_read = 0

    def __eq__(self, other):
        return other is self

    def __ne__(self, other):
        return other is not self

    def get_type_name(self):
        return "counting"

    def normalize_path(self, path):
        return path

    def get_file_info(self, paths):
        return self.local.get_file_info(paths)

    def get_file_info_selector(self, selector):
        return self.local.get_file_info(selector)

    def open_input_file(self, path):
        return pa.PythonFile(_CountedFile(path, self), mode="r")

    open_input_stream = open_input_file

    def create_dir(self, path, recursive):
        self.local.create_dir(path, recursive=recursive)

    def delete_dir(self, path):
        self.local.delete_dir(path)

    def delete_dir_contents(self, path, missing_dir_ok=False):
        self.local.delete_dir_contents(path, missing_dir_ok=missing_dir_ok)

    def delete_root_dir_contents(self):
        raise NotImplementedError("not needed here")

    def delete_file(self, path):
        self.local.delete_file(path)

    def move(self, src, dest):
        self.local.move(src, dest)

    def copy_file(self, src, dest):
        self.local.copy_file(src, dest)

    def open_output_stream(self, path, metadata=None):
        return self.local.open_output_stream(path, compression=None)

    def open_append_stream(self, path, metadata=None):
        return self.local.open_append_stream(path, compression=None)


def _table(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({"k": rng.integers(0, 1000, n), "v": rng.random(n), "s": [f"row{i % 977}" for i in range(n)]})


@pytest.fixture
def store():
    handler = CountingStore()
    return handler, pafs.PyFileSystem(handler)


def test_second_scan_reads_nothing_from_the_store(tmp_path, store):
    handler, base = store
    path = str(tmp_path / "t.parquet")
    table = _table(300_000, 1)
    pq.write_table(table, path, row_group_size=50_000)
    cache = BlockCache(memory_bytes=64 << 20)
    fs = caching_filesystem(base, "file", cache)

    assert pq.read_table(path, filesystem=fs).equals(table)
    first = handler.bytes_read
    assert first >= os.path.getsize(path) * 0.9
    assert pq.read_table(path, filesystem=fs, columns=["v"]).column("v").equals(table.column("v"))
    assert pq.read_table(path, filesystem=fs).equals(table)
    assert handler.bytes_read == first
    stats = cache.stats.as_dict()
    assert stats["misses"] == -(-os.path.getsize(path) // BLOCK_BYTES) and stats["hits"] > 0
    assert stats["bytes_from_store"] == first and stats["bytes_saved"] > 0


def test_a_changed_file_is_never_served_stale(tmp_path, store):
    handler, base = store
    path = str(tmp_path / "t.parquet")
    pq.write_table(_table(50_000, 1), path)
    fs = caching_filesystem(base, "file", BlockCache(memory_bytes=64 << 20))
    pq.read_table(path, filesystem=fs)
    before = handler.bytes_read
    changed = _table(50_000, 2)
    pq.write_table(changed, path)
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # a new version even within one clock tick
    assert pq.read_table(path, filesystem=fs).equals(changed)
    assert handler.bytes_read > before


def test_memory_tier_spills_to_the_disk_tier_and_both_keep_their_bounds(tmp_path, store):
    handler, base = store
    path = str(tmp_path / "t.parquet")
    table = _table(400_000, 3)
    pq.write_table(table, path, compression="none")
    size = os.path.getsize(path)
    cache = BlockCache(memory_bytes=2 * BLOCK_BYTES, disk_bytes=size + BLOCK_BYTES, directory=tmp_path / "blocks")
    fs = caching_filesystem(base, "file", cache)
    pq.read_table(path, filesystem=fs)
    first = handler.bytes_read
    assert cache.memory_used <= 2 * BLOCK_BYTES and 0 < cache.disk_used <= size + BLOCK_BYTES
    assert pq.read_table(path, filesystem=fs).equals(table)
    assert handler.bytes_read == first and cache.stats.disk_hits > 0

    small = BlockCache(memory_bytes=BLOCK_BYTES, disk_bytes=2 * BLOCK_BYTES, directory=tmp_path / "small")
    fs = caching_filesystem(base, "file", small)
    pq.read_table(path, filesystem=fs)
    assert small.disk_used <= 2 * BLOCK_BYTES and small.stats.evicted_bytes > 0
    assert len(list((tmp_path / "small").glob("*.block"))) <= 2


def test_reads_at_any_offset_match_the_file(tmp_path, store):
    handler, base = store
    path = tmp_path / "bytes.bin"
    data = np.random.default_rng(5).integers(0, 256, 3 * BLOCK_BYTES + 12345, dtype=np.uint8).tobytes()
    path.write_bytes(data)
    fs = caching_filesystem(base, "file", BlockCache(memory_bytes=16 << 20))
    rng = np.random.default_rng(6)
    with fs.open_input_file(str(path)) as f:
        assert f.size() == len(data)
        for _ in range(50):
            offset = int(rng.integers(0, len(data)))
            length = int(rng.integers(0, 2 * BLOCK_BYTES))
            assert bytes(f.read_at(length, offset)) == data[offset:offset + length]
    assert handler.bytes_read == len(data)


def test_writes_and_listing_go_to_the_store(tmp_path, store):
    _, base = store
    fs = caching_filesystem(base, "file", BlockCache())
    with fs.open_output_stream(str(tmp_path / "out.txt")) as f:
        f.write(b"hello")
    assert (tmp_path / "out.txt").read_bytes() == b"hello"
    with fs.open_output_stream(str(tmp_path / "out.txt.gz")) as f:  # compressed once, by its extension
        f.write(b"hello")
    with fs.open_input_stream(str(tmp_path / "out.txt.gz")) as f:
        assert f.read() == b"hello"
    infos = fs.get_file_info(pafs.FileSelector(str(tmp_path)))
    assert sorted(i.base_name for i in infos) == ["out.txt", "out.txt.gz"]
    with pytest.raises(FileNotFoundError):
        fs.open_input_file(str(tmp_path / "missing.parquet"))


def test_the_decoded_cache_keeps_to_its_bound_least_recently_used_out_first():
    tables = {i: _table(20_000, i).select(["k", "v"]) for i in range(4)}
    size = tables[0].nbytes
    cache = DecodedCache(max_bytes=2 * size + size // 2)
    for i in (0, 1):
        cache.put(("f", "etag", i), tables[i])
    assert cache.get(("f", "etag", 0)) is tables[0]  # 0 is now the most recently used
    cache.put(("f", "etag", 2), tables[2])
    assert cache.get(("f", "etag", 1)) is None and cache.get(("f", "etag", 0)) is tables[0]
    assert cache.used <= cache.max_bytes and cache.stats.decoded_hits == 2
    assert cache.get(("f", "other-etag", 0)) is None


# ------------------------------------------------------------------ the disk tier is private


def _bytes_file(tmp_path, blocks: int) -> tuple[str, bytes]:
    path = tmp_path / "bytes.bin"
    data = np.random.default_rng(7).integers(0, 256, blocks * BLOCK_BYTES - 100, dtype=np.uint8).tobytes()
    path.write_bytes(data)
    return str(path), data


def _read_all(fs, path: str) -> bytes:
    with fs.open_input_file(path) as f:
        return bytes(f.read())


def test_disk_tier_folder_and_blocks_are_private_to_the_user(tmp_path, store):
    _, base = store
    path, data = _bytes_file(tmp_path, 3)
    folder = tmp_path / "made" / "blocks"
    cache = BlockCache(memory_bytes=0, disk_bytes=8 * BLOCK_BYTES, directory=folder)  # every block to disk
    assert _read_all(caching_filesystem(base, "file", cache), path) == data
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and folder.stat().st_uid == os.geteuid()
    files = sorted(folder.iterdir())
    assert len(files) == 3 and all(f.suffix == ".block" for f in files), "no temp file left behind"
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)


def test_the_default_folder_is_the_users_own_not_a_predictable_temp_name(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    settings = StorageCacheSettings.from_conf({})
    assert settings.directory is None or not settings.directory.startswith(tempfile.gettempdir() + os.sep + "quiver")
    cache = storage_cache(1 << 20, 1 << 20, settings.directory)
    assert cache.directory == tmp_path / "xdg" / "quiver" / "storage-cache"
    assert stat.S_IMODE(cache.directory.stat().st_mode) == 0o700


@pytest.mark.parametrize("mode", [0o755, 0o770, 0o703], ids=["0755", "0770", "0703"])
def test_a_folder_group_or_others_may_enter_is_refused(tmp_path, mode):
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(mode)
    with pytest.raises(ConfigurationError, match=f"{folder} has mode {mode:04o}.*mode 0700.*quiver.cache.storage.dir"):
        BlockCache(memory_bytes=BLOCK_BYTES, disk_bytes=BLOCK_BYTES, directory=folder)


def test_a_folder_another_user_made_first_is_refused(tmp_path, monkeypatch):
    folder = tmp_path / "theirs"
    folder.mkdir(mode=0o700)
    real_lstat = os.lstat

    def lstat(path, *args, **kwargs):  # as if another user had made the folder (chown needs root)
        st = real_lstat(path, *args, **kwargs)
        if os.fspath(path) != os.fspath(folder):
            return st
        fields = list(st[:10])
        fields[4] = os.geteuid() + 4242
        return os.stat_result(fields)

    monkeypatch.setattr(os, "lstat", lstat)
    with pytest.raises(ConfigurationError, match=f"{folder} is owned by uid {os.geteuid() + 4242}, not by the current"):
        BlockCache(memory_bytes=BLOCK_BYTES, disk_bytes=BLOCK_BYTES, directory=folder)


def test_a_link_in_place_of_the_folder_is_refused(tmp_path):
    target = tmp_path / "target"
    target.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(target)
    with pytest.raises(ConfigurationError, match="is a symbolic link"):
        BlockCache(memory_bytes=BLOCK_BYTES, disk_bytes=BLOCK_BYTES, directory=link)


def test_a_block_replaced_on_disk_is_fetched_again_never_served(tmp_path, store):
    handler, base = store
    path, data = _bytes_file(tmp_path, 3)
    folder = tmp_path / "blocks"
    cache = BlockCache(memory_bytes=0, disk_bytes=8 * BLOCK_BYTES, directory=folder)
    fs = caching_filesystem(base, "file", cache)
    assert _read_all(fs, path) == data
    first = handler.bytes_read
    a, b, c = sorted(folder.iterdir(), key=lambda f: f.stat().st_mtime_ns)
    a.write_bytes(b"\0" * len(a.read_bytes()))  # poisoned in place
    b_bytes, c_bytes = b.read_bytes(), c.read_bytes()
    b.write_bytes(c_bytes)  # two valid blocks swapped: each checksum covers its key too
    c.write_bytes(b_bytes)

    assert _read_all(fs, path) == data
    assert cache.stats.corrupt_blocks == 3
    assert handler.bytes_read == first + len(data), "each bad block was fetched again from the store"
    again = handler.bytes_read
    assert _read_all(fs, path) == data
    assert handler.bytes_read == again and cache.stats.disk_hits >= 3, "the refetched blocks were written back"
