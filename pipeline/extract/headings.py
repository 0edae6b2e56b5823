"""Which case field a section heading means, pure: by meaning, not by spelling.

Postmortem templates (Google SRE, PagerDuty, status pages, engineering blogs) name their
sections in many ways: "Action items", "Future measures", "What we're doing about it",
"Preventive actions". A heading is normalised (numbering, bracketed asides, punctuation and
case removed), its filler words dropped and its words stemmed, then matched against a table of
phrases per field (`pipeline/headings.yaml`, data, not code). When the heading names nothing,
the section's own sentences may: a section whose sentences mostly say what will be done is
action items, one whose sentences mostly give causes is the root cause, at a lower confidence.

The stemmer is a small suffix stripper written here, not a library's: headings are a few
words of English, and what matters is that "measures"/"measure", "learnt"/"learned",
"prevention"/"preventive"/"preventative" meet, identically on both sides of the match.
(NLTK's Porter or Snowball stemmers would do the same, at the cost of a large dependency.)
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

import yaml

from pipeline.models import SectionField

__all__ = ["HeadingMatch", "field_for_heading", "guess_from_words", "match_heading", "normalise_heading", "stem"]

_NUMBERING = re.compile(r"^(?:\d+(?:\.\d+)*[.)]?|[ivx]+[.)]|[a-z][.)])\s+")
_PARENTHETICAL = re.compile(r"\s*[(\[].*?[)\]]\s*")
# Longest first; a suffix is stripped only when at least three letters stay.
_SUFFIXES = (
    "ational", "ations", "ation", "ative", "ments", "ment", "ities", "ions", "ings",
    "ion", "ing", "ity", "ive", "ate", "ies", "ied", "ed", "es", "ly", "s", "e",
)  # fmt: skip
_MIN_STEM = 3
_IRREGULAR = {"learnt": "learn", "taken": "take", "took": "take", "done": "do", "did": "do"}
# How sure a match is: the whole heading, its beginning, a phrase within it.
_EXACT, _BEGINS, _WITHIN = 0.95, 0.9, 0.8
_PARTS = re.compile(r"\s+(?:and|&|/)\s+|\s*/\s*")
_SAMPLE = 3000  # characters of a section its words are judged on
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])|\n+")


@dataclass(frozen=True)
class HeadingMatch:
    """The field a heading (or a section's words) names, how sure, and by which rule:
    "heading" (a phrase of the table) or "section-words" (the section's sentences)."""

    field: SectionField
    confidence: float
    rule: str


@dataclass(frozen=True)
class _Table:
    phrases: tuple[tuple[SectionField, tuple[str, ...]], ...]  # in the table's order
    own: tuple[tuple[str, ...], ...]
    filler: frozenset[str]
    cues: tuple[tuple[SectionField, re.Pattern[str]], ...]  # each field's patterns as one
    min_sentences: int
    min_share: float


def normalise_heading(heading: str) -> str:
    text = heading.strip().lower()
    text = _NUMBERING.sub("", text)
    text = _PARENTHETICAL.sub(" ", text)
    text = text.replace("&", " and ").replace("’", "'").replace("'", " ")
    text = re.sub(r"[^\w\s/-]", " ", text).replace("-", " ")
    return re.sub(r"\s+", " ", text).strip()


def stem(word: str) -> str:
    """A word without its English inflection or derivation suffix ("measures" -> "measur",
    "prevention"/"preventive" -> "prevent"): the same stem for the words a heading varies by."""
    word = _IRREGULAR.get(word, word)
    for suffix in _SUFFIXES:
        # A plural's "s" goes from short words too ("ups", "ops"); other suffixes need a stem.
        least = 2 if suffix == "s" and not word.endswith("ss") else _MIN_STEM
        if word.endswith(suffix) and len(word) - len(suffix) >= least:
            return word[: -len(suffix)]
    return word


def _words(text: str, filler: frozenset[str]) -> tuple[str, ...]:
    return tuple(stem(w) for w in normalise_heading(text).replace("/", " ").split() if w not in filler)


@functools.cache
def _table() -> _Table:
    source = resources.files("pipeline").joinpath("headings.yaml")
    data: dict[str, Any] = yaml.safe_load(source.read_text(encoding="utf-8"))
    filler = frozenset(str(w) for w in data.get("filler") or [])
    phrases = tuple(
        (SectionField(name), tuple(dict.fromkeys(_words(str(p), filler) for p in entries)))
        for name, entries in data["fields"].items()
    )
    own = tuple(_words(str(p), filler) for p in data.get("own") or [])
    words = data.get("section_words") or {}
    cues = tuple(
        (SectionField(name), re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE))
        for name, patterns in (words.get("fields") or {}).items()
    )
    return _Table(
        tuple((f, tuple(" ".join(p) for p in ps)) for f, ps in phrases),
        own,
        filler,
        cues,
        int(words.get("min_sentences", 2)),
        float(words.get("min_share", 0.6)),
    )


def _within(words: tuple[str, ...], phrase: tuple[str, ...]) -> int | None:
    """Where `phrase` stands in `words`, or None."""
    size = len(phrase)
    return next((i for i in range(len(words) - size + 1) if words[i : i + size] == phrase), None)


def _score(words: tuple[str, ...], phrase: tuple[str, ...]) -> float | None:
    if not phrase:
        return None
    if words == phrase:
        return _EXACT
    at = _within(words, phrase)
    # A one-word phrase names the heading only when it is half of it: "Customer impact", not
    # "Why the fix took so long".
    if at is None or (len(phrase) == 1 and 2 * len(phrase) < len(words)):
        return None
    return _BEGINS if at == 0 else _WITHIN


def _match_words(words: tuple[str, ...], table: _Table) -> tuple[float, int, int, SectionField] | None:
    best: tuple[float, int, int, SectionField] | None = None
    for order, (field, phrases) in enumerate(table.phrases):
        for phrase in phrases:
            score = _score(words, tuple(phrase.split()))
            if score is not None:
                candidate = (score, len(phrase.split()), -order, field)
                best = candidate if best is None or candidate[:3] > best[:3] else best
    return best


@functools.lru_cache(maxsize=4096)
def match_heading(heading: str) -> HeadingMatch | None:
    """The field a heading names by the table, how sure, or None for a heading of the document's
    own. Cached: the sections, the summary and the incidents each ask it of every heading."""
    table = _table()
    words = _words(heading, table.filler)
    if not words:
        return None
    whole = _match_words(words, table)
    if whole is not None and whole[0] == _EXACT:
        return HeadingMatch(whole[3], whole[0], "heading")
    if any(own and words[: len(own)] == own for own in table.own):
        return None
    parts = [_words(p, table.filler) for p in _PARTS.split(normalise_heading(heading))]
    if len(parts) > 1:
        for part in parts:
            found = _match_words(part, table) if part else None
            if found is not None:
                return HeadingMatch(found[3], round(found[0] * 0.95, 3), "heading")
    return HeadingMatch(whole[3], whole[0], "heading") if whole is not None else None


def field_for_heading(heading: str) -> SectionField | None:
    """The case field a heading means, or None for a heading of the document's own."""
    found = match_heading(heading)
    return found.field if found else None


def guess_from_words(text: str) -> HeadingMatch | None:
    """The field a section's own sentences make it, when its heading says nothing: most of its
    sentences (`min_share`, at least `min_sentences` of them) hold one field's cue patterns and
    few hold another's. Its confidence stays below any heading's (0.45 + 0.3 x the share)."""
    table = _table()
    # The section's first sentences judge it: a long one that is mostly one field's shows it early.
    sentences = [s for s in (part.strip() for part in _SENTENCE.split(text[:_SAMPLE])) if len(s.split()) >= 4]
    if len(sentences) < table.min_sentences:
        return None
    shares = {field: sum(1 for s in sentences if pattern.search(s)) / len(sentences) for field, pattern in table.cues}
    ranked = sorted(shares.items(), key=lambda item: -item[1])
    if not ranked or ranked[0][1] < table.min_share:
        return None
    field, share = ranked[0]
    if len(ranked) > 1 and ranked[1][1] >= share / 2:
        return None  # as much of another kind: the section is not one field's
    return HeadingMatch(field, round(0.45 + 0.3 * share, 3), "section-words")
