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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from pipeline.extract.durations import reports_problem, starts_problem, timeline_entries
from pipeline.extract.sentences import sentences
from pipeline.models import Section, SectionField

__all__ = ["FIELDS", "Passage", "prose_passages"]

FIELDS = ("trigger", "detection", "impact", "remediation")
# How many passages a field keeps: a short field is read, a long one is skimmed.
_LIMIT = {"trigger": 3, "detection": 3, "impact": 3, "remediation": 8, "root_cause": 3}
_TIMELINE_REMEDIATION_LIMIT = 6

_CUES: dict[str, re.Pattern[str]] = {
    "trigger": re.compile(
        r"\b(after deploying|a change to|changes to|was triggered by|triggered|was caused by|caused by|"
        r"deploy(?:ed|ment of)|upgrad(?:e|ed|ing)|applied|accidental(?:ly)?|unintentional(?:ly)?|"
        r"planned maintenance|scheduled|was merged|expired|runs? out of|pulled|changed domains|exposed by)\b",
        re.IGNORECASE,
    ),
    "detection": re.compile(
        r"\b(alerted|alerts? (?:fired|detect\w*)|got paged|paged|received (?:a|an) (?:automated )?"
        r"(?:report|warning|alert|email)|(?:a|the) (?:user|customer|developer|team member|community member)s? "
        r"(?:reported|notified)|users? report(?:ed|ing)?|noticed|was detected|detected|when alerted)\b",
        re.IGNORECASE,
    ),
    "impact": re.compile(
        r"\b(users? (?:could not|couldn't|were unable|was unable|were getting|experienced)|unable to|could not|"
        r"failed to|were failing|was failing|customers?|percent of|% of|all (?:services|users|inbound traffic)|"
        r"regions?|unavailable|affected|resulted in|no loss of|a period of|fail to|to fail|to timeout|not possible)\b",
        re.IGNORECASE,
    ),
    "remediation": re.compile(
        r"\b(rolled back|roll(?:ed)? ?back|rollback|restarted|reverted|failed over|we fixed|fixed it|"
        r"fix (?:was )?deployed|manually (?:patched|attach\w*|marked|deleted|downgraded|reattached)|"
        r"applied (?:a )?(?:quick |manual )?fix|cleared|relaunched|cordon\w*|bump(?:ed)? to|increased|"
        r"scal(?:ed|ing) down|killed|deleted|re-?ran|rerun|generated|rolled over|downgraded|reattached|toggling|"
        r"removed|re-queued|revert\w*|terminated|re-?work\w*|merged and deployed|increase (?:the )?limit|patched|"
        r"upgraded and|restor\w*|fix committed|applied)\b",
        re.IGNORECASE,
    ),
}
# The root cause's narrative: read besides the four above (a sentence naming a cause often names a
# trigger too), and kept as the passage behind the root cause's class.
_ROOT_CAUSE = re.compile(
    r"\b(root cause|the (?:underlying|actual|real) (?:cause|issue|problem)|the cause (?:was|of)|was caused by|"
    r"were caused by|is caused by|due to|because of|stemmed from|resulted from|the reason (?:was|for))\b",
    re.IGNORECASE,
)
# "This means ..." continues the sentence before it: they are one passage.
_CONTINUATION = re.compile(r"^(?:This means|That means|In other words)\b")
# Sections whose sentences are not the case's prose: their own fields or lists.
_NOT_PROSE = {SectionField.TIMELINE, SectionField.ACTION_ITEMS, SectionField.LESSONS}
_NAMED = {SectionField(name) for name in FIELDS} | {SectionField.ROOT_CAUSE}


@dataclass(frozen=True)
class Passage:
    """One passage a prose field is drafted from: exact text of the document, and the rule."""

    field: str
    text: str
    rule: str  # "timeline.trigger", "cue.detection", ...


def _paragraphs(section: Section) -> Iterator[str]:
    """The section's one-line paragraphs: not list items, table rows, code or logs."""
    for chunk in re.split(r"\n\s*\n", section.text):
        chunk = chunk.strip()
        if chunk and "\n" not in chunk and not chunk.startswith("- ") and " | " not in chunk:
            yield chunk


def _units(sections: Sequence[Section]) -> list[str]:
    """The prose's sentences outside the sections named for a field, a "This means" joined to the one
    before it when they are one span of the text."""
    units: list[str] = []
    for section in sections:
        if section.field in _NOT_PROSE or section.field in _NAMED:
            continue
        for paragraph in _paragraphs(section):
            previous: str | None = None
            for sentence in sentences(paragraph):
                if previous is not None and _CONTINUATION.match(sentence):
                    joined = paragraph[paragraph.index(previous) : paragraph.index(sentence) + len(sentence)]
                    units[-1] = previous = joined
                else:
                    units.append(sentence)
                    previous = sentence
    return units


def _event(text: str) -> str:
    """What a timeline entry says happened: its first sentence."""
    first = sentences(text.strip())
    return first[0] if first else text.strip()


def prose_passages(sections: Sequence[Section]) -> dict[str, list[Passage]]:
    """The passages each prose field could be drafted from, best first."""
    found: dict[str, list[Passage]] = {name: [] for name in (*FIELDS, "root_cause")}

    def add(name: str, text: str, rule: str, limit: int) -> None:
        if len(found[name]) < limit and all(text != p.text for p in found[name]):
            found[name].append(Passage(name, text, rule))

    entries = timeline_entries(sections)
    start = next(
        (e for e in entries if starts_problem(_event(e.text)) or _CUES["trigger"].search(_event(e.text))), None
    )
    if start is not None:
        add("trigger", _event(start.text), "timeline.trigger", _LIMIT["trigger"])
        later = [e for e in entries if e.at >= start.at and e is not start]
        report = next((e for e in later if reports_problem(_event(e.text))), None)
        if report is not None:
            add("detection", _event(report.text), "timeline.detection", _LIMIT["detection"])
        for entry in later:
            if _CUES["remediation"].search(_event(entry.text)):
                add("remediation", _event(entry.text), "timeline.remediation", _TIMELINE_REMEDIATION_LIMIT)
    for sentence in _units(sections):
        matched = [name for name in FIELDS if _CUES[name].search(sentence)]
        for name in matched[:2]:
            add(name, sentence, f"cue.{name}", _LIMIT[name])
        if _ROOT_CAUSE.search(sentence):
            add("root_cause", sentence, "cue.root_cause", _LIMIT["root_cause"])
    return found
