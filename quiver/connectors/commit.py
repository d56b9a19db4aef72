"""The commit protocol of output folders: a manifest written last and read first.

A folder Quiver commits holds its data files where Spark puts them (`part-...` files, Hive
`key=value` folders), `_SUCCESS`, and `_quiver_commit`: a small JSON manifest naming the job that
wrote it and the folder's live files. The manifest is replaced whole, in one step (a rename on
local disk, a single PUT on an object store), so the moment it is replaced is the moment a
commit happens; readers consult it first and list only the files it names.

Why a manifest and not versioned prefixes (`out/v=7/...` with a pointer): a version folder
changes the layout every other reader sees. Spark would read `v=7` as a partition column (or, for
a hidden `_v7`, read nothing), plain pyarrow likewise; files in place under a manifest read in
Spark, pyarrow and Quiver alike, and a folder Spark wrote needs nothing new. Object stores rename
nothing, so versioned prefixes would need a copy anyway; the manifest costs one small object.

A commit (`publish`) of files staged beside the folder, each step behind a `fault_point`:

1. `_SUCCESS` names the new job, then the manifest is rewritten to name the new job with the
   *old* files (a first commit writes an empty manifest first, then `_SUCCESS`).
2. Each staged file moves in under its final, unique name (a rename, or a server-side copy).
3. The manifest names the new files (for append: old and new): the commit point.
4. The files overwrite replaced are deleted, then the staging folder.

A manifest counts only while `_SUCCESS` names its job: a tool that knows nothing of manifests
(Spark appending to a Quiver folder) rewrites `_SUCCESS`, and the folder reads as a plain one
again, every visible file included, as Spark reads it. A reader takes (manifest, `_SUCCESS`),
lists, and takes them again, retrying until both are unchanged across its listing, so it always
sees one whole commit: before step 3 the old files (between the two writes of step 1, the plain
listing, which is the old files too, since new files move in only after the manifest holds the
old list), from step 3 on the new ones.

Readers never change a folder. A crash at any step is resolved by the manifest itself (before
step 3 the old output is live, after it the new one) and cleaned up by the next writer of the
path (`sweep`): files neither the manifest names nor anyone else may be writing (Quiver's
`part-NNNNN-<uuid>.c000` files, and those a manifest says it replaced) are deleted, and staging
folders of jobs that are provably dead (same host, process gone) or older than
`STALE_AFTER_S` are removed.

What other readers see: Spark and pyarrow skip `_`/`.` names, so they never see the manifest or
staging. They do see the files, so during steps 2-4 of a running commit, and after a crash in
them until the next Quiver write of the path, they may see old and new files together; Spark's own
committers on object stores have the same window. Writers of one path are not serialized: two
concurrent jobs each commit whole, and the last manifest wins.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import threading
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

import pyarrow.fs as pafs

from quiver.connectors.faults import fault_point
from quiver.connectors.object_store import (
    copy_object,
    delete_prefix,
    delete_stale,
    file_version,
    is_object_path,
    list_children,
    list_objects,
    normalize_path,
    object_info,
    read_object,
    write_object,
)
from quiver.engine.core.errors import AnalysisException, QuiverError

MANIFEST = "_quiver_commit"
SUCCESS = "_SUCCESS"
JOB_RECORD = "_quiver_job"
STAGING_MARK = ".quiver-staging-"
LEGACY_OLD_MARK = ".quiver-old-"
# A staging folder whose job cannot be asked (another host, or no record) is swept after this long,
# as S3A purges abandoned multipart uploads after a day (fs.s3a.multipart.purge.age).
STALE_AFTER_S = 24 * 3600.0
# Jobs this process is writing (setup done, neither committed nor aborted): a staging folder whose record
# names this process and a job not among them was left by a job whose abort could not delete it.
_RUNNING_JOBS: set[str] = set()
_RUNNING_LOCK = threading.Lock()
SNAPSHOT_TRIES = 20
QUIVER_PART = re.compile(r"part-\d{5}-[0-9a-f]{32}\.c000.*")


def is_hidden(name: str) -> bool:
    """Spark skips `_x` and `.x` names (markers, checksums, staging) but not `_k=v` folders."""
    return (name.startswith("_") and "=" not in name) or name.startswith(".") or name.endswith("._COPYING_")


@dataclass(frozen=True)
class Manifest:
    """What `_quiver_commit` says: the job whose `_SUCCESS` makes it count, the live files (relative,
    `/`-separated; None: no output committed yet) and the files its commit replaced."""

    job: str
    files: tuple[str, ...] | None
    replaces: tuple[str, ...] = ()

    def to_bytes(self) -> bytes:
        return json.dumps({"quiver_commit": 1, "job": self.job, "files": self.files,
                           "replaces": self.replaces}, indent=0).encode()

    @classmethod
    def parse(cls, data: bytes | None) -> Manifest | None:
        """The manifest in `data`, None for none or for bytes that are not one."""
        if data is None:
            return None
        try:
            value = json.loads(data)
            files = value["files"]
            return cls(str(value["job"]), None if files is None else tuple(files), tuple(value.get("replaces", ())))
        except (ValueError, KeyError, TypeError):
            return None


def success_body(job: str) -> bytes:
    """`_SUCCESS` naming the job that wrote it (Spark reads no `_SUCCESS`; S3A's committers fill theirs too)."""
    return json.dumps({"committer": "quiver", "job": job}).encode()


def success_job(data: bytes | None) -> str | None:
    """The job a `_SUCCESS` names, None for an absent or foreign one (Spark's is empty)."""
    try:
        value = json.loads(data) if data else None
        return str(value["job"]) if isinstance(value, dict) and value.get("committer") == "quiver" else None
    except (ValueError, KeyError):
        return None


class OutputFolder(Protocol):
    """The few storage steps the protocol needs, on local disk or under an object prefix."""

    root: str

    def read(self, name: str) -> bytes | None:
        """The body of a small file directly in the folder, None if absent."""

    def write_atomic(self, name: str, data: bytes) -> None:
        """Replace a small file directly in the folder at once: readers see the old body or the new."""

    def visible(self) -> dict[str, int] | None:
        """Relative path -> size of every file not hidden at any level; None when the folder is absent."""

    def move_in(self, source: str, relative: str) -> None:
        """Put the staged file `source` at `relative` (a rename or a server-side copy)."""

    def delete(self, relatives: Iterable[str], keep: Iterable[str]) -> None:
        """Delete files (relative paths); `keep` says what must stay, so emptied folders can go."""

    def staging_areas(self) -> list[str]:
        """The staging folders of jobs writing this folder (any job, this one's included)."""

    def staging_age_s(self, staging: str) -> float:
        """Seconds since the staging folder last changed."""

    def remove_tree(self, path: str) -> None:
        """Delete a staging folder (or the whole folder) and everything in it."""


def staging_path(root: str, job: str) -> str:
    """Where a job stages its files: a hidden sibling of the destination, skipped by every reader."""
    parent, name = os.path.split(root)
    return os.path.join(parent, f".{name}{STAGING_MARK}{job}")


class LocalFolder:
    """An output folder on the local disk: renames within one file system are atomic."""

    def __init__(self, root: str):
        self.root = root

    def read(self, name: str) -> bytes | None:
        try:
            with open(os.path.join(self.root, name), "rb") as f:
                return f.read()
        except (FileNotFoundError, NotADirectoryError):
            return None

    def write_atomic(self, name: str, data: bytes) -> None:
        os.makedirs(self.root, exist_ok=True)
        temporary = os.path.join(self.root, f".{name}.{uuid.uuid4().hex}.tmp")
        with open(temporary, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, os.path.join(self.root, name))

    def visible(self) -> dict[str, int] | None:
        if not os.path.isdir(self.root):
            return None
        found = {}
        for folder, dirs, names in os.walk(self.root):
            dirs[:] = [d for d in dirs if not is_hidden(d)]
            for name in names:
                if not is_hidden(name):
                    path = os.path.join(folder, name)
                    with contextlib.suppress(FileNotFoundError):
                        found[os.path.relpath(path, self.root).replace(os.sep, "/")] = os.path.getsize(path)
        return found

    def move_in(self, source: str, relative: str) -> None:
        target = os.path.join(self.root, relative)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.replace(source, target)

    def delete(self, relatives: Iterable[str], keep: Iterable[str]) -> None:
        folders = set()
        for relative in relatives:
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(self.root, relative))
            folders.add(os.path.dirname(relative))
        for folder in sorted(folders, key=len, reverse=True):
            while folder:
                with contextlib.suppress(OSError):
                    os.rmdir(os.path.join(self.root, folder))
                folder = os.path.dirname(folder)

    def staging_areas(self) -> list[str]:
        parent, name = os.path.split(self.root)
        try:
            names = os.listdir(parent)
        except FileNotFoundError:
            return []
        return sorted(os.path.join(parent, n) for n in names if n.startswith(f".{name}{STAGING_MARK}"))

    def staging_age_s(self, staging: str) -> float:
        try:
            return time.time() - os.stat(staging).st_mtime
        except FileNotFoundError:
            return 0.0

    def remove_tree(self, path: str) -> None:
        if os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)


class ObjectFolder:
    """An output folder under an object-store prefix: no rename, but each object is written whole."""

    def __init__(self, root: str):
        self.root = root

    def read(self, name: str) -> bytes | None:
        return read_object(f"{self.root}/{name}")

    def write_atomic(self, name: str, data: bytes) -> None:
        write_object(f"{self.root}/{name}", data)

    def visible(self) -> dict[str, int] | None:
        objects = list_objects(self.root)
        if not objects:
            return None
        found = {}
        for uri, size in objects:
            relative = uri[len(self.root) + 1:]
            if uri.startswith(self.root + "/") and not any(is_hidden(p) for p in relative.split("/")):
                found[relative] = size
        return found

    def move_in(self, source: str, relative: str) -> None:
        copy_object(source, f"{self.root}/{relative}")

    def delete(self, relatives: Iterable[str], keep: Iterable[str]) -> None:
        stale = [f"{self.root}/{r}" for r in relatives]
        if stale:
            delete_stale(self.root, stale, keep=[f"{self.root}/{k}" for k in keep])

    def staging_areas(self) -> list[str]:
        parent, name = self.root.rsplit("/", 1)
        prefix = f"{parent}/.{name}{STAGING_MARK}"
        return sorted(uri for uri, is_prefix in list_children(parent) if is_prefix and uri.startswith(prefix))

    def staging_age_s(self, staging: str) -> float:
        times = [file_version(uri)[1] for uri, _ in list_objects(staging)]
        return time.time() - max(times) / 1e9 if times else STALE_AFTER_S

    def remove_tree(self, path: str) -> None:
        delete_prefix(path)


def output_folder(root: str) -> OutputFolder:
    """The folder `root` (a normalized local path or object URI) seen through the protocol's steps."""
    return ObjectFolder(root) if is_object_path(root) else LocalFolder(root)


@dataclass(frozen=True)
class Snapshot:
    """One consistent look at a folder: its manifest if it counts, and its visible files."""

    manifest: Manifest | None
    visible: dict[str, int] | None
    manifest_uri: str = ""

    def live(self) -> dict[str, int] | None:
        """The committed files a reader sees (relative path -> size); None: no output here."""
        if self.manifest is None:
            return self.visible
        if self.manifest.files is None:
            return None
        visible = self.visible or {}
        # A file under a folder whose name starts with '_' or '.' (a partition value escaped to '..%2F') is
        # committed but, as in Spark, not seen from the folder above it: it is read by naming its folder.
        seen = [f for f in self.manifest.files if not any(is_hidden(part) for part in f.split("/")[:-1])]
        missing = [f for f in seen if f not in visible]
        if missing:
            raise AnalysisException(
                f"the commit manifest {self.manifest.job} of {self.manifest_uri} names files that are gone: "
                f"{', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}; they were deleted outside Quiver. "
                f"Rewrite the output, or delete {MANIFEST} to read whatever files remain.")
        return {f: visible[f] for f in seen}

    def committed(self) -> dict[str, int] | None:
        """Every file the last commit made (relative path -> size, 0 where the listing does not show it),
        hidden partition folders included: what a writer replaces, appends to or finds existing."""
        if self.manifest is None:
            return self.visible
        if self.manifest.files is None:
            return None
        visible = self.visible or {}
        return {f: visible.get(f, 0) for f in self.manifest.files}


def snapshot(folder: OutputFolder) -> Snapshot:
    """The folder's manifest and files as of one instant: markers read before and after the listing
    must agree, else a commit moved on meanwhile and the look is taken again."""
    for _ in range(SNAPSHOT_TRIES):
        before = folder.read(MANIFEST), folder.read(SUCCESS)
        visible = folder.visible()
        after = folder.read(MANIFEST), folder.read(SUCCESS)
        if before == after:
            manifest = Manifest.parse(before[0])
            if manifest is not None and success_job(before[1]) != manifest.job:
                # A foreign tool rewrote the folder after Quiver's commit, or a commit is between
                # its first two steps: read it as a plain folder (an unfinished first commit as none).
                manifest = manifest if manifest.files is None and not visible else None
            return Snapshot(manifest, visible, manifest_uri=f"{folder.root}/{MANIFEST}")
    raise QuiverError(f"{folder.root} kept changing while it was listed ({SNAPSHOT_TRIES} tries); "
                      "is another job committing to it in a loop?")


def live_files(root: str) -> list[tuple[str, int]] | None:
    """(path, size) of the committed files under the folder `root`, in path order; None when the folder
    holds no committed output. A `key=value` folder inside a committed output is read through the
    manifest of the output it belongs to."""
    root = normalize_path(root)
    owner = _manifest_owner(root)
    live = snapshot(output_folder(owner)).live()
    if live is None:
        return None
    sep = "/" if is_object_path(root) else os.sep
    below = root[len(owner):].strip(sep).replace(os.sep, "/")
    prefix = f"{below}/" if below else ""
    return sorted((f"{owner}{sep}{f.replace('/', sep)}", size) for f, size in live.items() if f.startswith(prefix))


def _manifest_owner(root: str) -> str:
    """`root`, or the nearest folder above it through `key=value` folders that holds a manifest."""
    current = root
    while "=" in os.path.basename(current) and not is_hidden(os.path.basename(current)):
        parent = os.path.dirname(current)
        if parent in ("", current) or parent.endswith(":/"):
            break
        if is_object_path(parent) and object_info(f"{parent}/{MANIFEST}").type == pafs.FileType.File:
            return parent
        if not is_object_path(parent) and os.path.isfile(os.path.join(parent, MANIFEST)):
            return parent
        current = parent
    return root


def publish(folder: OutputFolder, staged: Mapping[str, str], job: str, *, append: bool,
            refuse_existing: bool) -> None:
    """Commit the staged files (relative path -> staged location) into `folder`: appended to its live
    files, or replacing them. Any failure before the commit point undoes what this call moved in."""
    old = snapshot(folder).committed()
    if refuse_existing and old:
        raise AnalysisException(f"[PATH_ALREADY_EXISTS] Path {folder.root} appeared while the job ran.")
    old_files = tuple(sorted(old or ()))
    new_files = tuple(sorted(set(staged) | (set(old_files) if append else set())))
    if old is None:
        fault_point("commit.intent")
        folder.write_atomic(MANIFEST, Manifest(job, None).to_bytes())
        fault_point("commit.success")
        folder.write_atomic(SUCCESS, success_body(job))
    else:
        fault_point("commit.success")
        folder.write_atomic(SUCCESS, success_body(job))
        fault_point("commit.intent")
        folder.write_atomic(MANIFEST, Manifest(job, old_files).to_bytes())
    moved: list[str] = []
    try:
        for relative, source in sorted(staged.items()):
            fault_point("commit.move")
            folder.move_in(source, relative)
            moved.append(relative)
        replaced = tuple(sorted(set(old_files) - set(new_files)))
        fault_point("commit.manifest")
        folder.write_atomic(MANIFEST, Manifest(job, new_files, replaced).to_bytes())
    except BaseException:
        # Best effort: the job's own error is the one to report, and `sweep` finishes what this leaves.
        with contextlib.suppress(Exception):
            if old is None:
                folder.remove_tree(folder.root)
            else:
                folder.delete(moved, keep=old_files)
        raise
    if replaced:
        fault_point("commit.replace")
        folder.delete(replaced, keep=[*new_files, MANIFEST, SUCCESS])


@dataclass(frozen=True)
class JobRecord:
    """Who is writing a staging folder, so another writer can tell a live job from a dead one."""

    job: str
    host: str
    pid: int
    pid_started: str
    started: float

    @classmethod
    def current(cls, job: str) -> JobRecord:
        return cls(job, socket.gethostname(), os.getpid(), _process_start(os.getpid()) or "", time.time())

    def to_bytes(self) -> bytes:
        return json.dumps(self.__dict__).encode()

    @classmethod
    def parse(cls, data: bytes | None) -> JobRecord | None:
        try:
            value = json.loads(data) if data else None
            return cls(str(value["job"]), str(value["host"]), int(value["pid"]), str(value["pid_started"]),
                       float(value["started"]))
        except (ValueError, KeyError, TypeError):
            return None

    def alive(self) -> bool:
        """Provably dead on this host when its process is gone (or the pid now names another process);
        a job on another host counts as alive until `STALE_AFTER_S` after it started."""
        if self.host != socket.gethostname():
            return time.time() - self.started < STALE_AFTER_S
        if self.pid == os.getpid() and self.pid_started == (_process_start(self.pid) or ""):
            with _RUNNING_LOCK:
                return self.job in _RUNNING_JOBS
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        started = _process_start(self.pid)
        return not (started and self.pid_started and started != self.pid_started)


def _process_start(pid: int) -> str | None:
    """When the process started, in clock ticks since boot (Linux), to tell a reused pid apart."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def write_job_record(folder: OutputFolder, staging: str, job: str) -> None:
    """Create the job's staging folder holding its `JobRecord`; the job counts as running in this process
    until `job_ended`."""
    with _RUNNING_LOCK:
        _RUNNING_JOBS.add(job)
    fault_point("setup.record")
    body = JobRecord.current(job).to_bytes()
    if isinstance(folder, ObjectFolder):
        write_object(f"{staging}/{JOB_RECORD}", body)
        return
    os.makedirs(staging)
    with open(os.path.join(staging, JOB_RECORD), "wb") as f:
        f.write(body)


def job_ended(job: str) -> None:
    """The job committed or aborted: staging it left behind (an abort that could not delete it) is the
    next writer's to sweep, even while this process lives."""
    with _RUNNING_LOCK:
        _RUNNING_JOBS.discard(job)


def _read_record(folder: OutputFolder, staging: str) -> JobRecord | None:
    if isinstance(folder, ObjectFolder):
        return JobRecord.parse(read_object(f"{staging}/{JOB_RECORD}"))
    try:
        with open(os.path.join(staging, JOB_RECORD), "rb") as f:
            return JobRecord.parse(f.read())
    except OSError:
        return None


def sweep(folder: OutputFolder, own_job: str) -> None:
    """Clean up after jobs that died writing this folder: remove their staging folders, and, when no
    other job may be writing it, the files its manifest neither names nor keeps."""
    others_alive = False
    for staging in folder.staging_areas():
        if staging.endswith(own_job):
            continue
        record = _read_record(folder, staging)
        dead = not record.alive() if record is not None else folder.staging_age_s(staging) >= STALE_AFTER_S
        if dead:
            fault_point("sweep.staging")
            folder.remove_tree(staging)
        else:
            others_alive = True
    if isinstance(folder, LocalFolder):
        _undo_legacy_swap(folder)
        # The record a first write renamed into place with its staging folder, if it died right after.
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            os.remove(os.path.join(folder.root, JOB_RECORD))
    if others_alive:
        return
    look = snapshot(folder)
    manifest = look.manifest
    if manifest is None or manifest.files is None and not look.visible:
        return
    named = set(manifest.files or ())
    leftovers = [f for f in look.visible or () if f not in named
                 and (f in manifest.replaces or QUIVER_PART.fullmatch(f.rsplit("/", 1)[-1]))]
    if leftovers:
        fault_point("sweep.files")
        folder.delete(leftovers, keep=[*named, MANIFEST, SUCCESS])


def _undo_legacy_swap(folder: LocalFolder) -> None:
    """Quiver before manifests swapped folders by two renames; one killed between them left the old
    output at `.name.quiver-old-<job>` and no folder: put it back (or drop it if the swap finished)."""
    parent, name = os.path.split(folder.root)
    with contextlib.suppress(FileNotFoundError):
        for entry in sorted(os.listdir(parent)):
            if entry.startswith(f".{name}{LEGACY_OLD_MARK}"):
                old = os.path.join(parent, entry)
                fault_point("sweep.legacy")
                if os.path.exists(folder.root):
                    folder.remove_tree(old)
                else:
                    os.rename(old, folder.root)
