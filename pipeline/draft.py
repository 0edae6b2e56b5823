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
import re
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

from pipeline.evidence import evidence_for, field_parts, holds
from pipeline.extract import Extraction
from pipeline.extract.durations import durations_in
from pipeline.extract.prose import (
    DEFAULT_THRESHOLD,
    HEADING_CONFIDENCE,
    Passage,
    impact_region,
    impact_users,
    remediation_item,
    written_passages,
)
from pipeline.extract.severity import severity_in
from pipeline.extract.symptoms import chosen, symptom_passages, symptoms_text
from pipeline.extract.tags import suggest_term_reasons
from pipeline.fields import DEFAULTS, TERM_LISTS
from pipeline.ids import canonical_url, draft_id_for, part_draft_id
from pipeline.models import (
    Draft,
    DraftSource,
    DraftState,
    Evidence,
    FetchFailure,
    Origin,
    Review,
    SectionField,
    SourceEntry,
    Timeline,
    Transition,
    utc_now,
)
from pipeline.precedence import Said, address_said, decide, feed_said, guess_source_kind, registry_said
from pipeline.reasons import Reason
from pipeline.suggestions import takeable
from pipeline.vocabulary import Kind

__all__ = [
    "DEFAULT_THRESHOLD",
    "apply_extraction",
    "field_proposals",
    "field_suggestions",
    "guess_source_kind",
    "new_draft",
    "record_failure",
]

# Who a crawl's note in a draft's history is by (the characters the gate removed from a fetched page).
CRAWL = "incidentlib crawl"
_ITEM = re.compile(r"^- ", re.MULTILINE)
_IMPACT_LIMIT = 600
_ACTION_LIMIT = 600
# How sure the rules that are not prose cues are: a stated severity or duration, an opening, a term's words.
_STATED = 0.9
_DERIVED = 0.8
# A symptom passage lowered this far (a plan, a negation, a cause) is no suggestion either: it would be noise.
_SUGGESTED = 0.3
_TERM = 0.7
# How sure a root cause's or a contributing factor's term is from the words of the passage that tells
# it: a term phrase names it ("race condition"), two different words of it are two independent
# signals ("bug", "regression"), one word alone ("policy", "dependency") only a suggestion. The term
# is no surer than that passage either: the lower of the two is its confidence.
_TERM_SURE = {"phrase": 0.85, "two-signals": 0.7, "one-word": 0.4}
# The sections a term field's passages come from: a vocabulary, and the section field that tells it.
_TERM_FIELDS: dict[str, tuple[Kind, SectionField]] = {
    "root_cause": ("root_causes", SectionField.ROOT_CAUSE),
    "contributing": ("contributing", SectionField.CONTRIBUTING),
}


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


def _texts(text: str | None) -> dict[str, str] | None:
    return {"en": text} if text else None


def _items(extraction: Extraction, field: SectionField) -> list[str]:
    """Each item of the field's sections, its links kept as "text (URL)" and template sentences and
    bare link labels dropped (`extract.lists`); without list items, each paragraph."""
    items = list(extraction.items.get(field, []))
    if not items:
        for text in extraction.texts_for(field):
            parts = _ITEM.split(text) if _ITEM.search(text) else re.split(r"\n\s*\n", text)
            items += [" ".join(p.split()) for p in parts if p.strip()]
    return items


def _actions(
    extraction: Extraction, field: SectionField, threshold: float = DEFAULT_THRESHOLD
) -> list[dict[str, Any]] | None:
    """Each item of the field's sections as one action; under a remediation heading, only the items
    that tell a step taken (`prose.remediation_item`: a failure listed there is no remediation)."""
    items = _items(extraction, field)
    if field == SectionField.REMEDIATION:
        items = [item for item in items if remediation_item(item).confidence >= threshold]
    return [{"text": {"en": item[:_ACTION_LIMIT]}} for item in items] or None


def _timeline(extraction: Extraction) -> dict[str, Any] | None:
    """Time to detection and to resolution, where the document states them or its timeline shows them
    (the resolution also from the front matter's start and resolution times, both in a stated zone);
    none for a document that tells several incidents: each one's draft has its own."""
    if extraction.parts:
        return None
    found = durations_in(extraction.sections)
    resolved = found.resolved_after or extraction.front.resolved_after
    if found.detected_after is None and resolved is None:
        return None
    return Timeline(detected_after=found.detected_after, resolved_after=resolved).model_dump(mode="json")


def _cued_passages(
    extraction: Extraction, threshold: float = DEFAULT_THRESHOLD, *, below: bool = False
) -> dict[str, list[Passage]]:
    """The prose fields' passages from sentences and timeline entries, for the fields that no
    section under a heading of their name fills: those the field holds (`prose.written_passages`: at
    `threshold` or above), or with `below` those it offers (its suggestions)."""
    found = {}
    for name, passages in extraction.passages.items():
        if extraction.texts_for(SectionField(name)):
            continue
        written, offered = written_passages(name, passages, threshold)
        chosen = offered if below else written
        if chosen:
            found[name] = chosen
    return found


def _cued(extraction: Extraction, threshold: float = DEFAULT_THRESHOLD) -> dict[str, str]:
    """Each cue-drafted prose field's text: its passages above the threshold, one a line."""
    return {
        name: "\n".join(p.text for p in passages) for name, passages in _cued_passages(extraction, threshold).items()
    }


def _impact(text: str) -> dict[str, str]:
    """The impact: its scope the passage, its users and region what the passage names, if it does."""
    users, region = impact_users(text), impact_region(text)
    return {
        "scope": " ".join(text.split())[:_IMPACT_LIMIT],
        "users": users[0] if users else "unknown",
        "region": region[0] if region else "unknown",
    }


def _affected(names: list[str]) -> dict[str, str] | None:
    """An impact from the front matter's affected things the vocabulary does not know, for the writer."""
    return (
        {"scope": f"Affected: {', '.join(names)}"[:_IMPACT_LIMIT], "users": "unknown", "region": "unknown"}
        if names
        else None
    )


@dataclass(frozen=True)
class _Term:
    """A term a field's passages suggest: how (`Suggestion.how`), how sure, and its words as
    (start in the extraction's text, word), first seen first; a start of -1 where the passage
    does not stand in the text as extracted."""

    term: str
    how: str
    confidence: float
    words: tuple[tuple[int, str], ...]


def _passages_of(extraction: Extraction, field: SectionField, threshold: float) -> list[tuple[str, float]]:
    """The passages that tell `field`, with how sure each is: the sections under a heading that names
    it (or whose own words do, sure enough); without them, its cue sentences, below the threshold too."""
    sections = [
        (s.text, HEADING_CONFIDENCE if s.confidence is None else s.confidence)
        for s in extraction.sections
        if s.field == field and s.text and (s.confidence is None or s.confidence >= threshold)
    ]
    if sections:
        return sections
    cued = _cued_passages(extraction, threshold).get(field.value, [])
    cued += _cued_passages(extraction, threshold, below=True).get(field.value, [])
    return [(p.text, p.confidence) for p in cued]


def _field_terms(extraction: Extraction, name: str, threshold: float = DEFAULT_THRESHOLD) -> list[_Term]:
    """The terms the passages of the term field `name` (root_cause, contributing) suggest, surest
    first: each on its best passage, as sure as the lower of its reason and that passage."""
    kind, field = _TERM_FIELDS[name]
    text = extraction.text or ""
    best: dict[str, tuple[float, int, _Term]] = {}
    for passage, sure in _passages_of(extraction, field, threshold):
        at = text.find(passage)
        for found in suggest_term_reasons(kind, passage, min_hits=1, limit=20, one_word=True):
            confidence = min(_TERM_SURE[found.how], sure)
            firsts: dict[str, int] = {}
            for start, end in found.spans:
                firsts.setdefault(passage[start:end].lower(), start)
            words = tuple(
                (at + start if at >= 0 else -1, passage[start : start + len(word)]) for word, start in firsts.items()
            )
            term = _Term(found.term, found.how, confidence, words)
            if found.term not in best or (confidence, found.hits) > best[found.term][:2]:
                best[found.term] = (confidence, found.hits, term)
    ranked = sorted(best.values(), key=lambda b: (-b[0], -b[1], b[2].term))
    return [term for _, _, term in ranked]


def _term_field_evidence(extraction: Extraction, threshold: float, *, below: bool) -> list[Evidence | None]:
    """The words of each term the root cause and contributing fields were written with (or, with
    `below`, of each term offered as a suggestion), by the rule `vocabulary.<kind>.<how>.<term>`:
    the rule names the term and its reason, each quote one of its words."""
    text = extraction.text or ""
    found: list[Evidence | None] = []
    for name, (kind, _) in _TERM_FIELDS.items():
        terms = _field_terms(extraction, name, threshold)
        written = [t for t in terms if t.confidence >= threshold][: 1 if name == "root_cause" else None]
        chosen = [t for t in terms if _SUGGESTED <= t.confidence < threshold] if below else written
        for index, term in enumerate(chosen):
            target = name if below or name == "root_cause" else f"{name}.{index}"
            rule = f"vocabulary.{kind}.{term.how}.{term.term}"
            found += [
                _evidence(target, text, rule, word, start, term.confidence)
                for start, word in term.words[:_WORDS_PER_TERM]
                if start >= 0
            ]
    return found


def field_proposals(extraction: Extraction, threshold: float = DEFAULT_THRESHOLD) -> dict[str, Any]:
    """What the extractor would put in each case field, as JSON values: of the passages its rules
    found, those whose confidence reaches `threshold`."""
    front = extraction.front
    stated = severity_in(extraction.text)
    severity = front.severity.value if front.severity else stated.term if stated else None
    joined = {f: "\n\n".join(extraction.texts_for(f, threshold)) or None for f in SectionField}
    # A section under a heading that names the field wins; the cue sentences fill it otherwise.
    cued = _cued(extraction, threshold)
    impact = joined[SectionField.IMPACT] or cued.get("impact")
    components = list(
        dict.fromkeys((front.components.value if front.components else []) + extraction.tags.get("components", []))
    )
    # A term on a phrase or two signals of the passages that tell the field, sure enough; one word is a suggestion.
    root_causes = [t.term for t in _field_terms(extraction, "root_cause", threshold) if t.confidence >= threshold]
    contributing = [
        t.term for t in _field_terms(extraction, "contributing", threshold) if t.confidence >= threshold
    ] or extraction.tags.get("contributing")
    return {
        "org": extraction.org,
        "org_slug": extraction.org_slug,
        "date": extraction.date,
        "date_kind": extraction.date_kind,
        "title": _texts(extraction.title),
        "domain": extraction.tags.get("domains", [])[:2] or None,
        "severity": severity,
        "summary": _texts(extraction.summary),
        "symptoms_text": _texts(symptoms_text(symptom_passages(extraction.sections), threshold)),
        "trigger": _texts(joined[SectionField.TRIGGER] or cued.get("trigger")),
        "impact": _impact(impact) if impact else _affected(front.affected),
        "detection": _texts(joined[SectionField.DETECTION] or cued.get("detection")),
        "root_cause": root_causes[0] if root_causes else None,
        "lessons": _texts(joined[SectionField.LESSONS]),
        "symptoms": extraction.tags.get("symptoms") or None,
        "components": components or None,
        "contributing": contributing or None,
        "remediation": _actions(extraction, SectionField.REMEDIATION, threshold)
        or [
            {"text": {"en": p.text[:_ACTION_LIMIT]}}
            for p in _cued_passages(extraction, threshold).get("remediation", [])
        ]
        or None,
        "action_items": _actions(extraction, SectionField.ACTION_ITEMS),
        "timeline": _timeline(extraction),
    }


def _evidence(
    field: str, text: str, rule: str, quote: str, start: int | None = None, confidence: float | None = None
) -> Evidence | None:
    """One field's passage, when the quote stands in the text as extracted (a section's text may
    be joined differently from the page's text: then there is no passage to point at)."""
    quote = quote.strip()
    try:
        return evidence_for(field, text, rule, quote=quote, start=start, confidence=confidence) if quote else None
    except ValueError:
        return None


# The case field a section under a heading fills, which a SectionField names (the summary has its own
# rule; the timeline fills durations, whose evidence is the lines they rest on).
_SECTION_PROPOSAL: dict[SectionField, str] = {
    section: section.value for section in SectionField if section not in (SectionField.SUMMARY, SectionField.TIMELINE)
}


def field_evidence(
    extraction: Extraction, proposals: dict[str, Any] | None = None, threshold: float = DEFAULT_THRESHOLD
) -> list[Evidence]:
    """The passage each proposal of `field_proposals` came from, the rule that chose it and how
    sure it is (`proposals`: the extraction's, when the caller has them already)."""
    text = extraction.text or ""
    found: list[Evidence | None] = []
    durations = durations_in(extraction.sections)
    found += _front_evidence(extraction, stated_resolution=durations.resolved_after is not None)
    severity = severity_in(text) if extraction.front.severity is None else None
    if severity is not None:
        found.append(_evidence("severity", text, "severity.stated", severity.quote, severity.start, _STATED))
    # A document of several incidents has no durations of its own (`_timeline`).
    durations = durations_in(extraction.sections if not extraction.parts else [])
    for name, quotes in durations.basis.items():
        how = durations.rule.get(name, "stated")
        sure = _STATED if how == "stated" else _DERIVED
        found += [_evidence(f"timeline.{name}", text, f"duration.{how}", quote, None, sure) for quote in quotes]
    # Fields drafted from the section under a heading that names them: the section is the passage.
    # A section whose heading names the field (`heading`), or whose own sentences do (`section-words`,
    # less sure): the one gate decides whether it is written.
    for section in extraction.sections:
        proposal = _SECTION_PROPOSAL.get(section.field) if section.field is not None and section.text else None
        if proposal is not None and (section.confidence is None or section.confidence >= threshold):
            rule, sure = (
                ("heading", HEADING_CONFIDENCE) if section.confidence is None else ("section-words", section.confidence)
            )
            found.append(_evidence(proposal, text, f"{rule}.{proposal}", section.text, None, sure))
    found += _impact_part_evidence(extraction, threshold)
    # Fields drafted from cue sentences and timeline entries: each passage, by the rule that chose it.
    for name, passages in _cued_passages(extraction, threshold).items():
        for index, passage in enumerate(passages):
            target = f"remediation.{index}" if name == "remediation" else name
            found.append(_evidence(target, text, passage.rule, passage.text, None, passage.confidence))
    if extraction.summary:
        found.append(_evidence("summary", text, "summary.opening", extraction.summary, None, _DERIVED))
    # What users and operators saw: each passage the field was written from, by its rule.
    found += [
        _evidence("symptoms_text", text, p.rule, p.text, None, p.confidence)
        for p in chosen(symptom_passages(extraction.sections), threshold)
    ]
    found += _term_evidence(
        extraction, proposals if proposals is not None else field_proposals(extraction, threshold), threshold
    )
    found += _term_field_evidence(extraction, threshold, below=False)
    return [entry for entry in found if entry is not None]


def field_suggestions(extraction: Extraction, threshold: float = DEFAULT_THRESHOLD) -> list[Evidence]:
    """The passages the rules found but trust too little to write (confidence below `threshold`),
    each with its evidence: a cue sentence in the future tense, a negated one, a quoted one, an
    item under a remediation heading that tells a failure."""
    text = extraction.text or ""
    found: list[Evidence | None] = []
    for name, passages in _cued_passages(extraction, threshold, below=True).items():
        found += [_evidence(name, text, p.rule, p.text, None, p.confidence) for p in passages]
    for item in _items(extraction, SectionField.REMEDIATION):
        passage = remediation_item(item)
        if passage.confidence < threshold:
            found.append(_evidence("remediation", text, passage.rule, item, None, passage.confidence))
    found += [
        _evidence("symptoms_text", text, p.rule, p.text, None, p.confidence)
        for p in symptom_passages(extraction.sections)
        if _SUGGESTED <= p.confidence < threshold
    ]
    found += _term_field_evidence(extraction, threshold, below=True)
    return [entry for entry in found if entry is not None]


def _front_evidence(extraction: Extraction, stated_resolution: bool) -> list[Evidence | None]:
    """The front matter's lines at the text's head, for the fields they filled: rule `front-matter.<key>`
    (`stated_resolution`: the text states the resolution time itself, which wins)."""
    text, front = extraction.text or "", extraction.front
    found: list[Evidence | None] = []
    if front.severity is not None:
        found.append(
            _evidence("severity", text, f"front-matter.{front.severity.key}", front.severity.line, None, _STATED)
        )
    if not stated_resolution and front.resolved_after is not None and front.started and front.resolved:
        found += [
            _evidence("timeline.resolved_after", text, f"front-matter.{fact.key}", fact.line, None, _STATED)
            for fact in (front.started, front.resolved)
        ]
    if front.components is not None:
        found += [
            _evidence(
                f"components.{i}", text, f"front-matter.{front.components.key}", front.components.line, None, _STATED
            )
            for i in range(len(front.components.value))
        ]
    if front.affected_line and not extraction.texts_for(SectionField.IMPACT) and not extraction.passages.get("impact"):
        found.append(_evidence("impact.scope", text, "front-matter.affected", front.affected_line, None, _STATED))
    return found


def _impact_part_evidence(extraction: Extraction, threshold: float = DEFAULT_THRESHOLD) -> list[Evidence | None]:
    """Where the impact's users and region stand: within the passages the impact was drafted from."""
    text = extraction.text or ""
    found: list[Evidence | None] = []
    cued = _cued_passages(extraction, threshold).get("impact", [])
    sure = HEADING_CONFIDENCE if extraction.texts_for(SectionField.IMPACT) else (cued[0].confidence if cued else None)
    for passage in extraction.texts_for(SectionField.IMPACT) or [p.text for p in cued]:
        at = text.find(passage)
        for part, named in (("users", impact_users(passage)), ("region", impact_region(passage))):
            if named is not None and at >= 0 and f"impact.{part}" not in {e.field for e in found if e}:
                found.append(_evidence(f"impact.{part}", text, f"cue.impact.{part}", named[0], at + named[1], sure))
    return found


# The case field each vocabulary's suggested terms fill: the case's lists of terms, by their vocabulary.
_TAG_FIELD: dict[Kind, str] = {kind: name for name, kind in TERM_LISTS.items()}
_WORDS_PER_TERM = 3


def _term_evidence(
    extraction: Extraction, proposals: dict[str, Any], threshold: float = DEFAULT_THRESHOLD
) -> list[Evidence | None]:
    """For each drafted term of a vocabulary field, the words of the text that suggested it (its
    first few distinct ones, where each first stands), by the rule `vocabulary.<kind>`."""
    text = extraction.text or ""
    found: list[Evidence | None] = []
    for kind, name in _TAG_FIELD.items():
        if name in _TERM_FIELDS and any(t.confidence >= threshold for t in _field_terms(extraction, name, threshold)):
            continue  # drafted from the field's own passages: `_term_field_evidence` has its words
        by_term = {s.term: s for s in extraction.tag_reasons.get(kind, [])}
        for index, term in enumerate(proposals.get(name) or []):
            reason = by_term.get(term)
            if reason is None:
                continue
            firsts: dict[str, int] = {}
            for start, end in reason.spans:
                firsts.setdefault(text[start:end].lower(), start)
            for start in list(firsts.values())[:_WORDS_PER_TERM]:
                end = next(b for a, b in reason.spans if a == start)
                found.append(_evidence(f"{name}.{index}", text, f"vocabulary.{kind}", text[start:end], start, _TERM))
    return found


def apply_extraction(
    draft: Draft, entry: SourceEntry, extraction: Extraction, origin: Origin, threshold: float = DEFAULT_THRESHOLD
) -> Draft:
    """The draft after a successful fetch: machine fields refreshed, a person's edits kept; of the
    passages the rules found, those below `threshold` kept as suggestions, not written.

    Once a writer has taken the draft (any state after `extracted`), its case fields
    are theirs and the reviewer's: only the text, the sections and the origin follow
    the source, so the reviewer can see what changed. When the gate removed characters from a text
    that is new to the draft, its history says which (a note of the crawl's, `cleaned`).
    """
    updated = _applied(draft, entry, extraction, origin, threshold)
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


def _applied(draft: Draft, entry: SourceEntry, extraction: Extraction, origin: Origin, threshold: float) -> Draft:
    if draft.state != DraftState.EXTRACTED:
        proposals: dict[str, Any] = {}
    else:
        proposals = {
            **field_proposals(extraction, threshold),
            **{k: v for k, v in _hint_proposals(entry).items() if v},
        }
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
    if not proposals:
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
    evidence = [e for e in field_evidence(extraction, proposals, threshold) if field_parts(e.field)[0] in mine]
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
    suggestions = [e for e in field_suggestions(extraction, threshold) if e.field in mine]
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
