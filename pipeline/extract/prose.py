"""Prose fields from sentences and timeline entries, pure: trigger, detection, impact, remediation.

    prose_passages(sections) -> {field: [Passage, ...]}

A document names its trigger or its detection under a heading of that name less often than
it says them in a sentence ("The outage was triggered by a change to the DNS records", "We
were paged at 14:02"). Each passage here is an exact sentence of a paragraph, or the event of
a timeline entry, so it can be quoted back into the text as evidence. Precision first:

1. timeline entries: the first one where the problem began is the trigger, the first
   alert, page or report after it the detection, the entries after the start with a
   remediation cue ("rolled back", "restarted") the remediation;
2. sentences of the paragraphs outside the timeline, the action items and the lessons,
   with a field's cue words. A sentence of a section named for a field stays with that
   field's heading (the draft takes the section whole); one sentence fills two fields at
   most ("X caused Y to fail"); each field keeps only its first few passages.

The draft prefers a section under a heading that names the field; these fill the field
otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from pipeline.extract.blocks import Block
from pipeline.extract.durations import TimelineEntry, reports_problem, starts_problem, timeline_entries
from pipeline.extract.lexicon import (
    ACCIDENT as _ACCIDENT,
)
from pipeline.extract.lexicon import (
    ALERT_TRIGGERED as _ALERT_TRIGGERED,
)
from pipeline.extract.lexicon import (
    AUDIENCE as _AUDIENCE,
)
from pipeline.extract.lexicon import (
    BACKGROUND as _BACKGROUND,
)
from pipeline.extract.lexicon import (
    CAUSED as _CAUSED,
)
from pipeline.extract.lexicon import (
    COUNTERFACTUAL as _COUNTERFACTUAL,
)
from pipeline.extract.lexicon import (
    CUES as _CUES,
)
from pipeline.extract.lexicon import (
    FAILURE as _FAILURE,
)
from pipeline.extract.lexicon import (
    FIX as _FIX,
)
from pipeline.extract.lexicon import (
    FOR_WHOM as _FOR_WHOM,
)
from pipeline.extract.lexicon import (
    HARM as _HARM,
)
from pipeline.extract.lexicon import (
    MAIN_CAUSE as _MAIN_CAUSE,
)
from pipeline.extract.lexicon import (
    MODAL as _MODAL,
)
from pipeline.extract.lexicon import (
    NEGATED_CAUSE as _NEGATED_CAUSE,
)
from pipeline.extract.lexicon import (
    NEGATION as _NEGATION,
)
from pipeline.extract.lexicon import (
    OTHER_CAUSE as _OTHER_CAUSE,
)
from pipeline.extract.lexicon import (
    PLAIN_FIX as _PLAIN_FIX,
)
from pipeline.extract.lexicon import (
    QUOTED as _QUOTED,
)
from pipeline.extract.lexicon import (
    RISE as _RISE,
)
from pipeline.extract.lexicon import (
    ROOT_CAUSE_TIERS as _ROOT_CAUSE_TIERS,
)
from pipeline.extract.lexicon import (
    SPARED as _SPARED,
)
from pipeline.extract.lexicon import (
    WE_DID as _WE_DID,
)
from pipeline.extract.lexicon import union as _union
from pipeline.extract.sentences import sentences
from pipeline.extract.summary import LEAD_IN, Answers, noise
from pipeline.models import Section, SectionField

__all__ = [
    "DEFAULT_THRESHOLD",
    "FIELDS",
    "Passage",
    "answers",
    "impact_region",
    "impact_users",
    "planned",
    "prose_passages",
    "tells",
]

FIELDS = ("trigger", "detection", "impact", "remediation")
# How many passages a field keeps: a short field is read, a long one is skimmed.
_LIMIT = {"trigger": 3, "detection": 3, "impact": 3, "remediation": 8, "root_cause": 3}
_TIMELINE_REMEDIATION_LIMIT = 6

# The cues without IGNORECASE, for a sentence lowered once: three times faster, and a page has
# thousands of sentences (their patterns hold no capital letter; a test keeps it so).
_LOW_CUES = {name: re.compile(cue.pattern) for name, cue in _CUES.items()}
_LOW_TIERS = tuple(re.compile(cue.pattern) for cue in _ROOT_CAUSE_TIERS)


# Any cue of any field: a sentence without one is passed over at the cost of one scan.
_ANY_CUE = _union([*_CUES.values(), *_ROOT_CAUSE_TIERS, _PLAIN_FIX])


def _plain_fix(text: str, entry: bool = False) -> bool:
    """Whether `text` tells a step taken in a plain verb: "we" or the team its subject (or, in a
    timeline entry, the verb first: "Drained the node"), and no failure told besides."""
    low = text.lower()
    hit = next(
        (
            m
            for m in _PLAIN_FIX.finditer(low)
            if _WE_DID.search(low[: m.start()]) or (entry and not low[: m.start()].strip(" -*:"))
        ),
        None,
    )
    return hit is not None and not _FAILURE.search(_PLAIN_FIX.sub(" ", low))


# A sentence that says the cause is still sought, or supposes one ("If the glitch were due to ..."),
# names none.
_CAUSE_SOUGHT = re.compile(  # lowercase: searched in a lowered sentence
    r"\b(?:find|finding|determine|identify|investigat\w*) (?:the |a )?(?:root )?cause\b|^(?:if|whether|maybe|perhaps)\b"
)
# What `summary.noise` calls a block no field should quote (a short label may still be a passage).
_NOISE = {"template", "byline", "date line", "status label", "link or image", "code or log"}
# "This means ..." continues the sentence before it: they are one passage.
_CONTINUATION = re.compile(r"^(?:This means|That means|In other words)\b")
# Sections whose sentences are not the case's prose: their own fields or lists.
_NOT_PROSE: frozenset[SectionField | None] = frozenset(
    {SectionField.TIMELINE, SectionField.ACTION_ITEMS, SectionField.LESSONS}
)
_NAMED: frozenset[SectionField | None] = frozenset({SectionField(name) for name in FIELDS} | {SectionField.ROOT_CAUSE})
# Where else a sentence that plainly names the cause ("The primary cause of these issues is ...")
# may stand: among the action items or the lessons it explains.
_CAUSE_ALSO = frozenset({SectionField.ACTION_ITEMS, SectionField.LESSONS})
# A sentence that names the trigger plainly is the trigger's wherever it stands, above all under a
# "Root cause" heading ("The trigger for this disruption was a configuration change"): read in the
# sections named for another field too (the trigger's own is taken whole; lists are not prose).
_TRIGGER_STATED = re.compile(
    r"\bthe (?:initial |immediate )?trigger (?:for|of)\b[^.;]*?\b(?:was|were)\b|"
    r"\b(?:was|were|been|be)(?: not| never)? triggered by\b|\btriggered when\b",
    re.IGNORECASE,
)
_STATED_ALSO = frozenset(_NAMED - {SectionField.TRIGGER})


@dataclass(frozen=True)
class Passage:
    """One passage a prose field is drafted from: exact text of the document, the rule, and how sure
    the rule is (`confidence`, 0 to 1; the draft writes a passage below its threshold as a suggestion).
    The rule names what moved the confidence: "cue.trigger+modal" is a cue sentence in the future tense."""

    field: str
    text: str
    rule: str  # "timeline.trigger", "cue.detection", "cue.trigger+negated", ...
    confidence: float = 1.0


# ---------------------------------------------------------------- confidence
# A rule that is sure (a heading naming the field, a stated line) gives 0.8 or more; a cue word in a
# sentence gives less; each reading below that says the sentence is not what happened lowers it
# under the draft's default threshold, so it is offered, not written.
# A passage below this confidence is a suggestion, not the field: the default of the setting
# `draft_confidence_threshold` (a test keeps the two equal; settings import nothing of the drafting).
DEFAULT_THRESHOLD = 0.6
HEADING_CONFIDENCE = 0.9
_CUE_CONFIDENCE = 0.65
_TIMELINE_CONFIDENCE = 0.7
_STATED_CONFIDENCE = 0.8
# Counted against a field's limit: a passage the draft would write at the default threshold.
_COUNTED = DEFAULT_THRESHOLD
_UNMEANT_ADVERB = re.compile(
    r"\b(?:accidentally|unintentionally|inadvertently|mistakenly|erroneously|incorrectly|wrongly|unexpectedly)"
    r"\W+(?:\w+\W+)?$",
    re.IGNORECASE,
)
_PASSIVE = re.compile(r"\b(?:was|were|been|be|is|are|got)\W+(?:\w+ly\W+)?$", re.IGNORECASE)


def _unmeant(before: str) -> bool:
    """Whether the words before a remediation cue say the step was nobody's intent: an adverb just
    before the verb ("the pipeline unintentionally reverted"), or an accidental subject of an active
    verb ("an accidental execution deleted the nodes"). Not a fix done to an accidental thing ("the
    erroneous commit was reverted"), nor what "we" did ("we reverted the accidental change")."""
    if _UNMEANT_ADVERB.search(before):
        return not _WE_DID.search(_UNMEANT_ADVERB.sub(" ", before).lower())
    return bool(_ACCIDENT.search(before)) and not _PASSIVE.search(before) and not _WE_DID.search(before.lower())


# A sentence that leads with what caused it ("The underlying issue was ...", "we determined that a
# migration caused ...") explains the incident: the cause, not the impact, even if it ends on what broke.
_CAUSE_FIRST = re.compile(
    r"\b(?:determined|found|discovered|confirmed|learned|identified) that\b(?=.*\bcaus\w*)", re.IGNORECASE
)
# Said plainly: the cue names the field itself.
_STATED: dict[str, re.Pattern[str]] = {
    "trigger": re.compile(r"\b(?:was|were) triggered by|\bthe trigger (?:was|for|of)\b", re.IGNORECASE),
    "detection": re.compile(
        r"\b(?:we|i|the team|on-?call|engineers?) (?:were|was|got) (?:first )?(?:alerted|paged|notified)\b|"
        r"\b(?:was|were) (?:first )?detected\b",
        re.IGNORECASE,
    ),
}


def _after_until(sentence: str, cue: re.Match[str]) -> str:
    """What follows an "until" after the cue ("nobody noticed until a customer reported it"), or ""."""
    found = re.search(r"\buntil\b", sentence[cue.end() :], re.IGNORECASE)
    return sentence[cue.end() + found.end() :] if found else ""


def _lowered(name: str, sentence: str, cue: re.Match[str] | None) -> list[str]:
    """What in `sentence` says it is not what happened in field `name`: the rules' names."""
    why = []
    modal = _MODAL.search(sentence)
    if modal and (name != "root_cause" or not _COUNTERFACTUAL.fullmatch(modal.group())):
        why.append("modal")
    if cue is not None and name != "impact" and _NEGATION.search(sentence[: cue.start()]):
        # An impact says what did not work: its negations are its own. "Nobody noticed until a customer
        # reported it" tells the detection after the "until".
        if not (name == "detection" and _LOW_CUES["detection"].search(_after_until(sentence, cue).lower())):
            why.append("negated")
    if cue is not None and any(q.start() <= cue.start() < q.end() for q in _QUOTED.finditer(sentence)):
        why.append("quoted")
    if name == "trigger" and _FIX.search(sentence) and not _CAUSED.search(sentence):
        why.append("fix")
    if name == "remediation" and _CAUSED.search(sentence) and not _FIX.search(sentence):
        why.append("cause")
    if name == "root_cause" and _OTHER_CAUSE.search(sentence) and not _MAIN_CAUSE.search(sentence):
        why.append("another")
    if sentence.rstrip().endswith(":"):
        why.append("lead-in")  # "This was caused by two factors:": what follows tells it
    return why + [reason for reason in _misread(name, sentence, cue) if reason not in why]


def _misread(name: str, sentence: str, cue: re.Match[str] | None) -> list[str]:
    """Readings of a cue sentence that tell another field's story (checked on real postmortems, not
    the tuned corpus): the spared part as impact, a negated cause as trigger, an alert firing as
    trigger, a symptom's rise or an accident as remediation, a cause-first sentence or one naming only
    whom (customers, no harm) as impact."""
    why = []
    if name == "impact" and _SPARED.search(sentence):
        why.append("negated")
    if name in ("trigger", "root_cause") and _NEGATED_CAUSE.search(sentence):
        why.append("negated")
    if name == "trigger" and _ALERT_TRIGGERED.search(sentence):
        why.append("alert")
    if name == "remediation" and _RISE.search(sentence) and not _CUES["remediation"].search(_RISE.sub(" ", sentence)):
        why.append("failure")
    if (
        name == "impact"
        and cue is not None
        and _AUDIENCE.fullmatch(cue.group())
        and _FOR_WHOM.search(sentence[: cue.start()])
        and not _HARM.search(sentence)
    ):
        why.append("audience")  # "We publish this review for our customers": whom, not what they met
    if name == "remediation" and cue is not None and _unmeant(sentence[: cue.start()]):
        why.append("accident")
    if name == "impact" and cue is not None:
        before = sentence[: cue.start()]
        if _root_cause_tier(before) == 0 or _CAUSE_FIRST.search(before):  # a cause sought names none
            why.append("cause")
    return why


class Sentence(NamedTuple):
    """A sentence of the prose (or a timeline entry's event), and where it stands: in a section of
    background (a heading such as "Background" or "How the queue works"), in a blockquote."""

    text: str
    background: bool = False
    quoted: bool = False


def scored(name: str, sentence: Sentence, rule: str, base: float) -> Passage:
    """A passage of field `name` with its confidence: `base` for the rule, raised when the sentence
    names the field plainly, lowered by each reading that says it is not what happened (the rule's
    name gains each reason: "cue.detection+modal"), its standing in background or a blockquote among them."""
    text, background, quoted = sentence
    pattern = _CUES.get(name)
    cue = (
        (pattern.search(text) or (_PLAIN_FIX.search(text.lower()) if name == "remediation" else None))
        if pattern
        else next((m for c in _ROOT_CAUSE_TIERS if (m := c.search(text))), None)
    )
    why = _lowered(name, text, cue)
    if quoted and "quoted" not in why:
        why.append("quoted")
    if background:
        why.append("background")
    confidence = base
    if not why and name in _STATED and _STATED[name].search(text):
        confidence, why = max(base, _STATED_CONFIDENCE), ["stated"]
    confidence -= 0.3 * sum(reason != "stated" for reason in why)
    return Passage(name, text, rule + "".join(f"+{reason}" for reason in why), round(max(confidence, 0.05), 2))


def remediation_item(text: str) -> Passage:
    """An item under a remediation heading: sure, unless it tells a failure with no step taken
    ("failures listed under a remediation heading are no remediations") or a plan."""
    why = []
    if _FAILURE.search(text) and not _CUES["remediation"].search(text) and not _FIX.search(text):
        why.append("failure")
    if _MODAL.search(text):
        why.append("modal")
    confidence = HEADING_CONFIDENCE - 0.4 * len(why)
    return Passage("remediation", text, "heading.remediation" + "".join(f"+{r}" for r in why), round(confidence, 2))


def _paragraphs(section: Section) -> Iterator[str]:
    """The section's one-line paragraphs and list items (their text after "- "): not table rows,
    code or logs (the only blocks that keep their line breaks)."""
    for chunk in re.split(r"\n\s*\n", section.text):
        lines = chunk.strip().splitlines()
        if len(lines) == 1 and not lines[0].startswith("- ") and " | " not in lines[0]:
            yield lines[0]
        elif lines and all(line.startswith("- ") for line in lines):
            yield from (line[2:].strip() for line in lines if " | " not in line)


def _is_noise(paragraph: str) -> bool:
    """Template text, a byline, a status label or a link alone (`summary.noise`), also when a lead-in
    label starts it ("The underlying issue: A quick TL;DR of ...")."""
    if noise(Block(paragraph)) in _NOISE:
        return True
    bare = LEAD_IN.sub("", paragraph)
    return bare != paragraph and noise(Block(bare)) in _NOISE


# A sentence that starts with a link: a reference, not the narrative's.
_LINK_FIRST = re.compile(r"^\W*https?://")


def _units(sections: Sequence[Section], skip: frozenset[SectionField | None] = _NOT_PROSE | _NAMED) -> list[Sentence]:
    """The prose's sentences outside the sections of `skip` (by default those named for a field or
    holding lists), a "This means" joined to the one before it when they are one span of the text;
    only those of paragraphs with a cue in them. Each with whether its section is background
    (a heading such as "Background" or "How the queue works"), and whether it stands in a blockquote."""
    units: list[Sentence] = []
    for section in sections:
        if section.field in skip:
            continue
        background = section.field is None and bool(_BACKGROUND.search(section.heading))
        quotes = set(section.quotes)
        for paragraph in _paragraphs(section):
            quoted = paragraph in quotes
            # Most paragraphs of a page hold no cue: they are passed over unsplit, at one scan each.
            if not _ANY_CUE.search(paragraph.lower()) or _is_noise(paragraph):
                continue
            previous: str | None = None
            for sentence in sentences(paragraph):
                if _LINK_FIRST.search(sentence):
                    continue  # a reference, not a sentence of the narrative
                if previous is not None and _CONTINUATION.match(sentence):
                    joined = paragraph[paragraph.index(previous) : paragraph.index(sentence) + len(sentence)]
                    units[-1] = Sentence(joined, background, quoted)
                    previous = joined
                else:
                    units.append(Sentence(sentence, background, quoted))
                    previous = sentence
    return units


def _event(text: str) -> str:
    """What a timeline entry says happened: its first sentence."""
    first = sentences(text.strip())
    return first[0] if first else text.strip()


def prose_passages(sections: Sequence[Section]) -> dict[str, list[Passage]]:
    """The passages each prose field could be drafted from, best first."""
    found: dict[str, list[Passage]] = {name: [] for name in (*FIELDS, "root_cause")}

    def add(name: str, sentence: Sentence, rule: str, limit: int, base: float = _CUE_CONFIDENCE) -> None:
        # A passage the draft would not write does not take a written one's place (at most as many again).
        counted = sum(p.confidence >= _COUNTED for p in found[name])
        if counted < limit and len(found[name]) < 2 * limit and all(sentence.text != p.text for p in found[name]):
            found[name].append(scored(name, sentence, rule, base))

    entries = timeline_entries(sections)
    _timeline_passages(entries, add)
    candidates = _cue_passages(sections, found, add)
    _stated_triggers(sections, add)
    if not found["impact"]:
        # No sentence tells what users saw; a timeline entry may ("User reports the site does not launch").
        hit = next((e for e in entries if _CUES["impact"].search(_event(e.text))), None)
        if hit is not None:
            add("impact", Sentence(_event(hit.text)), "timeline.impact", _LIMIT["impact"], _TIMELINE_CONFIDENCE)
    _more_root_causes(sections, entries, candidates)
    best = sorted(candidates)[: _LIMIT["root_cause"]]
    for tier, _, text, rule in sorted(best, key=lambda c: c[1]):
        base, *marks = rule.split("+")
        sentence = Sentence(text, "background" in marks, "quoted" in marks)
        add("root_cause", sentence, base, _LIMIT["root_cause"], _TIER_CONFIDENCE[tier])
    return found


# prose_passages's own: a passage added to a field (name, sentence, rule, limit, base confidence)
# unless that field holds `limit` already.
_Add = Callable[..., None]
# How sure a root-cause sentence is by its tier: "the root cause was" is stated, "probably" is a guess.
# A document that only supposes a cause has that for its best: the supposition stands, just sure.
_TIER_CONFIDENCE = (_STATED_CONFIDENCE, _CUE_CONFIDENCE, _COUNTED)
# A sentence that may name the cause: (tier, position, text, rule), the best the lowest.
_Candidate = tuple[int, int, str, str]


def _timeline_passages(entries: Sequence[TimelineEntry], add: _Add) -> None:
    """From the timeline: the entry the problem starts with (trigger), the first report after it
    (detection) and the steps taken after it (remediation)."""
    start = next(
        (e for e in entries if starts_problem(_event(e.text)) or _CUES["trigger"].search(_event(e.text))), None
    )
    if start is None:
        return
    add("trigger", Sentence(_event(start.text)), "timeline.trigger", _LIMIT["trigger"], _TIMELINE_CONFIDENCE)
    later = [e for e in entries if e.at >= start.at and e is not start]
    report = next((e for e in later if reports_problem(_event(e.text))), None)
    if report is not None:
        add("detection", Sentence(_event(report.text)), "timeline.detection", _LIMIT["detection"], _TIMELINE_CONFIDENCE)
    for entry in later:
        if _CUES["remediation"].search(_event(entry.text)) or _plain_fix(_event(entry.text), entry=True):
            add(
                "remediation",
                Sentence(_event(entry.text)),
                "timeline.remediation",
                _TIMELINE_REMEDIATION_LIMIT,
                _TIMELINE_CONFIDENCE,
            )


def _cue_passages(sections: Sequence[Section], found: dict[str, list[Passage]], add: _Add) -> list[_Candidate]:
    """From the prose's sentences with a cue: up to two fields each (those not full yet); and the
    sentences that may name the cause, for the root cause to be chosen from."""
    candidates: list[_Candidate] = []
    for position, unit in enumerate(_units(sections)):
        sentence, background, quoted = unit
        low = sentence.lower()
        if not _ANY_CUE.search(low):
            continue  # one scan instead of eight
        matched = [
            name
            for name in FIELDS
            if sum(p.confidence >= _COUNTED for p in found[name]) < _LIMIT[name] and _LOW_CUES[name].search(low)
        ]
        if "remediation" not in matched and found["detection"] and _plain_fix(sentence):
            matched.append("remediation")  # a plain verb: once the problem is known, not before
        for name in matched[:2]:
            add(name, unit, f"cue.{name}", _LIMIT[name])
        tier = _root_cause_tier(sentence)
        if tier is not None:
            marks = "+background" * background + "+quoted" * quoted
            candidates.append((tier, position, sentence, f"cue.root_cause{marks}"))
    return candidates


def _stated_triggers(sections: Sequence[Section], add: _Add) -> None:
    """Sentences of the sections named for another field (root cause, impact, ...) that name the
    trigger plainly ("This was triggered by a configuration change"): trigger passages, after the
    prose's own, lowered by the same readings (modal, negated, quoted)."""
    skip = frozenset(f for f in SectionField if f not in _STATED_ALSO) | {None}
    for unit in _units(sections, skip=skip):
        if _TRIGGER_STATED.search(unit.text):
            add("trigger", unit, "cue.trigger", _LIMIT["trigger"])


def _more_root_causes(
    sections: Sequence[Section], entries: Sequence[TimelineEntry], candidates: list[_Candidate]
) -> None:
    """More sentences that may name the cause, after the prose's: the strongest of the sections
    that explain it, then a timeline entry that names what was found ("identified as a node with
    networking issues")."""
    explained = _units(sections, skip=frozenset(f for f in SectionField if f not in _CAUSE_ALSO) | {None})
    for position, (sentence, _, quoted) in enumerate(explained, start=len(candidates) + 5_000):
        if _root_cause_tier(sentence) == 0:
            candidates.append((0, position, sentence, "cue.root_cause+quoted" if quoted else "cue.root_cause"))
    for position, entry in enumerate(entries, start=len(candidates) + 10_000):
        for sentence in sentences(entry.text.strip()):
            tier = _root_cause_tier(sentence)
            if tier is not None and tier < 2:
                candidates.append((tier, position, sentence, "timeline.root_cause"))


# What was done about the problem, not what it was: "the issue was resolved", "the root cause had been
# identified", "to understand what the problem was" (the cue "the issue was" names nothing there;
# "identified as a full disk" does, and a causal verb does).
_HANDLED = re.compile(
    r"\b(?:issue|problem|cause|culprit)\s+(?:was|were|had been|has been|is)\s+(?:\w+ly\s+)?(?:resolved|fixed|"
    r"discovered|found|identified|detected|mitigated|noticed|located|addressed|understood|confirmed|escalated)"
    r"(?:\s+\w+ly)?(?=\s*(?:[.,;!]|$|\b(?:and|by|at|within|after|before|once|when|so|but|on|in (?:\d|under|less))\b))|"
    r"\b(?:understand|determine|know|find out|figure out)\s+what\s+the\s+"
    r"(?:issue|problem|cause)\s+was\b"
)
# Why the problem was noticed, not why it happened: "This was noticed because someone looked at a graph".
_NOTICED_BECAUSE = re.compile(
    r"\b(?:noticed|detected|spotted|caught|seen|alerted)\W+(?:\w+\W+){0,3}?(?:because|due to)\b"
)


def _root_cause_tier(sentence: str) -> int | None:
    """How strongly a sentence names a cause: 0 best, None when it names none."""
    low = sentence.lower()
    if (
        not _ANY_CUE.search(low) or _CAUSE_SOUGHT.search(low) or _NOTICED_BECAUSE.search(low)
    ):  # one scan first: most sentences hold no cue
        return None
    if _HANDLED.search(low) and not _CAUSED.search(low):
        return None
    return next((tier for tier, cue in enumerate(_LOW_TIERS) if cue.search(low)), None)


# A remediation that ended the incident, not a step on the way ("restarted ~13 times").
_ENDED_IT = re.compile(
    r"\b(?:resolv\w*|restor\w*|fixed|fixing|solved|working again|back to normal|to an end|recovered|completed|"
    r"(?:deployed|applied|shipped|rolled out) (?:the |a )?(?:patch|fix)|fix (?:was |got )?(?:deployed|applied))\b",
    re.IGNORECASE,
)


def _resolution_passage(sections: Sequence[Section], passages: dict[str, list[Passage]]) -> str | None:
    """How the incident ended, in one passage: under a remediation heading, its first sentence
    that says the problem ended, else its first; without one, the first remediation passage (from
    the timeline or a cue sentence) that says so, else the first."""
    for section in sections:
        if section.field == SectionField.REMEDIATION:
            told = [s for paragraph in _paragraphs(section) for s in sentences(paragraph)]
            if told:
                return next((s for s in told if _ENDED_IT.search(s)), told[0])
    steps = [p.text for p in passages["remediation"] if not p.text.endswith(":")]  # not a lead-in to code
    return next((p for p in steps if _ENDED_IT.search(p)), steps[0] if steps else None)


def _impact_passage(sections: Sequence[Section], passages: dict[str, list[Passage]]) -> str | None:
    """Who or what the incident hit, in one passage: the first sentence under an impact heading,
    else the first impact passage of the prose."""
    for section in sections:
        if section.field == SectionField.IMPACT:
            told = [s for paragraph in _paragraphs(section) for s in sentences(paragraph)]
            if told:
                return told[0]
    hit = passages["impact"]
    return hit[0].text if hit else None


# A trigger is one event: its field holds one passage. The narrative's own sentence is written before a
# timeline line, which is terse ("Deploy starts") and often names the first step of the response instead;
# the other passages, sure or not, are offered. Joining them read as fragments and tripled the field's
# length: on the drafts bench the trigger's precision rose from .30 to .56, its recall fell from .69 to .55.
_ONE_PASSAGE = frozenset({"trigger"})


def written_passages(name: str, passages: Sequence[Passage], threshold: float) -> tuple[list[Passage], list[Passage]]:
    """Of field `name`'s passages (in the rules' and the document's order), those the draft writes into
    the field and those it offers as suggestions: each at `threshold` or above is written, but for a
    field of one event (the trigger) only the surest sentence of the narrative (the first of equals; a
    timeline line when no sentence is sure enough)."""
    sure = [p for p in passages if p.confidence >= threshold]
    if name in _ONE_PASSAGE and sure:
        narrative = [p for p in sure if not p.rule.startswith("timeline.")] or sure
        sure = [max(narrative, key=lambda p: p.confidence)]  # the surest; of equals, the first
    return sure, [p for p in passages if p not in sure]


def planned(sentence: str) -> bool:
    """Whether a sentence tells a plan, a supposition or what would have been ("A probe would have
    detected it", "In the future we will ..."), not what happened: the modal reading that lowers a
    passage. A counterfactual that names a cause ("a change which would have mitigated it was not
    released") tells what happened, as it does for the root cause."""
    name = "root_cause" if _root_cause_tier(sentence) is not None else "trigger"
    return bool(_MODAL.search(sentence)) and "modal" in _lowered(name, sentence, None)


def tells(name: str, sentence: str) -> bool:
    """Whether a sentence tells field `name` ("trigger", "impact", ...) as a passage the draft would
    write: it holds the field's cue, and no reading (modality, negation, quotation, a fix for a
    trigger) says it is not what happened."""
    cue = _CUES[name].search(sentence)
    return cue is not None and not _lowered(name, sentence, cue)


def answers(sections: Sequence[Section], passages: dict[str, list[Passage]]) -> Answers:
    """What a reader asks after the summary, as this document's prose answers it (`summary.Answers`),
    from its sections and their `prose_passages`."""
    causes = sorted((p.text for p in passages["root_cause"]), key=lambda text: _root_cause_tier(text) or 0)
    return Answers(
        causes=tuple(causes),
        impact=_impact_passage(sections, passages),
        resolution=_resolution_passage(sections, passages),
        names_cause=lambda text: any(_root_cause_tier(s) == 0 for s in sentences(text)),
        tells_impact=lambda text: bool(_CUES["impact"].search(text)),
        planned=planned,
        key_facts=(lambda text: tells("trigger", text), lambda text: tells("impact", text)),
    )


# Who the incident hit, as the impact names them: "Platform users", "all customers", "some idle users".
_USERS = re.compile(
    r"\b(?:(?:all|most|some|many|several|few|the|our|\d(?:[\d,.]*\d)?(?:%| percent)?(?: of(?: the| our)?)?)\s+)?"
    r"(?:(?!(?:for|of|to|from|in|on|by|with|and|or|the|a|an)\b|[a-z]+ing\b)[a-z][\w-]*\s+){0,2}?"
    r"(?:users|customers|developers|clients|visitors|subscribers|tenants|people|researchers)\b",
    re.IGNORECASE,
)
# Where: a cloud region's name (AWS eu-west-1, Google europe-west4, us-central1), or regions counted.
_REGION = re.compile(
    r"\b(?:(?:us|eu|ap|sa|ca|me|af|il|mx)-(?:north|south|east|west|central|northeast|southeast|northwest|southwest)-\d|"
    r"(?:us|europe|asia|australia|northamerica|southamerica|me|africa)-(?:north|south|east|west|central|northeast|"
    r"southeast|northwest|southwest)\d|(?:all|multiple|several|two|three|\d+) (?:\w+ )?regions)\b",
    re.IGNORECASE,
)


def impact_users(impact: str) -> tuple[str, int] | None:
    """Who the impact says the incident hit, and where that stands in `impact`: its first phrase
    naming people ("Platform users were unable to sign in" gives "Platform users")."""
    match = _USERS.search(impact)
    return (match.group(), match.start()) if match else None


def impact_region(impact: str) -> tuple[str, int] | None:
    """Where the impact says the incident hit, and where that stands in `impact`: a cloud region
    named (eu-west-1, us-central1) or regions counted ("two regions")."""
    match = _REGION.search(impact)
    return (match.group(), match.start()) if match else None
