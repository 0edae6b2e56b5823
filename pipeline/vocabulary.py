"""The controlled vocabularies, read from `vocabulary.yaml` in the package.

One data file holds every tag a case may carry; this module loads it once and
answers two questions: is this term known, and what are the known terms.
"""

from __future__ import annotations

import functools
import re
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
# Not a vocabulary: the table from what a document states to a severity term.
_SEVERITY_STATEMENTS = "severity_statements"

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
    label: str  # English, as the review page and the commands show it
    words: tuple[str, ...]
    label_ko: str = ""  # Korean, as the reader's site shows it (`label_in`)

    def label_in(self, lang: str) -> str:
        """The term's label in a reader's language ("ko" or "en"); English where no other is given."""
        return self.label_ko if lang == "ko" and self.label_ko else self.label


@dataclass(frozen=True)
class Vocabulary:
    terms: dict[Kind, dict[str, Term]]
    # A document's own statement of severity -> the term, in order: the first match wins.
    severity_statements: tuple[tuple[re.Pattern[str], str], ...] = ()

    def names(self, kind: Kind) -> list[str]:
        return list(self.terms[kind])

    def __contains__(self, item: tuple[Kind, str]) -> bool:
        kind, name = item
        return name in self.terms[kind]


def _parse(data: object, origin: str) -> Vocabulary:
    if not isinstance(data, dict):
        raise VocabularyError(f"{origin}: expected a mapping of vocabularies at the top level")
    unknown = set(data) - set(KINDS) - {_SEVERITY_STATEMENTS}
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
            label_ko = spec.get("label_ko", "")
            if not isinstance(label_ko, str):
                raise VocabularyError(f"{origin}: {kind}.{name}.label_ko: expected a string")
            terms[kind][str(name)] = Term(str(name), spec["label"], tuple(w.lower() for w in words), label_ko)
    return Vocabulary(terms, _severity_statements(data.get(_SEVERITY_STATEMENTS) or [], terms["severities"], origin))


def _severity_statements(
    entries: object, severities: dict[str, Term], origin: str
) -> tuple[tuple[re.Pattern[str], str], ...]:
    if not isinstance(entries, list):
        raise VocabularyError(f"{origin}: {_SEVERITY_STATEMENTS}: expected a list of {{pattern, term}}")
    table: list[tuple[re.Pattern[str], str]] = []
    for number, entry in enumerate(entries, start=1):
        where = f"{origin}: {_SEVERITY_STATEMENTS}[{number}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("pattern"), str):
            raise VocabularyError(f"{where}: each entry needs a pattern")
        if entry.get("term") not in severities:
            raise VocabularyError(f"{where}: unknown severity {entry.get('term')!r}; known: {', '.join(severities)}")
        try:
            # Multiline: a label pattern anchors on the line it is written on.
            pattern = re.compile(entry["pattern"], re.IGNORECASE | re.MULTILINE)
        except re.error as exc:
            raise VocabularyError(f"{where}: not a regular expression: {exc}") from None
        table.append((pattern, str(entry["term"])))
    return tuple(table)


# libyaml's safe loader when PyYAML has it (the package's own file, read at every command's start: a tenth of
# a second with PyYAML's Python parser), else PyYAML's own; the same values either way.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.cache
def vocabulary() -> Vocabulary:
    """The package's vocabulary, loaded once per process."""
    source = resources.files("pipeline").joinpath("vocabulary.yaml")
    return _parse(yaml.load(source.read_text(encoding="utf-8"), Loader=_LOADER), "pipeline/vocabulary.yaml")


def check_term(kind: Kind, value: str) -> str:
    """Return `value` if it is a known term of `kind`; otherwise raise ValueError listing the known ones."""
    if value in vocabulary().terms[kind]:
        return value
    known = ", ".join(vocabulary().names(kind))
    raise ValueError(f"unknown {_SINGULAR[kind]} {value!r}; known: {known}")
