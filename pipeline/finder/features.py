"""Features of a candidate, pure: what the finder's model weighs, each with a name a person can read.

Two blocks. The named block is what generalises across publishers: the drafting rules' cue words
(the same patterns the rules use, so cues and features never drift apart), the field the section's
heading names, where the unit stands (in the document, in its section, in a timeline), its tense and
modality, its shape. The word block is the unit's words and word pairs and its heading's words,
hashed (`FeatureHasher`): the model file then holds numbers and no vocabulary, so no document it was
trained on can be read back out of it, and a word never seen in training costs nothing.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction import FeatureHasher

from pipeline.extract import lexicon
from pipeline.finder.candidates import Candidate, words
from pipeline.models import SectionField

__all__ = ["HASHED", "NAMED", "matrix", "slots", "tokens"]

HASHED = 2**15  # hashed word slots: collisions among ~30,000 distinct words and pairs cost little

_FUTURE = re.compile(
    r"\b(?:will|shall|going to|plan(?:s|ned)? to|intend\w*|should|must|needs? to|would|could|might|may|"
    r"consider\w*|follow[- ]?up)\b",
    re.IGNORECASE,
)
_PAST = re.compile(r"\b\w{3,}ed\b", re.IGNORECASE)
_WE = re.compile(r"\b(?:we|our|us)\b", re.IGNORECASE)
_TIME = re.compile(r"\b\d{1,2}:\d\d\b|\b\d{4}-\d\d-\d\d\b|\b(?:UTC|GMT|CET|CEST|PST|PDT|EST|EDT)\b")
_NUMBER = re.compile(r"\b\d+(?:[.,]\d+)?\s?(?:%|percent|minutes?|hours?|users?|customers?|requests?)\b", re.I)
_IMPERATIVE = re.compile(
    r"^\W*(?:add|make|implement|create|improve|ensure|investigate|consider|document|review|set up|introduce|"
    r"separate|update|move|write|enable|automate|monitor|alert|test|audit|remove|replace|migrate|define)\b",
    re.IGNORECASE,
)


_CUE = lexicon.GROUPS  # the rules' own cue words (`extract.lexicon`)
_SECTION_FIELDS = [f.value for f in SectionField]

NAMED: tuple[str, ...] = (
    "position.document",
    "position.section",
    "position.first_in_section",
    "position.last_in_section",
    "position.first_section",
    "kind.item",
    "kind.row",
    "kind.sentence",
    "shape.long",
    "shape.short",
    "shape.ends_with_colon",
    "shape.quoted",
    "tense.future_or_modal",
    "tense.past",
    "voice.we",
    "timeline.time_stamp",
    "timeline.early_row",
    "timeline.late_row",
    "numbers.stated",
    "mood.imperative",
    "section.sure",
    *(f"section.{name}" for name in _SECTION_FIELDS),
    "section.none",
    *_CUE,
)


def _named(c: Candidate) -> list[float]:
    text = c.text
    count = len(words(text))
    in_section = c.index_in_section / max(1, c.section_size - 1)
    row = c.kind == "row" or c.section_field == SectionField.TIMELINE.value
    values = [
        c.position,
        in_section,
        float(c.index_in_section == 0),
        float(c.index_in_section == c.section_size - 1),
        float(c.section_index == 0),
        float(c.kind == "item"),
        float(c.kind == "row"),
        float(c.kind == "sentence"),
        min(count, 60) / 60,
        float(count < 8),
        float(text.rstrip().endswith(":")),
        float(c.in_quote),
        float(bool(_FUTURE.search(text))),
        min(len(_PAST.findall(text)), 4) / 4,
        float(bool(_WE.search(text))),
        float(bool(_TIME.search(text))),
        float(row and in_section < 0.34),
        float(row and in_section > 0.66),
        float(bool(_NUMBER.search(text))),
        float(bool(_IMPERATIVE.search(text))),
        c.section_confidence if c.section_field else 0.0,
        *(float(c.section_field == name) for name in _SECTION_FIELDS),
        float(c.section_field is None),
        *(float(bool(pattern.search(text))) for pattern in _CUE.values()),
    ]
    return values


def tokens(c: Candidate) -> list[str]:
    """The word block's tokens: the unit's words and word pairs, and its heading's words (`h:`)."""
    found = words(c.text)
    pairs = [f"{a} {b}" for a, b in itertools.pairwise(found)]
    return [*dict.fromkeys(found + pairs), *(f"h:{w}" for w in dict.fromkeys(words(c.heading)))]


@functools.cache
def _hasher() -> FeatureHasher:
    return FeatureHasher(n_features=HASHED, input_type="string", alternate_sign=False)


def slots(found: Sequence[str]) -> list[int]:
    """The hashed slot of each token (as the model's word block numbers it), in one pass."""
    if not found:
        return []
    return [int(i) for i in _hasher().transform([[t] for t in found]).tocsr().indices]


def matrix(found: Sequence[Candidate]) -> sp.csr_matrix:
    """One row per candidate: the word block (binary, each row of unit length), then the named block."""
    if not found:
        return sp.csr_matrix((0, HASHED + len(NAMED)))
    hashed = _hasher().transform([tokens(c) for c in found]).tocsr()
    hashed.data = np.minimum(hashed.data, 1.0)
    norms = np.sqrt(np.asarray(hashed.multiply(hashed).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    hashed = sp.diags(1.0 / norms) @ hashed
    named = sp.csr_matrix(np.array([_named(c) for c in found], dtype=float))
    return sp.hstack([hashed, named]).tocsr()
