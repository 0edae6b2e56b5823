"""The duplicate check the crawl and discovery run on the drafts they write: each compared with the other
drafts and the cases (pipeline.similar), what it may duplicate kept as its `possible_duplicates`
(pipeline.merge.record_duplicates), for a reviewer to merge or dismiss.

    report = flag_duplicates(store, ["acme-db-outage-1a2b3c4d"])   # report.flagged: draft id -> ids

A pair is told to both sides: when a new draft may duplicate an older draft, the older one is checked
again too, so whichever a reviewer opens first shows the other; so is a draft it named before or
dismissed, which forgets it when the two no longer match or the pair was dismissed on this side. A case
is never written: it is shown the draft through `incidentlib similar`. Suggestions only: nothing here
touches a draft's content, its state or its history, and a dismissed pair stays out (record_duplicates
leaves it out).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

from pipeline.errors import RecordError
from pipeline.ids import is_case_id
from pipeline.merge import dismissed, draft_of, record_duplicates, resolve
from pipeline.models import Case, Draft, DraftState, PossibleDuplicate
from pipeline.similar import Match, SimilarIndex, Suggestions, doc_of_draft, load_library, suggestions
from pipeline.store import Store

__all__ = ["DuplicateReport", "Similar", "flag_duplicates", "possible_duplicates", "similar_to"]

# Drafts the check leaves alone: their review is over (a published draft is compared as its case).
_DONE = {DraftState.REJECTED, DraftState.MERGED, DraftState.PUBLISHED}


@dataclass
class DuplicateReport:
    """What one check found: the drafts checked, those written, and each flagged draft's possible duplicates."""

    checked: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    flagged: dict[str, list[str]] = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)  # record files the index could not read: one line each
    # the records whose documents the index took in this time (added or replaced), every other row kept as
    # it was: a check compares the changed drafts with the index, it does not rebuild it
    indexed: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {"checked": len(self.checked), "flagged": len(self.flagged), "written": len(self.written)}


def possible_duplicates(index: SimilarIndex, draft: Draft, gone: Collection[str] = ()) -> list[PossibleDuplicate]:
    """The draft's possible duplicates in the index, as the draft keeps them (pure); its dismissals and the
    ids of `gone` left out."""
    left_out = {other for kind, other in dismissed(draft) if kind == "duplicate"} | {draft.case_id, *gone}
    return [_kept(match) for match in index.duplicates(doc_of_draft(draft)) if match.id not in left_out]


def _dismissals(store: Store, draft: Draft) -> set[tuple[str, str]]:
    """The draft's dismissals, each also under the case a dismissed draft became since: a dismissal of
    a draft holds for its case when it is published (the index then knows it by the case's id)."""
    found = dismissed(draft)
    for kind, other in list(found):
        if not is_case_id(other):
            try:
                case_id = store.read_draft(other).case_id
            except RecordError:
                continue
            if case_id:
                found.add((kind, case_id))
    return found


def _kept(match: Match) -> PossibleDuplicate:
    return PossibleDuplicate(id=match.id, score=match.score, reasons=list(match.reasons), passage=match.passage)


def flag_duplicates(store: Store, draft_ids: Iterable[str]) -> DuplicateReport:
    """Check each of `draft_ids` (and the older drafts they may duplicate) against the data root's index,
    and keep what each may duplicate on it (see the module's words). An id that names no draft, or a draft
    whose review is over, is passed over."""
    library = load_library(store)
    report = DuplicateReport(unreadable=list(library.unreadable), indexed=list(library.indexed))
    queue = list(dict.fromkeys(draft_ids))
    seen: set[str] = set()
    known: dict[str, set[tuple[str, str]]] = {}

    def asked(record_id: str) -> set[tuple[str, str]]:  # each record's dismissals read once a check
        if record_id not in known:
            known[record_id] = _dismissed(store, record_id)
        return known[record_id]

    while queue:
        draft_id = queue.pop(0)
        if draft_id in seen:
            continue
        seen.add(draft_id)
        try:
            draft = store.read_draft(draft_id)
        except RecordError:
            continue
        if draft.state in _DONE:
            continue
        # A pair dismissed on either side stays dismissed: the other side's dismissals are asked too.
        gone = [other for kind, other in _dismissals(store, draft) if kind == "duplicate"]
        found = [
            m for m in possible_duplicates(library.index, draft, gone) if ("duplicate", draft.id) not in asked(m.id)
        ]
        named_before = [match.id for match in draft.possible_duplicates]
        named_before += [d.id for d in draft.dismissed if d.kind == "duplicate"]  # which may name it still
        report.checked.append(draft_id)
        if record_duplicates(store, draft_id, found):
            report.written.append(draft_id)
        if found:
            report.flagged[draft_id] = [match.id for match in found]
        # The other side of each pair, when it is a draft: checked again, so it names this one too; and so is
        # each draft it named before or dismissed, which may name it still though they no longer match.
        others = [*(match.id for match in found), *named_before]
        queue += [other for other in others if not is_case_id(other) and other not in seen]
    return report


def _dismissed(store: Store, record_id: str) -> set[tuple[str, str]]:
    """What the draft `record_id` (or the case's draft) dismissed; nothing for a record that has no draft."""
    try:
        draft = draft_of(store, record_id)
    except RecordError:
        return set()
    return dismissed(draft) if draft is not None else set()


@dataclass(frozen=True)
class Similar:
    """What `incidentlib similar` lists: the record asked about (`asked`), the one whose suggestions these
    are (`id`: its survivor, when it was merged), and the suggestions."""

    asked: str
    id: str
    suggestions: Suggestions


def similar_to(store: Store, record_id: str, *, limit: int = 5) -> Similar:
    """A draft's or case's suggestions, read-only: its possible duplicates, related cases and recurrences,
    each with its score and reasons. A merged record's are its survivor's. Left out: what its draft
    dismissed, and what it already names in `related` or `recurrence_of`."""
    final = resolve(store, record_id)
    record: Case | Draft
    if is_case_id(final):
        record, draft = store.read_case(final), draft_of(store, final)
    else:
        record = draft = store.read_draft(final)
    taken = {("related", other) for other in record.related}
    if record.recurrence_of:
        taken.add(("recurrence", record.recurrence_of))
    exclude = taken | (_dismissals(store, draft) if draft is not None else set())
    return Similar(record_id, final, suggestions(store, final, limit=limit, exclude=exclude))
