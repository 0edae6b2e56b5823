"""The record store: the only module that reads or writes `sources/`, `drafts/` and `cases/`.

Layout under the data root:

    sources/*.yaml                the crawl registry
    sources/feeds.yaml            the feeds `discover` reads (pipeline.discover)
    sources/candidates.yaml       what the feeds proposed, waiting for a person (pipeline.candidates)
    drafts/<draft-id>.json        drafts awaiting review
    cases/<case-id>.json          published cases
    .incidentlib/locks/           lock files (not data; ignored by git)
    .incidentlib/links.json       link health, by source URL (pipeline.links)
    .incidentlib/runs.json        the last run of each flow (pipeline.status)
    .incidentlib/feeds.json       each feed's validators and its entries' fingerprints (pipeline.discover)
    .incidentlib/feed-texts/      the text a feed carries for each open candidate (a postmortem)
    .incidentlib/prefect/         the local Prefect server `serve` starts (pipeline.server)
    .incidentlib/web-sessions-revoked.json  the review page's sessions signed out (pipeline.web.security)
    .incidentlib/tmp/             temporary folders of running processes, each named by its process id
    .incidentlib/finder.json      the finder model `incidentlib learn` trained on the library's reviews
    site/                         the reader's site built from cases/ (pipeline.site.build; ignored by git)

Guarantees:
- Every write is atomic: the bytes go to a temporary file in the same folder, are
  fsynced, and replace the record by rename, and the folder is fsynced. A crash at any
  point leaves the old record or the new one, never a torn one.
- Read-modify-write (`update_draft`) holds a per-record lock across processes, so two
  writers never lose an update; `write_draft(..., expected_version=...)` is the
  compare-and-swap form for a caller that read, thought for a while (an editor), and
  must not overwrite someone else's change.
- Case ids are allocated under one lock for the cases folder, so processes promoting at
  once get distinct, consecutive ids.
- Ids are checked before they become paths, so none can leave its folder.

A data root is made by `init_data_root` (`incidentlib init`); a folder with none of
`sources/`, `drafts/` and `cases/` is not one (`data_root_problem`), so that a command
run in the wrong folder says so instead of reporting an empty library.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import pickle
import re
import shutil
import socket
import tempfile
import threading
from collections.abc import Callable, Collection, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

import filelock
import yaml
from pydantic import BaseModel, TypeAdapter, ValidationError

from pipeline.errors import (
    ConflictError,
    DuplicateSource,
    Fault,
    InvalidId,
    InvalidRecord,
    LockBusy,
    RecordNotFound,
    StoreError,
)
from pipeline.ids import canonical_url, case_id, case_number, check_case_id, check_draft_id, same_page_key
from pipeline.models import (
    CANDIDATE_ID_PATTERN,
    Candidate,
    Case,
    Draft,
    FeedState,
    LinkState,
    RunRecord,
    SourceEntry,
)
from pipeline.records import decode_utf8, dump_json, dump_record, faults_from, file_name_fault, load_json, load_record
from pipeline.registry import RegisteredFeed, RegisteredSource, parse_entries, parse_feeds, parse_registry
from pipeline.settings import SETTINGS_FILE, Settings, settings_file_text

__all__ = [
    "MODELS",
    "InitReport",
    "RecordKind",
    "Store",
    "data_root_problem",
    "init_data_root",
    "write_atomic",
]

RecordKind = Literal["draft", "case"]
MODELS: dict[RecordKind, type[Draft] | type[Case]] = {"draft": Draft, "case": Case}
M = TypeVar("M", bound=BaseModel)

STATE_DIR = ".incidentlib"
SITE_DIR = "site"  # the reader's site, built from cases/ (`incidentlib site`); ignored by git
TREE_CACHE = "tree.pickle"  # a site's files' and inputs' hashes (in Store.site_cache_dir; pipeline.site.build)
OLD_TREE_CACHE = ".build-cache.json"  # where earlier builds kept it: in the site folder, published with it
SIMILAR_CACHE = "similar.pickle"  # the similarity index (Store.similar_cache_path; pipeline.similar.library)
# Temporary folders of running processes (Store.scratch), named `{prefix}-{pid}-{host}-{random}`: `host` a hash
# of the machine's name, for a data root shared by machines (workers elsewhere), whose processes are not ours.
SCRATCH_DIR = "tmp"
_SCRATCH_NAME = re.compile(r"[a-z]+-(\d+)-([0-9a-f]{8})-.+")
LOCK_TIMEOUT_S = 120.0
# What to do about a state file of .incidentlib/ that cannot be read: it is the pipeline's memory, not data.
_RUNS: TypeAdapter[dict[str, RunRecord]] = TypeAdapter(dict[str, RunRecord])
_STATE_HINT = "a state file of incidentlib's: restore it, or move it away and the next run starts it afresh"
DATA_FOLDERS = ("sources", "drafts", "cases")
# In sources/ beside the registry, and not part of it.
FEEDS_FILE = "feeds.yaml"
CANDIDATES_FILE = "candidates.yaml"
_CANDIDATES_HEADER = (
    "# Pages the feeds of feeds.yaml proposed, written by `incidentlib discover`.\n"
    "# Accept or dismiss them with `incidentlib candidates accept|dismiss ID`; a dismissed one stays\n"
    "# here so that it is never proposed again.\n"
)
# The C emitter and parser when PyYAML has them: a candidates file of 20,000 entries in a second, not ten.
_YAML_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


# A new record gets the mode any new file would; a rewritten one keeps its own.
_NEW_FILE_MODE = 0o666 & ~_umask()


def write_atomic(path: Path, data: bytes, *, mode: int | None = None, durable: bool = True) -> None:
    """Replace `path` with `data` so that readers and crashes see the old bytes or the new, never a mix.

    The file keeps its mode (a new one gets what any new file would), unless `mode` is given: a
    file of secrets passes 0o600 and has it from its first byte, never readable by others meanwhile.
    `durable=False` skips the fsyncs, for a caller writing thousands of files that syncs once at the end
    (`sync_tree`): readers still see whole files only.
    """
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o777
        except FileNotFoundError:
            mode = _NEW_FILE_MODE
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, mode)  # mkstemp makes it 0600
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if durable:
        _fsync_dir(path.parent)


def _inside(folder: Path, rel: str) -> Path:
    """`folder / rel` for a site-relative POSIX path that stays inside `folder` (no leading slash, no `..`,
    `.` or empty part, no backslash); StoreError for any other. Read off the text: no file system call."""
    return folder.joinpath(*_check_rel(folder, rel))


def _check_rel(folder: Path, rel: str) -> list[str]:
    parts = rel.split("/")
    if not rel or "\\" in rel or any(part in ("", ".", "..") for part in parts):
        raise StoreError(f"{rel!r}: not a path inside {folder}", path=rel)
    return parts


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


def _write_if_changed(folder: Path, rel: str, data: bytes, known: bool) -> bool:
    """Write one file of a tree (`Store.sync_tree`) unless it holds `data` already; True when written. A
    file the tree's cache knows with other bytes is written without reading it."""
    path = _inside(folder, rel)
    if not known:
        try:
            if path.read_bytes() == data:
                return False
        except (FileNotFoundError, NotADirectoryError):
            pass
    _write_tree_file(path, data)
    return True


def _write_tree_file(path: Path, data: bytes) -> None:
    """`write_atomic(path, data, durable=False)` for a tree's file, in fewer system calls (a site of
    10,000 cases is 50,000 files): the temporary file is named by the process and thread (each file is
    written by one of them), made with the mode any new file gets, and the folder made on the first miss."""
    tmp = path.parent / f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
    try:
        fd = os.open(tmp, flags, 0o666)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, flags, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@dataclass
class TreeSync:
    """What `Store.sync_tree` did, by site-relative path."""

    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # given as present, but gone: to be made again
    hashes: dict[str, bytes] = field(default_factory=dict)  # each file of the tree now, by its `tree_hash`


def _version(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tree_hash(data: bytes) -> bytes:
    """A tree's file as `sync_tree`'s cache knows it: SHA-256, its first 16 bytes (100,000 of them pickle
    and load in a quarter of the time their hex does; a collision is as unlikely as for a UUID)."""
    return hashlib.sha256(data).digest()[:16]


class Store:
    """Records under one data root. Cheap to make; holds no open files between calls."""

    def __init__(
        self,
        root: Path | str,
        *,
        case_id_prefix: str = "IL",
        case_id_digits: int = 4,
        case_id_start: int = 1,
    ) -> None:
        self.root = Path(root).resolve()
        self.case_id_prefix = case_id_prefix
        self.case_id_digits = case_id_digits
        self.case_id_start = case_id_start
        self.sources_dir = self.root / "sources"
        self.drafts_dir = self.root / "drafts"
        self.cases_dir = self.root / "cases"
        self.state_dir = self.root / STATE_DIR

    @classmethod
    def from_settings(cls, settings: Settings) -> Store:
        return cls(
            settings.root,
            case_id_prefix=settings.case_id_prefix,
            case_id_digits=settings.case_id_digits,
            case_id_start=settings.case_id_start,
        )

    # ------------------------------------------------------------ paths and locks

    def _folder(self, kind: RecordKind) -> Path:
        return self.drafts_dir if kind == "draft" else self.cases_dir

    def path(self, kind: RecordKind, record_id: str) -> Path:
        """The file of a record; raises InvalidId for an id that is malformed or would leave its folder."""
        (check_draft_id if kind == "draft" else check_case_id)(record_id)
        folder = self._folder(kind)
        path = folder / f"{record_id}.json"
        # The patterns already forbid separators and dots; this is the belt to those braces.
        if path.resolve().parent != folder.resolve():
            raise InvalidId(f"{kind} id {record_id!r} would leave {folder}", value=record_id)
        return path

    @contextmanager
    def lock(self, name: str, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
        """An exclusive lock shared by every process using this data root (waited for up to `timeout` s)."""
        folder = self.state_dir / "locks"
        folder.mkdir(parents=True, exist_ok=True)
        lock = filelock.FileLock(folder / f"{name}.lock", timeout=timeout)
        try:
            lock.acquire()
        except filelock.Timeout:
            where = self.label(folder / f"{name}.lock")
            waited = (
                "is held by another process" if timeout <= 0 else f"still held by another process after {timeout:.0f} s"
            )
            raise LockBusy(f"{where}: {waited}", path=where) from None
        try:
            yield
        finally:
            lock.release()

    # ------------------------------------------------------------ scratch folders

    @property
    def scratch_root(self) -> Path:
        return self.state_dir / SCRATCH_DIR

    @contextmanager
    def scratch(self, prefix: str) -> Iterator[Path]:
        """A temporary folder of this process's in the data root's state, removed when it is left. Its name
        holds the process's id, so that a process killed before removing it (SIGKILL, a crash, the machine
        stopping) leaves nothing behind for long: `remove_stale_scratch`, at the start of the next one."""
        self.remove_stale_scratch()
        self.scratch_root.mkdir(parents=True, exist_ok=True)
        folder = Path(tempfile.mkdtemp(prefix=f"{prefix}-{os.getpid()}-{_host()}-", dir=self.scratch_root))
        try:
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def remove_stale_scratch(self) -> list[str]:
        """Remove the scratch folders whose process has ended (`scratch`); their labels. A folder whose name
        holds no process id, or another machine's, is left alone: it is none of ours to judge."""
        removed: list[str] = []
        try:
            found = list(self.scratch_root.iterdir())
        except FileNotFoundError:
            return removed
        for folder in found:
            owner = _SCRATCH_NAME.fullmatch(folder.name)
            if owner and owner.group(2) == _host() and folder.is_dir() and not process_alive(int(owner.group(1))):
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(self.label(folder))
        return removed

    # ------------------------------------------------------------ reading

    def label(self, path: Path) -> str:
        """How a path is named in messages: relative to the root when it lies under it."""
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)

    def _read(self, kind: RecordKind, record_id: str) -> tuple[bytes, Path]:
        path = self.path(kind, record_id)
        try:
            return path.read_bytes(), path
        except FileNotFoundError:
            raise RecordNotFound(kind, record_id, self.label(path)) from None

    def _load(self, model: type[M], kind: RecordKind, record_id: str) -> tuple[M, str]:
        data, path = self._read(kind, record_id)
        return self._parse(model, data, path), _version(data)

    def _parse(self, model: type[M], data: bytes, path: Path) -> M:
        label = self.label(path)
        record = load_record(model, data, label)
        fault = file_name_fault(record, path, label)
        if fault:
            raise InvalidRecord([fault])
        return record

    def read_case(self, record_id: str) -> Case:
        return self._load(Case, "case", record_id)[0]

    def read_draft(self, record_id: str) -> Draft:
        return self._load(Draft, "draft", record_id)[0]

    def read_draft_versioned(self, record_id: str) -> tuple[Draft, str]:
        """The draft and a version token to hand back to `write_draft(expected_version=...)`."""
        return self._load(Draft, "draft", record_id)

    def exists(self, kind: RecordKind, record_id: str) -> bool:
        return self.path(kind, record_id).is_file()

    def files(self, kind: RecordKind) -> list[Path]:
        """Record files of one kind, sorted; temporary and hidden files are not records."""
        folder = self._folder(kind)
        if not folder.is_dir():
            return []
        return sorted(p for p in folder.glob("*.json") if not p.name.startswith(".") and p.is_file())

    def record_files(self) -> Iterator[tuple[RecordKind, Path]]:
        """Every draft file, then every case file."""
        for kind in MODELS:
            for path in self.files(kind):
                yield kind, path

    def ids(self, kind: RecordKind) -> list[str]:
        return [p.stem for p in self.files(kind)]

    def drafts(self) -> Iterator[Draft]:
        for record_id in self.ids("draft"):
            yield self.read_draft(record_id)

    def cases(self) -> Iterator[Case]:
        for record_id in self.ids("case"):
            yield self.read_case(record_id)

    # A case's drafts (pipeline.merge): looked for by a reviewer's command among thousands of drafts, so
    # only the files that name the case are parsed.
    def drafts_of_case(self, case_id: str) -> list[Draft]:
        """The drafts whose `case_id` is `case_id`; a file that cannot be read is `validate`'s to name."""
        check_case_id(case_id)
        named = json.dumps(case_id).encode()
        found = []
        for path in self.files("draft"):
            try:
                data = path.read_bytes()
                draft = self._parse(Draft, data, path) if named in data else None
            except (FileNotFoundError, InvalidRecord):  # removed since listed, or broken
                continue
            if draft is not None and draft.case_id == case_id:
                found.append(draft)
        return found

    def source_files(self) -> list[Path]:
        if not self.sources_dir.is_dir():
            return []
        return sorted(
            p
            for p in self.sources_dir.iterdir()
            if p.suffix in (".yaml", ".yml")
            and not p.name.startswith(".")
            and p.name not in (FEEDS_FILE, CANDIDATES_FILE)
        )

    def read_sources(self) -> tuple[list[RegisteredSource], list[Fault]]:
        """Every registry entry with its file and line, and the faults of the entries that failed."""
        entries: list[RegisteredSource] = []
        faults: list[Fault] = []
        for path in self.source_files():
            try:
                text = self._yaml_text(path)
            except InvalidRecord as exc:
                faults.extend(exc.faults)
                continue
            got, bad = parse_registry(text, self.label(path))
            entries.extend(got)
            faults.extend(bad)
        return entries, faults

    def _yaml_text(self, path: Path) -> str:
        """A YAML file of sources/ as text; bytes that are not UTF-8 raise InvalidRecord naming the file."""
        return decode_utf8(path.read_bytes(), self.label(path))

    def add_source(self, entry: SourceEntry, file_name: str = "added.yaml") -> Path:
        """Append one entry to a registry file, refusing a URL already registered anywhere.

        The entry is appended as text, so the file's comments and layout stay as they were.
        """
        with self.lock("sources"):
            return self.append_sources([entry], file_name)

    def append_sources(self, entries: list[SourceEntry], file_name: str = "added.yaml") -> Path:
        """Append entries to a registry file in one write, refusing any URL already registered.
        The caller holds the `sources` lock (`add_source` takes it)."""
        if "/" in file_name or not file_name.endswith((".yaml", ".yml")) or file_name.startswith("."):
            raise InvalidId(
                f"registry file {file_name!r}: expected a name like added.yaml inside sources/", value=file_name
            )
        if file_name in (FEEDS_FILE, CANDIDATES_FILE):
            raise InvalidId(f"registry file {file_name!r}: that name is kept for discover", value=file_name)
        path = self.sources_dir / file_name
        registered, faults = self.read_sources()
        # A fault of a whole file or entry (field "-": not UTF-8, not YAML, a key twice, not an entry) hides
        # the URLs it holds from the check below: adding then could register a source twice.
        _refuse_unreadable(faults, "nothing added: fix the registry first")
        where = {canonical_url(source.entry.url): source.where for source in registered}
        for index, entry in enumerate(entries):
            key = canonical_url(entry.url)
            if key in where:
                raise DuplicateSource(entry.url, where[key])
            where[key] = f"{self.label(path)} (entry {index + 1} being added)"
        if not entries:
            return path
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        if old and not old.endswith("\n"):
            old += "\n"
        data = [entry.model_dump(mode="json", exclude_defaults=True) for entry in entries]
        text = "\n".join(
            yaml.dump([d], Dumper=_YAML_DUMPER, sort_keys=False, allow_unicode=True, width=120) for d in data
        )
        self.sources_dir.mkdir(parents=True, exist_ok=True)
        write_atomic(path, (old + ("\n" if old else "") + text).encode("utf-8"))
        return path

    # ------------------------------------------------------------ feeds and candidates (pipeline.discover)

    @property
    def feeds_path(self) -> Path:
        return self.sources_dir / FEEDS_FILE

    @property
    def candidates_path(self) -> Path:
        return self.sources_dir / CANDIDATES_FILE

    def read_feeds(self) -> tuple[list[RegisteredFeed], list[Fault]]:
        """The feeds of sources/feeds.yaml with their lines, and the faults of the entries that failed."""
        try:
            text = self._yaml_text(self.feeds_path)
        except FileNotFoundError:
            return [], []
        except InvalidRecord as exc:
            return [], exc.faults
        return parse_feeds(text, self.label(self.feeds_path))

    def read_candidates(self, *, strict: bool = False) -> tuple[list[Candidate], list[Fault]]:
        """The candidates of sources/candidates.yaml (open and dismissed), and the faults of bad entries.

        `strict`, for a caller that writes the list back or shows it: a file or entry that cannot be read
        (field "-": not UTF-8, not YAML, a key twice) raises StoreError, for writing back what was read
        would lose what was not."""
        candidates, faults = self._read_candidates()
        if strict:
            _refuse_unreadable(faults, "fix the file first")
        return candidates, faults

    def _read_candidates(self) -> tuple[list[Candidate], list[Fault]]:
        try:
            text = self._yaml_text(self.candidates_path)
        except FileNotFoundError:
            return [], []
        except InvalidRecord as exc:
            return [], exc.faults
        label = self.label(self.candidates_path)
        entries, faults = parse_entries(text, label, Candidate)
        seen: dict[str, int] = {}
        candidates = []
        for candidate, line in entries:
            if candidate.id in seen:
                faults.append(Fault(f"{label}:{line}", "id", f"{candidate.id} is at line {seen[candidate.id]} too"))
                continue
            seen[candidate.id] = line
            candidates.append(candidate)
        return candidates, faults

    def write_candidates(self, candidates: list[Candidate]) -> bool:
        """Replace the candidates file (the caller holds the `sources` lock); True when it changed.
        Open ones first, in the order given (discover puts a run's new ones on top); then the
        dismissed, kept so that they are never proposed again."""
        ordered = sorted(candidates, key=lambda c: c.state != "open")
        data = [c.model_dump(mode="json", exclude_defaults=True) for c in ordered]
        text = _CANDIDATES_HEADER + (
            yaml.dump(data, Dumper=_YAML_DUMPER, sort_keys=False, allow_unicode=True, width=120) if data else "[]\n"
        )
        encoded = text.encode("utf-8")
        try:
            if self.candidates_path.read_bytes() == encoded:
                return False
        except FileNotFoundError:
            if not candidates:
                return False
        self.sources_dir.mkdir(parents=True, exist_ok=True)
        write_atomic(self.candidates_path, encoded)
        return True

    @property
    def feed_states_path(self) -> Path:
        return self.state_dir / "feeds.json"

    def read_feed_states(self) -> dict[str, FeedState]:
        """What discover knows of each feed, by feed URL; empty before the first run."""
        return self._read_keyed(self.feed_states_path, FeedState)

    def update_feed_states(self, states: dict[str, FeedState], *, forget: tuple[str, ...] = ()) -> None:
        """Merge feed states into the file (`forget`: feeds to read whole next time), atomically, under its lock."""
        self._merge_keyed("feeds", self.feed_states_path, FeedState, states, forget=forget, exclude_defaults=True)

    def _read_keyed(self, path: Path, model: type[M]) -> dict[str, M]:
        """A state file of records by URL; empty before it is first written."""
        try:
            data = self._state_json(path)
        except FileNotFoundError:
            return {}
        label = self.label(path)
        if not isinstance(data, dict):
            raise StoreError(f"{label}: -: expected an object of records by URL; {_STATE_HINT}", path=label)
        try:
            return {url: model.model_validate(record) for url, record in data.items()}
        except ValidationError as exc:
            raise StoreError(f"{faults_from(exc, label)[0]}; {_STATE_HINT}", path=label) from None

    def _state_json(self, path: Path) -> Any:
        """A JSON state file of `.incidentlib/`; one that cannot be read is a StoreError naming it."""
        data = path.read_bytes()
        try:
            return load_json(data, self.label(path))
        except InvalidRecord as exc:
            raise StoreError(f"{exc}; {_STATE_HINT}", path=self.label(path)) from None

    def _merge_keyed(
        self,
        lock: str,
        path: Path,
        model: type[M],
        changes: dict[str, M],
        *,
        forget: tuple[str, ...] = (),
        exclude_defaults: bool = False,
    ) -> None:
        """Merge records into a state file by URL (and drop `forget`), atomically and under its lock; the
        records already there are written again in today's form."""
        with self.lock(lock):
            merged = {**self._read_keyed(path, model), **changes}
            for url in forget:
                merged.pop(url, None)
            data = {
                url: merged[url].model_dump(mode="json", exclude_defaults=exclude_defaults) for url in sorted(merged)
            }
            self.state_dir.mkdir(parents=True, exist_ok=True)
            write_atomic(path, dump_json(data))

    @property
    def finder_model_path(self) -> Path:
        """Where the library's own finder model is kept (`incidentlib learn`)."""
        return self.state_dir / "finder.json"

    def finder_model(self) -> str | None:
        """The text of the library's own finder model; None before `incidentlib learn` made one."""
        try:
            return self.finder_model_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            label = self.label(self.finder_model_path)
            raise StoreError(f"{label}: cannot read the finder model: {exc}; {_STATE_HINT}", path=label) from None

    def keep_finder_model(self, text: str) -> None:
        """Replace the library's finder model, atomically: a crash leaves the old one or the new one."""
        with self.lock("finder"):
            self.state_dir.mkdir(parents=True, exist_ok=True)
            write_atomic(self.finder_model_path, text.encode("utf-8"))

    def _feed_text_path(self, candidate_id: str) -> Path:
        if not re.fullmatch(CANDIDATE_ID_PATTERN, candidate_id):
            raise InvalidId(f"not a candidate id: {candidate_id!r}", value=candidate_id)
        return self.state_dir / "feed-texts" / f"{candidate_id}.md"

    def keep_feed_text(self, candidate_id: str, text: str) -> None:
        path = self._feed_text_path(candidate_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8")
        if not path.exists() or path.read_bytes() != data:
            write_atomic(path, data)

    def feed_text(self, candidate_id: str) -> str | None:
        try:
            return self._feed_text_path(candidate_id).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    def drop_feed_text(self, candidate_id: str) -> None:
        self._feed_text_path(candidate_id).unlink(missing_ok=True)

    def registered_by_page(self) -> dict[str, RegisteredSource]:
        """The registry's sources by `same_page_key`: what a feed may not propose again."""
        registered, _ = self.read_sources()
        found: dict[str, RegisteredSource] = {}
        for source in registered:  # a registered URL is a valid one: its port parses
            found.setdefault(same_page_key(source.entry.url), source)
        return found

    # ------------------------------------------------------------ link health (pipeline.links)

    @property
    def links_path(self) -> Path:
        return self.state_dir / "links.json"

    def read_links(self) -> dict[str, LinkState]:
        """What the last refresh found, by source URL; empty before the first refresh."""
        return self._read_keyed(self.links_path, LinkState)

    def update_links(self, states: dict[str, LinkState]) -> None:
        """Merge new link states into the file, atomically and under its lock."""
        self._merge_keyed("links", self.links_path, LinkState, states)

    # ------------------------------------------------------------ flow runs (pipeline.status)

    @property
    def runs_path(self) -> Path:
        return self.state_dir / "runs.json"

    def read_runs(self) -> dict[str, RunRecord]:
        """The last run of each flow by name: when it started and ended, how, and its counts."""
        try:
            runs = self._state_json(self.runs_path)
        except FileNotFoundError:
            return {}
        label = self.label(self.runs_path)
        if not isinstance(runs, dict):
            raise StoreError(f"{label}: -: expected an object of runs by flow; {_STATE_HINT}", path=label)
        try:
            return _RUNS.validate_python(runs)  # a fault names the flow and the field: crawl.state
        except ValidationError as exc:
            raise StoreError(f"{faults_from(exc, label)[0]}; {_STATE_HINT}", path=label) from None

    def check_state(self, *names: Literal["runs", "links", "feeds"]) -> None:
        """Read the JSON state files of `.incidentlib/` named (`runs.json`, ...); raise StoreError naming the
        first that cannot be read. A command checks those its flow reads before it starts, so that such a
        file is one line, not a failed run's traceback."""
        readers = {"runs": self.read_runs, "links": self.read_links, "feeds": self.read_feed_states}
        for name in names:
            readers[name]()

    def record_run(self, flow: str, run: RunRecord) -> None:
        """Keep `run` as the last run of `flow`, atomically and under the file's lock."""
        with self.lock("runs"):
            runs = self.read_runs()
            runs[flow] = run
            self.state_dir.mkdir(parents=True, exist_ok=True)
            data = {name: record.model_dump(mode="json") for name, record in sorted(runs.items())}
            write_atomic(self.runs_path, dump_json(data))

    # ------------------------------------------------------------ similarity suggestions (pipeline.similar.library)

    def record_stats(self, kind: RecordKind) -> dict[str, tuple[int, int, int]]:
        """Each record file's (inode, size, modification time in ns) by id, from one listing of its folder."""
        stats: dict[str, tuple[int, int, int]] = {}
        folder = self._folder(kind)
        if not folder.is_dir():
            return stats
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.endswith(".json") and not entry.name.startswith(".") and entry.is_file():
                    info = entry.stat()
                    stats[entry.name.removesuffix(".json")] = (info.st_ino, info.st_size, info.st_mtime_ns)
        return dict(sorted(stats.items()))

    @property
    def similar_cache_path(self) -> Path:
        """The similarity index and what it was made of, kept between runs (the data root's own state)."""
        return self.state_dir / SIMILAR_CACHE

    def read_similar_cache(self) -> bytes | None:
        try:
            return self.similar_cache_path.read_bytes()
        except FileNotFoundError:
            return None

    def write_similar_cache(self, data: bytes) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        write_atomic(self.similar_cache_path, data, durable=False)

    def similar_cache_stat(self) -> tuple[int, int, int] | None:
        """The cache file's inode, size and modification time (a new file each write): None when there is none."""
        try:
            found = self.similar_cache_path.stat()
        except FileNotFoundError:
            return None
        return found.st_ino, found.st_size, found.st_mtime_ns

    # ------------------------------------------------------------ the reader's site (pipeline.site.build)

    @property
    def site_dir(self) -> Path:
        return self.root / SITE_DIR

    def site_cache_dir(self, folder: Path) -> Path:
        """Where the builds of the site in `folder` keep what they know between builds (the cases' cards, each
        file's hash, the search's stems): under the data root's state, never in the published folder."""
        key = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:16]
        return self.state_dir / "site" / key

    def read_site_cache(self, folder: Path, name: str) -> bytes | None:
        try:
            return (self.site_cache_dir(folder) / name).read_bytes()
        except FileNotFoundError:
            return None

    def write_site_cache(self, folder: Path, name: str, data: bytes) -> None:
        where = self.site_cache_dir(folder)
        where.mkdir(parents=True, exist_ok=True)
        write_atomic(where / name, data, durable=False)

    def remove_site_cache(self, folder: Path, name: str) -> None:
        (self.site_cache_dir(folder) / name).unlink(missing_ok=True)

    def read_site_file(self, folder: Path, rel: str) -> bytes | None:
        """A file of the built site in `folder` (site-relative path), None when it is not there."""
        try:
            return _inside(folder.resolve(), rel).read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None

    def case_stats(self) -> dict[str, tuple[int, int, int]]:
        """Each case file's (inode, size, modification time in ns) by id, from one listing of cases/: what
        tells a build a file is as it was (a store's write replaces the file: a new inode)."""
        return self.record_stats("case")

    def read_case_file(self, record_id: str) -> tuple[Case, bytes]:
        """A case and its file's bytes."""
        data, path = self._read("case", record_id)
        return self._parse(Case, data, path), data

    def read_tree_cache(self, folder: Path) -> dict[str, dict[str, Any]]:
        """What `sync_tree` kept of the tree in `folder`: `files` (path -> hash of its bytes), the caller's
        `inputs` (path -> hash of what it was made of) and `plan` (what else the caller keeps of how it
        planned the files); empty when there is none or it can't be read. Pickled (the data root's own
        state, never in git: 100,000 hashes load in 30 ms, JSON's 300)."""
        data = self.read_site_cache(folder, TREE_CACHE)
        try:
            found = pickle.loads(data) if data is not None else {}
        except Exception:  # whatever an unreadable cache raises, it is not used
            return {}
        if not isinstance(found, dict):
            return {}
        return {name: value for name, value in found.items() if isinstance(value, dict)}

    def sync_tree(
        self,
        folder: Path,
        files: Mapping[str, bytes],
        *,
        present: Collection[str] = (),
        protect: tuple[str, ...] = (),
        inputs: Mapping[str, bytes] | None = None,
        plan: Mapping[str, Any] | None = None,
        trusted: bool = True,
        last: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> TreeSync:
        """Make the tree in `folder` hold `files` (site-relative POSIX path -> bytes) and `present` (files of
        the last sync the caller knows to be current): write only the files whose bytes differ, each
        atomically; remove the files of the last sync no longer wanted, except those matching a glob of
        `protect` (permalinks: never removed). A present file that has gone is named in `missing`, for
        the caller to make again.

        The tree's cache (in `site_cache_dir(folder)`, outside the folder) keeps each file's hash (and the
        caller's `inputs`), so that an unchanged file is known by its hash without reading it; a folder
        without one is walked once and its files compared byte for byte. One sync at the end makes it all
        durable (a fsync a file would take minutes for a large site)."""
        folder = folder.resolve()
        folder.mkdir(parents=True, exist_ok=True)
        (folder / OLD_TREE_CACHE).unlink(missing_ok=True)
        # Not `trusted`: the caller knows the last sync may not have finished (its cache then does not say
        # what the folder holds): the folder is walked and compared byte for byte.
        # `last`: the tree's cache as the caller read it already (read here when not given).
        cache = last if last is not None else self.read_tree_cache(folder)
        known: Mapping[str, bytes] | None = cache.get("files") if trusted else None
        if known is None:  # no cache: what is there, by its bytes
            known = {}
            on_disk = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
        else:
            on_disk = set(known)
        report = TreeSync()
        hashes: dict[str, bytes] = {}
        base = str(folder)
        there = _present_files(base, present)
        for rel in present:
            if rel not in known:  # a present file is one the last sync wrote: its path was checked then
                _check_rel(folder, rel)
            if rel in known and there(rel):
                hashes[rel] = known[rel]
                report.unchanged.append(rel)
            else:
                report.missing.append(rel)
        for rel, data in sorted(files.items()):
            hashes[rel] = tree_hash(data)
            if known.get(rel) == hashes[rel] and (folder / rel).is_file():
                report.unchanged.append(rel)
                continue
            report.written.append(rel)
        # The file system's latency, not the CPU, bounds writing thousands of small files: a few at once.
        with ThreadPoolExecutor(max_workers=8) as pool:
            changed = list(
                pool.map(lambda rel: _write_if_changed(folder, rel, files[rel], rel in known), report.written)
            )
        report.unchanged += [rel for rel, wrote in zip(report.written, changed, strict=True) if not wrote]
        report.written = [rel for rel, wrote in zip(report.written, changed, strict=True) if wrote]
        for rel in sorted(on_disk - set(hashes) - {TREE_CACHE}):
            if any(fnmatch.fnmatchcase(rel, glob) for glob in protect):
                if rel in known:
                    hashes[rel] = known[rel]  # kept, and still known
                continue
            _inside(folder, rel).unlink(missing_ok=True)
            report.removed.append(rel)
        cache = {"files": hashes, "inputs": dict(inputs or {}), "plan": dict(plan or {})}  # pickled: no order
        report.hashes = hashes
        self.write_site_cache(folder, TREE_CACHE, pickle.dumps(cache, protocol=pickle.HIGHEST_PROTOCOL))
        os.sync()
        return report

    # ------------------------------------------------------------ writing

    def _write(self, path: Path, record: BaseModel) -> bool:
        """Write if the bytes differ; True when the file changed. Callers hold the record's lock."""
        data = dump_record(record, self.label(path))
        try:
            if path.read_bytes() == data:
                return False
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, data)
        return True

    def replace_file(self, kind: RecordKind, path: Path, expected: bytes, data: bytes) -> bool:
        """Swap a record file's bytes `expected` for `data` under its lock (for `fmt`).

        False, and nothing written, when someone changed the file after `expected` was read.
        """
        with self.lock(f"{kind}-{path.stem}"):
            try:
                if path.read_bytes() != expected:
                    return False
            except FileNotFoundError:
                return False
            write_atomic(path, data)
            return True

    def write_draft(self, draft: Draft, *, expected_version: str | None = None) -> bool:
        """Write a draft; with `expected_version`, only if nobody changed it since it was read."""
        path = self.path("draft", draft.id)
        with self.lock(f"draft-{draft.id}"):
            if expected_version is not None:
                try:
                    current = _version(path.read_bytes())
                except FileNotFoundError:
                    current = None
                if current != expected_version:
                    label = self.label(path)
                    raise ConflictError(f"{label}: changed by someone else since it was read; re-read it", path=label)
            return self._write(path, draft)

    def update_draft(
        self,
        record_id: str,
        change: Callable[[Draft], Draft | None],
        *,
        create: Callable[[], Draft] | None = None,
    ) -> Draft:
        """Read, change and write one draft under its lock; no concurrent update is lost.

        `change` gets a copy and returns the new draft, or None to leave the record as it
        was (edits made to the copy in place are then dropped). With `create`, a missing
        draft starts as `create()` instead of raising RecordNotFound.
        """
        path = self.path("draft", record_id)
        with self.lock(f"draft-{record_id}"):
            try:
                draft = self._parse(Draft, path.read_bytes(), path)
            except FileNotFoundError:
                if create is None:
                    raise RecordNotFound("draft", record_id, self.label(path)) from None
                draft = create()
            changed = change(draft.model_copy(deep=True))
            if changed is not None:
                if changed.id != record_id:
                    raise InvalidId(f"a change may not rename draft {record_id!r} to {changed.id!r}", value=changed.id)
                self._write(path, changed)
                return changed
            return draft

    def write_case(self, case: Case) -> bool:
        """Write (or rewrite in place) a case whose id is already allocated."""
        path = self.path("case", case.id)
        with self.lock(f"case-{case.id}"):
            return self._write(path, case)

    def update_case(self, record_id: str, change: Callable[[Case], Case | None]) -> bool:
        """Read, change and write one case under its lock; True when it was written."""
        path = self.path("case", record_id)
        with self.lock(f"case-{record_id}"):
            try:
                case = self._parse(Case, path.read_bytes(), path)
            except FileNotFoundError:
                raise RecordNotFound("case", record_id, self.label(path)) from None
            changed = change(case.model_copy(deep=True))
            return changed is not None and self._write(path, changed)

    def next_case_number(self) -> int:
        numbers = [case_number(record_id, self.case_id_prefix) for record_id in self.ids("case")]
        highest = max((n for n in numbers if n is not None), default=self.case_id_start - 1)
        return max(highest + 1, self.case_id_start)

    def publish_case(self, build: Callable[[str], Case]) -> Case:
        """Allocate the next case id, build the case for it and write it, all under the cases lock.

        Several processes publishing at once get distinct, consecutive ids: the id is
        only taken once its file exists, and the next process scans after that.
        """
        with self.lock("cases"):
            new_id = case_id(self.case_id_prefix, self.next_case_number(), self.case_id_digits)
            case = build(new_id)
            if case.id != new_id:
                raise InvalidId(f"the case built for {new_id} has id {case.id!r}", value=case.id)
            path = self.path("case", new_id)
            with self.lock(f"case-{new_id}"):
                if path.exists():  # only a write_case() of an id nobody allocated could cause this
                    label = self.label(path)
                    raise ConflictError(f"{label}: already exists; refusing to overwrite a published case", path=label)
                self._write(path, case)
            return case


# ---------------------------------------------------------------- making a data root

_GITIGNORE = """\
# incidentlib's state under a data root: locks, link health, runs, a local Prefect server
.incidentlib/
# a crash between a temporary write and its rename leaves one of these behind
.*.tmp
# settings and archive keys of a working copy
incidentlib.env
# the reader's site, built from cases/ by `incidentlib site`
/site/
"""

_STARTER = """\
# The crawl registry: every *.yaml file in sources/ is a list of sources to crawl.
# `incidentlib add URL` appends one to sources/added.yaml; entries may also be written by hand,
# here or in a file of their own. Each entry is a URL with optional hints:
#
# - url: https://github.com/dfds/postmortems/blob/master/PM2020-007%20-%20Unhealthy%20nodes.md
#   org: DFDS            # who wrote the postmortem; else taken from the page or the site
#   kind: github         # a source kind of the vocabulary; else guessed from the URL
#   title: Unhealthy nodes
#   date: 2020-10-06     # YYYY, YYYY-MM or YYYY-MM-DD
#   tags: [kubernetes]   # free words for the operator
#
# `incidentlib validate` checks every entry; `incidentlib schema source` prints the format.
# This file lists no source: to list some here, replace the [] below with entries like the one above.
[]
"""


@dataclass
class InitReport:
    """What `init_data_root` did: paths relative to the root, made or found already there."""

    root: Path
    created: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _refuse_unreadable(faults: list[Fault], then: str) -> None:
    """Raise StoreError on the first fault of a YAML file of sources/ that leaves something unread: a file
    (not UTF-8, not YAML) or an entry (a key twice, not a mapping), the faults whose field is "-". A caller
    that writes the file back or checks against it must not go on without what it could not read."""
    unreadable = [fault for fault in faults if fault.field == "-"]
    if unreadable:
        more = f" (and {len(unreadable) - 1} more)" if len(unreadable) > 1 else ""
        raise StoreError(
            f"{unreadable[0]}{more}; {then} (`incidentlib validate` lists what is wrong)", path=unreadable[0].path
        )


def _host() -> str:
    return hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]


def process_alive(pid: int) -> bool:
    """Whether a process with this id runs (one of another user's counts: it may not be signalled)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def data_root_problem(root: Path) -> str | None:
    """Why `root` is not a data root (a folder holding sources/, drafts/ or cases/); None when it is one."""
    if not root.is_dir():
        return "no such folder"
    if not any((root / folder).is_dir() for folder in DATA_FOLDERS):
        return "not a data root (no sources/, drafts/ or cases/ folder)"
    return None


@contextmanager
def _os_errors_named(path: Path, doing: str) -> Iterator[None]:
    """An OSError as a StoreError of one line naming the path, which a command prints as it is."""
    try:
        yield
    except OSError as exc:
        raise StoreError(f"{path}: cannot {doing}: {exc.strerror or exc}", path=str(path)) from None


def init_data_root(root: Path) -> InitReport:
    """Make `root` a data root: its three folders, a .gitignore for its state, a commented starter
    registry, and its settings file (incidentlib.env, every setting commented out at its default).

    Safe to run again, and on a folder that is already a data root: nothing that exists is
    overwritten or changed (an existing .gitignore that does not ignore the state folder is
    named in `notes`). Raises StoreError, naming the path, when a file stands where a folder
    goes or the file system refuses.
    """
    root = root.expanduser().resolve()
    report = InitReport(root)
    for path in (root, *(root / folder for folder in DATA_FOLDERS)):
        if path.exists() and not path.is_dir():
            raise StoreError(f"{path}: not a folder", path=str(path))
    for folder in DATA_FOLDERS:
        path = root / folder
        (report.kept if path.is_dir() else report.created).append(f"{folder}/")
        with _os_errors_named(path, "make the folder"):
            path.mkdir(parents=True, exist_ok=True)
    # The settings file may come to hold the archive's keys: readable by its owner alone.
    starters = (
        (".gitignore", _GITIGNORE, 0o666),
        ("sources/README.yaml", _STARTER, 0o666),
        (SETTINGS_FILE, settings_file_text(), 0o600),
    )
    for name, text, mode in starters:
        with _os_errors_named(root / name, "write the file"):
            try:  # O_EXCL: never over an existing file
                handle = os.open(root / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
            except FileExistsError:
                report.kept.append(name)
                continue
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(text)
            report.created.append(name)
    with _os_errors_named(root / ".gitignore", "read the file"):
        gitignore = (root / ".gitignore").read_text(encoding="utf-8", errors="replace")
    ignored = {line.strip().rstrip("/") for line in gitignore.splitlines()}
    if STATE_DIR not in ignored and f"/{STATE_DIR}" not in ignored:
        report.notes.append(f".gitignore does not ignore {STATE_DIR}/ (locks and state): add that line to it")
    return report
