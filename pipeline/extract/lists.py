"""Action items and remediation steps as a writer lists them, pure: each item's text, its link kept.

A list item that links somewhere keeps the URL, written after the text as `text (URL)`,
because "Add logging (#2226)" says nothing once the link is gone. A link whose words say
nothing ("issue", "PR", "#2226", the URL itself) at the start or the end of the item is
dropped from the words; its URL stays. A nested item that only points somewhere ("See
URL") joins its parent. Template text ("TODO", "N/A") and priority labels are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pipeline.extract.blocks import Block, Link
from pipeline.extract.headings import field_for_heading
from pipeline.models import SectionField

__all__ = ["list_items", "render_item"]

_BARE_LABEL = re.compile(
    r"(?:issues?|pr|prs|pull request|pull|link|here|this|source|ticket|commit|#?\d+|\[\d+\]|[\w.-]+/[\w.-]+#\d+)",
    re.IGNORECASE,
)
_WEB = re.compile(r"https?://", re.IGNORECASE)
_PRIORITY = re.compile(r"^(?:HIGH|MEDIUM|LOW|P[0-4])\b\s*[:\-–]?\s*")
# An item that is a template's placeholder, not an action.
_TEMPLATE = re.compile(
    r"^\W*(?:todo|tbd|n/?a|none|nothing|\.\.\.|…|action items?|follow[- ]ups?|\[[^\]]*\]|insert\b.*|add more\b.*)\W*$",
    re.IGNORECASE,
)
_POINTER = re.compile(r"\b(?:see|also|cf|more|details?|in|at)\b", re.IGNORECASE)


def _parts(text: str, links: Sequence[Link]) -> list[tuple[str, Link | None]]:
    """`text` cut into plain runs and link labels, in order (a label not found in the text is skipped)."""
    parts: list[tuple[str, Link | None]] = []
    position = 0
    for link in links:
        at = text.find(link.label, position) if link.label else -1
        if at < 0:
            continue
        if at > position:
            parts.append((text[position:at], None))
        parts.append((link.label, link))
        position = at + len(link.label)
    if position < len(text):
        parts.append((text[position:], None))
    return parts


def _says_nothing(label: str, url: str) -> bool:
    return label == url or bool(_BARE_LABEL.fullmatch(label.strip()))


def _is_bare(parts: list[tuple[str, Link | None]], index: int) -> bool:
    """A label that says nothing, standing at the start (before `:` or `-`) or at the end of the item."""
    label, link = parts[index]
    if link is None or not _says_nothing(label, link.url):
        return False
    before = "".join(t for t, _ in parts[:index])
    after = parts[index + 1 :]
    words_after = "".join(t for t, other in after if other is None or not _says_nothing(t, other.url))
    at_end = not re.sub(r"[\W_]+", "", words_after)
    # "#2226: Add …", "[#2226] Add …": a number leads an item as its reference, whatever follows it.
    lead = r"\s*(?:[:\-–]|$)" if not re.fullmatch(r"\[?#?\d+\]?", label.strip()) else r""
    at_start = not re.sub(r"[\W_]+", "", before) and re.match(lead, "".join(t for t, _ in after))
    return bool(at_end or at_start)


def render_item(text: str, links: Sequence[Link] = ()) -> str | None:
    """One item as `text (URL) (URL)`: bare labels at its ends dropped, web URLs after it, once each.

    Relative, anchor and mail links keep their words and add no URL. None for template text.
    """
    text = _PRIORITY.sub("", " ".join(text.split()))
    if not text or _TEMPLATE.fullmatch(text):
        return None
    parts = _parts(text, [link for link in links if _WEB.match(link.url)])
    urls: list[str] = []
    pieces: list[str] = []
    dropped_last = False
    for index, (piece, link) in enumerate(parts):
        if link is None:
            pieces.append(piece)
            continue
        dropped_last = _is_bare(parts, index)
        if not dropped_last:
            pieces.append(piece)
        if link.url not in urls:
            urls.append(link.url)
    line = " ".join("".join(pieces).split())
    if dropped_last:  # "…, see <URL>." loses the pointer with the URL it pointed at
        line = re.sub(r"[,;]?\s*\b(?:see(?: also)?|cf\.?|at|here)\s*([.!?]?)$", r"\1", line, flags=re.IGNORECASE)
    line = re.sub(r"^[:\-–]\s*", "", line)  # "#2226: Add …" once its label is gone
    line = re.sub(r"\s*[(\[]\s*[)\]]", "", line)  # "(PR)" once its label is gone
    line = re.sub(r"\s+([.,;:!?])", r"\1", line)
    line = re.sub(r"[,;:]\s*$", "", line).strip()
    if not re.sub(r"[\W_]+", "", line):
        line = " ".join(text.split())  # a link alone ("[#12](…)"): its label is all the words there are
    return " ".join([line, *(f"({url})" for url in urls if url not in line)])


def _points_only(block: Block) -> bool:
    """An item that only points somewhere ("See https://…", "More in the doc"): it belongs to the one above."""
    if not any(_WEB.match(link.url) for link in block.links):
        return False
    words = block.text
    for link in block.links:
        words = words.replace(link.label, " ")
    return not re.sub(r"[\W_]+", "", _POINTER.sub(" ", words))


def list_items(blocks: list[Block], field: SectionField) -> list[str]:
    """The items of the sections mapped to `field`, rendered with their links.

    Per section (a sub-heading starts another): its list items when it has a list, else its
    paragraphs, as a writer's "### Process" sub-section of action items may be prose.
    """
    sections: list[list[Block]] = []
    open_headings: list[tuple[int, SectionField | None]] = []
    current: list[Block] | None = None
    for block in blocks:
        if block.is_heading:
            while open_headings and open_headings[-1][0] >= block.level:
                open_headings.pop()
            open_headings.append((block.level, field_for_heading(block.text)))
            inherited = next((f for _, f in reversed(open_headings) if f is not None), None)
            current = [] if inherited == field else None
            if current is not None:
                sections.append(current)
        elif current is not None and block.kind != "row":
            current.append(block)
    out: list[str] = []
    for section in sections:
        kind = "item" if any(b.kind == "item" for b in section) else "para"
        for block in section:
            if block.kind != kind or "\n" in block.text:  # code keeps its lines: not an item
                continue
            if out and _points_only(block):
                urls = [link.url for link in block.links if _WEB.match(link.url) and link.url not in out[-1]]
                out[-1] = " ".join([out[-1], *(f"({url})" for url in urls)])
                continue
            rendered = render_item(block.text, block.links)
            if rendered:
                out.append(rendered)
    return out
