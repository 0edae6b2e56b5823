"""What a record is compared by: its `Doc`, made from a draft or a case. Pure.

A Doc holds only what the rules read (pipeline.similar.index): the org, the incident's span of days, the
terms, the text to find copies by and the narrative to weigh closeness by. It is plain, frozen data, so
that the library's shell keeps it between runs and an unchanged record is not even parsed.
"""

from __future__ import annotations

import calendar
import datetime
from dataclasses import dataclass
from typing import Literal

from pipeline.fields import ACTION_LISTS, NARRATIVE
from pipeline.models import Case, CaseContent, Draft

__all__ = ["PUBLISHED_LAG_DAYS", "Doc", "date_span", "doc_of_case", "doc_of_draft"]

# A report dated by its publication (or last update), not by its incident, tells only that the incident
# came before: up to this many days before, the time a team usually takes to publish a postmortem.
PUBLISHED_LAG_DAYS = 30
_AFTER_THE_FACT = frozenset({"published", "updated"})


@dataclass(frozen=True)
class Doc:
    """A draft or case as the similarity rules see it."""

    id: str
    kind: Literal["draft", "case"]
    org_slug: str | None
    dates: tuple[datetime.date, datetime.date] | None  # the incident's span in days; a partial date widened
    components: frozenset[str]
    symptoms: frozenset[str]
    root_cause: str | None  # None or "unknown" never counts as shared
    text: str  # for near-identical copies: the extracted text, else the narrative
    narrative: str  # narrative fields in every language, for TF-IDF
    # The page a draft of one incident of several was cut from (its `part_of`), or the page itself: a part's
    # text is a slice of its page's, so a page and its parts are one document, never each other's duplicates.
    page: str | None = None


def date_span(date: str | None, kind: str | None = None) -> tuple[datetime.date, datetime.date] | None:
    """The days a partial date stands for (2024 → the year, 2024-03 → March, 2024-03-02 → that day),
    reaching back `PUBLISHED_LAG_DAYS` before when it is the report's date rather than the incident's."""
    if not date:
        return None
    try:
        parts = [int(p) for p in date.split("-")]
        year = parts[0]
        if len(parts) == 1:
            first, last = datetime.date(year, 1, 1), datetime.date(year, 12, 31)
        elif len(parts) == 2:
            month = parts[1]
            first = datetime.date(year, month, 1)
            last = datetime.date(year, month, calendar.monthrange(year, month)[1])
        else:
            first = last = datetime.date(year, parts[1], parts[2])
        if kind in _AFTER_THE_FACT:
            first -= datetime.timedelta(days=PUBLISHED_LAG_DAYS)
    except (ValueError, OverflowError):  # a date of the record's shape that no calendar has (2024-00): no span
        return None
    return first, last


def _narrative(record: CaseContent) -> str:
    texts: list[str] = []
    for name in NARRATIVE:
        value = getattr(record, name, None) or {}
        texts += [value[lang] for lang in sorted(value)]
    for name in ACTION_LISTS:
        for action in getattr(record, name, None) or ():
            texts += [action.text[lang] for lang in sorted(action.text)]
    return "\n".join(t for t in texts if t)


def _doc(
    record: CaseContent, record_id: str, kind: Literal["draft", "case"], text: str | None, page: str | None = None
) -> Doc:
    narrative = _narrative(record)
    root_cause = record.root_cause if record.root_cause and record.root_cause != "unknown" else None
    return Doc(
        id=record_id,
        kind=kind,
        org_slug=record.org_slug or None,
        dates=date_span(record.date, record.date_kind),
        components=frozenset(record.components),
        symptoms=frozenset(record.symptoms),
        root_cause=root_cause,
        text=text or narrative,
        narrative=narrative,
        page=page,
    )


def doc_of_draft(draft: Draft) -> Doc:
    """A draft's Doc: its extracted text when it has one (a failed fetch's draft has none)."""
    return _doc(draft, draft.id, "draft", draft.text, draft.part_of or (draft.id if draft.incidents else None))


def doc_of_case(case: Case, text: str | None = None) -> Doc:
    """A case's Doc; `text` is its published draft's extracted text (a case holds none of its own)."""
    return _doc(case, case.id, "case", text)
