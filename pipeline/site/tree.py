"""A built site's folder, kept in step with what a build made: only changed files written, each whole.

`SiteTree` is one output folder of the reader's site and what the builds of it keep between builds (each
file's hash, the caller's inputs and plan, its own caches): those live in the data root's state
(`.incidentlib/site/<key>/`, `pipeline.store.state`), never in the folder that is published.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import pickle
import re
import threading
from collections.abc import Callable, Collection, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.errors import StoreError
from pipeline.store import Store
from pipeline.store.files import check_rel, fsync_dir, inside
from pipeline.store.state import State

__all__ = [
    "SITE_DIR",
    "SiteTree",
    "TreeSync",
    "Wanted",
    "is_temporary",
    "site_dir",
    "tree_hash",
    "write_unless_known",
]

SITE_DIR = "site"  # the reader's site, built from cases/ (`incidentlib site`); ignored by git
# Up to this many files written, each is synced with its folders; more, one sync of the system at the end.
SYNC_EACH = 512
TREE_CACHE = "tree.pickle"  # the files' and inputs' hashes, in the tree's cache folder
OLD_TREE_CACHE = ".build-cache.json"  # where earlier builds kept it: in the site folder, published with it


def site_dir(store: Store) -> Path:
    """Where a data root's site is built unless told otherwise: its `site/` folder."""
    return store.root / SITE_DIR


def tree_hash(data: bytes) -> bytes:
    """A tree's file as `SiteTree.sync`'s cache knows it: SHA-256, its first 16 bytes (100,000 of them pickle
    and load in a quarter of the time their hex does; a collision is as unlikely as for a UUID)."""
    return hashlib.sha256(data).digest()[:16]


@dataclass(frozen=True)
class Wanted:
    """What a sync is to leave in the folder.

    `files`: site-relative POSIX path -> bytes; `present`: files of the last sync the caller knows to be
    current (not sent again); `later`: files whose bytes are still being made (aside, on another thread),
    each called for them while the others are written; `aside`: files another process wrote already as a
    sync would (`write_unless_known`, not synced), each by its hash and whether it was written; `protect`:
    globs of files never removed (permalinks);
    `inputs`: the caller's
    hash of what each file was made of, and `plan`: what else it keeps of how it planned them, both
    handed back by `SiteTree.last` at the next build."""

    files: Mapping[str, bytes]
    present: Collection[str] = ()
    later: Mapping[str, Callable[[], bytes]] = field(default_factory=dict)
    aside: Mapping[str, tuple[bytes, bool]] = field(default_factory=dict)
    protect: tuple[str, ...] = ()
    inputs: Mapping[str, bytes] = field(default_factory=dict)
    plan: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class TreeSync:
    """What `SiteTree.sync` did, by site-relative path."""

    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # given as present, but gone: to be made again
    hashes: dict[str, bytes] = field(default_factory=dict)  # each file of the tree now, by its `tree_hash`


class SiteTree:
    """One output folder of the reader's site, and its cache folder in the data root's state."""

    def __init__(self, state: State, folder: Path) -> None:
        self.state = state
        self.folder = folder.resolve()
        self._cache = f"site/{hashlib.sha256(str(self.folder).encode()).hexdigest()[:16]}"
        self._found: set[str] | None = None  # what `look` found in the folder

    def look(self) -> None:
        """Walk the folder now, for a `sync` that has no cache it may trust to say what the folder holds:
        a build whose workers write their files before it syncs looks first, so that the sync knows the
        folder as the build found it (not the workers' tens of thousands of files, walked again)."""
        self._found = self._walk()

    @property
    def found(self) -> set[str] | None:
        """The files `look` found in the folder (None before it looked)."""
        return self._found

    def _walk(self) -> set[str]:
        folder = self.folder
        return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}

    @property
    def cache_dir(self) -> Path:
        """Where the builds of this folder keep what they know between builds (the cases' cards, each file's
        hash, the search's stems): under the data root's state, never in the published folder."""
        return self.state.path(self._cache)

    def read_cache(self, name: str) -> bytes | None:
        return self.state.read(f"{self._cache}/{name}")

    def write_cache(self, name: str, data: bytes, durable: bool = False) -> None:
        self.state.write(f"{self._cache}/{name}", data, durable=durable)

    def remove_cache(self, name: str) -> None:
        self.state.remove(f"{self._cache}/{name}")

    def cached(self, folder: str) -> list[str]:
        """The names of the cache's files under its `folder` (as `read_cache` takes them), sorted."""
        base = self.cache_dir
        return sorted(p.relative_to(base).as_posix() for p in (base / folder).rglob("*") if p.is_file())

    def _emptied(self) -> bool:
        """Whether the folder is not there, or holds nothing at all (`rm -rf site`): then its cache says
        nothing of it, and a build makes it as a new one, rather than having each of its files named missing
        and made again on one process (1.5 times a clean build's time at 1,000 cases in memory, two to three
        times on a slow disk). A folder holding anything (a `.git`, a `CNAME`) is not emptied, since a sync
        that trusts no cache removes every file it did not make. One that can't be listed is trusted to be
        as its cache says; a file in its place is refused."""
        try:
            with os.scandir(self.folder) as entries:
                return next(entries, None) is None
        except FileNotFoundError:
            return True
        except NotADirectoryError:
            raise StoreError(f"{self.folder}: the site's folder is a file", path=str(self.folder)) from None
        except PermissionError:
            return False

    def read_file(self, rel: str) -> bytes | None:
        """A file of the built site (site-relative path), None when it is not there."""
        try:
            return inside(self.folder, rel).read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None

    def last(self) -> dict[str, dict[str, Any]]:
        """What the last `sync` kept: `files` (path -> hash of its bytes), the caller's `inputs` and `plan`;
        empty when there is none, it can't be read, or the folder was removed or emptied since (`_emptied`).
        Pickled (the data root's own state, never in git: 100,000 hashes load in 30 ms, JSON's 300)."""
        if self._emptied():
            return {}
        data = self.read_cache(TREE_CACHE)
        try:
            found = pickle.loads(data) if data is not None else {}
        except Exception:  # whatever an unreadable cache raises, it is not used
            return {}
        if not isinstance(found, dict):
            return {}
        return {name: value for name, value in found.items() if isinstance(value, dict)}

    def sync(
        self, want: Wanted, *, trusted: bool = True, last: Mapping[str, Mapping[str, Any]] | None = None
    ) -> TreeSync:
        """Make the folder hold `want.files` and `want.present`: write only the files whose bytes differ, each
        atomically; remove the files of the last sync no longer wanted, except those `want.protect` names. A
        present file that has gone is named in `missing`, for the caller to make again.

        The tree's cache keeps each file's hash (and the caller's `inputs`), so that an unchanged file is
        known by its hash without reading it; a folder without one is walked once and its files compared byte
        for byte. Not `trusted`: the caller knows the last sync may not have finished (its cache then does not
        say what the folder holds), and the folder is walked too. `last`: the cache as the caller read it
        already (`last()`, read here when not given). Durable when it returns: a few files written are each
        synced, with their folders, then the cache; many (a fsync a file would take minutes for a large site)
        by one sync of the system at the end, which also waits for every other program's unwritten data (a
        rebuild after another large build paid most of a second for it)."""
        folder = self.folder
        folder.mkdir(parents=True, exist_ok=True)
        (folder / OLD_TREE_CACHE).unlink(missing_ok=True)
        cache = last if last is not None else self.last()
        known: Mapping[str, bytes] | None = cache.get("files") if trusted else None
        walked = known is None
        if known is None:  # no cache: what is there, by its bytes (as `look` found it, when it looked)
            known = {}
            on_disk = self._walk() if self._found is None else self._found - {OLD_TREE_CACHE}
        else:
            on_disk = set(known)
        self._found = None
        report = TreeSync()
        hashes: dict[str, bytes] = {}
        there = _present_files(str(folder), want.present)
        for rel in want.present:
            if rel not in known:  # a present file is one the last sync wrote: its path was checked then
                check_rel(folder, rel)
            if rel in known and there(rel):
                hashes[rel] = known[rel]
                report.unchanged.append(rel)
            else:
                report.missing.append(rel)
        files = want.files
        for rel, data in sorted(files.items()):
            hashes[rel] = tree_hash(data)
            if known.get(rel) == hashes[rel] and (folder / rel).is_file():
                report.unchanged.append(rel)
                continue
            report.written.append(rel)

        # Few files written here, each synced; else (or when another process wrote some) one sync at the end.
        each = len(report.written) + len(want.later) <= SYNC_EACH and not want.aside

        def later(rel: str) -> tuple[bytes, bool]:  # its bytes when they come, written unless known
            return write_unless_known(folder, rel, want.later[rel](), known, each)

        def write(rel: str) -> bool:  # a file not there when the folder was walked is not read first
            return _write_if_changed(folder, rel, files[rel], rel in known or (walked and rel not in on_disk), each)

        # Written here, one after another, but for a few files each synced (then a sync's latency bounds
        # them: a few at once). Threads writing thousands of files hand Python's lock to each other at each
        # system call: 5,918 files took 0.70 s of eight threads and 0.17 s of one, on tmpfs and on this disk.
        with ThreadPoolExecutor(max_workers=8 if each else 1) as pool:
            coming = {rel: pool.submit(later, rel) for rel in sorted(want.later)}
            changed = list(pool.map(write, report.written)) if each else [write(rel) for rel in report.written]
            wrote_later = {rel: future.result() for rel, future in coming.items()}
        report.unchanged += [rel for rel, wrote in zip(report.written, changed, strict=True) if not wrote]
        report.written = [rel for rel, wrote in zip(report.written, changed, strict=True) if wrote]
        for rel, (digest, wrote) in [*wrote_later.items(), *want.aside.items()]:
            check_rel(folder, rel)
            hashes[rel] = digest
            (report.written if wrote else report.unchanged).append(rel)
        report.written.sort()
        # What the folder held and is no longer wanted; not a file found missing (gone already, made again
        # by the caller: neither removed nor reported so).
        for rel in sorted(on_disk - set(hashes) - set(report.missing) - {TREE_CACHE}):
            # A protected file is kept, but not a write's temporary file a killed build left among them.
            if any(fnmatch.fnmatchcase(rel, glob) for glob in want.protect) and not is_temporary(rel):
                if rel in known:
                    hashes[rel] = known[rel]  # kept, and still known
                continue
            inside(folder, rel).unlink(missing_ok=True)
            report.removed.append(rel)
        _remove_emptied(folder, report.removed)
        kept = {"files": hashes, "inputs": dict(want.inputs), "plan": dict(want.plan)}  # pickled: no order
        report.hashes = hashes
        if each:  # the files' bytes are synced: their folders' entries (a new folder's in its own), then the
            # cache that speaks of them
            for parent in sorted({up for rel in (*report.written, *report.removed) for up in _folders(rel)}):
                with suppress(FileNotFoundError, NotADirectoryError):  # a removed file's folder, gone too
                    fsync_dir(folder / parent)
            self.write_cache(TREE_CACHE, pickle.dumps(kept, protocol=pickle.HIGHEST_PROTOCOL), durable=True)
        else:
            self.write_cache(TREE_CACHE, pickle.dumps(kept, protocol=pickle.HIGHEST_PROTOCOL))
            os.sync()
        return report


def _present_files(base: str, present: Collection[str]) -> Callable[[str], bool]:
    """Whether each of `present` is a file under `base`: a folder holding many of them listed once (an
    API folder of 10,000 cases' files is one listing, not 10,000 looks), any other file looked at."""
    by_folder: dict[str, int] = {}
    for rel in present:
        folder = rel.rpartition("/")[0]
        by_folder[folder] = by_folder.get(folder, 0) + 1
    listed: dict[str, set[str]] = {}
    for folder, count in by_folder.items():
        if count >= 16:
            try:
                with os.scandir(f"{base}/{folder}" if folder else base) as entries:
                    listed[folder] = {entry.name for entry in entries if entry.is_file()}
            except (FileNotFoundError, NotADirectoryError):
                listed[folder] = set()

    def there(rel: str) -> bool:
        folder, _, name = rel.rpartition("/")
        return name in listed[folder] if folder in listed else os.path.isfile(f"{base}/{rel}")

    return there


def _remove_emptied(folder: Path, removed: Iterable[str]) -> None:
    """The folders the removed files left empty, removed too, deepest first (a term's page gone, files
    that moved out of the site): a static server would list an empty folder where the site has nothing."""
    emptied = {up for rel in removed for up in _folders(rel) if up}
    for parent in sorted(emptied, key=lambda up: up.count("/"), reverse=True):
        with suppress(OSError):  # not empty, or gone already
            (folder / parent).rmdir()


def _folders(rel: str) -> list[str]:
    """The folders holding a tree's file, from its own up to the tree's ("")."""
    parts = rel.split("/")[:-1]
    return ["/".join(parts[:n]) for n in range(len(parts), -1, -1)]


def write_unless_known(
    folder: Path,
    rel: str,
    data: bytes,
    known: Mapping[str, bytes],
    durable: bool,
    found: Collection[str] | None = None,
) -> tuple[bytes, bool]:
    """One file of the tree, as a sync writes it: not at all when the tree's cache (`known`) holds its hash and
    the file is there, else `_write_if_changed` (not read first when it is not among the files `found` in
    the folder when it was walked, `SiteTree.look`); its hash, and whether it was written."""
    digest = tree_hash(data)
    if known.get(rel) == digest and (folder / rel).is_file():
        return digest, False
    unread = rel in known or (found is not None and rel not in found)
    return digest, _write_if_changed(folder, rel, data, unread, durable)


def _write_if_changed(folder: Path, rel: str, data: bytes, known: bool, durable: bool) -> bool:
    """Write one file of the tree unless it holds `data` already; True when written. `known`: written
    without reading it (the tree's cache knows it with other bytes, or it was not there when the folder
    was walked). `durable`: its bytes synced before it replaces the old (its folder is the caller's to sync)."""
    check_rel(folder, rel)
    path = f"{folder}/{rel}"  # `inside`, as text: 50,000 files a large site
    if not known:
        try:
            with open(path, "rb") as file:
                if file.read() == data:
                    return False
        except (FileNotFoundError, NotADirectoryError):
            pass
    _write_tree_file(path, data, durable)
    return True


# A tree's temporary file: ".{name}.{process}.{thread}.tmp" beside the file it becomes (`_write_tree_file`).
_TEMPORARY = re.compile(r"\.[^/]+\.(\d+)\.\d+\.tmp")


def is_temporary(rel: str, pid: int | None = None) -> bool:
    """Whether a file of the tree is a write's temporary file (of the process `pid`, when given): what a
    build killed while writing leaves; no site file's name begins with a dot."""
    found = _TEMPORARY.fullmatch(rel.rpartition("/")[2])
    return found is not None and (pid is None or found.group(1) == str(pid))


def _write_tree_file(path: str, data: bytes, durable: bool = False) -> None:
    """`write_atomic(path, data, durable=False)` for a tree's file, in fewer system calls (a site of
    10,000 cases is 50,000 files): the temporary file is named by the process and thread (each file is
    written by one of them), made with the mode any new file gets, and the folder made on the first miss.
    Paths as text, not `Path`: their objects cost as much as the system calls here."""
    parent, _, name = path.rpartition("/")
    tmp = f"{parent}/.{name}.{os.getpid()}.{threading.get_ident()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
    try:
        fd = os.open(tmp, flags, 0o666)
    except FileNotFoundError:
        os.makedirs(parent, exist_ok=True)
        fd = os.open(tmp, flags, 0o666)
    try:
        try:
            view = memoryview(data)  # os.write, not a file object: no buffer, no look at whether it is a tty
            while view:
                view = view[os.write(fd, view) :]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
