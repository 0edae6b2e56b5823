"""Vocabulary terms a text suggests, pure: each term's words, matched as whole words.

A suggestion, not a verdict: the writer keeps or drops each tag. A term is suggested
when its words occur at least `min_hits` times, so one passing mention does not tag
a case. A regular expression per vocabulary finds every word of its terms, factored by
common prefixes.
"""

from __future__ import annotations

import functools
import re
from collections import Counter

from pipeline.vocabulary import Kind, vocabulary

__all__ = ["suggest_tags", "suggest_terms"]


def _trie_alternation(words: list[str]) -> str:
    """An alternation of `words` factored by common prefixes ("gpu(?: (?:died|failure))?").

    Python's re tries a plain alternation's hundreds of branches one by one at every
    word of the text; factored, it tries only the branches that share the letters read
    so far. Longer words are still preferred, as in a plain alternation sorted longest
    first: the optional continuation is greedy, and backtracks when the word boundary
    after it fails.
    """
    trie: dict = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def pattern(node: dict) -> str:
        ends_here = "" in node
        branches = [re.escape(char) + pattern(child) for char, child in sorted(node.items()) if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if ends_here:
            return ("(?:" + body + ")?") if len(branches) == 1 else body + "?"
        return body

    return pattern(trie)


def _terms_of_word(kind: Kind) -> dict[str, list[str]]:
    terms_of_word: dict[str, list[str]] = {}
    for name, term in vocabulary().terms[kind].items():
        for word in term.words:
            terms_of_word.setdefault(word, []).append(name)
    return terms_of_word


def _whole_words(words: list[str], *, lookahead: bool = False) -> re.Pattern[str]:
    if not words:
        return re.compile(r"(?!)")
    words_here = rf"(?:{_trie_alternation(words)})(?![\w-])"
    return re.compile(rf"(?<![\w-])(?={words_here})" if lookahead else rf"(?<![\w-]){words_here}")


@functools.cache
def _matcher(kind: Kind) -> tuple[re.Pattern[str], dict[str, list[str]]]:
    terms_of_word = _terms_of_word(kind)
    return _whole_words(list(terms_of_word)), terms_of_word


@functools.cache
def _starts(kinds: tuple[Kind, ...]) -> re.Pattern[str]:
    """Where a word of any of `kinds` begins, overlapping ones included (a zero-width match)."""
    return _whole_words(sorted({word for kind in kinds for word in _terms_of_word(kind)}), lookahead=True)


def _rank(hits: Counter[str], min_hits: int, limit: int) -> list[str]:
    ranked = sorted((-n, name) for name, n in hits.items() if n >= min_hits)
    return [name for _, name in ranked[:limit]]


def suggest_terms(kind: Kind, text: str, *, min_hits: int = 2, limit: int = 6) -> list[str]:
    """Terms of one vocabulary suggested by `text`, most mentioned first."""
    pattern, terms_of_word = _matcher(kind)
    hits: Counter[str] = Counter()
    for word in pattern.findall(text.lower()):
        hits.update(terms_of_word[word])
    return _rank(hits, min_hits, limit)


def suggest_tags(kinds: tuple[Kind, ...], text: str, *, min_hits: int = 2, limit: int = 6) -> dict[Kind, list[str]]:
    """`suggest_terms` for several vocabularies, with one pass over the text for all.

    The pass finds every place a word of any vocabulary begins; each vocabulary's own
    pattern is then tried only there, skipping places inside its previous match, which
    is what a pass of its own would find. Four passes cost three times as much.
    """
    lowered = text.lower()
    starts = [m.start() for m in _starts(kinds).finditer(lowered)]
    suggested: dict[Kind, list[str]] = {}
    for kind in kinds:
        pattern, terms_of_word = _matcher(kind)
        hits: Counter[str] = Counter()
        end = 0
        for start in starts:
            if start < end:
                continue
            match = pattern.match(lowered, start)
            if match:
                hits.update(terms_of_word[match.group()])
                end = match.end()
        suggested[kind] = _rank(hits, min_hits, limit)
    return suggested
