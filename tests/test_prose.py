"""Prose fields from sentences and timeline entries (own short texts)."""

from __future__ import annotations

import re

from pipeline.extract.prose import Passage, prose_passages, remediation_item, written_passages
from pipeline.models import Section, SectionField


def _texts(sections: list[Section]) -> dict[str, list[str]]:
    return {name: [p.text for p in passages] for name, passages in prose_passages(sections).items()}


def test_cue_sentences_of_the_summary_fill_the_fields() -> None:
    summary = Section(
        heading="Summary",
        field=SectionField.SUMMARY,
        text=(
            "The outage was triggered by a change to the load balancer. "
            "An engineer noticed the error rate climbing. "
            "About 30 percent of requests failed in two regions. "
            "We rolled back the change and the errors stopped."
        ),
    )
    found = _texts([summary])
    assert found["trigger"] == ["The outage was triggered by a change to the load balancer."]
    assert found["detection"] == ["An engineer noticed the error rate climbing."]
    assert found["impact"] == ["About 30 percent of requests failed in two regions."]
    assert found["remediation"] == ["We rolled back the change and the errors stopped."]
    rules = {p.rule for passages in prose_passages([summary]).values() for p in passages}
    assert rules == {"cue.trigger+stated", "cue.detection", "cue.impact", "cue.remediation"}


def test_a_sentence_without_cues_fills_nothing() -> None:
    plain = Section(heading="", field=None, text="Our team runs the build farm. It has twelve machines.")
    assert _texts([plain]) == {"trigger": [], "detection": [], "impact": [], "remediation": [], "root_cause": []}


def test_the_timeline_gives_start_first_report_and_fixes() -> None:
    timeline = Section(
        heading="Timeline",
        field=SectionField.TIMELINE,
        text=(
            "- 2024-03-02 10:00 UTC: Builds started failing on every runner.\n"
            "- 10:12: A user reported broken builds in the chat.\n"
            "- 10:30: We restarted the runners.\n"
            "- 10:40: Builds are green again."
        ),
    )
    passages = prose_passages([timeline])
    assert [(p.text, p.rule) for p in passages["trigger"]] == [
        ("Builds started failing on every runner.", "timeline.trigger")
    ]
    assert [p.text for p in passages["detection"]] == ["A user reported broken builds in the chat."]
    assert [p.text for p in passages["remediation"]] == ["We restarted the runners."]


def test_a_section_named_for_a_field_is_left_to_its_heading() -> None:
    trigger = Section(heading="Trigger", field=SectionField.TRIGGER, text="A change to the DNS records was deployed.")
    lessons = Section(heading="Lessons", field=SectionField.LESSONS, text="Users could not log in, we learned.")
    assert _texts([trigger, lessons]) == {
        "trigger": [],
        "detection": [],
        "impact": [],
        "remediation": [],
        "root_cause": [],
    }


def test_tables_and_code_are_not_prose_but_list_items_are() -> None:
    body = Section(
        heading="Notes",
        field=None,
        text="host | restarted\nweb | yes\n\n$ kubectl rollout undo\nrolled back deployment/web",
    )
    assert _texts([body])["remediation"] == []
    items = Section(heading="What happened", field=None, text="- We rolled back twice.\n- Customers were affected.")
    assert _texts([items])["remediation"] == ["We rolled back twice."]
    assert _texts([items])["impact"] == ["Customers were affected."]


def test_the_root_cause_keeps_its_strongest_sentences_in_the_documents_order() -> None:
    summary = Section(
        heading="Summary",
        field=SectionField.SUMMARY,
        text=(
            "The job probably hit a slow disk. Builds failed because of a stale cache. "
            "We still need to find the root cause of the slow start. "
            "The underlying issue was a missing index on the jobs table. "
            "The queue grew due to retries. The deploy was slow due to the holidays."
        ),
    )
    assert _texts([summary])["root_cause"] == [
        "Builds failed because of a stale cache.",
        "The underlying issue was a missing index on the jobs table.",
        "The queue grew due to retries.",
    ], "tier 0 first, then tier 1 in order; 'probably' and a cause still sought are left out"


def test_a_timeline_entry_that_names_the_cause_is_a_root_cause_passage() -> None:
    timeline = Section(
        heading="Timeline",
        field=SectionField.TIMELINE,
        text=(
            "- 2024-03-02 10:00 UTC: Builds started failing.\n"
            "- 10:20: A node is identified as the one with a broken disk."
        ),
    )
    passages = prose_passages([timeline])["root_cause"]
    assert [(p.text, p.rule) for p in passages] == [
        ("A node is identified as the one with a broken disk.", "timeline.root_cause")
    ]


def test_template_text_is_no_passage() -> None:
    body = Section(heading="Summary", field=None, text="The underlying issue: A quick TL;DR of the underlying issue.")
    assert _texts([body])["root_cause"] == []


def test_a_field_keeps_only_its_first_passages() -> None:
    text = " ".join(f"Customers in region {n} could not pay." for n in range(6))
    found = _texts([Section(heading="Summary", field=SectionField.SUMMARY, text=text)])
    assert len(found["impact"]) == 3 and found["impact"][0] == "Customers in region 0 could not pay."


def test_a_sentence_naming_the_cause_is_the_root_causes_passage_too() -> None:
    summary = Section(
        heading="Summary",
        field=SectionField.SUMMARY,
        text=(
            "Requests failed for an hour. The root cause was an expired certificate on the gateway. "
            "We renewed it by hand."
        ),
    )
    found = _texts([summary])
    assert found["root_cause"] == ["The root cause was an expired certificate on the gateway."]
    assert found["trigger"] == ["The root cause was an expired certificate on the gateway."], "it names a trigger"
    named = Section(heading="Root cause", field=SectionField.ROOT_CAUSE, text="It was caused by a full disk.")
    assert _texts([named])["root_cause"] == [], "a section named for the root cause is left to its heading"


def test_the_one_scan_for_any_cue_finds_what_the_cues_find_one_by_one() -> None:
    from pipeline.extract import prose

    cues = [*prose._CUES.values(), *prose._ROOT_CAUSE_TIERS]
    samples = [
        "we rolled back the deploy",
        "an alert fired at noon",
        "users could not log in",
        "the root cause was a full disk",
        "it was probably a slow disk",
        "the weather was fine",
        "after deploying 2.3 the api failed",
        "a change to the dns records",
        "customers in two regions were affected",
        "nothing here at all",
    ]
    for text in samples:
        assert bool(prose._ANY_CUE.search(text)) == any(c.search(text) for c in cues), text
    for cue in cues:  # searched in lowered text: a capital letter in a cue would never match
        assert re.sub(r"\\[A-Za-z]", "", cue.pattern) == re.sub(r"\\[A-Za-z]", "", cue.pattern).lower()


def _passages(text: str, heading: str = "What happened") -> dict[str, list[tuple[str, str, float]]]:
    section = Section(heading=heading, field=None, text=text)
    return {name: [(p.text, p.rule, p.confidence) for p in found] for name, found in prose_passages([section]).items()}


def test_a_plain_cue_sentence_is_written_and_a_stated_one_is_surer() -> None:
    found = _passages("The outage was triggered by a change to the proxy. Someone deployed a new image.")
    assert found["trigger"] == [
        ("The outage was triggered by a change to the proxy.", "cue.trigger+stated", 0.8),
        ("Someone deployed a new image.", "cue.trigger", 0.65),
    ]


def test_what_would_have_been_or_will_be_done_is_lowered() -> None:
    found = _passages(
        "A synthetic probe would have detected the expired certificate. "
        "In the future we will roll back the deploy automatically."
    )
    (detection,) = found["detection"]
    assert detection[1:] == ("cue.detection+modal", 0.35), "a 'would have detected' sentence is no detection"
    assert all(rule.endswith("+modal") and sure < 0.6 for _, rule, sure in found["remediation"])


def test_a_negated_cue_is_lowered_and_an_impact_keeps_its_negations() -> None:
    found = _passages("The failover was not triggered by the network change. Customers could not log in.")
    assert found["trigger"][0][1:] == ("cue.trigger+negated", 0.35)
    assert found["impact"][0][1:] == ("cue.impact", 0.65), "'could not' is what an impact says"


def test_a_quoted_cue_and_a_background_section_are_lowered() -> None:
    quoted = _passages('The ticket read "the outage was caused by the new cache layer" at first.')
    assert quoted["trigger"][0][1] == "cue.trigger+quoted"
    background = _passages("Each deploy of the API is applied to one zone at a time.", heading="Background")
    assert background["trigger"][0][1:] == ("cue.trigger+background", 0.35)


def test_the_fix_that_ended_it_is_no_trigger_in_the_timeline() -> None:
    timeline = Section(
        heading="Timeline",
        field=SectionField.TIMELINE,
        text="- 2024-03-02 10:00 UTC: Fix deployed to production.\n- 10:05: Error rates are back to normal.",
    )
    (trigger,) = prose_passages([timeline])["trigger"]
    assert (trigger.rule, trigger.confidence) == ("timeline.trigger+fix", 0.4)


def test_another_cause_is_not_the_root_cause_unless_the_main_one_is_named_too() -> None:
    found = _passages(
        "Another root cause was a stale cache in the gateway. "
        "The main cause was the expired token, with contributing factors in the retries."
    )
    assert [(rule, sure) for _, rule, sure in found["root_cause"]] == [
        ("cue.root_cause+another", 0.5),
        ("cue.root_cause", 0.8),
    ]


def test_a_failure_under_a_remediation_heading_is_no_remediation() -> None:
    assert remediation_item("Requests to the API failed for ten minutes.").rule == "heading.remediation+failure"
    assert remediation_item("Requests to the API failed for ten minutes.").confidence < 0.6
    assert remediation_item("We restarted the failed workers.").confidence == 0.9


def test_what_the_incident_spared_is_no_impact_but_what_failed_is() -> None:
    found = _passages(
        "The mirror servers and the offline installers were not affected. "
        "Archived builds remained unaffected. Customers could not download new packages."
    )
    assert [(rule, sure) for _, rule, sure in found["impact"]] == [("cue.impact+negated", 0.35), ("cue.impact", 0.65)]


def test_a_negated_cause_is_no_trigger_nor_root_cause() -> None:
    found = _passages("Two earlier changes to the same column had not caused any slowdown.")
    assert found["trigger"][0][1:] == ("cue.trigger+negated", 0.35)
    assert all(rule.endswith("+negated") for _, rule, _ in found["root_cause"])


def test_an_alert_that_triggered_is_the_detection_not_the_trigger() -> None:
    found = _passages(
        "The outage was triggered by a full disk on the queue host. Our latency alert triggered at 04:10."
    )
    assert [(p, rule) for p, rule, sure in found["trigger"] if sure >= 0.6] == [
        ("The outage was triggered by a full disk on the queue host.", "cue.trigger+stated")
    ]
    assert found["trigger"][1][1:] == ("cue.trigger+alert", 0.35)
    assert [(p, rule) for p, rule, _ in found["detection"]] == [
        ("Our latency alert triggered at 04:10.", "cue.detection")
    ]


def test_a_rise_in_errors_is_no_remediation_but_a_raised_limit_is() -> None:
    found = _passages(
        "The billing service experienced increased error rates for forty minutes. "
        "We increased the connection limit of the pool."
    )
    assert [(p, rule) for p, rule, sure in found["remediation"] if sure >= 0.6] == [
        ("We increased the connection limit of the pool.", "cue.remediation")
    ]
    assert found["remediation"][0][1] == "cue.remediation+failure"


def test_a_sentence_that_leads_with_the_cause_is_no_impact() -> None:
    found = _passages(
        "The underlying issue was a lock held by a migration, which resulted in failed writes. "
        "We determined that a cron job caused the affected API calls to queue. "
        "Customers could not save their work for twelve minutes. "
        "Though it took long to determine the cause of the error, there was no loss of service."
    )
    assert [(rule, sure) for _, rule, sure in found["impact"]] == [
        ("cue.impact+cause", 0.35),
        ("cue.impact+cause", 0.35),
        ("cue.impact", 0.65),
        ("cue.impact", 0.65),
    ], "a cause sought is no cause told"


def test_a_cue_in_a_blockquote_is_lowered_as_quoted_words_are() -> None:
    quote = "The outage was triggered by a change to the proxy configuration."
    told = "Someone deployed a new image."
    section = Section(heading="What happened", text=f"A customer wrote:\n\n{quote}\n\n{told}", quotes=[quote])
    found = {p.text: (p.rule, p.confidence) for p in prose_passages([section])["trigger"]}
    assert found[quote] == ("cue.trigger+quoted", 0.35), "a stated cue in a blockquote is what someone wrote"
    assert found[told] == ("cue.trigger", 0.65), "the narrative after the quote is the narrative"
    cause = "The root cause was an expired certificate on the proxy."
    explained = Section(heading="What happened", text=cause, quotes=[cause])
    (rule,) = {p.rule for p in prose_passages([explained])["root_cause"]}
    assert rule == "cue.root_cause+quoted"


def test_a_trigger_stated_under_a_root_cause_heading_is_the_triggers() -> None:
    cause = Section(
        heading="Root cause",
        field=SectionField.ROOT_CAUSE,
        text=(
            "The queue workers ran out of memory. The trigger for this disruption was a change to the worker pool "
            "size. It was triggered by a nightly job as well, we think."
        ),
    )
    found = {name: [(p.text, p.rule, p.confidence) for p in ps] for name, ps in prose_passages([cause]).items()}
    assert found["trigger"][0] == (
        "The trigger for this disruption was a change to the worker pool size.",
        "cue.trigger+stated",
        0.8,
    )
    assert "The queue workers ran out of memory." not in [t for t, _, _ in found["trigger"]]


def test_a_stated_trigger_elsewhere_keeps_the_lowering_rules_and_lists_are_not_read() -> None:
    impact = Section(
        heading="Impact",
        field=SectionField.IMPACT,
        text="A second outage would have been triggered by the same change. This was not triggered by the DNS move.",
    )
    items = Section(
        heading="Action items",
        field=SectionField.ACTION_ITEMS,
        text="- Alert when the rollout was triggered by a bot.",
    )
    trigger = Section(heading="Trigger", field=SectionField.TRIGGER, text="It was triggered by a bad flag.")
    passages = prose_passages([impact, items, trigger])["trigger"]
    assert [(p.rule, p.confidence) for p in passages] == [("cue.trigger+modal", 0.35), ("cue.trigger+negated", 0.35)]


def test_a_fix_in_a_plain_verb_is_a_remediation_when_we_took_it() -> None:
    found = _texts(
        [
            Section(
                heading="What happened",
                field=None,
                text=(
                    "The on-call engineer was paged at 09:10. We then disabled the new configuration. "
                    "The team scaled the worker pool back down. The cache nodes drained slowly and requests failed."
                ),
            )
        ]
    )
    assert found["remediation"] == [
        "We then disabled the new configuration.",
        "The team scaled the worker pool back down.",
    ]


def test_a_plain_verb_before_any_detection_or_without_a_subject_is_no_remediation() -> None:
    before = "We disabled the legacy endpoint last year. Someone drained the queue."
    assert _texts([Section(heading="What happened", field=None, text=before)])["remediation"] == []


def test_a_timeline_entry_that_starts_with_a_plain_fix_is_a_remediation() -> None:
    timeline = Section(
        heading="Timeline",
        field=SectionField.TIMELINE,
        text=(
            "- 2024-03-02 10:00 UTC: Builds started failing on every runner.\n"
            "- 10:05: An alert fired for the build queue.\n"
            "- 10:10: Ejected the bad cache nodes from the pool.\n"
            "- 10:20: We drained the node but builds kept failing.\n"
            "- 10:30: Failed over to the standby region."
        ),
    )
    assert [p.text for p in prose_passages([timeline])["remediation"]] == [
        "Ejected the bad cache nodes from the pool.",
        "Failed over to the standby region.",
    ]


def test_the_trigger_holds_one_passage_the_narratives_before_a_timeline_line() -> None:
    line = Passage("trigger", "Deploy starts.", "timeline.trigger", 0.7)
    told = Passage("trigger", "The outage was triggered by a bad deploy.", "cue.trigger+stated", 0.8)
    also = Passage("trigger", "A second change caused errors.", "cue.trigger", 0.65)
    unsure = Passage("trigger", "It may have been caused by load.", "cue.trigger+modal", 0.25)
    written, offered = written_passages("trigger", [line, told, also, unsure], 0.6)
    assert (written, offered) == ([told], [line, also, unsure])
    # Without a sure narrative sentence the timeline's line stands; below the threshold nothing is written.
    assert written_passages("trigger", [line, unsure], 0.6) == ([line], [unsure])
    assert written_passages("trigger", [unsure], 0.6) == ([], [unsure])
    # A field of several steps keeps each passage that is sure enough.
    fixes = [Passage("remediation", "We rolled back.", "cue.remediation", 0.65), line]
    assert written_passages("remediation", fixes, 0.6) == (fixes, [])


def test_nobody_noticing_is_no_detection() -> None:
    told = Section(
        heading="What happened",
        field=None,
        text="No alert was configured, so nobody noticed the problem. No one was paged. A user reported the errors.",
    )
    rules = [(p.text, p.rule) for p in prose_passages([told])["detection"]]
    assert rules == [
        ("No alert was configured, so nobody noticed the problem.", "cue.detection+negated"),
        ("No one was paged.", "cue.detection+negated"),
        ("A user reported the errors.", "cue.detection"),
    ]


def test_an_accident_is_no_remediation_unless_we_took_the_step() -> None:
    found = _passages(
        "The pipeline unintentionally reverted all changes made during the night. "
        "We reverted the accidentally merged change."
    )
    assert [(p, rule) for p, rule, _ in found["remediation"]] == [
        ("The pipeline unintentionally reverted all changes made during the night.", "cue.remediation+accident"),
        ("We reverted the accidentally merged change.", "cue.remediation"),
    ]


def test_a_lead_in_is_lowered_and_a_link_and_why_it_was_noticed_are_no_passages() -> None:
    found = _passages(
        "This was caused by two factors: "
        "\n\nhttps://example.org/issues/140 was opened because builds failed."
        "\n\nThe problem was noticed because an engineer happened to look at the dashboard."
        "\n\nThe outage was caused by a full disk."
    )
    assert [(text, rule) for text, rule, _ in found["root_cause"]] == [
        ("This was caused by two factors:", "cue.root_cause+lead-in"),
        ("The outage was caused by a full disk.", "cue.root_cause"),
    ]


def test_a_cause_found_or_fixed_names_no_root_cause_but_one_identified_as_does() -> None:
    found = _passages(
        "Once the issue was resolved, we reopened the queue. "
        "We worked to understand what the problem was. "
        "The issue was identified as a full disk on the primary."
    )
    assert [text for text, _, _ in found["root_cause"]] == ["The issue was identified as a full disk on the primary."]


def test_customers_named_without_a_harm_is_no_impact_and_no_other_affected_is_spared() -> None:
    found = _passages(
        "We are publishing this review for our customers. "
        "No other customers were affected by this incident. "
        "Customers could not load their dashboards for an hour."
    )
    assert [(text, rule) for text, rule, _ in found["impact"]] == [
        ("We are publishing this review for our customers.", "cue.impact+audience"),
        ("No other customers were affected by this incident.", "cue.impact+negated"),
        ("Customers could not load their dashboards for an hour.", "cue.impact"),
    ]


def test_a_commitment_is_a_plan_and_a_step_taken_in_error_is_no_remediation() -> None:
    found = _passages(
        "To make sure it doesn't happen again, we're committing to replacing the scheduler. "
        "The server was incorrectly terminated due to a billing error. "
        "Engineers were first notified of the problem at 00:40 UTC."
    )
    assert [rule for _, rule, _ in found["remediation"]] == ["cue.remediation+modal", "cue.remediation+accident"]
    assert [rule for _, rule, _ in found["detection"]] == ["cue.detection+stated"]


def test_the_second_readings_true_passages_stay_written() -> None:
    found = _passages(
        "We found it was due to a misconfigured DNS record. "
        "The issue was found in the retry logic of the scheduler, which looped forever. "
        "Nobody noticed the problem until a customer reported it at 09:12. "
        "Customers saw 500 responses for two hours. "
        "With no warning customers were affected for two hours. "
        "The erroneous commit was reverted at 14:05 UTC. "
        "The service was restarted after it unexpectedly crashed."
    )
    assert [text for text, _, _ in found["root_cause"]][:2] == [
        "We found it was due to a misconfigured DNS record.",
        "The issue was found in the retry logic of the scheduler, which looped forever.",
    ]
    assert ("Nobody noticed the problem until a customer reported it at 09:12.", "cue.detection") in [
        (text, rule) for text, rule, _ in found["detection"]
    ]
    impact = [(text, rule) for text, rule, _ in found["impact"]]
    assert ("Customers saw 500 responses for two hours.", "cue.impact") in impact
    assert ("With no warning customers were affected for two hours.", "cue.impact") in impact
    assert [rule for text, rule, _ in found["remediation"]] == ["cue.remediation", "cue.remediation"]


def test_a_lead_in_is_offered_not_dropped_and_the_surest_narrative_trigger_is_written() -> None:
    found = _passages("At 14:10 we rolled back the deploy and restarted the workers with the following command:")
    assert [rule for _, rule, _ in found["remediation"]] == ["cue.remediation+lead-in"]
    weaker = Passage("trigger", "Last week we upgraded our monitoring stack.", "cue.trigger", 0.65)
    stated = Passage("trigger", "The outage was triggered by a DNS change.", "cue.trigger+stated", 0.8)
    assert written_passages("trigger", [weaker, stated], 0.6) == ([stated], [weaker])
