"""Prose fields from sentences and timeline entries (own short texts)."""

from __future__ import annotations

from pipeline.extract.prose import prose_passages
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
    assert rules == {"cue.trigger", "cue.detection", "cue.impact", "cue.remediation"}


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


def test_list_items_tables_and_code_are_not_prose() -> None:
    body = Section(
        heading="Notes",
        field=None,
        text="- we rolled back twice\n- customers were affected\n\nhost | restarted\nweb | yes",
    )
    assert _texts([body])["remediation"] == []
    assert _texts([body])["impact"] == []


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
