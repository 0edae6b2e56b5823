"""Summaries a reader wants: the document's own, else its opening; clean; cut at a sentence within 120 words."""

from __future__ import annotations

import pytest

from pipeline.extract.blocks import Block, sections_from
from pipeline.extract.markdown import read_markdown
from pipeline.extract.prose import answers, prose_passages
from pipeline.extract.sentences import sentence_spans, sentences
from pipeline.extract.summary import noise, summary_from


def test_sentences_split_at_ends_but_not_at_abbreviations_or_ordinal_days() -> None:
    text = "On 17. November the cache, e.g. Redis, failed. We moved to .NET core! Was it 3.5? Yes."
    assert sentences(text) == [
        "On 17. November the cache, e.g. Redis, failed.",
        "We moved to .NET core!",
        "Was it 3.5?",
        "Yes.",
    ]
    assert [text[a:b] for a, b in sentence_spans(text)] == sentences(text)


def test_the_own_summary_wins_and_stops_at_the_next_heading() -> None:
    doc = read_markdown(
        "# Outage\n\nWritten by Ann Example\n\nIntro that is not the summary, about our team and its history.\n\n"
        "## Summary\n\nThe API was down for 20 minutes after a bad deploy.\n\n"
        "## Root cause\n\nA config flag was flipped.\n"
    )
    assert summary_from(doc.blocks, fill_below=0) == "The API was down for 20 minutes after a bad deploy."


def test_the_opening_without_bylines_dates_status_labels_captions_or_code() -> None:
    doc = read_markdown(
        "# Outage\n\nPosted on March 3, 2024\n\nMarch 3, 2024\n\nResolved - This incident has been resolved.\n\n"
        "![graph](g.png)\n\nZoomed in version\n\n```\n$ kubectl get pods\nerror: timeout\n```\n\n"
        "[E 2024-03-03 10:00:01 hub] proxy failed\n\n"
        "Our users could not log in for an hour because the identity provider's certificate expired.\n\n"
        "## Timeline\n\n- 10:00 alert\n"
    )
    assert summary_from(doc.blocks, fill_below=0) == (
        "Our users could not log in for an hour because the identity provider's certificate expired."
    )


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Written by: Jane Doe, on behalf of the team", "byline"),
        ("By Jane Doe", "byline"),
        ("Monday, 4 December 2019", "date line"),
        ("Investigating - We are looking into errors.", "status label"),
        ("Monitoring", "status label"),
        ("(based on https://example.com/template)", "template"),
        ("https://example.com/dashboard", "link or image"),
        ("Figure 2 the error rate", "caption"),
        ("2024-03-03T10:00:01Z ERROR the upstream proxy lost its connection after retries", "code or log"),
        ("2024-03-03 10:00 UTC: The upstream proxy lost its connection after three retries.", None),
        ("The proxy ran out of memory and restarted twice.", None),
    ],
)
def test_noise(text: str, reason: str | None) -> None:
    assert noise(Block(text)) == reason


def test_labels_under_a_summary_heading_are_parts_of_it_and_template_text_goes() -> None:
    doc = read_markdown(
        "# Outage\n\n## Summary\n\nWe scaled the cluster and ran out of IP addresses.\n\n"
        "**The underlying issue**:  \nA quick TL;DR of the underlying issue. Each zone has one subnet.\n\n"
        "**What happened?**:  \nOn Saturday the load balancers could not scale.\n"
    )
    assert summary_from(doc.blocks, fill_below=0) == (
        "We scaled the cluster and ran out of IP addresses.\n\nEach zone has one subnet.\n\n"
        "On Saturday the load balancers could not scale."
    )


def test_a_label_written_as_a_paragraph_ends_an_opening() -> None:
    doc = read_markdown(
        "# Outage\n\nWe scaled the cluster and ran out of IP addresses.\n\n"
        "**What happened?**:  \nOn Saturday the load balancers could not scale.\n"
    )
    assert summary_from(doc.blocks, fill_below=0) == "We scaled the cluster and ran out of IP addresses."


def test_cut_at_a_sentence_within_the_limit() -> None:
    sentence = "The database failover took longer than planned because all replicas lagged. "  # 11 words
    doc = read_markdown("# Outage\n\n" + sentence * 20)
    summary = summary_from(doc.blocks) or ""
    assert len(summary.split()) == 110 and summary.endswith("lagged.")
    long_one = read_markdown("# Outage\n\n" + "word " * 200 + "end.")
    assert len((summary_from(long_one.blocks) or "").split()) == 120


def test_a_short_summary_is_followed_by_the_root_cause_and_the_resolution() -> None:
    doc = read_markdown(
        "# Outage\n\nThe site went down.\n\n## Root cause\n\nA disk filled up. Logs were never rotated.\n\n"
        "## Resolution\n\n- cleared the disk\n\nWe rotated the logs and restarted the server.\n"
    )
    assert summary_from(doc.blocks) == (
        "The site went down.\n\nA disk filled up.\n\nWe rotated the logs and restarted the server."
    )


def test_no_clean_text_is_no_summary() -> None:
    assert (
        summary_from(read_markdown("# Outage\n\n## Timeline\n\n| time | event |\n|---|---|\n| 1 | 2 |\n").blocks)
        is None
    )


def test_over_the_limit_the_incident_is_kept_before_background() -> None:
    background = "Our platform serves many teams across the company every day. " * 10  # 100 words
    doc = read_markdown(
        "# Outage\n\n## Summary\n\nOn Monday the API went down for an hour. "
        + background
        + "A bad deploy caused it and we rolled it back.\n"
    )
    summary = summary_from(doc.blocks) or ""
    assert summary.startswith("On Monday the API went down for an hour.")
    assert summary.endswith("A bad deploy caused it and we rolled it back.") and len(summary.split()) <= 120


def _summary(markdown: str) -> str | None:
    """The summary as `extract` builds it: with the answers the document's prose gives."""
    blocks = read_markdown(markdown).blocks
    sections = sections_from(blocks)
    return summary_from(blocks, answers=answers(sections, prose_passages(sections)))


def test_a_summary_that_does_not_say_how_it_ended_gets_the_resolution_from_the_timeline() -> None:
    summary = _summary(
        "# Outage\n\n## Summary\n\nThe certificate of the login service expired and nobody could sign in.\n\n"
        "## Timeline\n\n- 2024-03-02 10:00 UTC: Sign-ins started failing.\n"
        "- 10:20: Restarted the login pods.\n- 10:40: New certificate generated, service restored.\n"
    )
    assert summary == (
        "The certificate of the login service expired and nobody could sign in.\n\n"
        "New certificate generated, service restored."
    ), "the entry that says the problem ended, not the first step"


def test_a_summary_that_names_no_cause_gets_the_sentence_that_does_where_it_fits() -> None:
    summary = _summary(
        "# Outage\n\n## Summary\n\nMost uploads failed for an hour on Monday, and we rolled back the release.\n\n"
        "## Details\n\nThe root cause was a missing slash in the storage path.\n"
    )
    assert summary is not None and summary.endswith("The root cause was a missing slash in the storage path.")


def test_a_logbook_whose_opening_tells_no_incident_is_summed_up_from_its_incident_section() -> None:
    summary = _summary(
        "# Training notes\n\nNotes on the runs of the big model, kept week by week by the team that trains it.\n\n"
        "## Week 1\n\nThe data loader was tuned. Throughput went up a little.\n\n"
        "## Week 2\n\nThe run hung twice on 40 nodes. Each hang left nodes down and the job timed out. "
        "A hang appeared once traffic between nodes passed a certain level.\n"
    )
    assert summary == (
        "Notes on the runs of the big model, kept week by week by the team that trains it.\n\n"
        "The run hung twice on 40 nodes. Each hang left nodes down and the job timed out. "
        "A hang appeared once traffic between nodes passed a certain level."
    )
    tagline = _summary(
        "# Notes\n\nTrials and tribulations.\n\n## Week 2\n\nThe run hung, and hung again. Nodes went down. "
        "Two jobs failed and one crashed.\n"
    )
    assert tagline == "The run hung, and hung again. Nodes went down. Two jobs failed and one crashed.", "no tagline"


def test_a_lead_in_to_code_is_not_how_an_incident_ended() -> None:
    summary = _summary(
        "# Outage\n\n## Summary\n\nThe queue workers crashed and jobs piled up for an hour.\n\n"
        "## Notes\n\nWe restarted the workers and ran a few jobs, then ran:\n\n"
        "```\nqueue status\n```\n\nWe rolled back the worker image and the queue drained.\n"
    )
    assert summary is not None and summary.endswith("We rolled back the worker image and the queue drained.")


def test_footnote_markers_log_lines_stock_sentences_and_colon_fragments_are_left_out() -> None:
    doc = read_markdown(
        "# Outage\n\n## Summary\n\nInvestigation is in progress. We apologise for the inconvenience. "
        "We have determined that the load balancer dropped half of all requests[1] after a certificate rotation.^2 "
        "The error looked like this:\n\n"
        "2024-03-03T10:00:01Z ERROR upstream proxy lost its connection to the storage backend after retries\n\n"
        "Uploads failed for an hour.\n"
    )
    assert summary_from(doc.blocks, fill_below=0) == (
        "The load balancer dropped half of all requests after a certificate rotation.\n\nUploads failed for an hour."
    )


def test_a_stock_sentence_is_kept_when_it_is_all_there_is() -> None:
    doc = read_markdown("# Degraded API\n\n## Summary\n\nInvestigation is in progress.\n")
    assert summary_from(doc.blocks, fill_below=0) == "Investigation is in progress."


def test_sentences_of_plans_and_of_what_would_have_been_are_left_out() -> None:
    summary = _summary(
        "# Outage\n\n## Summary\n\nThe outage was triggered by a change to the cache configuration. "
        "A canary check would have caught the bad value within a minute. "
        "Customers could not load their reports for 30 minutes. "
        "In the future we will validate cache changes before they ship. Going forward, changes should be staged.\n"
    )
    assert summary == (
        "The outage was triggered by a change to the cache configuration. "
        "Customers could not load their reports for 30 minutes."
    )


def test_a_counterfactual_that_names_the_cause_is_what_happened() -> None:
    summary = _summary(
        "# Outage\n\n## Summary\n\nAll uploads failed for an hour on Monday. "
        "A slow review meant that a patch which would have prevented the failure was not released.\n"
    )
    assert summary is not None and "A slow review meant that a patch which would have prevented" in summary


def test_a_plan_is_kept_when_it_is_all_there_is() -> None:
    assert _summary("# Plans\n\n## Summary\n\nIn the future we will stage every cache change.\n") == (
        "In the future we will stage every cache change."
    )


def test_over_the_limit_a_sentence_naming_the_trigger_displaces_lower_ranked_ones() -> None:
    # Twelve sentences of 9 words that tell the incident's course outrank the trigger's one cue word;
    # the trigger takes the place of the last of them, the opening stays, document order is kept.
    course = "".join(f"At step {n} the workers failed and the queue stalled. " for n in range(12))
    trigger = "The failures began after a change to the scheduler settings."
    summary = _summary(
        f"# Outage\n\n## Summary\n\nOn Monday the job queue was unavailable for an hour. {course}{trigger}\n"
    )
    assert summary is not None and len(summary.split()) <= 120
    assert summary.startswith("On Monday the job queue was unavailable for an hour.")
    assert summary.endswith(trigger)
    plain = summary_from(
        read_markdown(f"# Outage\n\n## Summary\n\nOn Monday the job queue was unavailable. {course}{trigger}\n").blocks
    )
    assert plain is not None and trigger not in plain, "without the prose's rules the cut is by cue words alone"


def test_a_first_person_sentence_that_another_says_without_we_is_left_out() -> None:
    summary = _summary(
        "# Outage\n\n## Summary\n\nThe login service failed for 20 minutes after a certificate expired. "
        "We rolled back the certificate change. The certificate change was rolled back at 10:40.\n"
    )
    assert summary == (
        "The login service failed for 20 minutes after a certificate expired. "
        "The certificate change was rolled back at 10:40."
    )
    kept = _summary(
        "# Outage\n\n## Summary\n\nThe login service failed for 20 minutes. We rolled back the certificate change.\n"
    )
    assert kept == "The login service failed for 20 minutes. We rolled back the certificate change.", "no other says it"
