"""Several incidents in one document (a logbook, a monthly report), pure: where each one starts.

A document holds several incidents when at least two headings of the same level, outside the
timeline, each name one: a date ("Lineage - November 5, 2021", "2024-03-03: cache outage") or a
number ("Incident #2", "Outage 3"). Timeline entries are dated headings too, so headings under
a Timeline heading never count. One incident, or no such headings, gives an empty list: the
flag is for the writer, who splits the draft, and a false flag costs them more than a miss.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.extract.blocks import Block
from pipeline.extract.dates import dates_in
from pipeline.extract.headings import field_for_heading
from pipeline.models import SectionField

__all__ = ["IncidentHeading", "incident_ranges", "incidents_in"]

# "Incident #2", "Incident 3:", "Outage no. 4", "Second incident" is too loose and not read.
_NUMBERED = re.compile(r"^\W*(?:incident|outage|issue|event)\s*(?:#|no\.?\s*|number\s*)?\d+\b", re.IGNORECASE)


@dataclass(frozen=True)
class IncidentHeading:
    heading: str
    offset: int  # where the heading starts in the document's full text


def _names_an_incident(heading: str) -> bool:
    return bool(_NUMBERED.match(heading) or dates_in(heading))


def incident_ranges(blocks: list[Block], text: str) -> list[tuple[IncidentHeading, int, int]]:
    """Each incident's heading (with its offset in `text`, the blocks' full text) and the blocks it
    spans, `blocks[first:end]`: from its heading to the next heading of its level or above. Empty
    unless there are at least two."""
    stack: list[tuple[int, SectionField | None]] = []  # open headings: (level, field)
    by_level: dict[int, list[int]] = {}  # level -> indices of the incident headings
    for index, block in enumerate(blocks):
        if not block.is_heading:
            continue
        while stack and stack[-1][0] >= block.level:
            stack.pop()
        in_timeline = any(field == SectionField.TIMELINE for _, field in stack)
        field = field_for_heading(block.text)
        stack.append((block.level, field))
        if not in_timeline and field != SectionField.TIMELINE and _names_an_incident(block.text):
            by_level.setdefault(block.level, []).append(index)
    # The level with most incident headings (the shallower one on a tie): sub-headings of one
    # incident ("2021-11-05: restart") stay inside it.
    level = max(by_level, key=lambda lvl: (len(by_level[lvl]), -lvl), default=None)
    if level is None or len(by_level[level]) < 2:
        return []
    found: list[tuple[IncidentHeading, int, int]] = []
    cursor = 0
    for first in by_level[level]:
        heading = blocks[first].text
        end = next((j for j in range(first + 1, len(blocks)) if 0 < blocks[j].level <= level), len(blocks))
        offset = text.find(heading, cursor)
        if offset < 0:  # not in the text as written: keep the heading, point at the last known place
            offset = cursor
        else:
            cursor = offset + len(heading)
        found.append((IncidentHeading(heading, offset), first, end))
    return found


def incidents_in(blocks: list[Block], text: str) -> list[IncidentHeading]:
    """The headings that each start an incident, with their offsets in `text` (the blocks' full
    text), when there are at least two; else an empty list."""
    return [heading for heading, _, _ in incident_ranges(blocks, text)]
