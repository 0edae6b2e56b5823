"""The drafts the web page keeps read between requests (DraftCache), with what each lacks and its
searchable text worked out once per version of its file. See docs/review.md."""

from __future__ import annotations

import gc
import threading
import time
from datetime import datetime
from pathlib import Path

from pipeline import queue as review_queue
from pipeline.errors import RecordError, RecordNotFound
from pipeline.models import Draft
from pipeline.store import Store

__all__ = ["DraftCache"]


class DraftCache:
    """Drafts read once and read again only when their file changed, with what each lacks and its
    searchable text worked out once per version: the queue of 5,000 drafts is then a filter and a
    sort, not 5,000 parses and checks.

    The folder is listed again only when its own time changed (the store replaces a file by renaming
    a new one into place, which changes it) or `RESCAN_S` passed (an editor writing a file in place).
    The drafts kept are frozen out of the garbage collector's sweeps, which otherwise walked all of
    them every few requests (pauses of 0.4 s with 5,000)."""

    RESCAN_S = 5.0

    def __init__(self, store: Store, languages: list[str]) -> None:
        self.store = store
        self.languages = languages
        self.read: dict[Path, tuple[tuple[int, int], Draft | review_queue.Unreadable]] = {}
        self.worked: dict[str, tuple[Draft, review_queue.QueueEntry, str]] = {}  # id -> (draft, entry, text)
        self.folder_time = -1
        self.scanned_at = 0.0
        self.lock = threading.Lock()
        self.drafts: list[Draft] = []
        self.unreadable: list[review_queue.Unreadable] = []

    def all(self) -> tuple[list[Draft], list[review_queue.Unreadable]]:
        with self.lock:
            folder = self.store.root / "drafts"
            try:
                folder_time = folder.stat().st_mtime_ns
            except OSError:
                folder_time = -1
            if folder_time == self.folder_time and time.monotonic() - self.scanned_at < self.RESCAN_S:
                return self.drafts, self.unreadable
            self._scan()
            self.folder_time, self.scanned_at = folder_time, time.monotonic()
            return self.drafts, self.unreadable

    def _scan(self) -> None:
        drafts: list[Draft] = []
        unreadable: list[review_queue.Unreadable] = []
        seen = set()
        fresh = False
        for path in self.store.files("draft"):
            seen.add(path)
            try:
                stat = path.stat()
            except OSError:
                continue
            key = (stat.st_mtime_ns, stat.st_size)
            cached = self.read.get(path)
            if cached is None or cached[0] != key:
                fresh = True
                try:
                    value: Draft | review_queue.Unreadable = self.store.read_draft(path.stem)
                except RecordNotFound:
                    continue
                except RecordError as exc:
                    label = self.store.label(path)
                    problem = str(exc).removeprefix(f"{label}: ")
                    age = round((time.time() - stat.st_mtime) / 86400, 2)
                    value = review_queue.Unreadable(path.stem, label, problem, age)
                cached = (key, value)
                self.read[path] = cached
            if isinstance(cached[1], Draft):
                drafts.append(cached[1])
            else:
                unreadable.append(cached[1])
        for gone in set(self.read) - seen:
            del self.read[gone]
        self.drafts, self.unreadable = drafts, unreadable
        if fresh:
            gc.collect()
            gc.freeze()

    def _worked_out(self, draft: Draft) -> tuple[Draft, review_queue.QueueEntry, str]:
        known = self.worked.get(draft.id)
        if known is None or known[0] is not draft:
            entry = review_queue.entry_for(draft, self.languages)
            known = (draft, entry, review_queue.searchable(draft))
            self.worked[draft.id] = known
        return known

    def entry(self, draft: Draft, now: datetime) -> review_queue.QueueEntry:
        """The draft's queue entry, worked out once per version; only its age follows the clock."""
        entry = self._worked_out(draft)[1]
        created = draft.created_at or now
        # In place: a copy per draft per request was most of the queue's time, and the queue is
        # worked out on the event loop's one thread, so no two requests set it at once.
        entry.age_days = round((now - created).total_seconds() / 86400, 2)
        return entry

    def text(self, draft: Draft) -> str:
        return self._worked_out(draft)[2]
