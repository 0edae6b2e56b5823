"""Evidence: the passage each drafted field came from, kept on the draft, gone from a field a person edits."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from helpers import complete_draft
from pydantic import ValidationError

from pipeline import review
from pipeline.evidence import Span, evidence_for, field_parts, holds, overlaps, without_evidence
from pipeline.models import Draft, DraftState, Evidence, Review, json_schema
from pipeline.publish import case_from_draft
from pipeline.records import dump_record, load_record
from pipeline.store import Store

TEXT = (
    "Summary\n\n"
    "A storage maintenance window throttled the metadata servers.\n\n"
    "Detection\n\n"
    "We were paged at 09:12 when checkpoints stalled.\n\n"
    "Action items\n\n"
    "- Alert when no training step completes for five minutes.\n"
    "- Write checkpoints asynchronously."
)


def drafted(case_json: dict[str, Any]) -> Draft:
    """A complete draft of TEXT, in `extracted`, with evidence for four of its fields."""
    draft = complete_draft(case_json, 1).model_copy(
        update={"state": DraftState.EXTRACTED, "review": Review(), "text": TEXT}
    )
    evidence = [
        evidence_for("trigger", TEXT, "heading", Span("A storage maintenance window throttled the metadata servers.")),
        evidence_for("detection", TEXT, "cue.detection", Span("We were paged at 09:12")),
        evidence_for("action_items.1", TEXT, "list-item", Span("Alert when no training step completes")),
        evidence_for("timeline.detected_after", TEXT, "timeline", Span("09:12")),
    ]
    return Draft.model_validate({**draft.model_dump(mode="json"), "evidence": [e.model_dump() for e in evidence]})


def test_evidence_is_made_from_a_quote_or_offsets_and_both_must_agree() -> None:
    by_quote = evidence_for("detection", TEXT, "cue.detection", Span("paged at 09:12"))
    assert TEXT[by_quote.start : by_quote.end] == "paged at 09:12"
    by_offsets = evidence_for("detection", TEXT, "cue.detection", Span(start=by_quote.start, end=by_quote.end))
    assert by_offsets == by_quote
    later = TEXT.index("checkpoints", TEXT.index("checkpoints") + 1)
    assert evidence_for("action_items.2", TEXT, "list-item", Span("checkpoints", start=later)).start == later
    with pytest.raises(ValueError, match="not the quote"):
        evidence_for("detection", TEXT, "cue.detection", Span("paged at 09:12", start=0))
    with pytest.raises(ValueError, match="not in the text"):
        evidence_for("detection", TEXT, "cue.detection", Span("we noticed"))
    with pytest.raises(ValueError, match="not a passage"):
        evidence_for("detection", TEXT, "cue.detection", Span(start=10, end=len(TEXT) + 1))
    with pytest.raises(ValueError, match="give the quote"):
        evidence_for("detection", TEXT, "cue.detection", Span(start=10))


def test_the_model_refuses_offsets_that_cannot_hold_the_quote_and_fields_a_case_lacks() -> None:
    with pytest.raises(ValidationError, match="span 5 characters, the quote has 4"):
        Evidence(field="trigger", quote="abcd", start=0, end=5, rule="heading")
    with pytest.raises(ValidationError, match="not a field of a case"):
        Evidence(field="stat", quote="abcd", start=0, end=4, rule="heading")
    with pytest.raises(ValidationError, match="pattern"):
        Evidence(field="action items", quote="abcd", start=0, end=4, rule="heading")
    assert Evidence(field="action_items[2]", quote="abcd", start=0, end=4, rule="list-item").field == "action_items.2"


def test_evidence_round_trips_and_the_generated_schema_takes_it(case_json: dict[str, Any]) -> None:
    draft = drafted(case_json)
    data = json.loads(dump_record(draft))
    assert data["evidence"][2] == {
        "field": "action_items.1",
        "quote": "Alert when no training step completes",
        "start": TEXT.index("Alert"),
        "end": TEXT.index("Alert") + 37,
        "rule": "list-item",
    }
    assert load_record(Draft, dump_record(draft), "d.json") == draft
    jsonschema.validate(data, json_schema("draft"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**data, "evidence": [{**data["evidence"][0], "start": -1}]}, json_schema("draft"))
    assert all(holds(e, draft.text) for e in draft.evidence)
    assert not holds(draft.evidence[0], TEXT.replace("storage", "network"))


def test_a_draft_written_with_bracketed_paths_loads_and_is_written_back_dotted(
    case_json: dict[str, Any], store: Store
) -> None:
    """The drafter once spelt list items `remediation[2]`: such a file loads with no migration, its
    paths read dotted, and the next write of the draft spells them dotted."""
    data = json.loads(dump_record(drafted(case_json)))
    old = [{**data["evidence"][2], "field": "remediation[2]"}, {**data["evidence"][2], "field": "action_items[1]"}]
    data.update(evidence=[*data["evidence"][:2], *old], suggestions=[{**old[0], "field": "components[0]"}])
    path = store.path("draft", data["id"])
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

    draft = store.read_draft(data["id"])
    assert [e.field for e in draft.evidence] == ["trigger", "detection", "remediation.2", "action_items.1"]
    assert [e.field for e in draft.suggestions] == ["components.0"]
    assert store.write_draft(draft)
    stored = json.loads(path.read_text(encoding="utf-8"))
    assert [e["field"] for e in stored["evidence"]][2:] == ["remediation.2", "action_items.1"]
    assert [e["field"] for e in stored["suggestions"]] == ["components.0"]
    assert store.read_draft(data["id"]) == draft


def test_a_draft_written_before_evidence_loads_with_none(case_json: dict[str, Any]) -> None:
    data = json.loads(dump_record(drafted(case_json)))
    del data["evidence"]
    assert load_record(Draft, json.dumps(data).encode(), "old.json").evidence == []


def test_a_published_case_carries_no_evidence(case_json: dict[str, Any]) -> None:
    case = case_from_draft(drafted(case_json), "IL-0001", "https://example.org/cases")
    assert "evidence" not in case.model_dump() and "evidence" not in json_schema("case")["properties"]


def test_paths_of_the_history_and_of_evidence_meet() -> None:
    assert field_parts("action_items[2]") == field_parts("action_items.2") == ("action_items", 2)
    assert overlaps("action_items[1]", "action_items.1.text.en")
    assert overlaps("action_items[1]", "action_items")
    assert not overlaps("action_items[1]", "action_items.0.text.en")
    assert overlaps("summary", "summary.ko") and not overlaps("summary", "summary_text")
    assert not overlaps("timeline.detected_after", "timeline.resolved_after")


def test_a_field_a_person_edits_keeps_no_machine_evidence(case_json: dict[str, Any]) -> None:
    before = drafted(case_json)
    after = review.set_field(before, "action_items.1.text.en", "Alert after two minutes without a step.")
    after = review.set_field(after, "timeline.detected_after", "PT20M")
    edited = review.edited(before, after, "carol")
    assert edited.history[-1].changed == ["action_items.1.text.en", "timeline.detected_after"]
    assert [e.field for e in edited.evidence] == ["trigger", "detection"]


def test_an_edit_of_a_lists_length_drops_the_evidence_of_all_its_items(case_json: dict[str, Any]) -> None:
    before = drafted(case_json)
    edited = review.edited(before, review.set_field(before, "action_items", []), "carol")
    assert [e.field for e in edited.evidence] == ["trigger", "detection", "timeline.detected_after"]


def test_evidence_is_the_pipelines_and_is_not_edited_by_hand(case_json: dict[str, Any]) -> None:
    before = drafted(case_json)
    with pytest.raises(review.ReviewError, match="evidence is kept by the pipeline"):
        review.edited(before, before.model_copy(update={"evidence": []}), "carol")
    with pytest.raises(review.ReviewError, match="evidence is kept by the pipeline"):
        review.set_field(before, "evidence", [])
    assert review.changed_fields(before, before.model_copy(update={"evidence": []})) == []


def test_dropping_evidence_leaves_a_draft_without_any_as_it_was(case_json: dict[str, Any]) -> None:
    draft = complete_draft(case_json, 1)
    assert without_evidence(draft, ["trigger"]) is draft
