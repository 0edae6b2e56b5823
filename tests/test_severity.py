"""Severity from what a document states, by the table in vocabulary.yaml (own texts)."""

from __future__ import annotations

import pytest

from pipeline.errors import VocabularyError
from pipeline.extract.severity import severity_in
from pipeline.vocabulary import _parse, vocabulary


@pytest.mark.parametrize(
    ("text", "term", "quote"),
    [
        ("We declared a SEV-2 and paged the team.", "high", "SEV-2"),
        ("This was a Sev 1 for the payments team.", "critical", "Sev 1"),
        ("Severity 3", "medium", "Severity 3"),
        ("A P1 incident was opened at once.", "critical", "P1"),
        ("Severity: degraded\n\nThe API answered slowly.", "medium", "Severity: degraded"),
        ("Status: partial outage", "medium", "Status: partial outage"),
        ("It was a major outage of the build farm.", "high", "major outage"),
        ("A partial outage of the search API followed.", "medium", "partial outage"),
        ("The upgrade caused a minor name resolution issue.", "low", "minor name resolution issue"),
        ("Logins failed: a complete outage for two hours.", "critical", "complete outage"),
    ],
)
def test_a_stated_severity_maps_to_its_term(text: str, term: str, quote: str) -> None:
    found = severity_in(text)
    assert found is not None
    assert (found.term, found.quote) == (term, quote)
    assert text[found.start : found.end] == quote


@pytest.mark.parametrize(
    "text",
    [
        "The certificate expired and the service was disrupted.",  # prose, not a label
        "Pages degraded for a while.",
        "P1: add an alert on disk usage.",  # an action item's priority
        "GitHub had a major outage that morning.",  # a third party's incident
        "Other than some minor challenges the move went well.",
        "Seven pods restarted.",
    ],
)
def test_words_that_do_not_state_this_incidents_severity_give_none(text: str) -> None:
    assert severity_in(text) is None


def test_the_table_names_only_known_severities() -> None:
    assert vocabulary().severity_statements
    assert {term for _, term in vocabulary().severity_statements} <= set(vocabulary().names("severities"))


def test_a_table_with_an_unknown_term_or_a_broken_pattern_is_refused() -> None:
    base = {kind: {"x": {"label": "X"}} for kind in ("domains", "components", "symptoms", "contributing")}
    base |= {kind: {"x": {"label": "X"}} for kind in ("root_causes", "source_kinds", "date_kinds")}
    base["severities"] = {"low": {"label": "Low"}}
    with pytest.raises(VocabularyError, match="unknown severity 'dire'"):
        _parse({**base, "severity_statements": [{"pattern": "x", "term": "dire"}]}, "v.yaml")
    with pytest.raises(VocabularyError, match="not a regular expression"):
        _parse({**base, "severity_statements": [{"pattern": "(", "term": "low"}]}, "v.yaml")
