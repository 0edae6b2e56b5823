"""A document's severity, from what it states ("Sev 1", "P1 incident", "a major outage"). Pure.

    severity_in(text) -> Severity | None

The statements and the terms they map to are a table in `vocabulary.yaml`
(`severity_statements`), read in order. A statement about a third party ("a GitHub
service degradation", "AWS had a major outage") says nothing of this incident and is
skipped. No statement, no severity: it stays "unknown" for the writer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.vocabulary import vocabulary

__all__ = ["Severity", "severity_in"]

# A provider named just before the statement: the statement is about them.
_THIRD_PARTY = re.compile(
    r"\b(github|aws|amazon|gcp|google|azure|cloudflare|travis|heroku|upstream|provider|vendor)\b[^.\n]{0,30}$",
    re.IGNORECASE,
)
_CONTEXT = 60


@dataclass(frozen=True)
class Severity:
    term: str
    quote: str  # the words that stated it
    start: int  # where they stand in the text
    end: int


def severity_in(text: str) -> Severity | None:
    """The severity the text first states, by the table's order; None when it states none."""
    for pattern, term in vocabulary().severity_statements:
        for match in pattern.finditer(text):
            if _THIRD_PARTY.search(text[max(0, match.start() - _CONTEXT) : match.start()]):
                continue
            return Severity(term, match.group(0), match.start(), match.end())
    return None
