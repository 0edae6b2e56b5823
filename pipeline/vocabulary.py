"""The controlled vocabularies, read from `vocabulary.yaml` in the package.

One data file holds every tag a case may carry; this module loads it once and
answers two questions: is this term known, and what are the known terms.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from typing import Literal, get_args

import yaml

from pipeline.errors import VocabularyError

__all__ = ["KINDS", "Kind", "Term", "Vocabulary", "check_term", "vocabulary"]

Kind = Literal[
    "domains",
    "components",
    "symptoms",
    "contributing",
    "root_causes",
    "severities",
    "source_kinds",
    "date_kinds",
]
KINDS: tuple[Kind, ...] = get_args(Kind)

# How a kind is named in one-line messages: "unknown component 'x'".
_SINGULAR: dict[Kind, str] = {
    "domains": "domain",
    "components": "component",
    "symptoms": "symptom",
    "contributing": "contributing factor",
    "root_causes": "root-cause class",
    "severities": "severity",
    "source_kinds": "source kind",
    "date_kinds": "date kind",
}


@dataclass(frozen=True)
class Term:
    name: str
    label: str
    words: tuple[str, ...]


@dataclass(frozen=True)
class Vocabulary:
    terms: dict[Kind, dict[str, Term]]

    def names(self, kind: Kind) -> list[str]:
        return list(self.terms[kind])

    def __contains__(self, item: tuple[Kind, str]) -> bool:
        kind, name = item
        return name in self.terms[kind]


def _parse(data: object, origin: str) -> Vocabulary:
    if not isinstance(data, dict):
        raise VocabularyError(f"{origin}: expected a mapping of vocabularies at the top level")
    unknown = set(data) - set(KINDS)
    if unknown:
        raise VocabularyError(f"{origin}: unknown vocabularies {sorted(unknown)}; known: {', '.join(KINDS)}")
    terms: dict[Kind, dict[str, Term]] = {}
    for kind in KINDS:
        entries = data.get(kind)
        if not isinstance(entries, dict) or not entries:
            raise VocabularyError(f"{origin}: {kind}: expected a non-empty mapping of terms")
        terms[kind] = {}
        for name, spec in entries.items():
            if not isinstance(spec, dict) or not isinstance(spec.get("label"), str):
                raise VocabularyError(f"{origin}: {kind}.{name}: each term needs a label")
            words = spec.get("words") or []
            if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
                raise VocabularyError(f"{origin}: {kind}.{name}.words: expected a list of strings")
            terms[kind][str(name)] = Term(str(name), spec["label"], tuple(w.lower() for w in words))
    return Vocabulary(terms)


@functools.cache
def vocabulary() -> Vocabulary:
    """The package's vocabulary, loaded once per process."""
    source = resources.files("pipeline").joinpath("vocabulary.yaml")
    return _parse(yaml.safe_load(source.read_text(encoding="utf-8")), "pipeline/vocabulary.yaml")


def check_term(kind: Kind, value: str) -> str:
    """Return `value` if it is a known term of `kind`; otherwise raise ValueError listing the known ones."""
    if value in vocabulary().terms[kind]:
        return value
    known = ", ".join(vocabulary().names(kind))
    raise ValueError(f"unknown {_SINGULAR[kind]} {value!r}; known: {known}")
