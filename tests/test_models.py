"""The record format: a published case round-trips, vocabularies bind, drafts start open."""

from __future__ import annotations

import json

import jsonschema
import pytest
from helpers import CASE_FIXTURE, SHARED
from pydantic import ValidationError

from pipeline.draft import new_draft
from pipeline.errors import InvalidRecord
from pipeline.models import Case, Draft, Impact, Review, SourceEntry, json_schema
from pipeline.records import dump_record, load_record
from pipeline.vocabulary import KINDS, vocabulary

# The case fields a record leaves out when they are empty, so that a case published before they existed is
# written as it was: the library's published example has none of them.
LEFT_OUT_WHEN_EMPTY = {name for name, info in Case.model_fields.items() if info.exclude_if is not None}


def test_the_suites_case_fills_every_field_of_the_format() -> None:
    """tests/fixtures/case.json is the suite's record of the format: no field left empty, and it
    is written in the canonical layout already."""
    data = json.loads(CASE_FIXTURE.read_text(encoding="utf-8"))
    assert list(data) == [name for name in Case.model_fields if name not in LEFT_OUT_WHEN_EMPTY]
    empty = [name for name, value in data.items() if value in (None, [], {}, "", "unknown")]
    assert empty == []
    assert all(value != "unknown" for value in data["impact"].values())
    assert dump_record(Case.model_validate(data)) == CASE_FIXTURE.read_bytes()


def test_a_case_carries_which_texts_a_model_translated_and_leaves_the_key_out_without() -> None:
    data = json.loads(CASE_FIXTURE.read_text(encoding="utf-8"))
    marked = Case.model_validate({**data, "machine_translations": ["summary.ko", "remediation.0.text.ko"]})
    written = json.loads(dump_record(marked))
    assert list(written)[-1] == "machine_translations" and written["machine_translations"][0] == "summary.ko"
    assert "machine_translations" not in json.loads(dump_record(Case.model_validate(data)))
    with pytest.raises(ValidationError):
        Case.model_validate({**data, "machine_translations": ["Not a path!"]})


def test_a_case_round_trips_to_the_same_json(case_json: dict) -> None:
    case = Case.model_validate(case_json)
    shuffled = dict(sorted(case_json.items()))
    written = json.loads(dump_record(Case.model_validate(shuffled)))
    assert written == case_json == json.loads(dump_record(case))
    assert list(written) == [n for n in Case.model_fields if n not in LEFT_OUT_WHEN_EMPTY], (
        "the canonical layout orders keys for reading"
    )


def test_the_librarys_published_example_round_trips() -> None:
    """The library's own published case (../shared/reference), checked when it lies beside the checkout."""
    example = SHARED / "reference" / "example-case.json"
    if not example.is_file():
        pytest.skip(f"{example} not found: the library's published example is checked only beside ../shared")
    data = json.loads(example.read_text(encoding="utf-8"))
    written = json.loads(dump_record(Case.model_validate(data)))
    assert written == data
    # Fields added since (machine_translations) are left out of a record when empty: it reads as it was.
    assert set(data) <= set(Case.model_fields)
    assert set(Case.model_fields) - set(data) <= LEFT_OUT_WHEN_EMPTY


def test_case_has_exactly_the_fields_of_the_published_format(case_json: dict) -> None:
    assert set(Case.model_fields) - LEFT_OUT_WHEN_EMPTY == set(case_json)
    assert set(Review.model_fields) == set(case_json["review"])
    assert set(Impact.model_fields) == set(case_json["impact"])


def test_canonical_layout_is_a_fixed_point(case_json: dict) -> None:
    once = dump_record(Case.model_validate(case_json))
    twice = dump_record(load_record(Case, once, "cases/IL-0428.json"))
    assert once == twice
    assert once.endswith(b"}\n") and not once.endswith(b"\n\n")
    assert "체크포인트".encode() in once, "non-ASCII text is written as UTF-8, not \\u escapes"
    assert b'\n  "id": "IL-0428",\n' in once, "two-space indent, id first"


def test_every_term_in_the_example_is_in_the_vocabulary(case_json: dict) -> None:
    vocab = vocabulary()
    assert ("domains", case_json["domain"][0]) in vocab
    for symptom in case_json["symptoms"]:
        assert ("symptoms", symptom) in vocab
    for component in case_json["components"]:
        assert ("components", component) in vocab
    assert ("contributing", case_json["contributing"][0]) in vocab
    assert ("root_causes", case_json["root_cause"]) in vocab
    assert ("severities", case_json["severity"]) in vocab
    assert ("source_kinds", case_json["sources"][0]["kind"]) in vocab
    assert ("date_kinds", case_json["date_kind"]) in vocab


def test_every_vocabulary_term_has_a_label_and_every_kind_has_terms() -> None:
    vocab = vocabulary()
    for kind in KINDS:
        terms = vocab.terms[kind]
        assert terms, kind
        assert all(term.label for term in terms.values())


def test_unknown_term_is_rejected_with_the_known_ones(case_json: dict) -> None:
    with pytest.raises(InvalidRecord) as caught:
        load_record(Case, json.dumps({**case_json, "components": ["nccl", "flux-capacitor"]}), "cases/IL-0428.json")
    (fault,) = caught.value.faults
    assert fault.path == "cases/IL-0428.json"
    assert fault.field == "components.1"
    assert fault.problem.startswith("unknown component 'flux-capacitor'; known: nccl, pytorch, ")
    assert str(fault).count("\n") == 0


@pytest.mark.parametrize(
    ("change", "field", "problem"),
    [
        ({"date": "2022-02-30"}, "date", "not a calendar date"),
        ({"date": "March 2022"}, "date", "expected YYYY, YYYY-MM or YYYY-MM-DD"),
        ({"id": "IL-42"}, "id", "String should match pattern"),
        (
            {"sources": [{"url": "ftp://x.org/a", "kind": "blog", "archived": None}]},
            "sources.0.url",
            "not an absolute http(s) URL",
        ),
        ({"summary": {"english": "text"}}, "summary.english.[key]", "not a language code such as en or ko: 'english'"),
        ({"colour": "red"}, "colour", "extra inputs are not permitted"),
        ({"title": None}, "title", "Input should be an object"),
    ],
)
def test_faults_name_the_field_and_the_problem(case_json: dict, change: dict, field: str, problem: str) -> None:
    with pytest.raises(InvalidRecord) as caught:
        load_record(Case, json.dumps({**case_json, **change}), "cases/IL-0428.json")
    assert [(f.field, problem in f.problem) for f in caught.value.faults] == [(field, True)]


def test_a_missing_required_field_is_named(case_json: dict) -> None:
    data = {k: v for k, v in case_json.items() if k != "org_slug"}
    with pytest.raises(InvalidRecord) as caught:
        load_record(Case, json.dumps(data), "cases/IL-0428.json")
    assert [str(f) for f in caught.value.faults] == ["cases/IL-0428.json: org_slug: required field is missing"]


def test_partial_dates_are_allowed(case_json: dict) -> None:
    for value in ("2022", "2022-03", "2022-03-04"):
        assert Case.model_validate({**case_json, "date": value}).date == value


def test_a_registry_date_may_be_written_unquoted() -> None:
    from pipeline.registry import parse_registry

    entries, faults = parse_registry(
        "- url: https://example.org/a\n  date: 2020-10-06\n- url: https://example.org/b\n  date: 2021\n", "s.yaml"
    )
    assert faults == []
    assert [e.entry.date for e in entries] == ["2020-10-06", "2021"]


def test_timestamps_are_stored_in_utc(case_json: dict) -> None:
    case = Case.model_validate({**case_json, "updated_at": "2026-11-14T14:34:07+02:00"})
    assert json.loads(dump_record(case))["updated_at"] == "2026-11-14T12:34:07Z"


def test_texts_are_written_in_language_order(case_json: dict) -> None:
    case = Case.model_validate({**case_json, "title": {"ko": "제목", "en": "Title"}})
    assert list(json.loads(dump_record(case))["title"]) == ["en", "ko"]


def test_new_draft_leaves_review_fields_open() -> None:
    draft = new_draft(SourceEntry(url="https://github.com/dfds/postmortems/blob/master/PM2020-007.md", org="DFDS"))
    assert draft.review.written_by is None
    assert draft.review.reviewed_by is None
    assert draft.review.reviewed_at is None
    assert draft.state == "extracted"
    assert draft.sources[0].kind == "github"
    assert draft.sources[0].archive.status == "pending"
    assert load_record(Draft, dump_record(draft), "drafts/x.json") == draft


def test_a_draft_may_have_any_content_field_empty() -> None:
    draft = Draft.model_validate(
        {
            "id": "example-org-a-12345678",
            "origin": {"url": "https://example.org/a", "canonical_url": "https://example.org/a"},
        }
    )
    assert draft.title is None and draft.summary is None and draft.sources == []


def test_a_case_needs_its_published_fields() -> None:
    with pytest.raises(ValidationError) as caught:
        Case.model_validate({"id": "IL-0001"})
    missing = {e["loc"][0] for e in caught.value.errors() if e["type"] == "missing"}
    assert missing == {"org", "org_slug", "date", "date_kind", "title", "summary", "sources", "updated_at", "url"}


def test_generated_schema_accepts_the_example_and_rejects_unknown_terms(case_json: dict) -> None:
    schema = json_schema("case")
    jsonschema.validate(case_json, schema)
    assert "nccl" in json.dumps(schema), "vocabulary terms are listed in the schema"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**case_json, "severity": "apocalyptic"}, schema)


def test_generated_draft_schema_accepts_a_new_draft() -> None:
    draft = new_draft(SourceEntry(url="https://example.org/incidents/1"))
    jsonschema.validate(json.loads(dump_record(draft)), json_schema("draft"))
