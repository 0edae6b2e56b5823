"""Several incidents in one document (a logbook, a monthly report), pure: where each one starts.

A document holds several incidents when at least two headings of the same level, outside the
timeline, each name one: a date ("Lineage - November 5, 2021", "2024-03-03: cache outage") or a
number ("Incident #2", "Outage 3"). Timeline entries are dated headings too, so headings under
a Timeline heading never count.

Without such names, the headings are read by what follows them. A heading starts an incident
when the blocks under it carry an incident's own structure, two kinds of it at least, in its
sub-headings or status updates: its own timeline (a Timeline sub-heading, "Investigating - ..."),
its own outcome ("Resolution", "Resolved - ..."), its own cause or impact ("Root cause").
A heading that says "Incident: X" needs one, a labelled paragraph ("Impact: ...") counting too;
timed lines and labels alone never split (a postmortem's "What we saw" and "What we did" hold
both). A heading that is a day and a time ("June 1 09:40
UTC (lasting 48 minutes)", a monthly availability report's) needs a paragraph of prose under it.
Such headings split the document only when they are at least two, at least half of the headings
of their level that name no field, none of them under a heading that names a field, and the
headings of that level do not name two fields or more: a postmortem whose sections are Summary,
Timeline and Root cause is one incident, whatever its sub-headings hold.

Without headings that start incidents, a status page's history still lists them: each entry a
title line with its own span ("Nov 29, 18:36 - 20:02 UTC") within the next few blocks. Two or more
such entries, under no heading that names a field and none starting when another ends (phases of one
incident), each start an incident, running to the next entry's title.

One incident, or no such headings, gives an empty list. A false split costs the writer more
than a miss, so every rule here errs toward one incident.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.extract.blocks import Block
from pipeline.extract.dates import dates_in
from pipeline.extract.headings import field_for_heading
from pipeline.models import SectionField

__all__ = ["IncidentHeading", "incident_ranges", "incidents_in"]

_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
# A day and a time without a year: "June 1 09:40 UTC (lasting 48 minutes)", "1 June, 09:40".
_STAMPED = re.compile(
    rf"^\W*(?:{_MONTH}\s+\d{{1,2}}|\d{{1,2}}\s+{_MONTH})(?:st|nd|rd|th)?,?\s+(?:at\s+)?[0-2]?\d:[0-5]\d\b", re.I
)
# "Incident: Database failover", "Outage - EU region".
_LABELLED = re.compile(r"^\W*(?:incident|outage|service disruption)\s*[:\-–—]\s*\w", re.IGNORECASE)
# A status page's updates: "Resolved - This incident has been resolved."
_STATUS = re.compile(
    r"^\W{0,3}(resolved|investigating|identified|monitoring|update|mitigated|completed|postmortem)\W{0,3}\s*[-–—:]",
    re.IGNORECASE,
)
_STATUS_KIND = {"resolved": "outcome", "mitigated": "outcome", "completed": "outcome", "identified": "cause"}
# A labelled paragraph: "Impact: ...", "**Root cause:** ...".
_LABEL = re.compile(r"^\W{0,3}(?P<label>[A-Za-z][\w /&-]{2,30}?)\W{0,3}:")
_FIELD_KIND = {
    SectionField.TIMELINE: "timeline",
    SectionField.DETECTION: "timeline",
    SectionField.REMEDIATION: "outcome",
    SectionField.ACTION_ITEMS: "outcome",
    SectionField.ROOT_CAUSE: "cause",
    SectionField.TRIGGER: "cause",
    SectionField.CONTRIBUTING: "cause",
    SectionField.IMPACT: "impact",
}
_PROSE_WORDS = 25  # a stamped heading's paragraph: an account, not a timeline's one-liner

# "Incident #2", "Incident 3:", "Outage no. 4", "Second incident" is too loose and not read.
_NUMBERED = re.compile(r"^\W*(?:incident|outage|issue|event)\s*(?:#|no\.?\s*|number\s*)?\d+\b", re.IGNORECASE)


@dataclass(frozen=True)
class IncidentHeading:
    heading: str
    offset: int  # where the heading starts in the document's full text


def _names_an_incident(heading: str) -> bool:
    return bool(_NUMBERED.match(heading) or dates_in(heading))


@dataclass(frozen=True)
class _Heading:
    index: int  # in the blocks
    level: int
    field: SectionField | None
    under_timeline: bool
    under_field: bool  # below a heading that names any field
    end: int  # the blocks it spans: [index + 1, end)


def _headings(blocks: list[Block]) -> list[_Heading]:
    out: list[_Heading] = []
    stack: list[tuple[int, SectionField | None]] = []  # open headings: (level, field)
    for index, block in enumerate(blocks):
        if not block.is_heading:
            continue
        while stack and stack[-1][0] >= block.level:
            stack.pop()
        field = field_for_heading(block.text)
        end = next((j for j in range(index + 1, len(blocks)) if 0 < blocks[j].level <= block.level), len(blocks))
        out.append(
            _Heading(
                index,
                block.level,
                field,
                under_timeline=any(f == SectionField.TIMELINE for _, f in stack),
                under_field=any(f is not None for _, f in stack),
                end=end,
            )
        )
        stack.append((block.level, field))
    return out


def _most(by_level: dict[int, list[int]]) -> tuple[int | None, list[int]]:
    """The level with most incident headings (the shallower one on a tie): sub-headings of one
    incident ("2021-11-05: restart") stay inside it."""
    level = max(by_level, key=lambda lvl: (len(by_level[lvl]), -lvl), default=None)
    return level, by_level.get(level, []) if level is not None else []


def _named(blocks: list[Block], heads: list[_Heading]) -> list[int]:
    """Headings that name an incident by a date or a number."""
    by_level: dict[int, list[int]] = {}
    for head in heads:
        if (
            not head.under_timeline
            and head.field != SectionField.TIMELINE
            and _names_an_incident(blocks[head.index].text)
        ):
            by_level.setdefault(head.level, []).append(head.index)
    _, found = _most(by_level)
    return found if len(found) >= 2 else []


def _signals(blocks: list[Block], labels: bool) -> set[str]:
    """The kinds of an incident's own structure the blocks under a heading carry: from its
    sub-headings and status updates, and (`labels`) from labelled paragraphs ("Impact: ...").
    Timed lines and labels alone do not tell one incident's phases from several incidents:
    a postmortem's "What we saw" and "What we did" both hold times and an "Impact:"."""
    kinds: set[str] = set()
    for block in blocks:
        if block.is_heading:
            field = field_for_heading(block.text)
            if field is not None and (kind := _FIELD_KIND.get(field)) is not None:
                kinds.add(kind)
        elif (status := _STATUS.match(block.text)) is not None:
            kinds.add(_STATUS_KIND.get(status.group(1).lower(), "timeline"))
        elif labels and (label := _LABEL.match(block.text)) is not None and len(label.group("label").split()) <= 4:
            field = field_for_heading(label.group("label"))
            if field is not None and (kind := _FIELD_KIND.get(field)) is not None:
                kinds.add(kind)
    return kinds


def _is_entry(blocks: list[Block], head: _Heading) -> bool:
    heading = blocks[head.index].text
    body = blocks[head.index + 1 : head.end]
    if _STAMPED.match(heading):
        return any(not b.is_heading and len(b.text.split()) >= _PROSE_WORDS for b in body)
    if _LABELLED.match(heading):
        return bool(_signals(body, labels=True))
    return len(_signals(body, labels=False)) >= 2


def _structured(blocks: list[Block], heads: list[_Heading]) -> list[int]:
    """Headings that each start an incident by what follows them (the module's docstring)."""
    free = [h for h in heads if h.field is None and not h.under_field]
    by_level: dict[int, list[int]] = {}
    for head in free:
        if _is_entry(blocks, head):
            by_level.setdefault(head.level, []).append(head.index)
    level, found = _most(by_level)
    if level is None or len(found) < 2:
        return []
    fields = {h.field for h in heads if h.level == level and h.field is not None}
    unnamed = [h for h in free if h.level == level]
    if len(fields) >= 2 or 2 * len(found) < len(unnamed):
        return []
    return found


# An entry's own span: two times of one day or two stamped ends ("Nov 29, 18:36 - 20:02 UTC", "Mar 3,
# 2024 10:00 UTC - Mar 4, 2024 01:15 UTC"), the line a status page's history gives each incident.
_TIME = r"[0-2]?\d:[0-5]\d(?:\s?[ap]\.?m\.?)?"
_DAY = rf"(?:{_MONTH}\s+\d{{1,2}}|\d{{1,2}}\s+{_MONTH})(?:st|nd|rd|th)?,?(?:\s+\d{{4}},?)?"
_SPAN = re.compile(
    rf"^\W*{_DAY}\s+(?:at\s+)?{_TIME}(?:\s*[A-Z]{{2,4}})?\s*(?:-|–|—|to)\s*(?:{_DAY}\s+)?{_TIME}"
    rf"(?:\s*[A-Z]{{2,4}})?\W*$",
    re.IGNORECASE,
)
# "First outage window", "Second phase": parts of one story told in order, not a history's entries.
_ORDINAL = re.compile(r"^\W*(?:first|second|third|fourth|initial|final|last|next|then)\b", re.IGNORECASE)
_TITLE_WORDS = 12  # a history entry's title: a line, not a sentence of prose
_TITLE_REACH = 3  # its span within the next blocks (a one-line description may stand between)


def _is_title(block: Block) -> bool:
    text = block.text.strip()
    return (
        not block.is_heading
        and 0 < len(text.split()) <= _TITLE_WORDS
        and not text.endswith((".", ":", "!", "?"))
        and not _SPAN.match(text)
        and not _STATUS.match(text)
    )


def _spanned(blocks: list[Block], heads: list[_Heading]) -> list[int]:
    """Entries without headings, each a title line with its own span within the next few blocks and
    no heading between: a status page's history ("Elevated API errors" / "This incident has been
    resolved." / "Nov 29, 18:36 - 20:02 UTC"). At least two, outside any timeline; one title a span."""
    # Under a heading that names a field ("What happened", "Impact", "Timeline") such lines are one
    # incident's phases or parts.
    told = {i for h in heads if h.field is not None or h.under_field for i in range(h.index, h.end)}
    found: list[int] = []
    spans: list[str] = []
    for index, block in enumerate(blocks):
        if index in told or not _is_title(block) or (found and index < found[-1] + 2):
            continue
        for ahead in blocks[index + 1 : index + 1 + _TITLE_REACH]:
            if ahead.is_heading:
                break
            if _SPAN.match(ahead.text.strip()):
                found.append(index)
                spans.append(ahead.text.strip())
                break
    if len(found) < 2 or _back_to_back(spans) or any(_ORDINAL.match(blocks[i].text) for i in found):
        return []
    return found


def _back_to_back(spans: list[str]) -> bool:
    """Whether one span starts when another ends ("18:36 - 20:02", "20:02 - 20:30"): phases of one
    incident, not incidents of a history."""
    times = [re.findall(_TIME, span, re.IGNORECASE) for span in spans]
    ends = {t[-1] for t in times if t}
    return any(t and t[0] in ends for t in times)


def _spanned_ends(blocks: list[Block], starts: list[int]) -> dict[int, int]:
    """Each entry runs to the next entry's title, the last to the next heading (or the end)."""
    ends: dict[int, int] = {}
    for position, first in enumerate(starts):
        if position + 1 < len(starts):
            ends[first] = starts[position + 1]
        else:
            ends[first] = next((j for j in range(first + 1, len(blocks)) if blocks[j].is_heading), len(blocks))
    return ends


def incident_ranges(blocks: list[Block], text: str) -> list[tuple[IncidentHeading, int, int]]:
    """Each incident's heading (with its offset in `text`, the blocks' full text) and the blocks it
    spans, `blocks[first:end]`: from its heading to the next heading of its level or above. Empty
    unless there are at least two."""
    heads = _headings(blocks)
    starts = _named(blocks, heads) or _structured(blocks, heads)
    ends = {h.index: h.end for h in heads}
    if not starts:
        starts = _spanned(blocks, heads)
        ends = _spanned_ends(blocks, starts)
    found: list[tuple[IncidentHeading, int, int]] = []
    cursor = 0
    for first in starts:
        heading = blocks[first].text
        offset = text.find(heading, cursor)
        if offset < 0:  # not in the text as written: keep the heading, point at the last known place
            offset = cursor
        else:
            cursor = offset + len(heading)
        found.append((IncidentHeading(heading, offset), first, ends[first]))
    return found


def incidents_in(blocks: list[Block], text: str) -> list[IncidentHeading]:
    """The headings that each start an incident, with their offsets in `text` (the blocks' full
    text), when there are at least two; else an empty list."""
    return [heading for heading, _, _ in incident_ranges(blocks, text)]
