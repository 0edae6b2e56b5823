"""The record store: the only code that writes `sources/`, `drafts/` and `cases/`.

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
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal, TypeVar

import yaml
from pydantic import BaseModel

from pipeline.errors import ConflictError, DuplicateSource, Fault, InvalidId, InvalidRecord, RecordNotFound, StoreError
from pipeline.ids import canonical_url, case_id, case_number, check_case_id, check_draft_id
from pipeline.models import Candidate, Case, Draft, SourceEntry
from pipeline.records import decode_utf8, dump_record, file_name_fault, load_record
from pipeline.registry import RegisteredFeed, RegisteredSource, parse_entries, parse_feeds, parse_registry
from pipeline.settings import Settings
from pipeline.store.files import write_atomic
from pipeline.store.state import State

__all__ = ["MODELS", "RecordKind", "Store"]

RecordKind = Literal["draft", "case"]
MODELS: dict[RecordKind, type[Draft] | type[Case]] = {"draft": Draft, "case": Case}
M = TypeVar("M", bound=BaseModel)

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


def _version(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _yaml(entries: list[dict[str, object]]) -> str:
    return yaml.dump(entries, Dumper=_YAML_DUMPER, sort_keys=False, allow_unicode=True, width=120)


class Store:
    """Records under one data root, and its state (`state`, `.incidentlib/`). Cheap to make; holds no
    open files between calls."""

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
        self.feeds_path = self.sources_dir / FEEDS_FILE
        self.candidates_path = self.sources_dir / CANDIDATES_FILE
        self.state = State(self.root)
        self._folders: dict[RecordKind, Path] = {"draft": self.drafts_dir, "case": self.cases_dir}
        self._resolved: dict[RecordKind, Path] = {}

    @classmethod
    def from_settings(cls, settings: Settings) -> Store:
        return cls(
            settings.root,
            case_id_prefix=settings.case_id_prefix,
            case_id_digits=settings.case_id_digits,
            case_id_start=settings.case_id_start,
        )

    # ------------------------------------------------------------ reading records

    def path(self, kind: RecordKind, record_id: str) -> Path:
        """The file of a record; raises InvalidId for an id that is malformed or would leave its folder."""
        (check_draft_id if kind == "draft" else check_case_id)(record_id)
        folder = self._folders[kind]
        path = folder / f"{record_id}.json"
        # The patterns already forbid separators and dots; this is the belt to those braces (the folder
        # resolved once: a build reads 10,000 cases).
        resolved = self._resolved.get(kind)
        if resolved is None:
            resolved = self._resolved[kind] = folder.resolve()
        if path.resolve().parent != resolved:
            raise InvalidId(f"{kind} id {record_id!r} would leave {folder}", value=record_id)
        return path

    def label(self, path: Path) -> str:
        """How a path is named in messages: relative to the root when it lies under it."""
        return self.state.label(path)

    def _read(self, kind: RecordKind, record_id: str) -> tuple[bytes, Path]:
        path = self.path(kind, record_id)
        try:
            return path.read_bytes(), path
        except FileNotFoundError:
            raise RecordNotFound(kind, record_id, self.label(path)) from None

    def _parse(self, model: type[M], data: bytes, path: Path) -> M:
        label = self.label(path)
        record = load_record(model, data, label)
        fault = file_name_fault(record, path, label)
        if fault:
            raise InvalidRecord([fault])
        return record

    def read_case(self, record_id: str) -> Case:
        return self.read_case_file(record_id)[0]

    def read_case_file(self, record_id: str) -> tuple[Case, bytes]:
        """A case and its file's bytes."""
        data, path = self._read("case", record_id)
        return self._parse(Case, data, path), data

    def read_draft(self, record_id: str) -> Draft:
        return self.read_draft_versioned(record_id)[0]

    def read_draft_versioned(self, record_id: str) -> tuple[Draft, str]:
        """The draft and a version token to hand back to `write_draft(expected_version=...)`."""
        data, path = self._read("draft", record_id)
        return self._parse(Draft, data, path), _version(data)

    def exists(self, kind: RecordKind, record_id: str) -> bool:
        return self.path(kind, record_id).is_file()

    def files(self, kind: RecordKind) -> list[Path]:
        """Record files of one kind, sorted; temporary and hidden files are not records."""
        folder = self._folders[kind]
        if not folder.is_dir():
            return []
        return sorted(p for p in folder.glob("*.json") if not p.name.startswith(".") and p.is_file())

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

    def record_stats(self, kind: RecordKind) -> dict[str, tuple[int, int, int]]:
        """Each record file's (inode, size, modification time in ns) by id, from one listing of its folder:
        what tells a cache a file is as it was (a store's write replaces the file: a new inode)."""
        stats: dict[str, tuple[int, int, int]] = {}
        folder = self._folders[kind]
        if not folder.is_dir():
            return stats
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.endswith(".json") and not entry.name.startswith(".") and entry.is_file():
                    info = entry.stat()
                    stats[entry.name.removesuffix(".json")] = (info.st_ino, info.st_size, info.st_mtime_ns)
        return dict(sorted(stats.items()))

    # ------------------------------------------------------------ sources/: the registry, feeds, candidates

    def read_sources(self) -> tuple[list[RegisteredSource], list[Fault]]:
        """Every registry entry (each *.yaml of sources/ but the feeds' and candidates' files) with its file
        and line, and the faults of the entries that failed."""
        entries: list[RegisteredSource] = []
        faults: list[Fault] = []
        found = sorted(self.sources_dir.iterdir()) if self.sources_dir.is_dir() else []
        for path in found:
            if path.suffix not in (".yaml", ".yml") or path.name.startswith("."):
                continue
            if path.name in (FEEDS_FILE, CANDIDATES_FILE):
                continue
            try:
                text = decode_utf8(path.read_bytes(), self.label(path))
            except InvalidRecord as exc:
                faults.extend(exc.faults)
                continue
            got, bad = parse_registry(text, self.label(path))
            entries.extend(got)
            faults.extend(bad)
        return entries, faults

    def append_sources(self, entries: list[SourceEntry], file_name: str = "added.yaml") -> Path:
        """Append entries to a registry file in one write, refusing any URL already registered anywhere.
        The entries are appended as text, so the file's comments and layout stay as they were. The caller
        holds the `sources` lock (`state.lock("sources")`): checking and appending are one step."""
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
        refuse_unreadable(faults, "nothing added: fix the registry first")
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
        text = "\n".join(_yaml([entry.model_dump(mode="json", exclude_defaults=True)]) for entry in entries)
        self.sources_dir.mkdir(parents=True, exist_ok=True)
        write_atomic(path, (old + ("\n" if old else "") + text).encode("utf-8"))
        return path

    def read_feeds(self) -> tuple[list[RegisteredFeed], list[Fault]]:
        """The feeds of sources/feeds.yaml with their lines, and the faults of the entries that failed."""
        try:
            text = decode_utf8(self.feeds_path.read_bytes(), self.label(self.feeds_path))
        except FileNotFoundError:
            return [], []
        except InvalidRecord as exc:
            return [], exc.faults
        return parse_feeds(text, self.label(self.feeds_path))

    def write_feeds(self, text: str) -> None:
        """Replace sources/feeds.yaml with `text` (YAML, comments kept as written), once it reads without a
        fault: a file `read_feeds` could not read whole is refused, naming what is wrong."""
        _, faults = parse_feeds(text, self.label(self.feeds_path))
        if faults:
            raise StoreError(str(faults[0]), path=self.label(self.feeds_path))
        with self.state.lock("sources"):
            self.sources_dir.mkdir(parents=True, exist_ok=True)
            write_atomic(self.feeds_path, text.encode("utf-8"))

    def read_candidates(self, *, strict: bool = False) -> tuple[list[Candidate], list[Fault]]:
        """The candidates of sources/candidates.yaml (open and dismissed), and the faults of bad entries.

        `strict`, for a caller that writes the list back or shows it: a file or entry that cannot be read
        (field "-": not UTF-8, not YAML, a key twice) raises StoreError, for writing back what was read
        would lose what was not."""
        candidates: list[Candidate] = []
        try:
            text = decode_utf8(self.candidates_path.read_bytes(), self.label(self.candidates_path))
        except FileNotFoundError:
            return [], []
        except InvalidRecord as exc:
            faults = exc.faults
        else:
            label = self.label(self.candidates_path)
            entries, faults = parse_entries(text, label, Candidate)
            seen: dict[str, int] = {}
            for candidate, line in entries:
                if candidate.id in seen:
                    faults.append(Fault(f"{label}:{line}", "id", f"{candidate.id} is at line {seen[candidate.id]} too"))
                    continue
                seen[candidate.id] = line
                candidates.append(candidate)
        if strict:
            refuse_unreadable(faults, "fix the file first")
        return candidates, faults

    def write_candidates(self, candidates: list[Candidate]) -> bool:
        """Replace the candidates file (the caller holds the `sources` lock); True when it changed.
        Open ones first, in the order given (discover puts a run's new ones on top); then the
        dismissed, kept so that they are never proposed again."""
        ordered = sorted(candidates, key=lambda c: c.state != "open")
        data = [c.model_dump(mode="json", exclude_defaults=True) for c in ordered]
        encoded = (_CANDIDATES_HEADER + (_yaml(data) if data else "[]\n")).encode("utf-8")
        try:
            if self.candidates_path.read_bytes() == encoded:
                return False
        except FileNotFoundError:
            if not candidates:
                return False
        self.sources_dir.mkdir(parents=True, exist_ok=True)
        write_atomic(self.candidates_path, encoded)
        return True

    # ------------------------------------------------------------ writing records

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
        with self.state.lock(f"{kind}-{path.stem}"):
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
        with self.state.lock(f"draft-{draft.id}"):
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
        expected_version: str | None = None,
    ) -> Draft:
        """Read, change and write one draft under its lock; no concurrent update is lost.

        `change` gets a copy and returns the new draft, or None to leave the record as it
        was (edits made to the copy in place are then dropped). With `create`, a missing
        draft starts as `create()` instead of raising RecordNotFound. With `expected_version`
        (from `read_draft_versioned`), a draft changed since raises ConflictError and is left.
        """
        path = self.path("draft", record_id)
        with self.state.lock(f"draft-{record_id}"):
            try:
                data = path.read_bytes()
                draft = self._parse(Draft, data, path)
            except FileNotFoundError:
                if create is None:
                    raise RecordNotFound("draft", record_id, self.label(path)) from None
                data, draft = b"", create()
            if expected_version is not None and _version(data) != expected_version:
                label = self.label(path)
                raise ConflictError(f"{label}: changed by someone else since it was read; re-read it", path=label)
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
        with self.state.lock(f"case-{case.id}"):
            return self._write(path, case)

    def update_case(self, record_id: str, change: Callable[[Case], Case | None]) -> bool:
        """Read, change and write one case under its lock; True when it was written."""
        path = self.path("case", record_id)
        with self.state.lock(f"case-{record_id}"):
            try:
                case = self._parse(Case, path.read_bytes(), path)
            except FileNotFoundError:
                raise RecordNotFound("case", record_id, self.label(path)) from None
            changed = change(case.model_copy(deep=True))
            return changed is not None and self._write(path, changed)

    def publish_case(self, build: Callable[[str], Case]) -> Case:
        """Allocate the next case id, build the case for it and write it, all under the cases lock.

        Several processes publishing at once get distinct, consecutive ids: the id is
        only taken once its file exists, and the next process scans after that.
        """
        with self.state.lock("cases"):
            numbers = [case_number(record_id, self.case_id_prefix) for record_id in self.ids("case")]
            highest = max((n for n in numbers if n is not None), default=self.case_id_start - 1)
            new_id = case_id(self.case_id_prefix, max(highest + 1, self.case_id_start), self.case_id_digits)
            case = build(new_id)
            if case.id != new_id:
                raise InvalidId(f"the case built for {new_id} has id {case.id!r}", value=case.id)
            path = self.path("case", new_id)
            with self.state.lock(f"case-{new_id}"):
                if path.exists():  # only a write_case() of an id nobody allocated could cause this
                    label = self.label(path)
                    raise ConflictError(f"{label}: already exists; refusing to overwrite a published case", path=label)
                self._write(path, case)
            return case


def refuse_unreadable(faults: list[Fault], then: str) -> None:
    """Raise StoreError on the first fault of a YAML file of sources/ that leaves something unread: a file
    (not UTF-8, not YAML) or an entry (a key twice, not a mapping), the faults whose field is "-". A caller
    that writes the file back or checks against it must not go on without what it could not read."""
    unreadable = [fault for fault in faults if fault.field == "-"]
    if unreadable:
        more = f" (and {len(unreadable) - 1} more)" if len(unreadable) > 1 else ""
        raise StoreError(
            f"{unreadable[0]}{more}; {then} (`incidentlib validate` lists what is wrong)", path=unreadable[0].path
        )
