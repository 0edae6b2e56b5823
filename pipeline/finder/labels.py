"""What a right passage is, pure: the one measure the finder's labels, `learn` and `bench/drafts.py` share.

A drafted passage is right for a field as far as its words lie in runs of words it shares, in order,
with a passage a person chose for that field (a key's, or a published case's). A word common to both
by chance ("the", "we") does not count; a sentence cut out of the passage counts whole. Training
labels, hit@k and written precision all use it, so they cannot disagree about what a right passage is.
"""

from __future__ import annotations

import difflib
from collections import Counter
from urllib.parse import urlparse

from pipeline.finder.candidates import words

__all__ = ["RIGHT", "contains", "covered_share", "publisher", "right", "word_recall"]

RIGHT = 0.5  # the share of a candidate's words that must lie in a chosen passage for it to be right


def contains(haystack: str, needle: str) -> bool:
    """Whether the needle's words appear contiguously, in order, among the haystack's words."""
    wanted = " ".join(words(needle))
    return bool(wanted) and f" {wanted} " in f" {' '.join(words(haystack))} "


def word_recall(haystack: str, needle: str) -> float:
    """The share of the needle's words (with their counts) that the haystack holds."""
    wanted, found = Counter(words(needle)), Counter(words(haystack))
    total = sum(wanted.values())
    return sum((wanted & found).values()) / total if total else 0.0


def covered_share(drafted: str, passages: list[str], run: int = 3) -> float:
    """The share of the drafted text's words that lie in a run of words it shares, in order, with one
    of the passages: at least `run` words long, or the whole passage when that is shorter."""
    have = words(drafted)
    if not have:
        return 0.0
    covered = [False] * len(have)
    for passage in passages:
        want = words(passage)
        if not want:
            continue
        least = min(run, len(want))
        matcher = difflib.SequenceMatcher(None, have, want, autojunk=False)
        for block in matcher.get_matching_blocks():
            if block.size >= least:
                covered[block.a : block.a + block.size] = [True] * block.size
    return sum(covered) / len(have)


def right(drafted: str, passages: list[str]) -> bool:
    """The drafted passage is right for a field whose chosen passages are `passages`."""
    return bool(passages) and covered_share(drafted, passages) >= RIGHT


# Hosts that publish for many: there the owner (the first part of the path) is the publisher.
FORGES = frozenset({"github.com", "gitlab.com", "codeberg.org", "bitbucket.org"})


def publisher(url: str, org_slug: str | None = None) -> str:
    """Who published a document: its host, or on a forge that hosts many (github.com) its owner. Folds
    never split a publisher: one's house style learned and scored on itself flatters the model."""
    parts = urlparse(url)
    host = (parts.hostname or "").removeprefix("www.")
    if host in FORGES:
        return org_slug or parts.path.strip("/").split("/")[0] or host
    return host
