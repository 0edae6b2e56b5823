"""A document as a flat list of blocks, and the sections built from them.

Every format (HTML, Markdown, plain text, PDF) is read into the same shape: headings
with their level, and body blocks (a paragraph, a list item, a table row, a code
block). Sections, full text and the opening summary are then built once, here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.extract.headings import field_for_heading, guess_from_words
from pipeline.models import Section, SectionField

__all__ = ["Block", "Link", "full_text", "opening_text", "sections_from"]


@dataclass(frozen=True)
class Link:
    """A link in a block: its words as they read in the block's text, and where it leads (absolute
    when the page's address was known)."""

    label: str
    url: str


@dataclass(frozen=True)
class Block:
    text: str
    level: int = 0  # 1-6 for a heading, 0 for body text
    kind: str = "para"  # "para", "item" (of a list, written "- text") or "row" (of a table)
    # Kept beside the text, not in it: the text stays as the page reads, so quotes and text
    # fragments still match; lists render "text (URL)" from these (pipeline.extract.lists).
    links: tuple[Link, ...] = ()
    # Inside a blockquote (Markdown `>`, HTML <blockquote>): what someone said or wrote, kept beside
    # the text as a mark, not a character in it, so the text (and its F1) is the page's own.
    quoted: bool = False

    @property
    def is_heading(self) -> bool:
        return self.level > 0

    def render(self) -> str:
        return f"- {self.text}" if self.kind == "item" else self.text


def _join(blocks: list[Block]) -> str:
    """Blocks as text: a list's items and a table's rows line by line, the rest a paragraph apart."""
    out: list[str] = []
    previous = None
    for block in blocks:
        if out and block.kind != "para" and block.kind == previous:
            out[-1] += "\n" + block.render()
        else:
            out.append(block.render())
        previous = block.kind
    return "\n\n".join(out).strip()


def full_text(blocks: list[Block]) -> str:
    return _join(blocks)


def sections_from(blocks: list[Block]) -> list[Section]:
    """One section per heading, holding the blocks up to the next heading.

    A sub-heading inherits its parent's field unless its own heading names one, so a
    Timeline's dated sub-sections stay timeline and a "Root cause" under "Analysis"
    is still the root cause. Text before the first heading is a section with an empty
    heading. Sections with no text are kept: the reviewer sees the page's outline.
    """
    sections: list[Section] = []
    parents: list[tuple[int, SectionField | None]] = []  # (level, field) of open headings
    heading: str = ""
    field: SectionField | None = None
    body: list[Block] = []

    def close() -> None:
        if heading or body:
            text = _join(body)
            quotes = [b.text for b in body if b.quoted]
            # A heading that names nothing: the section's own sentences may (a lower confidence).
            guess = guess_from_words(text) if heading and field is None else None
            if guess is not None:
                sections.append(
                    Section(heading=heading, field=guess.field, text=text, confidence=guess.confidence, quotes=quotes)
                )
            else:
                sections.append(Section(heading=heading, field=field, text=text, quotes=quotes))

    for block in blocks:
        if not block.is_heading:
            body.append(block)
            continue
        close()
        while parents and parents[-1][0] >= block.level:
            parents.pop()
        inherited = next((f for _, f in reversed(parents) if f is not None), None)
        heading, body = block.text, []
        field = field_for_heading(block.text) or inherited
        parents.append((block.level, field))
    close()
    return sections


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def opening_text(blocks: list[Block], limit: int = 1200) -> str | None:
    """The first paragraphs of body text, up to about `limit` characters, ending on a sentence.

    For documents without a Summary heading (logbooks, papers), this is their summary.
    """
    taken: list[str] = []
    size = 0
    for block in blocks:
        if block.is_heading or block.kind != "para" or len(block.text) < 40:
            continue
        taken.append(block.text)
        size += len(block.text)
        if size >= limit:
            break
    if not taken:
        return None
    text = "\n\n".join(taken)
    if len(text) <= limit:
        return text
    cut = text[:limit]
    ends = [m.start() for m in _SENTENCE_END.finditer(cut)]
    return cut[: ends[-1]] if ends else cut.rsplit(" ", 1)[0] + " …"
