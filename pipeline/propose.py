"""Proposals, pure: one pass over an extraction says what each case field would hold, from which
passage, by which rule, how sure, and what is only offered.

    found = propose(extraction, threshold=0.6, finder=model)
    found.values()        # {"trigger": {"en": ...}, "remediation": [...], ...}: what a crawl writes
    found.evidence()      # the passage each written field came from (Evidence, dotted paths)
    found.suggestions()   # the passages offered beside a field, best first, three a field at most

Writing a field and offering a suggestion are the same proposal on either side of one threshold:
a passage at or above it is written (and is the field's evidence), one below it waits beside the
field for a writer to take or dismiss. The rules (a section under a heading that names the field,
the cue sentences of `extract.prose`, the symptoms' and terms' rules, stated durations) and the
finder (`pipeline.finder`, a model that ranks every candidate sentence, item or row per field) make
proposals alike; each proposal says which made it (`rule`, and `model` for the finder's).

Each source of proposals is read once per pass (`_Reading`): the cue passages, the terms of the
root cause and contributing factors, the durations and the symptoms' passages.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from pipeline.evidence import Span, evidence_for, field_parts
from pipeline.extract import Extraction
from pipeline.extract.durations import Durations, durations_in
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
from pipeline.extract.symptoms import Symptom, chosen, symptom_passages, symptoms_text
from pipeline.extract.tags import suggest_term_reasons
from pipeline.fields import TERM_LISTS
from pipeline.finder import FLOOR, Finder
from pipeline.models import Evidence, SectionField, Timeline
from pipeline.vocabulary import Kind

__all__ = ["OFFERED", "FieldProposal", "Proposals", "propose"]

_ITEM = re.compile(r"^- ", re.MULTILINE)
IMPACT_LIMIT = 600
ACTION_LIMIT = 600
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
# How many passages wait beside one field, best first: more is reading the document again.
OFFERED = 3


@dataclass(frozen=True)
class FieldProposal:
    """One thing the drafter proposes for a field.

    A value proposal (`value` set, `evidence` None) is what the field would hold; a passage proposal
    (`evidence` set) is the passage of the text behind a field, at `evidence.field`'s path. `written`:
    at or above the threshold (the field holds it, the passage is its evidence) or below it (offered,
    `rank` 0 the best). `rule` says which rule chose it, `model` which finder model (None for a rule),
    `reasons` the features that weighed most for the finder's choice."""

    path: str
    written: bool
    rule: str
    value: Any = None
    evidence: Evidence | None = None
    confidence: float | None = None
    model: str | None = None
    reasons: tuple[str, ...] = ()
    rank: int = 0


class Proposals(list[FieldProposal]):
    """The proposals of one pass, with the three views a draft is made of."""

    def values(self) -> dict[str, Any]:
        """Each case field's proposed value (None: nothing to write), as JSON."""
        return {p.path: p.value for p in self if p.evidence is None}

    def evidence(self) -> list[Evidence]:
        return [p.evidence for p in self if p.written and p.evidence is not None]

    def suggestions(self) -> list[Evidence]:
        return [p.evidence for p in self if not p.written and p.evidence is not None]


def _texts(text: str | None) -> dict[str, str] | None:
    return {"en": text} if text else None


def items(extraction: Extraction, field: SectionField) -> list[str]:
    """Each item of the field's sections, its links kept as "text (URL)" and template sentences and
    bare link labels dropped (`extract.lists`); without list items, each paragraph."""
    found = list(extraction.items.get(field, []))
    if not found:
        for text in extraction.texts_for(field):
            parts = _ITEM.split(text) if _ITEM.search(text) else re.split(r"\n\s*\n", text)
            found += [" ".join(p.split()) for p in parts if p.strip()]
    return found


def _actions(
    extraction: Extraction, field: SectionField, threshold: float = DEFAULT_THRESHOLD
) -> list[dict[str, Any]] | None:
    """Each item of the field's sections as one action; under a remediation heading, only the items
    that tell a step taken (`prose.remediation_item`: a failure listed there is no remediation)."""
    found = items(extraction, field)
    if field == SectionField.REMEDIATION:
        found = [item for item in found if remediation_item(item).confidence >= threshold]
    return [{"text": {"en": item[:ACTION_LIMIT]}} for item in found] or None


def _impact(text: str) -> dict[str, str]:
    """The impact: its scope the passage, its users and region what the passage names, if it does."""
    users, region = impact_users(text), impact_region(text)
    return {
        "scope": " ".join(text.split())[:IMPACT_LIMIT],
        "users": users[0] if users else "unknown",
        "region": region[0] if region else "unknown",
    }


def _affected(names: list[str]) -> dict[str, str] | None:
    """An impact from the front matter's affected things the vocabulary does not know, for the writer."""
    return (
        {"scope": f"Affected: {', '.join(names)}"[:IMPACT_LIMIT], "users": "unknown", "region": "unknown"}
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


class _Reading:
    """What one pass reads of an extraction, each read once: the cue passages written and offered,
    each term field's terms, the durations, the symptoms' passages."""

    def __init__(self, extraction: Extraction, threshold: float) -> None:
        self.extraction = extraction
        self.threshold = threshold
        self.text = extraction.text or ""

    def _cued(self, below: bool) -> dict[str, list[Passage]]:
        """The prose fields' passages from sentences and timeline entries, for the fields that no
        section under a heading of their name fills: those the field holds (`prose.written_passages`: at
        the threshold or above), or with `below` those it offers (its suggestions)."""
        found = {}
        for name, passages in self.extraction.passages.items():
            if self.extraction.texts_for(SectionField(name)):
                continue
            written, offered = written_passages(name, passages, self.threshold)
            picked = offered if below else written
            if picked:
                found[name] = picked
        return found

    @functools.cached_property
    def cued(self) -> dict[str, list[Passage]]:
        return self._cued(below=False)

    @functools.cached_property
    def cued_below(self) -> dict[str, list[Passage]]:
        return self._cued(below=True)

    @functools.cached_property
    def durations(self) -> Durations:
        return durations_in(self.extraction.sections)

    @functools.cached_property
    def symptom_passages(self) -> list[Symptom]:
        return symptom_passages(self.extraction.sections)

    def _passages_of(self, field: SectionField) -> list[tuple[str, float]]:
        """The passages that tell `field`, with how sure each is: the sections under a heading that names
        it (or whose own words do, sure enough); without them, its cue sentences, below the threshold too."""
        sections = [
            (s.text, HEADING_CONFIDENCE if s.confidence is None else s.confidence)
            for s in self.extraction.sections
            if s.field == field and s.text and (s.confidence is None or s.confidence >= self.threshold)
        ]
        if sections:
            return sections
        cued = self.cued.get(field.value, []) + self.cued_below.get(field.value, [])
        return [(p.text, p.confidence) for p in cued]

    @functools.cache  # noqa: B019 - one reading lives for one pass
    def terms(self, name: str) -> list[_Term]:
        """The terms the passages of the term field `name` (root_cause, contributing) suggest, surest
        first: each on its best passage, as sure as the lower of its reason and that passage."""
        kind, field = _TERM_FIELDS[name]
        best: dict[str, tuple[float, int, _Term]] = {}
        for passage, sure in self._passages_of(field):
            at = self.text.find(passage)
            for found in suggest_term_reasons(kind, passage, min_hits=1, limit=20, one_word=True):
                confidence = min(_TERM_SURE[found.how], sure)
                firsts: dict[str, int] = {}
                for start, end in found.spans:
                    firsts.setdefault(passage[start:end].lower(), start)
                words = tuple(
                    (at + start if at >= 0 else -1, passage[start : start + len(word)])
                    for word, start in firsts.items()
                )
                term = _Term(found.term, found.how, confidence, words)
                if found.term not in best or (confidence, found.hits) > best[found.term][:2]:
                    best[found.term] = (confidence, found.hits, term)
        ranked = sorted(best.values(), key=lambda b: (-b[0], -b[1], b[2].term))
        return [term for _, _, term in ranked]

    def evidence(
        self, field: str, rule: str, quote: str, start: int | None = None, confidence: float | None = None
    ) -> Evidence | None:
        """One field's passage, when the quote stands in the text as extracted (a section's text may
        be joined differently from the page's text: then there is no passage to point at)."""
        quote = quote.strip()
        try:
            return evidence_for(field, self.text, rule, Span(quote, start), confidence=confidence) if quote else None
        except ValueError:
            return None


def _timeline(r: _Reading) -> dict[str, Any] | None:
    """Time to detection and to resolution, where the document states them or its timeline shows them
    (the resolution also from the front matter's start and resolution times, both in a stated zone);
    none for a document that tells several incidents: each one's draft has its own."""
    if r.extraction.parts:
        return None
    resolved = r.durations.resolved_after or r.extraction.front.resolved_after
    if r.durations.detected_after is None and resolved is None:
        return None
    return Timeline(detected_after=r.durations.detected_after, resolved_after=resolved).model_dump(mode="json")


def _values(r: _Reading) -> dict[str, Any]:
    """What the rules would put in each case field, as JSON values: of the passages they found,
    those whose confidence reaches the threshold."""
    extraction, threshold = r.extraction, r.threshold
    front = extraction.front
    stated = severity_in(extraction.text)
    severity = front.severity.value if front.severity else stated.term if stated else None
    joined = {f: "\n\n".join(extraction.texts_for(f, threshold)) or None for f in SectionField}
    # A section under a heading that names the field wins; the cue sentences fill it otherwise.
    cued = {name: "\n".join(p.text for p in passages) for name, passages in r.cued.items()}
    impact = joined[SectionField.IMPACT] or cued.get("impact")
    components = list(
        dict.fromkeys((front.components.value if front.components else []) + extraction.tags.get("components", []))
    )
    # A term on a phrase or two signals of the passages that tell the field, sure enough; one word is a suggestion.
    root_causes = [t.term for t in r.terms("root_cause") if t.confidence >= threshold]
    contributing = [t.term for t in r.terms("contributing") if t.confidence >= threshold] or extraction.tags.get(
        "contributing"
    )
    return {
        "org": extraction.org,
        "org_slug": extraction.org_slug,
        "date": extraction.date,
        "date_kind": extraction.date_kind,
        "title": _texts(extraction.title),
        "domain": extraction.tags.get("domains", [])[:2] or None,
        "severity": severity,
        "summary": _texts(extraction.summary),
        "symptoms_text": _texts(symptoms_text(r.symptom_passages, threshold)),
        "trigger": _texts(joined[SectionField.TRIGGER] or cued.get("trigger")),
        "impact": _impact(impact) if impact else _affected(front.affected),
        "detection": _texts(joined[SectionField.DETECTION] or cued.get("detection")),
        "root_cause": root_causes[0] if root_causes else None,
        "lessons": _texts(joined[SectionField.LESSONS]),
        "symptoms": extraction.tags.get("symptoms") or None,
        "components": components or None,
        "contributing": contributing or None,
        "remediation": _actions(extraction, SectionField.REMEDIATION, threshold)
        or [{"text": {"en": p.text[:ACTION_LIMIT]}} for p in r.cued.get("remediation", [])]
        or None,
        "action_items": _actions(extraction, SectionField.ACTION_ITEMS),
        "timeline": _timeline(r),
    }


# The case field a section under a heading fills, which a SectionField names (the summary has its own
# rule; the timeline fills durations, whose evidence is the lines they rest on).
_SECTION_PROPOSAL: dict[SectionField, str] = {
    section: section.value for section in SectionField if section not in (SectionField.SUMMARY, SectionField.TIMELINE)
}


def _written_evidence(r: _Reading, values: dict[str, Any]) -> Iterator[Evidence | None]:
    """The passage each written value came from, the rule that chose it and how sure it is."""
    extraction, threshold = r.extraction, r.threshold
    yield from _front_evidence(r, stated_resolution=r.durations.resolved_after is not None)
    severity = severity_in(r.text) if extraction.front.severity is None else None
    if severity is not None:
        yield r.evidence("severity", "severity.stated", severity.quote, severity.start, _STATED)
    # A document of several incidents has no durations of its own (`_timeline`).
    durations = r.durations if not extraction.parts else durations_in([])
    for name, quotes in durations.basis.items():
        how = durations.rule.get(name, "stated")
        sure = _STATED if how == "stated" else _DERIVED
        for quote in quotes:
            yield r.evidence(f"timeline.{name}", f"duration.{how}", quote, None, sure)
    # Fields drafted from the section under a heading that names them: the section is the passage.
    # A section whose heading names the field (`heading`), or whose own sentences do (`section-words`,
    # less sure): the one gate decides whether it is written.
    for section in extraction.sections:
        proposal = _SECTION_PROPOSAL.get(section.field) if section.field is not None and section.text else None
        if proposal is not None and (section.confidence is None or section.confidence >= threshold):
            rule, sure = (
                ("heading", HEADING_CONFIDENCE) if section.confidence is None else ("section-words", section.confidence)
            )
            yield r.evidence(proposal, f"{rule}.{proposal}", section.text, None, sure)
    yield from _impact_part_evidence(r)
    # Fields drafted from cue sentences and timeline entries: each passage, by the rule that chose it.
    for name, passages in r.cued.items():
        for index, passage in enumerate(passages):
            target = f"remediation.{index}" if name == "remediation" else name
            yield r.evidence(target, passage.rule, passage.text, None, passage.confidence)
    if extraction.summary:
        yield r.evidence("summary", "summary.opening", extraction.summary, None, _DERIVED)
    # What users and operators saw: each passage the field was written from, by its rule.
    for p in chosen(r.symptom_passages, threshold):
        yield r.evidence("symptoms_text", p.rule, p.text, None, p.confidence)
    yield from _term_evidence(r, values)
    yield from _term_field_evidence(r, below=False)


def _offered_evidence(r: _Reading) -> Iterator[Evidence | None]:
    """The passages the rules found but trust too little to write (confidence below the threshold),
    each with its evidence: a cue sentence in the future tense, a negated one, a quoted one, an
    item under a remediation heading that tells a failure."""
    for name, passages in r.cued_below.items():
        for p in passages:
            yield r.evidence(name, p.rule, p.text, None, p.confidence)
    for item in items(r.extraction, SectionField.REMEDIATION):
        passage = remediation_item(item)
        if passage.confidence < r.threshold:
            yield r.evidence("remediation", passage.rule, item, None, passage.confidence)
    for symptom in r.symptom_passages:
        if _SUGGESTED <= symptom.confidence < r.threshold:
            yield r.evidence("symptoms_text", symptom.rule, symptom.text, None, symptom.confidence)
    yield from _term_field_evidence(r, below=True)


def _front_evidence(r: _Reading, stated_resolution: bool) -> Iterator[Evidence | None]:
    """The front matter's lines at the text's head, for the fields they filled: rule `front-matter.<key>`
    (`stated_resolution`: the text states the resolution time itself, which wins)."""
    extraction, front = r.extraction, r.extraction.front
    if front.severity is not None:
        yield r.evidence("severity", f"front-matter.{front.severity.key}", front.severity.line, None, _STATED)
    if not stated_resolution and front.resolved_after is not None and front.started and front.resolved:
        for fact in (front.started, front.resolved):
            yield r.evidence("timeline.resolved_after", f"front-matter.{fact.key}", fact.line, None, _STATED)
    if front.components is not None:
        for i in range(len(front.components.value)):
            rule = f"front-matter.{front.components.key}"
            yield r.evidence(f"components.{i}", rule, front.components.line, None, _STATED)
    if front.affected_line and not extraction.texts_for(SectionField.IMPACT) and not extraction.passages.get("impact"):
        yield r.evidence("impact.scope", "front-matter.affected", front.affected_line, None, _STATED)


def _impact_part_evidence(r: _Reading) -> list[Evidence | None]:
    """Where the impact's users and region stand: within the passages the impact was drafted from."""
    extraction = r.extraction
    found: list[Evidence | None] = []
    cued = r.cued.get("impact", [])
    sure = HEADING_CONFIDENCE if extraction.texts_for(SectionField.IMPACT) else (cued[0].confidence if cued else None)
    for passage in extraction.texts_for(SectionField.IMPACT) or [p.text for p in cued]:
        at = r.text.find(passage)
        for part, named in (("users", impact_users(passage)), ("region", impact_region(passage))):
            if named is not None and at >= 0 and f"impact.{part}" not in {e.field for e in found if e}:
                found.append(r.evidence(f"impact.{part}", f"cue.impact.{part}", named[0], at + named[1], sure))
    return found


# The case field each vocabulary's suggested terms fill: the case's lists of terms, by their vocabulary.
_TAG_FIELD: dict[Kind, str] = {kind: name for name, kind in TERM_LISTS.items()}
_WORDS_PER_TERM = 3


def _term_evidence(r: _Reading, values: dict[str, Any]) -> Iterator[Evidence | None]:
    """For each drafted term of a vocabulary field, the words of the text that suggested it (its
    first few distinct ones, where each first stands), by the rule `vocabulary.<kind>`."""
    text = r.text
    for kind, name in _TAG_FIELD.items():
        if name in _TERM_FIELDS and any(t.confidence >= r.threshold for t in r.terms(name)):
            continue  # drafted from the field's own passages: `_term_field_evidence` has its words
        by_term = {s.term: s for s in r.extraction.tag_reasons.get(kind, [])}
        for index, term in enumerate(values.get(name) or []):
            reason = by_term.get(term)
            if reason is None:
                continue
            firsts: dict[str, int] = {}
            for start, end in reason.spans:
                firsts.setdefault(text[start:end].lower(), start)
            for start in list(firsts.values())[:_WORDS_PER_TERM]:
                end = next(b for a, b in reason.spans if a == start)
                yield r.evidence(f"{name}.{index}", f"vocabulary.{kind}", text[start:end], start, _TERM)


def _term_field_evidence(r: _Reading, *, below: bool) -> Iterator[Evidence | None]:
    """The words of each term the root cause and contributing fields were written with (or, with
    `below`, of each term offered as a suggestion), by the rule `vocabulary.<kind>.<how>.<term>`:
    the rule names the term and its reason, each quote one of its words."""
    for name, (kind, _) in _TERM_FIELDS.items():
        terms = r.terms(name)
        written = [t for t in terms if t.confidence >= r.threshold][: 1 if name == "root_cause" else None]
        picked = [t for t in terms if _SUGGESTED <= t.confidence < r.threshold] if below else written
        for index, term in enumerate(picked):
            target = name if below or name == "root_cause" else f"{name}.{index}"
            rule = f"vocabulary.{kind}.{term.how}.{term.term}"
            for start, word in term.words[:_WORDS_PER_TERM]:
                if start >= 0:
                    yield r.evidence(target, rule, word, start, term.confidence)


def _overlaps(a: Evidence, b: Evidence) -> bool:
    return a.start < b.end and b.start < a.end


def _found(r: _Reading, finder: Finder, written: list[Evidence]) -> Iterator[FieldProposal]:
    """The finder's proposals: for each field it ranks, its best candidates, each as sure as the model's
    calibrated score. It writes a field the rules left empty where its held-out figures allow
    (`FinderModel.writes`); everywhere else its candidates are offered, never over a passage written."""
    for found in finder.rank(r.extraction):
        name = found.field
        if found.confidence < FLOOR:
            continue
        evidence = r.evidence(name, f"finder.{name}", found.candidate.text, found.candidate.start, found.confidence)
        if evidence is not None:
            evidence = evidence.model_copy(update={"model": finder.name, "reasons": list(found.reasons)})
        if evidence is None or any(_overlaps(evidence, e) for e in written if field_parts(e.field)[0] == name):
            continue
        yield FieldProposal(
            path=name,
            written=False,
            rule=evidence.rule,
            evidence=evidence,
            confidence=found.confidence,
            model=finder.name,
            reasons=found.reasons,
        )


def _ranked(offered: list[FieldProposal]) -> list[FieldProposal]:
    """The offered passages of each field, best first, at most `OFFERED`; the same passage once."""
    by_field: dict[str, list[FieldProposal]] = {}
    for p in offered:
        assert p.evidence is not None
        root = str(field_parts(p.evidence.field)[0])
        kept = by_field.setdefault(root, [])
        if not any(q.evidence is not None and q.evidence.quote == p.evidence.quote for q in kept):
            kept.append(p)
    ranked: list[FieldProposal] = []
    for root, found in by_field.items():
        # Surest first; a stable sort, so the rules' own offers keep their order among equals (a term's
        # words stand together), and every one of a term field's words is kept.
        order = sorted(found, key=lambda p: -(p.confidence or 0.0))
        kept = order if root in _TERM_FIELDS else order[:OFFERED]
        ranked += [replace(p, rank=rank) for rank, p in enumerate(kept)]
    return ranked


def propose(extraction: Extraction, threshold: float = DEFAULT_THRESHOLD, finder: Finder | None = None) -> Proposals:
    """Everything the drafter proposes for `extraction`: each field's value, the passages written
    (at or above `threshold`) and those offered below it, best first (`OFFERED` a field)."""
    r = _Reading(extraction, threshold)
    values, by_finder = _finder_writes(r, finder, _values(r)) if finder is not None else (_values(r), [])
    found = Proposals(
        FieldProposal(path=name, written=value is not None, rule="value", value=value) for name, value in values.items()
    )
    written = [e for e in _written_evidence(r, values) if e is not None]
    written += by_finder
    found += [
        FieldProposal(
            path=e.field, written=True, rule=e.rule, evidence=e, confidence=e.confidence, model=_model_of(e, finder)
        )
        for e in written
    ]
    offered = [
        FieldProposal(path=e.field, written=False, rule=e.rule, evidence=e, confidence=e.confidence)
        for e in _offered_evidence(r)
        if e is not None
    ]
    if finder is not None:
        offered += list(_found(r, finder, written))
    found += _ranked(offered)
    return found


def _model_of(evidence: Evidence, finder: Finder | None) -> str | None:
    return finder.name if finder is not None and evidence.rule.startswith("finder.") else None


def _finder_writes(r: _Reading, finder: Finder, values: dict[str, Any]) -> tuple[dict[str, Any], list[Evidence]]:
    """The values with the fields the finder may write (`FinderModel.writes`) and the rules left empty
    filled from its best candidates at or above the threshold, and those candidates as evidence."""
    update: dict[str, Any] = {}
    evidence: list[Evidence] = []
    for name, picked in finder.written(r.extraction, r.threshold).items():
        if values.get(name) not in (None, [], {}) or name == "root_cause":
            continue  # the rules' value stands; a root cause is a class of the vocabulary, not a passage
        texts = [c.candidate.text for c in picked]
        if name in ("remediation", "action_items"):
            update[name] = [{"text": {"en": t[:ACTION_LIMIT]}} for t in texts]
        elif name == "impact":
            update[name] = _impact("\n".join(texts))
        else:
            update[name] = {"en": "\n".join(texts)}
        for index, c in enumerate(picked):
            path = f"{name}.{index}" if name in ("remediation", "action_items") else name
            e = r.evidence(path, f"finder.{name}", c.candidate.text, c.candidate.start, c.confidence)
            if e is not None:
                evidence.append(e.model_copy(update={"model": finder.name, "reasons": list(c.reasons)}))
    return {**values, **update}, evidence
