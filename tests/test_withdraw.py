"""Withdrawn and merged cases: the record format, `incidentlib withdraw` on a real data root, and
`validate` catching a merge that points nowhere."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import jsonschema
import pytest
from pydantic import ValidationError

from pipeline.errors import InvalidRecord
from pipeline.fields import FORM, KEPT, PUBLISHED, WITHDRAWAL
from pipeline.models import SCHEMA_VERSION, Case, Draft, json_schema
from pipeline.publish import promote
from pipeline.records import dump_record, load_record
from pipeline.settings import Settings
from pipeline.store import Store

WHEN = "2026-12-01T09:00:00Z"
ONLY_WITHDRAWN = "only a withdrawn case has one: set `withdrawn` too (incidentlib withdraw does)"


def _library(store: Store, make_case: Callable[..., Case], *ids: str) -> dict[str, bytes]:
    # A library served at https://example.org/lib: its cases' addresses lie under that base (validate).
    (store.root / "incidentlib.env").write_text("INCIDENTLIB_PUBLIC_BASE_URL=https://example.org/lib\n")
    for case_id in ids:
        store.write_case(make_case(case_id, url=f"https://example.org/lib/cases/{case_id}"))
    return {case_id: store.path("case", case_id).read_bytes() for case_id in ids}


def test_the_withdrawal_is_a_cases_own_fields_and_no_drafts() -> None:
    assert WITHDRAWAL == ("withdrawn", "withdrawn_reason", "withdrawn_by", "merged_into")
    # A draft's `merged_into` is its own (a draft merged into another, pipeline.merge), kept by the review
    # and never copied into a case: publication writes a case's withdrawal fields itself.
    assert set(WITHDRAWAL) & set(Draft.model_fields) == {"merged_into"}
    assert "merged_into" in KEPT and "merged_into" in PUBLISHED
    assert not {path.split(".")[0] for path, _, _ in FORM} & set(WITHDRAWAL), "no reviewer edits a withdrawal"


def test_a_standing_case_is_written_without_them_and_a_draft_refuses_them(
    case_json: dict, make_draft: Callable[..., Draft]
) -> None:
    written = json.loads(dump_record(Case.model_validate(case_json)))
    assert not set(WITHDRAWAL) & set(written)
    draft = make_draft().model_dump(mode="json")
    with pytest.raises(InvalidRecord) as caught:
        load_record(Draft, json.dumps({**draft, "withdrawn": WHEN}).encode(), "drafts/x.json")
    assert [str(f) for f in caught.value.faults] == ["drafts/x.json: withdrawn: extra inputs are not permitted"]


def test_a_merge_needs_the_withdrawal_and_another_case(case_json: dict) -> None:
    with pytest.raises(InvalidRecord) as caught:
        load_record(Case, json.dumps({**case_json, "merged_into": "IL-0001"}).encode(), "cases/IL-0428.json")
    assert [str(f) for f in caught.value.faults] == [f"cases/IL-0428.json: merged_into: {ONLY_WITHDRAWN}"]
    with pytest.raises(ValidationError, match="cannot be merged into itself"):
        Case.model_validate({**case_json, "withdrawn": WHEN, "merged_into": case_json["id"]})
    merged = Case.model_validate(
        {**case_json, "withdrawn": WHEN, "withdrawn_reason": "dup", "withdrawn_by": "bob", "merged_into": "IL-0001"}
    )
    data = json.loads(dump_record(merged))
    assert list(data)[-4:] == list(WITHDRAWAL)
    assert data["withdrawn"] == "2026-12-01T09:00:00Z"


def test_the_schema_has_its_version_and_takes_a_withdrawn_case(case_json: dict) -> None:
    schema = json_schema("case")
    assert schema["schema_version"] == SCHEMA_VERSION == "2.2.0"
    assert set(WITHDRAWAL) <= set(schema["properties"])
    assert not set(WITHDRAWAL) & set(schema["required"])
    merged = {
        **case_json,
        "withdrawn": WHEN,
        "withdrawn_reason": "dup",
        "withdrawn_by": "bob",
        "merged_into": "IL-0001",
    }
    jsonschema.validate(merged, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**merged, "merged_into": "not-an-id"}, schema)
    assert set(WITHDRAWAL) & set(json_schema("draft")["properties"]) == {"merged_into"}


def test_withdraw_merges_a_case_into_its_survivor(cli: Callable, store: Store, make_case: Callable[..., Case]) -> None:
    before = _library(store, make_case, "IL-0001", "IL-0002")
    result = cli(
        "withdraw",
        "IL-0002",
        "--why",
        "a duplicate of IL-0001",
        "--into",
        "IL-0001",
        "--by",
        "bob",
        "--root",
        str(store.root),
    )
    assert result.exit_code == 0, result.output
    assert result.stdout == "withdrew IL-0002, merged into IL-0001\n"
    merged = store.read_case("IL-0002")
    assert merged.withdrawn is not None and merged.withdrawn == merged.updated_at
    assert (merged.withdrawn_reason, merged.withdrawn_by, merged.merged_into) == (
        "a duplicate of IL-0001",
        "bob",
        "IL-0001",
    )
    assert merged.url == "https://example.org/lib/cases/IL-0002", "its permanent address stays"
    survivor = store.read_case("IL-0001")
    assert survivor.aliases == ["IL-0002"] and survivor.updated_at == merged.withdrawn, "known by the merged id"
    unchanged = Case.model_validate_json(before["IL-0001"]).model_copy(
        update={"aliases": ["IL-0002"], "updated_at": survivor.updated_at}
    )
    assert survivor == unchanged, "the survivor is otherwise untouched"
    assert cli("validate", "--root", str(store.root)).exit_code == 0


def test_withdraw_without_a_survivor_and_json(cli: Callable, store: Store, make_case: Callable[..., Case]) -> None:
    _library(store, make_case, "IL-0001")
    result = cli("withdraw", "IL-0001", "--why", "not an incident", "--by", "bob", "--json", "--root", str(store.root))
    assert result.exit_code == 0, result.output
    said = json.loads(result.stdout)
    assert said["case_id"] == "IL-0001" and said["merged_into"] is None and said["repointed"] == []
    case = store.read_case("IL-0001")
    assert case.withdrawn is not None and said["withdrawn"] == case.withdrawn.isoformat()
    assert case.merged_into is None


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["IL-0009", "--why", "x"], "Error: cases/IL-0009.json: no case with id 'IL-0009'"),
        (["IL-0002", "--why", "x", "--into", "IL-0009"], "Error: IL-0009 is not a case in cases/"),
        (["IL-0002", "--why", "x", "--into", "IL-0002"], "Error: IL-0002 cannot be merged into itself"),
        (["IL-0002", "--why", "x", "--into", "IL-0003"], "Error: IL-0003 is withdrawn itself; it was merged into"),
        (["IL-0003", "--why", "x"], "Error: IL-0003 was withdrawn already, at 2026-12-01T09:00:00+00:00"),
        (["IL-0002", "--why", "  "], "Error: say why the case is withdrawn (--why)"),
    ],
    ids=["unknown-case", "unknown-survivor", "itself", "withdrawn-survivor", "twice", "no-reason"],
)
def test_withdraw_refuses_and_changes_nothing(
    cli: Callable, store: Store, make_case: Callable[..., Case], args: list[str], error: str
) -> None:
    _library(store, make_case, "IL-0001", "IL-0002")
    store.write_case(
        make_case("IL-0003", withdrawn=WHEN, withdrawn_reason="dup", merged_into="IL-0001", updated_at=WHEN)
    )
    before = {path.name: path.read_bytes() for path in store.files("case")}
    result = cli("withdraw", *args, "--by", "bob", "--root", str(store.root))
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith(error), result.stderr
    assert len(result.stderr.splitlines()) == 1
    assert {path.name: path.read_bytes() for path in store.files("case")} == before


def test_a_merge_into_a_case_merged_earlier_sends_its_cases_on(
    cli: Callable, store: Store, make_case: Callable[..., Case]
) -> None:
    _library(store, make_case, "IL-0001", "IL-0002", "IL-0003")
    assert (
        cli(
            "withdraw", "IL-0003", "--why", "dup", "--into", "IL-0002", "--by", "bob", "--root", str(store.root)
        ).exit_code
        == 0
    )
    alone = cli("withdraw", "IL-0002", "--why", "dup", "--by", "bob", "--root", str(store.root))
    assert alone.exit_code == 1
    assert (
        alone.stderr == "Error: IL-0003 merged into IL-0002: withdraw it --into a survivor, so that they point at one\n"
    )
    result = cli("withdraw", "IL-0002", "--why", "dup", "--into", "IL-0001", "--by", "bob", "--root", str(store.root))
    assert result.exit_code == 0, result.output
    assert "IL-0003 now points at IL-0001 (it was merged into IL-0002)\n" in result.stdout
    assert store.read_case("IL-0003").merged_into == "IL-0001"
    assert store.read_case("IL-0001").aliases == ["IL-0002", "IL-0003"], "the survivor takes both ids"
    assert "aliases" not in json.loads(store.path("case", "IL-0002").read_bytes()), "a withdrawn case has none"
    assert cli("validate", "--root", str(store.root)).exit_code == 0


def test_a_merge_cut_short_before_the_survivor_named_it_is_finished_by_the_same_withdrawal(
    cli: Callable, store: Store, make_case: Callable[..., Case]
) -> None:
    _library(store, make_case, "IL-0001", "IL-0002")
    # A withdrawal into IL-0001 written, the survivor's aliases not yet (the process died between the writes).
    store.write_case(
        make_case(
            "IL-0002",
            url="https://example.org/lib/cases/IL-0002",
            withdrawn=WHEN,
            withdrawn_reason="dup",
            merged_into="IL-0001",
        )
    )
    again = cli("withdraw", "IL-0002", "--why", "dup", "--into", "IL-0001", "--by", "bob", "--root", str(store.root))
    assert again.exit_code == 0, again.output
    assert store.read_case("IL-0001").aliases == ["IL-0002"]
    assert store.read_case("IL-0002").withdrawn_reason == "dup", "the withdrawal keeps its reason as written"
    refused = cli("withdraw", "IL-0002", "--why", "dup", "--into", "IL-0001", "--by", "bob", "--root", str(store.root))
    assert refused.exit_code == 1 and "withdrawn already" in refused.stderr, "once finished, it is done"


def test_aliases_round_trip_sorted_and_never_the_cases_own(case_json: dict) -> None:
    case = Case.model_validate({**case_json, "id": "IL-0001", "aliases": ["IL-0002", "IL-0010"], "published": WHEN})
    data = dump_record(case)
    assert Case.model_validate_json(data) == case and dump_record(Case.model_validate_json(data)) == data
    assert list(json.loads(data))[-2:] == ["published", "aliases"]
    assert "aliases" not in json.loads(dump_record(Case.model_validate({**case_json, "id": "IL-0001"})))
    for bad, problem in (
        (["IL-0010", "IL-0002"], "sorted"),
        (["IL-0002", "IL-0002"], "sorted"),
        (["IL-0001"], "itself"),
    ):
        with pytest.raises(ValidationError, match=problem):
            Case.model_validate({**case_json, "id": "IL-0001", "aliases": bad})
    schema = json_schema("case")
    jsonschema.validate(json.loads(data), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**json.loads(data), "aliases": ["not-an-id"]}, schema)


def test_validate_names_an_alias_that_was_not_merged_into_its_case(cli: Callable, root: Path, case_json: dict) -> None:
    cases = root / "cases"
    withdrawn = {"withdrawn": WHEN, "withdrawn_reason": "dup"}
    (cases / "IL-0001.json").write_text(
        json.dumps({**case_json, "id": "IL-0001", "aliases": ["IL-0002", "IL-0003", "IL-0004", "IL-0009"]})
    )
    (cases / "IL-0002.json").write_text(
        json.dumps({**case_json, "id": "IL-0002", **withdrawn, "merged_into": "IL-0001"})
    )
    (cases / "IL-0003.json").write_text(json.dumps({**case_json, "id": "IL-0003"}))
    (cases / "IL-0004.json").write_text(
        json.dumps({**case_json, "id": "IL-0004", **withdrawn, "merged_into": "IL-0003"})
    )
    result = cli("validate", "--root", str(root))
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "cases/IL-0001.json: aliases.1: IL-0003 is no alias of IL-0001: it was not merged into it",
        "cases/IL-0001.json: aliases.2: IL-0004 is no alias of IL-0001: it was merged into IL-0003",
        "cases/IL-0001.json: aliases.3: IL-0009 is not a case in cases/",
    ]


def test_validate_names_a_merge_that_points_nowhere_or_at_a_withdrawn_case(
    cli: Callable, root: Path, case_json: dict
) -> None:
    cases = root / "cases"
    withdrawn = {"withdrawn": WHEN, "withdrawn_reason": "dup"}
    (cases / "IL-0001.json").write_text(json.dumps({**case_json, "id": "IL-0001"}))
    (cases / "IL-0002.json").write_text(
        json.dumps({**case_json, "id": "IL-0002", **withdrawn, "merged_into": "IL-0009"})
    )
    (cases / "IL-0003.json").write_text(
        json.dumps({**case_json, "id": "IL-0003", **withdrawn, "merged_into": "IL-0001"})
    )
    (cases / "IL-0004.json").write_text(
        json.dumps({**case_json, "id": "IL-0004", **withdrawn, "merged_into": "IL-0003"})
    )
    (cases / "IL-0005.json").write_text(json.dumps({**case_json, "id": "IL-0005", "merged_into": "IL-0001"}))
    result = cli("validate", "--root", str(root))
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        f"cases/IL-0005.json: merged_into: {ONLY_WITHDRAWN}",
        "cases/IL-0002.json: merged_into: IL-0009 is not a case in cases/",
        "cases/IL-0004.json: merged_into: IL-0003 is withdrawn itself, merged into IL-0001: name that one, or "
        "finish the merge cut short that left it here with `incidentlib withdraw IL-0003 --into IL-0001 --why …`",
    ]


def _approved_draft_of(case: Case, draft: Draft) -> Draft:
    """`draft` as the approved draft of `case`, with its facts and its sources captured: ready to promote again."""
    fields = ("org", "org_slug", "date", "date_kind", "title", "summary")
    return Draft.model_validate(
        {
            **draft.model_dump(mode="json"),
            **case.model_dump(mode="json", include=set(fields)),
            "sources": [
                {**source.model_dump(mode="json"), "archive": {"status": "captured"}} for source in case.sources
            ],
            "state": "approved",
            "case_id": case.id,
        }
    )


def test_a_republication_keeps_the_withdrawal(
    store: Store, make_case: Callable[..., Case], make_draft: Callable[..., Draft], root: Path
) -> None:
    """A reviewer who corrects a withdrawn case's draft and promotes it again does not bring it back."""
    case = make_case("IL-0001", withdrawn=WHEN, withdrawn_reason="not an incident", withdrawn_by="bob", updated_at=WHEN)
    draft = _approved_draft_of(case, make_draft())
    store.write_case(case)
    store.write_draft(draft)
    report = promote(store, Settings(root=root, public_base_url="https://example.org/lib"))
    assert [(p.outcome, p.missing) for p in report.drafts] == [("updated", [])]
    again = store.read_case("IL-0001")
    assert again.updated_at > datetime(2026, 12, 1, 9, tzinfo=UTC), "republished now"
    assert (again.withdrawn, again.withdrawn_reason, again.withdrawn_by) == (case.withdrawn, "not an incident", "bob")


def test_a_republication_keeps_the_aliases_and_the_first_publication(
    store: Store, make_case: Callable[..., Case], make_draft: Callable[..., Draft], root: Path
) -> None:
    survivor = make_case("IL-0001", updated_at=WHEN, published=WHEN, aliases=["IL-0002"])
    merged = make_case("IL-0002", withdrawn=WHEN, withdrawn_reason="dup", merged_into="IL-0001", updated_at=WHEN)
    draft = _approved_draft_of(survivor, make_draft())
    new = draft.model_copy(update={"id": "d-" + "1" * 16, "case_id": None, "sources": draft.sources[:1]})
    new.sources[0] = new.sources[0].model_copy(update={"url": "https://example.net/another-postmortem"})
    store.write_case(survivor)
    store.write_case(merged)
    store.write_draft(draft)
    store.write_draft(new)
    report = promote(store, Settings(root=root, public_base_url="https://example.org/lib"))
    assert sorted(p.outcome for p in report.drafts) == ["published", "updated"]
    again = store.read_case("IL-0001")
    assert again.updated_at > datetime(2026, 12, 1, 9, tzinfo=UTC), "republished now"
    assert (again.aliases, again.published) == (["IL-0002"], survivor.published)
    first = store.read_case("IL-0003")
    assert first.published == first.updated_at, "a first publication is dated by itself"
