"""Sentences of a paragraph, pure: their spans, so a quote can point back into the text.

A small splitter of our own: it splits after `.`, `!` or `?` (and any closing quote or
bracket) before a capital or a digit, except after an abbreviation ("e.g.", "v.") or an
ordinal day before a month ("On 17. November", as Danish and German postmortems write).
pysbd split ".NET" and "17. November"; syntok split "20. January" and rewrote spacing;
nltk and spaCy need models downloaded at run time.
"""

from __future__ import annotations

import functools
import re

__all__ = ["sentence_spans", "sentences"]

# Closing and opening quotes written as escapes: U+2019 U+201D close, U+2018 U+201C open.
_END = re.compile(r"(?<=[.!?])[\"')\]\u2019\u201d]*\s+(?=[\"'(`\[\u2018\u201c]?[A-Z0-9])")
_ABBREVIATION = re.compile(r"\b(?:e\.g|i\.e|etc|vs|v|cf|approx|incl|no|fig|mr|mrs|ms|dr|st)\.$", re.IGNORECASE)
_ORDINAL_DAY = re.compile(r"\b\d{1,2}\.$")
_MONTH = re.compile(r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)", re.IGNORECASE)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of `text`, trailing space excluded."""
    return list(_spans(text))


# The prose fields, the summary and its answers each split the same paragraphs.
@functools.lru_cache(maxsize=4096)
def _spans(text: str) -> tuple[tuple[int, int], ...]:
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _END.finditer(text):
        before = text[start : match.start()].rstrip("\"')]\u2019\u201d")
        if _ABBREVIATION.search(before) or (_ORDINAL_DAY.search(before) and _MONTH.match(text, match.end())):
            continue
        spans.append((start, match.start()))
        start = match.end()
    rest = text[start:].rstrip()
    if rest.strip():
        spans.append((start, start + len(rest)))
    return tuple(spans)


def sentences(text: str) -> list[str]:
    return [text[a:b] for a, b in _spans(text)]
