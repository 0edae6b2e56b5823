"""Vocabulary terms a text suggests, pure: each term's words, matched as whole words.

A suggestion, not a verdict: the writer keeps or drops each tag, and sees why it was
suggested: each suggestion keeps the words that suggested it, where they are, and its
reason. A term is suggested on a term phrase (one of its words of two or more words, such as
"admission controller", or the term's own name, such as "nccl") or on two
independent signals (two different words of it, such as "admission" and "webhook"; "upgrade"
and "upgraded" are one word's forms, one signal); one common word, however often repeated
("policy", "watchdog", "dependency", "down"), suggests nothing. Its mentions
must also reach `min_hits` (a phrase counts twice), so one passing word does not tag a case.
A regular expression per vocabulary finds every word of its terms,
factored by common prefixes.

Terms of ML training (NCCL, training hang, …) are suggested only for a text about
training or inference (`about_ml`): elsewhere their words mean something else ("timeout",
"stuck", "checkpoint").
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from pipeline.vocabulary import Kind, vocabulary

__all__ = [
    "ML_ONLY",
    "Suggestion",
    "about_ml",
    "suggest_tag_reasons",
    "suggest_tags",
    "suggest_term_reasons",
    "suggest_terms",
]

# Terms only a text about ML training or inference should carry. On 31 postmortems that are not
# about ML, their words ("timeout", "hangs", "get stuck") tagged 4 with nccl-timeout or training-hang.
ML_ONLY: dict[Kind, frozenset[str]] = {
    "domains": frozenset({"ai-infra"}),
    "components": frozenset(
        {
            "nccl",
            "pytorch",
            "deepspeed",
            "megatron",
            "cuda",
            "gpu-hardware",
            "gpu-driver",
            "interconnect",
            "slurm",
            "checkpointing",
            "dataloader",
        }
    ),
    "symptoms": frozenset(
        {
            "training-job-failed",
            "training-hang",
            "nccl-timeout",
            "gpu-unavailable",
            "loss-spike",
            "slow-training",
            "checkpoint-corrupted",
        }
    ),
}
_ML_CUE = re.compile(
    r"\b(?:training|inference|gpus?|checkpoints?|lm loss|iterations?|epochs?|tokens|nccl|cuda|a100|h100|"
    r"tflops|learning rate|grad norm|\d+b (?:model|parameters)|parameters|bf16|fp16|megatron|deepspeed)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"\w+")
# ML cues per 1000 words: the ML logbooks measured have 32-60, other postmortems 0-3.3 (one
# "investigate k8 training" action item).
_ML_DENSITY = 10.0
_ML_MIN_CUES = 2


def about_ml(text: str) -> bool:
    """Whether `text` is about ML training or inference: its words of that trade are dense enough."""
    cues = len(_ML_CUE.findall(text))
    if cues < _ML_MIN_CUES:
        return False
    return cues * 1000 / max(len(_WORD.findall(text)), 1) >= _ML_DENSITY


@dataclass(frozen=True)
class Suggestion:
    """A suggested term and why: the words that suggested it (as written, first seen first) and where."""

    term: str
    words: tuple[str, ...]
    spans: tuple[tuple[int, int], ...]  # (start, end) of each match in the text given
    reason: str = ""  # "term phrase 'nccl timeout'" or "two signals: 'admission', 'webhook'"

    @property
    def hits(self) -> int:
        return len(self.spans)

    @property
    def how(self) -> str:
        """The reason's kind, a word a rule name can carry: "phrase", "two-signals" or "one-word"."""
        return "phrase" if self.reason.startswith("term phrase") else "-".join(self.reason.split()[:2]).rstrip(":")


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


def _lower(text: str) -> str:
    """`text` lower-cased, of the same length so a match's offsets are the text's own.

    A few letters lower to two characters ("İ" to "i̇"); those are left as they are.
    """
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


@dataclass(frozen=True)
class _SuggestionRules:
    """What a caller counts as a suggestion: `min_hits` mentions of a term (a term phrase counts twice),
    at most `limit` terms, and with `one_word` the terms one word alone suggests too."""

    min_hits: int
    limit: int
    one_word: bool = False


def _suggestions(
    kind: Kind, text: str, matches: list[tuple[str, int, int]], rules: _SuggestionRules, ml: bool | None
) -> list[Suggestion]:
    """The terms of `kind` that (word, start, end) matches suggest, most mentioned first; `ml`: whether
    the text is about machine learning, None when not read yet."""
    spans: dict[str, list[tuple[int, int]]] = {}
    _, terms_of_word = _matcher(kind)
    for word, start, end in matches:
        for name in terms_of_word[word]:
            spans.setdefault(name, []).append((start, end))
    gated = ML_ONLY.get(kind, frozenset())
    if gated and spans.keys() & gated and not (about_ml(text) if ml is None else ml):
        spans = {name: found for name, found in spans.items() if name not in gated}
    lowered = _lower(text)
    reasons = {name: _reason(name, [lowered[a:b] for a, b in found], rules.one_word) for name, found in spans.items()}
    ranked = sorted(
        (-len(found), name)
        for name, found in spans.items()
        if reasons[name][0] and len(found) + reasons[name][1] >= rules.min_hits
    )
    out: list[Suggestion] = []
    for _, name in ranked[: rules.limit]:
        found = spans[name]
        words = tuple(dict.fromkeys(text[a:b] for a, b in found))
        out.append(Suggestion(name, words, tuple(found), reasons[name][0]))
    return out


def _is_phrase(term: str, word: str) -> bool:
    """A word of a term that names it on its own: two or more words, or the term's own name."""
    return " " in word or word == term.replace("-", " ") or word == term


# Endings of one word's forms: "upgrade"/"upgraded", "expired"/"expiry"/"expiration", "leak"/"leaked"
# are one signal said twice, not two.
_ENDING = re.compile(r"(?:ations?|ions?|ing|ed|es|s|y|e)$")


def _root(word: str) -> str:
    """A word's form without its ending, so its inflections count as one signal; a phrase as it is."""
    return word if " " in word or len(word) <= 4 else _ENDING.sub("", word)


def _reason(term: str, matched: list[str], one_word: bool = False) -> tuple[str, int]:
    """Why `term` is suggested by its matched words (lower case), "" when it is not;
    and how many of its matches are term phrases (each counts twice towards `min_hits`). Two signals
    are two different words, not two forms of one. With `one_word`, one word of it alone is a reason
    too, the weakest ("one word 'policy'"): for a suggestion to offer, never a tag."""
    phrases = [w for w in matched if _is_phrase(term, w)]
    if phrases:
        return f"term phrase {phrases[0]!r}", len(phrases)
    signals: dict[str, str] = {}  # each root's first word
    for word in matched:
        signals.setdefault(_root(word), word)
    seen = list(signals.values())
    if len(seen) >= 2:
        return f"two signals: {seen[0]!r}, {seen[1]!r}", 0
    if one_word and seen:
        return f"one word {seen[0]!r}", 0
    return "", 0


def suggest_term_reasons(
    kind: Kind, text: str, *, min_hits: int = 2, limit: int = 6, one_word: bool = False
) -> list[Suggestion]:
    """Terms of one vocabulary suggested by `text`, most mentioned first, each with its words.
    `one_word`: also the terms only one word of them suggests (reason "one word …"), which a
    caller offers as suggestions, never as tags (pipeline.draft)."""
    pattern, _ = _matcher(kind)
    matches = [(m.group(), m.start(), m.end()) for m in pattern.finditer(_lower(text))]
    return _suggestions(kind, text, matches, _SuggestionRules(min_hits, limit, one_word), None)


def suggest_terms(kind: Kind, text: str, *, min_hits: int = 2, limit: int = 6) -> list[str]:
    """Terms of one vocabulary suggested by `text`, most mentioned first."""
    return [s.term for s in suggest_term_reasons(kind, text, min_hits=min_hits, limit=limit)]


def suggest_tag_reasons(
    kinds: tuple[Kind, ...], text: str, *, min_hits: int = 2, limit: int = 6
) -> dict[Kind, list[Suggestion]]:
    """`suggest_term_reasons` for several vocabularies, with one pass over the text for all.

    The pass finds every place a word of any vocabulary begins; each vocabulary's own
    pattern is then tried only there, skipping places inside its previous match, which
    is what a pass of its own would find. Four passes cost three times as much.
    """
    lowered = _lower(text)
    starts = [m.start() for m in _starts(kinds).finditer(lowered)]
    ml: bool | None = None  # read once, and only if an ML term came up
    suggested: dict[Kind, list[Suggestion]] = {}
    for kind in kinds:
        pattern, _ = _matcher(kind)
        matches: list[tuple[str, int, int]] = []
        end = 0
        for start in starts:
            if start < end:
                continue
            match = pattern.match(lowered, start)
            if match:
                matches.append((match.group(), start, match.end()))
                end = match.end()
        if (
            ml is None
            and kind in ML_ONLY
            and any(name in ML_ONLY[kind] for word, _, _ in matches for name in _matcher(kind)[1][word])
        ):
            ml = about_ml(text)
        suggested[kind] = _suggestions(kind, text, matches, _SuggestionRules(min_hits, limit), ml)
    return suggested


def suggest_tags(kinds: tuple[Kind, ...], text: str, *, min_hits: int = 2, limit: int = 6) -> dict[Kind, list[str]]:
    """`suggest_tag_reasons` without the reasons: each vocabulary's suggested terms."""
    reasons = suggest_tag_reasons(kinds, text, min_hits=min_hits, limit=limit)
    return {kind: [s.term for s in found] for kind, found in reasons.items()}
