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
from typing import NamedTuple

import numpy as np

__all__ = ["PASSAGE_CHARS", "Token", "Words", "passage", "shingles", "terms", "tokens", "words"]

# A shingle of this many words (Latin and other scripts written with spaces) ...
WORD_SHINGLE = 5
# ... or of this many Hangul letters, spaces left out: about two Korean words, the span of five English
# words in characters is about three, but a Hangul letter is a syllable.
HANGUL_SHINGLE = 6
PASSAGE_CHARS = 200  # at most this much of a shared passage is quoted

_URL = re.compile(r"(?:https?://|www\.)\S+", re.IGNORECASE)
_WORD = re.compile(r"[^\W_]+")
_SCRIPTS = re.compile(r"([\uac00-\ud7a3]+)|([^\W_\uac00-\ud7a3]+)")  # a run of Hangul, or another word


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


class Words(NamedTuple):
    """A text's words as compared (NFKC, lower case, web addresses left out), each script apart: its runs
    of Hangul letters, and its other words (runs of letters and digits)."""

    latin: list[str]
    hangul: list[str]


def words(text: str) -> Words:
    found = _SCRIPTS.findall(unicodedata.normalize("NFKC", _URL.sub(" ", text)).lower())
    return Words([w for _h, w in found if w], [h for h, _w in found if h])


_MIX = np.uint64(0x100000001B3)  # a rolling hash's multiplier (FNV's prime)
_HANGUL_SALT = np.uint64(0x9E3779B97F4A7C15)  # keeps a Hangul shingle apart from a word shingle of equal hash


def _rolling(values: np.ndarray, k: int) -> np.ndarray:
    """One 64-bit hash per run of k consecutive values (the whole, when there are fewer): k vector steps,
    not a Python step per shingle (a 10,000-case library's shingles in seconds, not a minute)."""
    if len(values) == 0:
        return values
    k = min(k, len(values))
    out = np.zeros(len(values) - k + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(k):
            out = out * _MIX + values[j : len(values) - k + 1 + j]
    return out


def shingles(text: str, said: Words | None = None) -> np.ndarray:
    """The text's shingles as sorted distinct 32-bit hashes: 5-grams of its non-Hangul words, and 6-letter
    runs of its Hangul (each script a stream of its own, so that a Korean post's English terms do not
    break its Korean shingles). `said`: the text's `words`, when they are known already."""
    said = words(text) if said is None else said
    latin = np.fromiter((zlib.crc32(w.encode()) for w in said.latin), dtype=np.uint64, count=len(said.latin))
    letters = np.frombuffer("".join(said.hangul).encode("utf-32-le"), dtype="<u4").astype(np.uint64)
    hashes = np.concatenate([_rolling(latin, WORD_SHINGLE), _rolling(letters, HANGUL_SHINGLE) ^ _HANGUL_SALT])
    return np.unique(((hashes >> np.uint64(32)) ^ hashes).astype(np.uint32))


def terms(text: str, said: Words | None = None) -> list[str]:
    """TF-IDF's terms of a text: each non-Hangul word of two letters or more but numbers, and each pair of
    letters inside a run of Hangul (a one-letter run as it is). `said`: the text's `words`, when known."""
    said = words(text) if said is None else said
    out = [w for w in said.latin if len(w) > 1 and not w.isdigit()]
    for run in said.hangul:
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
