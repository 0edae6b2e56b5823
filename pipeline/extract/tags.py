"""Vocabulary terms a text suggests, pure: each term's words, matched as whole words.

A suggestion, not a verdict: the writer keeps or drops each tag. A term is suggested
when its words occur at least `min_hits` times, so one passing mention does not tag
a case. One regular expression per vocabulary finds every word of every term in a
single pass over the text.
"""

from __future__ import annotations

import functools
import re
from collections import Counter

from pipeline.vocabulary import Kind, vocabulary

__all__ = ["suggest_terms"]


@functools.cache
def _matcher(kind: Kind) -> tuple[re.Pattern[str], dict[str, list[str]]]:
    terms_of_word: dict[str, list[str]] = {}
    for name, term in vocabulary().terms[kind].items():
        for word in term.words:
            terms_of_word.setdefault(word, []).append(name)
    if not terms_of_word:
        return re.compile(r"(?!)"), {}
    alternatives = "|".join(re.escape(w) for w in sorted(terms_of_word, key=len, reverse=True))
    return re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])"), terms_of_word


def suggest_terms(kind: Kind, text: str, *, min_hits: int = 2, limit: int = 6) -> list[str]:
    """Terms of one vocabulary suggested by `text`, most mentioned first."""
    pattern, terms_of_word = _matcher(kind)
    hits: Counter[str] = Counter()
    for word in pattern.findall(text.lower()):
        hits.update(terms_of_word[word])
    ranked = sorted((n, name) for name, n in hits.items() if n >= min_hits)
    return [name for _, name in sorted(ranked, key=lambda c: (-c[0], c[1]))[:limit]]
