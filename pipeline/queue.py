"""The reviewer's queue, pure but for reading drafts: who is waiting for whom, and what each lacks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pipeline.errors import ReviewError
from pipeline.models import Draft, utc_now
from pipeline.review import missing_for_publication
from pipeline.store import Store

__all__ = ["QueueEntry", "queue"]

# The order a person works through: what waits for a reviewer first, what is done last.
_STATE_ORDER = ["written", "in_review", "changes_requested", "extracted", "approved", "published", "rejected"]
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
    """Drafts filtered by state, organisation, component and age, sorted as asked."""
    if sort not in _SORTS:
        raise ReviewError(f"--sort must be one of {', '.join(_SORTS)}, not {sort!r}")
    unknown = [s for s in states or [] if s not in _STATE_ORDER]
    if unknown:
        raise ReviewError(f"unknown state {unknown[0]!r}; known: {', '.join(_STATE_ORDER)}")
    entries = []
    for draft in store.drafts():
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
