"""Candidates, pure: the units of a document a passage field may be drafted from.

Every passage field is ranked over the same units, so the rules and the finder choose among the same
things: each section's list items and table rows whole, its other paragraphs sentence by sentence
(`extract.sentences`), each with its span into the extraction's text so that a chosen one becomes a
draft's evidence as it is. A unit of fewer than three words ("Summary", "| --- |") is no passage.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.extract.sentences import sentence_spans
from pipeline.models import Section

__all__ = ["Candidate", "candidates", "words"]

_WORD = re.compile(r"\w+")
_PARAGRAPH = re.compile(r"\n\s*\n")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+")
_RULE_ROW = re.compile(r"^[\s|:-]*$")
_MIN_WORDS = 3


def words(text: str | None) -> list[str]:
    """The text's words, case folded: what labels and features compare."""
    return _WORD.findall((text or "").casefold())


@dataclass(frozen=True)
class Candidate:
    """One unit of a section: its text as it stands in the extraction's text, at `start`."""

    text: str
    start: int
    kind: str  # "item", "row" or "sentence"
    heading: str
    section_field: str | None  # the field the section's heading (or its words) names
    section_confidence: float  # 1.0 when the heading names it; the words' confidence otherwise
    section_index: int
    index_in_section: int
    section_size: int
    position: float  # where in the document, 0 (first unit) to 1 (last)
    in_quote: bool  # the unit stands in a blockquote

    @property
    def end(self) -> int:
        return self.start + len(self.text)


def _units(text: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) of each unit of one section's text."""
    found: list[tuple[int, int, str]] = []
    at = 0
    for paragraph in _PARAGRAPH.split(text):
        begin = text.find(paragraph, at)
        at = begin + len(paragraph)
        lines = paragraph.split("\n")
        table = sum("|" in line for line in lines) >= 2
        listed = table or any(_ITEM.match(line) for line in lines)
        offset = begin
        for line in lines if listed else [paragraph]:
            line_start = offset
            offset += len(line) + 1
            if listed and ((table and "|" in line) or _ITEM.match(line)):
                if _RULE_ROW.match(line):
                    continue
                item = _ITEM.match(line)
                skip = item.end() if item else len(line) - len(line.lstrip())
                body = line[skip:].rstrip()
                found.append(
                    (line_start + skip, line_start + skip + len(body), "row" if table and "|" in body else "item")
                )
                continue
            for start, end in sentence_spans(line):
                lead = len(line[start:end]) - len(line[start:end].lstrip())
                found.append((line_start + start + lead, line_start + end, "sentence"))
    return found


def candidates(text: str | None, sections: Sequence[Section]) -> list[Candidate]:
    """The units of each section of `text`, in the order they stand, where the section stands in the text."""
    text = text or ""
    raw: list[tuple[Section, int, int, int, str, int, int]] = []
    at = 0
    for number, section in enumerate(sections):
        if not section.text.strip():
            continue
        where = text.find(section.text, at)
        if where < 0:
            where = text.find(section.text)
        if where < 0:
            continue  # the section's text was joined differently: nothing in it to point at
        at = where + len(section.text)
        units = [u for u in _units(section.text) if len(words(section.text[u[0] : u[1]])) >= _MIN_WORDS]
        raw += [(section, number, where + a, where + b, kind, i, len(units)) for i, (a, b, kind) in enumerate(units)]
    last = max(1, len(raw) - 1)
    quoted = [(s, set(s.quotes)) for s in sections]
    quotes = {id(s): q for s, q in quoted}
    return [
        Candidate(
            text=text[a:b],
            start=a,
            kind=kind,
            heading=section.heading,
            section_field=section.field.value if section.field else None,
            section_confidence=1.0 if section.confidence is None else section.confidence,
            section_index=number,
            index_in_section=i,
            section_size=size,
            position=n / last,
            in_quote=any(text[a:b] in q for q in quotes[id(section)]),
        )
        for n, (section, number, a, b, kind, i, size) in enumerate(raw)
    ]
