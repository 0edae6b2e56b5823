"""`.incidentlib/`: the pipeline's own memory under a data root, owned by one class, `State`.

Not data: nothing here is reviewed or published, and git ignores the folder. Every file and folder
in it is named in `LAYOUT`, with the module that keeps it; `State.path` refuses any other, so the
layout cannot grow without being written down here (the manual's table is made from `LAYOUT`).

Guarantees, as for records: every write is atomic (`write_atomic`), a read-modify-write holds the
file's lock, and a JSON state file that cannot be read is one StoreError naming it, never a traceback.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, TypeVar

import filelock
from pydantic import BaseModel, TypeAdapter, ValidationError

from pipeline.errors import InvalidId, InvalidRecord, LockBusy, StoreError
from pipeline.models import CANDIDATE_ID_PATTERN, FeedState, LinkState, RunRecord
from pipeline.records import dump_json, faults_from, load_json
from pipeline.store.files import check_rel, host_id, process_alive, write_atomic

__all__ = ["LAYOUT", "LOCK_TIMEOUT_S", "STATE_DIR", "State"]

STATE_DIR = ".incidentlib"

# Every file and folder of `.incidentlib/` (a folder ends in "/"): what it holds, and who keeps it.
LAYOUT: dict[str, str] = {
    "locks/": "lock files, one per lock name; not data (`State.lock`)",
    "tmp/": "temporary folders of running processes, each named by its process id (`State.scratch`)",
    "runs.json": "the last run of each flow: when, how it ended, its counts (`pipeline.status`)",
    "links.json": "link health, by source URL (`pipeline.links`)",
    "feeds.json": "each feed's validators and its entries' fingerprints (`pipeline.discover`)",
    "feed-texts/": "the text a feed carries for each open candidate, a postmortem in itself (`pipeline.discover`)",
    "finder.json": "the finder model `incidentlib learn` trained on the library's reviews (`pipeline.learn`)",
    "similar.pickle": "the similarity index and what it was made of (`pipeline.similar.library`)",
    "lookup.pickle": "the tools' search and similarity index over the published cases (`pipeline.lookup`)",
    "site/": "what builds of the reader's site keep between builds, a folder per output folder (`pipeline.site.tree`)",
    "claims.json": "who is on which draft (`pipeline.claims`)",
    "reviewers.json": "the review page's reviewers and their argon2id hashes, mode 0600 (`pipeline.reviewers`)",
    "web-secret": "the key that signs the review page's sessions, mode 0600 (`pipeline.web.security`)",
    "web-sessions-revoked.json": "sessions signed out before they expired, mode 0600 (`pipeline.web.security`)",
    "edits/": "the text of an `incidentlib edit` that was not saved, kept for its writer (`pipeline.cli.review`)",
    "prefect/": "the local Prefect server's home: its database, log and `server.json` (`pipeline.server`)",
}

LOCK_TIMEOUT_S = 120.0
# Temporary folders of running processes (`State.scratch`), named `{prefix}-{pid}-{host}-{random}`: `host` a hash
# of the machine's name, for a data root shared by machines (workers elsewhere), whose processes are not ours.
_SCRATCH_NAME = re.compile(r"[a-z]+-(\d+)-([0-9a-f]{8})-.+")
# What to do about a state file that cannot be read: it is the pipeline's memory, not data.
HINT = "a state file of incidentlib's: restore it, or move it away and the next run starts it afresh"
_RUNS: TypeAdapter[dict[str, RunRecord]] = TypeAdapter(dict[str, RunRecord])
M = TypeVar("M", bound=BaseModel)
StateFile = Literal["runs", "links", "feeds"]


class State:
    """The `.incidentlib/` folder of one data root. Cheap to make; holds no open files between calls."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.dir = root / STATE_DIR

    def label(self, path: Path) -> str:
        """How a path is named in messages: relative to the data root."""
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)

    def path(self, rel: str) -> Path:
        """The path of `rel` (`runs.json`, `site/<key>/tree.pickle`) in the folder; InvalidId for a path
        whose first part `LAYOUT` does not name, or that would leave the folder."""
        parts = check_rel(self.dir, rel)
        top = parts[0] + ("/" if len(parts) > 1 else "")
        if top not in LAYOUT:
            raise InvalidId(f"{STATE_DIR}/{rel}: not a file of incidentlib's state", value=rel)
        return self.dir.joinpath(*parts)

    def folder(self, name: str, *, make: bool = True) -> Path:
        """One of the layout's folders (`edits`, `prefect`), made when missing unless not `make`."""
        if f"{name}/" not in LAYOUT:
            raise InvalidId(
                f"{STATE_DIR}/{name}/: not a folder of incidentlib's state (pipeline.store.state)", value=name
            )
        path = self.dir / name
        if make:
            path.mkdir(parents=True, exist_ok=True)
        return path

    # ------------------------------------------------------------ bytes

    def read(self, rel: str) -> bytes | None:
        """A state file's bytes; None when there is none."""
        try:
            return self.path(rel).read_bytes()
        except FileNotFoundError:
            return None

    def write(self, rel: str, data: bytes, *, mode: int | None = None, durable: bool = True) -> None:
        """Replace a state file, atomically (`write_atomic`: `mode` 0o600 for a file of secrets)."""
        path = self.path(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, data, mode=mode, durable=durable)

    def remove(self, rel: str) -> None:
        self.path(rel).unlink(missing_ok=True)

    def stat(self, rel: str) -> tuple[int, int, int] | None:
        """A state file's inode, size and modification time in ns (a new file each write); None when there is none."""
        try:
            found = self.path(rel).stat()
        except FileNotFoundError:
            return None
        return found.st_ino, found.st_size, found.st_mtime_ns

    # ------------------------------------------------------------ locks and scratch folders

    @contextmanager
    def lock(self, name: str, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
        """An exclusive lock shared by every process using this data root (waited for up to `timeout` s)."""
        path = self.folder("locks") / f"{name}.lock"
        lock = filelock.FileLock(path, timeout=timeout)
        try:
            lock.acquire()
        except filelock.Timeout:
            where = self.label(path)
            waited = (
                "is held by another process" if timeout <= 0 else f"still held by another process after {timeout:.0f} s"
            )
            raise LockBusy(f"{where}: {waited}", path=where) from None
        try:
            yield
        finally:
            lock.release()

    @contextmanager
    def scratch(self, prefix: str) -> Iterator[Path]:
        """A temporary folder of this process's, removed when it is left. Its name holds the process's id,
        so that a process killed before removing it (SIGKILL, a crash, the machine stopping) leaves
        nothing behind for long: `remove_stale_scratch`, at the start of the next one."""
        self.remove_stale_scratch()
        root = self.folder("tmp")
        folder = Path(tempfile.mkdtemp(prefix=f"{prefix}-{os.getpid()}-{host_id()}-", dir=root))
        try:
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def remove_stale_scratch(self) -> list[str]:
        """Remove the scratch folders whose process has ended (`scratch`); their labels. A folder whose name
        holds no process id, or another machine's, is left alone: it is none of ours to judge."""
        removed: list[str] = []
        try:
            found = list(self.folder("tmp", make=False).iterdir())
        except FileNotFoundError:
            return removed
        for folder in found:
            owner = _SCRATCH_NAME.fullmatch(folder.name)
            if owner and owner.group(2) == host_id() and folder.is_dir() and not process_alive(int(owner.group(1))):
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(self.label(folder))
        return removed

    # ------------------------------------------------------------ JSON state files

    def _json(self, rel: str) -> Any:
        """A JSON state file; FileNotFoundError when there is none, StoreError naming it when it cannot be read."""
        path = self.path(rel)
        data = path.read_bytes()
        try:
            return load_json(data, self.label(path))
        except InvalidRecord as exc:
            raise StoreError(f"{exc}; {HINT}", path=self.label(path)) from None

    def _keyed(self, rel: str, model: type[M]) -> dict[str, M]:
        """A state file of records by URL; empty before it is first written."""
        try:
            data = self._json(rel)
        except FileNotFoundError:
            return {}
        label = self.label(self.path(rel))
        if not isinstance(data, dict):
            raise StoreError(f"{label}: -: expected an object of records by URL; {HINT}", path=label)
        try:
            return {url: model.model_validate(record) for url, record in data.items()}
        except ValidationError as exc:
            raise StoreError(f"{faults_from(exc, label)[0]}; {HINT}", path=label) from None

    def _merge_keyed(
        self, rel: str, model: type[M], changes: dict[str, M], forget: tuple[str, ...] = (), *, compact: bool = False
    ) -> None:
        """Merge records into a state file by URL (and drop `forget`), atomically and under its lock; the
        records already there are written again in today's form (`compact`: without their defaults)."""
        with self.lock(rel.removesuffix(".json")):
            merged = {**self._keyed(rel, model), **changes}
            for url in forget:
                merged.pop(url, None)
            data = {url: merged[url].model_dump(mode="json", exclude_defaults=compact) for url in sorted(merged)}
            self.write(rel, dump_json(data))

    def read_feed_states(self) -> dict[str, FeedState]:
        """What discover knows of each feed, by feed URL; empty before the first run."""
        return self._keyed("feeds.json", FeedState)

    def update_feed_states(self, states: dict[str, FeedState], *, forget: tuple[str, ...] = ()) -> None:
        """Merge feed states into the file (`forget`: feeds to read whole next time), atomically, under its lock."""
        self._merge_keyed("feeds.json", FeedState, states, forget, compact=True)

    def read_links(self) -> dict[str, LinkState]:
        """What the last refresh found, by source URL; empty before the first refresh."""
        return self._keyed("links.json", LinkState)

    def update_links(self, states: dict[str, LinkState]) -> None:
        """Merge new link states into the file, atomically and under its lock."""
        self._merge_keyed("links.json", LinkState, states)

    def read_runs(self) -> dict[str, RunRecord]:
        """The last run of each flow by name: when it started and ended, how, and its counts."""
        try:
            runs = self._json("runs.json")
        except FileNotFoundError:
            return {}
        label = self.label(self.path("runs.json"))
        if not isinstance(runs, dict):
            raise StoreError(f"{label}: -: expected an object of runs by flow; {HINT}", path=label)
        try:
            return _RUNS.validate_python(runs)  # a fault names the flow and the field: crawl.state
        except ValidationError as exc:
            raise StoreError(f"{faults_from(exc, label)[0]}; {HINT}", path=label) from None

    def record_run(self, flow: str, run: RunRecord) -> None:
        """Keep `run` as the last run of `flow`, atomically and under the file's lock."""
        with self.lock("runs"):
            runs = self.read_runs()
            runs[flow] = run
            self.write(
                "runs.json", dump_json({name: record.model_dump(mode="json") for name, record in sorted(runs.items())})
            )

    def check(self, *names: StateFile) -> None:
        """Read the JSON state files named (`runs` for runs.json, ...); raise StoreError naming the first that
        cannot be read. A command checks those its flow reads before it starts, so that such a file is one
        line, not a failed run's traceback."""
        readers = {"runs": self.read_runs, "links": self.read_links, "feeds": self.read_feed_states}
        for name in names:
            readers[name]()

    # ------------------------------------------------------------ the finder's model and feeds' texts

    def finder_model(self) -> str | None:
        """The text of the library's own finder model; None before `incidentlib learn` made one."""
        path = self.path("finder.json")
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            label = self.label(path)
            raise StoreError(f"{label}: cannot read the finder model: {exc}; {HINT}", path=label) from None

    def keep_finder_model(self, text: str) -> None:
        """Replace the library's finder model, atomically: a crash leaves the old one or the new one."""
        with self.lock("finder"):
            self.write("finder.json", text.encode("utf-8"))

    def _feed_text(self, candidate_id: str) -> str:
        if not re.fullmatch(CANDIDATE_ID_PATTERN, candidate_id):
            raise InvalidId(f"not a candidate id: {candidate_id!r}", value=candidate_id)
        return f"feed-texts/{candidate_id}.md"

    def keep_feed_text(self, candidate_id: str, text: str) -> None:
        rel = self._feed_text(candidate_id)
        data = text.encode("utf-8")
        if self.read(rel) != data:
            self.write(rel, data)

    def feed_text(self, candidate_id: str) -> str | None:
        data = self.read(self._feed_text(candidate_id))
        return None if data is None else data.decode("utf-8")

    def drop_feed_text(self, candidate_id: str) -> None:
        self.remove(self._feed_text(candidate_id))
