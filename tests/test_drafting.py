"""Drafts from a whole document: the fields drafted from its text (own texts)."""

from __future__ import annotations

from datetime import timedelta

from pipeline.draft import DraftRules, apply_extraction, new_draft
from pipeline.extract import extract
from pipeline.ids import canonical_url
from pipeline.models import Draft, Origin, SourceEntry

URL = "https://example.org/postmortems/2024-05-01-queue.md"
POSTMORTEM = b"""# Queue outage on 1 May 2024

## Summary

A configuration change caused a partial outage of the job queue. Jobs were delayed for everyone.

## Timeline

All times are in UTC.

- 2024-05-01 23:40: Workers started failing to pull jobs after the configuration change.
- 23:55: An alert paged the on-call engineer.
- 00:20: The change was reverted.
- 00:25: Service is restored.

## Action items

- Validate the configuration before it ships.
"""


def draft_of(body: bytes, url: str = URL) -> Draft:
    entry = SourceEntry(url=url)
    extraction = extract(body, url, None)
    origin = Origin(url=url, canonical_url=canonical_url(url), final_url=url, format=extraction.format)
    return apply_extraction(new_draft(entry), entry, extraction, origin)


def test_a_draft_gets_its_durations_from_the_timeline() -> None:
    draft = draft_of(POSTMORTEM)
    assert draft.timeline.detected_after == timedelta(minutes=15)
    assert draft.timeline.resolved_after == timedelta(minutes=45)
    assert "timeline" in draft.extracted


def test_a_draft_gets_the_severity_its_document_states() -> None:
    assert draft_of(POSTMORTEM).severity == "medium"  # "a partial outage"
    assert draft_of(b"# Slow pages\n\nPages were slow; we added a cache.\n").severity == "unknown"


def test_a_duration_a_person_wrote_is_kept_on_the_next_crawl() -> None:
    draft = draft_of(POSTMORTEM)
    edited = draft.model_copy(update={"timeline": draft.timeline.model_copy(update={"resolved_after": None})})
    entry = SourceEntry(url=URL)
    extraction = extract(POSTMORTEM, URL, None)
    again = apply_extraction(edited, entry, extraction, edited.origin)
    assert again.timeline.resolved_after is None


def test_a_document_without_times_drafts_no_durations() -> None:
    draft = draft_of(b"# Slow pages\n\n## Summary\n\nPages were slow for a while; we added a cache.\n")
    assert (draft.timeline.detected_after, draft.timeline.resolved_after) == (None, None)


def test_every_drafted_field_keeps_the_passage_it_came_from() -> None:
    draft = draft_of(POSTMORTEM)
    by_field = {e.field: e for e in draft.evidence}
    assert {"severity", "timeline.detected_after", "timeline.resolved_after", "action_items"} <= set(by_field)
    for entry in draft.evidence:
        assert draft.text is not None and draft.text[entry.start : entry.end] == entry.quote
    assert by_field["severity"].quote == "partial outage" and by_field["severity"].rule == "severity.stated"
    assert by_field["timeline.detected_after"].rule == "duration.timeline"
    assert "Validate the configuration" in by_field["action_items"].quote


def test_a_field_a_person_wrote_keeps_no_machine_evidence_on_the_next_crawl() -> None:
    draft = draft_of(POSTMORTEM)
    edited = draft.model_copy(update={"severity": "high"})
    again = apply_extraction(edited, SourceEntry(url=URL), extract(POSTMORTEM, URL, None), edited.origin)
    assert again.severity == "high"
    assert "severity" not in {e.field for e in again.evidence}
    assert "action_items" in {e.field for e in again.evidence}, "the extractor's fields keep theirs"


def test_a_changed_page_gets_evidence_against_its_new_text() -> None:
    draft = draft_of(POSTMORTEM)
    changed = POSTMORTEM.replace(b"A configuration change", b"Late on 1 May a configuration change")
    again = apply_extraction(draft, SourceEntry(url=URL), extract(changed, URL, None), draft.origin)
    assert again.text != draft.text
    assert again.evidence and all(again.text[e.start : e.end] == e.quote for e in again.evidence)  # type: ignore[index]


def test_an_action_item_keeps_its_link_and_a_template_line_is_dropped() -> None:
    body = b"""# Cache outage

## Action items

- Add a load test for the cache ([#412](https://github.com/example/cache/issues/412))
- [issue](https://github.com/example/cache/issues/413)
"""
    items = [item.text["en"] for item in draft_of(body).action_items]
    # A bare link label is no item: its link goes with the item it follows.
    assert items == [
        "Add a load test for the cache (https://github.com/example/cache/issues/412)"
        " (https://github.com/example/cache/issues/413)"
    ]


def test_prose_fields_come_from_cue_sentences_when_no_heading_names_them() -> None:
    body = b"""# Login outage

## Summary

The outage was triggered by a change to the session store. Users could not log in for an hour.
We reverted the change at 11:00.
"""
    draft = draft_of(body)
    assert draft.trigger == {"en": "The outage was triggered by a change to the session store."}
    assert draft.impact.scope == "Users could not log in for an hour."
    assert [a.text["en"] for a in draft.remediation] == ["We reverted the change at 11:00."]
    by_field = {e.field: e for e in draft.evidence}
    assert by_field["trigger"].rule == "cue.trigger+stated"
    assert by_field["impact"].rule == "cue.impact"
    assert by_field["remediation.0"].quote == "We reverted the change at 11:00."
    assert all(draft.text is not None and draft.text[e.start : e.end] == e.quote for e in draft.evidence)


def test_a_section_under_the_field_heading_wins_over_cue_sentences() -> None:
    body = b"""# Login outage

## Summary

The outage was triggered by a change to the session store.

## Trigger

A bad session-store configuration went live.
"""
    draft = draft_of(body)
    assert draft.trigger == {"en": "A bad session-store configuration went live."}
    assert {e.rule for e in draft.evidence if e.field == "trigger"} == {"heading.trigger"}


def test_a_root_cause_no_class_fits_keeps_the_sentences_that_tell_it_until_a_person_classes_it() -> None:
    body = POSTMORTEM.replace(
        b"Jobs were delayed for everyone.", b"Jobs stalled because a worker pool was sized wrong."
    )
    draft = draft_of(body)
    assert draft.root_cause == "unknown"
    told = [e for e in draft.evidence if e.field == "root_cause"]
    assert [e.quote for e in told] == [
        "A configuration change caused a partial outage of the job queue.",
        "Jobs stalled because a worker pool was sized wrong.",
    ]
    assert told[0].rule == "cue.root_cause"
    classed = draft.model_copy(update={"root_cause": "capacity-exhaustion"})
    again = apply_extraction(classed, SourceEntry(url=URL), extract(body, URL, None), classed.origin)
    assert again.root_cause == "capacity-exhaustion" and "root_cause" not in {e.field for e in again.evidence}


def test_each_suggested_term_keeps_the_words_that_suggested_it() -> None:
    body = (
        b"# Training hang\n\n## Summary\n\nOur training job on 64 GPUs hung after an NCCL timeout. "
        b"The job hung again the next day with the same NCCL timeout, and hanging ranks were restarted.\n"
    )
    draft = draft_of(body)
    assert "training-hang" in draft.symptoms
    index = draft.symptoms.index("training-hang")
    words = [e for e in draft.evidence if e.field == f"symptoms.{index}"]
    assert words and all(e.rule == "vocabulary.symptoms" for e in words)
    assert all(draft.text is not None and draft.text[e.start : e.end] == e.quote for e in words)
    assert len({e.quote.lower() for e in words}) == len(words), "each word once, where it first stands"
    edited = draft.model_copy(update={"symptoms": ["training-hang"]})
    again = apply_extraction(edited, SourceEntry(url=URL), extract(body, URL, None), edited.origin)
    assert not [e for e in again.evidence if e.field.startswith("symptoms.")], "a person's list keeps none"


def test_the_impact_names_its_users_and_region_where_the_passage_does() -> None:
    body = POSTMORTEM.replace(
        b"## Timeline",
        b"## Impact\n\nAbout 30 percent of our customers in eu-west-1 could not check out.\n\n## Timeline",
    )
    draft = draft_of(body)
    assert (draft.impact.users, draft.impact.region) == ("30 percent of our customers", "eu-west-1")
    by_field = {e.field: e for e in draft.evidence}
    assert by_field["impact.users"].quote == "30 percent of our customers"
    assert by_field["impact.region"].rule == "cue.impact.region"
    assert draft.text is not None and draft.text[by_field["impact.region"].start :].startswith("eu-west-1")
    assert (draft_of(POSTMORTEM).impact.users, draft_of(POSTMORTEM).impact.region) == ("unknown", "unknown")


GATED = b"""# Proxy outage

## What happened

The outage was triggered by a change to the proxy configuration.
A synthetic probe would have detected the broken route within a minute.
Customers could not reach the dashboard for 40 minutes.

## Remediation

- Requests to the dashboard failed with errors.
- We reverted the proxy change.
"""


def test_a_passage_below_the_threshold_is_a_suggestion_not_the_field() -> None:
    draft = draft_of(GATED)
    assert draft.trigger == {"en": "The outage was triggered by a change to the proxy configuration."}
    assert draft.detection is None, "a 'would have detected' sentence is no detection"
    assert [item.text["en"] for item in draft.remediation] == ["We reverted the proxy change."]
    suggested = {(s.field, s.rule, s.confidence) for s in draft.suggestions}
    assert suggested == {
        ("detection", "cue.detection+modal", 0.35),
        ("remediation", "heading.remediation+failure", 0.5),
    }
    assert all(draft.text and draft.text[s.start : s.end] == s.quote for s in draft.suggestions)
    assert {e.field: e.confidence for e in draft.evidence}["trigger"] == 0.8


def test_the_threshold_decides_what_is_written() -> None:
    entry = SourceEntry(url=URL)
    extraction = extract(GATED, URL, None)
    origin = Origin(url=URL, canonical_url=canonical_url(URL), final_url=URL, format=extraction.format)
    everything = apply_extraction(new_draft(entry), entry, extraction, origin, DraftRules(threshold=0.0))
    assert everything.detection is not None and not everything.suggestions
    sure_only = apply_extraction(new_draft(entry), entry, extraction, origin, DraftRules(threshold=0.9))
    assert sure_only.trigger is None
    assert "trigger" in {s.field for s in sure_only.suggestions}


TOLD_TWICE = b"""# Queue outage

## Timeline

- 2024-05-02 09:00 UTC: Consumers started failing on every node.
- 09:20 UTC: We rolled back the release.

## What happened

The outage was triggered by the new release of the queue, which dropped messages.
"""


def test_the_trigger_is_the_narratives_sentence_and_the_timeline_line_a_suggestion() -> None:
    draft = draft_of(TOLD_TWICE)
    assert draft.trigger == {"en": "The outage was triggered by the new release of the queue, which dropped messages."}
    offered = [(s.field, s.quote) for s in draft.suggestions if s.field == "trigger"]
    assert offered == [("trigger", "Consumers started failing on every node.")]


ROOT_CAUSE = b"""# Proxy outage

## Summary

The proxy returned errors for an hour.

## Root cause

A race condition in the connection pool let two workers share one socket.

## Contributing factors

- The pool depended on an upstream library; its dependency pinning was loose.
- The change was not tested under load, and it shipped without testing.
"""


def test_a_root_cause_term_needs_a_phrase_or_two_signals_and_keeps_its_reason() -> None:
    draft = draft_of(ROOT_CAUSE)
    assert draft.root_cause == "software-bug"
    (words,) = [e for e in draft.evidence if e.field == "root_cause" and e.rule.startswith("vocabulary.")]
    assert (words.rule, words.quote, words.confidence) == (
        "vocabulary.root_causes.phrase.software-bug",
        "race condition",
        0.85,
    )
    # Two different words of a term ("upstream", "dependency") are two signals; two of "testing", one.
    assert draft.contributing == ["untested-change", "dependency-outage"]
    rules = {e.field: e.rule for e in draft.evidence if e.field.startswith("contributing.")}
    assert rules == {
        "contributing.0": "vocabulary.contributing.phrase.untested-change",
        "contributing.1": "vocabulary.contributing.two-signals.dependency-outage",
    }
    assert all(draft.text and draft.text[e.start : e.end] == e.quote for e in draft.evidence)


def test_one_common_word_suggests_a_root_cause_but_does_not_set_it() -> None:
    body = ROOT_CAUSE.replace(b"A race condition in the connection pool", b"A bug in the connection pool")
    draft = draft_of(body)
    assert draft.root_cause == "unknown"
    (offered,) = [s for s in draft.suggestions if s.field == "root_cause"]
    assert (offered.rule, offered.quote, offered.confidence) == (
        "vocabulary.root_causes.one-word.software-bug",
        "bug",
        0.4,
    )
    assert draft.text is not None and draft.text[offered.start : offered.end] == "bug"
    # With a lower threshold the writer's setting decides: the one word is written.
    entry = SourceEntry(url=URL)
    extraction = extract(body, URL, None)
    origin = Origin(url=URL, canonical_url=canonical_url(URL), final_url=URL, format=extraction.format)
    assert (
        apply_extraction(new_draft(entry), entry, extraction, origin, DraftRules(threshold=0.3)).root_cause
        == "software-bug"
    )


def test_the_drafts_default_threshold_is_the_settings_default() -> None:
    from pipeline.draft import DEFAULT_THRESHOLD
    from pipeline.settings import Settings

    assert Settings.model_fields["draft_confidence_threshold"].default == DEFAULT_THRESHOLD
