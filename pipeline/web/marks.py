"""The draft's text as the page's text pane, pure: every numbered passage marked where it stands, and
the text's own headings shown as headings.

    passages, marks = evidence_passages(text, draft.evidence)   # numbered 1..n, and the evidence by number
    pieces = text_pane(text, passages, headings_of(text, draft.sections))

Every number beside a field links `#mark-N`, and every N has an element of that id holding its
whole passage (the superscripts, `<sup>`, aside): passages nest, one inside the other, when one lies
within another; passages that stand at the same place, or cross (one starts inside another and ends
after it), share one mark over both, which lists both numbers (the first number is the mark's id, the
others the ids of elements of the same extent just inside it). The writer assist's passages
(pipeline.web.proposals) are numbered after the evidence and marked the same way.

The headings are the text's own: the lines the extractor kept as headings (a draft's `sections` name
them, in order; the text holds each as a paragraph of its own) and any Markdown `#` line. A heading is
shown as one (`role="heading"`) unless a passage starts inside it and ends past it; then its pieces are
only styled as a heading.

The pieces are plain strings and marks: the template (`_text.html`) escapes every one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Literal

from pipeline.finder import Mark as FinderMark
from pipeline.models import Evidence, Section

__all__ = [
    "Mark",
    "Passage",
    "Piece",
    "evidence_passages",
    "headings_of",
    "likely_passages",
    "nest",
    "suggestion_passages",
    "text_pane",
]

PROPOSED_TITLE = "a passage a proposal of the model rests on"


@dataclass(frozen=True)
class Passage:
    """A numbered passage of the text: `text[start:end]`, with what it stands for (its title)."""

    number: int
    start: int
    end: int
    title: str
    proposed: bool = False  # a passage a proposal of the model rests on, not evidence
    suggested: bool = False  # a passage offered for a field, not written (unsure, or a trigger's other one)
    likely: str = ""  # the field the finder finds this sentence most likely serves (pipeline.finder.marks)


@dataclass(eq=False)
class Mark:
    """An element of the text pane: a mark over one or more passages, or a heading, and what lies in it."""

    start: int
    end: int
    passages: list[Passage] = field(default_factory=list)  # none for a heading
    children: list[Mark] = field(default_factory=list)
    kind: Literal["mark", "heading"] = "mark"

    @property
    def number(self) -> int:
        """The mark's own id's number: its first passage's."""
        return self.passages[0].number

    @property
    def others(self) -> list[Passage]:
        """The passages sharing the mark after the first: each the id of an element just inside it."""
        return self.passages[1:]

    @property
    def label(self) -> str:
        return ",".join(p.likely or str(p.number) for p in self.passages)

    @property
    def title(self) -> str:
        return "; ".join(dict.fromkeys(p.title for p in self.passages))

    @property
    def proposed(self) -> bool:
        return all(p.proposed for p in self.passages)

    @property
    def suggested(self) -> bool:
        return all(p.suggested for p in self.passages)

    @property
    def likely(self) -> bool:
        return all(p.likely for p in self.passages)


@dataclass(frozen=True)
class Piece:
    """One step of the text pane, in order: a mark or heading opening, a piece of text, or its closing."""

    text: str = ""
    opens: Mark | None = None
    closes: Mark | None = None
    heading: bool = False  # text of a heading that could not be one element (a passage crosses it)


def evidence_passages(text: str, evidence: Sequence[Evidence]) -> tuple[list[Passage], dict[int, Evidence]]:
    """The evidence whose quote stands in the text at its offsets, numbered in the text's order (an
    earlier start first, the longer of two at one place first), and the evidence by number."""
    holding = sorted(
        (e for e in evidence if text[e.start : e.end] == e.quote), key=lambda e: (e.start, -(e.end - e.start))
    )
    marks = dict(enumerate(holding, start=1))
    passages = [Passage(n, e.start, e.end, f"{e.field} · {e.rule}") for n, e in marks.items()]
    return passages, marks


def suggestion_passages(
    text: str, suggestions: Sequence[Evidence], first: int
) -> tuple[list[Passage], dict[int, Evidence]]:
    """The draft's suggestions (passages offered, not written: unsure, or a trigger's others) that
    stand in the text, numbered from `first` in the text's order, marked apart from the evidence: a passage offered,
    not one a field holds."""
    holding = sorted((e for e in suggestions if text[e.start : e.end] == e.quote), key=lambda e: e.start)
    marks = dict(enumerate(holding, start=first))
    title = "suggested for {} · {} · confidence {:g}"
    passages = [
        Passage(n, e.start, e.end, title.format(e.field, e.rule, e.confidence or 0), suggested=True)
        for n, e in marks.items()
    ]
    return passages, marks


def likely_passages(text: str, found: Sequence[FinderMark], first: int, model: str) -> list[Passage]:
    """Each sentence, item or row the finder gives a field enough for (`finder.FLOOR`), numbered from
    `first`, marked with that field: how the model reads the document, sentence by sentence."""
    title = "likely {} ({:.2f}) · finder {}"
    return [
        Passage(first + n, m.start, m.end, title.format(m.field, m.confidence, model), likely=m.field)
        for n, m in enumerate(found)
        if 0 <= m.start < m.end <= len(text)
    ]


def nest(passages: Iterable[Passage]) -> list[Mark]:
    """The passages as a forest of marks: each passage in the innermost mark that holds it, a passage at
    the same place as a mark, or crossing one, added to that mark (which then reaches its end too)."""
    top = Mark(0, 0)  # the text itself; its end grows with what it holds
    for passage in sorted(passages, key=lambda p: (p.start, -(p.end - p.start), p.number)):
        if passage.end <= passage.start:
            continue
        # The open marks around the passage's start, outermost first.
        chain: list[Mark] = []
        level = top
        while level.children and level.children[-1].end > passage.start:
            level = level.children[-1]
            chain.append(level)
        crossed = next((m for m in chain if m.end < passage.end), None)
        if crossed is not None:  # it starts inside `crossed` and ends past it: they share it, made longer
            crossed.passages.append(passage)
            crossed.end = passage.end
            continue
        inner = chain[-1] if chain else top
        if inner is not top and (inner.start, inner.end) == (passage.start, passage.end):
            inner.passages.append(passage)
        else:
            inner.children.append(Mark(passage.start, passage.end, [passage]))
    return top.children


_PARAGRAPH = re.compile(r"[^\n]+(?:\n[^\n]+)*")
_MARKDOWN_HEADING = re.compile(r"^#{1,6}[ \t]+\S.*$", re.MULTILINE)


def headings_of(text: str, sections: Sequence[Section]) -> list[tuple[int, int]]:
    """Where the text's headings stand: each section's heading, as the paragraph of its own the extractor
    wrote it as, found in the sections' order; and every Markdown `#` line. Sorted, apart from each other."""
    found: set[tuple[int, int]] = set()
    paragraphs = [(m.start(), m.end(), m.group(0).strip()) for m in _PARAGRAPH.finditer(text)]
    at = 0
    for section in sections:
        heading = section.heading.strip()
        if not heading:
            continue
        for index in range(at, len(paragraphs)):
            start, end, words = paragraphs[index]
            if words == heading:
                found.add((start, end))
                at = index + 1
                break
    found |= {(m.start(), m.end()) for m in _MARKDOWN_HEADING.finditer(text)}
    return sorted(found)


def _place_heading(level: list[Mark], start: int, end: int) -> bool:
    """Put the heading `start`-`end` into the marks of `level` as an element: inside the mark that holds
    it, or around the marks it holds. False when a mark crosses it (it cannot be one element)."""
    while True:
        holder = next((m for m in level if m.start <= start and end <= m.end), None)
        if holder is None:
            break
        level = holder.children
    inside = [i for i, m in enumerate(level) if m.start < end and m.end > start]
    if any(level[i].start < start or level[i].end > end for i in inside):
        return False
    first = inside[0] if inside else next((i for i, m in enumerate(level) if m.start >= end), len(level))
    heading = Mark(start, end, kind="heading", children=[level[i] for i in inside])
    level[first : first + len(inside)] = [heading]
    return True


@dataclass
class _Pane:
    """The text pane as it is laid out: the text, the headings that are no element (`flat`), the pieces so far."""

    text: str
    flat: Sequence[tuple[int, int]]
    out: list[Piece] = field(default_factory=list)

    def walk(self, marks: list[Mark], start: int, end: int) -> None:
        """The text from `start` to `end` with `marks` (and the marks they hold) opened and closed in it."""
        at = start
        for mark in marks:
            self.plain(at, mark.start)
            self.out.append(Piece(opens=mark))
            self.walk(mark.children, mark.start, mark.end)
            self.out.append(Piece(closes=mark))
            at = mark.end
        self.plain(at, end)

    def plain(self, start: int, end: int) -> None:
        """The text from `start` to `end`, cut where a heading that is no element starts or ends."""
        cuts = sorted({start, end, *(c for span in self.flat for c in span if start < c < end)})
        for a, b in pairwise(cuts):
            self.out.append(Piece(self.text[a:b], heading=any(s <= a and b <= e for s, e in self.flat)))


def text_pane(text: str, passages: Iterable[Passage], headings: Sequence[tuple[int, int]] = ()) -> list[Piece]:
    """The text as the pane's pieces: the passages marked (`nest`), the headings as headings."""
    marks = nest(passages)
    # Headings that could not be elements (a passage crosses them): their pieces are styled alone.
    flat = [(start, end) for start, end in headings if not _place_heading(marks, start, end)]
    pane = _Pane(text, flat)
    pane.walk(marks, 0, len(text))
    return [piece for piece in pane.out if piece.text or piece.opens is not None or piece.closes is not None]
