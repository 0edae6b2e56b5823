"""A summary a reader wants, pure: the document's own summary, else its opening, cleaned and cut.

The source is the first section whose own heading names the summary (Summary, Overview,
TL;DR, …), else the body after the title; either stops at the next heading, so a summary
never runs on into the root cause. Blocks a reader skips are dropped (bylines, date lines,
status labels of a status page, template text, image captions, links alone, code and log
lines, table rows), and the rest is cut at a sentence boundary within `limit` words:
uncut openings of 190-400 words were the drafts' most common fault.
"""

from __future__ import annotations

import re

from pipeline.extract.blocks import Block
from pipeline.extract.headings import field_for_heading
from pipeline.extract.sentences import sentences
from pipeline.models import SectionField

__all__ = ["LIMIT", "noise", "summary_from"]

LIMIT = 120

_BYLINE = re.compile(r"^\W*(?:(?:written|posted|published|updated|authored)(?:\s+\w+)?\s+(?:by|on)\b|by\s+[A-Z])", re.I)
_DATELINE = re.compile(
    r"^\W*(?:(?:posted|published|updated|date)\s*(?:on)?\W*)?(?:\w+day,?\s+)?"
    r"(?:[A-Za-z]+\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}|\d{4}-\d{2}-\d{2}|\d{1,2}\.?\s+[A-Za-z]+\.?\s+\d{4})\W*$",
    re.I,
)
# A status page's update labels: "Resolved - This incident has been resolved."
_STATUS = re.compile(
    r"^\W*(?:investigating|identified|monitoring|resolved|update|completed|scheduled|in progress|postmortem)\W*"
    r"(?:[-:–—]|$)",
    re.I,
)
# A template's own words, left in by the author, and cross-references.
_TEMPLATE = re.compile(
    r"^\W*(?:\(?based on https?://|a quick tl;?dr\b|see:|see also\b|note:|to follow\b|table of contents"
    r"|\[?(?:insert|todo|tbd|describe)\b|for the .{0,60}\bsee:)",
    re.I,
)
_LINK_OR_IMAGE = re.compile(r"^\W*(?:https?://\S+|!\[[^\]]*\]\([^)]*\))\W*$")
# Log and shell lines written as paragraphs: "[E 2017-09-29 12:01 ...]", "$ kubectl ...", "Traceback".
_LOG_LINE = re.compile(
    r"^\s*(?:\[[A-Z] \d{4}-\d\d-\d\d|[$>#] \S|traceback\b|(?:iteration|error|warning)\b.*[|:].*\d)", re.I
)
# A label alone ("What happened?", "The underlying issue:"), as written in place of a heading.
_PSEUDO_HEADING = re.compile(r"^[^.!?]{1,60}[:?]$")
# The same label leading a paragraph: "The underlying issue: Some pods ..."
_LEAD_IN = re.compile(r"^(?:[A-Z][^.:!?]{2,40}\?|[A-Z][^.:!?]{2,30}):\s+(?=[A-Z])")
_CAPTION_WORDS = 8
# Words that tell the incident itself, preferred when a summary must lose sentences.
_INCIDENT_CUE = re.compile(
    r"\b(?:caus\w*|because|due to|fail\w*|crash\w*|expir\w*|broke\w*|down|outage|unable|could not|error\w*|"
    r"deleted|unavailable|time ?out|roll\w* back|rollback|revert\w*|restor\w*|fix\w*|resolv\w*|mitigat\w*|"
    r"alert\w*|report\w*|notic\w*|detect\w*|users?|customers?|percent|trigger\w*|upgrad\w*|deploy\w*)\b|%",
    re.IGNORECASE,
)
# A sentence defining a thing ("Inotify allows processes to …"): background, not the incident.
_DEFINITION = re.compile(r"^[A-Z][\w.-]*(?: [\w.-]+){0,3} (?:is|are|allows?) (?:the|a|an)?\b", re.IGNORECASE)
_FILL = (SectionField.ROOT_CAUSE, SectionField.REMEDIATION)


def noise(block: Block) -> str | None:
    """Why a block is no summary text (a byline, a status label, …), or None when it is."""
    text = block.text.strip()
    if block.kind == "row":
        return "table row"
    if "\n" in text:
        return "code or log"  # readers join a paragraph's lines; only code keeps them
    if _LOG_LINE.match(text):
        return "code or log"
    if _BYLINE.match(text) and len(text.split()) <= 16:
        return "byline"
    if _DATELINE.match(text):
        return "date line"
    if _STATUS.match(text):
        return "status label"
    if _TEMPLATE.match(text):
        return "template"
    if _LINK_OR_IMAGE.match(text):
        return "link or image"
    if len(text.split()) <= _CAPTION_WORDS and not re.search(r"[.!?:]$", text):
        return "caption"  # a subtitle, an image's caption, a label: no sentence
    return None


def _paragraphs(blocks: list[Block], start: int) -> list[str]:
    """The clean body text from `start` to the next heading (or pseudo-heading after some text)."""
    taken: list[str] = []
    for block in blocks[start:]:
        if block.is_heading:
            break
        text = " ".join(block.text.split())
        if _PSEUDO_HEADING.match(text) and len(text.split()) <= 8:
            if taken:
                break  # "What happened?" after the summary starts another section
            continue
        if noise(block):
            continue
        lead_in = _LEAD_IN.match(text)
        if lead_in and taken:
            break  # "The underlying issue: …" is a section of its own, written as a label
        taken.append(text[lead_in.end() :] if lead_in else text)
    return taken


def _source(blocks: list[Block]) -> list[str]:
    for index, block in enumerate(blocks):
        if block.is_heading and field_for_heading(block.text) == SectionField.SUMMARY:
            own = _paragraphs(blocks, index + 1)
            if own:
                return own
    # The opening: the first run of body text between headings that has any clean text.
    for index, block in enumerate(blocks):
        if not block.is_heading and (index == 0 or blocks[index - 1].is_heading):
            opening = _paragraphs(blocks, index)
            if opening:
                return opening
    return []


def _cut(paragraphs: list[str], limit: int) -> str:
    """Whole sentences, in document order, within `limit` words.

    When they do not all fit: the first sentence, then those that tell the incident (what failed,
    why, who noticed, what fixed it) before background ("Inotify allows processes to …"), then the
    rest while they fit. A first sentence longer than `limit` is cut at a word.
    """
    found = [(i, s) for i, p in enumerate(paragraphs) for s in sentences(p) if not _TEMPLATE.match(s)]
    if not found:
        return ""
    sizes = [len(s.split()) for _, s in found]
    if sizes[0] > limit:
        return " ".join(found[0][1].split()[: limit - 1]) + " …"
    chosen = {0}
    budget = limit - sizes[0]
    if sum(sizes) <= limit:
        chosen = set(range(len(found)))
    else:
        for wanted in (lambda s: _INCIDENT_CUE.search(s) and not _DEFINITION.match(s), lambda s: True):
            for k, (_, sentence) in enumerate(found):
                if k not in chosen and sizes[k] <= budget and wanted(sentence):
                    chosen.add(k)
                    budget -= sizes[k]
    by_paragraph: dict[int, list[str]] = {}
    for k in sorted(chosen):
        by_paragraph.setdefault(found[k][0], []).append(found[k][1])
    return "\n\n".join(" ".join(kept) for kept in by_paragraph.values())


def _first_sentences(blocks: list[Block], fields: tuple[SectionField, ...]) -> list[str]:
    """The first sentence of the first clean paragraph of each field's sections, in `fields` order."""
    found: dict[SectionField, str] = {}
    stack: list[tuple[int, SectionField | None]] = []  # open headings: (level, field)
    for block in blocks:
        if block.is_heading:
            while stack and stack[-1][0] >= block.level:
                stack.pop()
            stack.append((block.level, field_for_heading(block.text)))
            continue
        field = next((f for _, f in reversed(stack) if f is not None), None)
        if field in fields and field not in found and block.kind == "para" and not noise(block):
            first = sentences(" ".join(block.text.split()))
            if first:
                found[field] = first[0]
    return [found[f] for f in fields if f in found]


def summary_from(blocks: list[Block], limit: int = LIMIT, *, fill_below: int = 60) -> str | None:
    """The document's summary, at most `limit` words, or None when it has no clean text to give.

    A summary under `fill_below` words ("The site went down.") is followed by the first sentence
    of the root cause and of the resolution, what a reader asks next.
    """
    paragraphs = _source(blocks)
    text = _cut(paragraphs, limit)
    if len(text.split()) < fill_below:
        extra = [s for s in _first_sentences(blocks, _FILL) if s not in text]
        text = _cut([*paragraphs, *extra], limit)
    return text or None
