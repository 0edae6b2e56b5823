"""Text as the similarity rules see it: words, shingles, TF-IDF terms and a quotable shared passage. Pure.

Two renderings of one post (HTML and Markdown, or a syndicated copy) differ in markup, links and the
boilerplate around them, not in their words. So text is compared by its words only: NFKC, lower case,
runs of letters and digits; web addresses are dropped first (a Markdown link keeps its URL in the text,
the HTML rendering's extraction does not).

Korean is written with spaces between words that carry particles (서울은, 서울에서), and a copy may be
spaced otherwise. So Hangul is compared by characters, not by whitespace: the shingles of a text's
Hangul are 6-character runs of its Hangul letters with the spaces taken out, and its TF-IDF terms are
the character pairs inside each Hangul word. This needs no model (see docs/similar.md for how it
compares with kiwipiepy's morphemes, which the reader's search uses).
"""

from __future__ import annotations

import difflib
import re
import unicodedata
import zlib
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

__all__ = ["PASSAGE_CHARS", "Token", "passage", "shingles", "terms", "tokens"]

# A shingle of this many words (Latin and other scripts written with spaces) ...
WORD_SHINGLE = 5
# ... or of this many Hangul letters, spaces left out: about two Korean words, the span of five English
# words in characters is about three, but a Hangul letter is a syllable.
HANGUL_SHINGLE = 6
PASSAGE_CHARS = 200  # at most this much of a shared passage is quoted

_URL = re.compile(r"(?:https?://|www\.)\S+", re.IGNORECASE)
_WORD = re.compile(r"[^\W_]+")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_HANGUL_RUN = re.compile(r"[\uac00-\ud7a3]+")


class Token(NamedTuple):
    """A word as compared (normalised) and where it stands in the original text."""

    word: str
    start: int
    end: int


def tokens(text: str) -> list[Token]:
    """The text's words, normalised, with their places in `text`; the words of web addresses left out."""
    urls = [m.span() for m in _URL.finditer(text)]
    out: list[Token] = []
    u = 0
    for match in _WORD.finditer(text):
        start, end = match.span()
        while u < len(urls) and urls[u][1] <= start:
            u += 1
        if u < len(urls) and urls[u][0] <= start < urls[u][1]:
            continue
        out.append(Token(unicodedata.normalize("NFKC", match.group()).lower(), start, end))
    return out


def _hash(piece: str) -> int:
    return zlib.crc32(piece.encode("utf-8"))


def _grams(items: list[str], k: int, joiner: str) -> Iterator[str]:
    if len(items) < k:
        if items:
            yield joiner.join(items)
        return
    for i in range(len(items) - k + 1):
        yield joiner.join(items[i : i + k])


def shingles(text: str) -> np.ndarray:
    """The text's shingles as sorted distinct 32-bit hashes: word 5-grams of its non-Hangul words, and
    6-letter runs of its Hangul (each script a stream of its own, so that a Korean post's English terms
    do not break its Korean shingles)."""
    words = [t.word for t in tokens(text)]
    latin = [w for w in words if not _HANGUL.search(w)]
    hangul = "".join(m.group() for w in words for m in _HANGUL_RUN.finditer(w))
    pieces = list(_grams(latin, WORD_SHINGLE, " "))
    pieces += ["\x00" + g for g in _grams(list(hangul), HANGUL_SHINGLE, "")]
    values = np.fromiter((_hash(p) for p in pieces), dtype=np.uint32, count=len(pieces))
    return np.unique(values)


def terms(text: str) -> list[str]:
    """TF-IDF's terms of a text: each word of two letters or more, and inside a Hangul word each pair of
    letters (a one-syllable word as it is)."""
    out: list[str] = []
    for token in tokens(text):
        word = token.word
        if not _HANGUL.search(word):
            if len(word) > 1 and not word.isdigit():
                out.append(word)
            continue
        for run in _HANGUL_RUN.findall(word):
            out += [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
    return out


def passage(own: str, other: str, limit: int = PASSAGE_CHARS) -> str | None:
    """The longest run of words `own` shares with `other`, quoted from `own` as written (whitespace
    folded), cut at a word to at most `limit` characters; None when they share fewer than three words.
    difflib: the longest common run of two word lists is what SequenceMatcher finds."""
    mine, theirs = tokens(own), tokens(other)
    if not mine or not theirs:
        return None
    matcher = difflib.SequenceMatcher(None, [t.word for t in mine], [t.word for t in theirs], autojunk=False)
    found = matcher.find_longest_match(0, len(mine), 0, len(theirs))
    if found.size < 3:
        return None
    run = mine[found.a : found.a + found.size]
    end = run[-1].end
    for token in run:  # the last word that keeps the quote within the limit
        if token.end - run[0].start > limit:
            break
        end = token.end
    quote = " ".join(own[run[0].start : end].split())
    return quote if end == run[-1].end else quote + " …"
