"""Drafts, pure: how a draft begins for a source, and how a crawl's extraction updates it.

A new draft carries only what the registry and the URL tell. Its review fields are
empty: nobody has written or reviewed it yet.

A crawl may update a draft many times; a person may edit it in between. The rule that
keeps both safe: for every field the extractor fills, the draft remembers a hash of the
value it wrote (`Draft.extracted`). On the next crawl a field is replaced only if it is
still empty or still holds exactly what the extractor wrote; anything else is a
person's work and is left alone. The full text and the sections are always the
extractor's own and are refreshed.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

from pipeline.evidence import field_parts, holds
from pipeline.extract import Extraction
from pipeline.extract.prose import (
    DEFAULT_THRESHOLD,
)
from pipeline.fields import DEFAULTS
from pipeline.finder import Finder
from pipeline.ids import canonical_url, draft_id_for, part_draft_id
from pipeline.models import (
    Draft,
    DraftSource,
    DraftState,
    Evidence,
    FetchFailure,
    Origin,
    Review,
    SourceEntry,
    Transition,
    utc_now,
)
from pipeline.precedence import Said, address_said, decide, feed_said, guess_source_kind, registry_said
from pipeline.propose import propose
from pipeline.reasons import Reason
from pipeline.suggestions import takeable, undismissed

__all__ = [
    "DEFAULT_THRESHOLD",
    "DraftRules",
    "apply_extraction",
    "field_proposals",
    "field_suggestions",
    "guess_source_kind",
    "new_draft",
    "record_failure",
]

# Who a crawl's note in a draft's history is by (the characters the gate removed from a fetched page).
CRAWL = "incidentlib crawl"


def _hash(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


def _is_empty(name: str, value: Any) -> bool:
    """Nothing, or the field's default: the vocabulary's `unknown`, an impact of unknown parts, a timeline of none."""
    return value in (None, [], {}, "") or value == DEFAULTS.get(name)


def _merge(draft: Draft, proposals: dict[str, Any], changes: dict[str, Any]) -> Draft:
    """Apply the extractor's proposals where the field is still the extractor's; then `changes`.

    A field is the extractor's when it holds exactly what the extractor last wrote, or
    when it is empty and the extractor never wrote it. A field a person emptied is
    theirs: it stays empty. A proposal the model rejects (an odd date in a page's
    metadata) is dropped, not allowed to sink the draft.
    """
    data = draft.model_dump(mode="json")
    extracted = dict(draft.extracted)
    written: list[str] = []
    for name, proposal in proposals.items():
        if proposal is None:
            continue
        current = data[name]
        untouched = extracted.get(name) == _hash(current) if name in extracted else _is_empty(name, current)
        if untouched and _valid(name, proposal):
            data[name] = proposal
            written.append(name)
    data.update(changes)
    merged = Draft.model_validate(data)
    # Hash what was stored (after the model normalised it), or the next crawl would see an edit.
    stored = merged.model_dump(mode="json")
    extracted.update({name: _hash(stored[name]) for name in written})
    return merged.model_copy(update={"extracted": extracted})


@functools.cache
def _field_adapter(name: str) -> TypeAdapter[Any]:
    """A validator of one field of a draft, with its constraints."""
    return TypeAdapter(Draft.model_fields[name].rebuild_annotation())


def _valid(name: str, value: Any) -> bool:
    try:
        _field_adapter(name).validate_python(value)
    except ValidationError:
        return False
    return True


def _said_proposals(said: Said) -> dict[str, Any]:
    return {
        "org": said.org,
        "date": said.date,
        "date_kind": said.date_kind if said.date else None,
        "title": {"en": said.title} if said.title else None,
    }


def _hint_proposals(entry: SourceEntry) -> dict[str, Any]:
    """The registry's hints, which win over everything an extraction proposes (pipeline.precedence)."""
    return _said_proposals(registry_said(entry))


def new_draft(entry: SourceEntry) -> Draft:
    """The draft a source starts as, before anything is fetched: review fields left open; its org,
    title and date what the registry and the feed that proposed it say (pipeline.precedence, the
    page not read yet: the address's guess of an org waits for it), its kind the registry's or
    the one its URL suggests."""
    said = decide(registry_said(entry), Said(), feed_said(entry), address_said(entry.url, org=False))
    blank = Draft(
        id=draft_id_for(entry.url),
        sources=[DraftSource(url=entry.url, kind=said.kind or guess_source_kind(entry.url))],
        origin=Origin(url=entry.url, canonical_url=canonical_url(entry.url)),
        review=Review(),
        created_at=utc_now(),
    )
    return _merge(blank, _said_proposals(said), {})


def part_entry(entry: SourceEntry) -> SourceEntry:
    """The registry's entry as its hints hold for one incident of a document that tells several:
    the title and date it (or its feed) gives are the document's, not the incident's; the org is both's."""
    feed_entry = entry.feed_entry.model_copy(update={"title": None, "date": None})
    return entry.model_copy(update={"title": None, "date": None, "feed_entry": feed_entry})


def new_part_draft(entry: SourceEntry, document_id: str, number: int) -> Draft:
    """The draft of incident `number` of the document drafted as `document_id`, before it is read."""
    blank = new_draft(part_entry(entry))
    return blank.model_copy(update={"id": part_draft_id(document_id, number), "part_of": document_id})


def field_proposals(extraction: Extraction, threshold: float = DEFAULT_THRESHOLD) -> dict[str, Any]:
    """What the rules would put in each case field, as JSON values (`propose(...).values()`)."""
    return propose(extraction, threshold).values()


def field_evidence(
    extraction: Extraction, proposals: dict[str, Any] | None = None, threshold: float = DEFAULT_THRESHOLD
) -> list[Evidence]:
    """The passage each written field came from, the rule that chose it and how sure it is
    (`propose(...).evidence()`; `proposals` is accepted for callers that have them, and unused)."""
    del proposals
    return propose(extraction, threshold).evidence()


def field_suggestions(extraction: Extraction, threshold: float = DEFAULT_THRESHOLD) -> list[Evidence]:
    """The passages offered beside each field, below `threshold` (`propose(...).suggestions()`)."""
    return propose(extraction, threshold).suggestions()


@dataclass(frozen=True)
class DraftRules:
    """How the drafter writes a draft's fields (`pipeline.propose`): a passage at or above `threshold`
    is written, one below it offered as a suggestion; the `finder`, when given, proposes beside the rules."""

    threshold: float = DEFAULT_THRESHOLD
    finder: Finder | None = None


def apply_extraction(
    draft: Draft, entry: SourceEntry, extraction: Extraction, origin: Origin, rules: DraftRules = DraftRules()
) -> Draft:
    """The draft after a successful fetch: machine fields refreshed, a person's edits kept; of the
    passages the rules (and the finder, when `rules` give one) found, those below the threshold kept
    as suggestions, best first, not written (`pipeline.propose`).

    Once a writer has taken the draft (any state after `extracted`), its case fields
    are theirs and the reviewer's: only the text, the sections and the origin follow
    the source, so the reviewer can see what changed. When the gate removed characters from a text
    that is new to the draft, its history says which (a note of the crawl's, `cleaned`).
    """
    updated = _applied(draft, entry, extraction, origin, rules)
    if not extraction.removed or draft.text == extraction.text:
        return updated
    note = Transition(
        at=utc_now(),
        by=CRAWL,
        from_state=updated.state,
        to_state=updated.state,
        comment=f"{extraction.removed.note()} of the fetched page",
        action="cleaned",
    )
    return updated.model_copy(update={"history": [*updated.history, note]})


def _applied(draft: Draft, entry: SourceEntry, extraction: Extraction, origin: Origin, rules: DraftRules) -> Draft:
    found = propose(extraction, rules.threshold, rules.finder) if draft.state == DraftState.EXTRACTED else None
    proposals: dict[str, Any] = (
        {**found.values(), **{k: v for k, v in _hint_proposals(entry).items() if v}} if found is not None else {}
    )
    changes = {
        "origin": origin.model_dump(mode="json"),
        "text": extraction.text,
        "sections": [s.model_dump(mode="json") for s in extraction.sections],
        # Offsets into `text`, so they follow it whoever holds the draft; each incident's own draft.
        "incidents": [
            {
                "heading": i.heading,
                "start": i.offset,
                "draft_id": part_draft_id(draft.id, n) if extraction.parts else None,
            }
            for n, i in enumerate(extraction.incidents, start=1)
        ],
    }
    merged = _merge(draft, proposals, changes)
    if found is None:
        return merged  # the writer's draft: its evidence is theirs to keep; `show` marks a stale one
    # Evidence for the fields the extractor holds now (it wrote them, this time or before and
    # nobody changed them) or that are still empty, against the new text: an empty root cause
    # keeps the sentences that tell it, for the writer to class. A person's field keeps none.
    stored = merged.model_dump(mode="json")
    mine = {
        name
        for name in proposals
        if (
            merged.extracted[name] == _hash(stored[name]) if name in merged.extracted else _is_empty(name, stored[name])
        )
    }
    evidence = [e for e in found.evidence() if field_parts(e.field)[0] in mine]
    # A person's field keeps the passages they took into it (pipeline.suggestions) while the text and
    # the field both still hold them; any other machine evidence of theirs would vouch for their words.
    evidence += [
        e
        for e in draft.evidence
        if (name := str(field_parts(e.field)[0])) not in mine
        and takeable(e)
        and holds(e, extraction.text)
        and _holds_passage(stored.get(name), e.quote)
    ]
    # A passage a writer dismissed is not offered again (`suggestions.dismiss_suggestion`).
    suggestions = undismissed([e for e in found.suggestions() if e.field in mine], draft.dismissed_passages)
    return merged.model_copy(update={"evidence": evidence, "suggestions": suggestions})


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _holds_passage(value: Any, quote: str) -> bool:
    """A field's value (a text, its languages, a list of steps) holds the passage, spaces aside."""
    passage = " ".join(quote.split())
    return any(passage in " ".join(text.split()) for text in _strings(value))


def record_failure(draft: Draft, reason: Reason, message: str, http_status: int | None = None) -> Draft:
    """The draft after a failed fetch or extraction: the reason on its origin, nothing else touched."""
    failure = FetchFailure(reason=reason, message=message, http_status=http_status)
    origin = draft.origin.model_copy(update={"failure": failure})
    return draft.model_copy(update={"origin": origin})
