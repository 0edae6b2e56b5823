"""Promotion: approved drafts become published cases.

    report = promote(store, settings)

For each approved draft: check it is complete (pipeline.review.missing_for_publication);
give it the next case id (or, for a draft published before and re-approved after an
edit, its own id again); write `cases/<id>.json` in the published format (no draft-only
field, `url` from the public base URL, `updated_at` now); mark the draft published with
its case id. A draft that lacks something stays approved and the report says what.

Safe to run twice and from several processes at once: each draft is promoted under its
own lock and re-read there, so a draft another process already published is skipped;
case ids are allocated under the cases lock (pipeline.store).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pipeline import interrupt
from pipeline.batch import Report
from pipeline.errors import InvalidRecord
from pipeline.fields import PUBLISHED, WITHDRAWAL
from pipeline.ids import case_base_url
from pipeline.models import Case, Draft, DraftState, Source, Transition, utc_now
from pipeline.review import missing_for_publication
from pipeline.settings import Settings
from pipeline.store import Store

__all__ = [
    "Outcome",
    "PromoteReport",
    "Promotion",
    "case_from_draft",
    "case_url",
    "foreign_url",
    "promote",
    "promoted_unmarked",
    "source_key",
]

Outcome = Literal["published", "updated", "incomplete", "skipped"]


@dataclass
class Promotion:
    draft_id: str
    outcome: Outcome
    case_id: str | None = None
    missing: list[str] = field(default_factory=list)


@dataclass
class PromoteReport(Report):
    ITEMS, OUTCOMES = "drafts", Outcome
    SHOWN = ("counts", "drafts")

    drafts: list[Promotion] = field(default_factory=list)


# What a case copies from its draft: every field but those publication writes itself (marked `Published`).
_CASE_FIELDS = tuple(name for name in Case.model_fields if name not in PUBLISHED)


def case_url(base_url: str, case_id: str) -> str:
    """A case's permanent address: the site's base, then `/cases/{id}`."""
    return f"{case_base_url(base_url)}/cases/{case_id}"


def foreign_url(case: Case, base_url: str) -> str | None:
    """Why a case's `url` is not its address under the library's base (a hand edit, a copy from another
    library), or None when it lies under it."""
    base = case_base_url(base_url)
    if case.url.startswith(base + "/"):
        return None
    return f"{case.url} is not under the library's base {base}; the case's address is {case_url(base_url, case.id)}"


def source_key(record: Draft | Case) -> tuple[str, ...]:
    """What ties a case to the draft it was published from when the draft does not name it yet: exactly
    the same sources."""
    return tuple(sorted(s.url for s in record.sources))


def promoted_unmarked(draft: Draft, cases_by_sources: dict[tuple[str, ...], str]) -> str | None:
    """The case a promotion cut short published from `draft` before marking it (`_case_of`): an approved
    draft naming no case, with a case of exactly its sources. The next `promote` finishes it."""
    if draft.state != DraftState.APPROVED or draft.case_id is not None or not draft.sources:
        return None
    return cases_by_sources.get(source_key(draft))


def case_from_draft(draft: Draft, case_id: str, base_url: str) -> Case:
    """The published record of a complete draft: the case fields only, in the published shape."""
    data = draft.model_dump(mode="json", include=set(_CASE_FIELDS))
    now = utc_now().isoformat()
    return Case.model_validate(
        {
            **data,
            "id": case_id,
            "sources": [
                Source(url=s.url, kind=s.kind, archived=s.archived).model_dump(mode="json") for s in draft.sources
            ],
            "updated_at": now,
            "published": now,  # a republication keeps the case's own (`_kept`)
            "url": case_url(base_url, case_id),
            # The draft keeps each accepted translation's model and English; the case, which texts they are.
            "machine_translations": sorted(draft.machine_translated),
        }
    )


def _kept(case: Case) -> dict[str, Any]:
    """What no draft carries and a republication keeps: the case's withdrawal (`incidentlib withdraw`), the
    ids merged into it (`aliases`) and when it was first published (none for a case published before that
    was recorded: the republication's time would be wrong)."""
    return {**{name: getattr(case, name) for name in WITHDRAWAL}, "aliases": case.aliases, "published": case.published}


def _case_of(store: Store, draft: Draft) -> str | None:
    """A case already published from this draft by a run that stopped before marking the draft.

    The case is written before the draft is marked; after a crash between the two, the
    case with exactly the draft's sources is its own, and is updated, not published again.
    """
    key = source_key(draft)
    for case_id in store.ids("case"):
        try:
            case = store.read_case(case_id)
        except InvalidRecord:
            continue
        if source_key(case) == key:
            return case_id
    return None


def _promote_one(store: Store, settings: Settings, draft_id: str) -> Promotion:
    outcome: list[Promotion] = []

    def change(draft: Draft) -> Draft | None:
        if draft.state != DraftState.APPROVED:  # another process got here first
            outcome.append(Promotion(draft_id, "skipped", draft.case_id))
            return None
        missing = missing_for_publication(draft, settings.required_languages)
        if missing:
            outcome.append(Promotion(draft_id, "incomplete", draft.case_id, missing))
            return None
        case_id = draft.case_id or _case_of(store, draft)
        if case_id and store.exists("case", case_id):
            case = case_from_draft(draft, case_id, settings.public_base_url)
            try:
                store.update_case(case_id, lambda old: case.model_copy(update=_kept(old)))
            except InvalidRecord:  # a broken file is replaced by the draft's case, as before withdrawals existed
                store.write_case(case)
            what: Outcome = "updated"
        else:
            case = store.publish_case(lambda new_id: case_from_draft(draft, new_id, settings.public_base_url))
            what = "published"
        outcome.append(Promotion(draft_id, what, case.id))
        entry = Transition(
            at=utc_now(),
            by="incidentlib promote",
            from_state=draft.state,
            to_state=DraftState.PUBLISHED,
            comment=f"published as {case.id}",
        )
        return draft.model_copy(
            update={
                "state": DraftState.PUBLISHED,
                "case_id": case.id,
                "url": case.url,
                "updated_at": case.updated_at,
                "history": [*draft.history, entry],
            }
        )

    store.update_draft(draft_id, change)
    return outcome[0]


def promote(store: Store, settings: Settings, draft_ids: list[str] | None = None) -> PromoteReport:
    """Publish every approved draft (or those of `draft_ids`); see the module's docstring."""
    report = PromoteReport()
    # Cut short at any point by a signal, a lock wait (up to 120 s) included: each write is atomic,
    # and a case written before its draft was marked is found by the next run.
    with interrupt.interruptible():
        for draft_id in draft_ids if draft_ids is not None else store.ids("draft"):
            interrupt.check()  # a stop asked for: the drafts not reached stay approved for the next run
            try:
                draft = store.read_draft(draft_id)
            except InvalidRecord as exc:  # one broken draft does not hold up the others
                report.drafts.append(Promotion(draft_id, "incomplete", None, [f"not a valid draft: {exc}"]))
                continue
            if draft.state == DraftState.APPROVED:
                report.drafts.append(_promote_one(store, settings, draft_id))
    return report
