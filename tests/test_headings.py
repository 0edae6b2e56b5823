"""Headings by meaning: the synonym table, the stemmer, the section's own words, the unknown count."""

from __future__ import annotations

import pytest

from pipeline.extract import extract
from pipeline.extract.headings import guess_from_words, match_heading, stem
from pipeline.models import SectionField


@pytest.mark.parametrize(
    ("heading", "field"),
    [
        ("Future measures", SectionField.ACTION_ITEMS),
        ("What we're doing about it", SectionField.ACTION_ITEMS),
        ("4. Preventive Actions", SectionField.ACTION_ITEMS),
        ("Corrective and Preventative Measures", SectionField.ACTION_ITEMS),
        ("Follow-ups", SectionField.ACTION_ITEMS),
        ("Action taken", SectionField.REMEDIATION),
        ("Actions Taken", SectionField.REMEDIATION),
        ("Conclusions", SectionField.LESSONS),
        ("Lessons learnt", SectionField.LESSONS),
        ("Why did this happen?", SectionField.ROOT_CAUSE),
        ("What went wrong", SectionField.ROOT_CAUSE),
        ("Cause", SectionField.ROOT_CAUSE),
        ("Causes of the outage", SectionField.ROOT_CAUSE),
        ("Issue summary", SectionField.SUMMARY),
        ("Detailed description of impact", SectionField.IMPACT),
    ],
)
def test_headings_the_old_table_missed_name_their_field(heading: str, field: SectionField) -> None:
    found = match_heading(heading)
    assert found is not None and (found.field, found.rule) == (field, "heading")
    assert found.confidence >= 0.8


@pytest.mark.parametrize(
    ("heading", "field"),
    [
        ("Root cause and resolution", SectionField.ROOT_CAUSE),
        ("Remediation and prevention", SectionField.REMEDIATION),
        ("Detection & response", SectionField.DETECTION),
    ],
)
def test_a_heading_of_two_parts_is_read_by_its_first(heading: str, field: SectionField) -> None:
    found = match_heading(heading)
    assert found is not None and found.field == field


@pytest.mark.parametrize(
    "heading",
    ["Background on DNS resolution", "Appendix: the timeline", "Why the fix took so long", "Postmortem", "Stats"],
)
def test_headings_of_the_documents_own_name_no_field(heading: str) -> None:
    assert match_heading(heading) is None


def test_the_stemmer_brings_a_words_forms_together() -> None:
    assert stem("measures") == stem("measure")
    assert stem("prevention") == stem("preventive") == stem("preventative") == stem("prevent")
    assert stem("learnt") == stem("learned") == stem("learnings")
    assert stem("ups") == "up"


def test_a_section_of_plans_is_action_items_below_a_headings_confidence() -> None:
    text = (
        "We will add an alert on the queue depth before the end of the month. "
        "We are going to move the cache to its own cluster. "
        "Going forward, every schema change gets a second reviewer."
    )
    guess = guess_from_words(text)
    assert guess is not None and (guess.field, guess.rule) == (SectionField.ACTION_ITEMS, "section-words")
    assert 0.6 <= guess.confidence < 0.8


def test_a_section_of_causes_is_the_root_cause() -> None:
    text = (
        "The workers stalled because the lock was never released. "
        "The lock was held due to a retry loop in the billing job. "
        "That loop was caused by a timeout set to zero in the new release."
    )
    guess = guess_from_words(text)
    assert guess is not None and guess.field == SectionField.ROOT_CAUSE


def test_a_mixed_or_short_section_is_left_unknown() -> None:
    assert guess_from_words("We will add an alert. It failed because of a typo.") is None
    mixed = (
        "The disk filled up because logs were not rotated on the node. "
        "We will rotate logs hourly from now on for every service. "
        "The dashboard showed the error rate at four per cent all day."
    )
    assert guess_from_words(mixed) is None


DOCUMENT = """# Queue stall on 3 May

## Summary

The billing queue stopped for forty minutes.

## Our plans

We will add an alert on the queue depth before the end of the month.
We are going to move the cache to its own cluster.
Going forward, every schema change gets a second reviewer.

## Notes from the call

The call had eleven people on it and lasted an hour in the afternoon.
"""


def test_sections_keep_unknown_headings_and_count_them() -> None:
    x = extract(DOCUMENT.encode(), "https://example.org/pm.md")
    fields = {s.heading: (s.field, s.confidence) for s in x.sections}
    assert fields["Summary"] == (SectionField.SUMMARY, None)
    assert fields["Our plans"][0] == SectionField.ACTION_ITEMS
    assert fields["Our plans"][1] is not None and fields["Our plans"][1] < 0.8
    assert fields["Notes from the call"] == (None, None)
    assert x.headings_unknown == 2  # the title and the notes
