"""symptoms_text: what users and operators saw, from impact, symptom and alert passages, each with a confidence."""

from __future__ import annotations

from test_drafting import draft_of

from pipeline.draft import DEFAULT_THRESHOLD as THRESHOLD
from pipeline.extract.blocks import sections_from
from pipeline.extract.markdown import read_markdown
from pipeline.extract.symptoms import symptom_passages, symptoms_text


def _passages(markdown: str) -> dict[str, tuple[str, float]]:
    found = symptom_passages(sections_from(read_markdown(markdown).blocks))
    return {p.text: (p.rule, p.confidence) for p in found}


def test_errors_users_met_alerts_that_fired_and_the_impact_section_are_symptoms() -> None:
    found = _passages(
        "# Outage\n\n## Summary\n\nA bad config reached the edge. "
        "Users saw 502 errors on every page for 20 minutes.\n\n"
        "## Impact\n\nAbout a third of checkout requests were lost.\n\n"
        "## Timeline\n\n- 10:02 UTC: The latency alert fired and paged the on-call engineer.\n"
        "- 10:20 UTC: We rolled back the config.\n"
    )
    assert found["Users saw 502 errors on every page for 20 minutes."] == ("symptoms.error", 0.75)
    assert found["About a third of checkout requests were lost."][0] == "symptoms.heading"
    assert found["10:02 UTC: The latency alert fired and paged the on-call engineer."][0] == "symptoms.alert"
    assert "A bad config reached the edge." not in found and "10:20 UTC: We rolled back the config." not in found


def test_plans_negations_and_recoveries_fall_below_the_gate() -> None:
    found = _passages(
        "# Outage\n\n## Summary\n\nIn the future we will alert when users see errors on the login page. "
        "No customers were affected by the failed builds. After the fix, error rates returned to normal. "
        "Requests to the API timed out for an hour.\n"
    )
    assert found["Requests to the API timed out for an hour."][1] >= THRESHOLD
    sure = [text for text, (_, confidence) in found.items() if confidence >= THRESHOLD]
    assert sure == ["Requests to the API timed out for an hour."]
    assert found["No customers were affected by the failed builds."][1] < THRESHOLD, "kept, as a suggestion"
    assert (
        symptoms_text(
            symptom_passages(
                sections_from(
                    read_markdown("# Outage\n\nNo users saw errors. We will page when the site is down.\n").blocks
                )
            ),
            THRESHOLD,
        )
        is None
    )


def test_a_list_under_a_lead_in_tells_what_was_seen_and_lessons_are_not_read() -> None:
    found = _passages(
        "# Degradation\n\n## What happened\n\nDuring the affected period, some customers experienced:\n\n"
        "- Status updates not being saved\n- Slow page loads across the dashboard\n- A new colour scheme\n\n"
        "## Lessons learned\n\n- Users saw errors we never tested for.\n"
    )
    assert found["Status updates not being saved"][0] == "symptoms.list"
    assert "Slow page loads across the dashboard" in found
    assert "A new colour scheme" not in found and "Users saw errors we never tested for." not in found


def test_a_draft_writes_symptoms_text_with_evidence_for_each_passage() -> None:
    draft = draft_of(
        b"# Login outage\n\n## Summary\n\nThe identity provider's certificate expired. "
        b"Users could not sign in for an hour and saw 'invalid token' errors.\n\n"
        b"## Timeline\n\n- 09:00 UTC: The sign-in error rate climbed to 40 percent.\n"
    )
    assert draft.symptoms_text is not None
    assert draft.symptoms_text["en"].split("\n\n") == [
        "Users could not sign in for an hour and saw 'invalid token' errors.",
        "09:00 UTC: The sign-in error rate climbed to 40 percent.",
    ]
    evidence = [e for e in draft.evidence if e.field == "symptoms_text"]
    assert [e.rule for e in evidence] == ["symptoms.error", "symptoms.alert"]
    assert all(draft.text is not None and draft.text[e.start : e.end] == e.quote for e in evidence)


def test_apologies_thanks_and_commitments_are_no_observation_and_say_why() -> None:
    found = _passages(
        "# Messaging outage\n\n## Impact\n\n"
        "We apologize for the disruption this caused to users who could not send messages. "
        "We know how important chat is to your team. Thank you for your patience while uploads were failing. "
        "Users could not send messages for 40 minutes.\n\n"
        "## Summary\n\nWe're sorry that the site was down for so long. Builds failed with a timeout.\n"
    )
    assert found["Users could not send messages for 40 minutes."] == ("symptoms.heading", 0.85)
    assert found["Builds failed with a timeout."] == ("symptoms.error", 0.75)
    for text in (
        "We apologize for the disruption this caused to users who could not send messages.",
        "We know how important chat is to your team.",
        "Thank you for your patience while uploads were failing.",
        "We're sorry that the site was down for so long.",
    ):
        rule, confidence = found[text]
        assert rule.endswith("+apology") and confidence < THRESHOLD, text


def test_the_state_of_the_investigation_is_no_observation_and_only_a_suggestion() -> None:
    draft = draft_of(
        b"# API errors\n\n## Impact\n\nThe root cause is still under investigation. "
        b"Requests to the API returned 503 errors for an hour. "
        b"Engineers have identified the cause of the failed builds.\n\n"
        b"## Update\n\nWe are investigating elevated error rates on the API.\n"
    )
    assert draft.symptoms_text is not None
    assert draft.symptoms_text["en"] == "Requests to the API returned 503 errors for an hour."
    lowered = {e.quote: e.rule for e in draft.suggestions if e.field == "symptoms_text"}
    assert lowered == {
        "The root cause is still under investigation.": "symptoms.heading+investigation",
        "We are investigating elevated error rates on the API.": "symptoms.impact+investigation",
        "Engineers have identified the cause of the failed builds.": "symptoms.heading+investigation",
    }
    assert all(e.confidence is not None and e.confidence < THRESHOLD for e in draft.suggestions)


def test_a_text_that_only_apologizes_drafts_no_symptoms() -> None:
    passages = symptom_passages(
        sections_from(
            read_markdown(
                "# Outage\n\nWe sincerely apologize to every customer whose requests failed. "
                "Requests failed for reasons still under investigation.\n"
            ).blocks
        )
    )
    assert [p.rule for p in passages] == ["symptoms.error+apology", "symptoms.error+investigation"]
    assert symptoms_text(passages, THRESHOLD) is None
