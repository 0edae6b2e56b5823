"""PDF to blocks, pure: pypdf reads the text layer (papers and reports have one)."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass

from pypdf import PdfReader
from pypdf.errors import PdfReadError

from pipeline.errors import UnreadableDocument
from pipeline.extract.blocks import Block

__all__ = ["PdfDocument", "read_pdf"]

# A numbered section heading of a paper: "3 Pre-Training", "4.2 Reliability".
_NUMBERED_HEADING = re.compile(r"^(\d+(?:\.\d+){0,2})\.?\s+([A-Z][^.!?]{2,80})$")


@dataclass
class PdfDocument:
    blocks: list[Block]
    title: str | None
    date: str | None


def _blocks(text: str) -> list[Block]:
    blocks: list[Block] = []
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            blocks.append(Block(" ".join(paragraph)))
            paragraph.clear()

    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            flush()
            continue
        heading = _NUMBERED_HEADING.match(line)
        if heading:
            flush()
            blocks.append(Block(line, level=min(1 + heading.group(1).count("."), 6) + 1))
            continue
        if paragraph and paragraph[-1].endswith("-") and not paragraph[-1].endswith(" -"):
            paragraph[-1] = paragraph[-1][:-1] + line  # a word hyphenated across lines
        else:
            paragraph.append(line)
        if line.endswith((".", ":", "?", "!")) and len(line) < 60:
            flush()
    flush()
    return blocks


def read_pdf(data: bytes) -> PdfDocument:
    try:
        reader = PdfReader(io.BytesIO(data))
        pages = [page.extract_text() or "" for page in reader.pages]
        info = reader.metadata
    except (PdfReadError, ValueError, KeyError, OSError) as exc:
        raise UnreadableDocument(f"not a readable PDF: {exc}") from None
    blocks = _blocks("\n\n".join(pages))
    title = (info.title or "").strip() if info else ""
    if not title:
        title = next((b.text for b in blocks if 10 <= len(b.text) <= 200), "")
    created = info.creation_date if info else None
    return PdfDocument(blocks, title or None, created.date().isoformat() if created else None)
