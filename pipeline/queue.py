"""The reviewer's queue, pure but for reading drafts: who is waiting for whom, and what each lacks.

A draft file that cannot be read (broken by hand, misnamed) is listed as `unreadable`
with the reason, and the others are listed all the same: one bad file never hides the
queue, nor does the queue hide it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from pipeline.errors import RecordError, RecordNotFound, ReviewError
from pipeline.models import Draft, utc_now
from pipeline.review import missing_for_publication
from pipeline.store import Store

__all__ = ["UNREADABLE", "QueueEntry", "Unreadable", "queue", "read_drafts"]

UNREADABLE = "unreadable"
# The order a person works through: what only a person can mend first, what waits for a reviewer, what is done.
_STATE_ORDER = [
    UNREADABLE,
    "written",
    "in_review",
    "changes_requested",
    "extracted",
    "approved",
    "published",
    "rejected",
]
_SORTS = ("age", "state", "org", "id")


@dataclass
class QueueEntry:
    id: str
    state: str
    org: str | None
    title: str | None
    age_days: float
    written_by: str | None
    components: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    fetch_failure: str | None = None
    problem: str | None = None  # why an unreadable draft's file cannot be read


@dataclass
class Unreadable:
    """A draft file that could not be read, and why."""

    id: str  # the file's name without .json
    path: str  # as the store names it: drafts/<id>.json
    problem: str
    age_days: float  # since the file last changed


def read_drafts(store: Store) -> tuple[list[Draft], list[Unreadable]]:
    """Every draft of the store, and every draft file that could not be read with the reason."""
    drafts: list[Draft] = []
    unreadable: list[Unreadable] = []
    for path in store.files("draft"):
        label = store.label(path)
        try:
            drafts.append(store.read_draft(path.stem))
            continue
        except RecordNotFound:  # removed since the folder was listed
            continue
        except RecordError as exc:  # invalid JSON, fields, or a file name that is no draft id
            problem = str(exc).removeprefix(f"{label}: ")
        except OSError as exc:
            problem = exc.strerror or type(exc).__name__
        try:
            age = round((time.time() - path.stat().st_mtime) / 86400, 2)
        except OSError:
            age = 0.0
        unreadable.append(Unreadable(path.stem, label, problem, age))
    return drafts, unreadable


def _entry(draft: Draft, languages: Sequence[str]) -> QueueEntry:
    created = draft.created_at or utc_now()
    return QueueEntry(
        id=draft.id,
        state=draft.state.value,
        org=draft.org,
        title=(draft.title or {}).get("en") or next(iter((draft.title or {}).values()), None),
        age_days=round((utc_now() - created).total_seconds() / 86400, 2),
        written_by=draft.review.written_by,
        components=list(draft.components),
        missing=missing_for_publication(draft, languages),
        fetch_failure=draft.origin.failure.reason if draft.origin.failure else None,
    )


def queue(
    store: Store,
    languages: Sequence[str],
    *,
    states: Sequence[str] | None = None,
    org: str | None = None,
    component: str | None = None,
    older_than_days: float | None = None,
    sort: str = "age",
) -> list[QueueEntry]:
    """Drafts filtered by state, organisation, component and age, sorted as asked.

    Unreadable draft files are listed (state `unreadable`, with the `problem`) unless a
    state filter leaves that state out: nothing else about them can be known to filter on.
    """
    if sort not in _SORTS:
        raise ReviewError(f"--sort must be one of {', '.join(_SORTS)}, not {sort!r}")
    unknown = [s for s in states or [] if s not in _STATE_ORDER]
    if unknown:
        raise ReviewError(f"unknown state {unknown[0]!r}; known: {', '.join(_STATE_ORDER)}")
    drafts, unreadable = read_drafts(store)
    entries = [
        QueueEntry(
            id=bad.id,
            state=UNREADABLE,
            org=None,
            title=None,
            age_days=bad.age_days,
            written_by=None,
            problem=f"{bad.path}: {bad.problem}",
        )
        for bad in unreadable
        if not states or UNREADABLE in states
    ]
    for draft in drafts:
        if states and draft.state.value not in states:
            continue
        if org and org.casefold() not in ((draft.org or "").casefold(), (draft.org_slug or "").casefold()):
            continue
        if component and component not in draft.components:
            continue
        entry = _entry(draft, languages)
        if older_than_days is not None and entry.age_days < older_than_days:
            continue
        entries.append(entry)
    keys = {
        "age": lambda e: -e.age_days,
        "state": lambda e: (_STATE_ORDER.index(e.state), -e.age_days),
        "org": lambda e: ((e.org or "").casefold(), -e.age_days),
        "id": lambda e: e.id,
    }
    return sorted(entries, key=keys[sort])
